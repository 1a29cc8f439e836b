//! `[[upstreams]]` and `[gateway]`: a good entry loads with its defaults, every bad one is a
//! located problem, and the configuration may name an upstream's tools before they are seen.

use super::support::load;
use pretty_assertions::assert_eq;
use toolgate_config::upstreams::{ArgumentKind, TrustConfig};
use toolgate_test_support::TempWorkspace;

fn problems(text: &str) -> Vec<String> {
    let ws = TempWorkspace::new();
    load(&ws, text)
        .expect_err("the configuration should be refused")
        .iter()
        .map(|p| format!("{}:{}: {}: {}", p.line, p.column, p.key, p.message))
        .collect()
}

#[test]
fn a_stdio_and_an_http_upstream_load_with_their_defaults() {
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        r#"
[gateway]
separator = "."

[[upstreams]]
name = "files"
command = "/usr/bin/node"
args = ["server.js", "."]
env = ["NODE_PATH"]
trust = ["read_only"]
tools = { include = ["read_*", "list_*"], exclude = ["read_media_file"] }
arguments = [{ tool = "read_*", argument = "path", kind = "path" }]

[[upstreams]]
name = "web"
url = "http://127.0.0.1:3001/mcp"
headers = [{ name = "Authorization", value_env = "WEB_AUTH" }]
sandbox = false
timeout_ms = 5000

[[rules]]
decision = "deny"
tool = "files.write_file"
"#,
    )
    .unwrap();
    assert_eq!(c.gateway_separator(), ".");
    let [files, web] = c.upstreams() else {
        panic!("two upstreams")
    };
    assert!(files.sandbox && !files.network);
    assert!(files.trusts(TrustConfig::ReadOnly) && !files.trusts(TrustConfig::Idempotent));
    assert_eq!(files.arguments[0].kind, ArgumentKind::Path);
    assert_eq!(files.timeout(), std::time::Duration::from_secs(30));
    assert!(!web.sandbox);
    assert_eq!(web.timeout(), std::time::Duration::from_secs(5));
    assert_eq!(web.headers[0].value_env, "WEB_AUTH");
}

#[test]
fn bad_upstreams_are_located_problems() {
    let p = problems(
        r#"
[gateway]
separator = "::"

[[upstreams]]
name = "bad name"
command = "x"
url = "http://h/mcp"

[[upstreams]]
name = "web"
url = "ftp://h"
args = ["x"]
env = ["NOT A NAME"]

[[upstreams]]
name = "web"
command = "srv"
headers = [{ name = "X", value_env = "X_VAL" }]
timeout_ms = 0
tools = { include = ["a[b"] }
arguments = [{ tool = "*", argument = "u", kind = "url", access = "read" }]

[[upstreams]]
name = "none"
"#,
    );
    let want = [
        "3:13: gateway.separator: \"::\" cannot separate names",
        "6:8: upstreams[\"bad name\"].name: \"bad name\" cannot name an upstream",
        "8:7: upstreams[\"bad name\"].url: an upstream has either `command`",
        "12:7: upstreams[1].url: \"ftp://h\" is not an http:// or https:// URL",
        "13:8: upstreams[1].args: `args` is for stdio upstreams",
        "14:7: upstreams[1].env: `env` is for stdio upstreams",
        "14:8: upstreams[1].env[0]: \"NOT A NAME\" is not an environment variable's name",
        "17:8: upstreams[2].name: another upstream is named \"web\"",
        "19:11: upstreams[2].headers: `headers` are for HTTP upstreams",
        "20:14: upstreams[2].timeout_ms: 0 is out of range",
        "21:",
        "22:",
        "24:1: upstreams[\"none\"]: an upstream needs `command`",
    ];
    assert_eq!(p.len(), want.len(), "{p:#?}");
    for (got, want) in p.iter().zip(want) {
        assert!(got.starts_with(want), "{got}\n  expected {want}");
    }
    assert!(p[10].contains("upstreams[2].tools.include[0]"), "{}", p[10]);
    assert!(
        p[11].contains("`access` is for path arguments"),
        "{}",
        p[11]
    );
}

