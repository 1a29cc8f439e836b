//! Serving connections within [`Limits`]: the accept loop, hyper's HTTP/1.1 and HTTP/2
//! (hyper-util's auto builder), and per connection, in this order:
//!
//! 1. admission: past [`Limits::max_connections`] in all or
//!    [`Limits::max_connections_per_peer`] from its IP address, a connection waits at most
//!    [`ADMISSION_WAIT`] for a place, then is closed (so it never holds a descriptor for
//!    long, and the listener's backlog keeps draining). The wait is for the client that
//!    closes each connection after its answer and opens the next at once: its next
//!    connection can arrive before the server has read the previous one's end, and would
//!    otherwise be refused under the cap it keeps. At most [`MAX_WAITING`] connections wait
//!    at once; past that, one over the cap is closed at once.
//! 2. HTTP/1.1: hyper's header-read timeout ([`Limits::header_timeout`]), from the
//!    connection's start and again after each answer (idle keep-alive connections close with
//!    it); HTTP/2: at most [`MAX_STREAMS_PER_CONNECTION`] streams at once
//! 3. a watchdog that closes the connection when no request has been open for
//!    [`Limits::header_timeout`] (a bare connect, an HTTP/2 client that never completes a
//!    request) or when no byte moved either way for [`Limits::idle_timeout`] while no request
//!    waits for its response to start (a client that stopped reading a stream)
//!
//! A request counts as open from its head until its response body is done or dropped, so a
//! long call streaming its answer keeps its connection; and while a request waits for its
//! response to start (its body being read, bounded by the body timeout; a long call answered
//! as plain JSON, bounded by the tool's timeout), the silence is the server's, not the
//! client's.
//!
//! An HTTP/1.1 answer given before its request's body was read to the end (a `401` for a
//! missing token, a `404` for another caller's session, a `429`, a `413`) says
//! `Connection: close`: hyper cannot find where the next request starts behind an unread body
//! and closes the connection after such an answer, and a client that was not told would send
//! its next request (the OAuth discovery after a `401`) into the closing connection and lose
//! it ("server disconnected without sending a response"; RFC 9112, section 9.6).

use super::limits::{Limits, MAX_STREAMS_PER_CONNECTION};
use super::listener::GateListener;
use axum::body::Body;
use axum::serve::Listener;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tower::ServiceExt;

/// How long a connection over a cap waits for a place before it is closed.
pub(crate) const ADMISSION_WAIT: Duration = Duration::from_millis(250);
/// Connections over a cap that may wait for a place at once.
pub(crate) const MAX_WAITING: usize = 256;

/// The open connections, in all and per peer address.
#[derive(Debug)]
pub(crate) struct Connections {
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
    max: usize,
    max_per_peer: usize,
    /// Woken when a place is freed.
    freed: tokio::sync::Notify,
    /// Connections waiting for a place now.
    waiting: AtomicUsize,
}

/// One admitted connection's place; dropping it frees it.
#[derive(Debug)]
pub(crate) struct Slot {
    conns: Arc<Connections>,
    peer: IpAddr,
}

impl Connections {
    pub(crate) fn new(limits: &Limits) -> Arc<Self> {
        Arc::new(Connections {
            open: Mutex::new((0, HashMap::new())),
            max: limits.max_connections,
            max_per_peer: limits.max_connections_per_peer,
            freed: tokio::sync::Notify::new(),
            waiting: AtomicUsize::new(0),
        })
    }

    /// A place for a connection from `peer`, waiting up to `wait` for one to be freed when a
    /// cap is reached; `None` when none was freed in time, or when [`MAX_WAITING`]
    /// connections wait already.
    pub(crate) async fn admit_within(
        self: &Arc<Self>,
        peer: IpAddr,
        wait: Duration,
    ) -> Option<Slot> {
        if let Some(slot) = self.admit(peer) {
            return Some(slot);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= MAX_WAITING {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let admitted = tokio::time::timeout(wait, async {
            loop {
                let freed = self.freed.notified();
                tokio::pin!(freed);
                // registered before the check, so a place freed in between is not missed
                freed.as_mut().enable();
                if let Some(slot) = self.admit(peer) {
                    return slot;
                }
                freed.await;
            }
        })
        .await
        .ok();
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        admitted
    }

    /// A place for a connection from `peer`, unless a cap is reached.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Slot> {
        let mut open = self.open.lock();
        let (total, per_peer) = &mut *open;
        let from_peer = per_peer.entry(peer).or_insert(0);
        if *total >= self.max || *from_peer >= self.max_per_peer {
            if *from_peer == 0 {
                per_peer.remove(&peer);
            }
            return None;
        }
        *from_peer += 1;
        *total += 1;
        Some(Slot {
            conns: self.clone(),
            peer,
        })
    }

    /// Open connections now.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.open.lock().0
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.conns.open.lock();
        let (total, per_peer) = &mut *open;
        *total -= 1;
        if let Some(n) = per_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                per_peer.remove(&self.peer);
            }
        }
        drop(open);
        self.conns.freed.notify_waiters();
    }
}

