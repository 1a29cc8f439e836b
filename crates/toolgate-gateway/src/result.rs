//! An upstream's answer as a toolgate result: content blocks kept as they are (text, image,
//! audio, resource links, embedded resources), structured content handed to the finish
//! stage (which checks it against the tool's `outputSchema`, escapes and truncates it like
//! any tool's), and an error result turned into a recoverable `tool_failed`.

use rmcp::model::{CallToolResult, ContentBlock};
use toolgate_core::{Content, ToolError, ToolOutput};

/// The most of an upstream's error text the model gets, in bytes.
pub const MAX_ERROR_TEXT: usize = 8 * 1024;

/// The output of a call of `tool` (its listed name) that answered `result`.
///
/// # Errors
/// `tool_failed` with reason `upstream_error` (recoverable) when the upstream says the call
/// failed (`isError: true`), its text in the message.
pub fn output(result: CallToolResult, tool: &str) -> Result<ToolOutput, ToolError> {
    let content: Vec<Content> = result.content.into_iter().map(content).collect();
    if result.is_error == Some(true) {
        let mut text = content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        if text.trim().is_empty() {
            text = "(the upstream gave no message)".into();
        }
        if text.len() > MAX_ERROR_TEXT {
            let mut cut = MAX_ERROR_TEXT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str(" [...]");
        }
        return Err(ToolError::failed(format!(
            "{tool} failed upstream: {text}\n(this is the upstream server's own error: \
             correct the arguments it names, or use another tool)"
        ))
        .with_reason("upstream_error"));
    }
    Ok(ToolOutput {
        structured: result.structured_content,
        content,
    })
}

/// One block in toolgate's form; the wire shapes are MCP's on both sides, so annotations
/// and `_meta` are what is dropped. Text, image and audio move across as they are (the hot
/// case: no copy); the rest through their JSON. A block of a kind toolgate does not know
/// becomes a text saying so.
fn content(block: ContentBlock) -> Content {
    let block = match block {
        ContentBlock::Text(t) => return Content::Text { text: t.text },
        ContentBlock::Image(i) => {
            return Content::Image {
                data: i.data,
                mime_type: i.mime_type,
            }
        }
        ContentBlock::Audio(a) => {
            return Content::Audio {
                data: a.data,
                mime_type: a.mime_type,
            }
        }
        other => other,
    };
    let kind = match serde_json::to_value(&block) {
        Ok(v) => {
            let kind = v.get("type").and_then(|t| t.as_str()).map(str::to_string);
            serde_json::from_value::<Content>(v).map_err(|_| kind)
        }
        Err(_) => Err(None),
    };
    match kind {
        Ok(c) => c,
        Err(kind) => Content::text(format!(
            "[a content block of type {} that toolgate does not pass on]",
            kind.as_deref().unwrap_or("unknown")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn every_content_type_is_kept_and_errors_are_recoverable() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "hi", "annotations": {"priority": 1}},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}}
            ],
            "structuredContent": {"n": 1}
        }))
        .unwrap();
        let out = output(r, "t").unwrap();
        let kinds: Vec<String> = out
            .content
            .iter()
            .map(|c| {
                serde_json::to_value(c).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            ["text", "image", "audio", "resource_link", "resource"]
        );
        assert_eq!(out.structured, Some(json!({"n": 1})));

        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "no such file"}], "isError": true
        }))
        .unwrap();
        let e = output(r, "fs__read").unwrap_err();
        assert!(e.is_recoverable());
        assert_eq!(e.reason.as_deref(), Some("upstream_error"));
        assert!(e.message.contains("no such file"), "{e}");
    }
}
