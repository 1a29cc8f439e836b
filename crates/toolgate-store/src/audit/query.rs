//! Reading the audit log back: [`AuditQuery`] and [`Store::audit_records`].

use super::canonical::hex;
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
    /// Only calls that ended this way.
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
        let (filter, mut params) = q.filter();
        let sql = match q.limit {
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
        if q.limit.is_some() {
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
