//! Where a `tools/call` carries its idempotency key (see `toolgate_core::ledger`), and who the
//! caller of a stateless request is.
//!
//! A client sends the key in either of two places:
//! - `params.idempotencyKey`, beside `arguments`: the shape of the MCP proposal SEP-3182
//!   ("Request Idempotency"). rmcp's `CallToolRequestParams` has no such field and drops it,
//!   so both transports move it, before rmcp reads the message, into `_meta` under
//!   [`LIFTED_KEY`] ([`lift`]: the stdio reader line by line, the HTTP layer per body);
//! - `_meta["io.toolgate/idempotency-key"]` ([`META_KEY`]), for clients whose SDK cannot add a
//!   field to `params` but can set `_meta`.
//!
//! Both must be strings, and agree when both are sent ([`key_of`]: otherwise JSON-RPC
//! `-32602`); the pipeline then checks the key's length and characters like any input.

use rmcp::model::{ErrorData, RequestMetaObject};
use serde_json::{json, Value};

/// The `_meta` key a client may send its idempotency key under.
pub const META_KEY: &str = "io.toolgate/idempotency-key";
/// The `_meta` key a `params.idempotencyKey` is moved to before rmcp reads the message
/// (internal; a client sends `params.idempotencyKey` or [`META_KEY`]).
pub const LIFTED_KEY: &str = "io.toolgate/params.idempotencyKey";

/// The message `line` (one JSON-RPC message) with a `tools/call`'s `params.idempotencyKey`
/// moved into `params._meta` under [`LIFTED_KEY`]; `None` when there is nothing to move (the
/// common case costs a substring search), or the message is not a `tools/call` with object
/// params and `_meta` (rmcp then answers it as it would have).
pub fn lift(line: &[u8]) -> Option<Vec<u8>> {
    memchr::memmem::find(line, b"\"idempotencyKey\"")?;
    let mut message: Value = serde_json::from_slice(line).ok()?;
    let obj = message.as_object_mut()?;
    if obj.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let params = obj.get_mut("params")?.as_object_mut()?;
    if !params.contains_key("idempotencyKey") {
        return None;
    }
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        return None;
    }
    let key = params.remove("idempotencyKey")?;
    params
        .get_mut("_meta")?
        .as_object_mut()?
        .insert(LIFTED_KEY.to_string(), key);
    serde_json::to_vec(&message).ok()
}

/// The idempotency key a `tools/call` carries in its `_meta` (sent there, or lifted there from
/// `params.idempotencyKey`).
///
/// # Errors
/// JSON-RPC `-32602` when a key is not a string, or the two places hold different keys.
pub fn key_of(meta: &RequestMetaObject) -> Result<Option<String>, ErrorData> {
    let get = |name: &str| -> Result<Option<&str>, ErrorData> {
        match meta.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ErrorData::invalid_params(
                format!(
                    "the idempotency key must be a string, not {}; send a UUID or another key \
                     of letters, digits and - _ . : ~ + / = @",
                    kind(other)
                ),
                None,
            )),
        }
    };
    match (get(LIFTED_KEY)?, get(META_KEY)?) {
        (Some(a), Some(b)) if a != b => Err(ErrorData::invalid_params(
            format!(
                "params.idempotencyKey and _meta[{META_KEY:?}] hold different keys; send the \
                 key once"
            ),
            None,
        )),
        (Some(k), _) | (None, Some(k)) => Ok(Some(k.to_string())),
        (None, None) => Ok(None),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(v: Value) -> RequestMetaObject {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn params_idempotency_key_moves_into_meta() {
        let line = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","arguments":{"to":"a"},"idempotencyKey":"K-1"}}"#;
        let lifted: Value = serde_json::from_slice(&lift(line).unwrap()).unwrap();
        assert_eq!(
            lifted,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "send", "arguments": {"to": "a"},
                "_meta": {LIFTED_KEY: "K-1"}
            }})
        );
        // an existing _meta keeps what it has
        let line = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","_meta":{"progressToken":1},"idempotencyKey":7}}"#;
        let lifted: Value = serde_json::from_slice(&lift(line).unwrap()).unwrap();
        assert_eq!(
            lifted["params"]["_meta"],
            json!({"progressToken": 1, LIFTED_KEY: 7})
        );
    }

    #[test]
    fn everything_else_is_left_for_rmcp() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            // the word inside arguments is an argument, not the key
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"idempotencyKey":"a"}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"other","params":{"idempotencyKey":"a"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"idempotencyKey":"a","_meta":3}}"#,
            br#"{"idempotencyKey" not json"#,
            br#"["idempotencyKey"]"#,
            b"",
        ] {
            assert_eq!(lift(line), None, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn keys_are_read_from_either_place_and_must_agree() {
        assert_eq!(key_of(&meta(json!({}))).unwrap(), None);
        assert_eq!(
            key_of(&meta(json!({META_KEY: "a"}))).unwrap().as_deref(),
            Some("a")
        );
        assert_eq!(
            key_of(&meta(json!({LIFTED_KEY: "b"}))).unwrap().as_deref(),
            Some("b")
        );
        assert_eq!(
            key_of(&meta(json!({LIFTED_KEY: "c", META_KEY: "c"})))
                .unwrap()
                .as_deref(),
            Some("c")
        );
        let e = key_of(&meta(json!({LIFTED_KEY: "c", META_KEY: "d"}))).unwrap_err();
        assert_eq!(e.code.0, -32602);
        assert!(e.message.contains("different keys"), "{}", e.message);
        let e = key_of(&meta(json!({LIFTED_KEY: 42}))).unwrap_err();
        assert!(e.message.contains("not a number"), "{}", e.message);
        let e = key_of(&meta(json!({META_KEY: null}))).unwrap_err();
        assert!(e.message.contains("not null"), "{}", e.message);
    }
}
