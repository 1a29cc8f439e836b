//! Gemini's tool calls and results (`generateContent`).
//!
//! Calls are the `functionCall` parts of the model's content, each `{"name", "args", "id"}`;
//! `id` is often absent: the call then gets an id of its own for the pipeline (and the audit
//! log), and its `functionResponse` carries none, matched by name and order as Gemini does.
//! Read from a response (`candidates[0].content`), a content, or its `parts` array. The
//! results go back in one user content with a `functionResponse` part per call, in call
//! order: `{"id", "name", "response": {"output": ...}}` on success (the structured output,
//! or the text) and `{"id", "name", "response": {"error": "..."}}` on an error, as Gemini's
//! documentation names them.

use super::calls::IncomingCall;
use super::codec::{Answer, Codec};
use serde_json::{json, Map, Value};

pub(crate) fn read(codec: &Codec, message: &Value) -> Result<Vec<IncomingCall>, String> {
    let content = match message.pointer("/candidates/0/content") {
        Some(c) => c,
        None => message,
    };
    let (parts, base) = match content {
        Value::Array(parts) => (parts, String::new()),
        Value::Object(map) => match map.get("parts") {
            Some(Value::Array(parts)) => (parts, "/parts".to_string()),
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(_) => return Err("parts is not an array".into()),
        },
        _ => return Err("expected a response, a content or its parts array".into()),
    };
    Ok(parts
        .iter()
        .enumerate()
        .filter_map(|(i, part)| Some((i, part.get("functionCall")?)))
        .map(|(i, call)| {
            let at = format!("{base}/{i}/functionCall");
            let id = call.get("id").and_then(Value::as_str).map(str::to_string);
            match call.get("name").and_then(Value::as_str) {
                Some(name) => codec.call(id, name, call.get("args").unwrap_or(&json!({}))),
                None => IncomingCall::rejected(
                    id,
                    None,
                    format!("{at}/name"),
                    "the functionCall names no function: send name".into(),
                ),
            }
        })
        .collect())
}

pub(crate) fn write(answers: &[Answer<'_>]) -> Value {
    let parts: Vec<Value> = answers
        .iter()
        .map(|a| {
            let response = match (&a.result.error, &a.result.structured_content) {
                (Some(_), _) => json!({"error": a.text()}),
                (None, Some(structured)) => json!({"output": structured}),
                (None, None) => json!({"output": a.text()}),
            };
            let mut fr = Map::new();
            if let Some(id) = &a.call.provider_id {
                fr.insert("id".into(), id.clone().into());
            }
            fr.insert("name".into(), a.call.provider_name.clone().into());
            fr.insert("response".into(), response);
            json!({"functionResponse": fr})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}
