//! [`LineTransport`] on in-memory pipes: what it hands to rmcp, what it answers itself, and
//! how it ends.

use super::*;
use rmcp::model::JsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, DuplexStream};

const MAX: usize = 4096;

fn pipes() -> (
    DuplexStream,
    tokio::io::Lines<BufReader<DuplexStream>>,
    LineTransport<DuplexStream>,
) {
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let t = LineTransport::new(server_in, server_out, MAX);
    (client_in, BufReader::new(client_out).lines(), t)
}

async fn answer(lines: &mut tokio::io::Lines<BufReader<DuplexStream>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("a line");
    serde_json::from_str(&line).unwrap()
}

fn is_ping(m: &RxJsonRpcMessage<RoleServer>, id: i64) -> bool {
    matches!(m, JsonRpcMessage::Request(r) if r.id == rmcp::model::RequestId::Number(id))
}

#[tokio::test]
async fn every_line_rmcp_cannot_take_is_answered_and_the_next_one_still_read() {
    let (mut input, mut output, mut t) = pipes();
    let over = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write_file","arguments":{{"content":"{}"}}}},"id":"big-1"}}"#,
        "x".repeat(MAX)
    );
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"ok.txt","x":{}1{}}}}}}}"#,
        r#"{"a":"#.repeat(200),
        "}".repeat(200)
    );
    let cases: Vec<(String, Value)> = vec![
        ("{not json".into(), json!({"code": -32700, "id": null})),
        (deep, json!({"code": -32600, "id": 5})),
        (over, json!({"code": -32600, "id": "big-1"})),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.into(),
            json!({"code": -32600, "id": null}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":3}}"#.into(),
            json!({"code": -32602, "id": 7}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":5}}"#.into(),
            json!({"code": -32602, "id": 8}),
        ),
    ];
    for (line, _) in &cases {
        input.write_all(line.as_bytes()).await.unwrap();
        input.write_all(b"\r\n\n   \n").await.unwrap();
    }
    input
        .write_all(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_secs(5), t.receive())
        .await
        .unwrap()
        .unwrap();
    assert!(is_ping(&m, 1), "{m:?}");
    for (line, want) in &cases {
        let a = answer(&mut output).await;
        assert_eq!(a["jsonrpc"], "2.0");
        assert_eq!(
            json!({"code": a["error"]["code"], "id": a["id"]}),
            *want,
            "{}: {a}",
            &line[..line.len().min(80)]
        );
    }
    // a last line without its newline is read, then the end
    input
        .write_all(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await
        .unwrap();
    drop(input);
    assert!(is_ping(&t.receive().await.unwrap(), 2));
    assert!(t.receive().await.is_none());
    // answers still go out until close, which writes what was queued
    t.send(JsonRpcMessage::error(
        rmcp::model::ErrorData::new(ErrorCode::INTERNAL_ERROR, "last", None),
        Some(rmcp::model::RequestId::Number(2)),
    ))
    .await
    .unwrap();
    t.close().await.unwrap();
    assert_eq!(answer(&mut output).await["error"]["message"], "last");
}

#[tokio::test]
async fn a_reader_that_goes_away_ends_the_session() {
    let (mut input, output, mut t) = pipes();
    input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    assert!(is_ping(&t.receive().await.unwrap(), 1));
    drop(output);
    // the write fails; input is still open, yet the session ends
    let _ = t
        .send(JsonRpcMessage::error(
            rmcp::model::ErrorData::new(ErrorCode::INTERNAL_ERROR, "x", None),
            Some(rmcp::model::RequestId::Number(1)),
        ))
        .await;
    let ended = tokio::time::timeout(Duration::from_secs(5), t.receive()).await;
    assert!(matches!(ended, Ok(None)), "the session did not end");
    // answers still coming are dropped, not errors that would stop rmcp's drain
    assert!(t
        .send(JsonRpcMessage::error(
            rmcp::model::ErrorData::new(ErrorCode::INTERNAL_ERROR, "x", None),
            None,
        ))
        .await
        .is_ok());
    t.close().await.unwrap();
    drop(input);
}

#[test]
fn a_tools_call_idempotency_key_reaches_rmcp_in_meta() {
    let line = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},"idempotencyKey":"K-1"}}"#;
    let Decoded::Message(m) = decode_line(line) else {
        panic!("the call is handed to rmcp");
    };
    let v = serde_json::to_value(&*m).unwrap();
    assert_eq!(
        v["params"]["_meta"][crate::idempotency::LIFTED_KEY],
        json!("K-1"),
        "{v}"
    );
    // a key on another method is not moved (rmcp drops it)
    let line = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"idempotencyKey":"K-1"}}"#;
    let Decoded::Message(m) = decode_line(line) else {
        panic!("the ping is handed to rmcp");
    };
    let v = serde_json::to_value(&*m).unwrap();
    assert!(v["params"].get("_meta").is_none(), "{v}");
}
