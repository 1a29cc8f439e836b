//! The HTTP tools through the binary: `[http]` opens a private range for them, nothing else
//! is reachable, `toolgate check` reports a credential whose variable is unset, and
//! `http_request` acts once per idempotency key.

use super::{json, tree};
use std::path::Path;
use std::process::{Command, Output};
use toolgate_test_support::http::{HttpServer, Reply};

/// `toolgate args` in `cwd` with `env` set (a value of `None` removes the variable).
fn toolgate_env(args: &[&str], cwd: &Path, env: &[(&str, Option<&str>)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args).current_dir(cwd);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.output().expect("running toolgate")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const CREDENTIALS: &str = "[http.credentials.\"127.0.0.2\"]\nheader = \"X-Api-Key\"\n\
                           value_env = \"TOOLGATE_TEST_CLI_HTTP_KEY\"\nplain_http = true\n";

#[test]
fn check_reports_a_credential_whose_variable_is_unset() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), CREDENTIALS).unwrap();
    let ws = ws.to_str().unwrap();
    let var = "TOOLGATE_TEST_CLI_HTTP_KEY";
    let out = toolgate_env(&["check", "-w", ws], t.path(), &[(var, None)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("toolgate.toml:3:13: http.credentials.127.0.0.2.value_env:"),
        "{text}"
    );
    assert!(text.contains(var) && text.contains("1 problem"), "{text}");

    let out = toolgate_env(
        &["check", "-w", ws],
        t.path(),
        &[(var, Some("k-very-secret"))],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("credentials for 127.0.0.2"), "{text}");
    assert!(!text.contains("k-very-secret"), "{text}");
}

#[test]
fn http_fetch_reaches_only_what_the_configuration_opens() {
    let t = tree();
    let ws = t.path().join("ws");
    let public = HttpServer::start("127.0.0.2");
    public.route(
        "/page",
        Reply::ok("text/html", "<h1>Title</h1><p>Some <b>text</b>.</p>"),
    );
    let canary = HttpServer::start("127.0.0.1");
    std::fs::write(
        ws.join("toolgate.toml"),
        format!("[http]\nallow_private = [\"127.0.0.2/32\"]\n\n{CREDENTIALS}"),
    )
    .unwrap();
    let ws = ws.to_str().unwrap();
    let env = [("TOOLGATE_TEST_CLI_HTTP_KEY", Some("k-very-secret"))];
    let call = |url: &str| {
        let args = serde_json::json!({ "url": url }).to_string();
        toolgate_env(&["call", "http_fetch", &args, "-w", ws], t.path(), &env)
    };

    let out = call(&public.url("/page"));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v = json(&out);
    let r = &v["structured_content"];
    assert_eq!(
        (r["status"].as_u64(), r["format"].as_str()),
        (Some(200), Some("markdown"))
    );
    assert!(r["body"].as_str().unwrap().contains("# Title"), "{r}");
    // the operator's credential went to its host, and nowhere the model or the audit sees
    assert_eq!(
        public.requests()[0].header("x-api-key"),
        Some("k-very-secret")
    );
    assert!(!stdout(&out).contains("k-very-secret"));

    for url in [
        canary.url("/x"),
        format!("http://2130706433:{}/x", canary.port()),
        format!("http://[::ffff:127.0.0.1]:{}/x", canary.port()),
        "file:///etc/passwd".to_string(),
    ] {
        let out = call(&url);
        assert_eq!(out.status.code(), Some(3), "{url}: {}", stdout(&out));
        let v = json(&out);
        assert_eq!(v["error"]["kind"], "unsafe_input", "{url}");
        assert_eq!(v["error"]["reason"], "url_blocked", "{url}");
    }
    assert_eq!(canary.hits(), 0);

    let audit = toolgate_env(&["audit", "--json", "-w", ws], t.path(), &env);
    let text = stdout(&audit);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(!text.contains("k-very-secret"), "{text}");
}

/// The "done when": the same `toolgate call http_request` with one idempotency key,
/// run twice against a counting server opened by `[http] allow_private`, reaches it once; the
/// second answer is a replay; the same key with another body is a conflict.
#[test]
fn http_request_acts_once_per_key_across_runs_of_the_binary() {
    let t = tree();
    let ws = t.path().join("ws");
    let server = HttpServer::start("127.0.0.2");
    server.route("/x", Reply::Count);
    std::fs::write(
        ws.join("toolgate.toml"),
        "[http]\nallow_private = [\"127.0.0.2/32\"]\n",
    )
    .unwrap();
    let ws = ws.to_str().unwrap();
    let call = |body: &str| {
        let args = serde_json::json!({"url": server.url("/x"), "method": "POST", "body": body})
            .to_string();
        toolgate_env(
            &[
                "call",
                "http_request",
                &args,
                "--idempotency-key",
                "K1",
                "--yes",
                "-w",
                ws,
            ],
            t.path(),
            &[],
        )
    };

    let first = call("hi");
    assert_eq!(first.status.code(), Some(0), "{}", stdout(&first));
    let v = json(&first);
    assert_eq!(v["structured_content"]["status"], 200);
    assert_eq!(v["structured_content"]["idempotency_key"], "K1");
    assert!(v.get("replayed").is_none_or(|r| r == false), "{v}");
    let answer = v["structured_content"]["body"].clone();

    let second = call("hi");
    assert_eq!(second.status.code(), Some(0), "{}", stdout(&second));
    let v = json(&second);
    assert_eq!(v["replayed"], true, "{v}");
    assert_eq!(v["structured_content"]["body"], answer);
    assert_eq!(server.count("K1"), 1);

    let other = call("another body");
    assert_eq!(other.status.code(), Some(3), "{}", stdout(&other));
    let v = json(&other);
    assert_eq!(
        (v["error"]["kind"].as_str(), v["error"]["reason"].as_str()),
        (Some("invalid_input"), Some("idempotency_conflict")),
        "{v}"
    );
    assert_eq!(server.count("K1"), 1);
    assert_eq!(server.hits(), 1);
}