/// Milliseconds since the first call in this process (a monotonic clock in an atomic).
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// What the watchdog of one connection reads.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// Requests open on the connection.
    open: AtomicUsize,
    /// Requests whose response has not started.
    waiting: AtomicUsize,
    /// When the last request ended (or the connection opened).
    quiet_since: AtomicU64,
    /// When a byte last moved.
    last_io: AtomicU64,
    /// Whether the current HTTP/1.1 request's body has not been read to its end (one request
    /// at a time on such a connection; HTTP/2 does not use it).
    body_unread: AtomicBool,
}

impl ConnState {
    fn new() -> Arc<Self> {
        let now = now_ms();
        Arc::new(ConnState {
            open: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            quiet_since: AtomicU64::new(now),
            last_io: AtomicU64::new(now),
            body_unread: AtomicBool::new(false),
        })
    }

    /// A request opened; it is open until the guard drops.
    fn enter(self: &Arc<Self>) -> OpenRequest {
        self.open.fetch_add(1, Ordering::AcqRel);
        OpenRequest(self.clone())
    }

    /// A request waits for its response to start until the guard drops.
    fn wait(self: &Arc<Self>) -> Waiting {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        Waiting(self.clone())
    }

    fn touch(&self) {
        self.last_io.store(now_ms(), Ordering::Relaxed);
    }
}

/// Held while a request is open (its response body included).
struct OpenRequest(Arc<ConnState>);

