//! MCP over streamable HTTP at `/mcp`: rmcp's `StreamableHttpService` on axum, on hyper's
//! connections within [`Limits`] (`connections`), behind, in this order:
//!
//! 1. the [`guard`] (one `Host`, one `Origin`; bearer token, or with [`HttpConfig::auth`] an
//!    OAuth access token checked by the resource server ([`auth`]); `Host` and `Origin`
//!    allowed); the Protected Resource Metadata (RFC 9728) is served at its well-known paths
//! 2. the count of requests in flight a shutdown waits for
//! 3. the body of a JSON `POST` read within the cap and the body timeout and checked as one
//!    JSON-RPC message before rmcp reads it (`body`; [`crate::jsonrpc`])
//! 4. rmcp, whose sessions live in `sessions`: per session the ids in flight
//!    ([`crate::jsonrpc::InFlightIds`]), per [`Caller`] the live sessions
//!
//! The listener sets TCP_NODELAY on every accepted connection ([`listener`]). With
//! [`HttpConfig::metrics`] set, `GET /metrics` serves the Prometheus text exposition
//! ([`crate::prometheus`]) behind the same guard.
//!
//! - loopback by default; a non-loopback address without a bearer token is refused before
//!   anything is bound ([`Error::TokenRequired`]), and so is one with an authorization server
//!   ([`Error::HttpsRequired`]: access tokens need HTTPS, from a reverse proxy in front)
//! - request bodies over [`HttpConfig::max_body_bytes`] get `413` (at once when
//!   `Content-Length` says so)
//! - a `tools/call`'s `params.idempotencyKey` (SEP-3182) is moved into its `_meta` after the
//!   check and before rmcp reads the body ([`crate::idempotency`])
//! - sessions (protocol revisions before 2026-07-28) get rmcp's ids: UUID v4, 122 random bits
//! - 2026-07-28 requests are served statelessly, one connection per request (rmcp, SEP-2567);
//!   a stateless request whose response stream closes is cancelled
//! - [`HttpServer::shutdown`]: stop accepting, let calls in flight finish within the grace
//!   period, then close every session

pub mod auth;
mod body;
mod caller;
mod connections;
pub mod guard;
mod limits;
pub mod listener;
mod related;
mod sessions;
mod tracked;

pub(crate) use caller::caller_of_request;
pub use caller::Caller;
pub use limits::{
    Limits, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER, DEFAULT_MAX_SESSIONS_PER_CALLER,
    MAX_STREAMS_PER_CONNECTION,
};

use crate::inflight::InFlight;
use crate::prometheus::PrometheusHandle;
use crate::{Error, McpServer};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The default cap on a request body: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// The default grace period for calls in flight at shutdown.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

/// How to serve over HTTP. Its `Debug` never shows the bearer token (`<redacted>`).
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The address to bind (port 0 picks one).
    pub addr: SocketAddr,
    /// The bearer token every request must carry; required when `addr` is not loopback.
    pub token: Option<String>,
    /// More `host` or `host:port` authorities to accept besides the bound address (and the
    /// loopback names, on loopback).
    pub allowed_hosts: Vec<String>,
    /// More `scheme://host:port` origins to accept besides the bound address's own.
    pub allowed_origins: Vec<String>,
    /// The cap on a request body, in bytes (`413` past it).
    pub max_body_bytes: usize,
    /// How long calls in flight may run on after a shutdown starts.
    pub grace: Duration,
    /// Keep sessions (`Mcp-Session-Id`) for clients on revisions before 2026-07-28 (default
    /// true; false serves them statelessly too).
    pub legacy_sessions: bool,
    /// Answer stateless requests with `application/json` when the handler sends nothing but
    /// the response (default false: `text/event-stream`).
    pub json_response: bool,
    /// Serve the metrics this handle renders at `GET /metrics` (default none: `404`).
    pub metrics: Option<PrometheusHandle>,
    /// Connections, timeouts and sessions per caller ([`Limits::default`]).
    pub limits: Limits,
    /// Check OAuth access tokens of this authorization server instead of `token` (toolgate
    /// as a resource server; loopback addresses only: HTTPS comes from a proxy in front).
    pub auth: Option<auth::AuthConfig>,
    /// Rate limits on the requests of each caller to `/mcp` (`[[limits.rate]]` with
    /// `counts = "requests"`), checked before dispatch: `429` with `Retry-After` past them.
    pub request_limits: Option<Arc<toolgate_core::rate::RateLimits>>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let HttpConfig {
            addr,
            token,
            allowed_hosts,
            allowed_origins,
            max_body_bytes,
            grace,
            legacy_sessions,
            json_response,
            metrics,
            limits,
            auth,
            request_limits,
        } = self;
        f.debug_struct("HttpConfig")
            .field("addr", addr)
            .field("token", &token.as_ref().map(|_| "<redacted>"))
            .field("allowed_hosts", allowed_hosts)
            .field("allowed_origins", allowed_origins)
            .field("max_body_bytes", max_body_bytes)
            .field("grace", grace)
            .field("legacy_sessions", legacy_sessions)
            .field("json_response", json_response)
            .field("metrics", &metrics.as_ref().map(|_| "PrometheusHandle"))
            .field("limits", limits)
            .field("auth", auth)
            .field("request_limits", request_limits)
            .finish()
    }
}

