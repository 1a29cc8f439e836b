//! The body of the `jsonrpc_frame` fuzz target: `toolgate_mcp::jsonrpc::check` (the framing
//! both MCP transports run before rmcp reads a message) and `IdScan` (the id of a message too
//! large to keep) on arbitrary bytes and on messages built from the input.
//!
//! This file depends only on `toolgate-mcp`, `rmcp` and `serde_json`, so the same code runs
//! under libFuzzer (`fuzz_targets/jsonrpc_frame.rs`) and in the stable test suite of
//! toolgate-mcp (`crates/toolgate-mcp/tests/cases/jsonrpc_fuzz.rs`), which replays every saved
//! input in `fuzz/regressions/jsonrpc_frame/` and a bounded pseudo-random run.
//!
//! What is checked for every input, as it is and as a message built from it:
//!
//! 1. nothing panics, and two checks agree
//! 2. a refusal is a JSON-RPC error response: valid JSON, `"jsonrpc": "2.0"`, the `id` member
//!    always there (the refused request's id or `null`), a code among -32700, -32600, -32602
//! 3. what passes nests at most `MAX_DEPTH` levels, and its id, if any, is a string of at most
//!    `MAX_ID_BYTES` bytes or an integer
//! 4. no request gets past unseen: when rmcp reads the bytes as a request, the check passed it
//!    as a request with the same id, or refused it; a passed notification or response is never
//!    a request to rmcp
//! 5. `IdScan`, fed the bytes in pieces whose sizes come from the input, never finds an id
//!    other than the check's, and finds the check's id whenever the text has no escapes

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use toolgate_mcp::jsonrpc::{check, Frame, IdScan, MAX_DEPTH, MAX_ID_BYTES};

/// Runs every check on the input and on a message built from it.
pub fn run(data: &[u8]) {
    check_bytes(data);
    check_bytes(&build(data));
}

/// Checks 1 to 5 on `bytes`.
pub fn check_bytes(bytes: &[u8]) {
    let checked = check(bytes);
    assert_eq!(
        checked,
        check(bytes),
        "not deterministic: {:?}",
        show(bytes)
    );
    let id = match &checked {
        Ok(Frame::Request { id, .. }) => Some(id.clone()),
        Ok(_) => None,
        Err(refusal) => {
            let reply: serde_json::Value = serde_json::from_slice(&refusal.to_json())
                .unwrap_or_else(|e| panic!("a refusal is not JSON ({e}): {}", show(bytes)));
            assert_eq!(reply["jsonrpc"], "2.0");
            let code = reply["error"]["code"].as_i64();
            assert!(
                matches!(code, Some(-32700 | -32600 | -32602)),
                "{code:?} for {}",
                show(bytes)
            );
            let sent = reply.get("id").expect("the id member is always there");
            match &refusal.id {
                None => assert!(sent.is_null()),
                Some(id) => assert_eq!(*sent, serde_json::to_value(id).unwrap()),
            }
            refusal.id.clone()
        }
    };
    if checked.is_ok() {
        let depth = depth(bytes);
        assert!(depth <= MAX_DEPTH, "{depth} levels passed: {}", show(bytes));
    }
    if let Some(RequestId::String(s)) = &id {
        assert!(s.len() <= MAX_ID_BYTES, "an id of {} bytes", s.len());
    }
    if let Ok(JsonRpcMessage::Request(r)) = serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        match &checked {
            Ok(Frame::Request { id, .. }) => assert_eq!(*id, r.id, "{}", show(bytes)),
            Ok(other) => panic!(
                "rmcp reads a request the check passed as {other:?}: {}",
                show(bytes)
            ),
            Err(_) => {}
        }
    }
    let mut scan = IdScan::new();
    let mut rest = bytes;
    let mut piece = 1 + bytes.first().map_or(0, |b| usize::from(*b % 7));
    while !rest.is_empty() {
        let (now, later) = rest.split_at(piece.min(rest.len()));
        scan.feed(now);
        rest = later;
        piece = piece % 11 + 1;
    }
    let scanned = scan.finish();
    if let (Some(found), Some(id)) = (&scanned, &id) {
        assert_eq!(found, id, "the scan found another id: {}", show(bytes));
    }
    if id.is_some() && !bytes.contains(&b'\\') {
        assert_eq!(scanned, id, "the scan missed the id: {}", show(bytes));
    }
}

/// The deepest nesting of valid JSON text (strings skipped).
fn depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Pieces a message is built of, chosen by the input's bytes.
const PIECES: &[&str] = &[
    r#"{"jsonrpc":"2.0","#,
    r#""jsonrpc":"1.0","#,
    r#""id":"#,
    r#""method":"tools/call","#,
    r#""method":"initialize","#,
    r#""method":"ping","#,
    r#""params":"#,
    r#""name":"#,
    r#""arguments":"#,
    r#""result":"#,
    r#""error":{"code":-1,"message":"m"},"#,
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "1",
    "-7",
    "2.5",
    "1e3",
    "18446744073709551616",
    "null",
    "true",
    r#""a""#,
    r#""i\u0064""#,
    r#""req-\"1\"""#,
    " ",
    r#"{"a":"#,
    r#""x""#,
];

/// A message built from `data`: most bytes pick a piece, some repeat the previous one (for
/// deep nesting and long ids), and the result is closed into an object.
pub fn build(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut last = "";
    for &b in data.iter().take(512) {
        if b >= 0xF0 {
            for _ in 0..(usize::from(b & 0x0F) * 8) {
                out.extend_from_slice(last.as_bytes());
            }
            continue;
        }
        let piece = PIECES[usize::from(b) % PIECES.len()];
        out.extend_from_slice(piece.as_bytes());
        last = piece;
    }
    out.extend_from_slice(br#""z":0}"#);
    out
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 300 {
        let head: String = text.chars().take(300).collect();
        format!("{head}... ({} bytes)", bytes.len())
    } else {
        text.into_owned()
    }
}
