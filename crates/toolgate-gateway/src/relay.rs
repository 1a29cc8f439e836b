//! An upstream's requests to the client of the call it is serving (`sampling/createMessage`,
//! specification 2025-11-25 "Sampling"; `elicitation/create`, "Elicitation"), relayed when
//! the operator opted in (`[[upstreams]] relay`).
//!
//! A request names no call of the gateway's, so it is routed as log messages are
//! ([`crate::logs`]): while a call of the upstream runs, its session and its client are
//! routed (`RequestRoutes::route`); a request goes to the client of the one session whose
//! calls are in flight. It is relayed only when all of these hold, else the upstream gets a
//! JSON-RPC error saying which failed:
//!
//! 1. the upstream's entry lists the kind in `relay` (and so the gateway declared the
//!    capability to it);
//! 2. calls of the upstream are in flight, all of one session;
//! 3. that session's client can be sent requests (an MCP session on a connection, not a
//!    2026-07-28 request) and declared the capability in its `initialize` (for elicitation,
//!    form mode: URL mode is never relayed; for sampling, no `tools`, no `tool_use` or
//!    `tool_result` content and no `includeContext` but `none`).
//!
//! The request is relayed with the text a person or a model reads cleaned like an output
//! (invisible and bidirectional characters removed) and its `_meta` left out; data the client
//! answers with or acts on (property names, enum values, defaults, stop sequences...) is
//! never changed: a request whose data would need cleaning is refused, saying where
//! (`relay/shown.rs`). A request over [`MAX_RELAYED_BYTES`] as JSON is refused. An
//! elicitation's message is prefixed `The upstream server <name> asks: `, so the user can
//! tell it from toolgate's own questions (approvals). It is bounded by the session's call in
//! flight that ends last: that call's deadline, its cancellation or
//! its end stops the relay (the client gets `notifications/cancelled`), as does the
//! upstream's own cancellation of its request. Each relayed or refused request is an audit
//! record (tool `toolgate.upstream.<name>.sampling` or `.elicitation`, the session and
//! profile of the call, call id `<call id>/<kind>`), a tracing event and a count
//! (`toolgate_upstream_relayed_total{upstream, kind, outcome}`).

// sampling: deprecated by SEP-2577, still what 2025-11-25 servers and clients use.
#![allow(deprecated)]

mod shown;
mod unreadable;

use crate::flood::Budgets;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientResult, ContextInclusion, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ErrorCode, ErrorData, SamplingContent, SamplingMessage,
    SamplingMessageContentBlock, ServerRequest,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use toolgate_config::upstreams::{NotificationKind, RelayKind};
use toolgate_core::audit::{AuditRecord, AuditSink, Outcome};
use toolgate_core::{ErrorKind, ToolContext};

/// JSON-RPC error code of a relayed request that got no answer before the call it was made
/// for ended (timed out or cancelled), as MCP's SDKs use for a request timeout.
pub const RELAY_ENDED: ErrorCode = ErrorCode(-32001);

/// The most a relayed request's params may take as JSON, in bytes (256 KiB): its messages'
/// text, system prompt, images and audio, or its elicitation message and schema. A larger one
/// is refused before the client sees it.
pub const MAX_RELAYED_BYTES: u64 = 256 * 1024;

/// Why a relay ended at the deadline of the call it was made for.
const TIMED_OUT: &str = "the call it was made for ran past its timeout";

/// Sends a request to a client and answers its answer; dropping the future before the
/// answer cancels the request at the client (`notifications/cancelled`).
pub type SendToClient = Arc<
    dyn Fn(ServerRequest) -> BoxFuture<'static, Result<ClientResult, rmcp::ServiceError>>
        + Send
        + Sync,
>;

/// The client of one call, as the relay sees it.
#[derive(Clone)]
pub struct RelayClient {
    /// What it declared in its `initialize` (none known: `None`).
    pub capabilities: Option<ClientCapabilities>,
    /// How to send it a request.
    pub send: SendToClient,
}

/// Called in a call's task, as the call starts: the [`RelayClient`] of its client, when it
/// can be sent requests (an MCP session on a connection, not a 2026-07-28 request).
pub type ClientRequestHook = Arc<dyn Fn() -> Option<RelayClient> + Send + Sync>;

/// One call of the upstream in flight: what a request relayed for it needs.
struct Route {
    id: u64,
    call: Target,
}

/// The calls of one upstream in flight, for its requests.
#[derive(Default)]
pub(crate) struct RequestRoutes {
    routes: Mutex<Vec<Route>>,
    next: AtomicU64,
}

