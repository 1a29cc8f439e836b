//! The body of a JSON `POST /mcp`, read and checked before rmcp sees it, in this order:
//!
//! 1. a `Content-Length` over the cap: `413` at once, the body unread
//! 2. the body read within [`super::Limits::body_timeout`] (`408` and the connection closed
//!    otherwise) and the cap (`413` as soon as it is passed, whatever the framing: chunked
//!    bodies included)
//! 3. [`crate::jsonrpc::check`]: a refused message gets `400` with its JSON-RPC error
//!    (`-32700`, `-32600`, `-32602`), the request's id in it when it could be read
//! 0. a request naming a session (`Mcp-Session-Id`) another caller opened: `404`, as for a
//!    session that does not exist (a session is bound to the caller that opened it: over
//!    OAuth, its principal); then a request over the caller's request rate limits
//!    (`[[limits.rate]]` with `counts = "requests"`): `429` with `Retry-After` (seconds) and a
//!    JSON-RPC error (`-32000`) saying when to send it again, before anything is read
//! 4. a `tools/call`'s `params.idempotencyKey` (SEP-3182) moved into its `_meta`
//!    ([`crate::idempotency::lift`])
//! 5. an `initialize` without a session: a place among the caller's live sessions
//!    ([`Sessions::reserve`]), else `429` with a JSON-RPC error (`-32000`)
//! 6. rmcp, given the body read; should it still not read the message (`415`), that is
//!    answered `400` with `-32602` for the request's id
//!
//! Every refusal here is `application/json`: a JSON-RPC error response with `"id"` (`null`
//! when unknown). Requests that are not JSON `POST`s go to rmcp as they are (it answers `405`,
//! `406`, `415` itself).

use super::sessions::Sessions;
use super::Caller;
use crate::jsonrpc::{check, Frame, Method, Refusal, SERVER_BUSY};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderMap, StatusCode};
use rmcp::model::{ErrorCode, RequestId};
use std::sync::Arc;
use std::time::Duration;

/// What the middleware needs.
#[derive(Debug)]
pub(crate) struct BodyGate {
    pub(crate) max_bytes: usize,
    pub(crate) timeout: Duration,
    pub(crate) sessions: Arc<Sessions>,
    /// Rate limits on each caller's requests.
    pub(crate) request_limits: Option<Arc<toolgate_core::rate::RateLimits>>,
}

/// Why a body was not read.
enum Unread {
    TooLarge,
    Timeout,
    Broken(axum::Error),
}

