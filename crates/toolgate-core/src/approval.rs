//! Approval: who answers when the policy says [`crate::Decision::Ask`].

use crate::call::CallId;
use crate::grant::GrantRequest;
use crate::spec::ToolSpec;
use crate::tool::ResolvedResource;
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
    /// The resources the call touches (paths canonical, inside the workspace), for showing
    /// and for proposing a resource pattern to a scoped answer.
    pub resources: &'a [ResolvedResource],
    /// The rule that asked.
    pub rule: &'a str,
    /// Why it asked.
    pub reason: &'a str,
}

/// The approver's answer.
///
/// As JSON: `{"answer": "approved"}`, `{"answer": "approved_for", "grant": {"scope":
/// "session"}}`, `{"answer": "rejected", "reason": "..."}`, `{"answer": "corrected",
/// "feedback": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalAnswer {
    /// Run this call (once).
    Approved,
    /// Run this call, and let a grant approve calls like it without asking, for the scope
    /// and patterns of `grant` (stored by the pipeline's [`crate::GrantStore`]; without one,
    /// or for scope `once`, this is [`ApprovalAnswer::Approved`]).
    ApprovedFor {
        /// What to grant.
        grant: GrantRequest,
    },
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
    /// Not answered yet: the question went to the client, and the answer comes with the call
    /// sent again (an MCP 2026-07-28 input-required result, SEP-2322). The call does not run
    /// this time; it ends with [`crate::ErrorKind::InputRequired`] and is audited with the
    /// outcome `input_required` and the approval `pending`, not as a rejection.
    Pending {
        /// What was asked and of whom, for the operator.
        reason: String,
    },
}

/// Answers approval requests: a terminal prompt, an MCP client's elicitation, a test script.
pub trait Approver: Send + Sync {
    /// Answers one request. It may take as long as a person needs; the pipeline does not time
    /// it out, but the call's cancellation drops the future.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer>;

    /// Who answers, recorded as `granted_by` on the grants its scoped answers create
    /// (`terminal`, `mcp-client`; default `approver`).
    fn name(&self) -> &str {
        "approver"
    }
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
