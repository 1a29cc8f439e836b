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
    /// What the call would change, for the person asked, as the tool describes it
    /// ([`crate::Tool::preview`]): for `write_file` and `edit_file`, a unified diff of the file
    /// (bounded by the tool, about 32 KiB at most). It is text the model chose: an approver
    /// shows it escaped and cut to what its display holds. `None` when the tool gives none.
    pub preview: Option<&'a str>,
    /// Whether a scoped answer may be given ([`crate::Verdict::grantable`]); false: only this
    /// call can be approved, and an approver must not offer `session` or `always` (an
    /// [`ApprovalAnswer::ApprovedFor`] is taken as approving this call only).
    pub grantable: bool,
}

/// The approver's answer.
///
/// As JSON: `{"answer": "approved"}`, `{"answer": "approved_for", "grant": {"scope":
/// "session"}}`, `{"answer": "rejected", "reason": "..."}`, `{"answer": "nobody_to_ask",
/// "reason": "..."}`, `{"answer": "corrected", "feedback": "..."}`.
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
    /// Do not run it; the caller's loop stops (fatal `approval_rejected`, reason
    /// `not_approved`: the model is told nothing changed and to ask the user how to go on).
    Rejected {
        /// Why, for the operator.
        reason: String,
    },
    /// Nobody could answer (no terminal, an MCP client without elicitation, a question the
    /// client did not answer): the call does not run (fatal `approval_rejected`, reason
    /// `nobody_to_ask`), and the message says how the operator allows such calls.
    NobodyToAsk {
        /// Why nobody could answer, for the model and the operator (`this MCP client cannot
        /// show approval questions`).
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

/// The approver when nobody can answer: every request is answered
/// [`ApprovalAnswer::NobodyToAsk`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NobodyApprover;

impl Approver for NobodyApprover {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async {
            ApprovalAnswer::NobodyToAsk {
                reason: "no terminal or client here can show approval questions".into(),
            }
        })
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

/// A call's preview ([`ApprovalRequest::preview`]) as an approver shows it: every character
/// that could move the cursor, change colours or reorder text (C0 and C1 controls, ANSI
/// escape sequences, bidirectional overrides and isolates, zero-width characters, line and
/// paragraph separators) shown as `\u{..}` (a tab is kept), so a preview cannot redraw or
/// forge the question around it; at most `max_lines` lines and about `max_bytes` bytes, then a
/// line saying how many lines were left out.
pub fn show_preview(preview: &str, max_lines: usize, max_bytes: usize) -> String {
    let mut out = String::with_capacity(preview.len().min(max_bytes) + 64);
    let total = preview.lines().count();
    for (shown, line) in preview.lines().enumerate() {
        if shown == max_lines || out.len() >= max_bytes {
            out.push_str(&format!("[... {} more lines not shown]\n", total - shown));
            break;
        }
        for c in line.chars() {
            let hidden = (c.is_control() && c != '\t')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}');
            if hidden {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            } else {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::show_preview;

    #[test]
    fn previews_are_escaped_and_bounded() {
        let shown = show_preview("+a\u{1b}[2Jb\t\n-c\u{202e}d\r\n", 10, 1000);
        // a CRLF line ends at its CRLF; a lone CR is shown
        assert_eq!(shown, "+a\\u{1b}[2Jb\t\n-c\\u{202e}d\n");
        assert_eq!(show_preview("x\ry\n", 10, 100), "x\\u{d}y\n");
        let long: String = (0..100).map(|i| format!("+line {i}\n")).collect();
        let shown = show_preview(&long, 5, 10_000);
        assert_eq!(shown.lines().count(), 6, "{shown}");
        assert!(
            shown.ends_with("[... 95 more lines not shown]\n"),
            "{shown}"
        );
        let shown = show_preview(&long, 1000, 40);
        assert!(shown.len() < 80, "{shown}");
        assert!(shown.contains("more lines not shown"), "{shown}");
        assert_eq!(show_preview("", 5, 100), "");
    }
}
