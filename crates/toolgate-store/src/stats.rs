//! Per-tool figures from the audit log: [`Store::tool_stats`].
//!
//! They are the figures the live metrics count ([`toolgate_core::telemetry`], `/metrics`),
//! under the same names less the `toolgate_tool_` prefix and `_total` suffix (`calls`,
//! `errors` by kind, `denials`, `approvals_asked`, `approvals_granted`, `truncations`) and
//! decided the same way, so a store and a scrape of the same calls agree: calls whose name did
//! not resolve count under [`UNKNOWN_TOOL`]. Latency differs in kind only: here the exact
//! nearest-rank percentiles of the stored durations, there a histogram to estimate them from.

use crate::audit::AuditQuery;
use crate::error::Result;
use crate::store::Store;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use toolgate_core::telemetry::UNKNOWN_TOOL;
use toolgate_core::{Approval, Decision, ErrorKind};

/// Latency percentiles in microseconds (nearest rank over the stored durations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_us: u64,
    /// 95th percentile.
    pub p95_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// The slowest call.
    pub max_us: u64,
}

/// What the audit log says about one tool.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ToolStats {
    /// The tool's name; calls whose name did not resolve (`unknown_tool`) are counted
    /// together under `(unknown)`, as the live metrics count them.
    pub tool: String,
    /// Calls recorded.
    pub calls: u64,
    /// Calls that ended in an error, by error kind (`"tool_failed": 3`, ...).
    pub errors: BTreeMap<String, u64>,
    /// Calls the policy denied (decision `deny`).
    pub denials: u64,
    /// Calls the policy sent to the approver (decision `ask`, not answered by a standing
    /// grant).
    pub approvals_asked: u64,
    /// Calls the approver, asked, let run (a standing grant's calls are neither asked nor
    /// granted here).
    pub approvals_granted: u64,
    /// Calls whose result was truncated behind a handle.
    pub truncations: u64,
    /// Wall time from dispatch to result.
    pub latency: Latency,
}

impl Store {
    /// Figures per tool over the records matching `q` (its `limit` is ignored), sorted by tool
    /// name. Reads one row per record: about half a second per million records.
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn tool_stats(&self, q: &AuditQuery) -> Result<Vec<ToolStats>> {
        let (filter, params) = q.filter();
        // a call's intent is not a call: its own record counts it (an unfinished one, whose
        // process stopped while it ran, is counted by `verify_audit`)
        let not_intent = if filter.is_empty() { " WHERE" } else { " AND" };
        let sql = format!(
            "SELECT tool, duration_us, error_kind, decision, approval, truncated IS NOT NULL \
             FROM audit{filter}{not_intent} outcome <> 'started'"
        );
        let mut acc: HashMap<String, (ToolStats, Vec<u64>)> = HashMap::new();
        self.with_conn(|conn| {
            let mut stmt = conn.prepare(&sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            while let Some(r) = rows.next()? {
                let tool: String = r.get(0)?;
                let duration: i64 = r.get(1)?;
                let kind: Option<String> = r.get(2)?;
                let decision: Option<String> = r.get(3)?;
                let approval: Option<String> = r.get(4)?;
                let truncated: bool = r.get(5)?;
                let tool = if kind.as_deref() == Some(ErrorKind::UnknownTool.as_str()) {
                    UNKNOWN_TOOL.to_string()
                } else {
                    tool
                };
                let (s, durations) = acc.entry(tool).or_default();
                s.calls += 1;
                if let Some(k) = kind {
                    *s.errors.entry(k).or_default() += 1;
                }
                let approval = approval.as_deref().and_then(parse::<Approval>);
                match decision.as_deref().and_then(parse::<Decision>) {
                    Some(Decision::Deny) => s.denials += 1,
                    Some(Decision::Ask) if approval.is_none_or(Approval::was_asked) => {
                        s.approvals_asked += 1
                    }
                    Some(Decision::Ask | Decision::Allow) | None => {}
                }
                if approval.is_some_and(Approval::approved) {
                    s.approvals_granted += 1;
                }
                s.truncations += u64::from(truncated);
                durations.push(u64::try_from(duration).unwrap_or(0));
            }
            Ok(())
        })?;
        let mut out: Vec<ToolStats> = acc
            .into_iter()
            .map(|(tool, (mut s, mut durations))| {
                s.tool = tool;
                s.latency = percentiles(&mut durations);
                s
            })
            .collect();
        out.sort_by(|a, b| a.tool.cmp(&b.tool));
        Ok(out)
    }
}

/// A stored enum value by its wire name (`None` for a name this build does not know).
fn parse<T: DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
}

/// Nearest-rank percentiles; all zero for no samples.
pub(crate) fn percentiles(samples: &mut [u64]) -> Latency {
    if samples.is_empty() {
        return Latency::default();
    }
    samples.sort_unstable();
    let n = samples.len();
    let at = |p: usize| {
        // nearest rank: ceil(p/100 * n), 1-based
        let rank = (p * n).div_ceil(100).clamp(1, n);
        samples[rank - 1]
    };
    Latency {
        p50_us: at(50),
        p95_us: at(95),
        p99_us: at(99),
        max_us: samples[n - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(
            percentiles(&mut v),
            Latency {
                p50_us: 50,
                p95_us: 95,
                p99_us: 99,
                max_us: 100
            }
        );
        assert_eq!(
            percentiles(&mut [7]),
            Latency {
                p50_us: 7,
                p95_us: 7,
                p99_us: 7,
                max_us: 7
            }
        );
        assert_eq!(percentiles(&mut []), Latency::default());
    }
}
