//! The way in and back out: a provider's tool calls read as [`ToolCall`]s, and
//! [`ToolResult`]s written as that provider's results.

use super::calls::{CallBatch, IncomingCall};
use super::names::NameMap;
use super::nulls::NullPaths;
use super::{anthropic, gemini, openai, Provider};
use crate::call::Arguments;
use crate::error::ToolError;
use crate::pipeline::Pipeline;
use crate::result::{render_error, ToolResult};
use crate::session::Session;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// A message that is not the provider's message at all (not an object, `tool_calls` not an
/// array, ...). For the host: no call in it could be read, so none can be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not {provider} tool calls: {message}")]
pub struct MessageError {
    /// The provider whose message was expected.
    pub provider: Provider,
    /// What was wrong.
    pub message: String,
}

/// Reads one provider's tool calls and writes their results, with the names and strict-mode
/// `null`s of an [`Export`](super::Export). Cheap to clone; share it for a conversation.
#[derive(Debug, Clone)]
pub struct Codec {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    provider: Provider,
    names: NameMap,
    nulls: HashMap<Arc<str>, NullPaths>,
}

impl Codec {
    /// A codec for `provider` with `names` and the strict-mode `nulls` of each tool.
    pub fn new(provider: Provider, names: NameMap, nulls: HashMap<Arc<str>, NullPaths>) -> Self {
        Codec {
            inner: Arc::new(Inner {
                provider,
                names,
                nulls,
            }),
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.inner.provider
    }

    /// The names both ways.
    pub fn names(&self) -> &NameMap {
        &self.inner.names
    }

    /// Reads the tool calls of a provider message (the shapes each provider module accepts:
    /// the whole response, the assistant message or content, or the list of calls).
    /// A message without tool calls gives an empty batch.
    ///
    /// # Errors
    /// [`MessageError`] when `message` is not of the provider's shape at all; an entry that
    /// cannot be read is a rejected call in the batch instead (see [`IncomingCall`]).
    pub fn try_read_calls(&self, message: &Value) -> Result<CallBatch, MessageError> {
        let calls = match self.inner.provider {
            Provider::OpenAiChat => openai::read_chat(self, message),
            Provider::OpenAiResponses => openai::read_responses(self, message),
            Provider::Anthropic => anthropic::read(self, message),
            Provider::Gemini => gemini::read(self, message),
            Provider::Mcp => mcp_read(self, message),
        }
        .map_err(|message| MessageError {
            provider: self.inner.provider,
            message,
        })?;
        Ok(CallBatch { calls })
    }

    /// [`Codec::try_read_calls`], with a message that is not the provider's at all read as
    /// one with no calls.
    pub fn read_calls(&self, message: &Value) -> CallBatch {
        self.try_read_calls(message)
            .unwrap_or(CallBatch { calls: Vec::new() })
    }

    /// The provider's result message(s) for `batch`: one result per call, in the batch's
    /// order. `results` are matched by call id (order does not matter, extra ones are
    /// ignored); a call with no result is answered with an `internal` error saying so, and a
    /// rejected call with its rejection.
    ///
    /// Shapes: OpenAI Chat, an array of `{"role": "tool", "tool_call_id", "content"}`;
    /// Responses, an array of `{"type": "function_call_output", "call_id", "output"}`;
    /// Anthropic, one `{"role": "user", "content": [{"type": "tool_result", "tool_use_id",
    /// "content", "is_error"}]}`; Gemini, one `{"role": "user", "parts":
    /// [{"functionResponse": {"id", "name", "response"}}]}`; MCP, an array of `tools/call`
    /// results with their `id`.
    pub fn write_results(&self, batch: &CallBatch, results: &[ToolResult]) -> Value {
        let by_id: HashMap<&str, &ToolResult> =
            results.iter().map(|r| (r.call_id.as_str(), r)).collect();
        let mut owned: Vec<ToolResult> = Vec::new();
        let mut order: Vec<Option<&ToolResult>> = Vec::with_capacity(batch.calls.len());
        for call in &batch.calls {
            match (call.rejection(), by_id.get(call.call.id.as_str())) {
                (None, Some(r)) => order.push(Some(r)),
                (Some(rejected), _) => {
                    owned.push(rejected);
                    order.push(None);
                }
                (None, None) => {
                    owned.push(ToolResult::from_error(
                        call.call.id.clone(),
                        call.call.name.as_str().into(),
                        ToolError::internal("the host produced no result for this call"),
                        Duration::ZERO,
                    ));
                    order.push(None);
                }
            }
        }
        let mut owned = owned.iter();
        let answers: Vec<Answer<'_>> = batch
            .calls
            .iter()
            .zip(order)
            .map(|(call, r)| Answer {
                call,
                result: r.unwrap_or_else(|| owned.next().expect("one owned result per gap")),
            })
            .collect();
        match self.inner.provider {
            Provider::OpenAiChat => openai::write_chat(&answers),
            Provider::OpenAiResponses => openai::write_responses(&answers),
            Provider::Anthropic => anthropic::write(&answers),
            Provider::Gemini => gemini::write(&answers),
            Provider::Mcp => mcp_write(&answers),
        }
    }

    /// Reads the calls of `message`, dispatches the readable ones through `pipeline`
    /// ([`Pipeline::dispatch_batch`]: concurrency-safe runs together, results in call order)
    /// and returns the provider's result message(s): exactly one result per call.
    ///
    /// # Errors
    /// [`MessageError`] when `message` is not of the provider's shape at all.
    pub async fn answer(
        &self,
        pipeline: &Pipeline,
        session: &Session,
        message: &Value,
    ) -> Result<Value, MessageError> {
        let batch = self.try_read_calls(message)?;
        let results = pipeline.dispatch_batch(batch.to_dispatch(), session).await;
        Ok(self.write_results(&batch, &results))
    }

    /// A call to the provider's `name` (mapped back to the registry's) with `id` and the
    /// arguments as the provider sent them: a JSON text (OpenAI) or a value.
    pub(crate) fn call(&self, id: Option<String>, name: &str, arguments: &Value) -> IncomingCall {
        let registry_name = self.inner.names.registry_name(name);
        let nulls = self.inner.nulls.get(registry_name);
        let arguments = match arguments {
            Value::String(text) if text.trim().is_empty() => {
                Arguments::Value(Value::Object(Default::default()))
            }
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(mut v) => {
                    if let Some(n) = nulls {
                        n.strip(&mut v);
                    }
                    Arguments::Value(v)
                }
                // the sanitize stage answers invalid_arguments, saying where it broke
                Err(_) => Arguments::Raw(text.clone()),
            },
            other => {
                let mut v = other.clone();
                if let Some(n) = nulls {
                    n.strip(&mut v);
                }
                Arguments::Value(v)
            }
        };
        IncomingCall::new(id, name.to_string(), registry_name, arguments)
    }
}