/// Removes its route when the call ends, and ends a relay still waiting for it.
pub(crate) struct RequestRoute {
    routes: Arc<RequestRoutes>,
    id: u64,
}

impl Drop for RequestRoute {
    fn drop(&mut self) {
        let mut routes = self.routes.routes.lock();
        if let Some(i) = routes.iter().position(|r| r.id == self.id) {
            routes.swap_remove(i).call.ended.cancel();
        }
    }
}

/// The call a request is relayed for.
#[derive(Clone)]
struct Target {
    session: Arc<str>,
    profile: Arc<str>,
    call_id: toolgate_core::CallId,
    /// `None` when it cannot be sent requests.
    client: Option<RelayClient>,
    deadline: tokio::time::Instant,
    /// Cancelled when the call is cancelled or ends.
    ended: CancellationToken,
}

impl RequestRoutes {
    /// Routes the upstream's requests to `client` (the client of the call of `ctx`, `None`
    /// when it cannot be sent requests) until the guard is dropped.
    pub(crate) fn route(
        self: &Arc<Self>,
        ctx: &ToolContext,
        client: Option<RelayClient>,
    ) -> RequestRoute {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.routes.lock().push(Route {
            id,
            call: Target {
                session: Arc::from(ctx.session_id()),
                profile: Arc::from(ctx.profile()),
                call_id: ctx.call_id().clone(),
                client,
                deadline: tokio::time::Instant::from_std(ctx.deadline()),
                ended: ctx.cancellation().child_token(),
            },
        });
        RequestRoute {
            routes: self.clone(),
            id,
        }
    }

    /// The one session's call in flight that ends last, or why there is none.
    fn target(&self) -> Result<Target, &'static str> {
        let routes = self.routes.lock();
        let first = routes
            .first()
            .ok_or("no call of the upstream is in flight")?;
        if routes.iter().any(|r| r.call.session != first.call.session) {
            return Err(
                "calls of more than one session are in flight, so whose it is cannot \
                        be told",
            );
        }
        let last = routes
            .iter()
            .max_by_key(|r| r.call.deadline)
            .unwrap_or(first);
        Ok(last.call.clone())
    }
}

/// What relays one upstream's requests: its name, what its entry opts in to, its routes and
/// where the records go.
pub(crate) struct Relay {
    pub(crate) upstream: String,
    pub(crate) kinds: Vec<RelayKind>,
    pub(crate) routes: Arc<RequestRoutes>,
    /// The upstream's budgets: its requests have one ([`NotificationKind::Requests`]).
    pub(crate) budgets: Arc<Budgets>,
    /// The pipeline's audit sink, once the gateway is attached to a pipeline.
    pub(crate) audit: Arc<dyn Fn() -> Option<Arc<dyn AuditSink>> + Send + Sync>,
}

impl Relay {
    /// Relays a `sampling/createMessage` of the upstream; `cancelled` is the upstream's
    /// cancellation of it.
    pub(crate) async fn create_message(
        &self,
        mut params: CreateMessageRequestParams,
        cancelled: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        let kind = RelayKind::Sampling;
        self.admit(kind)?;
        params.meta = None;
        let refused = self.refused(kind).or_else(|| {
            (params.tools.is_some() || params.tool_choice.is_some()).then(|| {
                "it names tools for the model (`tools`, `toolChoice`), which the gateway does \
                 not relay"
                    .to_string()
            })
        });
        // the gateway declared sampling without `context`: the client's context (its other
        // servers', the session's other upstreams' results) must not reach this upstream
        let refused = refused.or_else(|| {
            params
                .include_context
                .as_ref()
                .filter(|c| !matches!(c, ContextInclusion::None))
                .map(|c| {
                    format!(
                        "it asks for the client's context (`includeContext` {}), which the \
                         gateway does not relay: send `none` or leave it out",
                        serde_json::to_string(c).unwrap_or_default()
                    )
                })
        });
        let refused = refused.or_else(|| tool_content(&params.messages));
        self.relay(
            kind,
            refused,
            params,
            cancelled,
            |p| ServerRequest::CreateMessageRequest(CreateMessageRequest::new(p)),
            shown::SAMPLING,
            |c| c.sampling.is_some(),
            |r| match r {
                ClientResult::CreateMessageResult(m) => Some(*m),
                _ => None,
            },
        )
        .await
    }

