//! Approval through the MCP client.
//!
//! The pipeline holds one approver; [`ClientApprover`] finds the client that made the call in
//! a task-local set by the handler around each dispatch, so one pipeline serves
//! every connection and the hot path pays nothing until a policy asks. When it asks:
//!
//! 1. the call came in on a 2026-07-28 request: the question goes back as an input-required
//!    result (see [`crate::mrtr`]), or the answer the client sent with its retry applies;
//! 2. the client declared form elicitation: `elicitation/create` with a confirmation form
//!    naming the tool, every resource the call touches (every command a shell line runs,
//!    every path: [`Asked`], secrets redacted; for a call the policy cannot name, such as a
//!    shell line it cannot read with certainty, the call's arguments in full: [`Asked::text`]),
//!    what a scoped answer covers, a summary of the
//!    arguments and the change (a diff for the file tools; [`confirmation_message`],
//!    [`confirmation_form`]); accept with `approve: true`
//!    runs the call, `approve: false` with feedback is a correction for the model, `approve:
//!    false` alone, decline and cancel reject it; an answer the form does not allow (a scope
//!    not offered, an expiry out of range, no `approve`) is not taken as a rejection: the
//!    question is asked again saying what was wrong, up to [`MAX_ANSWER_TRIES`] times; no
//!    answer in time means nobody could answer;
//!
//!    when the pipeline has a grant store, the form also offers a `scope` ([`ScopeOffer`]):
//!    `once` (the default), `session` (the rest of this connection's calls of the tool on the
//!    same commands and paths; not offered to a stateless 2026-07-28 HTTP request, whose
//!    calls run in the session of its caller, shared by every client sending the same
//!    credential until the server stops: more than a person answering about "this session"
//!    means) and `always` (every session, for `expires_hours`). A scoped answer grants the
//!    call's own resources ([`Asked::patterns`]), never the whole tool unless the call
//!    touches none; neither is offered when the message cannot show everything the call
//!    touches or a command cannot be named in a grant;
//! 3. otherwise nobody can answer ([`ApprovalAnswer::NobodyToAsk`]): the call does not run,
//!    and the model's message says so and how the operator allows such calls.

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
use toolgate_core::grant::Asked;
use toolgate_core::{ApprovalAnswer, ApprovalRequest, Approver, GrantRequest, GrantScope};

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
        offer: ScopeOffer,
        asked: Asked,
    },
}

/// The scopes an approval form offers besides `once`, and how long their grants hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeOffer {
    /// Offer `session`: the pipeline stores grants and the connection outlives the request.
    pub session: bool,
    /// Offer `always`: the pipeline stores grants.
    pub always: bool,
    /// Seconds a `session` grant holds (`None`: until its session ends or it is revoked).
    pub session_secs: Option<u64>,
    /// Seconds an `always` grant holds when the answer does not say (1 to `max_secs`).
    pub always_secs: u64,
    /// The longest expiry an answer may ask for with `expires_hours`, in seconds (at most
    /// [`MAX_ALWAYS_HOURS`] hours; the form offers whole hours up to it, and no
    /// `expires_hours` when it is under an hour).
    pub max_secs: u64,
}

/// The longest expiry of an `always` grant given through the form, in hours (a year).
pub const MAX_ALWAYS_HOURS: u32 = 8760;

impl ScopeOffer {
    /// Only `once`: the form asks approve or not, as without grants.
    pub const ONCE: ScopeOffer = ScopeOffer {
        session: false,
        always: false,
        session_secs: None,
        always_secs: 24 * 3600,
        max_secs: MAX_ALWAYS_HOURS as u64 * 3600,
    };

    /// The most `expires_hours` the form allows (0: the field is not offered).
    fn max_hours(&self) -> u64 {
        (self.max_secs / 3600).min(u64::from(MAX_ALWAYS_HOURS))
    }

    fn offers(&self, scope: GrantScope) -> bool {
        match scope {
            GrantScope::Once => true,
            GrantScope::Session => self.session,
            GrantScope::Always => self.always,
        }
    }
}