/// One call and its result, for writing.
pub(crate) struct Answer<'a> {
    pub call: &'a IncomingCall,
    pub result: &'a ToolResult,
}

impl Answer<'_> {
    /// The id to send back: the provider's, or the one made for it.
    pub fn id(&self) -> &str {
        self.call
            .provider_id
            .as_deref()
            .unwrap_or(self.call.call.id.as_str())
    }

    /// The text the model reads: the error rendered (kind, reason, message, each fault), or
    /// the result's text (with the truncation note of a truncated result).
    pub fn text(&self) -> String {
        match &self.result.error {
            Some(e) => render_error(e),
            None => self.result.text().into_owned(),
        }
    }
}

/// MCP `tools/call` requests: `{"id", "params": {"name", "arguments"}}`, one or an array.
fn mcp_read(codec: &Codec, message: &Value) -> Result<Vec<IncomingCall>, String> {
    let items: Vec<&Value> = match message {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![message],
        _ => return Err("expected a tools/call request or an array of them".into()),
    };
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let id = item.get("id").map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let params = item.get("params").unwrap_or(item);
            match params.get("name").and_then(Value::as_str) {
                Some(name) => codec.call(
                    id,
                    name,
                    params
                        .get("arguments")
                        .unwrap_or(&Value::Object(Default::default())),
                ),
                None => IncomingCall::rejected(
                    id,
                    None,
                    format!("/{i}/params/name"),
                    "the request names no tool: send params.name".into(),
                ),
            }
        })
        .collect())
}

fn mcp_write(answers: &[Answer<'_>]) -> Value {
    Value::Array(
        answers
            .iter()
            .map(|a| {
                let mut result = serde_json::json!({
                    "content": [{"type": "text", "text": a.text()}],
                    "isError": a.result.is_error,
                });
                if let Some(s) = &a.result.structured_content {
                    result["structuredContent"] = s.clone();
                }
                serde_json::json!({"id": a.id(), "result": result})
            })
            .collect(),
    )
}