    /// Relays an `elicitation/create` of the upstream (form mode only); `cancelled` is the
    /// upstream's cancellation of it.
    pub(crate) async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        cancelled: CancellationToken,
    ) -> Result<ElicitResult, ErrorData> {
        let kind = RelayKind::Elicitation;
        self.admit(kind)?;
        let (params, refused) = match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                // the user is told who asks: an upstream's question must not pass for
                // toolgate's own (an approval is asked by elicitation too)
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: format!("The upstream server {} asks: {message}", self.upstream),
                    requested_schema,
                },
                self.refused(kind),
            ),
            url => (
                url,
                Some(
                    "it is a URL-mode elicitation, which the gateway does not relay (form mode \
                     only)"
                        .to_string(),
                ),
            ),
        };
        // form mode: an `elicitation` capability with `form`, or empty (the 2025-06-18 form)
        let declares = |c: &ClientCapabilities| {
            c.elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none())
        };
        self.relay(
            kind,
            refused,
            params,
            cancelled,
            |p| ServerRequest::ElicitRequest(ElicitRequest::new(p)),
            shown::ELICITATION,
            declares,
            |r| match r {
                ClientResult::ElicitResult(e) => Some(e),
                _ => None,
            },
        )
        .await
    }

    /// A request within the upstream's budget of requests; one over it is answered at once
    /// with an error, neither relayed nor audited (counted and logged once a window by the
    /// budget, like a notification dropped), so an upstream cannot flood the client or the
    /// audit with requests, opted in or not.
    fn admit(&self, kind: RelayKind) -> Result<(), ErrorData> {
        if self.budgets.of(NotificationKind::Requests).admit() {
            return Ok(());
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "{} refused: the upstream sent more requests than its budget \
                 ([upstreams.notifications] requests); send fewer",
                what(kind)
            ),
            None,
        ))
    }

    /// Why the entry does not relay `kind`, if it does not.
    fn refused(&self, kind: RelayKind) -> Option<String> {
        (!self.kinds.contains(&kind)).then(|| {
            format!(
                "the operator did not opt this upstream in to relaying {} (`relay` of its \
                 [[upstreams]] entry)",
                what(kind)
            )
        })
    }

    /// Relays `params` to the client of the one session in flight, unless `refused` or a
    /// routing condition fails; records the outcome.
    #[allow(clippy::too_many_arguments)]
    async fn relay<P, R>(
        &self,
        kind: RelayKind,
        refused: Option<String>,
        params: P,
        cancelled: CancellationToken,
        request: fn(P) -> ServerRequest,
        shown: &[&str],
        declares: fn(&ClientCapabilities) -> bool,
        answer: fn(ClientResult) -> Option<R>,
    ) -> Result<R, ErrorData>
    where
        P: Serialize + DeserializeOwned,
    {
        let started = Instant::now();
        let refuse = |why: String, target: Option<&Target>| {
            self.record(kind, target, started, Some(Failure::Refused(&why)));
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "toolgate's gateway did not relay this {} request of the upstream server \
                     {}: {why}",
                    kind.as_str(),
                    self.upstream
                ),
                None,
            ))
        };
        if let Some(why) = refused.or_else(|| oversized(&params)) {
            return refuse(why, None);
        }
        let target = match self.routes.target() {
            Ok(t) => t,
            Err(why) => return refuse(why.to_string(), None),
        };
        let Some(client) = target.client.clone() else {
            return refuse(
                "the client of the call in flight cannot be sent requests (it is not an MCP \
                 session on a connection, or its request is a 2026-07-28 one)"
                    .to_string(),
                Some(&target),
            );
        };
        if !client.capabilities.as_ref().is_some_and(declares) {
            return refuse(
                format!(
                    "the client of the call in flight did not declare the {} capability",
                    kind.as_str()
                ),
                Some(&target),
            );
        }
        let params = match cleaned(params, shown) {
            Ok(p) => p,
            Err(why) => return refuse(why, Some(&target)),
        };
        let sent = (client.send)(request(params));
        let ended = |failure: Failure<'_>, why: &str| {
            self.record(kind, Some(&target), started, Some(failure));
            Err(ErrorData::new(
                RELAY_ENDED,
                format!("the {} request got no answer: {why}", kind.as_str()),
                None,
            ))
        };
        // at the call's deadline the call is stopped (its cancellation, the upstream's
        // cancellation of its request) as the timer fires: whichever is seen first, past the
        // deadline it is the timeout
        let stopped = |why: &str| {
            if tokio::time::Instant::now() >= target.deadline {
                ended(Failure::Timeout, TIMED_OUT)
            } else {
                ended(Failure::Cancelled, why)
            }
        };
        let failed = |why: String| {
            self.record(kind, Some(&target), started, Some(Failure::Client(&why)));
            Err(ErrorData::internal_error(why, None))
        };
        tokio::select! {
            got = sent => match got {
                Ok(result) => match answer(result) {
                    Some(r) => {
                        self.record(kind, Some(&target), started, None);
                        Ok(r)
                    }
                    None => failed("the client answered with another kind of result".into()),
                },
                Err(rmcp::ServiceError::McpError(e)) => {
                    self.record(kind, Some(&target), started, Some(Failure::Client(&e.message)));
                    Err(e)
                }
                Err(e) => failed(format!("the client did not answer ({e})")),
            },
            () = tokio::time::sleep_until(target.deadline) => ended(Failure::Timeout, TIMED_OUT),
            () = target.ended.cancelled() => {
                stopped("the call it was made for was cancelled or ended")
            }
            () = cancelled.cancelled() => stopped("the upstream cancelled it"),
        }
    }

    /// The audit record, tracing event and count of one request (`failure` `None`: relayed
    /// and answered).
    fn record(
        &self,
        kind: RelayKind,
        target: Option<&Target>,
        started: Instant,
        failure: Option<Failure<'_>>,
    ) {
        let label = failure.as_ref().map_or("relayed", Failure::label);
        metrics::counter!("toolgate_upstream_relayed_total",
            "upstream" => self.upstream.clone(), "kind" => kind.as_str(), "outcome" => label)
        .increment(1);
        let session = target.map_or("", |t| &*t.session);
        match &failure {
            None => tracing::info!(upstream = %self.upstream, kind = kind.as_str(), session,
                "a request of the upstream relayed to the client"),
            Some(f) => tracing::warn!(upstream = %self.upstream, kind = kind.as_str(), session,
                outcome = label, why = f.why(), "a request of the upstream not relayed"),
        }
        let Some(sink) = (self.audit)() else { return };
        let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
        let unknown = || Arc::<str>::from("");
        sink.record(AuditRecord {
            outcome: if failure.is_none() {
                Outcome::Ok
            } else {
                Outcome::RecoverableError
            },
            error_kind: failure.as_ref().map(Failure::kind),
            error_reason: failure.as_ref().map(|f| format!("relay_{}", f.label())),
            attempts: u32::from(!matches!(failure, Some(Failure::Refused(_)))),
            duration_us: started.elapsed().as_micros() as u64,
            ..AuditRecord::event(
                now,
                target.map_or_else(unknown, |t| t.session.clone()),
                target.map_or_else(unknown, |t| t.profile.clone()),
                format!("toolgate.upstream.{}.{}", self.upstream, kind.as_str()).into(),
                match target {
                    Some(t) => format!("{}/{}", t.call_id, kind.as_str()).into(),
                    None => format!("{}/{}-{now}", self.upstream, kind.as_str()).into(),
                },
                serde_json::json!({
                    "upstream": self.upstream,
                    "kind": kind.as_str(),
                    "why": failure.as_ref().map(Failure::why),
                }),
            )
        });
    }
}

