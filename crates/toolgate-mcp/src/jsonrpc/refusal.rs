//! [`Refusal`]: the JSON-RPC error answering a message toolgate will not hand to rmcp.

use rmcp::model::{ErrorCode, RequestId};
use serde::Serialize;

/// A JSON-RPC 2.0 error response for a message that was refused before rmcp read it: its
/// code (`-32700` parse error, `-32600` invalid request, `-32602` invalid params, `-32000`
/// server busy), a message for whoever wrote the request (what was wrong and what to send
/// instead), and the request's id when it could be read (JSON-RPC 2.0 §5: `"id": null`
/// otherwise, which is also what MCP clients that require the member accept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// What was wrong and what to send instead.
    pub message: String,
    /// The id of the refused request, when it could be read.
    pub id: Option<RequestId>,
}

/// Implementation-defined server error (JSON-RPC 2.0 §5.1 reserves -32000 to -32099): the
/// request was well formed but a limit refused it.
pub const SERVER_BUSY: ErrorCode = ErrorCode(-32000);

impl Refusal {
    /// A refusal with `code`, `message` and `id`.
    pub fn new(code: ErrorCode, message: impl Into<String>, id: Option<RequestId>) -> Self {
        Refusal {
            code,
            message: message.into(),
            id,
        }
    }

    /// `-32600` for a message over `max` bytes; `id` when it could be found in the message.
    pub fn too_large(max: usize, id: Option<RequestId>) -> Self {
        Refusal::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "the message is over {max} bytes, the most one JSON-RPC message may have: \
                 send less (a large file in parts, for example)"
            ),
            id,
        )
    }

    /// The error response as JSON text, `{"jsonrpc":"2.0","id":ID|null,"error":{...}}`.
    pub fn to_json(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Wire<'a> {
            jsonrpc: &'static str,
            id: &'a Option<RequestId>,
            error: Error<'a>,
        }
        #[derive(Serialize)]
        struct Error<'a> {
            code: i32,
            message: &'a str,
        }
        let wire = Wire {
            jsonrpc: "2.0",
            id: &self.id,
            error: Error {
                code: self.code.0,
                message: &self.message,
            },
        };
        serde_json::to_vec(&wire).expect("an error response serializes")
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code.0, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_id_is_null_when_unknown_and_echoed_when_known() {
        let r = Refusal::new(ErrorCode::PARSE_ERROR, "bad", None);
        let v: serde_json::Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "bad"}})
        );
        let r = Refusal::new(
            ErrorCode::INVALID_PARAMS,
            "x",
            Some(RequestId::String("a\"b".into())),
        );
        let v: serde_json::Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(v["id"], "a\"b");
        assert_eq!(v["error"]["code"], -32602);
    }
}
