//! Stage 9, record: for every call, whatever happened, one audit record, the tool's metrics
//! ([`crate::telemetry`]) and the outcome on the call's tracing span. The record goes to the
//! sink without waiting on disk (the JSONL and SQLite sinks write from a background thread and
//! redact there); the metrics are a few atomic adds on handles resolved at the tool's first
//! call.
//!
//! A call that may have acted is the exception. Before the handler of a tool that is not
//! `read_only` runs, `intent` commits an intent record ([`Outcome::Started`]) and waits for
//! it; the handler does not run when it cannot be committed. Such a call's own record is then
//! committed before its result is returned. Why an intent and not only the record before the
//! result: a process killed while the handler runs (a shell command of minutes, a file
//! renamed into place just before the kill) would otherwise leave an effect no record
//! mentions; with the intent, every effect has a record, and a `started` record without its
//! call's record after it says exactly which calls' outcome is unknown.

use super::{CallState, Inner};
use crate::audit::{AuditRecord, Outcome};
use crate::call::CallId;
use crate::error::{ErrorKind, ToolError};
use crate::result::ToolResult;
use crate::session::Session;
use crate::telemetry::{CallFacts, ToolMetrics, UNKNOWN_TOOL};
use std::time::Instant;

/// Commits the intent record of a call about to run its handler and waits for it.
///
/// # Errors
/// `internal` with reason `audit_unavailable` when the sink could not commit it: the handler
/// must not run.
pub(crate) async fn intent(
    inner: &Inner,
    session: &Session,
    id: &CallId,
    st: &mut CallState,
    started: Instant,
) -> Result<(), ToolError> {
    if inner.audit.discards() {
        return Ok(());
    }
    let Some(entry) = &st.entry else {
        return Ok(());
    };
    let (decision, rule) = match &st.verdict {
        Some(v) => (Some(v.decision), Some(v.rule.clone())),
        None => (None, None),
    };
    let record = AuditRecord {
        time_us: st.time_us,
        session: session.id.clone(),
        profile: session.profile.clone(),
        principal: session.principal.clone(),
        tool: entry.spec().name.clone(),
        version: Some(entry.spec().version.clone()),
        call_id: id.clone(),
        decision,
        rule,
        approval: st.approval,
        grant: st.grant,
        scope: st.scope,
        arguments: st.arguments.clone(),
        result_bytes: 0,
        truncated: None,
        outcome: Outcome::Started,
        error_kind: None,
        error_reason: None,
        attempts: 0,
        idempotency_key: st.key.clone(),
        ledger: st.ledger,
        duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    match inner.audit.record_durable(record).await {
        Ok(()) => {
            st.intent = true;
            Ok(())
        }
        Err(e) => {
            tracing::error!(error = %e, "the intent record was not committed; the call does not run");
            Err(ToolError::internal(
                "the call was not run and changed nothing: toolgate could not commit its audit \
                 record. Tell the operator; do not send the call again until the audit store \
                 works",
            )
            .with_reason("audit_unavailable"))
        }
    }
}

pub(crate) async fn record(
    inner: &Inner,
    session: &Session,
    mut st: CallState,
    result: &ToolResult,
    span: &tracing::Span,
) {
    // a verdict over what the tool reached on its own (a redirect the policy denied) names
    // its rule in the record when it is stronger than the call's
    if let Some(reached) = st.reached.take().and_then(|r| r.lock().take()) {
        if st
            .verdict
            .as_ref()
            .is_none_or(|v| reached.decision > v.decision)
        {
            st.verdict = Some(reached);
        }
    }
    let outcome = match &result.error {
        None => Outcome::Ok,
        Some(e) if e.kind == ErrorKind::InputRequired => Outcome::InputRequired,
        Some(e) if e.is_recoverable() => Outcome::RecoverableError,
        Some(_) => Outcome::FatalError,
    };
    // a call waiting for its client's input has not failed: no error kind, counted as no error
    let error_kind = result
        .error
        .as_ref()
        .map(|e| e.kind)
        .filter(|k| *k != ErrorKind::InputRequired);
    let duration_us = u64::try_from(result.duration.as_micros()).unwrap_or(u64::MAX);
    span.record("outcome", outcome.as_str());
    match &result.error {
        None => tracing::debug!(duration_us, bytes = st.result_bytes, "tool call succeeded"),
        Some(_) if outcome == Outcome::InputRequired => {
            tracing::debug!(duration_us, "tool call waits for its client's input")
        }
        Some(e) => {
            span.record("error_kind", e.kind.as_str());
            tracing::info!(duration_us, kind = %e.kind, reason = e.reason.as_deref().unwrap_or(""), "tool call failed")
        }
    }
    let metrics = match &st.entry {
        Some(e) => e.metrics(),
        None => inner
            .unknown_metrics
            .get_or_init(|| ToolMetrics::new(UNKNOWN_TOOL.into())),
    };
    metrics.observe(CallFacts {
        duration: result.duration,
        decision: st.verdict.as_ref().map(|v| v.decision),
        approval: st.approval,
        error: error_kind,
        truncated: result.truncation.is_some(),
    });
    let (decision, rule) = match st.verdict {
        Some(v) => (Some(v.decision), Some(v.rule)),
        None => (None, None),
    };
    let intent = st.intent;
    let record = AuditRecord {
        time_us: st.time_us,
        session: session.id.clone(),
        profile: session.profile.clone(),
        principal: session.principal.clone(),
        tool: result.tool.clone(),
        version: st.entry.as_ref().map(|e| e.spec().version.clone()),
        call_id: result.call_id.clone(),
        decision,
        rule,
        approval: st.approval,
        grant: st.grant,
        scope: st.scope,
        arguments: st.arguments,
        result_bytes: st.result_bytes,
        truncated: result.truncation.as_ref().map(|t| t.handle.clone()),
        outcome,
        error_kind,
        error_reason: result
            .error
            .as_ref()
            .filter(|_| error_kind.is_some())
            .and_then(|e| e.reason.as_ref().map(|r| r.to_string())),
        attempts: st.attempts,
        idempotency_key: st.key,
        ledger: st.ledger,
        duration_us,
    };
    if !intent {
        inner.audit.record(record);
    } else if let Err(e) = inner.audit.record_durable(record).await {
        // the effect is covered by the committed intent; the result still goes back, so the
        // model does not act twice on a call that ran
        tracing::error!(error = %e, call_id = %result.call_id, "the record of a call that ran was not committed; its intent record stands for it");
    }
}