/// An upstream URL is read as a URL: one that does not parse, holds credentials (they would
/// show in logs, `toolgate stats` and error messages) or a fragment is a located problem.
#[test]
fn upstream_urls_without_credentials_parse_or_are_refused() {
    let p = problems(
        r#"
[[upstreams]]
name = "creds"
url = "https://user:hunter2@mcp.example/mcp"

[[upstreams]]
name = "user"
url = "http://token@127.0.0.1:9/mcp"

[[upstreams]]
name = "broken"
url = "http://[::1/mcp"

[[upstreams]]
name = "frag"
url = "http://127.0.0.1:9/mcp#x"

[[upstreams]]
name = "good"
url = "http://127.0.0.1:9/mcp?x=1"
"#,
    );
    let want = [
        "4:7: upstreams[\"creds\"].url: the URL holds credentials",
        "8:7: upstreams[\"user\"].url: the URL holds credentials",
        "12:7: upstreams[\"broken\"].url: \"http://[::1/mcp\" is not a URL",
        "16:7: upstreams[\"frag\"].url: \"http://127.0.0.1:9/mcp#x\" has a fragment",
    ];
    assert_eq!(p.len(), want.len(), "{p:#?}");
    for (got, want) in p.iter().zip(want) {
        assert!(got.starts_with(want), "{got}\n  expected {want}");
    }
    assert!(!p[0].contains("hunter2"), "{}", p[0]);
    assert!(p[0].contains("value_env"), "{}", p[0]);
}

#[test]
fn an_https_upstream_loads_with_its_ca_file_and_a_bad_ca_file_is_located() {
    let ws = TempWorkspace::new();
    ws.write(
        "ca.pem",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    );
    ws.write("not.pem", "just text\n");
    ws.write("big.pem", vec![b'a'; (1 << 20) + 1]);
    let c = load(
        &ws,
        "[[upstreams]]\nname = \"w\"\nurl = \"https://127.0.0.1:8443/mcp\"\nca_file = \"ca.pem\"\n",
    )
    .unwrap();
    let u = &c.upstreams()[0];
    assert_eq!(
        toolgate_config::upstreams::ca_file_path(&ws.root(), u),
        Some(ws.root().join("ca.pem"))
    );
    let bad = |ca: &str, url: &str| {
        let text = format!("[[upstreams]]\nname = \"w\"\nurl = {url:?}\nca_file = {ca:?}\n");
        load(&ws, &text)
            .expect_err("the configuration should be refused")
            .iter()
            .map(|p| format!("{}:{}: {}: {}", p.line, p.column, p.key, p.message))
            .collect::<Vec<_>>()
    };
    let p = bad("missing.pem", "https://h/mcp");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].starts_with("4:11: upstreams[\"w\"].ca_file: \"missing.pem\" cannot be read"),
        "{}",
        p[0]
    );
    let p = bad("not.pem", "https://h/mcp");
    assert!(p[0].contains("holds no PEM certificate"), "{p:#?}");
    let p = bad("big.pem", "https://h/mcp");
    assert!(p[0].contains("over the 1048576"), "{p:#?}");
    let p = bad(".", "https://h/mcp");
    assert!(p[0].contains("is not a file"), "{p:#?}");
    let p = bad("ca.pem", "http://h/mcp");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("`ca_file` is for https:// upstreams"),
        "{p:#?}"
    );
}

#[test]
fn a_secret_in_an_upstream_entry_is_refused() {
    let p = problems(
        "[[upstreams]]\nname = \"w\"\nurl = \"http://h/mcp\"\nheaders = [{ name = \"A\", value_env = \"Bearer abc\" }]\n",
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("value_env names the environment variable"),
        "{}",
        p[0]
    );
}

#[test]
fn an_unknown_upstream_key_is_located_and_tool_names_of_unknown_upstreams_refused() {
    let p = problems("[[upstreams]]\nname = \"w\"\nurl = \"http://h/mcp\"\ntimeout = 3\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].starts_with("4:1: upstreams[\"w\"].timeout: unknown field `timeout`"),
        "{}",
        p[0]
    );
    let p = problems(
        "[[upstreams]]\nname = \"w\"\nurl = \"http://h/mcp\"\n[[rules]]\ndecision = \"deny\"\ntool = \"x__y\"\n",
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("no tool is named \"x__y\""), "{}", p[0]);
}