impl CallClient {
    /// What this call's form offers; `stateless` for a stateless HTTP request (no `session`:
    /// see the module documentation); scopes beyond `once` only when `asked` can be granted
    /// ([`Asked::scopable`]).
    pub(crate) fn offer(&self, stateless: bool, asked: &Asked) -> ScopeOffer {
        let grants = self.shared.pipeline.grants().is_some() && asked.scopable().is_some();
        ScopeOffer {
            session: grants && !stateless,
            always: grants,
            session_secs: self.shared.grant_secs.session,
            always_secs: self.shared.grant_secs.always,
            max_secs: self.shared.grant_secs.max,
        }
    }

    fn decide(&self, request: &ApprovalRequest<'_>) -> Decided {
        if mrtr::is_round_trip(&self.ctx) {
            return Decided::Now(mrtr::answer(self, request));
        }
        if !client_can_elicit(&self.ctx.peer) {
            return Decided::Now(cannot_answer(request));
        }
        let asked = Asked::of_request(request);
        Decided::Elicit {
            peer: self.ctx.peer.clone(),
            timeout: self.shared.approval_timeout,
            offer: self.offer(false, &asked),
            asked,
        }
    }
}

/// The answer when the client did not declare elicitation: nobody can be asked.
pub(crate) fn cannot_answer(_request: &ApprovalRequest<'_>) -> ApprovalAnswer {
    ApprovalAnswer::NobodyToAsk {
        reason: "this MCP client cannot show approval questions: it did not declare the \
                 elicitation capability"
            .into(),
    }
}

/// How many times an approval question is asked when the answers are not ones the form
/// allows, before the call is rejected.
pub const MAX_ANSWER_TRIES: u8 = 3;

/// An answer the form did not allow, and why, to tell the person who gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidAnswer(pub String);

/// The question asked again after an answer the form did not allow: what was wrong first.
pub(crate) fn ask_again(why: &InvalidAnswer, message: &str) -> String {
    format!(
        "Your answer could not be used: {}. Nothing has run yet; please answer again.\n\n{message}",
        why.0
    )
}

/// The rejection after [`MAX_ANSWER_TRIES`] answers the form did not allow.
pub(crate) fn no_valid_answer(why: &InvalidAnswer) -> ApprovalAnswer {
    ApprovalAnswer::Rejected {
        reason: format!(
            "no valid answer to the approval question after {MAX_ANSWER_TRIES} tries (the \
             last: {})",
            why.0
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
            Ok(Decided::Elicit {
                peer,
                timeout,
                offer,
                asked,
            }) => Box::pin(elicit(peer, timeout, offer, asked, request)),
        }
    }

    fn name(&self) -> &str {
        "mcp-client"
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
    offer: ScopeOffer,
    asked: Asked,
    request: &ApprovalRequest<'_>,
) -> ApprovalAnswer {
    let question = confirmation_message(request, &asked);
    let mut message = question.clone();
    let mut tries = 0;
    loop {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: confirmation_form(&offer, &asked),
        };
        let result = match peer
            .create_elicitation_with_timeout(params, Some(timeout))
            .await
        {
            Ok(result) => result,
            Err(e) => {
                return ApprovalAnswer::NobodyToAsk {
                    reason: format!("the MCP client did not answer the approval question: {e}"),
                }
            }
        };
        match read_elicit_result(&result, &offer, &asked) {
            Ok(answer) => return answer,
            Err(why) => {
                tries += 1;
                if tries >= MAX_ANSWER_TRIES {
                    return no_valid_answer(&why);
                }
                // tell the person what was wrong, and ask again
                message = ask_again(&why, &question);
            }
        }
    }
}

/// The answer an elicitation result gives, for a form that made `offer` about `asked`; an
/// answer the form does not allow is a rejection (see [`read_elicit_result`] to tell the
/// person instead).
#[cfg(test)]
pub(crate) fn from_elicit_result(
    result: &ElicitResult,
    offer: &ScopeOffer,
    asked: &Asked,
) -> ApprovalAnswer {
    read_elicit_result(result, offer, asked).unwrap_or_else(|why| ApprovalAnswer::Rejected {
        reason: format!("the approval answer is not one the form allowed: {}", why.0),
    })
}

