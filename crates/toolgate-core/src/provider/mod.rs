//! Provider formats: the registry's tools as OpenAI, Anthropic, Gemini and MCP declare them,
//! and those providers' tool calls and results, the call id carried through.
//!
//! A host that drives a model's API directly does three things each turn:
//!
//! 1. [`export`] the tools the profile lists, in the provider's shape ([`Export::tools`]),
//!    with its names ([`NameMap`]: OpenAI and Anthropic refuse `.`, every provider caps the
//!    length) and, for OpenAI's strict mode, schemas rewritten the way strict mode requires
//!    ([`strict`]); every change is an [`ExportWarning`]. The export's [`Codec`] remembers
//!    what it changed.
//! 2. [`Codec::read_calls`] the model's reply: OpenAI Chat Completions `tool_calls`, Responses
//!    `function_call` items, Anthropic `tool_use` blocks, Gemini `functionCall` parts. Each
//!    becomes a [`ToolCall`](crate::ToolCall) with the registry's name, the provider's id
//!    (Gemini may give none: one is made and mapped back) and the arguments as sent; an entry
//!    that cannot be read is answered with a recoverable `invalid_arguments` for that call.
//! 3. dispatch the calls ([`Codec::answer`] does 2 to 4), then [`Codec::write_results`]:
//!    one provider result per call, in call order, with the id, whether it failed, and the
//!    text the model reads (the truncation note included).
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::provider::{export, ExportOptions, Provider};
//! use toolgate_core::ToolSpec;
//!
//! let spec = ToolSpec::builder("weather.get")
//!     .description("Current weather of a city.")
//!     .input_schema(json!({"type": "object", "additionalProperties": false,
//!         "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!         "required": ["city"]}))
//!     .build()
//!     .unwrap();
//! let out = export([&spec], Provider::OpenAiChat, ExportOptions::strict());
//! assert_eq!(out.tools[0], json!({"type": "function", "function": {
//!     "name": "weather_get", "description": "Current weather of a city.", "strict": true,
//!     "parameters": {"type": "object", "additionalProperties": false,
//!         "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}},
//!         "required": ["city", "days"]}}}));
//! let calls = out.codec.read_calls(&json!({"role": "assistant", "tool_calls": [
//!     {"id": "call_1", "type": "function",
//!      "function": {"name": "weather_get", "arguments": "{\"city\":\"Oslo\",\"days\":null}"}}]}));
//! let call = &calls.calls()[0];
//! assert_eq!((call.call.id.as_str(), call.call.name.as_str()), ("call_1", "weather.get"));
//! assert_eq!(call.call.arguments, json!({"city": "Oslo"}).into());
//! ```

mod anthropic;
mod calls;
mod codec;
mod conjunct;
mod export;
mod gemini;
pub mod gemini_schema;
mod names;
mod nulls;
mod openai;
pub mod strict;

pub use calls::{CallBatch, IncomingCall};
pub use codec::{Codec, MessageError};
pub use export::{export, export_profile, Export, ExportOptions, ExportWarning};
pub use names::NameMap;
pub use nulls::{NullPaths, NullTree};

use serde::{Deserialize, Serialize};

/// A model provider's API, as far as tools go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// MCP `tools/list` entries and `tools/call` results (specification 2025-11-25).
    Mcp,
    /// OpenAI Chat Completions: `tools` of `{"type": "function", "function": {...}}`,
    /// `tool_calls` on the assistant message, `role: tool` messages for results.
    #[serde(rename = "openai")]
    OpenAiChat,
    /// OpenAI Responses: flat `{"type": "function", "name", ...}` tools, `function_call`
    /// output items, `function_call_output` input items for results.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages: `tools` of `{"name", "description", "input_schema"}`, `tool_use`
    /// content blocks, `tool_result` blocks (with `is_error`) in the next user message.
    Anthropic,
    /// Gemini (`generateContent`): `functionDeclarations` with an OpenAPI-subset schema,
    /// `functionCall` parts, `functionResponse` parts.
    Gemini,
}

impl Provider {
    /// Every provider, in the order of the command line's list.
    pub const ALL: [Provider; 5] = [
        Provider::Mcp,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The name on command lines: `mcp`, `openai`, `openai-responses`, `anthropic`,
    /// `gemini`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Provider::Mcp => "mcp",
            Provider::OpenAiChat => "openai",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name that is not one of `mcp`, `openai`, `openai-responses`, `anthropic`,
/// `gemini`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: expected mcp, openai, openai-responses, anthropic or gemini")]
pub struct UnknownProvider(pub String);

impl std::str::FromStr for Provider {
    type Err = UnknownProvider;

    /// Reads the names of [`Provider::as_str`] in any case (`openai-chat` and
    /// `openai_responses` too).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "mcp" => Ok(Provider::Mcp),
            "openai" | "openai-chat" => Ok(Provider::OpenAiChat),
            "openai-responses" => Ok(Provider::OpenAiResponses),
            "anthropic" => Ok(Provider::Anthropic),
            "gemini" => Ok(Provider::Gemini),
            _ => Err(UnknownProvider(s.to_string())),
        }
    }
}