impl HttpConfig {
    /// Loopback defaults on `addr`: no token, the 4 MiB body cap, a 10 s grace period,
    /// sessions for legacy clients.
    pub fn new(addr: SocketAddr) -> Self {
        HttpConfig {
            addr,
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            grace: DEFAULT_GRACE,
            legacy_sessions: true,
            json_response: false,
            metrics: None,
            limits: Limits::default(),
            auth: None,
            request_limits: None,
        }
    }

    /// Counts each caller's requests to `/mcp` against `limits` before dispatch (none: no
    /// limit).
    pub fn request_limits(mut self, limits: toolgate_core::rate::RateLimits) -> Self {
        self.request_limits = (!limits.is_empty()).then(|| Arc::new(limits));
        self
    }

    /// Checks access tokens of `auth`'s authorization server on every request (the static
    /// token is then not used).
    pub fn auth(mut self, auth: auth::AuthConfig) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Requires `token` as `Authorization: Bearer TOKEN` on every request.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Accepts another `Host` authority.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Accepts another `Origin`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Sets the body cap in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Sets the shutdown grace period.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Whether legacy clients get sessions.
    pub fn legacy_sessions(mut self, on: bool) -> Self {
        self.legacy_sessions = on;
        self
    }

    /// Whether stateless requests may be answered with plain JSON.
    pub fn json_response(mut self, on: bool) -> Self {
        self.json_response = on;
        self
    }

    /// Sets the connection, timeout and session limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves `handle`'s metrics at `GET /metrics`, behind the same guard as `/mcp`.
    pub fn metrics(mut self, handle: PrometheusHandle) -> Self {
        self.metrics = Some(handle);
        self
    }

    /// Refuses a configuration that would expose the server without a token.
    ///
    /// # Errors
    /// [`Error::TokenRequired`] for a non-loopback address without a token;
    /// [`Error::HttpsRequired`] for a non-loopback address with an authorization server;
    /// [`Error::Config`] for an empty token.
    pub fn check(&self) -> Result<(), Error> {
        if self.auth.is_some() {
            return if self.addr.ip().is_loopback() {
                Ok(())
            } else {
                Err(Error::HttpsRequired { addr: self.addr })
            };
        }
        match &self.token {
            Some(t) if t.trim().is_empty() => Err(Error::Config("the token is empty".into())),
            Some(_) => Ok(()),
            None if self.addr.ip().is_loopback() => Ok(()),
            None => Err(Error::TokenRequired { addr: self.addr }),
        }
    }
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    token: Option<String>,
    grace: Duration,
    server: McpServer,
    stop_accepting: CancellationToken,
    close_sessions: CancellationToken,
    requests: Arc<InFlight>,
    task: JoinHandle<()>,
}

impl HttpServer {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// The bearer token requests must carry, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Stops accepting connections, lets calls in flight finish within the grace period, then
    /// closes every session and waits for the server to stop.
    pub async fn shutdown(self) {
        self.stop_accepting.cancel();
        // A POST is in flight until its response body has been sent: its call's result
        // included, which may leave the handler a moment before it reaches the stream.
        if !self.requests.wait_idle(self.grace).await {
            tracing::warn!(
                calls = self.server.calls_in_flight(),
                "grace period over; closing with calls in flight"
            );
        }
        // Ends every session and its streams; connections still open are dropped with the
        // serving task (or close when their clients do).
        self.close_sessions.cancel();
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.task.abort();
    }

