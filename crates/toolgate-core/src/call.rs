//! Tool calls as a model emits them: `{id, name, arguments}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// The id of one tool call, chosen by the model or its client; every result carries it back.
/// Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(Arc<str>);

impl CallId {
    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CallId {
    fn from(s: &str) -> Self {
        CallId(s.into())
    }
}

impl From<String> for CallId {
    fn from(s: String) -> Self {
        CallId(s.into())
    }
}

impl std::borrow::Borrow<str> for CallId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// The arguments of a call: a parsed JSON value, or the raw JSON text as the model sent it
/// (OpenAI sends a string; the sanitize stage parses it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arguments {
    /// Already-parsed JSON.
    Value(Value),
    /// JSON text to be parsed by the pipeline.
    Raw(String),
}

impl From<Value> for Arguments {
    fn from(v: Value) -> Self {
        Arguments::Value(v)
    }
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id, unique within a session.
    pub id: CallId,
    /// The tool name.
    pub name: String,
    /// The arguments object.
    pub arguments: Arguments,
    /// Pins a version of the tool; `None` calls the highest registered version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The caller's idempotency key (MCP `idempotencyKey`, `toolgate call --idempotency-key`):
    /// a side-effecting call sent again with the same key and arguments gets the first call's
    /// result instead of acting twice (see [`crate::ledger`]). Checked like every input: 1 to
    /// [`crate::ledger::MAX_KEY_BYTES`] bytes of `A-Z a-z 0-9 - _ . : ~ + / = @`. `None`: a
    /// side-effecting call gets a key derived from its caller, tool and arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

impl ToolCall {
    /// A call with parsed arguments.
    pub fn new(id: impl Into<CallId>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Value(arguments),
            version: None,
            idempotency_key: None,
        }
    }

    /// A call whose arguments are JSON text, parsed by the pipeline.
    pub fn raw(
        id: impl Into<CallId>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Raw(arguments.into()),
            version: None,
            idempotency_key: None,
        }
    }

    /// Pins the tool version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the idempotency key (see [`ToolCall::idempotency_key`]).
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }
}
