//! Anthropic's tool calls and results (Messages API).
//!
//! Calls are the `tool_use` blocks of the assistant's `content`, each `{"id", "name",
//! "input"}`; read from a message (or response) or its `content` array (text and thinking
//! blocks are skipped). The results go back in one user message whose content holds a
//! `tool_result` block per call, in call order: `{"type": "tool_result", "tool_use_id",
//! "content", "is_error"}`, with the text the model reads (and the result's images as `image`
//! blocks).

use super::calls::IncomingCall;
use super::codec::{Answer, Codec};
use crate::result::Content;
use serde_json::{json, Value};

pub(crate) fn read(codec: &Codec, message: &Value) -> Result<Vec<IncomingCall>, String> {
    let (blocks, base) = match message {
        Value::Array(blocks) => (blocks, String::new()),
        Value::Object(map) => match map.get("content") {
            Some(Value::Array(blocks)) => (blocks, "/content".to_string()),
            Some(Value::String(_)) | None | Some(Value::Null) => return Ok(Vec::new()),
            Some(_) => return Err("content is not an array of blocks".into()),
        },
        _ => return Err("expected a message, a response or its content array".into()),
    };
    Ok(blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|(i, block)| {
            let at = format!("{base}/{i}");
            let id = block.get("id").and_then(Value::as_str).map(str::to_string);
            match block.get("name").and_then(Value::as_str) {
                Some(name) => codec.call(id, name, block.get("input").unwrap_or(&json!({}))),
                None => IncomingCall::rejected(
                    id,
                    None,
                    format!("{at}/name"),
                    "the tool_use block names no tool: send name".into(),
                ),
            }
        })
        .collect())
}

pub(crate) fn write(answers: &[Answer<'_>]) -> Value {
    let blocks: Vec<Value> = answers
        .iter()
        .map(|a| {
            let images: Vec<Value> = a
                .result
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Image { data, mime_type } => Some(json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime_type, "data": data},
                    })),
                    _ => None,
                })
                .collect();
            let content = if images.is_empty() {
                Value::String(a.text())
            } else {
                let mut all = vec![json!({"type": "text", "text": a.text()})];
                all.extend(images);
                Value::Array(all)
            };
            json!({
                "type": "tool_result",
                "tool_use_id": a.id(),
                "content": content,
                "is_error": a.result.is_error,
            })
        })
        .collect();
    json!({"role": "user", "content": blocks})
}
