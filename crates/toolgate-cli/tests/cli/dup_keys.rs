//! dup-keys-84 (schema_validation) through the binary: arguments with a key given twice are
//! one value for every stage (the last, as JSON parsers keep it): the guard, the policy's
//! rules, the handler and the audit record all see the same path, so a deny rule on it holds
//! and the record shows what was acted on.

use super::{json, toolgate};
use serde_json::Value;

#[test]
fn dup_keys_84_every_stage_sees_the_same_value() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("secrets")).unwrap();
    std::fs::create_dir_all(t.path().join("outside")).unwrap();
    std::fs::write(ws.join("ok.txt"), "ok\n").unwrap();
    std::fs::write(ws.join("secrets/key"), "CANARY-KEY\n").unwrap();
    std::fs::write(t.path().join("outside/secret.txt"), "CANARY-OUT\n").unwrap();
    std::fs::write(
        ws.join("toolgate.toml"),
        "[[rules]]\ndecision = \"deny\"\nresource = \"path:secrets\"\naccess = \"read\"\n",
    )
    .unwrap();
    let w = ws.to_str().unwrap();
    let call = |raw: &str| json(&toolgate(&["call", "read_file", raw, "-w", w], &ws));
    let denied = call(r#"{"path":"ok.txt","path":"secrets/key"}"#);
    assert_eq!(denied["error"]["kind"], "permission_denied", "{denied}");
    let outside = call(r#"{"path":"ok.txt","path":"../outside/secret.txt"}"#);
    assert_eq!(
        outside["error"]["reason"], "path_outside_workspace",
        "{outside}"
    );
    let read = call(r#"{"path":"secrets/key","path":"ok.txt"}"#);
    assert_eq!(
        read["structured_content"]["content"], "     1\tok",
        "{read}"
    );
    for v in [&denied, &outside, &read] {
        let wire = v.to_string();
        assert!(!wire.contains("CANARY"), "{wire}");
    }
    let audit = toolgate(&["audit", "--json", "-w", w], &ws);
    let records: Vec<Value> = String::from_utf8_lossy(&audit.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let acted: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["arguments"]["path"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        acted,
        [
            ("secrets/key", "fatal_error"),
            ("../outside/secret.txt", "recoverable_error"),
            ("ok.txt", "ok"),
        ]
    );
    assert_eq!(records[0]["rule"], "rules[0]");
}