#[test]
fn rules_may_name_an_upstreams_resource_and_prompt_tools_and_an_unprefixed_upstreams_tools() {
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        r#"
[[upstreams]]
name = "docs"
url = "http://127.0.0.1:3001/mcp"

[[upstreams]]
name = "plain"
url = "http://127.0.0.1:3002/mcp"
prefix = false

[[rules]]
decision = "deny"
tool = "toolgate.upstream.docs.read_resource"

[[rules]]
decision = "ask"
tool = "toolgate.upstream.docs.get_prompt"

[[rules]]
decision = "allow"
tool = "its_own_name"
"#,
    )
    .unwrap();
    let [docs, plain] = c.upstreams() else {
        panic!("two upstreams")
    };
    assert!(docs.prefix && !plain.prefix);
    // without the unprefixed upstream, a name that is nobody's is refused, and so is the
    // resource tool of an upstream that is not configured
    let p = problems(
        "[[upstreams]]\nname = \"docs\"\nurl = \"http://h/mcp\"\n[[rules]]\ndecision = \"deny\"\n\
         tool = \"toolgate.upstream.other.read_resource\"\n[[rules]]\ndecision = \"deny\"\n\
         tool = \"its_own_name\"\n",
    );
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].contains("toolgate.upstream.other.read_resource"),
        "{}",
        p[0]
    );
    assert!(p[1].contains("its_own_name"), "{}", p[1]);
}

#[test]
fn notification_budgets_load_with_their_defaults_and_bad_ones_are_located() {
    use std::time::Duration;
    use toolgate_config::upstreams::NotificationKind;
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        r#"
[gateway]
max_subscriptions = 7

[[upstreams]]
name = "loud"
command = "srv"
[upstreams.notifications]
log = { per_second = 4, burst = 9 }
resources_list_changed = { per_minute = 6 }
requests = { per_minute = 30, burst = 2 }

[[upstreams]]
name = "quiet"
command = "srv"
"#,
    )
    .unwrap();
    assert_eq!(c.gateway_max_subscriptions(), 7);
    let [loud, quiet] = c.upstreams() else {
        panic!("two upstreams")
    };
    let n = &loud.notifications;
    assert_eq!(
        n.budget(NotificationKind::Log),
        (Duration::from_millis(250), 9)
    );
    assert_eq!(
        n.budget(NotificationKind::ResourcesListChanged),
        (Duration::from_secs(10), 6),
        "the burst is the number per period by default"
    );
    assert_eq!(
        n.budget(NotificationKind::Progress),
        (Duration::from_millis(50), 50),
        "a kind the entry does not set has the default"
    );
    assert_eq!(
        quiet.notifications.budget(NotificationKind::Log),
        (Duration::from_millis(20), 100)
    );
    assert_eq!(
        n.budget(NotificationKind::Requests),
        (Duration::from_secs(2), 2)
    );
    assert_eq!(
        quiet.notifications.budget(NotificationKind::Requests),
        (Duration::from_millis(500), 5),
        "requests: 2 a second, bursts of 5 by default"
    );

    let p = problems(
        r#"
[gateway]
max_subscriptions = 0

[[upstreams]]
name = "loud"
command = "srv"
[upstreams.notifications]
log = { per_second = 0 }
progress = { per_second = 5, per_minute = 3 }
resource_updated = { burst = 4 }
resources_list_changed = { per_minute = 2000000, burst = 0 }
"#,
    );
    let want = [
        "3:21: gateway.max_subscriptions: 0 is out of range: write 1 to 100000",
        "9:22: upstreams[\"loud\"].notifications.log.per_second: 0 would drop every notification: write at least 1",
        "10:12: upstreams[\"loud\"].notifications.progress: write one of per_second and per_minute",
        "11:20: upstreams[\"loud\"].notifications.resource_updated: write one of per_second and per_minute",
        "12:41: upstreams[\"loud\"].notifications.resources_list_changed.per_minute: 2000000 is out of range: write 1 to 1000000",
        "12:58: upstreams[\"loud\"].notifications.resources_list_changed.burst: 0 would drop every notification",
    ];
    assert_eq!(p.len(), want.len(), "{p:#?}");
    for (got, want) in p.iter().zip(want) {
        assert!(got.starts_with(want), "{got}\n  expected {want}");
    }

    // a negative number is no type error but says what to write
    let p = problems(
        "[[upstreams]]\nname = \"loud\"\ncommand = \"srv\"\n\
         notifications = { progress = { per_second = -5 } }\n",
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("upstreams[\"loud\"].notifications.progress.per_second: -5 is not a number of notifications: write 1 to 1000000"),
        "{}",
        p[0]
    );
}

