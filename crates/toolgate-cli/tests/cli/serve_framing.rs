//! Every request `toolgate serve` receives gets one answer, and the right one: the malformed
//! JSON-RPC table over stdio and over HTTP, and one id in flight at a time per session (a
//! request reusing it is refused, the first one answers as normal).

use super::mcp::{self, call, HttpServe, StdioServe};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A message, the JSON-RPC error code it gets, and the id the error carries.
fn table() -> Vec<(String, i64, Value)> {
    let deep = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"ok.txt","x":{}"x"{}}}}}}}"#,
            r#"{"a":"#.repeat(levels),
            "}".repeat(levels)
        )
    };
    let long_id = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
        "i".repeat(257)
    );
    let n = Value::Null;
    vec![
        // not one JSON value: -32700
        ("{".into(), -32700, n.clone()),
        ("not json at all".into(), -32700, n.clone()),
        (r#"{"jsonrpc":"2.0","id":3,"method":"ping"} trailing"#.into(), -32700, n.clone()),
        (r#"{"jsonrpc":"2.0","id":3,"method":"ping"}{"jsonrpc":"2.0","id":4,"method":"ping"}"#.into(), -32700, n.clone()),
        (r#"{"jsonrpc":"2.0","id":3,"method":"ping",}"#.into(), -32700, n.clone()),
        (r#"{"jsonrpc":"2.0","id":3,"method":"p\ud800"}"#.into(), -32700, n.clone()),
        // not a request object: -32600
        ("[]".into(), -32600, n.clone()),
        (r#"[{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":"."}}}]"#.into(), -32600, n.clone()),
        ("42".into(), -32600, n.clone()),
        ("{}".into(), -32600, n.clone()),
        (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#.into(), -32600, json!(3)),
        (r#"{"id":3,"method":"ping"}"#.into(), -32600, json!(3)),
        (r#"{"jsonrpc":"2.0","id":3,"method":7}"#.into(), -32600, json!(3)),
        (r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}"#.into(), -32600, json!(3)),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.into(), -32600, n.clone()),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.into(), -32600, n.clone()),
        (r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#.into(), -32600, n.clone()),
        (r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#.into(), -32600, n.clone()),
        (long_id, -32600, n.clone()),
        (deep(200), -32600, json!(5)),
        (deep(100_000), -32600, json!(5)),
        // the params of a known method with the wrong types: -32602
        (r#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":5,"arguments":{}}}"#.into(), -32602, json!("n")),
        (r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"read_file","arguments":[1]}}"#.into(), -32602, json!("a")),
        (r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"read_file","arguments":"{\"path\":\"ok.txt\"}"}}"#.into(), -32602, json!("s")),
        (r#"{"jsonrpc":"2.0","id":"p","method":"tools/call"}"#.into(), -32602, json!("p")),
        (r#"{"jsonrpc":"2.0","id":"q","method":"tools/list","params":[1]}"#.into(), -32602, json!("q")),
    ]
}

/// Answered by the handler (HTTP 200): the method exists, its params do not fit.
fn misread_table() -> Vec<(String, i64, Value)> {
    vec![
        (r#"{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"loudest"}}"#.into(), -32602, json!("l")),
        (r#"{"jsonrpc":"2.0","id":"u","method":"vendor/unknown","params":{}}"#.into(), -32601, json!("u")),
    ]
}

#[test]
fn malformed_messages_over_stdio_each_get_their_error_and_the_session_goes_on() {
    let t = mcp::workspace();
    let mut s = StdioServe::start(&mcp::ws(&t), &[], &[]);
    s.handshake(json!({}));
    for (i, (line, code, id)) in table().into_iter().chain(misread_table()).enumerate() {
        s.send_line(line.as_bytes());
        let a = s.recv();
        let shown = &line[..line.len().min(100)];
        assert_eq!(a["jsonrpc"], "2.0", "{shown}: {a}");
        assert_eq!(
            (a["error"]["code"].as_i64(), &a["id"]),
            (Some(code), &id),
            "{shown}: {a}"
        );
        assert!(a["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        // still serving: a probe after each
        s.send(&call(
            format!("probe-{i}"),
            "read_file",
            json!({"path": "ok.txt"}),
        ));
        let probe = s.recv();
        assert_eq!(probe["id"], format!("probe-{i}"), "{shown}: {probe}");
        assert!(probe["result"].is_object(), "{probe}");
    }
    // a line over the 16 MiB cap is answered with its id, found at its end
    let big = format!(
        r#"{{"method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"big.txt","content":"{}"}}}},"jsonrpc":"2.0","id":"big"}}"#,
        "x".repeat(17 << 20)
    );
    s.send_line(big.as_bytes());
    let a = s.recv();
    assert_eq!(
        (a["error"]["code"].as_i64(), &a["id"]),
        (Some(-32600), &json!("big")),
        "{a}"
    );
    assert!(!mcp::ws(&t).join("big.txt").exists());
    assert!(s.finish().success());
}

#[test]
fn malformed_messages_over_http_get_400_with_their_json_rpc_error() {
    let t = mcp::workspace();
    let server = HttpServe::start(&mcp::ws(&t), &[], &[], false);
    let session = server.session(json!({}));
    let h: Vec<&str> = session.iter().map(String::as_str).collect();
    for (body, code, id) in table() {
        let shown = &body[..body.len().min(100)];
        for headers in [&h[..], &["MCP-Protocol-Version: 2025-11-25"][..]] {
            let r = server.post(body.as_bytes(), headers);
            assert_eq!(r.status, 400, "{shown}: {r:?}");
            assert_eq!(r.header("content-type"), Some("application/json"), "{r:?}");
            let a: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(
                (a["error"]["code"].as_i64(), &a["id"]),
                (Some(code), &id),
                "{shown}: {a}"
            );
        }
    }
    for (body, code, id) in misread_table() {
        let r = server.post(body.as_bytes(), &h);
        let a = r.json();
        assert_eq!(
            (a["error"]["code"].as_i64(), &a["id"]),
            (Some(code), &id),
            "{body}: {a}"
        );
    }
    // the session is still served
    let r = server.post(
        call(1, "read_file", json!({"path": "ok.txt"}))
            .to_string()
            .as_bytes(),
        &h,
    );
    assert!(r.json()["result"].is_object(), "{r:?}");
    // and none of the refused calls ran (the read's record is written after its answer)
    let tools: Vec<Value> = mcp::audit_at_least(&mcp::ws(&t), 1)
        .iter()
        .map(|r| r["tool"].clone())
        .collect();
    assert_eq!(tools, [json!("read_file")]);
}

#[test]
fn a_reused_id_in_flight_is_refused_over_stdio_and_the_first_call_answers() {
    let t = mcp::workspace();
    let ws = mcp::ws(&t);
    let mut s = StdioServe::start(&ws, &[], &[]);
    s.handshake(json!({}));
    for id in [json!(7), json!("seven"), json!(-1)] {
        s.send(&call(
            id.clone(),
            "run_shell",
            json!({"command": "sleep 1; echo first"}),
        ));
        std::thread::sleep(Duration::from_millis(200));
        // three more with the same id while it runs
        for _ in 0..3 {
            s.send(&call(
                id.clone(),
                "write_file",
                json!({"path": "dup.txt", "content": "x"}),
            ));
        }
        for _ in 0..3 {
            let refused = s.recv();
            assert_eq!(
                (&refused["id"], refused["error"]["code"].as_i64()),
                (&id, Some(-32600)),
                "{refused}"
            );
            assert!(
                refused["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("in flight"),
                "{refused}"
            );
        }
        let first = s.recv();
        assert_eq!(first["id"], id, "{first}");
        assert_eq!(first["result"]["isError"], false, "{first}");
        assert!(
            first["result"]["structuredContent"]["stdout"]
                .as_str()
                .unwrap()
                .contains("first"),
            "{first}"
        );
        // once answered, the id is the pipeline's to refuse: a call id is used once
        s.send(&call(id.clone(), "read_file", json!({"path": "ok.txt"})));
        let again = s.recv();
        assert_eq!(again["id"], id);
        assert!(again.to_string().contains("duplicate_call_id"), "{again}");
    }
    assert!(!ws.join("dup.txt").exists(), "a refused request ran");
    // cancelling a running call still works
    s.send(&call(20, "run_shell", json!({"command": "sleep 30"})));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}}));
    s.send(&call(21, "read_file", json!({"path": "ok.txt"})));
    assert_eq!(s.recv()["id"], 21, "no answer for the cancelled request");
    assert!(s.finish().success());
    let records = mcp::audit(&ws);
    let of = |id: &str, tool: &str| {
        records
            .iter()
            .filter(|r| r["call_id"] == id && r["tool"] == tool)
            .map(|r| r["outcome"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    for id in ["7", "seven", "-1"] {
        assert_eq!(of(id, "run_shell"), ["ok"], "{id}");
        assert!(of(id, "write_file").is_empty(), "{id}");
    }
    let cancelled = records.iter().find(|r| r["call_id"] == "20").unwrap();
    assert_eq!(cancelled["error_kind"], "cancelled", "{cancelled}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_reused_id_in_flight_is_refused_over_http_and_the_first_call_answers() {
    let t = mcp::workspace();
    let ws = mcp::ws(&t);
    let server = std::sync::Arc::new(HttpServe::start(&ws, &[], &[], false));
    let session = server.session(json!({}));
    for id in [json!(7), json!("seven")] {
        let first = std::thread::spawn({
            let (server, session, id) = (server.clone(), session.clone(), id.clone());
            move || {
                let h: Vec<&str> = session.iter().map(String::as_str).collect();
                let body = call(id, "run_shell", json!({"command": "sleep 1; echo first"}));
                server.post(body.to_string().as_bytes(), &h)
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        let h: Vec<&str> = session.iter().map(String::as_str).collect();
        for _ in 0..3 {
            let started = Instant::now();
            let body = call(
                id.clone(),
                "write_file",
                json!({"path": "dup.txt", "content": "x"}),
            );
            let r = server.post(body.to_string().as_bytes(), &h);
            let a = r.json();
            assert_eq!(
                (&a["id"], a["error"]["code"].as_i64()),
                (&id, Some(-32600)),
                "{r:?}"
            );
            assert!(
                started.elapsed() < Duration::from_millis(900),
                "the refusal waited"
            );
        }
        let first = first.join().unwrap();
        assert_eq!(first.status, 200, "{first:?}");
        let a = first.json();
        assert_eq!(a["id"], id, "{a}");
        assert!(
            a["result"]["structuredContent"]["stdout"]
                .as_str()
                .unwrap()
                .contains("first"),
            "{a}"
        );
    }
    assert!(!ws.join("dup.txt").exists(), "a refused request ran");
    let server = std::sync::Arc::into_inner(server).unwrap();
    assert!(server.stop().success());
    let records = mcp::audit(&ws);
    assert_eq!(
        records
            .iter()
            .filter(|r| r["tool"] == "run_shell" && r["outcome"] == "ok")
            .count(),
        2
    );
    assert!(records.iter().all(|r| r["tool"] != "write_file"));
}