    /// Serves until `signal` completes, then shuts down as [`HttpServer::shutdown`] does.
    ///
    /// # Errors
    /// [`Error::Io`] if the server stopped on its own (its task failed).
    pub async fn run_until(
        mut self,
        signal: impl std::future::Future<Output = ()>,
    ) -> Result<(), Error> {
        tokio::select! {
            r = &mut self.task => {
                return match r {
                    Ok(()) => Ok(()),
                    Err(e) => Err(Error::io("serving HTTP", std::io::Error::other(e))),
                };
            }
            _ = signal => {}
        }
        self.shutdown().await;
        Ok(())
    }
}

/// Drains the recorder's histogram samples every few seconds (a scrape does too), so memory
/// stays bounded when nobody scrapes; stops with the server.
async fn upkeep(handle: PrometheusHandle, stop: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => handle.run_upkeep(),
            _ = stop.cancelled() => return,
        }
    }
}

/// Binds `config.addr` and serves `server` at `/mcp` in the background.
///
/// # Errors
/// [`Error::TokenRequired`] before binding, for a non-loopback address without a token;
/// [`Error::Io`] when the address cannot be bound.
pub async fn serve_http(server: McpServer, config: HttpConfig) -> Result<HttpServer, Error> {
    config.check()?;
    let tcp = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| Error::io(format!("binding {}", config.addr), e))?;
    let local_addr = tcp
        .local_addr()
        .map_err(|e| Error::io("reading the bound address", e))?;
    let close_sessions = CancellationToken::new();
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.legacy_sessions)
        .with_json_response(config.json_response)
        .with_max_request_body_bytes(config.max_body_bytes)
        .with_cancellation_token(close_sessions.clone())
        // The guard checks Host and Origin against the bound port; rmcp's own check would
        // refuse the extra hosts a non-loopback deployment names.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let limits = config.limits.sane();
    let factory_server = server.clone();
    let sessions = Arc::new(sessions::Sessions::new(
        server.shared.max_in_flight,
        limits.max_sessions_per_caller,
    ));
    let service: StreamableHttpService<crate::handler::Connection, sessions::Sessions> =
        StreamableHttpService::new(
            move || Ok(factory_server.connection()),
            sessions.clone(),
            rmcp_config,
        );
    let body_gate = Arc::new(body::BodyGate {
        max_bytes: config.max_body_bytes,
        timeout: limits.body_timeout,
        sessions,
        request_limits: config.request_limits.clone(),
    });
    let mut guard = guard::Guard::new(
        local_addr,
        config.token.clone(),
        &config.allowed_hosts,
        &config.allowed_origins,
    );
    let mut token = config.token;
    let resource_server = match config.auth {
        Some(a) => {
            let resource = a
                .resource
                .clone()
                .unwrap_or_else(|| format!("http://{local_addr}/mcp"));
            let rs = Arc::new(auth::ResourceServer::new(a, resource).map_err(Error::Config)?);
            guard = guard.with_auth(rs.clone());
            token = None;
            Some(rs)
        }
        None => None,
    };
    let guard = Arc::new(guard);
    let requests = Arc::new(InFlight::default());
    let mcp = tower::Layer::layer(
        &axum::middleware::from_fn_with_state(body_gate, body::middleware),
        service,
    );
    let mut app = axum::Router::new().nest_service("/mcp", mcp);
    if let Some(rs) = &resource_server {
        let document = rs.metadata().to_string();
        for path in rs.metadata_paths() {
            let document = document.clone();
            app = app.route(
                &path,
                axum::routing::get(move || {
                    let document = document.clone();
                    async move { ([(http::header::CONTENT_TYPE, "application/json")], document) }
                }),
            );
        }
    }
    if let Some(handle) = config.metrics.clone() {
        app = app.route(
            "/metrics",
            axum::routing::get(crate::prometheus::handler).with_state(handle.clone()),
        );
        tokio::spawn(upkeep(handle, close_sessions.clone()));
    }
    let app = app
        .layer(axum::middleware::from_fn_with_state(
            requests.clone(),
            tracked::middleware,
        ))
        .layer(axum::middleware::from_fn_with_state(
            guard,
            guard::middleware,
        ));
    let stop_accepting = CancellationToken::new();
    let listener = listener::GateListener::new(tcp, stop_accepting.clone())
        .map_err(|e| Error::io("reading the bound address", e))?;
    let task = tokio::spawn(connections::serve(listener, app, limits));
    Ok(HttpServer {
        local_addr,
        token,
        grace: config.grace,
        server,
        stop_accepting,
        close_sessions,
        requests,
        task,
    })
}
