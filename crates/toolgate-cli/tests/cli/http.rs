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
                           value_env = \"TOOLGATE_TEST_CLI_HTTP_KEY\"\n";

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
