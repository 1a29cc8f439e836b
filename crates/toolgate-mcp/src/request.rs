//! What a tool can reach of the MCP request it runs for: the request context (the client's
//! peer, `_meta`, the cancellation token), to talk to the client while it runs (log messages,
//! sampling, elicitation) and to report its own progress.
//!
//! Available inside a `tools/call` dispatched by [`crate::handler`], in the task that runs the
//! handler (the pipeline runs handlers in the caller's task; work moved to `tokio::spawn` or a
//! blocking thread has no access). Outside, every function here answers `None` or `false`.

use crate::approval::CLIENT;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::{RequestContext, RoleServer};
use std::sync::atomic::Ordering;

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
