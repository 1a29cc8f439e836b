//! What a tool can reach of the MCP request it runs for: the request context (the client's
//! peer, `_meta`, the cancellation token), to talk to the client while it runs (log messages
//! at the level it asked for, sampling, elicitation through the peer or, from another task,
//! a [`ClientRequester`]), to report its own progress, to ask for input on a 2026-07-28
//! request (an input-required result and the retry's answers), and to fail the request with
//! a JSON-RPC error.
//!
//! Available inside a `tools/call` dispatched by [`crate::handler`], in the task that runs the
//! handler (the pipeline runs handlers in the caller's task; work moved to `tokio::spawn` or a
//! blocking thread has no access). Outside, every function here answers `None` or `false`.

// logging: deprecated by SEP-2577, still what 2025-11-25 clients use.
#![allow(deprecated)]

use crate::approval::CLIENT;
use crate::handler::LEVEL_UNSET;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ErrorData, GetExtensions,
    InputRequests, InputRequiredResult, InputResponses, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, RequestId, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, RequestContext, RoleServer};
use serde_json::Value;
use std::sync::atomic::Ordering;
use toolgate_core::{ErrorKind, ToolError};

/// The MCP request the current tool call came in on.
pub fn current() -> Option<RequestContext<RoleServer>> {
    CLIENT.try_with(|c| c.ctx.clone()).ok()
}

/// Reports the current call's progress to the client, when it sent a `progressToken`;
/// `progress` must grow from one report to the next. From the first report on, the server's
/// own "still running" notifications stop, so the two never interleave. Returns whether a
/// notification was sent.
pub async fn report_progress(progress: f64, total: Option<f64>, message: Option<String>) -> bool {
    let Ok(Some((peer, token))) = CLIENT.try_with(|c| {
        let token = c.ctx.meta.get_progress_token()?;
        if let Some(own) = &c.tool_reports_progress {
            own.store(true, Ordering::Relaxed);
        }
        Some((c.ctx.peer.clone(), token))
    }) else {
        return false;
    };
    let mut note = ProgressNotificationParam::new(token, progress);
    note.total = total;
    note.message = message;
    peer.notify_progress(note).await.is_ok()
}

/// Sends a log message (`notifications/message`) at `level` to the client, when it asked for
/// messages at that level or above: through `logging/setLevel` on this connection (revisions
/// before 2026-07-28) or the request's `_meta` `io.modelcontextprotocol/logLevel`
/// (2026-07-28). `logger` names the source. Returns whether a message was sent.
pub async fn log(level: LoggingLevel, logger: Option<&str>, data: Value) -> bool {
    let Ok(Some(peer)) = CLIENT.try_with(|c| {
        (c.log_level != LEVEL_UNSET && level as u8 >= c.log_level).then(|| c.ctx.peer.clone())
    }) else {
        return false;
    };
    let mut message = LoggingMessageNotificationParam::new(level, data);
    message.logger = logger.map(str::to_string);
    peer.notify_logging_message(message).await.is_ok()
}

/// Where log messages for the current call's client go, from outside the call's task too:
/// its connection and the level it asked for. Cheap to clone.
#[derive(Clone)]
pub struct ClientLogger {
    peer: rmcp::service::Peer<RoleServer>,
    level: u8,
}

impl std::fmt::Debug for ClientLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLogger")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl ClientLogger {
    /// Sends `message` to the client, in a task of its own, when its level is at or above
    /// the one the client asked for. Returns whether it is sent.
    pub fn send(&self, message: LoggingMessageNotificationParam) -> bool {
        if (message.level as u8) < self.level {
            return false;
        }
        let peer = self.peer.clone();
        tokio::spawn(async move {
            if let Err(e) = peer.notify_logging_message(message).await {
                tracing::debug!(error = %e, "log message not sent");
            }
        });
        true
    }
}

/// The current call's [`ClientLogger`], when its client asked for log messages (see
/// [`log`]).
pub fn client_logger() -> Option<ClientLogger> {
    CLIENT
        .try_with(|c| {
            (c.log_level != LEVEL_UNSET).then(|| ClientLogger {
                peer: c.ctx.peer.clone(),
                level: c.log_level,
            })
        })
        .ok()
        .flatten()
}

/// The current call's client, to send it requests (`sampling/createMessage`,
/// `elicitation/create`) from outside the call's task too: its connection, the call's
/// request (which a request sent for it relates to) and what the client declared in
/// `initialize`. Cheap to clone.
#[derive(Clone)]
pub struct ClientRequester {
    peer: rmcp::service::Peer<RoleServer>,
    /// The id of the call's `tools/call` request: on streamable HTTP a request marked with
    /// it goes out on that request's SSE stream (specification 2025-11-25 "Transports",
    /// streamable HTTP: requests related to the client's request; SEP-2260).
    related: RequestId,
}

impl std::fmt::Debug for ClientRequester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRequester").finish_non_exhaustive()
    }
}

impl ClientRequester {
    /// The capabilities the client declared in `initialize` (none known: `None`).
    pub fn capabilities(&self) -> Option<ClientCapabilities> {
        self.peer.peer_info().map(|i| i.capabilities.clone())
    }

