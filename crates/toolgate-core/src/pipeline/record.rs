//! Stage 9, record: one audit record and one tracing event per call, whatever happened. The
//! record goes to the sink without waiting on disk (the JSONL and SQLite sinks write from a
//! background thread and redact there).

use super::{CallState, Inner};
use crate::audit::{now_us, AuditRecord, Outcome};
use crate::result::ToolResult;
use crate::session::Session;
use std::time::SystemTime;

pub(crate) fn record(
    inner: &Inner,
    session: &Session,
    st: CallState,
    result: &ToolResult,
    wall: SystemTime,
) {
    let outcome = match &result.error {
        None => Outcome::Ok,
        Some(e) if e.is_recoverable() => Outcome::RecoverableError,
        Some(_) => Outcome::FatalError,
    };
    let duration_us = result.duration.as_micros() as u64;
    match &result.error {
        None => tracing::debug!(duration_us, bytes = st.result_bytes, "tool call succeeded"),
        Some(e) => {
            tracing::info!(duration_us, kind = %e.kind, reason = e.reason.as_deref().unwrap_or(""), "tool call failed")
        }
    }
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
        error_kind: result.error.as_ref().map(|e| e.kind),
        error_reason: result
            .error
            .as_ref()
            .and_then(|e| e.reason.as_ref().map(|r| r.to_string())),
        attempts: st.attempts,
        duration_us,
    });
}
