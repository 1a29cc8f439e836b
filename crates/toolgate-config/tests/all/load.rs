//! Loading: every bad input gives a problem located at `file:line:column`, and the committed
//! JSON Schema is the one the types generate.

use super::support::load;
use pretty_assertions::assert_eq;
use toolgate_test_support::TempWorkspace;

/// The problems of `text` as `line:column: key: message` lines.
pub fn problems(text: &str) -> Vec<String> {
    let ws = TempWorkspace::new();
    let errs = load(&ws, text).expect_err("the configuration should be refused");
    errs.iter()
        .map(|p| {
            assert!(p.file.ends_with("toolgate.toml"));
            let shown = p.to_string();
            let prefix = format!("{}:", p.file.display());
            shown.strip_prefix(&prefix).unwrap().to_string()
        })
        .collect()
}

pub fn one(text: &str, at: &str, contains: &str) {
    let p = problems(text);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].starts_with(at), "expected at {at}: {}", p[0]);
    assert!(p[0].contains(contains), "expected {contains:?}: {}", p[0]);
}

#[test]
fn unknown_keys_are_located() {
    one(
        "[budgets]\nmax_calls = 3\nmax_cals = 4\n",
        "3:1",
        "unknown field `max_cals`",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\ntool = \"x\"\nresorce = \"path:a\"\n",
        "4:1",
        "unknown field `resorce`",
    );
    one("[wat]\n", "1:2", "unknown field `wat`");
    one(
        "[[rules]]\ndecision = \"maybe\"\ntool = \"*\"\n",
        "2:12",
        "unknown variant `maybe`",
    );
    one("[limits]\ntimeout_ms = \"soon\"\n", "2:14", "invalid type");
    one("this is not toml", "1:", "");
}

/// One run reports every problem, of every kind (a secret, an unknown table, a bad value, an
/// unknown key in one rule, a bad pattern in the next, a bad expiry), each once, in file order;
/// a rule that does not deserialize is not reported again for what it lacks, and the rules
/// after it keep their indices.
#[test]
fn every_problem_is_reported_in_one_run() {
    let p = problems(
        "[server]\ntoken = \"abc\"\n\n[wat]\nx = 1\n\n[budgets]\nmax_calls = \"three\"\n\n\
         [[rules]]\ndecision = \"maybe\"\ntool = \"*\"\n\n[[rules]]\ndecision = \"deny\"\n\
         resource = \"path:[\"\n\n[approvals]\nsession_expires = \"soon\"\n\n\
         [profiles.a]\ntools = [\"read_file\"]\nbogus = 1\n",
    );
    let at: Vec<&str> = p.iter().map(|l| l.split(": ").next().unwrap()).collect();
    let keys: Vec<&str> = p.iter().map(|l| l.split(": ").nth(1).unwrap()).collect();
    assert_eq!(
        keys,
        [
            "server.token",
            "wat",
            "budgets.max_calls",
            "rules[0].decision",
            "rules[1].resource",
            "approvals.session_expires",
            "profiles.a.bogus",
        ],
        "{p:#?}"
    );
    assert_eq!(
        at,
        ["2:9", "4:2", "8:13", "11:12", "16:12", "19:19", "23:1"],
        "{p:#?}"
    );
    assert!(p[0].contains("looks like a secret"), "{}", p[0]);
    assert!(p[1].contains("unknown field `wat`"), "{}", p[1]);
    // a document that is not TOML has the one problem that can be found
    assert_eq!(problems("[budgets\nmax_calls = 3\n").len(), 1);
}

#[test]
fn bad_patterns_are_located_at_their_value() {
    one(
        "[[rules]]\ndecision = \"deny\"\nresource = \"path:src/[\"\n",
        "3:12: rules[0].resource:",
        "does not parse",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\nresource = \".env\"\n",
        "3:12: rules[0].resource:",
        "must start with path:, host:, command: or recipient:",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\nresource = \"path:../x\"\n",
        "3:12",
        "`..` component",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\nresource = \"host:a.*.com\"\n",
        "3:12",
        "first label",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\nresource = \"command:git * push\"\n",
        "3:12",
        "may only end the last word",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\ntool = \"fs_[\"\n",
        "3:8: rules[0].tool:",
        "does not parse",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\ntool = \"reed_file\"\n",
        "3:8",
        "no tool is named \"reed_file\"",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\n",
        "1:1: rules[0]",
        "needs `tool`, `resource`",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\ntool = \"*\"\naccess = \"read\"\n",
        "4:10",
        "`access` is for rules over paths",
    );
}

