//! MCP over stdio: one session on standard input and output, as newline-delimited JSON-RPC
//! ([`lines::LineTransport`]) behind the session's id gate ([`crate::jsonrpc::IdGate`]).

pub mod lines;

use crate::jsonrpc::{IdGate, InFlightIds};
use crate::{Error, McpServer};
use rmcp::ServiceExt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Serves one MCP session on stdin/stdout until the client closes stdin or stops reading
/// stdout, or until `shutdown` completes: then calls in flight get `grace` to finish before
/// the session is closed. When the client goes away first, rmcp cancels the calls still
/// running; this waits (up to `grace`) for them to end, so their audit records are written.
///
/// # Errors
/// [`Error::Initialize`] when the client does not complete the `initialize` handshake (or the
/// first 2026-07-28 request).
pub async fn serve_stdio(
    server: McpServer,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> Result<(), Error> {
    tokio::pin!(shutdown);
    let ids = Arc::new(InFlightIds::new(server.shared.max_in_flight));
    let transport = IdGate::new(lines::stdio(), ids);
    let start = server.connection().serve(transport);
    let running = tokio::select! {
        r = start => r.map_err(|e| Error::Initialize(e.to_string()))?,
        _ = &mut shutdown => return Ok(()),
    };
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => {
            // the client closed stdin or stopped reading stdout: the calls it left running
            // were cancelled; let them end and be recorded
            if !server.drain(grace).await {
                tracing::warn!(
                    calls = server.calls_in_flight(),
                    "grace period over; stopping with calls in flight"
                );
            }
            return Ok(());
        }
        _ = &mut shutdown => {}
    }
    if !server.drain(grace).await {
        tracing::warn!(
            calls = server.calls_in_flight(),
            "grace period over; closing with calls in flight"
        );
    }
    // the session's end writes the answers still queued (the transport's close)
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(6), waiting).await;
    Ok(())
}
