//! Stage 6, budget: takes the call from the rate limits and the daily quota of its principal
//! ([`crate::rate`]), then charges it to the session's budgets.

use crate::error::{ErrorKind, ToolError};
use crate::session::Session;
use crate::spec::ToolSpec;
use std::sync::atomic::Ordering;

/// Takes one call from the rate limits, then from the daily quota (a call refused by a rate
/// limit spends none of the quota).
///
/// # Errors
/// `rate_limited` (recoverable) with `retry_after_ms` in its details; `internal` when the
/// quota store fails.
pub(crate) fn limit(
    inner: &super::Inner,
    session: &Session,
    spec: &ToolSpec,
) -> Result<(), ToolError> {
    if !inner.rate.is_empty() {
        inner
            .rate
            .check(session.principal(), &spec.name, spec.rules_as.as_ref())?;
    }
    if let Some((store, quota)) = &inner.quota {
        crate::rate::take_quota(
            &**store,
            *quota,
            session.principal(),
            std::time::SystemTime::now(),
        )?;
    }
    Ok(())
}

/// Charges one call.
///
/// # Errors
/// `budget_exhausted` (fatal) naming the budget: `max_wall_time`, `max_result_bytes`,
/// `max_calls` or `max_calls_per_tool`.
pub fn charge(session: &Session, spec: &ToolSpec) -> Result<(), ToolError> {
    let b = &session.budgets;
    let exhausted = |which: &'static str, what: String| {
        Err(ToolError::new(
            ErrorKind::BudgetExhausted,
            format!("{what}; the session can make no more such calls"),
        )
        .with_reason(which))
    };
    if let Some(max) = b.max_wall_time {
        if session.started.elapsed() >= max {
            return exhausted(
                "max_wall_time",
                format!(
                    "the session's wall-time budget of {} ms is used up",
                    max.as_millis()
                ),
            );
        }
    }
    if let Some(max) = b.max_result_bytes {
        if session.result_bytes.load(Ordering::Relaxed) >= max {
            return exhausted(
                "max_result_bytes",
                format!("the session's budget of {max} result bytes is used up"),
            );
        }
    }
    if let Some(max) = b.max_calls {
        let used = session.calls.fetch_add(1, Ordering::Relaxed);
        if used >= max {
            session.calls.fetch_sub(1, Ordering::Relaxed);
            return exhausted(
                "max_calls",
                format!("the session's budget of {max} calls is used up"),
            );
        }
    } else {
        session.calls.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(max) = b.max_calls_per_tool {
        let mut per_tool = session.per_tool.lock();
        let n = per_tool.entry(spec.name.clone()).or_insert(0);
        if *n >= max {
            drop(per_tool);
            session.calls.fetch_sub(1, Ordering::Relaxed);
            return exhausted(
                "max_calls_per_tool",
                format!(
                    "the session's budget of {max} calls to {} is used up",
                    spec.name
                ),
            );
        }
        *n += 1;
    }
    Ok(())
}
