//! Reading the audit log back: [`AuditQuery`] and [`Store::audit_records`].

use super::canonical::hex;
use super::intents::{Intents, STARTED};
use super::row::{self, COLUMNS};
use crate::error::Result;
use crate::store::{to_i64, Store};
use rusqlite::types::Value as SqlValue;
use serde::Serialize;
use toolgate_core::{AuditRecord, Outcome};

/// Which records to read. Every filter is optional; they combine with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only calls of this tool (exact name).
    pub tool: Option<String>,
    /// Only calls of this session (exact id).
    pub session: Option<String>,
    /// Only calls made for this principal: its subject (exact), made for by an OAuth access
    /// token.
    pub principal: Option<String>,
    /// Only calls that ended this way. [`Outcome::Started`] gives the intents of calls with no
    /// record of their end (the process stopped while they ran); without an outcome, an
    /// intent whose call has its own record is left out, so each call shows once.
    pub outcome: Option<Outcome>,
    /// Only calls dispatched at or after this time (microseconds since the Unix epoch).
    pub since_us: Option<u64>,
    /// Only calls dispatched before this time (microseconds since the Unix epoch).
    pub until_us: Option<u64>,
    /// At most this many records: the most recent ones (by sequence number). `None` for all.
    pub limit: Option<usize>,
}

impl AuditQuery {
    /// The `WHERE` clause (empty or starting with ` WHERE`) and its parameters.
    pub(crate) fn filter(&self) -> (String, Vec<SqlValue>) {
        let mut clauses = Vec::new();
        let mut params = Vec::new();
        if let Some(t) = &self.tool {
            clauses.push("tool = ?");
            params.push(SqlValue::Text(t.clone()));
        }
        if let Some(s) = &self.session {
            clauses.push("session = ?");
            params.push(SqlValue::Text(s.clone()));
        }
        if let Some(p) = &self.principal {
            clauses.push("principal = ?");
            params.push(SqlValue::Text(p.clone()));
        }
        if let Some(o) = &self.outcome {
            clauses.push("outcome = ?");
            params.push(SqlValue::Text(row::enum_name(o)));
        }
        if let Some(t) = self.since_us {
            clauses.push("time_us >= ?");
            params.push(SqlValue::Integer(to_i64(t)));
        }
        if let Some(t) = self.until_us {
            clauses.push("time_us < ?");
            params.push(SqlValue::Integer(to_i64(t)));
        }
        if clauses.is_empty() {
            (String::new(), params)
        } else {
            (format!(" WHERE {}", clauses.join(" AND ")), params)
        }
    }
}

/// Leaves out of `rows` (consecutive rows of the log, as a query with filters on a call's
/// session, tool or time returns them: an intent's completion shares all three) the intents
/// whose call's own record is among them.
fn hide_completed_intents(rows: &mut Vec<StoredRecord>) {
    if !rows.iter().any(|r| r.record.outcome == Outcome::Started) {
        return;
    }
    let mut intents = Intents::default();
    for r in rows.iter() {
        intents.see(
            r.seq,
            &r.record.session,
            r.record.call_id.as_str(),
            r.record.time_us,
            r.record.outcome.as_str(),
        );
    }
    let unfinished = intents.unfinished();
    rows.retain(|r| {
        r.record.outcome != Outcome::Started || unfinished.binary_search(&r.seq).is_ok()
    });
}

/// One record as stored: its place in the chain and the record (arguments redacted).
/// Serializes as the record's fields plus `seq` and `hash` (hex).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredRecord {
    /// Sequence number in the chain, from 1.
    pub seq: u64,
    /// `sha256(prev_hash || canonical JSON)`, hex.
    pub hash: String,
    /// The record.
    #[serde(flatten)]
    pub record: AuditRecord,
}

impl Store {
    /// The records matching `q`, oldest first (with a limit: the most recent `limit` of
    /// them, still oldest first).
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`]; [`crate::StoreError::Corrupt`] for a row that cannot be
    /// decoded (run [`Store::verify_audit`] to find every damaged row).
    pub fn audit_records(&self, q: &AuditQuery) -> Result<Vec<StoredRecord>> {
        if q.outcome == Some(Outcome::Started) {
            return self.unfinished_records(q);
        }
        let mut out = self.select(q, q.limit)?;
        hide_completed_intents(&mut out);
        Ok(out)
    }

    /// The intents matching `q` that nothing completed, the last `q.limit` of them.
    fn unfinished_records(&self, q: &AuditQuery) -> Result<Vec<StoredRecord>> {
        let unfinished = self.unfinished_intents()?;
        if unfinished.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = self.select(q, None)?;
        out.retain(|r| unfinished.binary_search(&r.seq).is_ok());
        if let Some(n) = q.limit {
            out.drain(..out.len().saturating_sub(n));
        }
        Ok(out)
    }

    /// The sequence numbers of every unfinished intent, ascending: one pass over the log from
    /// the first intent.
    pub(crate) fn unfinished_intents(&self) -> Result<Vec<u64>> {
        self.with_conn(|conn| {
            let first: Option<i64> = conn.query_row(
                "SELECT min(seq) FROM audit WHERE outcome = ?1",
                [STARTED],
                |r| r.get(0),
            )?;
            let Some(first) = first else {
                return Ok(Vec::new());
            };
            let mut stmt = conn.prepare(
                "SELECT seq, session, call_id, time_us, outcome FROM audit \
                 WHERE seq >= ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query([first])?;
            let mut intents = Intents::default();
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                let time_us: i64 = r.get(3)?;
                intents.see(
                    u64::try_from(seq).unwrap_or(0),
                    r.get_ref(1)?.as_str().unwrap_or_default(),
                    r.get_ref(2)?.as_str().unwrap_or_default(),
                    u64::try_from(time_us).unwrap_or(0),
                    r.get_ref(4)?.as_str().unwrap_or_default(),
                );
            }
            Ok(intents.unfinished())
        })
    }

    /// The rows matching `q`'s filters, oldest first; with `limit`, the most recent ones.
    fn select(&self, q: &AuditQuery, limit: Option<usize>) -> Result<Vec<StoredRecord>> {
        let (filter, mut params) = q.filter();
        let sql = match limit {
            Some(n) => {
                params.push(SqlValue::Integer(to_i64(n as u64)));
                format!("SELECT {COLUMNS} FROM audit{filter} ORDER BY seq DESC LIMIT ?")
            }
            None => format!("SELECT {COLUMNS} FROM audit{filter} ORDER BY seq"),
        };
        let mut out = self.with_conn(|conn| {
            let mut stmt = conn.prepare(&sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let d = row::decode(r)?;
                out.push(StoredRecord {
                    seq: d.seq,
                    hash: hex(&d.hash),
                    record: d.record,
                });
            }
            Ok(out)
        })?;
        if limit.is_some() {
            out.reverse();
        }
        Ok(out)
    }

    /// How many records the log holds.
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn audit_count(&self) -> Result<u64> {
        self.with_conn(|conn| {
            let n: i64 = conn.query_row("SELECT count(*) FROM audit", [], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }
}