    /// Sends `request` to the client and waits for its answer. The request relates to the
    /// call's `tools/call`: on streamable HTTP it goes out on that POST's SSE stream, so a
    /// client that reads only its POSTs' streams (no standalone GET stream) gets it, whichever
    /// task it is sent from. Dropped before the answer (the caller gave up: its call was
    /// cancelled or ran out of time), it sends the client `notifications/cancelled` for the
    /// request, on that stream too while it is open. A request lasts at most as long as its
    /// call: on streamable HTTP, one still unanswered when the call's answer goes out is
    /// cancelled at the client first (the stream closes with the answer).
    ///
    /// # Errors
    /// The connection did not take the request or closed before the answer
    /// ([`rmcp::ServiceError::TransportSend`], `TransportClosed`), or the client answered
    /// with a JSON-RPC error (`McpError`).
    pub async fn request(
        &self,
        mut request: ServerRequest,
    ) -> Result<ClientResult, rmcp::ServiceError> {
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.related.clone()));
        // rmcp marks a request sent inside a request handler's task with that handler's
        // request (a task-local), over the mark set here: in another connection's handler
        // (the gateway relaying an upstream's request) that is a request of the other
        // connection, numbered by it, so the request is sent from a task of its own, where
        // only the mark set here holds; dropped, the task is aborted (and the request, once
        // sent, cancelled at the client)
        let peer = self.peer.clone();
        let mut task = AbortOnDrop(tokio::spawn(async move {
            let handle = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await?;
            let mut pending = Pending {
                peer: &peer,
                id: Some(handle.id.clone()),
            };
            let answer = handle.await_response().await;
            pending.id = None;
            answer
        }));
        match (&mut task.0).await {
            Ok(answer) => answer,
            // the task panicked or the runtime is shutting down: the connection is gone
            Err(_) => Err(rmcp::ServiceError::TransportClosed),
        }
    }
}

/// Aborts its task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends `notifications/cancelled` for a request to the client dropped before its answer.
struct Pending<'a> {
    peer: &'a rmcp::service::Peer<RoleServer>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let note = CancelledNotificationParam::new(
                    Some(id),
                    Some("the call the request was made for ended".into()),
                );
                let _ = peer.notify_cancelled(note).await;
            });
        }
    }
}

/// The current call's [`ClientRequester`]; `None` outside a `tools/call` and on a
/// 2026-07-28 request (that revision has no requests from the server: see
/// [`require_input`]).
pub fn client_requester() -> Option<ClientRequester> {
    CLIENT
        .try_with(|c| {
            (!crate::mrtr::is_round_trip(&c.ctx)).then(|| ClientRequester {
                peer: c.ctx.peer.clone(),
                related: c.ctx.id.clone(),
            })
        })
        .ok()
        .flatten()
}

/// Makes the current request fail with the JSON-RPC error `error` instead of a tool result
/// (for a protocol fault the tool detects, such as a client capability it requires
/// (`-32021`) or a request state that does not verify (`-32602`)). Returns the tool error
/// the handler should return so the pipeline records the call as failed; the client sees
/// `error`. Outside a `tools/call`, only the tool error is left.
pub fn fail_request(error: ErrorData) -> ToolError {
    let message = format!("the request failed: {} ({})", error.message, error.code.0);
    let _ = CLIENT.try_with(|c| *c.protocol_error.lock() = Some(error));
    ToolError::failed(message).with_reason("protocol_error")
}

/// The input-required result of a 2026-07-28 multi round-trip request (SEP-2322): the tool
/// asks the client for `inputs` (elicitation, sampling, roots), with `state` (opaque to the
/// client; seal it, it comes back untrusted) to be echoed on the retry. The call then answers
/// with that result instead of a tool result; the retry carries the answers
/// ([`input_responses`]) and the state ([`request_state`]). Returns the tool error the
/// handler should return so the pipeline records this round; `None` when the call is not a
/// 2026-07-28 request, where the tool should ask through the client's peer instead.
pub fn require_input(inputs: InputRequests, state: Option<String>) -> Option<ToolError> {
    CLIENT
        .try_with(|c| {
            if !crate::mrtr::is_round_trip(&c.ctx) {
                return None;
            }
            *c.question.lock() = Some(InputRequiredResult::new(Some(inputs), state));
            Some(ToolError::new(
                ErrorKind::InputRequired,
                "input asked of the client (input required)",
            ))
        })
        .ok()
        .flatten()
}

/// The `inputResponses` of a 2026-07-28 retry, keyed as the tool's input requests were.
pub fn input_responses() -> Option<InputResponses> {
    CLIENT
        .try_with(|c| c.input_responses.clone())
        .ok()
        .flatten()
}

/// The `requestState` of a 2026-07-28 retry, as the client sent it (untrusted).
pub fn request_state() -> Option<String> {
    CLIENT.try_with(|c| c.request_state.clone()).ok().flatten()
}

/// Whether the current call came in on a 2026-07-28 request (per-request metadata, no
/// requests from the server: ask with [`require_input`]).
pub fn is_round_trip() -> bool {
    CLIENT
        .try_with(|c| crate::mrtr::is_round_trip(&c.ctx))
        .unwrap_or(false)
}

/// The capabilities the client declared: in `initialize`, or in a 2026-07-28 request's
/// `_meta`.
pub fn client_capabilities() -> Option<ClientCapabilities> {
    CLIENT
        .try_with(|c| c.ctx.client_capabilities())
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outside a `tools/call` nothing reaches a client: every function says so instead of
    /// panicking.
    #[tokio::test]
    async fn outside_a_call_nothing_is_sent_or_asked() {
        assert!(current().is_none());
        assert!(!report_progress(1.0, Some(2.0), None).await);
        assert!(!log(LoggingLevel::Emergency, None, Value::Null).await);
        assert!(require_input(InputRequests::new(), Some("s".into())).is_none());
        assert!(input_responses().is_none());
        assert!(request_state().is_none());
        assert!(!is_round_trip());
        assert!(client_capabilities().is_none());
        assert!(client_requester().is_none());
        let e = fail_request(ErrorData::invalid_params("bad state", None));
        assert_eq!(e.kind, toolgate_core::ErrorKind::ToolFailed);
        assert_eq!(e.reason.as_deref(), Some("protocol_error"));
        assert!(e.message.contains("bad state (-32602)"), "{}", e.message);
    }
}
