//! Stage 7, execute: runs the handler under the tool's timeout and the call's cancellation,
//! catches a panic, and retries with exponential backoff and full jitter, but only for tools
//! marked `idempotent`, only on errors the handler marks transient, and only while the
//! deadline leaves room. A call of a side-effecting tool runs once, under the idempotency
//! ledger ([`super::once`]).

use crate::context::ToolContext;
use crate::error::{ErrorKind, ToolError};
use crate::registry::Entry;
use crate::result::ToolOutput;
use crate::tool::Args;
use futures::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// Retries for idempotent tools: attempt `n` (from 1) waits a random time in
/// `[0, min(max_delay, base_delay * 2^(n-1))]` before attempt `n + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 disables retries).
    pub max_attempts: u32,
    /// The first backoff ceiling.
    pub base_delay: Duration,
    /// The largest backoff ceiling.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 3 attempts, 50 ms base, 2 s cap.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (full jitter).
    pub fn backoff(&self, attempt: u32) -> Duration {
        use rand::Rng;
        let exp = self.base_delay.saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        let ceiling = exp.min(self.max_delay);
        let nanos = ceiling.as_nanos().min(u64::MAX as u128) as u64;
        Duration::from_nanos(rand::rng().random_range(0..=nanos))
    }
}

/// Runs the call; `attempts` counts handler invocations. For tools that are read-only or
/// idempotent (a side-effecting tool's call runs once, under the ledger: [`super::once`]).
///
/// # Errors
/// `cancelled`; `timeout` (idempotent tools) or `outcome_unknown` (side-effecting ones) past
/// the deadline; `internal` (reason `panic`) when the handler panics; the handler's error
/// otherwise.
pub async fn execute(
    entry: &Entry,
    args: Args,
    arguments: &Value,
    ctx: ToolContext,
    retry: &RetryPolicy,
    attempts: &mut u32,
) -> Result<ToolOutput, ToolError> {
    let spec = entry.spec();
    let idempotent = spec.effects.idempotent;
    let ctx = start_clock(entry, ctx);
    let deadline = tokio::time::Instant::from_std(ctx.deadline);
    let cancel = ctx.cancel.clone();
    let mut args = Some(args);
    loop {
        let a = match args.take() {
            Some(a) => a,
            None => entry.tool.decode(arguments)?,
        };
        let error = match attempt(entry, a, ctx.clone(), attempts).await {
            Attempt::Output(output) => return Ok(output),
            Attempt::Failed(e) => e,
            Attempt::Panicked(e) => return Err(e),
            Attempt::TimedOut => return Err(timed_out(spec.timeout, idempotent)),
            Attempt::CancelledBefore | Attempt::CancelledDuring => {
                return Err(cancelled(idempotent))
            }
        };
        if !(idempotent && error.transient && *attempts < retry.max_attempts) {
            return Err(error);
        }
        let wait = retry.backoff(*attempts);
        if tokio::time::Instant::now()
            .checked_add(wait)
            .is_none_or(|at| at >= deadline)
        {
            return Err(error);
        }
        tracing::debug!(attempt = *attempts, wait_ms = wait.as_millis() as u64, error = %error, "retrying a transient failure");
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(cancelled(idempotent)),
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// `ctx` with its deadline counted from now: time spent waiting for an approver does not eat
/// the timeout.
pub(crate) fn start_clock(entry: &Entry, mut ctx: ToolContext) -> ToolContext {
    ctx.deadline = super::deadline_after(std::time::Instant::now(), entry.spec().timeout);
    ctx
}

/// How one run of the handler ended.
pub(crate) enum Attempt {
    /// It returned its output.
    Output(ToolOutput),
    /// It returned an error.
    Failed(ToolError),
    /// It panicked (`internal`, reason `panic`).
    Panicked(ToolError),
    /// It ran past the deadline and was stopped (blocking work it started was told to stop).
    TimedOut,
    /// The call was cancelled before the handler started.
    CancelledBefore,
    /// The call was cancelled while the handler ran, or the handler ended because of it.
    CancelledDuring,
}

/// Runs the handler once under `ctx`'s deadline and cancellation, catching a panic;
/// `attempts` counts the run.
pub(crate) async fn attempt(
    entry: &Entry,
    args: Args,
    ctx: ToolContext,
    attempts: &mut u32,
) -> Attempt {
    let deadline = tokio::time::Instant::from_std(ctx.deadline);
    let cancel = ctx.cancel.clone();
    if cancel.is_cancelled() {
        return Attempt::CancelledBefore;
    }
    *attempts += 1;
    let run = AssertUnwindSafe(entry.tool.call(args, ctx)).catch_unwind();
    // the handler is polled first: a call that completes at once registers neither a
    // timer nor a cancellation waker
    let outcome = tokio::select! {
        biased;
        r = tokio::time::timeout_at(deadline, run) => r,
        _ = cancel.cancelled() => return Attempt::CancelledDuring,
    };
    if cancel.is_cancelled() {
        // the handler finished because it saw the cancellation, or raced it: the caller
        // asked to stop, so the call ends cancelled
        return Attempt::CancelledDuring;
    }
    match outcome {
        Err(_elapsed) => {
            // blocking work the handler started watches this token: stop it too
            cancel.cancel();
            Attempt::TimedOut
        }
        Ok(Err(panic)) => Attempt::Panicked(panicked(panic)),
        Ok(Ok(Ok(output))) => Attempt::Output(output),
        Ok(Ok(Err(e))) => Attempt::Failed(e),
    }
}

pub(crate) fn cancelled(idempotent: bool) -> ToolError {
    let e = ToolError::new(
        ErrorKind::Cancelled,
        "the call was cancelled before it finished",
    );
    if idempotent {
        e
    } else {
        e.with_reason("effect_unknown")
    }
}

pub(crate) fn timed_out(timeout: Duration, idempotent: bool) -> ToolError {
    let ms = timeout.as_millis();
    if idempotent {
        ToolError::new(
            ErrorKind::Timeout,
            format!("the call did not finish within its timeout of {ms} ms; narrow the request or try again"),
        )
        .transient()
    } else {
        ToolError::new(
            ErrorKind::OutcomeUnknown,
            format!(
                "the call did not finish within its timeout of {ms} ms and was stopped; its effect may or \
                 may not have happened, so check before calling it again"
            ),
        )
        .with_reason("timeout")
    }
}

fn panicked(panic: Box<dyn std::any::Any + Send>) -> ToolError {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    // the panic text may name host paths or secrets: it goes to the operator's log only
    tracing::error!(panic = %text, "tool handler panicked");
    ToolError::internal("the tool failed internally; this is not caused by the arguments")
        .with_reason("panic")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_within_its_ceiling() {
        let r = RetryPolicy::default();
        for attempt in 1..40 {
            let ceiling = r
                .base_delay
                .saturating_mul(1u32.checked_shl(attempt - 1).unwrap_or(u32::MAX))
                .min(r.max_delay);
            assert!(r.backoff(attempt) <= ceiling);
        }
    }
}
