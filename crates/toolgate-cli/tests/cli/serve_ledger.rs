//! The idempotency ledger behind `toolgate serve --http` on 2026-07-28, driven by the official
//! Python SDK (`tests/clients/ledger_client.py`): a call re-sent after the client gave up on
//! it (its connection closed) gets the recorded result; the key as SEP-3182's
//! `params.idempotencyKey` and as `_meta`; a key derived across one caller's stateless
//! requests. The audit says which calls were replays.

use super::serve_project::{client, HttpServe};
use super::toolgate;
use serde_json::Value;
use std::time::Duration;
use toolgate_test_support::clients::run_ok;

const CONFIG: &str = r#"
[[rules]]
decision = "allow"
tool = "run_shell"

[[rules]]
decision = "allow"
resource = "command:echo"

[[rules]]
decision = "allow"
resource = "command:sleep"

[[rules]]
decision = "allow"
tool = "edit_file"
"#;

#[test]
fn a_call_re_sent_after_a_dropped_connection_gets_the_recorded_result() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    let server = HttpServe::start(&ws);
    let w = ws.to_str().unwrap();
    let Some(cmd) = client(
        "ledger_client.py",
        &[
            "--workspace",
            w,
            "--url",
            &server.url,
            "--token",
            &server.token,
            "--mode",
            "2026-07-28",
        ],
    ) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: ledger"), "{stdout}");
    drop(server);
    let records: Vec<Value> =
        String::from_utf8(toolgate(&["audit", "--json", "--limit", "0", "-w", w], &ws).stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let trail = |key: &str| -> Vec<String> {
        records
            .iter()
            .filter(|r| r["idempotency_key"] == key)
            .map(|r| {
                r["ledger"]
                    .as_str()
                    .or(r["error_kind"].as_str())
                    .unwrap_or("-")
                    .to_string()
            })
            .collect()
    };
    // records are written as calls end: the first call's ends after the re-sends that found
    // it in progress, before the one that got its result
    let dropped = trail("K-dropped");
    let count = |e: &str| dropped.iter().filter(|x| *x == e).count();
    assert_eq!(
        (count("executed"), count("replayed")),
        (1, 1),
        "{dropped:?}"
    );
    assert_eq!(
        dropped.last().map(String::as_str),
        Some("replayed"),
        "{dropped:?}"
    );
    assert_eq!(count("in_progress"), dropped.len() - 2, "{dropped:?}");
    assert_eq!(trail("K-sep")[..2], ["executed", "replayed"]);
    // the edit sent twice without a key: one key, derived, for both requests
    let edits: Vec<&Value> = records
        .iter()
        .filter(|r| r["tool"] == "edit_file")
        .collect();
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[0]["idempotency_key"], edits[1]["idempotency_key"]);
    assert!(edits[0]["idempotency_key"]
        .as_str()
        .unwrap()
        .starts_with("tg-"));
    assert_eq!(
        (edits[0]["ledger"].as_str(), edits[1]["ledger"].as_str()),
        (Some("executed"), Some("replayed"))
    );
    // the caller's session: its stateless requests share it, and the key derives from its
    // caller, which outlives it
    assert_eq!(edits[0]["session"], edits[1]["session"]);
    assert!(edits[0]["session"]
        .as_str()
        .unwrap()
        .starts_with("mcp-caller-"));
}