#[test]
fn relayed_requests_are_opt_in_and_a_bad_entry_is_located() {
    use toolgate_config::upstreams::RelayKind;
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        "[[upstreams]]\nname = \"asks\"\ncommand = \"srv\"\nrelay = [\"sampling\", \"elicitation\"]\n\
         [[upstreams]]\nname = \"quiet\"\ncommand = \"srv\"\n",
    )
    .unwrap();
    let [asks, quiet] = c.upstreams() else {
        panic!("two upstreams")
    };
    assert_eq!(asks.relay, [RelayKind::Sampling, RelayKind::Elicitation]);
    assert!(asks.relays(RelayKind::Sampling) && asks.relays(RelayKind::Elicitation));
    assert!(quiet.relay.is_empty(), "nothing is relayed by default");
    assert!(!quiet.relays(RelayKind::Sampling));

    let p = problems("[[upstreams]]\nname = \"w\"\ncommand = \"srv\"\nrelay = [\"roots\"]\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].starts_with("4:"), "located on its line: {}", p[0]);
    assert!(p[0].contains(r#"upstreams["w"].relay"#), "{}", p[0]);
    assert!(
        p[0].contains("roots") && p[0].contains("sampling") && p[0].contains("elicitation"),
        "says what was wrong and what may be written: {}",
        p[0]
    );
    let p = problems(
        "[[upstreams]]\nname = \"w\"\ncommand = \"srv\"\nrelay = [\"sampling\", \"sampling\"]\n",
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains(r#"upstreams["w"].relay[1]"#) && p[0].contains("listed twice"),
        "{}",
        p[0]
    );
}

#[test]
fn an_upstreams_type_errors_name_it_and_say_the_types_in_words() {
    let p = problems("[[upstreams]]\nname = \"web\"\ncommand = \"x\"\ntimeout_ms = \"slow\"\n");
    assert_eq!(
        p,
        [
            r#"4:14: upstreams["web"].timeout_ms: must be a whole number (0 or more), not the text "slow""#
        ]
    );
    let p = problems(
        "[[upstreams]]\nname = \"web\"\ncommand = \"x\"\n\n\
         [[upstreams]]\nname = \"fs\"\ncommand = [\"y\"]\nsandbox = \"yes\"\n",
    );
    assert_eq!(
        p,
        [r#"7:11: upstreams["fs"].command: must be text in quotes, not a list"#]
    );
    let p = problems("[[upstreams]]\nname = \"w\"\ncommand = \"x\"\nrelay = \"sampling\"\n");
    assert_eq!(
        p,
        [r#"4:9: upstreams["w"].relay: must be a list ([...]), not the text "sampling""#]
    );
    // without a name of text, by its place; a name in it is written visibly
    let p = problems("[[upstreams]]\ncommand = 5\n");
    assert_eq!(
        p,
        ["2:11: upstreams[0].command: must be text in quotes, not the number 5"]
    );
    let p = problems("[[upstreams]]\nname = \"a\u{202e}b\"\ncommand = \"x\"\n");
    assert!(
        p[0].starts_with(r#"2:8: upstreams["a\u{202e}b"].name:"#),
        "{p:#?}"
    );
}