/// The axum middleware.
pub(crate) async fn middleware(
    State(gate): State<Arc<BodyGate>>,
    req: Request,
    next: Next,
) -> Response {
    // a session is its opener's: another caller naming it learns nothing of it
    if let Some(id) = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        // a DELETE of a session that is not (or no longer) there: 404, as the specification
        // says of a session id the server does not know (2025-11-25, "Session Management";
        // rmcp would answer it as if it had ended one)
        let unknown = req.method() == http::Method::DELETE && !gate.sessions.exists(id);
        if unknown || !gate.sessions.owned_by(id, req.extensions().get::<Caller>()) {
            if !unknown {
                tracing::warn!("a request named a session another caller opened");
            }
            return refuse(
                StatusCode::NOT_FOUND,
                &Refusal::new(
                    ErrorCode::INVALID_REQUEST,
                    "no such session: start one with initialize",
                    None,
                ),
            );
        }
    }
    if let Some(limits) = &gate.request_limits {
        let caller = req.extensions().get::<Caller>();
        let principal = caller.and_then(Caller::identity).map(|i| &i.principal);
        if let Err(limited) = limits.check_request(principal) {
            tracing::info!(limit = %limited.limit, "refused a request over a request rate limit");
            let mut response = refuse(
                StatusCode::TOO_MANY_REQUESTS,
                &Refusal::new(SERVER_BUSY, limited.to_string(), None),
            );
            response.headers_mut().insert(
                header::RETRY_AFTER,
                http::HeaderValue::from(limited.retry_after_secs().max(1)),
            );
            return response;
        }
    }
    if req.method() != http::Method::POST || !is_json(req.headers()) {
        return next.run(req).await;
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > gate.max_bytes as u64) {
        return too_large(gate.max_bytes);
    }
    let (mut parts, body) = req.into_parts();
    let capacity = declared.map_or(0, |n| n as usize);
    let mut bytes = match read(body, gate.max_bytes, capacity, gate.timeout).await {
        Ok(bytes) => bytes,
        Err(Unread::TooLarge) => return too_large(gate.max_bytes),
        Err(Unread::Timeout) => {
            let mut r = refuse(
                StatusCode::REQUEST_TIMEOUT,
                &Refusal::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "the request body did not arrive within {} s: send it at once",
                        gate.timeout.as_secs_f64()
                    ),
                    None,
                ),
            );
            r.headers_mut()
                .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
            return r;
        }
        Err(Unread::Broken(e)) => {
            tracing::debug!(error = %e, "a request body could not be read");
            return refuse(
                StatusCode::BAD_REQUEST,
                &Refusal::new(
                    ErrorCode::INVALID_REQUEST,
                    "the request body could not be read",
                    None,
                ),
            );
        }
    };
    let frame = match check(&bytes) {
        Ok(frame) => frame,
        Err(refusal) => {
            tracing::debug!(%refusal, "refused a message");
            return refuse(StatusCode::BAD_REQUEST, &refusal);
        }
    };
    let id = match &frame {
        Frame::Request { id, .. } => Some(id.clone()),
        _ => None,
    };
    if matches!(
        frame,
        Frame::Request {
            method: Method::ToolsCall,
            ..
        }
    ) {
        if let Some(lifted) = crate::idempotency::lift(&bytes) {
            parts.headers.remove(header::CONTENT_LENGTH);
            bytes = Bytes::from(lifted);
        }
    }
    let opens_session = matches!(
        frame,
        Frame::Request {
            method: Method::Initialize,
            ..
        }
    ) && !parts.headers.contains_key("mcp-session-id");
    let slot = if opens_session {
        let caller = parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or(Caller::Anonymous);
        match gate.sessions.reserve(caller) {
            Ok(slot) => Some(slot),
            Err(max) => {
                tracing::warn!(max, "refused an initialize: the caller's session cap");
                return refuse(
                    StatusCode::TOO_MANY_REQUESTS,
                    &Refusal::new(
                        SERVER_BUSY,
                        format!(
                            "this caller holds {max} live MCP sessions, the most it may: end \
                             one (DELETE /mcp with its Mcp-Session-Id) or reuse one"
                        ),
                        id,
                    ),
                );
            }
        }
    } else {
        None
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if let Some(slot) = slot {
        if let Some(session) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            gate.sessions.bind(session, slot);
        }
    }
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return misread(response, id).await;
    }
    response
}

/// Whether the request says its body is JSON (`application/json`, any parameters), as rmcp
/// requires; other bodies are rmcp's to refuse.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// The whole body, within `max` bytes and `timeout`.
async fn read(body: Body, max: usize, capacity: usize, timeout: Duration) -> Result<Bytes, Unread> {
    let collect = async {
        let mut body = std::pin::pin!(body);
        let mut first: Option<Bytes> = None;
        let mut more: Vec<u8> = Vec::new();
        while let Some(frame) =
            std::future::poll_fn(|cx| http_body::Body::poll_frame(body.as_mut(), cx)).await
        {
            let Ok(data) = frame.map_err(Unread::Broken)?.into_data() else {
                continue;
            };
            let had = first.as_ref().map_or(0, Bytes::len) + more.len();
            if data.len() > max.saturating_sub(had) {
                return Err(Unread::TooLarge);
            }
            match &first {
                // one frame, the usual case, is kept as it came
                None if more.is_empty() => first = Some(data),
                _ => {
                    if let Some(f) = first.take() {
                        more.reserve(capacity.min(max).max(f.len() + data.len()));
                        more.extend_from_slice(&f);
                    }
                    more.extend_from_slice(&data);
                }
            }
        }
        Ok(match first {
            Some(f) => f,
            None => Bytes::from(more),
        })
    };
    tokio::time::timeout(timeout, collect)
        .await
        .unwrap_or(Err(Unread::Timeout))
}

/// rmcp could not read a message the check passed: answered as invalid params (or, without
/// a request id, an invalid request), with rmcp's reason.
async fn misread(response: Response, id: Option<RequestId>) -> Response {
    let reason = axum::body::to_bytes(response.into_body(), 64 << 10)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let code = if id.is_some() {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::INVALID_REQUEST
    };
    refuse(
        StatusCode::BAD_REQUEST,
        &Refusal::new(
            code,
            format!("the message does not have the shape its method takes: {reason}"),
            id,
        ),
    )
}

fn too_large(max: usize) -> Response {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Refusal::too_large(max, None),
    )
}

/// `status` with the refusal as its `application/json` body.
pub(crate) fn refuse(status: StatusCode, refusal: &Refusal) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(refusal.to_json()))
        .expect("a valid response")
}