/// The answer an elicitation result gives, for a form that made `offer` about `asked`.
///
/// # Errors
/// [`InvalidAnswer`] for an accepted form the person filled in wrong: `approve` missing or
/// not a boolean (without feedback), a scope not offered or unknown, an `expires_hours` out
/// of range. Decline, cancel and `approve: false` are answers (rejections), not errors.
pub fn read_elicit_result(
    result: &ElicitResult,
    offer: &ScopeOffer,
    asked: &Asked,
) -> Result<ApprovalAnswer, InvalidAnswer> {
    Ok(match result.action {
        ElicitationAction::Accept => {
            let content = result.content.as_ref();
            let approve = content.and_then(|c| c.get("approve"));
            let feedback = content
                .and_then(|c| c.get("feedback"))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|f| !f.is_empty());
            match (approve, feedback) {
                (Some(Value::Bool(true)), _) => scoped(content, offer, asked)?,
                (_, Some(feedback)) => ApprovalAnswer::Corrected {
                    feedback: feedback.to_string(),
                },
                (Some(Value::Bool(false)), None) => ApprovalAnswer::Rejected {
                    reason: "the user did not approve the call".into(),
                },
                (None | Some(Value::Null), None) => {
                    return Err(InvalidAnswer(
                        "approve was not answered; choose whether to approve the call".into(),
                    ))
                }
                (Some(other), None) => {
                    return Err(InvalidAnswer(format!(
                        "approve is {}, not true or false",
                        short(other)
                    )))
                }
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
    })
}

/// An approval with the scope the answer chose: no `scope` (a client that ignores the field)
/// or `once` approves this call; an offered `session` or `always` asks for a grant of the
/// tool on what was asked about ([`Asked::patterns`]; `session` for
/// [`ScopeOffer::session_secs`], `always` for `expires_hours`, default
/// [`ScopeOffer::always_secs`]).
///
/// # Errors
/// [`InvalidAnswer`] for a scope that was not offered, or an expiry outside 1 hour to
/// [`ScopeOffer::max_secs`]: the answer is not one the form allowed.
fn scoped(
    content: Option<&Value>,
    offer: &ScopeOffer,
    asked: &Asked,
) -> Result<ApprovalAnswer, InvalidAnswer> {
    let bad = |why: String| Err(InvalidAnswer(why));
    let scope = match content.and_then(|c| c.get("scope")) {
        None | Some(Value::Null) => GrantScope::Once,
        Some(Value::String(s)) => match s.parse::<GrantScope>() {
            Ok(scope) if offer.offers(scope) => scope,
            Ok(scope) => return bad(format!("scope {scope} was not offered here")),
            Err(e) => return bad(e.to_string().replace("invalid grant: ", "")),
        },
        Some(other) => return bad(format!("scope is {}, not one of the choices", short(other))),
    };
    let always_secs = match content.and_then(|c| c.get("expires_hours")) {
        None | Some(Value::Null) => offer.always_secs,
        Some(v) => match v.as_u64() {
            Some(h) if (1..=offer.max_hours()).contains(&h) => h * 3600,
            _ => {
                return bad(format!(
                    "expires_hours {} is not a whole number of hours from 1 to {}",
                    short(v),
                    offer.max_hours()
                ))
            }
        },
    };
    let resources = match (scope, asked.scopable()) {
        (GrantScope::Once, _) => return Ok(ApprovalAnswer::Approved),
        (_, Some(patterns)) => patterns,
        (_, None) => return bad(format!("scope {scope} was not offered here")),
    };
    Ok(ApprovalAnswer::ApprovedFor {
        grant: GrantRequest {
            expires_in_secs: match scope {
                GrantScope::Session => offer.session_secs,
                _ => Some(always_secs),
            },
            ..GrantRequest::on(scope, resources)
        },
    })
}

/// The confirmation form: a required boolean `approve`, an optional `feedback` string, and,
/// when `offer` offers more than `once`, a single-select `scope` (default `once`; its choices
/// say they cover the call's commands and paths, or every call of the tool when `asked`
/// names none) and, with `always`, an integer `expires_hours`.
pub fn confirmation_form(offer: &ScopeOffer, asked: &Asked) -> ElicitationSchema {
    let what = if asked.scopable().is_some_and(<[String]>::is_empty) {
        "Every call of this tool"
    } else {
        "These commands and paths"
    };
    let mut properties = json!({
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
    });
    if offer.session || offer.always {
        let mut choices = vec![json!({"const": "once", "title": "This call only"})];
        if offer.session {
            choices.push(json!({
                "const": "session",
                "title": format!("{what} for the rest of this session")
            }));
        }
        if offer.always {
            choices.push(json!({
                "const": "always",
                "title": format!("{what} in every session, until it expires")
            }));
            let max = offer.max_hours();
            if max >= 1 {
                properties["expires_hours"] = json!({
                    "type": "integer",
                    "title": "Expires after (hours)",
                    "description": "For always: hours until the approval stops applying",
                    "minimum": 1,
                    "maximum": max,
                    "default": (offer.always_secs / 3600).clamp(1, max)
                });
            }
        }
        properties["scope"] = json!({
            "type": "string",
            "title": "Approve for",
            "description": "How long the approval holds",
            "oneOf": choices,
            "default": "once"
        });
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": ["approve"]
    });
    ElicitationSchema::from_json_schema(schema.as_object().expect("an object").clone())
        .expect("the confirmation form is a valid elicitation schema")
}

