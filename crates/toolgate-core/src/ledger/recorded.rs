//! [`Recorded`]: the result a ledger entry keeps for calls sent again, and its JSON.
//!
//! What is kept is the handler's end, not the finished result: a replay goes through the
//! finish stage again (output schema, made safe, truncated with a handle of the replaying
//! session), so it reads as the first call's result did.
//!
//! The JSON: `{"output": {"structured": ..., "content": [...]}}`, `{"error": {...}}` (a
//! [`ToolError`] as results carry it), or `{"settled": {"by": "operator", "at_us": N}}` for an
//! entry settled as done without a result.

use super::LedgerError;
use crate::error::ToolError;
use crate::result::{Content, ToolOutput};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The result a ledger entry records.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// The handler's output.
    Output(ToolOutput),
    /// The handler's error, after it may have acted.
    Error(ToolError),
    /// Settled as done (the effect happened) by `by` at `at_us`, without a result.
    Settled {
        /// Who settled it (`operator`).
        by: String,
        /// When, µs since the epoch.
        at_us: u64,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Wire<'a> {
    Output {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        structured: Option<std::borrow::Cow<'a, Value>>,
        #[serde(default)]
        content: std::borrow::Cow<'a, [Content]>,
    },
    Error(std::borrow::Cow<'a, ToolError>),
    Settled {
        by: std::borrow::Cow<'a, str>,
        at_us: u64,
    },
}

impl Recorded {
    /// The JSON of a handler's output, without copying it.
    pub fn output_json(output: &ToolOutput) -> String {
        to_string(&Wire::Output {
            structured: output.structured.as_ref().map(std::borrow::Cow::Borrowed),
            content: std::borrow::Cow::Borrowed(&output.content),
        })
    }

    /// The JSON of a handler's error.
    pub fn error_json(error: &ToolError) -> String {
        to_string(&Wire::Error(std::borrow::Cow::Borrowed(error)))
    }

    /// The JSON of a settlement as done without a result.
    pub fn settled_json(by: &str, at_us: u64) -> String {
        to_string(&Wire::Settled {
            by: by.into(),
            at_us,
        })
    }

    /// The recorded result of `key` from its JSON.
    ///
    /// # Errors
    /// [`LedgerError::Corrupt`] naming the key when the text is not such JSON.
    pub fn from_json(key: &str, text: &str) -> Result<Recorded, LedgerError> {
        let wire: Wire<'static> = serde_json::from_str(text).map_err(|e| LedgerError::Corrupt {
            key: key.to_string(),
            why: format!("the recorded result is not a result: {e}"),
        })?;
        Ok(match wire {
            Wire::Output {
                structured,
                content,
            } => Recorded::Output(ToolOutput {
                structured: structured.map(std::borrow::Cow::into_owned),
                content: content.into_owned(),
            }),
            Wire::Error(e) => Recorded::Error(e.into_owned()),
            Wire::Settled { by, at_us } => Recorded::Settled {
                by: by.into_owned(),
                at_us,
            },
        })
    }
}

fn to_string(w: &Wire<'_>) -> String {
    // values, content blocks and errors always serialize
    serde_json::to_string(w).unwrap_or_else(|_| "null".to_string())
}
