//! dup-keys-84 over MCP: a `tools/call` whose arguments name a key twice (raw JSON-RPC over
//! stdio) is judged and run on one value, the last, and the audit record shows that value.

use super::support::{TestDir, SERVER};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn dup_keys_84_a_duplicated_argument_is_one_value_for_every_stage() {
    let t = TestDir::new();
    let mut child = Command::new(SERVER)
        .arg("--workspace")
        .arg(t.ws())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: &str| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server ended");
        if line.contains(&format!("\"id\":{id}")) {
            return serde_json::from_str::<serde_json::Value>(&line).unwrap();
        }
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    answer("1");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/lib.txt","path":"../outside.txt"}}}"#,
    );
    let outside = answer("2");
    assert_eq!(outside["result"]["isError"], true, "{outside}");
    assert!(!outside.to_string().contains("CANARY"), "{outside}");
    send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"../outside.txt","path":"src/lib.txt"}}}"#,
    );
    let inside = answer("3");
    assert_eq!(
        inside["result"]["structuredContent"]["path"], "src/lib.txt",
        "{inside}"
    );
    drop(stdin);
    child.wait().unwrap();
    let audit = std::fs::read_to_string(t.ws().join(".toolgate/audit.jsonl")).unwrap();
    let paths: Vec<String> = audit
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| r["arguments"]["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths, ["../outside.txt", "src/lib.txt"]);
}