/// Without the `cedar` feature the same places get the error saying how to build with it.
#[test]
fn bad_cedar_is_located_with_cedars_message() {
    one(
        "[[rules]]\ndecision = \"allow\"\ntool = \"*\"\nwhen = 'context.attributes.x =='\n",
        "4:8: rules[0].when: cedar:",
        "",
    );
    one(
        "[[rules]]\ndecision = \"allow\"\ntool = \"*\"\nunless = 'true } ; forbid(principal, action, resource) when { true'\n",
        "4:10: rules[0].unless: cedar:",
        "",
    );
}

#[test]
fn literal_secrets_are_refused() {
    one(
        "[server]\ntoken = \"s3cr3t-value\"\n",
        "2:9: server.token:",
        "never kept in toolgate.toml",
    );
    one(
        "[server]\ntoken_env = \"ghp_0123456789abcdef0123456789abcdef-x\"\n",
        "2:13: server.token_env:",
        "names the environment variable",
    );
    one(
        "[roles.a]\nprofiles = [\"explore\"]\nattributes = { api_key = \"k\" }\n",
        "3:26: roles.a.attributes.api_key:",
        "looks like a secret",
    );
    let ws = TempWorkspace::new();
    let c = load(&ws, "[server]\ntoken_env = \"MY_TOKEN\"\n").unwrap();
    assert_eq!(c.token_env(), "MY_TOKEN");
}

#[test]
fn server_limits_out_of_range_are_located() {
    for (text, at, says) in [
        (
            "[server]\nmax_connections = 0\n",
            "2:19: server.max_connections:",
            "write 1 to",
        ),
        (
            "[server]\nheader_timeout_ms = 0\n",
            "2:21: server.header_timeout_ms:",
            "1 to 86400000 ms",
        ),
        (
            "[server]\nbody_timeout_ms = 86400001\n",
            "2:19: server.body_timeout_ms:",
            "out of range",
        ),
        (
            "[server]\nmax_body_bytes = 10\n",
            "2:18: server.max_body_bytes:",
            "1024 to",
        ),
        (
            "[server]\nmax_sessions = 0\n",
            "2:16: server.max_sessions:",
            "sessions",
        ),
        (
            "[server]\nmax_requests_in_flight = 0\n",
            "2:26: server.max_requests_in_flight:",
            "requests",
        ),
        ("[server]\nidle_timeout_ms = -5\n", "2:19", ""),
        (
            "[server]\nidle_timeout_ms = 5000\n",
            "2:19: server.idle_timeout_ms:",
            "20000 to",
        ),
        (
            "[server]\nmax_connections_per_peer = \"many\"\n",
            "2:28",
            "",
        ),
    ] {
        one(text, at, says);
    }
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        "[server]\nmax_connections = 64\nheader_timeout_ms = 2000\nmax_sessions = 4\n",
    )
    .unwrap();
    assert_eq!(c.raw().server.max_connections, Some(64));
    assert_eq!(c.raw().server.header_timeout_ms, Some(2000));
}

#[test]
fn unknown_profiles_and_roles_are_located() {
    one(
        "[roles.support]\nprofiles = [\"explore\", \"ordrs\"]\n",
        "2:24: roles.support.profiles[1]:",
        "no profile is named \"ordrs\"; the profiles are: default, explore",
    );
    one(
        "[profiles.x]\ntools = [\"read_file\", \"nope\"]\n",
        "2:23: profiles.x.tools[1]:",
        "no tool is named \"nope\"",
    );
    one(
        "[[rules]]\ndecision = \"deny\"\ntool = \"*\"\nroles = [\"ghost\"]\n",
        "4:10: rules[0].roles[0]:",
        "no role is named \"ghost\"",
    );
    one(
        "[roles.empty]\n",
        "1:1: roles.empty",
        "at least one profile",
    );
}

#[test]
fn several_problems_are_all_reported() {
    let p = problems(
        "[[rules]]\ndecision = \"deny\"\nresource = \"path:[\"\n\n[[rules]]\ndecision = \"ask\"\ntool = \"nope\"\n",
    );
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(p[0].starts_with("3:12: rules[0].resource"));
    assert!(p[1].starts_with("7:8: rules[1].tool"));
}

