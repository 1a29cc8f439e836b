//! [`Limits`]: what one HTTP server lets clients hold: connections (in all and per peer
//! address), time to send a request's head and body, idle connections, and live MCP sessions
//! per caller. Every limit has a default fit for a local server; `toolgate.toml`'s `[server]`
//! and `toolgate serve`'s flags set them.

use std::time::Duration;

/// The default cap on open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// The default cap on open connections from one peer IP address.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 128;
/// The default time a client has to send a request's head.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a client has to send a request's body once its head arrived.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a connection may go without a byte moving either way.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default cap on live MCP sessions per caller (per token; per principal once OAuth is
/// served).
pub const DEFAULT_MAX_SESSIONS_PER_CALLER: usize = 128;
/// Concurrent requests (streams) on one HTTP/2 connection.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 64;

/// The resource limits of an HTTP server; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Open connections in all; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Open connections from one peer IP address; one more is closed as soon as it is
    /// accepted. On loopback every client is the same peer (unless it binds another
    /// 127.0.0.0/8 address).
    pub max_connections_per_peer: usize,
    /// A request's head must arrive in full within this long of the connection opening or
    /// of the previous answer (so it also closes idle keep-alive connections); otherwise the
    /// connection is closed.
    pub header_timeout: Duration,
    /// A request's body must arrive in full within this long of its head (`408` otherwise).
    pub body_timeout: Duration,
    /// A connection on which no byte moves either way for this long is closed, unless a
    /// request on it waits for its response to start (the server's own silence: a long call
    /// answered as plain JSON). Answers streamed over SSE send a keep-alive every 15 s, so a
    /// live stream is never idle; a client that stops reading one is.
    pub idle_timeout: Duration,
    /// Live MCP sessions (protocol revisions before 2026-07-28) one caller may hold; one more
    /// `initialize` gets `429` until a session ends (`DELETE`, or 5 minutes idle).
    pub max_sessions_per_caller: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_sessions_per_caller: DEFAULT_MAX_SESSIONS_PER_CALLER,
        }
    }
}

impl Limits {
    /// These limits with every count at least 1 and every timeout at least 1 ms.
    pub(crate) fn sane(self) -> Self {
        let ms = Duration::from_millis(1);
        Limits {
            max_connections: self.max_connections.max(1),
            max_connections_per_peer: self.max_connections_per_peer.max(1),
            header_timeout: self.header_timeout.max(ms),
            body_timeout: self.body_timeout.max(ms),
            idle_timeout: self.idle_timeout.max(ms),
            max_sessions_per_caller: self.max_sessions_per_caller.max(1),
        }
    }
}
