//! OpenAI's tool calls and results.
//!
//! Chat Completions: the assistant message's `tool_calls`, each `{"id", "type": "function",
//! "function": {"name", "arguments"}}` with `arguments` a JSON text the model wrote (which may
//! not parse: the pipeline then answers `invalid_arguments`, saying where it broke). Read from
//! a completion (`choices[0].message`), a message, or the `tool_calls` array. Each result is
//! a `{"role": "tool", "tool_call_id", "content"}` message.
//!
//! Responses: the `output` items of type `function_call`, each `{"call_id", "name",
//! "arguments"}` (other items, messages and reasoning, are skipped). Read from a response,
//! or the array of items. Each result is a `{"type": "function_call_output", "call_id",
//! "output"}` input item.

use super::calls::IncomingCall;
use super::codec::{Answer, Codec};
use serde_json::{json, Value};

/// The calls of a Chat Completions message.
pub(crate) fn read_chat(codec: &Codec, message: &Value) -> Result<Vec<IncomingCall>, String> {
    let message = match message.pointer("/choices/0/message") {
        Some(m) => m,
        None => message,
    };
    let (calls, base) = match message {
        Value::Array(calls) => (calls, String::new()),
        Value::Object(map) => match map.get("tool_calls") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(calls)) => (calls, "/tool_calls".to_string()),
            Some(_) => return Err("tool_calls is not an array".into()),
        },
        _ => {
            return Err(
                "expected a chat completion, an assistant message or its tool_calls array".into(),
            )
        }
    };
    Ok(calls
        .iter()
        .enumerate()
        .map(|(i, entry)| chat_call(codec, entry, &format!("{base}/{i}")))
        .collect())
}

fn chat_call(codec: &Codec, entry: &Value, at: &str) -> IncomingCall {
    let id = entry.get("id").and_then(Value::as_str).map(str::to_string);
    let function = entry.get("function");
    let name = function
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if !entry.is_object() {
        return IncomingCall::rejected(id, name, at.into(), "a tool call must be an object".into());
    }
    if let Some(t) = entry.get("type").filter(|t| *t != "function") {
        return IncomingCall::rejected(
            id,
            name,
            format!("{at}/type"),
            format!("a tool call of type {t} is not a function call; only function calls can be answered"),
        );
    }
    let Some(name) = name else {
        return IncomingCall::rejected(
            id,
            None,
            format!("{at}/function/name"),
            "the call names no function: send function.name".into(),
        );
    };
    let arguments = function
        .and_then(|f| f.get("arguments"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    codec.call(id, &name, &arguments)
}

/// The calls of a Responses API output.
pub(crate) fn read_responses(codec: &Codec, message: &Value) -> Result<Vec<IncomingCall>, String> {
    let (items, base) = match message {
        Value::Array(items) => (items, String::new()),
        Value::Object(map) => match map.get("output") {
            Some(Value::Array(items)) => (items, "/output".to_string()),
            Some(_) => return Err("output is not an array".into()),
            // one item on its own
            None if map.get("type").and_then(Value::as_str) == Some("function_call") => {
                return Ok(vec![response_call(codec, message, "")])
            }
            None => return Ok(Vec::new()),
        },
        _ => return Err("expected a response, its output array or a function_call item".into()),
    };
    Ok(items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|(i, item)| response_call(codec, item, &format!("{base}/{i}")))
        .collect())
}

fn response_call(codec: &Codec, item: &Value, at: &str) -> IncomingCall {
    let id = item
        .get("call_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    match item.get("name").and_then(Value::as_str) {
        Some(name) => codec.call(id, name, item.get("arguments").unwrap_or(&json!({}))),
        None => IncomingCall::rejected(
            id,
            None,
            format!("{at}/name"),
            "the function_call names no function: send name".into(),
        ),
    }
}

pub(crate) fn write_chat(answers: &[Answer<'_>]) -> Value {
    answers
        .iter()
        .map(|a| json!({"role": "tool", "tool_call_id": a.id(), "content": a.text()}))
        .collect()
}

pub(crate) fn write_responses(answers: &[Answer<'_>]) -> Value {
    answers
        .iter()
        .map(|a| json!({"type": "function_call_output", "call_id": a.id(), "output": a.text()}))
        .collect()
}
