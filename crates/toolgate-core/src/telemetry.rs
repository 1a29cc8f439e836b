//! Per-tool metrics through the [`metrics`] facade, recorded by the record stage for every
//! call.
//!
//! | name | type | labels | what it counts |
//! |---|---|---|---|
//! | [`CALLS`] `toolgate_tool_calls_total` | counter | `tool` | calls dispatched, whatever happened |
//! | [`DURATION`] `toolgate_tool_call_duration_seconds` | histogram | `tool` | wall time from dispatch to result, in seconds (buckets [`DURATION_BUCKETS`]) |
//! | [`ERRORS`] `toolgate_tool_errors_total` | counter | `tool`, `kind` | calls that ended in an error, by [`ErrorKind`] wire name |
//! | [`DENIALS`] `toolgate_tool_denials_total` | counter | `tool` | calls the policy denied (decision `deny`) |
//! | [`APPROVALS_ASKED`] `toolgate_tool_approvals_asked_total` | counter | `tool` | calls the policy sent to the approver (decision `ask`, not answered by a standing grant: [`Approval::was_asked`]) |
//! | [`APPROVALS_GRANTED`] `toolgate_tool_approvals_granted_total` | counter | `tool` | calls the approver, asked, let run ([`Approval::approved`]) |
//! | [`TRUNCATIONS`] `toolgate_tool_truncations_total` | counter | `tool` | calls whose result was cut to the byte limit, the full result behind a handle |
//!
//! The same figures come from the audit log (`toolgate stats`), under the same names without
//! the `toolgate_tool_` prefix and the `_total` suffix.
//!
//! The `tool` label is the registered tool name. A call whose name did not resolve (the
//! model's own text, `unknown_tool`) is counted under `tool="(unknown)"` ([`UNKNOWN_TOOL`]):
//! a model that invents names must not invent series.
//!
//! Nothing is recorded until a recorder is installed (`metrics::set_global_recorder`; the
//! MCP server installs a Prometheus one for `/metrics`). Handles are resolved once per tool,
//! at its first call, and kept with its registry entry, so the hot path does no label
//! allocation or map lookup: a counter increment is one atomic add. Install the recorder
//! before the first call: a tool first called with no recorder keeps no-op handles.

use crate::audit::Approval;
use crate::error::ErrorKind;
use crate::policy::Decision;
use metrics::{Counter, Histogram, Unit};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Calls dispatched, per tool (counter).
pub const CALLS: &str = "toolgate_tool_calls_total";
/// Wall time from dispatch to result, in seconds, per tool (histogram).
pub const DURATION: &str = "toolgate_tool_call_duration_seconds";
/// Calls that ended in an error, per tool and error kind (counter, label `kind`).
pub const ERRORS: &str = "toolgate_tool_errors_total";
/// Calls the policy denied, per tool (counter).
pub const DENIALS: &str = "toolgate_tool_denials_total";
/// Calls the policy sent to the approver, per tool (counter).
pub const APPROVALS_ASKED: &str = "toolgate_tool_approvals_asked_total";
/// Calls the approver let run, per tool (counter).
pub const APPROVALS_GRANTED: &str = "toolgate_tool_approvals_granted_total";
/// Calls whose result was truncated behind a handle, per tool (counter).
pub const TRUNCATIONS: &str = "toolgate_tool_truncations_total";
/// The `tool` label of calls whose tool name did not resolve.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// Histogram buckets for [`DURATION`], in seconds: 50 µs to 5 minutes, so p50, p95 and p99
/// can be estimated (`histogram_quantile`) for in-process tools (microseconds) and for shell
/// commands and fetches (seconds) alike.
pub const DURATION_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Describes every metric (help text and unit) to the installed recorder. Call it once after
/// installing one; a recorder that was never told still records, without `# HELP` lines.
pub fn describe() {
    metrics::describe_counter!(CALLS, Unit::Count, "Tool calls dispatched");
    metrics::describe_histogram!(
        DURATION,
        Unit::Seconds,
        "Wall time of a tool call from dispatch to result"
    );
    metrics::describe_counter!(
        ERRORS,
        Unit::Count,
        "Tool calls that ended in an error, by error kind"
    );
    metrics::describe_counter!(DENIALS, Unit::Count, "Tool calls the policy denied");
    metrics::describe_counter!(
        APPROVALS_ASKED,
        Unit::Count,
        "Tool calls the policy sent to the approver"
    );
    metrics::describe_counter!(
        APPROVALS_GRANTED,
        Unit::Count,
        "Tool calls the approver let run"
    );
    metrics::describe_counter!(
        TRUNCATIONS,
        Unit::Count,
        "Tool calls whose result was truncated behind a handle"
    );
}

/// What the record stage knows about a finished call, for [`ToolMetrics::observe`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallFacts {
    pub(crate) duration: Duration,
    pub(crate) decision: Option<Decision>,
    pub(crate) approval: Option<Approval>,
    pub(crate) error: Option<ErrorKind>,
    pub(crate) truncated: bool,
}

/// One tool's metric handles, resolved against the recorder installed when they were made.
pub(crate) struct ToolMetrics {
    tool: Arc<str>,
    calls: Counter,
    duration: Histogram,
    denials: Counter,
    approvals_asked: Counter,
    approvals_granted: Counter,
    truncations: Counter,
    /// By `ErrorKind as usize`; made at a kind's first error, so a tool shows only the kinds it
    /// has had.
    errors: [OnceLock<Counter>; ErrorKind::ALL.len()],
}

impl ToolMetrics {
    /// The handles of `tool` (every series but the error kinds starts at zero).
    pub(crate) fn new(tool: Arc<str>) -> Self {
        let label = || tool.clone();
        ToolMetrics {
            calls: metrics::counter!(CALLS, "tool" => label()),
            duration: metrics::histogram!(DURATION, "tool" => label()),
            denials: metrics::counter!(DENIALS, "tool" => label()),
            approvals_asked: metrics::counter!(APPROVALS_ASKED, "tool" => label()),
            approvals_granted: metrics::counter!(APPROVALS_GRANTED, "tool" => label()),
            truncations: metrics::counter!(TRUNCATIONS, "tool" => label()),
            errors: std::array::from_fn(|_| OnceLock::new()),
            tool,
        }
    }

    /// Counts one finished call.
    pub(crate) fn observe(&self, facts: CallFacts) {
        self.calls.increment(1);
        self.duration.record(facts.duration.as_secs_f64());
        match facts.decision {
            Some(Decision::Deny) => self.denials.increment(1),
            // a call answered by a standing grant was not put to the approver
            Some(Decision::Ask) if facts.approval.is_none_or(Approval::was_asked) => {
                self.approvals_asked.increment(1)
            }
            Some(Decision::Ask | Decision::Allow) | None => {}
        }
        if facts.approval.is_some_and(Approval::approved) {
            self.approvals_granted.increment(1);
        }
        if facts.truncated {
            self.truncations.increment(1);
        }
        if let Some(kind) = facts.error {
            let make =
                || metrics::counter!(ERRORS, "tool" => self.tool.clone(), "kind" => kind.as_str());
            match self.errors.get(kind as usize) {
                Some(slot) => slot.get_or_init(make).increment(1),
                // a kind added to the enum but not to `ErrorKind::ALL`: counted all the same
                None => make().increment(1),
            }
        }
    }
}

impl std::fmt::Debug for ToolMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolMetrics")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_index_the_error_counters() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k}");
        }
    }
}
