//! A request for one of MCP's own methods that rmcp could not read with that method's params
//! reaches the handler as a custom request (rmcp falls back to one rather than fail); it is
//! answered `-32602` (invalid params) saying what did not fit, not `-32601` (method not
//! found), since the method exists. Requests for methods the request's protocol revision does
//! not define stay `-32601`: those MCP never had, and on 2026-07-28 those it removed
//! (SEP-2575: `initialize`, `logging/setLevel`, `resources/subscribe`,
//! `resources/unsubscribe`).

// logging/setLevel: deprecated by SEP-2577, still what 2025-11-25 clients use.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CustomRequest, ErrorCode, ErrorData, InitializeRequestParams,
    PaginatedRequestParams, SetLevelRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The client-to-server request methods of MCP (revisions 2025-11-25 and 2026-07-28).
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/call",
    "tools/list",
    "logging/setLevel",
    "completion/complete",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
];

/// The methods revision 2026-07-28 removed (SEP-2575).
const REMOVED_2026_07_28: &[&str] = &[
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The error for a custom request: `-32602` with serde's reason for one of MCP's methods in
/// the request's revision (`stateless`: 2026-07-28 or later), `-32601` otherwise.
pub fn error(request: &CustomRequest, stateless: bool) -> ErrorData {
    let method = request.method.as_str();
    if !MCP_METHODS.contains(&method) || (stateless && REMOVED_2026_07_28.contains(&method)) {
        return ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "method {} is not served here",
                toolgate_core::sanitize::clean_output(method)
            ),
            None,
        );
    }
    let params = request.params.clone().unwrap_or(Value::Null);
    let why = match method {
        "tools/call" => reason::<CallToolRequestParams>(params),
        "tools/list" => reason::<PaginatedRequestParams>(params),
        "logging/setLevel" => reason::<SetLevelRequestParams>(params),
        "initialize" => reason::<InitializeRequestParams>(params),
        _ => None,
    };
    let message = match why {
        Some(why) => format!("the params of {method} do not fit it: {why}"),
        None => format!("the params of {method} do not have the shape the method takes"),
    };
    ErrorData::new(ErrorCode::INVALID_PARAMS, message, None)
}

fn reason<T: DeserializeOwned>(params: Value) -> Option<String> {
    serde_json::from_value::<T>(params)
        .err()
        .map(|e| quoted_cut(&e.to_string()))
}

/// The most characters of a value serde quotes (`` unknown variant `...` ``) that the error
/// repeats.
const QUOTED_CHARS: usize = 64;

/// serde's message with each value it quotes between backticks cut to [`QUOTED_CHARS`]
/// characters (and its size), its controls and invisible characters escaped: the value is the
/// client's, as long as it sent it, and the rest of the message (`expected one of `debug`,
/// `info`, ...`) is what says what to send.
fn quoted_cut(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut parts = message.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        out.push('`');
        // the parts 0, 2, ... after the first are inside backticks
        if i % 2 == 0 {
            out.push_str(&crate::catalog::convert::cut(part, QUOTED_CHARS));
        } else {
            out.push_str(part);
        }
    }
    toolgate_core::sanitize::clean_output(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn custom(method: &str, params: Value) -> CustomRequest {
        CustomRequest::new(method.to_string(), Some(params))
    }

    #[test]
    fn mcp_methods_get_invalid_params_others_method_not_found() {
        let e = error(&custom("logging/setLevel", json!({"level": "loud"})), false);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("loud"), "{}", e.message);
        let e = error(&custom("tools/call", json!({"name": 5})), false);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        // the value the client sent is quoted cut, the values it may send whole
        let e = error(
            &custom("logging/setLevel", json!({"level": "k".repeat(100_000)})),
            false,
        );
        assert!(e.message.len() < 600, "{}", e.message);
        assert!(e.message.contains("(100000 bytes)"), "{}", e.message);
        assert!(e.message.contains("`debug`"), "{}", e.message);
        let e = error(
            &custom("logging/setLevel", json!({"level": "\u{1b}[2J"})),
            false,
        );
        assert!(e.message.contains("\\x1b[2J"), "{}", e.message);
        let e = error(&custom("vendor/thing", json!({})), false);
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        // 2026-07-28 removed these
        for m in ["initialize", "logging/setLevel", "resources/subscribe"] {
            assert_eq!(
                error(&custom(m, json!({})), true).code,
                ErrorCode::METHOD_NOT_FOUND
            );
            assert_eq!(
                error(&custom(m, json!({})), false).code,
                ErrorCode::INVALID_PARAMS
            );
        }
        let e = error(&custom("tools/call", json!({"name": 5})), true);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    }
}