/// Why a request was not answered by the client.
enum Failure<'a> {
    /// Not sent: a condition failed (what it was).
    Refused(&'a str),
    /// The call it was made for ran past its deadline.
    Timeout,
    /// The call was cancelled or ended, or the upstream cancelled the request.
    Cancelled,
    /// The client answered with an error or not at all (what it said).
    Client(&'a str),
}

impl Failure<'_> {
    /// The outcome's label: `refused`, `timeout`, `cancelled` or `client_error`.
    fn label(&self) -> &'static str {
        match self {
            Failure::Refused(_) => "refused",
            Failure::Timeout => "timeout",
            Failure::Cancelled => "cancelled",
            Failure::Client(_) => "client_error",
        }
    }

    fn why(&self) -> &str {
        match self {
            Failure::Refused(why) | Failure::Client(why) => why,
            Failure::Timeout => TIMED_OUT,
            Failure::Cancelled => "the call it was made for, or the request, was cancelled",
        }
    }

    fn kind(&self) -> ErrorKind {
        match self {
            Failure::Refused(_) => ErrorKind::PermissionDenied,
            Failure::Timeout => ErrorKind::Timeout,
            Failure::Cancelled => ErrorKind::Cancelled,
            Failure::Client(_) => ErrorKind::ToolFailed,
        }
    }
}

