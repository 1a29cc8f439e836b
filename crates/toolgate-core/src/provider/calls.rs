//! Calls read from a provider's message, and the batch that answers them.

use crate::call::{Arguments, ToolCall};
use crate::error::{ArgumentFault, ToolError};
use crate::result::ToolResult;
use std::time::Duration;

/// One tool call read from a provider's message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IncomingCall {
    /// The call to dispatch: the provider's id (or one made for it), the registry's name,
    /// the arguments as sent (`null`s for left-out properties removed, see
    /// [`NullPaths`](super::NullPaths)).
    pub call: ToolCall,
    /// The id the provider gave; `None` when it gave none (a Gemini `functionCall` without
    /// `id`), and the result then carries none either.
    pub provider_id: Option<String>,
    /// The name as the model wrote it (for a result that must repeat it: Gemini's
    /// `functionResponse.name`).
    pub provider_name: String,
    /// Set when the entry could not be read (no name, not an object, a type other than a
    /// function call): the call is answered with this recoverable `invalid_arguments` and not
    /// dispatched.
    pub rejected: Option<ToolError>,
}

impl IncomingCall {
    /// A readable call.
    pub(crate) fn new(
        id: Option<String>,
        provider_name: String,
        registry_name: &str,
        arguments: Arguments,
    ) -> Self {
        let call_id = id.clone().unwrap_or_else(made_id);
        IncomingCall {
            call: ToolCall {
                id: call_id.into(),
                name: registry_name.to_string(),
                arguments,
                version: None,
                // a provider's function call carries no idempotency key: a side-effecting
                // one gets a derived key like any call sent without one
                idempotency_key: None,
            },
            provider_id: id,
            provider_name,
            rejected: None,
        }
    }

    /// An entry that cannot be read: `what` says what was wrong and what to send instead.
    pub(crate) fn rejected(
        id: Option<String>,
        provider_name: Option<String>,
        pointer: String,
        what: String,
    ) -> Self {
        let name = provider_name.unwrap_or_default();
        let mut call = IncomingCall::new(
            id,
            name.clone(),
            &name,
            Arguments::Value(serde_json::Value::Null),
        );
        call.rejected = Some(ToolError::invalid_arguments(
            format!("the tool call could not be read: {what}"),
            vec![ArgumentFault {
                pointer,
                message: what,
            }],
        ));
        call
    }

    /// The result for a rejected call, `None` for one to dispatch.
    pub fn rejection(&self) -> Option<ToolResult> {
        self.rejected.as_ref().map(|e| {
            ToolResult::from_error(
                self.call.id.clone(),
                self.call.name.as_str().into(),
                e.clone(),
                Duration::ZERO,
            )
        })
    }
}

/// An id for a call the provider gave none: `tg_` and 16 random hex digits, so it is new in
/// any session.
fn made_id() -> String {
    format!("tg_{:016x}", rand::random::<u64>())
}

/// The calls of one provider message, in the message's order.
#[derive(Debug, Clone, PartialEq)]
pub struct CallBatch {
    pub(crate) calls: Vec<IncomingCall>,
}

impl CallBatch {
    /// Every call, rejected ones included, in order.
    pub fn calls(&self) -> &[IncomingCall] {
        &self.calls
    }

    /// The calls to dispatch (the readable ones), in order.
    pub fn to_dispatch(&self) -> Vec<ToolCall> {
        self.calls
            .iter()
            .filter(|c| c.rejected.is_none())
            .map(|c| c.call.clone())
            .collect()
    }

    /// Whether the message had no tool call.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The number of calls.
    pub fn len(&self) -> usize {
        self.calls.len()
    }
}
