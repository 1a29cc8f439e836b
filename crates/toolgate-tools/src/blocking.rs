//! Running blocking file-system work off the async runtime, stopped when the call is.

use tokio_util::sync::{CancellationToken, DropGuard};
use toolgate_core::{ToolContext, ToolError};

/// Runs `work` on tokio's blocking pool. A panic inside it is resumed in the calling task, so
/// the pipeline's execute stage reports it as it reports any panicking handler.
///
/// # Errors
/// What `work` returns; `internal` when the runtime shuts the worker down before it ran.
pub(crate) async fn run<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(ToolError::internal(
            "the tool's worker was stopped before it finished; try again",
        )),
    }
}

/// A token for blocking work: cancelled when the call is cancelled, and when the returned
/// guard is dropped. Keep the guard in the handler's future: when the pipeline drops that
/// future at the call's deadline, the blocking work sees the token cancelled and stops
/// instead of running on unobserved.
pub(crate) fn call_token(ctx: &ToolContext) -> (CancellationToken, DropGuard) {
    let token = ctx.cancellation().child_token();
    let guard = token.clone().drop_guard();
    (token, guard)
}
