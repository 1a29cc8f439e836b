//! MCP over stdio: one connection on standard input and output.

use crate::{Error, McpServer};
use rmcp::ServiceExt;
use std::future::Future;
use std::time::Duration;

/// Serves one MCP session on stdin/stdout until the client closes stdin, or until `shutdown`
/// completes: then calls in flight get `grace` to finish before the session is closed.
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
    let start = server.connection().serve(rmcp::transport::stdio());
    let running = tokio::select! {
        r = start => r.map_err(|e| Error::Initialize(e.to_string()))?,
        _ = &mut shutdown => return Ok(()),
    };
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => return Ok(()),
        _ = &mut shutdown => {}
    }
    if !server.drain(grace).await {
        tracing::warn!(
            calls = server.calls_in_flight(),
            "grace period over; closing with calls in flight"
        );
    }
    // Let the last answers reach stdout before the session closes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), waiting).await;
    Ok(())
}
