//! Security cases of the transport-robustness class, on the test server: every request gets
//! exactly one answer (deep-nesting-91), and a JSON-RPC batch cannot pass around the per-call
//! pipeline (batch-jsonrpc-93). The class tests through the `toolgate` binary are in
//! toolgate-cli's `serve_framing.rs`.

use super::support::{initialize, post_mcp, HttpChild, TestDir, SERVER};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The case's request: `read_file ok.txt` with an argument nesting 200 objects deep.
fn nested_200() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"ok.txt","x":{}"x"{}}}}}}}"#,
        r#"{"a":"#.repeat(200),
        "}".repeat(200)
    )
}

fn workspace() -> TestDir {
    let t = TestDir::new();
    std::fs::write(t.ws().join("ok.txt"), "ok\n").unwrap();
    t
}

/// The audit records the test server wrote for `ws`.
fn audited(ws: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(ws.join(".toolgate/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The test server over stdio, initialized: lines sent, answers read (20 s each at most).
struct StdioServer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: mpsc::Receiver<Value>,
}

impl StdioServer {
    fn initialized(ws: &std::path::Path) -> Self {
        let mut child = Command::new(SERVER)
            .arg("--workspace")
            .arg(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = mpsc::channel::<Value>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(serde_json::from_str(&line).unwrap());
            }
        });
        let mut s = StdioServer {
            child,
            stdin,
            answers,
        };
        s.send(&initialize().to_string());
        assert_eq!(s.next()["id"], 1);
        s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.answers
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer")
    }

    /// Closes stdin and asserts the server exits cleanly.
    fn ends_cleanly(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

#[test]
fn deep_nesting_91_every_request_gets_one_answer_over_stdio_and_http() {
    let t = workspace();
    // stdio: after initialize, the nested request, then tools/list as a liveness probe
    let mut server = StdioServer::initialized(&t.ws());
    server.send(&nested_200());
    server.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    let a = server.next();
    assert_eq!(
        (&a["id"], a["error"]["code"].as_i64()),
        (&json!(5), Some(-32600)),
        "{a}"
    );
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nests deeper"),
        "{a}"
    );
    let probe = server.next();
    assert_eq!(probe["id"], 6, "{probe}");
    assert!(probe["result"]["tools"].is_array(), "{probe}");
    // the same holds for a line over the stdio cap: a 17 MiB write_file
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"big.txt","content":"{}"}}}},"id":7}}"#,
        "x".repeat(17 << 20)
    );
    server.send(&big);
    server.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#);
    let a = server.next();
    assert_eq!(
        (&a["id"], a["error"]["code"].as_i64()),
        (&json!(7), Some(-32600)),
        "{a}"
    );
    assert_eq!(server.next()["id"], 8);
    server.ends_cleanly();
    assert!(!t.ws().join("big.txt").exists());

    // HTTP: a clear 4xx with a JSON-RPC error body
    let server = HttpChild::start(&t.ws(), &[]);
    let auth = format!("Authorization: Bearer {}", server.token.clone().unwrap());
    let r = super::support::raw_http(
        &server.addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}\r\nMCP-Protocol-Version: 2025-11-25\r\n",
            server.addr
        ),
        nested_200().as_bytes(),
    );
    assert_eq!(r.status, 400, "{r:?}");
    let a: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(
        (&a["id"], a["error"]["code"].as_i64()),
        (&json!(5), Some(-32600)),
        "{a}"
    );
    // the nested call never ran
    assert!(audited(&t.ws()).iter().all(|r| r["call_id"] != "5"));
}

#[test]
fn batch_jsonrpc_93_a_batch_is_refused_whole_and_nothing_in_it_runs() {
    let t = workspace();
    let server = HttpChild::start(&t.ws(), &[]);
    let auth = format!("Authorization: Bearer {}", server.token.clone().unwrap());
    let host = server.addr.clone();
    let init = post_mcp(&server.addr, &host, &[&auth], &initialize());
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("Mcp-Session-Id: {}", init.header("mcp-session-id").unwrap());
    let batch = json!([
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "list_dir", "arguments": {"path": "."}}},
        {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "ok.txt"}}}
    ]);
    for body in [batch, json!([])] {
        for headers in [
            // in an initialized 2025-11-25 session
            vec![
                auth.as_str(),
                session.as_str(),
                "MCP-Protocol-Version: 2025-11-25",
            ],
            // stateless, 2026-07-28
            vec![auth.as_str(), "MCP-Protocol-Version: 2026-07-28"],
        ] {
            let r = post_mcp(&server.addr, &host, &headers, &body);
            assert_eq!(r.status, 400, "{body}: {r:?}");
            let a: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(
                (a["id"].clone(), a["error"]["code"].as_i64()),
                (Value::Null, Some(-32600)),
                "{a}"
            );
            assert!(
                a["error"]["message"].as_str().unwrap().contains("batch"),
                "{a}"
            );
        }
    }
    // neither call ran or was audited: a call sent alone afterwards is the only record
    let alone = json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "ok.txt"}}});
    let r = post_mcp(
        &server.addr,
        &host,
        &[&auth, &session, "MCP-Protocol-Version: 2025-11-25"],
        &alone,
    );
    assert_eq!(r.status, 200, "{r:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let records = loop {
        let records = audited(&t.ws());
        if !records.is_empty() || std::time::Instant::now() > deadline {
            break records;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let ids: Vec<&Value> = records.iter().map(|r| &r["call_id"]).collect();
    assert_eq!(ids, [&json!("13")]);
}

/// limits-timeout-28 and offset-overflow-83 (numeric_limits), over the wire: a number no
/// 64-bit float holds (`1e309`, `-1e400`) is valid JSON text that serde_json will not read;
/// the request still gets its one answer, with its id (wherever the id stands) and a message
/// saying what to send, and the server keeps serving.
#[test]
fn a_number_past_a_float_gets_an_answer_with_its_id() {
    let t = workspace();
    let mut server = StdioServer::initialized(&t.ws());
    for (line, id) in [
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"ok.txt","offset":1e309}}}"#,
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_file","arguments":{"path":"ok.txt","limit":-1e400}},"id":"k-6"}"#,
            json!("k-6"),
        ),
    ] {
        server.send(line);
        let a = server.next();
        assert_eq!(
            (&a["id"], a["error"]["code"].as_i64()),
            (&id, Some(-32602)),
            "{a}"
        );
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("larger than a 64-bit float holds"),
            "{a}"
        );
    }
    server.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(server.next()["id"], 7);
    server.ends_cleanly();
}
