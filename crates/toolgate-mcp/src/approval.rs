//! Approval through the MCP client.
//!
//! The pipeline holds one approver; [`ClientApprover`] finds the client that made the call in
//! a task-local set by the handler around each dispatch, so one pipeline serves
//! every connection and the hot path pays nothing until a policy asks. When it asks:
//!
//! 1. the call came in on a 2026-07-28 request: the question goes back as an input-required
//!    result (see [`crate::mrtr`]), or the answer the client sent with its retry applies;
//! 2. the client declared form elicitation: `elicitation/create` with a confirmation form
//!    naming the tool and summarising the arguments ([`confirmation_form`]); accept with
//!    `approve: true` runs the call, `approve: false` with feedback is a correction for the
//!    model, anything else (decline, cancel, no answer in time) rejects it;
//! 3. otherwise nobody can answer, and the call is rejected (the non-interactive answer).

use crate::mrtr;
use crate::server::Shared;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, ErrorData,
    InputRequiredResult, InputResponses,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{ApprovalAnswer, ApprovalRequest, Approver};

/// Who can answer for the call running in this task: the request it came in on, and for a
/// 2026-07-28 retry the answer it carries. Set by the handler around each dispatch.
pub(crate) struct CallClient {
    pub(crate) ctx: RequestContext<RoleServer>,
    pub(crate) shared: Arc<Shared>,
    /// `requestState` of a 2026-07-28 retry.
    pub(crate) request_state: Option<String>,
    /// `inputResponses` of a 2026-07-28 retry.
    pub(crate) input_responses: Option<InputResponses>,
    /// The input-required result this round leaves behind, when the policy asked.
    pub(crate) question: Mutex<Option<InputRequiredResult>>,
    /// Set once the tool reports its own progress ([`crate::request::report_progress`]);
    /// present when the client sent a progress token.
    pub(crate) tool_reports_progress: Option<Arc<AtomicBool>>,
    /// The lowest level of log message the client asked for (a `LoggingLevel` as `u8`), or
    /// [`crate::handler::LEVEL_UNSET`] when it asked for none.
    pub(crate) log_level: u8,
    /// The JSON-RPC error the tool asked the request to fail with
    /// ([`crate::request::fail_request`]).
    pub(crate) protocol_error: Mutex<Option<ErrorData>>,
}

/// What a dispatch leaves behind besides its result: a question for the client (an
/// input-required result), or a JSON-RPC error a tool asked for.
pub(crate) struct LeftBehind {
    pub(crate) question: Option<InputRequiredResult>,
    pub(crate) protocol_error: Option<ErrorData>,
}

tokio::task_local! {
    pub(crate) static CLIENT: CallClient;
}

/// Runs `fut` (one dispatch) with `client` as the one who answers approval requests; returns
/// its output and what it left behind.
pub(crate) async fn in_call<F: Future>(client: CallClient, fut: F) -> (F::Output, LeftBehind) {
    CLIENT
        .scope(client, async {
            let out = fut.await;
            let left = CLIENT.with(|c| LeftBehind {
                question: c.question.lock().take(),
                protocol_error: c.protocol_error.lock().take(),
            });
            (out, left)
        })
        .await
}

enum Decided {
    Now(ApprovalAnswer),
    Elicit {
        peer: Peer<RoleServer>,
        timeout: Duration,
    },
}

impl CallClient {
    fn decide(&self, request: &ApprovalRequest<'_>) -> Decided {
        if mrtr::is_round_trip(&self.ctx) {
            return Decided::Now(mrtr::answer(self, request));
        }
        if !client_can_elicit(&self.ctx.peer) {
            return Decided::Now(cannot_answer(request));
        }
        Decided::Elicit {
            peer: self.ctx.peer.clone(),
            timeout: self.shared.approval_timeout,
        }
    }
}

/// The answer when the client did not declare elicitation: the non-interactive one (deny).
pub(crate) fn cannot_answer(request: &ApprovalRequest<'_>) -> ApprovalAnswer {
    ApprovalAnswer::Rejected {
        reason: format!(
            "tool {} needs approval ({}) and the MCP client cannot answer: it did not declare \
             the elicitation capability",
            request.tool.name, request.reason
        ),
    }
}

/// The approver for an MCP server: asks the client that made the call (see the module
/// documentation); a call made outside an MCP request goes to the fallback.
pub struct ClientApprover {
    fallback: Arc<dyn Approver>,
}

impl Default for ClientApprover {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientApprover {
    /// An approver whose fallback rejects every request.
    pub fn new() -> Self {
        ClientApprover {
            fallback: Arc::new(toolgate_core::NobodyApprover),
        }
    }

    /// Sets the approver for calls not made through an MCP request.
    pub fn with_fallback(mut self, fallback: Arc<dyn Approver>) -> Self {
        self.fallback = fallback;
        self
    }
}

impl Approver for ClientApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        match CLIENT.try_with(|c| c.decide(request)) {
            Err(_) => self.fallback.approve(request),
            Ok(Decided::Now(answer)) => Box::pin(std::future::ready(answer)),
            Ok(Decided::Elicit { peer, timeout }) => Box::pin(elicit(peer, timeout, request)),
        }
    }
}

