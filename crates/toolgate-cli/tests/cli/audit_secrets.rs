//! Secrets inside argument strings stay out of the audit (issue 12, item 7), through the
//! `toolgate` binary: audit-secret-88 (secret_leak) and the other spellings of its class
//! (a JSON Web Token under a header no name marks as secret included) reach neither `toolgate audit` (table and `--json`) nor the store's files, and what the
//! audit keeps of an argument is bounded (a refused 11 MiB write_file no longer makes an
//! 11 MB row).

use super::stdio::{error_kind, Serve};
use super::toolgate;
use serde_json::{json, Value};
use std::path::Path;

/// Every byte of the workspace's store: the database, its WAL and shared memory.
fn store_bytes(ws: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for f in ["toolgate.db", "toolgate.db-wal", "toolgate.db-shm"] {
        if let Ok(b) = std::fs::read(ws.join(".toolgate").join(f)) {
            bytes.extend(b);
        }
    }
    bytes
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn credentials_inside_arguments_reach_neither_the_audit_nor_the_store() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let dir = ws.to_str().unwrap();
    // (tool, arguments, the secret, what the audit keeps around it)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "run_shell",
            json!({"command": "curl -s -m 1 -H 'Authorization: Bearer ghp_CANARYTOKEN0123456789abcdefABCDEF' http://127.0.0.1:9/ ; echo done"}),
            "CANARYTOKEN",
            "Authorization: Bearer [REDACTED]",
        ),
        (
            "run_shell",
            json!({"command": "export OPENAI_API_KEY=sk-proj-CANARYONE0123456789ab; echo set"}),
            "CANARYONE",
            "export OPENAI_API_KEY=[REDACTED];",
        ),
        (
            "run_shell",
            json!({"command": "mysql --password=CANARYTWO -h 127.0.0.1 -e 'select 1' || true"}),
            "CANARYTWO",
            "--password=[REDACTED] -h",
        ),
        (
            "run_shell",
            json!({"command": "git ls-remote https://deploy:CANARYTHREE@127.0.0.1:9/r.git || true"}),
            "CANARYTHREE",
            "https://deploy:[REDACTED]@127.0.0.1",
        ),
        (
            "run_shell",
            json!({"command": "curl -s -u admin:CANARYFOUR http://127.0.0.1:9/ || true"}),
            "CANARYFOUR",
            "-u admin:[REDACTED]",
        ),
        (
            "run_shell",
            json!({"command": "curl -s -m 1 -H 'X-Session: eyJhbGciOiJIUzI1NiJ9.eyJDQU5BUllKV1QiOjF9.c2lnbmF0dXJl' http://127.0.0.1:9/ || true"}),
            "eyJDQU5BUllKV1QiOjF9",
            "-H 'X-Session: [REDACTED]' http",
        ),
        (
            // JSON carried in the command line, its quotes escaped
            "run_shell",
            json!({"command": r#"curl -s -m 1 -d "{\"user\":\"bob\",\"password\":\"CANARYJSON\"}" http://127.0.0.1:9/ || true"#}),
            "CANARYJSON",
            r#"-d "{\"user\":\"bob\",\"password\":\"[REDACTED]\"}" http"#,
        ),
        (
            // a scheme word after `=` (an INI file, a search pattern): the token goes
            "write_file",
            json!({"path": "app/config.ini", "content": "[api]\nAuthorization=Bearer CANARYINI1xyz\nurl=https://x\n"}),
            "CANARYINI1",
            "Authorization=Bearer [REDACTED]\nurl=https://x",
        ),
        (
            "search_code",
            json!({"pattern": "Authorization=Bearer CANARYPAT1xyz"}),
            "CANARYPAT1",
            "Authorization=Bearer [REDACTED]",
        ),
        (
            // a token glued to a printf escape's letter
            "run_shell",
            json!({"command": r#"printf "user=bob\nghp_CANARYESC0123456789abcdefghijklmno\n" > creds.txt"#}),
            "CANARYESC",
            r#"printf "user=bob\n[REDACTED]\n" > creds.txt"#,
        ),
        (
            "run_shell",
            json!({"command": "export DB_PASS=CANARYPASS1; export MYSQL_PWD=CANARYPWD1; echo set"}),
            "CANARYPWD1",
            "export DB_PASS=[REDACTED]; export MYSQL_PWD=[REDACTED]; echo",
        ),
        (
            "write_file",
            json!({"path": ".env", "content": "AWS_SECRET_ACCESS_KEY=CANARYFIVEwJalrXUtnFEMI/K7MDENG\nSTRIPE_KEY=sk_live_CANARYSIX0123456789\nDEBUG=1\n"}),
            "CANARYFIVE",
            "AWS_SECRET_ACCESS_KEY=[REDACTED]\nSTRIPE_KEY=[REDACTED]\nDEBUG=[REDACTED]",
        ),
    ];
    for (tool, args, _, _) in &cases {
        let out = toolgate(&["call", tool, &args.to_string(), "-w", dir, "--yes"], &ws);
        assert!(out.status.code().is_some(), "{tool}");
    }
    let audit = toolgate(&["audit", "--json", "-w", dir], &ws);
    let table = toolgate(&["audit", "-w", dir], &ws);
    let text = String::from_utf8_lossy(&audit.stdout).into_owned();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), cases.len());
    let bytes = store_bytes(&ws);
    for ((tool, _, secret, kept), record) in cases.iter().zip(&records) {
        assert_eq!(record["tool"], *tool);
        let shown = record["arguments"].to_string();
        for s in [*secret, "CANARYSIX", "CANARYPASS1"] {
            assert!(!text.contains(s), "{s} in `toolgate audit --json`");
            assert!(!contains(&table.stdout, s), "{s} in `toolgate audit`");
            assert!(!contains(&bytes, s), "{s} in the store's files");
        }
        let arguments = &record["arguments"];
        let value = arguments["command"]
            .as_str()
            .or(arguments["content"].as_str())
            .or(arguments["pattern"].as_str())
            .unwrap();
        assert!(value.contains(kept), "{kept:?} in {shown}");
    }
    // an edit of a secrets file: its text is the secret, whatever the line's key is named
    let edit = json!({"path": ".env", "old_string": "DEBUG=1", "new_string": "DEBUG=CANARYNINE"});
    let out = toolgate(
        &["call", "edit_file", &edit.to_string(), "-w", dir, "--yes"],
        &ws,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let audit = toolgate(&["audit", "--json", "-w", dir], &ws);
    let text = String::from_utf8_lossy(&audit.stdout).into_owned();
    assert!(!text.contains("CANARYNINE"), "{text}");
    let record: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(record["tool"], "edit_file");
    assert_eq!(
        (
            &record["arguments"]["old_string"],
            &record["arguments"]["new_string"]
        ),
        (&json!("DEBUG=[REDACTED]"), &json!("DEBUG=[REDACTED]")),
        "{record}"
    );
    let verify = toolgate(&["audit", "verify", "-w", dir], &ws);
    assert_eq!(verify.status.code(), Some(0));
}

/// An idempotency key that is a token is redacted in the audit (`--json` and the table),
/// while the ledger keeps the key itself: the same call sent again with it is replayed.
#[test]
fn a_secret_idempotency_key_stays_out_of_the_audit_and_still_replays() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let dir = ws.to_str().unwrap();
    let key = "ghp_CANARYKEY0123456789abcdefghijklmnop";
    let args = json!({"command": "echo hi >> once.txt"}).to_string();
    for _ in 0..2 {
        let out = toolgate(
            &[
                "call",
                "run_shell",
                &args,
                "--idempotency-key",
                key,
                "-w",
                dir,
                "--yes",
            ],
            &ws,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // the ledger found the first call by its key: the command ran once
    assert_eq!(
        std::fs::read_to_string(ws.join("once.txt")).unwrap(),
        "hi\n"
    );
    let audit = toolgate(&["audit", "--json", "-w", dir], &ws);
    let table = toolgate(&["audit", "-w", dir], &ws);
    let text = String::from_utf8_lossy(&audit.stdout).into_owned();
    assert!(!text.contains("CANARYKEY"), "{text}");
    assert!(!contains(&table.stdout, "CANARYKEY"));
    let keys: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["idempotency_key"].clone())
        .collect();
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k == "[REDACTED]"), "{keys:?}");
    assert!(text.contains(r#""ledger":"replayed""#), "{text}");
    let verify = toolgate(&["audit", "verify", "-w", dir], &ws);
    assert_eq!(verify.status.code(), Some(0));
}

/// `TOOLGATE_LOG=debug` keeps rmcp's message dumps (every `tools/call`'s arguments and
/// result, as sent) out of the log; naming rmcp (`debug,rmcp=debug`) brings them back.
#[test]
fn a_debug_log_holds_no_call_arguments_unless_rmcp_is_named() {
    use super::mcp::{self, call, StdioServe};
    for (directives, dumps) in [("debug", false), ("debug,rmcp=debug", true)] {
        let t = mcp::workspace();
        let mut s = StdioServe::start(&mcp::ws(&t), &[], &[("TOOLGATE_LOG", directives)]);
        s.handshake(json!({}));
        s.send(&call(
            1,
            "search_code",
            json!({"pattern": "password=LOGCANARY123"}),
        ));
        assert_eq!(s.recv()["id"], 1);
        let log = s.stderr.clone();
        assert!(s.finish().success());
        let log = log.lock().unwrap().clone();
        assert!(log.contains("DEBUG"), "{directives}: no debug log: {log}");
        assert_eq!(log.contains("LOGCANARY123"), dumps, "{directives}: {log}");
    }
}

/// An 11 MiB write_file (refused: past the 10 MiB a file write takes) is audited with a
/// bounded head and tail of its content, the content's length and SHA-256, not 11 MB.
#[test]
fn a_huge_refused_write_keeps_a_bounded_row() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let content = format!(
        "OPENAI_API_KEY=sk-proj-CANARYBIG0123456789\n{}",
        "x".repeat(11 << 20)
    );
    {
        let mut serve = Serve::start(&ws, &[]);
        let r = serve.call("write_file", json!({"path": "big.txt", "content": content}));
        assert_eq!(r["isError"], true, "{r:.300}");
        assert!(!error_kind(&r).is_null());
    }
    let out = toolgate(&["audit", "--json", "-w", ws.to_str().unwrap()], &ws);
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept = record["arguments"]["content"].as_str().unwrap();
    assert!(kept.len() < 4 * 1024, "{} bytes kept", kept.len());
    assert!(
        kept.starts_with("OPENAI_API_KEY=[REDACTED]\nxxx"),
        "{kept:.60}"
    );
    assert!(
        kept.contains(&format!("…[toolgate: {} bytes, sha256 ", content.len())),
        "{kept}"
    );
    assert!(!contains(&store_bytes(&ws), "CANARYBIG"));
    let db = std::fs::metadata(ws.join(".toolgate/toolgate.db"))
        .unwrap()
        .len()
        + std::fs::metadata(ws.join(".toolgate/toolgate.db-wal")).map_or(0, |m| m.len());
    assert!(db < 1 << 20, "the store holds {db} bytes");
}