/// Longest string value shown in an argument summary, in characters.
const MAX_VALUE_CHARS: usize = 120;
/// Longest argument summary, in bytes.
const MAX_SUMMARY_BYTES: usize = 1500;

/// Lines of a preview (a diff) shown in the question, at most.
pub const MAX_PREVIEW_LINES: usize = 80;
/// Bytes of a preview shown in the question, about.
pub const MAX_PREVIEW_BYTES: usize = 6 << 10;

/// The question: the tool, why it asks, every resource the call touches (each whole, secrets
/// redacted; or how many are not shown), what a scoped answer covers, the arguments
/// summarised (secrets redacted, long strings cut) and, when the tool gives one, what the call
/// would change (a unified diff for `write_file` and `edit_file`), escaped and cut to
/// [`MAX_PREVIEW_LINES`] and [`MAX_PREVIEW_BYTES`] ([`toolgate_core::show_preview`]).
pub fn confirmation_message(request: &ApprovalRequest<'_>, asked: &Asked) -> String {
    let tool = &request.tool.name;
    let title = request
        .tool
        .title
        .as_deref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let mut touches = String::new();
    for line in &asked.lines {
        touches.push_str("  ");
        touches.push_str(
            toolgate_core::redact::redact_str(line)
                .as_deref()
                .unwrap_or(line),
        );
        touches.push('\n');
    }
    if !asked.text.is_empty() {
        touches.push_str("The call in full (the policy cannot name everything it runs):\n");
        for line in &asked.text {
            touches.push_str("  | ");
            touches.push_str(
                toolgate_core::redact::redact_str(line)
                    .as_deref()
                    .unwrap_or(line),
            );
            touches.push('\n');
        }
    }
    if let Some(left_out) = asked.left_out() {
        touches.push_str(&format!("  NOT SHOWN: {left_out}\n"));
    }
    if asked.lines.is_empty() && asked.is_complete() {
        touches.push_str("  (nothing a grant could name)\n");
    }
    let coverage = asked.coverage(tool);
    let mut message = format!(
        "Allow the agent to run the tool {tool}{title}?\nWhy this asks: {}\nIt touches:\n{touches}\
         Scope: {}\nArguments:\n{}",
        request.reason,
        toolgate_core::redact::redact_str(&coverage).unwrap_or(coverage),
        summarize_arguments(request.arguments)
    );
    if let Some(preview) = request.preview {
        message.push_str("\nChange:\n");
        message.push_str(&toolgate_core::show_preview(
            preview,
            MAX_PREVIEW_LINES,
            MAX_PREVIEW_BYTES,
        ));
    }
    // one last pass over the whole question: no part of it (a nested argument's string, a
    // tool's title) shows a bidirectional override or a line separator as such
    match toolgate_core::sanitize::clean_output(&message) {
        std::borrow::Cow::Owned(clean) => clean,
        std::borrow::Cow::Borrowed(_) => message,
    }
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
        // a name is the model's text too: its line breaks and controls shown escaped
        let line = format!("  {}: {}\n", k.escape_debug(), short(v));
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
            // JSON escapes controls below U+0020 only; the rest (U+202E, U+2028, C1) here
            let text = toolgate_core::sanitize::clean_output(&other.to_string()).into_owned();
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

    /// What the tests' calls touch: one command.
    fn asked() -> Asked {
        Asked::of(&[toolgate_core::ResolvedResource::Command(
            "cargo test".into(),
        )])
    }

    fn on(scope: GrantScope) -> GrantRequest {
        GrantRequest::on(scope, &["command:cargo test".to_string()])
    }

    const ALL: ScopeOffer = ScopeOffer {
        session: true,
        always: true,
        ..ScopeOffer::ONCE
    };

    #[test]
    fn answers_map_onto_approval() {
        for offer in [ScopeOffer::ONCE, ALL] {
            assert_eq!(
                from_elicit_result(&accept(json!({"approve": true})), &offer, &asked()),
                ApprovalAnswer::Approved
            );
            assert_eq!(
                from_elicit_result(
                    &accept(json!({"approve": false, "feedback": " use b.txt "})),
                    &offer,
                    &asked()
                ),
                ApprovalAnswer::Corrected {
                    feedback: "use b.txt".into()
                }
            );
            assert!(matches!(
                from_elicit_result(&accept(json!({"approve": false})), &offer, &asked()),
                ApprovalAnswer::Rejected { .. }
            ));
            let decline: ElicitResult =
                serde_json::from_value(json!({"action": "decline"})).unwrap();
            assert!(matches!(
                from_elicit_result(&decline, &offer, &asked()),
                ApprovalAnswer::Rejected { .. }
            ));
        }
    }

    #[test]
    fn scopes_map_onto_grant_requests() {
        let answer = |content: Value, offer: &ScopeOffer| {
            from_elicit_result(&accept(content), offer, &asked())
        };
        assert_eq!(
            answer(json!({"approve": true, "scope": "once"}), &ALL),
            ApprovalAnswer::Approved
        );
        assert_eq!(
            answer(json!({"approve": true, "scope": "session"}), &ALL),
            ApprovalAnswer::ApprovedFor {
                grant: on(GrantScope::Session)
            }
        );
        let always = |secs| ApprovalAnswer::ApprovedFor {
            grant: GrantRequest {
                expires_in_secs: Some(secs),
                ..on(GrantScope::Always)
            },
        };
        assert_eq!(
            answer(json!({"approve": true, "scope": "always"}), &ALL),
            always(24 * 3600)
        );
        assert_eq!(
            answer(
                json!({"approve": true, "scope": "always", "expires_hours": 2}),
                &ALL
            ),
            always(7200)
        );
        // answers the form did not allow reject: never a broader approval than offered
        for (content, offer) in [
            (
                json!({"approve": true, "scope": "session"}),
                ScopeOffer::ONCE,
            ),
            (
                json!({"approve": true, "scope": "always"}),
                ScopeOffer::ONCE,
            ),
            (
                json!({"approve": true, "scope": "session"}),
                ScopeOffer {
                    session: false,
                    ..ALL
                },
            ),
            (json!({"approve": true, "scope": "forever"}), ALL),
            (json!({"approve": true, "scope": 3}), ALL),
            (
                json!({"approve": true, "scope": "always", "expires_hours": 0}),
                ALL,
            ),
            (
                json!({"approve": true, "scope": "always", "expires_hours": 9000}),
                ALL,
            ),
            (
                json!({"approve": true, "scope": "always", "expires_hours": "2"}),
                ALL,
            ),
            (
                json!({"approve": true, "scope": "always", "expires_hours": -1}),
                ALL,
            ),
        ] {
            let a = answer(content.clone(), &offer);
            assert!(
                matches!(&a, ApprovalAnswer::Rejected { reason } if reason.contains("not one the form allowed")),
                "{content}: {a:?}"
            );
        }
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
        // strings nested in objects and arrays, and the names, show no override or separator
        let s = summarize_arguments(&json!({
            "json": {"amount": "\u{202e}0001"},
            "headers": {"X-Memo": "ok\u{2028}\u{2028}It touches:\u{2028}  url https://bank"},
            "list": ["\u{202e}abc", "\u{85}x"],
            "odd\nIt touches:": 1,
        }));
        for c in ['\u{202e}', '\u{2028}', '\u{85}'] {
            assert!(!s.contains(c), "{c:?}: {s}");
        }
        assert!(
            s.contains("\\u{202e}0001") && s.contains("\\u{2028}"),
            "{s}"
        );
        assert_eq!(s.lines().count(), 4, "{s}");
    }

    #[test]
    fn the_form_serializes_as_a_flat_object_schema() {
        let v = serde_json::to_value(confirmation_form(&ScopeOffer::ONCE, &asked())).unwrap();
        assert_eq!(v["properties"]["approve"]["type"], "boolean");
        assert_eq!(v["required"], json!(["approve"]));
        assert!(v["properties"].get("scope").is_none(), "{v}");
        let v = serde_json::to_value(confirmation_form(&ALL, &asked())).unwrap();
        assert_eq!(
            v["properties"]["scope"],
            json!({
                "type": "string",
                "title": "Approve for",
                "description": "How long the approval holds",
                "oneOf": [
                    {"const": "once", "title": "This call only"},
                    {"const": "session", "title": "These commands and paths for the rest of this session"},
                    {"const": "always", "title": "These commands and paths in every session, until it expires"}
                ],
                "default": "once"
            })
        );
        assert_eq!(v["properties"]["expires_hours"]["default"], 24);
        let v = serde_json::to_value(confirmation_form(
            &ScopeOffer {
                session: false,
                ..ALL
            },
            &asked(),
        ))
        .unwrap();
        let offered: Vec<&Value> = v["properties"]["scope"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["const"])
            .collect();
        assert_eq!(offered, [&json!("once"), &json!("always")]);
    }

    /// The configured expiries: a session grant's, the default of an always grant (in
    /// seconds, not only whole hours), and the cap on what an answer may ask for.
    #[test]
    fn configured_expiries_apply_and_the_cap_holds() {
        let offer = ScopeOffer {
            session_secs: Some(90),
            always_secs: 2,
            max_secs: 3 * 3600 + 59,
            ..ALL
        };
        let answer = |content: Value| from_elicit_result(&accept(content), &offer, &asked());
        let expiry = |a: ApprovalAnswer| match a {
            ApprovalAnswer::ApprovedFor { grant } => Ok(grant.expires_in_secs),
            other => Err(other),
        };
        let approve = |scope: &str| json!({"approve": true, "scope": scope});
        assert_eq!(expiry(answer(approve("session"))), Ok(Some(90)));
        assert_eq!(expiry(answer(approve("always"))), Ok(Some(2)));
        let three = json!({"approve": true, "scope": "always", "expires_hours": 3});
        assert_eq!(expiry(answer(three)), Ok(Some(3 * 3600)));
        let four = json!({"approve": true, "scope": "always", "expires_hours": 4});
        assert!(matches!(
            answer(four),
            ApprovalAnswer::Rejected { reason } if reason.contains("from 1 to 3")
        ));
        let form = serde_json::to_value(confirmation_form(&offer, &asked())).unwrap();
        let hours = &form["properties"]["expires_hours"];
        assert_eq!(
            (&hours["maximum"], &hours["default"]),
            (&json!(3), &json!(1))
        );
        // a cap under an hour: the form offers no expires_hours, and none is accepted
        let short = ScopeOffer {
            max_secs: 1800,
            always_secs: 1800,
            ..offer
        };
        let form = serde_json::to_value(confirmation_form(&short, &asked())).unwrap();
        assert!(form["properties"].get("expires_hours").is_none(), "{form}");
        assert!(matches!(
            from_elicit_result(
                &accept(json!({"approve": true, "scope": "always", "expires_hours": 1})),
                &short,
                &asked()
            ),
            ApprovalAnswer::Rejected { .. }
        ));
    }

    fn request_of<'a>(
        spec: &'a toolgate_core::ToolSpec,
        id: &'a toolgate_core::CallId,
        arguments: &'a Value,
        resources: &'a [toolgate_core::ResolvedResource],
    ) -> ApprovalRequest<'a> {
        ApprovalRequest {
            tool: spec,
            call_id: id,
            session_id: "s1",
            profile: "default",
            arguments,
            resources,
            rule: "shell.unlisted",
            reason: "no rule allows them",
            preview: None,
            grantable: true,
        }
    }

    /// A line of 21 harmless commands and `touch x` over MCP: the message names every command
    /// (not the first 120 characters of the line), secrets redacted, and says what a scoped
    /// answer covers; an answer takes exactly those commands.
    #[test]
    fn the_message_shows_every_command_and_scoped_answers_take_only_those() {
        let spec = toolgate_core::ToolSpec::builder("run_shell")
            .build()
            .unwrap();
        let id = toolgate_core::CallId::from("c1");
        let mut resources: Vec<toolgate_core::ResolvedResource> = (0..21)
            .map(|i| toolgate_core::ResolvedResource::Command(format!("echo {i}")))
            .collect();
        resources.push(toolgate_core::ResolvedResource::Command("touch x".into()));
        let command = json!({"command": "echo 0 && ... && touch x"});
        let request = request_of(&spec, &id, &command, &resources);
        let asked = Asked::of(&resources);
        let message = confirmation_message(&request, &asked);
        assert!(message.contains("\n  command touch x\n"), "{message}");
        assert!(message.contains("\n  command echo 20\n"), "{message}");
        assert!(
            message.contains(
                "Scope: a session or always approval covers run_shell on command:echo 0,"
            ),
            "{message}"
        );
        let a = from_elicit_result(
            &accept(json!({"approve": true, "scope": "session"})),
            &ALL,
            &asked,
        );
        let ApprovalAnswer::ApprovedFor { grant } = a else {
            panic!("{a:?}")
        };
        assert_eq!(grant.resources.len(), 22);
        assert_eq!(grant.resources.last().unwrap(), "command:touch x");
    }

    /// What the message cannot show in full, or a command a grant cannot name, leaves only
    /// `once`: a client answering `session` or `always` anyway is refused.
    #[test]
    fn an_incomplete_question_grants_nothing_beyond_the_call() {
        let spec = toolgate_core::ToolSpec::builder("run_shell")
            .build()
            .unwrap();
        let id = toolgate_core::CallId::from("c1");
        let many: Vec<toolgate_core::ResolvedResource> = (0..toolgate_core::grant::MAX_SHOWN + 2)
            .map(|i| toolgate_core::ResolvedResource::Command(format!("echo {i}")))
            .collect();
        let unnamed = vec![toolgate_core::ResolvedResource::Command(
            "rm -rf $DIR".into(),
        )];
        let secret = vec![toolgate_core::ResolvedResource::Command(
            "curl -H 'Authorization: Bearer ghp_0123456789abcdefABCDEF' x".into(),
        )];
        for resources in [many, unnamed, secret] {
            let args = json!({});
            let request = request_of(&spec, &id, &args, &resources);
            let asked = Asked::of(&resources);
            let message = confirmation_message(&request, &asked);
            assert!(message.contains("is not offered"), "{message}");
            assert!(!message.contains("ghp_0123"), "{message}");
            for scope in ["session", "always"] {
                let a = from_elicit_result(
                    &accept(json!({"approve": true, "scope": scope})),
                    &ALL,
                    &asked,
                );
                assert!(
                    matches!(&a, ApprovalAnswer::Rejected { reason } if reason.contains("not one the form allowed")),
                    "{a:?}"
                );
            }
        }
    }
}