/// Why a sampling request's `messages` are not relayed: a `tool_use` or `tool_result`
/// content block (2025-11-25 "Sampling", tools in sampling) in one of them, while the
/// gateway declared sampling without `tools`, so the tool loop would be the upstream's,
/// run through the client's model outside the pipeline.
fn tool_content(messages: &[SamplingMessage]) -> Option<String> {
    messages.iter().enumerate().find_map(|(i, m)| {
        let block = match &m.content {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(bs) => bs.as_slice(),
        }
        .iter()
        .find_map(|b| match b {
            SamplingMessageContentBlock::ToolUse(_) => Some("tool_use"),
            SamplingMessageContentBlock::ToolResult(_) => Some("tool_result"),
            _ => None,
        })?;
        Some(format!(
            "message {i} holds a `{block}` content block, and the gateway declared sampling \
             without tools, so it relays no tool use or tool result: send text, image or \
             audio content"
        ))
    })
}

/// What the configured kind asks, for messages.
fn what(kind: RelayKind) -> &'static str {
    match kind {
        RelayKind::Sampling => "sampling (sampling/createMessage)",
        RelayKind::Elicitation => "elicitation (elicitation/create)",
    }
}

/// Why `params` are not relayed for their size: over [`MAX_RELAYED_BYTES`] as JSON (counted
/// as they are written, nothing kept).
fn oversized<P: Serialize>(params: &P) -> Option<String> {
    let mut size = Counted(0);
    // a write to the counter cannot fail; a value that does not serialize is refused later
    let _ = serde_json::to_writer(&mut size, params);
    (size.0 > MAX_RELAYED_BYTES).then(|| {
        format!(
            "it takes {} bytes as JSON, over the {MAX_RELAYED_BYTES} bytes (256 KiB) the \
             gateway relays: send a shorter request",
            size.0
        )
    })
}