#[test]
fn sessions_get_their_role_profile_and_attributes() {
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        "[roles.support]\nprofiles = [\"explore\"]\nattributes = { team = \"support\", level = 2 }\n",
    )
    .unwrap();
    let s = c
        .session(
            Some("support"),
            None,
            vec![toolgate_config::parse_attr("verified=true").unwrap()],
        )
        .unwrap();
    assert_eq!(s.profile, "explore");
    assert_eq!(
        serde_json::to_value(&s.attributes).unwrap(),
        serde_json::json!({"team": "support", "level": 2, "verified": true, "role": "support"})
    );
    let e = c
        .session(Some("support"), Some("default"), vec![])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "role \"support\" may not use profile \"default\"; it may use: explore"
    );
    let e = c.session(Some("admin"), None, vec![]).unwrap_err();
    assert!(
        e.to_string().contains("role \"admin\" is not defined"),
        "{e}"
    );
    let e = c
        .session(
            Some("support"),
            None,
            vec![toolgate_config::parse_attr("team=finance").unwrap()],
        )
        .unwrap_err();
    assert!(e.to_string().contains("sets \"team\""), "{e}");
    for bad in ["novalue", "=x", "role=admin", "a b=1"] {
        assert!(toolgate_config::parse_attr(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_committed_schema_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(toolgate_config::schema::SCHEMA_PATH);
    let generated = toolgate_config::schema::schema_json();
    if std::env::var_os("TOOLGATE_REGENERATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: regenerate it with `toolgate check --print-schema > {}` (or run this \
         test with TOOLGATE_REGENERATE_SCHEMA=1)",
        path.display(),
        toolgate_config::schema::SCHEMA_PATH
    );
}

#[test]
fn the_readme_example_loads() {
    let readme = include_str!("../../../../README.md");
    let start = readme
        .find("```toml\n# toolgate.toml")
        .expect("the README has an example toolgate.toml");
    let body = &readme[start + "```toml\n".len()..];
    let example = &body[..body.find("```").unwrap()];
    let ws = TempWorkspace::new();
    if let Err(p) = load(&ws, example) {
        panic!("{p:#?}");
    }
}

#[test]
fn bad_approval_expiries_are_located() {
    one(
        "[approvals]\nalways_expires = \"soon\"\n",
        "2:18: approvals.always_expires:",
        "\"soon\" is not a span such as \"30m\", \"8h\" or \"7d\", nor \"never\"",
    );
    one(
        "[approvals]\nsession_expires = \"0s\"\n",
        "2:19: approvals.session_expires:",
        "shorter than one second",
    );
    one(
        "[approvals]\nmax_expires = \"250ms\"\n",
        "2:15: approvals.max_expires:",
        "shorter than one second",
    );
    one(
        "[approvals]\nmax_expires = 3600\n",
        "2:15",
        "invalid type: integer `3600`, expected a string",
    );
    one(
        "[approvals]\nalways = \"8h\"\n",
        "2:1",
        "unknown field `always`",
    );
    // a default written beside a cap must be within it
    one(
        "[approvals]\nmax_expires = \"8h\"\nalways_expires = \"1d\"\n",
        "3:18: approvals.always_expires:",
        "1day is longer than max_expires (8h)",
    );
    one(
        "[approvals]\nmax_expires = \"8h\"\nsession_expires = \"never\"\n",
        "3:19: approvals.session_expires:",
        "never is longer than max_expires (8h)",
    );
    let p = problems("[approvals]\nsession_expires = \"x\"\nalways_expires = \"-1h\"\n");
    assert_eq!(p.len(), 2, "{p:#?}");
}

#[test]
fn approval_expiries_resolve_over_the_defaults() {
    use std::time::Duration;
    use toolgate_config::GrantExpiry;
    let ws = TempWorkspace::new();
    let h = |n: u64| Some(Duration::from_secs(n * 3600));
    let expiry = |text: &str| load(&ws, text).unwrap().grant_expiry();
    assert_eq!(expiry(""), GrantExpiry::default());
    assert_eq!(
        GrantExpiry::default(),
        GrantExpiry {
            session: None,
            always: h(24),
            max: None
        }
    );
    assert_eq!(
        expiry("[approvals]\nsession_expires = \"90m\"\nalways_expires = \"never\"\n"),
        GrantExpiry {
            session: Some(Duration::from_secs(5400)),
            always: None,
            max: None
        }
    );
    // a cap alone cuts the defaults it was not written with
    assert_eq!(
        expiry("[approvals]\nmax_expires = \"2h\"\n"),
        GrantExpiry {
            session: h(2),
            always: h(2),
            max: h(2)
        }
    );
}

#[test]
fn bad_ledger_spans_are_located() {
    one(
        "[ledger]\nretention = \"a day\"\n",
        "2:13: ledger.retention:",
        "\"a day\" is not a span such as \"90s\", \"10m\" or \"24h\"",
    );
    one(
        "[ledger]\nretention = \"500ms\"\n",
        "2:13: ledger.retention:",
        "at least 1s",
    );
    one(
        "[ledger]\nderived_key_window = \"200y\"\n",
        "2:22: ledger.derived_key_window:",
        "longer than 100 years",
    );
    one(
        "[ledger]\nretention = \"1h\"\nderived_key_window = \"2h\"\n",
        "3:22: ledger.derived_key_window:",
        "2h is longer than the retention (1h)",
    );
    one(
        "[ledger]\nwindow = \"1m\"\n",
        "2:1",
        "unknown field `window`",
    );
}

#[test]
fn ledger_settings_resolve_over_the_defaults() {
    use std::time::Duration;
    let ws = TempWorkspace::new();
    let options = |text: &str| load(&ws, text).unwrap().ledger_options();
    assert_eq!(options(""), toolgate_core::LedgerOptions::default());
    let o = options("[ledger]\nretention = \"7d\"\nderived_key_window = \"0s\"\n");
    assert_eq!(o.retention, Duration::from_secs(7 * 86_400));
    assert_eq!(o.derived_key_window, Duration::ZERO);
    assert_eq!(
        options("[ledger]\nderived_key_window = \"90s\"\n").derived_key_window,
        Duration::from_secs(90)
    );
}

/// `[shell] unix_sockets` reaches run_shell's configuration; unix sockets stay refused by
/// default (a socket file outside the workspace reaches a service outside the sandbox).
#[test]
fn unix_sockets_are_refused_unless_the_shell_settings_allow_them() {
    let ws = TempWorkspace::new();
    let config = load(&ws, "[shell]\nnetwork = false\n").unwrap();
    assert!(!config.shell_config().allow_unix_sockets);
    let config = load(&ws, "[shell]\nunix_sockets = true\n").unwrap();
    assert!(config.shell_config().allow_unix_sockets);
    // not a boolean, or misspelled: a located problem, nothing allowed
    let p = problems("[shell]\nunix_sockets = \"yes\"\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].starts_with("2:"), "{p:#?}");
    assert!(p[0].contains("unix_sockets"), "{p:#?}");
    let p = problems("[shell]\nunix_socket = true\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("unix_socket"), "{p:#?}");
}

/// `[files] read_hard_links`: path globs reach the workspace's exception for hard-linked
/// files; none by default; a glob that cannot match a workspace path, a value that is not a
/// list of strings and a misspelled key are located problems.
#[test]
fn hard_link_reads_are_the_operators_globs_and_bad_ones_are_located() {
    let ws = TempWorkspace::new();
    assert!(load(&ws, "").unwrap().hard_link_reads().is_empty());
    let config = load(
        &ws,
        "[files]\nread_hard_links = [\"node_modules/.pnpm\", \".venv/**\"]\n",
    )
    .unwrap();
    let globs: Vec<String> = config
        .hard_link_reads()
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    assert_eq!(globs, ["node_modules/.pnpm", ".venv/**"]);
    let summary = config.summary(&[]);
    assert!(
        summary.contains(
            &"files: files with several hard links read beneath node_modules/.pnpm, .venv/**"
                .to_string()
        ),
        "{summary:#?}"
    );
    let p = problems("[files]\nread_hard_links = [\"ok/**\", \"../outside\", \"\"]\n");
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(p.iter().all(|p| p.starts_with("2:")), "{p:#?}");
    assert!(
        p[0].contains("read_hard_links[1]") && p[0].contains(".venv/**"),
        "{p:#?}"
    );
    assert!(p[1].contains("read_hard_links[2]"), "{p:#?}");
    let p = problems("[files]\nread_hard_links = \"node_modules\"\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("read_hard_links"), "{p:#?}");
    let p = problems("[files]\nread_hardlinks = [\"x\"]\n");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("read_hardlinks"), "{p:#?}");
}

/// `[shell] max_processes` and `max_memory_bytes` reach run_shell's per-run limits (its
/// cgroup's); a zero, a negative, a huge value, a string or a float is a located problem.
#[test]
fn shell_run_limits_reach_run_shell_and_bad_values_are_located() {
    let ws = TempWorkspace::new();
    let defaults = load(&ws, "").unwrap().shell_config().limits;
    assert_eq!(defaults.run_processes, Some(512));
    assert_eq!(defaults.run_memory_bytes, Some(16 << 30));
    let limits = load(
        &ws,
        "[shell]\nmax_processes = 64\nmax_memory_bytes = 268435456\n",
    )
    .unwrap()
    .shell_config()
    .limits;
    assert_eq!(limits.run_processes, Some(64));
    assert_eq!(limits.run_memory_bytes, Some(256 << 20));
    for (text, at, says) in [
        (
            "max_processes = 0",
            "2:",
            "0 is out of range: write 8 to 4194304 processes",
        ),
        (
            "max_processes = 7",
            "2:",
            "7 is out of range: write 8 to 4194304 processes",
        ),
        ("max_processes = 4194305", "2:", "out of range"),
        ("max_processes = -1", "2:", "max_processes"),
        (
            "max_processes = 99999999999999999999",
            "2:",
            "max_processes",
        ),
        ("max_processes = \"many\"", "2:", "max_processes"),
        ("max_processes = 1.5", "2:", "max_processes"),
        (
            "max_memory_bytes = 1024",
            "2:",
            "1024 is out of range: write 16777216 to 1125899906842624 bytes",
        ),
        ("max_memory_bytes = \"16G\"", "2:", "max_memory_bytes"),
        ("max_memory_bytes = -5", "2:", "max_memory_bytes"),
    ] {
        let p = problems(&format!("[shell]\n{text}\n"));
        assert_eq!(p.len(), 1, "{text}: {p:#?}");
        assert!(p[0].starts_with(at), "{text}: {p:#?}");
        assert!(p[0].contains(says), "{text}: {p:#?}");
    }
}

/// `[shell] git_identity`: the operator's own by default, `false` none, a table an explicit
/// one; anything else (a string, an empty or multi-line name, a missing email, an unknown
/// key) is a located problem saying what to write.
#[test]
fn the_git_identity_of_commands_is_the_operators_unless_set() {
    use toolgate_tools::shell::{GitIdentity, Identity};
    let ws = TempWorkspace::new();
    let identity = |text: &str| load(&ws, text).unwrap().shell_config().git_identity;
    assert_eq!(identity(""), GitIdentity::Operator);
    assert_eq!(
        identity("[shell]\ngit_identity = true\n"),
        GitIdentity::Operator
    );
    assert_eq!(
        identity("[shell]\ngit_identity = false\n"),
        GitIdentity::Off
    );
    assert_eq!(
        identity(
            "[shell]\ngit_identity = { name = \"Build Bot\", email = \"bot@example.invalid\" }\n"
        ),
        GitIdentity::Fixed(Identity::new("Build Bot", "bot@example.invalid").unwrap())
    );
    one(
        "[shell]\ngit_identity = \"yes\"\n",
        "2:",
        "false (none) or a table { name = \"...\", email = \"...\" }",
    );
    one(
        "[shell]\ngit_identity = { name = \"\", email = \"a@example.invalid\" }\n",
        "2:",
        "name is empty; write git_identity = { name = \"Your Name\"",
    );
    one(
        "[shell]\ngit_identity = { name = \"A\\nB\", email = \"a@example.invalid\" }\n",
        "2:",
        "control character",
    );
    one("[shell]\ngit_identity = { name = \"A\" }\n", "2:", "email");
    one(
        "[shell]\ngit_identity = { name = \"A\", email = \"a@b\", signingkey = \"x\" }\n",
        "2:",
        "signingkey",
    );
    for p in problems("[shell]\ngit_identity = 1\n") {
        assert!(p.contains("git_identity"), "{p}");
    }
}
