//! Stage 9, record: for every call, whatever happened, one audit record, the tool's metrics
//! ([`crate::telemetry`]) and the outcome on the call's tracing span. The record goes to the
//! sink without waiting on disk (the JSONL and SQLite sinks write from a background thread and
//! redact there); the metrics are a few atomic adds on handles resolved at the tool's first
//! call.

use super::{CallState, Inner};
use crate::audit::{now_us, AuditRecord, Outcome};
use crate::error::ErrorKind;
use crate::result::ToolResult;
use crate::session::Session;
use crate::telemetry::{CallFacts, ToolMetrics, UNKNOWN_TOOL};
use std::time::SystemTime;

pub(crate) fn record(
    inner: &Inner,
    session: &Session,
    st: CallState,
    result: &ToolResult,
    wall: SystemTime,
    span: &tracing::Span,
) {
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
    let duration_us = result.duration.as_micros() as u64;
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
    inner.audit.record(AuditRecord {
        time_us: now_us(wall),
        session: session.id.clone(),
        profile: session.profile.clone(),
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
        duration_us,
    });
}