/// Counts the bytes written to it.
struct Counted(u64);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `params` with the text of it a person reads (`shown`, [`shown`]) cleaned like an output;
/// data that would need cleaning is refused.
///
/// # Errors
/// Why it is not relayed, for the upstream: data that would need cleaning (where), or params
/// that do not serialize.
fn cleaned<P: Serialize + DeserializeOwned>(params: P, shown: &[&str]) -> Result<P, String> {
    let unreadable = |e: serde_json::Error| format!("it could not be read again ({e})");
    let mut value = serde_json::to_value(params).map_err(unreadable)?;
    shown::clean_shown(&mut value, shown)?;
    serde_json::from_value(value).map_err(unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rmcp::model::SamplingCapability;
    use std::time::Duration;
    use toolgate_config::upstreams::{NotificationLimits, NotificationRate};
    use toolgate_core::audit::MemoryAuditSink;

    /// A client that answers every sampling request with `answer` after `delay`, recording
    /// what it was asked.
    fn client(declares: bool, delay: Duration) -> (RelayClient, Arc<Mutex<Vec<ServerRequest>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let into = asked.clone();
        let mut capabilities = ClientCapabilities::default();
        if declares {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        let send: SendToClient = Arc::new(move |request| {
            into.lock().push(request);
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                Ok(ClientResult::CreateMessageResult(Box::new(
                    CreateMessageResult::new(
                        SamplingMessage::assistant_text("answered"),
                        "m".into(),
                    ),
                )))
            })
        });
        (
            RelayClient {
                capabilities: Some(capabilities),
                send,
            },
            asked,
        )
    }

    /// A client that declares elicitation and declines every request, and the requests it
    /// was sent.
    fn declining_elicitation_client() -> (RelayClient, Arc<Mutex<Vec<ServerRequest>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let into = asked.clone();
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        let send: SendToClient = Arc::new(move |request| {
            into.lock().push(request);
            Box::pin(async {
                Ok(ClientResult::ElicitResult(ElicitResult::new(
                    rmcp::model::ElicitationAction::Decline,
                )))
            })
        });
        let client = RelayClient {
            capabilities: Some(capabilities),
            send,
        };
        (client, asked)
    }

    fn ctx(session: &str, within: Duration) -> ToolContext {
        ToolContext::builder()
            .session_id(session)
            .profile("p")
            .call_id(format!("{session}-call"))
            .deadline(Instant::now() + within)
            .build()
    }

    /// A relay of `kinds` with a budget of requests no test here reaches.
    fn relay(kinds: &[RelayKind]) -> (Relay, Arc<MemoryAuditSink>) {
        let limits = NotificationLimits {
            requests: Some(NotificationRate {
                per_second: Some(1000),
                per_minute: None,
                burst: Some(1000),
            }),
            ..NotificationLimits::default()
        };
        relay_within(kinds, &limits)
    }

    fn relay_within(
        kinds: &[RelayKind],
        limits: &NotificationLimits,
    ) -> (Relay, Arc<MemoryAuditSink>) {
        let sink = Arc::new(MemoryAuditSink::default());
        let audit = sink.clone();
        (
            Relay {
                upstream: "up".into(),
                kinds: kinds.to_vec(),
                routes: Arc::default(),
                budgets: Arc::new(Budgets::new("up", limits)),
                audit: Arc::new(move || Some(audit.clone() as Arc<dyn AuditSink>)),
            },
            sink,
        )
    }

    fn params(text: &str) -> CreateMessageRequestParams {
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], 10)
    }

    async fn sample(relay: &Relay) -> Result<CreateMessageResult, ErrorData> {
        relay
            .create_message(params("a\u{202e}b\u{200b}c"), CancellationToken::new())
            .await
    }

    #[tokio::test]
    async fn a_request_reaches_the_one_session_in_flight_cleaned_and_is_audited() {
        let (relay, sink) = relay(&[RelayKind::Sampling]);
        let (a, asked) = client(true, Duration::ZERO);
        let first = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(a.clone()));
        let second = relay
            .routes
            .route(&ctx("s", Duration::from_secs(9)), Some(a));
        let got = sample(&relay).await.expect("relayed");
        assert_eq!(got.model, "m");
        let asked = asked.lock();
        assert_eq!(asked.len(), 1, "once for the session");
        let ServerRequest::CreateMessageRequest(r) = &asked[0] else {
            panic!("a sampling request")
        };
        let text = serde_json::to_value(&r.params.messages[0]).unwrap();
        assert_eq!(text["content"]["text"], "abc", "cleaned");
        drop((first, second));
        let records = sink.records();
        assert_eq!(records.len(), 1);
        assert_eq!(&*records[0].tool, "toolgate.upstream.up.sampling");
        assert_eq!(&*records[0].session, "s");
        assert_eq!(records[0].outcome, Outcome::Ok);
        assert_eq!(records[0].call_id.to_string(), "s-call/sampling");
    }

    #[tokio::test]
    async fn requests_past_the_budget_are_refused_at_once_neither_relayed_nor_audited() {
        // the default budget (2 a second, bursts of 5), opted in or not: an upstream that
        // sends requests in a loop reaches neither the client nor the audit past it
        for kinds in [&[][..], &[RelayKind::Sampling][..]] {
            let (relay, sink) = relay_within(kinds, &NotificationLimits::default());
            let (a, asked) = client(true, Duration::ZERO);
            let _route = relay
                .routes
                .route(&ctx("s", Duration::from_secs(5)), Some(a));
            let mut over = 0;
            for _ in 0..50 {
                if let Err(e) = sample(&relay).await {
                    if e.message.contains("more requests than its budget") {
                        assert!(
                            e.message.contains(
                                "than its budget ([upstreams.notifications] requests); send fewer"
                            ),
                            "one line: {}",
                            e.message
                        );
                        over += 1;
                    }
                }
            }
            assert!((44..=45).contains(&over), "{over} refused by the budget");
            assert_eq!(
                sink.records().len(),
                50 - over,
                "one record a request admitted"
            );
            let relayed = asked.lock().len();
            let want = if kinds.is_empty() { 0 } else { 50 - over };
            assert_eq!(relayed, want, "relayed to the client");
            assert_eq!(
                relay.budgets.of(NotificationKind::Requests).dropped(),
                over as u64
            );
        }
    }

    #[tokio::test]
    async fn every_failed_condition_is_refused_saying_which_and_nothing_is_sent() {
        let (off, _) = relay(&[RelayKind::Elicitation]);
        let (a, asked) = client(true, Duration::ZERO);
        let _route = off
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(a.clone()));
        let e = sample(&off).await.unwrap_err();
        assert!(
            e.message.contains("did not opt this upstream in"),
            "{}",
            e.message
        );

        let (on, sink) = relay(&[RelayKind::Sampling]);
        let e = sample(&on).await.unwrap_err();
        assert!(
            e.message.contains("no call of the upstream is in flight"),
            "{}",
            e.message
        );

        let a_route = on
            .routes
            .route(&ctx("a", Duration::from_secs(5)), Some(a.clone()));
        let b_route = on
            .routes
            .route(&ctx("b", Duration::from_secs(5)), Some(a.clone()));
        let e = sample(&on).await.unwrap_err();
        assert!(e.message.contains("more than one session"), "{}", e.message);
        drop((a_route, b_route));

        let (mute, _) = client(false, Duration::ZERO);
        let route = on
            .routes
            .route(&ctx("a", Duration::from_secs(5)), Some(mute));
        let e = sample(&on).await.unwrap_err();
        assert!(
            e.message
                .contains("did not declare the sampling capability"),
            "{}",
            e.message
        );
        drop(route);

        let route = on.routes.route(&ctx("a", Duration::from_secs(5)), None);
        let e = sample(&on).await.unwrap_err();
        assert!(
            e.message.contains("cannot be sent requests"),
            "{}",
            e.message
        );
        drop(route);

        let _route = on.routes.route(&ctx("a", Duration::from_secs(5)), Some(a));
        let mut with_tools = params("x");
        with_tools.tools = Some(Vec::new());
        let e = on
            .create_message(with_tools, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(e.message.contains("names tools"), "{}", e.message);

        assert!(asked.lock().is_empty(), "nothing reached the client");
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        let records = sink.records();
        assert_eq!(records.len(), 5);
        assert!(records
            .iter()
            .all(|r| r.error_reason.as_deref() == Some("relay_refused")));
    }

    #[tokio::test]
    async fn a_request_for_the_clients_context_is_refused_and_none_is_relayed() {
        let (relay, sink) = relay(&[RelayKind::Sampling]);
        let (a, asked) = client(true, Duration::ZERO);
        let _route = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(a));
        for (context, name) in [
            (ContextInclusion::ThisServer, "\"thisServer\""),
            (ContextInclusion::AllServers, "\"allServers\""),
        ] {
            let mut wants = params("x");
            wants.include_context = Some(context);
            let e = relay
                .create_message(wants, CancellationToken::new())
                .await
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
            assert!(
                e.message.contains(&format!("`includeContext` {name}"))
                    && e.message.contains("send `none` or leave it out"),
                "{}",
                e.message
            );
        }
        assert!(asked.lock().is_empty(), "nothing reached the client");
        let mut none = params("x");
        none.include_context = Some(ContextInclusion::None);
        relay
            .create_message(none, CancellationToken::new())
            .await
            .expect("`none` is relayed");
        assert_eq!(asked.lock().len(), 1);
        let reasons: Vec<_> = sink
            .records()
            .iter()
            .map(|r| r.error_reason.clone().unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["relay_refused", "relay_refused", ""]);
    }

    #[tokio::test]
    async fn the_relay_ends_with_the_call_it_was_made_for() {
        let (relay, sink) = relay(&[RelayKind::Sampling]);
        let (slow, _) = client(true, Duration::from_secs(60));
        let route = relay
            .routes
            .route(&ctx("s", Duration::from_millis(200)), Some(slow.clone()));
        let started = Instant::now();
        let e = sample(&relay).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(e.code, RELAY_ENDED);
        assert!(e.message.contains("ran past its timeout"), "{}", e.message);
        drop(route);

        let cancel = CancellationToken::new();
        let call = ToolContext::builder()
            .session_id("s")
            .cancellation(cancel.clone())
            .deadline(Instant::now() + Duration::from_secs(60))
            .build();
        let _route = relay.routes.route(&call, Some(slow));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
        let e = sample(&relay).await.unwrap_err();
        assert!(
            e.message.contains("was cancelled or ended"),
            "{}",
            e.message
        );
        let reasons: Vec<_> = sink
            .records()
            .iter()
            .map(|r| r.error_reason.clone().unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["relay_timeout", "relay_cancelled"]);
    }

    #[tokio::test]
    async fn a_call_stopped_at_its_deadline_is_a_timeout_whichever_is_seen_first() {
        let (relay, sink) = relay(&[RelayKind::Sampling]);
        let (slow, _) = client(true, Duration::from_secs(60));
        // past the deadline with the call already cancelled: the timer and the cancellation
        // are both ready, and either may be polled first
        for _ in 0..20 {
            let cancel = CancellationToken::new();
            let call = ToolContext::builder()
                .session_id("s")
                .cancellation(cancel.clone())
                .deadline(Instant::now())
                .build();
            let _route = relay.routes.route(&call, Some(slow.clone()));
            cancel.cancel();
            let upstream = CancellationToken::new();
            upstream.cancel();
            let e = relay
                .create_message(params("x"), upstream)
                .await
                .unwrap_err();
            assert!(e.message.contains("ran past its timeout"), "{}", e.message);
        }
        assert!(sink
            .records()
            .iter()
            .all(|r| r.error_reason.as_deref() == Some("relay_timeout")));
    }

    #[tokio::test]
    async fn a_form_elicitation_says_who_asks_and_a_url_one_is_never_relayed() {
        let (relay, _) = relay(&[RelayKind::Elicitation]);
        let (client, asked) = declining_elicitation_client();
        let _route = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(client));
        let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": "Your na\u{202e}me?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }))
        .unwrap();
        let got = relay
            .create_elicitation(form, CancellationToken::new())
            .await
            .expect("relayed");
        assert_eq!(got.action, rmcp::model::ElicitationAction::Decline);
        let url: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "url",
            "message": "Log in",
            "url": "https://example.com/login",
            "elicitationId": "e1",
        }))
        .unwrap();
        let e = relay
            .create_elicitation(url, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(e.message.contains("URL-mode"), "{}", e.message);
        let asked = asked.lock();
        assert_eq!(asked.len(), 1, "only the form reached the client");
        let sent = serde_json::to_value(&asked[0]).unwrap();
        assert_eq!(
            sent["params"]["message"],
            "The upstream server up asks: Your name?"
        );
    }

    #[tokio::test]
    async fn an_elicitation_whose_property_name_would_need_cleaning_is_refused_naming_it() {
        let (relay, sink) = relay(&[RelayKind::Elicitation]);
        let (client, asked) = declining_elicitation_client();
        let _route = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(client));
        let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"na\u{202e}me": {"type": "string"}}},
        }))
        .unwrap();
        let e = relay
            .create_elicitation(form, CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(
            e.message
                .contains(r"the name `na\u{202e}me` at /requestedSchema/properties"),
            "{}",
            e.message
        );
        assert!(asked.lock().is_empty(), "nothing reached the client");
        let records = sink.records();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].error_reason.as_deref(), Some("relay_refused"));
    }

    #[tokio::test]
    async fn a_sampling_request_with_tool_use_or_tool_result_content_is_refused() {
        let (relay, sink) = relay(&[RelayKind::Sampling]);
        let (a, asked) = client(true, Duration::ZERO);
        let _route = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(a));
        // as a 2025-11-25 upstream writes them: one block, or an array of blocks
        for (content, block) in [
            (
                serde_json::json!({"type": "tool_use", "id": "t1", "name": "rm", "input": {}}),
                "tool_use",
            ),
            (
                serde_json::json!([
                    {"type": "text", "text": "here"},
                    {"type": "tool_result", "toolUseId": "t1", "content": []}
                ]),
                "tool_result",
            ),
        ] {
            let params: CreateMessageRequestParams = serde_json::from_value(serde_json::json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "hi"}},
                    {"role": "assistant", "content": content}
                ],
                "maxTokens": 5
            }))
            .unwrap();
            let e = relay
                .create_message(params, CancellationToken::new())
                .await
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
            assert!(
                e.message
                    .contains(&format!("message 1 holds a `{block}` content block"))
                    && e.message.contains("send text, image or audio content"),
                "{}",
                e.message
            );
        }
        assert!(asked.lock().is_empty(), "nothing reached the client");
        let records = sink.records();
        assert_eq!(records.len(), 2);
        assert!(records
            .iter()
            .all(|r| r.error_reason.as_deref() == Some("relay_refused")));
    }

    #[tokio::test]
    async fn a_request_over_256_kib_is_refused_before_the_client_sees_it() {
        let (relay, sink) = relay(&[RelayKind::Sampling, RelayKind::Elicitation]);
        let (a, asked) = client(true, Duration::ZERO);
        let _route = relay
            .routes
            .route(&ctx("s", Duration::from_secs(5)), Some(a));
        // the text of many messages adds up, and a system prompt counts too
        let mut many = params("x");
        many.messages = vec![SamplingMessage::user_text("y".repeat(64 * 1024)); 4];
        many.system_prompt = Some("z".repeat(1024));
        let e = relay
            .create_message(many, CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(
            e.message.contains("over the 262144 bytes (256 KiB)")
                && e.message.contains("send a shorter request"),
            "{}",
            e.message
        );
        // an elicitation's schema counts: descriptions of its properties
        let properties: serde_json::Map<String, serde_json::Value> = (0..300)
            .map(|i| {
                (
                    format!("p{i}"),
                    serde_json::json!({"type": "string", "description": "d".repeat(1024)}),
                )
            })
            .collect();
        let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": "Fill in",
            "requestedSchema": {"type": "object", "properties": properties},
        }))
        .unwrap();
        let e = relay
            .create_elicitation(form, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(e.message.contains("256 KiB"), "{}", e.message);
        assert!(asked.lock().is_empty(), "nothing reached the client");
        // just under the limit is relayed
        let mut under = params("x");
        under.messages = vec![SamplingMessage::user_text("y".repeat(250 * 1024))];
        relay
            .create_message(under, CancellationToken::new())
            .await
            .expect("relayed");
        assert_eq!(asked.lock().len(), 1);
        let reasons: Vec<_> = sink
            .records()
            .iter()
            .map(|r| r.error_reason.clone().unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["relay_refused", "relay_refused", ""]);
    }
}