impl Drop for OpenRequest {
    fn drop(&mut self) {
        self.0.quiet_since.store(now_ms(), Ordering::Relaxed);
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Held while a request waits for its response to start.
struct Waiting(Arc<ConnState>);

impl Drop for Waiting {
    fn drop(&mut self) {
        // the silence so far was the server's
        self.0.touch();
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Completes when the connection should be closed.
async fn watchdog(state: &ConnState, header: Duration, idle: Duration) {
    let header = header.as_millis() as u64;
    let idle = idle.as_millis() as u64;
    loop {
        let now = now_ms();
        let mut deadline = if state.waiting.load(Ordering::Acquire) == 0 {
            state.last_io.load(Ordering::Relaxed).saturating_add(idle)
        } else {
            // re-read once the response started
            now.saturating_add(idle)
        };
        if state.open.load(Ordering::Acquire) == 0 {
            let quiet = state.quiet_since.load(Ordering::Relaxed);
            deadline = deadline.min(quiet.saturating_add(header));
        }
        if now >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(deadline - now)).await;
    }
}

/// A TCP stream that notes when bytes move.
struct Watched {
    inner: TcpStream,
    state: Arc<ConnState>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.state.touch();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.state.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.state.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// An HTTP/1.1 request body that notes when it has been read to its end.
struct Reading {
    inner: hyper::body::Incoming,
    state: Arc<ConnState>,
}

impl http_body::Body for Reading {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.state.body_unread.store(false, Ordering::Relaxed);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request open until it is done or dropped.
struct Open {
    inner: Body,
    _open: OpenRequest,
}

impl http_body::Body for Open {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Accepts connections from `listener` and serves `app` on each, within `limits`, until the
/// task is aborted (which aborts every connection's task too).
pub(crate) async fn serve(mut listener: GateListener, app: axum::Router, limits: Limits) {
    let conns = Connections::new(&limits);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION);
    let builder = Arc::new(builder);
    let mut tasks = JoinSet::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            // reap finished connections as they end
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let slot = match conns.admit(peer.ip()) {
            Some(slot) => Ok(slot),
            None => Err(conns.clone()),
        };
        let state = ConnState::new();
        let io = TokioIo::new(Watched {
            inner: stream,
            state: state.clone(),
        });
        let app = app.clone();
        let service = hyper::service::service_fn({
            let state = state.clone();
            move |req: http::Request<hyper::body::Incoming>| {
                let open = state.enter();
                let waiting = state.wait();
                let app = app.clone();
                // an HTTP/1.1 request with a body: watched for being read to its end
                let watched = (req.version() <= http::Version::HTTP_11
                    && !http_body::Body::is_end_stream(req.body()))
                .then(|| state.clone());
                let req = match &watched {
                    Some(state) => {
                        state.body_unread.store(true, Ordering::Relaxed);
                        let state = state.clone();
                        req.map(|inner| Body::new(Reading { inner, state }))
                    }
                    None => req.map(Body::new),
                };
                async move {
                    let mut response = app.oneshot(req).await?;
                    drop(waiting);
                    if watched.is_some_and(|s| s.body_unread.swap(false, Ordering::Relaxed)) {
                        response.headers_mut().insert(
                            http::header::CONNECTION,
                            http::HeaderValue::from_static("close"),
                        );
                    }
                    Ok::<_, std::convert::Infallible>(
                        response.map(|inner| Body::new(Open { inner, _open: open })),
                    )
                }
            }
        });
        let builder = builder.clone();
        tasks.spawn(async move {
            let _slot = match slot {
                Ok(slot) => slot,
                Err(conns) => match conns.admit_within(peer.ip(), ADMISSION_WAIT).await {
                    Some(slot) => slot,
                    None => {
                        tracing::debug!(%peer, "connection refused: at the connection cap");
                        return;
                    }
                },
            };
            let conn = builder.serve_connection_with_upgrades(io, service);
            tokio::select! {
                served = conn => {
                    if let Err(e) = served {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                _ = watchdog(&state, limits.header_timeout, limits.idle_timeout) => {
                    tracing::debug!(%peer, "connection closed: idle or no request in time");
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the watchdog fires within `limit`.
    async fn fires(state: &Arc<ConnState>, limit: Duration) -> bool {
        let header = Duration::from_millis(200);
        let idle = Duration::from_millis(800);
        tokio::time::timeout(limit, watchdog(state, header, idle))
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn the_watchdog_closes_quiet_or_stalled_connections_only() {
        // nothing asked: closed at the head timeout
        let state = ConnState::new();
        let started = Instant::now();
        assert!(fires(&state, Duration::from_secs(3)).await);
        assert!(started.elapsed() >= Duration::from_millis(190));
        // a request open, its answer streaming, nothing moving: closed at the idle timeout
        let state = ConnState::new();
        let open = state.enter();
        assert!(!fires(&state, Duration::from_millis(400)).await);
        assert!(fires(&state, Duration::from_secs(3)).await);
        // the same with bytes moving: kept
        state.touch();
        let moving = tokio::spawn({
            let state = state.clone();
            async move {
                for _ in 0..24 {
                    state.touch();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        });
        assert!(!fires(&state, Duration::from_millis(1000)).await);
        moving.await.unwrap();
        // a request waiting for its answer to start: the silence is the server's
        state.touch();
        let waiting = state.wait();
        assert!(!fires(&state, Duration::from_millis(1200)).await);
        drop(waiting);
        drop(open);
        // answered and quiet again: the head timeout applies
        assert!(fires(&state, Duration::from_secs(3)).await);
    }

    #[test]
    fn caps_count_in_all_and_per_peer() {
        let limits = Limits {
            max_connections: 3,
            max_connections_per_peer: 2,
            ..Limits::default()
        };
        let conns = Connections::new(&limits);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let a1 = conns.admit(a).unwrap();
        let _a2 = conns.admit(a).unwrap();
        assert!(conns.admit(a).is_none(), "per peer");
        let b1 = conns.admit(b).unwrap();
        assert!(conns.admit(b).is_none(), "in all");
        drop(a1);
        assert!(conns.admit(a).is_some());
        drop(b1);
        assert_eq!(conns.count(), 1);
    }

    #[tokio::test]
    async fn a_connection_over_the_cap_waits_a_moment_for_a_place() {
        let limits = Limits {
            max_connections: 10,
            max_connections_per_peer: 1,
            ..Limits::default()
        };
        let conns = Connections::new(&limits);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let first = conns.admit(a).unwrap();
        // nothing freed: refused once the wait is over
        let started = Instant::now();
        assert!(conns
            .admit_within(a, Duration::from_millis(50))
            .await
            .is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        // freed during the wait: admitted then
        let waiting = tokio::spawn({
            let conns = conns.clone();
            async move { conns.admit_within(a, Duration::from_secs(5)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        assert!(waiting.await.unwrap().is_some());
        assert_eq!(conns.waiting.load(Ordering::Relaxed), 0);
    }
}
