//! [`super::check`] on a table of messages: what passes, and for what fails, the code and
//! whether the id comes back.

use super::{check, Frame, Method, MAX_DEPTH, MAX_ID_BYTES};
use pretty_assertions::assert_eq;
use rmcp::model::{ClientJsonRpcMessage, RequestId};

fn nested(levels: usize) -> String {
    // `levels` objects inside `arguments` (level 3 is `arguments` itself)
    let v = format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
    format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"read_file","arguments":{v}}}}}"#
    )
}

#[test]
fn well_formed_messages_pass_and_rmcp_reads_them() {
    for (text, want) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_string(),
            Frame::Request { id: RequestId::Number(1), method: Method::Initialize },
        ),
        (
            r#"{"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}},"jsonrpc":"2.0","id":"r-7"}"#.into(),
            Frame::Request { id: RequestId::String("r-7".into()), method: Method::ToolsCall },
        ),
        (
            r#"{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"x","arguments":null}}"#.into(),
            Frame::Request { id: RequestId::Number(-3), method: Method::ToolsCall },
        ),
        (r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#.into(), Frame::Request { id: RequestId::Number(0), method: Method::Other }),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#.into(), Frame::Request { id: RequestId::Number(1), method: Method::Other }),
        (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(), Frame::Notification),
        (r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#.into(), Frame::Notification),
        (r#"{"jsonrpc":"2.0","id":9,"result":{}}"#.into(), Frame::Response),
        (r#"{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}"#.into(), Frame::Response),
        (format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "i".repeat(MAX_ID_BYTES)), Frame::Request { id: RequestId::String("i".repeat(MAX_ID_BYTES).into()), method: Method::Other }),
        (nested(MAX_DEPTH - 2), Frame::Request { id: RequestId::Number(5), method: Method::ToolsCall }),
        (format!(" \n\t{}\r\n ", r#"{"jsonrpc":"2.0","id":2,"method":"ping","x":{"y":[1,2,{"z":null}]}}"#), Frame::Request { id: RequestId::Number(2), method: Method::Other }),
    ] {
        assert_eq!(check(text.as_bytes()), Ok(want), "{text}");
        serde_json::from_str::<ClientJsonRpcMessage>(&text)
            .unwrap_or_else(|e| panic!("rmcp cannot read what passed: {text}: {e}"));
    }
}

#[test]
fn every_fault_gets_its_code_and_the_id_when_it_could_be_read() {
    let deep = nested(MAX_DEPTH - 1);
    let very_deep = nested(100_000);
    let long_id = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
        "i".repeat(MAX_ID_BYTES + 1)
    );
    let id5 = Some(RequestId::Number(5));
    let none: Option<RequestId> = None;
    for (text, code, id) in [
        // -32700: not one JSON value
        ("", -32700, none.clone()),
        // -32602: a number past a 64-bit float, with the id kept wherever it is
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_shell","arguments":{"command":"true","timeout_ms":1e309}}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"timeout_ms":-1e400}},"id":5}"#,
            -32602,
            id5.clone(),
        ),
        ("{", -32700, none.clone()),
        ("not json", -32700, none.clone()),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"} trailing"#,
            -32700,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
            -32700,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping",}"#,
            -32700,
            none.clone(),
        ),
        (
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}",
            -32700,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"p\ud800"}"#,
            -32700,
            none.clone(),
        ),
        // -32600: not a single request object
        ("[]", -32600, none.clone()),
        (
            r#"[{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":"."}}},{"jsonrpc":"2.0","id":12,"method":"ping"}]"#,
            -32600,
            none.clone(),
        ),
        ("5", -32600, none.clone()),
        ("\"text\"", -32600, none.clone()),
        ("null", -32600, none.clone()),
        ("{}", -32600, none.clone()),
        // ids of the wrong type or size
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":[5],"method":"ping"}"#,
            -32600,
            none.clone(),
        ),
        (long_id.as_str(), -32600, none.clone()),
        // members twice, nesting, version
        (
            r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}"#,
            -32600,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/list"}"#,
            -32600,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":5,"method":"ping"}"#,
            -32600,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{},"params":{}}"#,
            -32600,
            id5.clone(),
        ),
        (deep.as_str(), -32600, id5.clone()),
        (very_deep.as_str(), -32600, id5.clone()),
        (
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            -32600,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":2.0,"id":5,"method":"ping"}"#,
            -32600,
            id5.clone(),
        ),
        (r#"{"id":5,"method":"ping"}"#, -32600, id5.clone()),
        // kinds
        (
            r#"{"jsonrpc":"2.0","id":5,"method":5}"#,
            -32600,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","method":{"x":1},"params":"bar"}"#,
            -32600,
            none.clone(),
        ),
        (r#"{"jsonrpc":"2.0","id":5}"#, -32600, none.clone()),
        (
            r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
            -32600,
            none.clone(),
        ),
        (r#"{"jsonrpc":"2.0","result":{}}"#, -32600, none.clone()),
        (
            r#"{"jsonrpc":"2.0","id":5,"error":"no"}"#,
            -32600,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}"#,
            -32600,
            id5.clone(),
        ),
        // -32602: params of the wrong shape
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":5}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":"bar"}"#,
            -32602,
            none.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call"}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":["read_file"]}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":null}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":[1]}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}"#,
            -32602,
            id5.clone(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":7}}"#,
            -32602,
            id5.clone(),
        ),
    ] {
        let refusal = check(text.as_bytes()).expect_err(text);
        assert_eq!(
            (refusal.code.0, refusal.id.clone()),
            (code, id),
            "{text}: {refusal}"
        );
        assert!(!refusal.message.is_empty());
        let reply: serde_json::Value = serde_json::from_slice(&refusal.to_json()).unwrap();
        assert!(
            reply.get("id").is_some(),
            "the id member is always there: {reply}"
        );
    }
}

#[test]
fn a_string_id_is_kept_exactly() {
    let text = r#"{"jsonrpc":"2.0","id":"a\"b\u00e9\n","method":"ping"}"#;
    assert_eq!(
        check(text.as_bytes()),
        Ok(Frame::Request {
            id: RequestId::String("a\"b\u{e9}\n".into()),
            method: Method::Other
        })
    );
}