/// Whether a legacy (`initialize`) client declared form elicitation.
pub(crate) fn client_can_elicit(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

async fn elicit(
    peer: Peer<RoleServer>,
    timeout: Duration,
    request: &ApprovalRequest<'_>,
) -> ApprovalAnswer {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: confirmation_message(request),
        requested_schema: confirmation_form(),
    };
    match peer
        .create_elicitation_with_timeout(params, Some(timeout))
        .await
    {
        Ok(answer) => from_elicit_result(&answer),
        Err(e) => ApprovalAnswer::Rejected {
            reason: format!("the approval request to the client failed: {e}"),
        },
    }
}

/// The answer an elicitation result gives.
pub(crate) fn from_elicit_result(result: &ElicitResult) -> ApprovalAnswer {
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.as_ref();
            let approve = content
                .and_then(|c| c.get("approve"))
                .and_then(Value::as_bool);
            let feedback = content
                .and_then(|c| c.get("feedback"))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|f| !f.is_empty());
            match (approve, feedback) {
                (Some(true), _) => ApprovalAnswer::Approved,
                (_, Some(feedback)) => ApprovalAnswer::Corrected {
                    feedback: feedback.to_string(),
                },
                _ => ApprovalAnswer::Rejected {
                    reason: "the user did not approve the call".into(),
                },
            }
        }
        ElicitationAction::Decline => ApprovalAnswer::Rejected {
            reason: "the user declined the call".into(),
        },
        ElicitationAction::Cancel => ApprovalAnswer::Rejected {
            reason: "the user dismissed the approval request".into(),
        },
        _ => ApprovalAnswer::Rejected {
            reason: "the client answered the approval request with an unknown action".into(),
        },
    }
}

/// The confirmation form: a required boolean `approve` and an optional `feedback` string.
pub fn confirmation_form() -> ElicitationSchema {
    ElicitationSchema::from_json_schema(
        json!({
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Run this tool call",
                    "default": false
                },
                "feedback": {
                    "type": "string",
                    "title": "Feedback",
                    "description": "If you do not approve: what the agent should do instead"
                }
            },
            "required": ["approve"]
        })
        .as_object()
        .expect("an object")
        .clone(),
    )
    .expect("the confirmation form is a valid elicitation schema")
}

/// Longest string value shown in an argument summary, in characters.
const MAX_VALUE_CHARS: usize = 120;
/// Longest argument summary, in bytes.
const MAX_SUMMARY_BYTES: usize = 1500;

/// The question: the tool, why it asks, and the arguments summarised (secrets redacted,
/// long strings cut).
pub fn confirmation_message(request: &ApprovalRequest<'_>) -> String {
    let tool = &request.tool.name;
    let title = request
        .tool
        .title
        .as_deref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    format!(
        "Allow the agent to run the tool {tool}{title}?\nWhy this asks: {}\nArguments:\n{}",
        request.reason,
        summarize_arguments(request.arguments)
    )
}

/// One line per top-level argument: `name: value`, secrets redacted, long strings cut.
pub fn summarize_arguments(arguments: &Value) -> String {
    let mut redacted = arguments.clone();
    toolgate_core::redact::redact(&mut redacted);
    let Value::Object(map) = &redacted else {
        return format!("  {}", short(&redacted));
    };
    if map.is_empty() {
        return "  (none)".into();
    }
    let mut out = String::new();
    for (k, v) in map {
        let line = format!("  {k}: {}\n", short(v));
        if out.len() + line.len() > MAX_SUMMARY_BYTES {
            out.push_str("  ...\n");
            break;
        }
        out.push_str(&line);
    }
    out.pop();
    out
}

fn short(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            if n > MAX_VALUE_CHARS {
                let head: String = s.chars().take(MAX_VALUE_CHARS).collect();
                format!("{head:?}... ({n} characters)")
            } else {
                format!("{s:?}")
            }
        }
        other => {
            let text = other.to_string();
            if text.len() > MAX_VALUE_CHARS {
                let mut end = MAX_VALUE_CHARS;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}... ({} bytes)", &text[..end], text.len())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn accept(content: Value) -> ElicitResult {
        serde_json::from_value(json!({"action": "accept", "content": content})).unwrap()
    }

    #[test]
    fn answers_map_onto_approval() {
        assert_eq!(
            from_elicit_result(&accept(json!({"approve": true}))),
            ApprovalAnswer::Approved
        );
        assert_eq!(
            from_elicit_result(&accept(
                json!({"approve": false, "feedback": " use b.txt "})
            )),
            ApprovalAnswer::Corrected {
                feedback: "use b.txt".into()
            }
        );
        assert!(matches!(
            from_elicit_result(&accept(json!({"approve": false}))),
            ApprovalAnswer::Rejected { .. }
        ));
        let decline: ElicitResult = serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert!(matches!(
            from_elicit_result(&decline),
            ApprovalAnswer::Rejected { .. }
        ));
    }

    #[test]
    fn summary_redacts_and_cuts() {
        let s = summarize_arguments(&json!({
            "path": "a.txt",
            "content": "x".repeat(500),
            "api_key": "sk-live-123",
        }));
        assert!(s.contains("path: \"a.txt\""), "{s}");
        assert!(s.contains("(500 characters)"), "{s}");
        assert!(!s.contains("sk-live-123"), "{s}");
    }

    #[test]
    fn the_form_serializes_as_a_flat_object_schema() {
        let v = serde_json::to_value(confirmation_form()).unwrap();
        assert_eq!(v["properties"]["approve"]["type"], "boolean");
        assert_eq!(v["required"], json!(["approve"]));
    }
}
