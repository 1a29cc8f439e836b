//! Approval: who answers when the policy says [`crate::Decision::Ask`].

use crate::call::CallId;
use crate::spec::ToolSpec;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A question to the approver about one call.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The tool's contract.
    pub tool: &'a ToolSpec,
    /// The call id.
    pub call_id: &'a CallId,
    /// The session id.
    pub session_id: &'a str,
    /// The agent profile.
    pub profile: &'a str,
    /// The call's arguments (sanitized, schema-valid).
    pub arguments: &'a Value,
    /// The rule that asked.
    pub rule: &'a str,
    /// Why it asked.
    pub reason: &'a str,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalAnswer {
    /// Run the call.
    Approved,
    /// Do not run it; the caller's loop stops (fatal `approval_rejected`).
    Rejected {
        /// Why, for the operator.
        reason: String,
    },
    /// Do not run it, and tell the model this (recoverable `approval_corrected`).
    Corrected {
        /// Feedback for the model.
        feedback: String,
    },
}

/// Answers approval requests: a terminal prompt, an MCP client's elicitation, a test script.
pub trait Approver: Send + Sync {
    /// Answers one request. It may take as long as a person needs; the pipeline does not time
    /// it out, but the call's cancellation drops the future.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer>;
}

/// The approver when nobody can answer: every request is rejected.
#[derive(Debug, Clone, Copy, Default)]
pub struct NobodyApprover;

impl Approver for NobodyApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        let reason = format!(
            "tool {} needs approval ({}) and nobody can answer approval requests here",
            request.tool.name, request.reason
        );
        Box::pin(async move { ApprovalAnswer::Rejected { reason } })
    }
}

/// The operator approved in advance (for example `toolgate call --yes`): every request is
/// approved. Use it only for calls the operator has seen.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreApproved;

impl Approver for PreApproved {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async { ApprovalAnswer::Approved })
    }
}
