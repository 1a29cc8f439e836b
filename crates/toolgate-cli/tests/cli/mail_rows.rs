//! A contacts book with bad rows, through the binary: `toolgate check` reports each at its
//! file and line with what to fix (exit 1), while `call` and `serve` start, log each skipped
//! row at warn level, and the mail tools work with the good rows (other tools too).

use super::mail::{workspace, Smtp};
use super::toolgate;
use serde_json::{json as j, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

const CONTACTS: &str = "name,email,organization,aliases\n\
    Ann Lee,ann@company.com,Company,\n\
    Bad,not-an-address,X,\n\
    ,nobody@example.com,,\n\
    \"Eve\r\nBcc: all@example.com\",eve@example.com,,\n\
    Quoted,\"\"\"a b\"\"@example.com\",,\n";

#[test]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
fn bad_contact_rows_fail_check_located_and_are_skipped_by_call_and_serve() {
    let Some(smtp) = Smtp::start(&[]) else { return };
    let t = workspace(
        smtp.port,
        "\n[[rules]]\ndecision = \"allow\"\ntool = \"send_email\"\n",
    );
    let ws = t.path();
    let w = ws.to_str().unwrap();
    std::fs::write(ws.join("contacts.csv"), CONTACTS).unwrap();

    let check = toolgate(&["check", "-w", w], ws);
    let out = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{out}");
    for located in [
        "contacts.csv:3: row 3: \"not-an-address\" is not an email address",
        "contacts.csv:4: row 4: the name is empty",
        "contacts.csv:5: row 5: the name \"Eve\\r\\nBcc: all@example.com\" holds a line break",
        "contacts.csv:7: row 7: \"\\\"a b\\\"@example.com\" is not an email address",
        "4 problems in the contacts files",
    ] {
        assert!(out.contains(located), "{located:?} not in\n{out}");
    }
    assert!(!out.contains(": ok"), "{out}");

    // `call`: other tools and the mail tools work; each skipped row is logged
    let read = toolgate(
        &["call", "read_file", r#"{"path": "contacts.csv"}"#, "-w", w],
        ws,
    );
    assert!(read.status.success(), "{read:?}");
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(
        stderr.contains("WARN") && stderr.contains("a contacts row is skipped"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("a contacts row is skipped").count(),
        4,
        "{stderr}"
    );
    let found = toolgate(
        &["call", "search_contacts", r#"{"query": "Ann"}"#, "-w", w],
        ws,
    );
    let v: Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(
        v["structured_content"]["contacts"][0]["email"], "ann@company.com",
        "{v}"
    );
    let eve = toolgate(
        &["call", "search_contacts", r#"{"query": "Eve"}"#, "-w", w],
        ws,
    );
    let v: Value = serde_json::from_slice(&eve.stdout).unwrap();
    assert_eq!(v["structured_content"]["contacts"], j!([]), "{v}");

    // `serve` starts and answers: a draft to the good contact, sent
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "-w", w])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut answer = |m: Value| -> Value {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        if m.get("id").is_none() {
            return Value::Null;
        }
        loop {
            let line = lines.next().expect("serve answered").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == m["id"] {
                return v;
            }
        }
    };
    answer(
        j!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "mail-rows-test", "version": "1"}}}),
    );
    answer(j!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = answer(
        j!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "send_email",
        "arguments": {"to": ["ann@company.com"], "subject": "Hi", "body": "Hello Ann"}}}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(smtp.messages().len(), 1);
    drop(stdin);
    let _ = server.wait();
    let mut stderr = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("a contacts row is skipped"), "{stderr}");
}
