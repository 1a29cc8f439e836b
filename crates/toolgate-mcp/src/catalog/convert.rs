//! A resource read's or a prompt get's [`ToolResult`] as its MCP result, or as the JSON-RPC
//! error a client understands.
//!
//! - `resources/read`: each embedded resource block is one of `contents`; a text block (what
//!   finish leaves of a text past the byte limit: a preview whose marker names the
//!   `read_result` handle) is text contents at the requested URI; `_meta["toolgate/truncation"]`
//!   carries the record when the text was cut;
//! - `prompts/get`: the tool's structured content is the `GetPromptResult` (`description`,
//!   `messages`), its strings cleaned by finish like every output;
//! - an error: a resource that is not there is `-32602` with the URI in `data` (SEP-2164);
//!   what the request may not have (denied, refused, malformed, not in the profile) is
//!   `-32602` too, with the message written for the model and `data["toolgate/error"]`; a
//!   failure of the reading itself (a timeout, an upstream down) is `-32603`.

use crate::result::{ERROR_META, TRUNCATION_META};
use rmcp::model::{
    ErrorCode, ErrorData, GetPromptResult, MetaObject, ReadResourceResult, ResourceContents,
};
use serde_json::json;
use toolgate_core::result::render_error;
use toolgate_core::{Content, ErrorKind, ToolResult};

/// The most characters of a URI or a name from a request that an error quotes.
const SHOWN_CHARS: usize = 200;

/// `text`, a URI or a name the client sent, as an error's message and data quote it: its
/// controls, invisible and bidirectional characters escaped as every output's are
/// ([`toolgate_core::sanitize::clean_output`]), and past [`SHOWN_CHARS`] characters cut, with
/// its size (`file:///aaaa... (100008 bytes)`), so an error is never larger than a few KiB
/// whatever was sent.
pub(crate) fn shown(text: &str) -> String {
    toolgate_core::sanitize::clean_output(&cut(text, SHOWN_CHARS)).into_owned()
}

/// `text` cut to `max_chars` characters, followed by `... (N bytes)` with its size when it was
/// longer; borrowed when it was not.
pub(crate) fn cut(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => format!("{}... ({} bytes)", &text[..at], text.len()).into(),
    }
}

/// The `resources/read` result of the call that read `uri`.
///
/// # Errors
/// See the module docs; a successful call that returned no contents is `-32603` (never an
/// empty `contents`, which SEP-2164 forbids).
pub fn to_read_result(uri: &str, result: ToolResult) -> Result<ReadResourceResult, ErrorData> {
    if result.error.is_some() {
        return Err(read_error(uri, &result));
    }
    let mut contents = Vec::with_capacity(result.content.len());
    for block in result.content {
        contents.push(match block {
            Content::Resource { resource } => match resource {
                toolgate_core::ResourceContents::Text {
                    uri,
                    mime_type,
                    text,
                } => ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    meta: None,
                },
                toolgate_core::ResourceContents::Blob {
                    uri,
                    mime_type,
                    blob,
                } => ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    meta: None,
                },
                _ => continue,
            },
            Content::Text { text } => ResourceContents::TextResourceContents {
                uri: uri.to_string(),
                mime_type: Some("text/plain".into()),
                text,
                meta: None,
            },
            _ => continue,
        });
    }
    if contents.is_empty() {
        return Err(ErrorData::internal_error(
            format!("reading {} returned no contents", shown(uri)),
            Some(json!({ "uri": shown(uri) })),
        ));
    }
    let mut out = ReadResourceResult::new(contents);
    if let Some(t) = &result.truncation {
        let mut meta = MetaObject::new();
        meta.insert(TRUNCATION_META.to_string(), json!(t));
        out.meta = Some(meta);
    }
    Ok(out)
}

/// The JSON-RPC error for a read of `uri` that ended with an error result (or did not
/// resolve: the profile does not include the tool).
pub fn read_error(uri: &str, result: &ToolResult) -> ErrorData {
    let uri = shown(uri);
    let mut data = json!({ "uri": uri });
    let Some(e) = &result.error else {
        return ErrorData::internal_error(format!("reading {uri} failed"), Some(data));
    };
    data[ERROR_META] = json!({ "kind": e.kind, "reason": e.reason });
    let message = match e.kind {
        ErrorKind::UnknownTool => format!(
            "resource {uri} is not served to this session: its profile does not include {}, \
             or a rule denies every call of it",
            result.tool
        ),
        _ => render_error(e),
    };
    ErrorData::new(code(e), message, Some(data))
}

/// The JSON-RPC error for a prompt get of `name` that ended with an error result.
pub fn prompt_error(name: &str, result: &ToolResult) -> ErrorData {
    let name = shown(name);
    let mut data = json!({ "name": name });
    let Some(e) = &result.error else {
        return ErrorData::internal_error(format!("getting prompt {name} failed"), Some(data));
    };
    data[ERROR_META] = json!({ "kind": e.kind, "reason": e.reason });
    let message = match e.kind {
        ErrorKind::UnknownTool => format!(
            "prompt {name} is not served to this session: its profile does not include {}, or \
             a rule denies every call of it",
            result.tool
        ),
        _ => render_error(e),
    };
    ErrorData::new(code(e), message, Some(data))
}

/// `-32602` for what the request asked wrongly or may not have (a missing file included),
/// `-32603` for a failure of the reading itself.
fn code(e: &toolgate_core::ToolError) -> ErrorCode {
    let asked_wrongly = matches!(
        e.reason.as_deref(),
        Some(
            "not_found"
                | "not_a_regular_file"
                | "is_a_directory"
                | "unknown_prompt"
                | "resource_quarantined"
        )
    );
    if asked_wrongly {
        return ErrorCode::INVALID_PARAMS;
    }
    match e.kind {
        ErrorKind::Timeout
        | ErrorKind::Cancelled
        | ErrorKind::OutcomeUnknown
        | ErrorKind::ToolFailed
        | ErrorKind::Internal => ErrorCode::INTERNAL_ERROR,
        _ => ErrorCode::INVALID_PARAMS,
    }
}

/// The `prompts/get` result of the call that got the prompt `name`.
///
/// # Errors
/// See the module docs; structured content that is not a `GetPromptResult` is `-32603`.
pub fn to_prompt_result(name: &str, result: ToolResult) -> Result<GetPromptResult, ErrorData> {
    if result.error.is_some() {
        return Err(prompt_error(name, &result));
    }
    let Some(value) = result.structured_content else {
        return Err(ErrorData::internal_error(
            format!("getting prompt {} returned no messages", shown(name)),
            Some(json!({ "name": shown(name) })),
        ));
    };
    #[derive(serde::Deserialize)]
    struct Got {
        #[serde(default)]
        description: Option<String>,
        messages: Vec<rmcp::model::PromptMessage>,
    }
    let got: Got = serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(
            format!(
                "prompt {} came back in a shape that is not a prompt: {e}",
                shown(name)
            ),
            Some(json!({ "name": shown(name) })),
        )
    })?;
    // built, not read: the constructor sets `resultType`, which 2026-07-28 requires
    let mut out = GetPromptResult::new(got.messages);
    out.description = got.description;
    Ok(out)
}