/// A `deny` rule over an address (`host:127.0.0.1`) inside a range `[http] allow_private`
/// opens covers every spelling of a URL that connects to it: the IPv6 forms that carry it
/// (compatible, translated, NAT64, 6to4, Teredo), and `localhost`, which is loopback by
/// definition (RFC 6761) and was reached through the system's resolver.
#[test]
fn a_deny_rule_over_an_address_covers_every_spelling_of_it() {
    let t = tree();
    let ws = t.path().join("ws");
    let canary = HttpServer::start("127.0.0.1");
    let open = HttpServer::start("127.0.0.2");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[http]\nallow_private = [\"127.0.0.0/8\", \"::1/128\"]\n\n\
         [[rules]]\nname = \"no-admin\"\ndecision = \"deny\"\ntool = \"http_*\"\n\
         resource = \"host:127.0.0.1\"\n",
    )
    .unwrap();
    let ws = ws.to_str().unwrap();
    let call = |url: &str| {
        let args = serde_json::json!({ "url": url }).to_string();
        toolgate_env(&["call", "http_fetch", &args, "-w", ws], t.path(), &[])
    };
    let out = call(&open.url("/"));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let p = canary.port();
    for host in [
        "127.0.0.1",
        "0x7f.1",
        "[::ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "[::ffff:0:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
        "[2001:0:7f00:2::80ff:fffe]",
        "localhost",
        "LocalHost.",
        "admin.localhost",
    ] {
        let url = format!("http://{host}:{p}/admin");
        let out = call(&url);
        assert_eq!(out.status.code(), Some(4), "{url}: {}", stdout(&out));
        let v = json(&out);
        assert_eq!(v["error"]["kind"], "permission_denied", "{url}: {v}");
    }
    assert_eq!(canary.hits(), 0, "{:?}", canary.requests());
}

/// A deny or ask rule over an address covers the names that resolve to it (the operator's
/// `[http.hosts]` answers here; a name server's the same way): the call is refused before
/// anything is sent, a redirect to such a name is not followed, one such answer among others
/// refuses the name, and the audit record names the rule. A name resolving elsewhere is
/// fetched as before.
#[test]
fn a_deny_rule_over_an_address_covers_the_names_that_resolve_to_it() {
    let t = tree();
    let ws = t.path().join("ws");
    let canary = HttpServer::start("127.0.0.1");
    let open = HttpServer::start("127.0.0.2");
    let p = canary.port();
    open.route("/page", Reply::ok("text/plain", "fine"));
    open.route(
        "/hop",
        Reply::redirect(302, format!("http://alias.test:{p}/admin")),
    );
    std::fs::write(
        ws.join("toolgate.toml"),
        "[http]\nallow_private = [\"127.0.0.0/8\"]\n\n\
         [http.hosts]\n\"alias.test\" = [\"127.0.0.1\"]\n\"open.test\" = [\"127.0.0.2\"]\n\
         \"mixed.test\" = [\"127.0.0.2\", \"127.0.0.1\"]\n\"lab.test\" = [\"127.0.0.3\"]\n\n\
         [[rules]]\nname = \"no-admin\"\ndecision = \"deny\"\ntool = \"http_*\"\n\
         resource = \"host:127.0.0.1\"\n\n\
         [[rules]]\nname = \"ask-lab\"\ndecision = \"ask\"\nresource = \"host:127.0.0.3/32\"\n",
    )
    .unwrap();
    let ws = ws.to_str().unwrap();
    let call = |url: &str| {
        let args = serde_json::json!({ "url": url }).to_string();
        toolgate_env(&["call", "http_fetch", &args, "-w", ws], t.path(), &[])
    };
    let out = call(&format!("http://open.test:{}/page", open.port()));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(json(&out)["structured_content"]["body"], "fine");

    for (url, rule, says) in [
        (
            format!("http://alias.test:{p}/admin"),
            "no-admin",
            "does not allow",
        ),
        (
            format!("http://ALIAS.test.:{p}/admin"),
            "no-admin",
            "does not allow",
        ),
        (
            format!("http://mixed.test:{p}/admin"),
            "no-admin",
            "does not allow",
        ),
        (
            format!("http://lab.test:{p}/"),
            "ask-lab",
            "asks a person about",
        ),
    ] {
        let out = call(&url);
        assert_eq!(out.status.code(), Some(3), "{url}: {}", stdout(&out));
        let v = json(&out);
        let e = &v["error"];
        assert_eq!(e["reason"], "url_blocked", "{url}: {v}");
        assert_eq!(e["details"]["rule"], rule, "{url}: {v}");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.starts_with("address_blocked: the host") && message.contains(says),
            "{url}: {message}"
        );
    }
    let out = call(&open.url("/hop"));
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let v = json(&out);
    assert_eq!(
        v["error"]["details"]["url_blocked"], "redirect_to_blocked",
        "{v}"
    );
    assert_eq!(v["error"]["details"]["rule"], "no-admin", "{v}");
    assert_eq!(canary.hits(), 0, "{:?}", canary.requests());
    assert_eq!(canary.connections(), 0);

    let audit = toolgate_env(&["audit", "--json", "-w", ws], t.path(), &[]);
    let text = stdout(&audit);
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 6, "{text}");
    let named = records
        .iter()
        .filter(|r| r.to_string().contains("no-admin"))
        .count();
    assert_eq!(named, 4, "{text}");
}
