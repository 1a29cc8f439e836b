//! A toolgate [`ToolResult`] as an MCP `CallToolResult`.
//!
//! - success: `structuredContent` is the tool's structured output, `content` its content
//!   blocks ([`to_block`]: text, image, audio, embedded resource, resource link; a typed
//!   tool's own rendering, `toolgate_core::TypedTool::text`, such as read_file's numbered
//!   lines), or the JSON text of the structured output when the tool gave none (the
//!   specification asks for a text rendering next to `structuredContent`);
//! - a result cut to the byte limit ([`toolgate_core::truncate`]): structured content stays
//!   structured, shortened inside the value and conforming to the listed `outputSchema` (its
//!   `truncation` member names the handle that `read_result` pages through), with its JSON as
//!   the text; text past the limit is a preview whose marker names the handle; either way
//!   `_meta["toolgate/truncation"]` carries the record;
//! - a pipeline error, argument validation included: `isError: true`, the error rendered for
//!   the model (`kind (reason): message` and one line per argument fault, saying what to send
//!   instead) and `_meta["toolgate/error"]` with the kind, reason, whether the model may go
//!   on and, for an approval's answer, the policy `rule` that asked. Only an unknown tool
//!   becomes a JSON-RPC error ([`unknown_tool`]);
//! - a replay (the recorded result of an earlier call with the same idempotency key, the
//!   tool not run again): `_meta["toolgate/replayed"]` is `true`, beside the rest.

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, MetaObject, Resource};
use serde_json::json;
use toolgate_core::result::render_error;
use toolgate_core::{Content, ErrorKind, ResourceContents, ToolResult};

/// The `_meta` key of the error details on an `isError` result.
pub const ERROR_META: &str = "toolgate/error";
/// The `_meta` key of the truncation record on a truncated result.
pub const TRUNCATION_META: &str = "toolgate/truncation";
/// The `_meta` key set to `true` on a replayed result.
pub const REPLAYED_META: &str = "toolgate/replayed";

/// The MCP result of one call.
pub fn to_call_tool_result(result: ToolResult) -> CallToolResult {
    let replayed = result.replayed;
    let mut out = answer(result);
    if replayed {
        out.meta
            .get_or_insert_with(MetaObject::new)
            .insert(REPLAYED_META.to_string(), json!(true));
    }
    out
}

fn answer(mut result: ToolResult) -> CallToolResult {
    let mut out = CallToolResult::default();
    if let Some(error) = &result.error {
        out.is_error = Some(true);
        out.content = vec![ContentBlock::text(render_error(error))];
        let mut meta = MetaObject::new();
        let mut details = json!({
            "kind": error.kind,
            "reason": error.reason,
            "recoverable": error.is_recoverable(),
            "faults": error.faults,
        });
        // the policy rule that asked, for an approval's answer: for the client and the
        // operator, not in the model's text
        if let Some(rule) = error.details.as_deref().and_then(|d| d.get("rule")) {
            details["rule"] = rule.clone();
        }
        meta.insert(ERROR_META.to_string(), details);
        out.meta = Some(meta);
        return out;
    }
    out.is_error = Some(false);
    out.content = if result.content.is_empty() {
        vec![ContentBlock::text(result.text().into_owned())]
    } else {
        // moved, not copied: a text block can be the whole result
        std::mem::take(&mut result.content)
            .into_iter()
            .filter_map(to_block)
            .collect()
    };
    if let Some(t) = &result.truncation {
        let mut meta = MetaObject::new();
        meta.insert(TRUNCATION_META.to_string(), json!(t));
        out.meta = Some(meta);
    }
    out.structured_content = result.structured_content;
    out
}

/// One toolgate content block as its MCP `ContentBlock` (text, image, audio, an embedded
/// resource, a resource link), its strings moved; `None` for a kind this version does not
/// know.
pub fn to_block(content: Content) -> Option<ContentBlock> {
    Some(match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Resource { resource } => ContentBlock::resource(match resource {
            ResourceContents::Text {
                uri,
                mime_type,
                text,
            } => rmcp::model::ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta: None,
            },
            ResourceContents::Blob {
                uri,
                mime_type,
                blob,
            } => rmcp::model::ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                meta: None,
            },
            _ => return None,
        }),
        Content::ResourceLink(link) => {
            let mut r = Resource::new(link.uri, link.name);
            r.title = link.title;
            r.description = link.description;
            r.mime_type = link.mime_type;
            r.size = link.size;
            ContentBlock::resource_link(r)
        }
        _ => return None,
    })
}

/// The JSON-RPC error for a result whose tool is unknown or invisible to the profile
/// (`-32602`); `None` for any other result. The message names the tools the caller can call
/// (and the closest name), and `data` carries them (`available`, `did_you_mean`).
///
/// Every revision of the specification (2024-11-05 to 2026-07-28 and the draft, "Tools",
/// "Error Handling") classes an unknown tool as a protocol error, not a tool execution
/// error, so there is no revision on which this may be an `isError` result instead; a
/// client that hides protocol errors from its model still gets a message naming the tools.
pub fn unknown_tool(result: &ToolResult) -> Option<ErrorData> {
    let error = result.error.as_ref()?;
    (error.kind == ErrorKind::UnknownTool).then(|| {
        let details = error.details.as_deref();
        ErrorData::invalid_params(
            error.message.clone(),
            Some(json!({
                "tool": &*result.tool,
                "available": details.and_then(|d| d.get("available")),
                "did_you_mean": details.and_then(|d| d.get("did_you_mean")),
            })),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::Duration;
    use toolgate_core::{ArgumentFault, ToolError};

    fn ok(structured: serde_json::Value) -> ToolResult {
        ToolResult {
            call_id: "1".into(),
            tool: "t".into(),
            is_error: false,
            content: Vec::new(),
            structured_content: Some(structured),
            error: None,
            truncation: None,
            replayed: false,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn success_carries_structured_content_and_its_text() {
        let r = to_call_tool_result(ok(json!({"a": 1})));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "content": [{"type": "text", "text": "{\"a\":1}"}],
                "structuredContent": {"a": 1},
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn every_content_kind_maps_to_its_mcp_block() {
        let mut r = ok(json!({"a": 1}));
        r.content = vec![
            Content::text("t"),
            Content::image("iVBO", "image/png"),
            Content::audio("UklG", "audio/wav"),
            Content::embedded_text("test://r", Some("text/plain".into()), "body"),
            Content::embedded_blob("test://b", None, "AAEC"),
            Content::ResourceLink(
                toolgate_core::ResourceLink::new("file:///a.txt", "a.txt")
                    .mime_type("text/plain")
                    .size(3),
            ),
        ];
        let v = serde_json::to_value(to_call_tool_result(r)).unwrap();
        assert_eq!(
            v["content"],
            json!([
                {"type": "text", "text": "t"},
                {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
                {"type": "resource", "resource":
                    {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
                 "mimeType": "text/plain", "size": 3},
            ])
        );
        assert_eq!(v["structuredContent"], json!({"a": 1}));
    }

    #[test]
    fn errors_are_results_that_say_what_to_fix() {
        let e = ToolError::invalid_arguments(
            "the arguments do not match the schema",
            vec![ArgumentFault {
                pointer: "/path".into(),
                message: "expected a string".into(),
            }],
        );
        let r = ToolResult::from_error("1".into(), "t".into(), e, Duration::ZERO);
        assert!(unknown_tool(&r).is_none());
        let v = serde_json::to_value(to_call_tool_result(r)).unwrap();
        assert_eq!(v["isError"], true);
        assert_eq!(
            v["content"][0]["text"],
            "invalid_arguments: the arguments do not match the schema\n- /path: expected a string"
        );
        assert_eq!(v["_meta"][ERROR_META]["kind"], "invalid_arguments");
        assert_eq!(v["_meta"][ERROR_META]["recoverable"], true);
        assert!(v.get("structuredContent").is_none());
    }

    #[test]
    fn replays_say_so_in_meta_beside_the_rest() {
        let mut r = ok(json!({"a": 1}));
        r.replayed = true;
        let v = serde_json::to_value(to_call_tool_result(r)).unwrap();
        assert_eq!(v["_meta"], json!({REPLAYED_META: true}));
        assert_eq!(v["structuredContent"], json!({"a": 1}));
        let e = ToolError::failed("the server said 500");
        let mut r = ToolResult::from_error("1".into(), "t".into(), e, Duration::ZERO);
        r.replayed = true;
        let v = serde_json::to_value(to_call_tool_result(r)).unwrap();
        assert_eq!(v["_meta"][REPLAYED_META], true);
        assert_eq!(v["_meta"][ERROR_META]["kind"], "tool_failed");
        assert!(serde_json::to_value(to_call_tool_result(ok(json!({}))))
            .unwrap()
            .get("_meta")
            .is_none());
    }

    #[test]
    fn unknown_tool_is_a_protocol_error() {
        let e = ToolError::new(ErrorKind::UnknownTool, "tool nope is not available");
        let r = ToolResult::from_error("1".into(), "nope".into(), e, Duration::ZERO);
        let err = unknown_tool(&r).unwrap();
        assert_eq!(err.code.0, -32602);
    }
}
