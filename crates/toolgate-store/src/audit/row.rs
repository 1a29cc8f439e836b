//! An audit record as a row of the `audit` table, both ways.

use super::canonical::{Hash, View};
use crate::error::{Result, StoreError};
use crate::store::{to_i64, to_u64};
use rusqlite::types::Type;
use rusqlite::Row;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use toolgate_core::{Approval, AuditRecord, Decision, Outcome};

/// The columns, in the order of [`insert_sql`] and of every `SELECT` decoded by [`decode`].
pub(crate) const COLUMNS: &str = "seq, time_us, session, profile, tool, version, call_id, \
     decision, rule, approval, arguments, result_bytes, truncated, outcome, error_kind, \
     error_reason, attempts, duration_us, prev_hash, hash, grant_id, scope, idempotency_key, \
     ledger, principal, principal_issuer";

/// Columns per row of [`insert_sql`].
pub(crate) const INSERT_COLUMNS: usize = 26;

/// `INSERT INTO audit (...) VALUES (...), (...), ...` for `rows` rows, numbered parameters in
/// row order ([`bind`] fills row `i`). One statement for many rows saves SQLite's
/// per-statement work (reset, cursor opening) for all but the first.
pub(crate) fn insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO audit (seq, time_us, session, profile, tool, version, call_id, decision, \
         rule, approval, arguments, result_bytes, truncated, outcome, error_kind, error_reason, \
         attempts, duration_us, prev_hash, hash, grant_id, scope, idempotency_key, ledger, \
         principal, principal_issuer) \
         VALUES ",
    );
    for i in 0..rows {
        sql.push_str(if i == 0 { "(" } else { ", (" });
        for c in 0..INSERT_COLUMNS {
            if c > 0 {
                sql.push_str(", ");
            }
            sql.push('?');
            sql.push_str(&(i * INSERT_COLUMNS + c + 1).to_string());
        }
        sql.push(')');
    }
    sql
}

/// The wire name of a unit enum (`"allow"`, `"tool_failed"`, ...).
pub(crate) fn enum_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn parse_enum<T: DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(Value::String(s.to_owned())).ok()
}

/// The wire name of a decision (as serde writes it).
pub(crate) fn decision_name(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    }
}

/// The wire name of an approver's answer (as serde writes it).
pub(crate) fn approval_name(a: Approval) -> &'static str {
    match a {
        Approval::Approved => "approved",
        Approval::Granted => "granted",
        Approval::Rejected => "rejected",
        Approval::Corrected => "corrected",
        Approval::Pending => "pending",
    }
}

/// The wire name of an outcome (as serde writes it).
pub(crate) fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Ok => "ok",
        Outcome::RecoverableError => "recoverable_error",
        Outcome::FatalError => "fatal_error",
        Outcome::InputRequired => "input_required",
        Outcome::Started => "started",
    }
}

/// Binds `r` as row `seq` to the parameters of row `row` of an [`insert_sql`] statement.
pub(crate) fn bind(
    stmt: &mut rusqlite::Statement<'_>,
    row: usize,
    seq: u64,
    r: &View<'_>,
    arguments_json: &str,
    prev: &Hash,
    hash: &Hash,
) -> rusqlite::Result<()> {
    let at = row * INSERT_COLUMNS;
    stmt.raw_bind_parameter(at + 1, to_i64(seq))?;
    stmt.raw_bind_parameter(at + 2, to_i64(r.time_us))?;
    stmt.raw_bind_parameter(at + 3, r.session)?;
    stmt.raw_bind_parameter(at + 4, r.profile)?;
    stmt.raw_bind_parameter(at + 5, r.tool)?;
    stmt.raw_bind_parameter(at + 6, r.version)?;
    stmt.raw_bind_parameter(at + 7, r.call_id)?;
    stmt.raw_bind_parameter(at + 8, r.decision.map(decision_name))?;
    stmt.raw_bind_parameter(at + 9, r.rule)?;
    stmt.raw_bind_parameter(at + 10, r.approval.map(approval_name))?;
    stmt.raw_bind_parameter(at + 11, arguments_json)?;
    stmt.raw_bind_parameter(at + 12, to_i64(r.result_bytes))?;
    stmt.raw_bind_parameter(at + 13, r.truncated)?;
    stmt.raw_bind_parameter(at + 14, outcome_name(r.outcome))?;
    stmt.raw_bind_parameter(at + 15, r.error_kind.map(|k| k.as_str()))?;
    stmt.raw_bind_parameter(at + 16, r.error_reason)?;
    stmt.raw_bind_parameter(at + 17, i64::from(r.attempts))?;
    stmt.raw_bind_parameter(at + 18, to_i64(r.duration_us))?;
    stmt.raw_bind_parameter(at + 19, &prev[..])?;
    stmt.raw_bind_parameter(at + 20, &hash[..])?;
    stmt.raw_bind_parameter(at + 21, r.grant)?;
    stmt.raw_bind_parameter(at + 22, r.scope.map(|s| s.as_str()))?;
    stmt.raw_bind_parameter(at + 23, r.idempotency_key)?;
    stmt.raw_bind_parameter(at + 24, r.ledger.map(|l| l.as_str()))?;
    stmt.raw_bind_parameter(at + 25, r.principal.map(|p| &*p.subject))?;
    stmt.raw_bind_parameter(at + 26, r.principal.map(|p| &*p.issuer))?;
    Ok(())
}

/// A decoded row: its sequence number, stored hashes and record.
pub(crate) struct DecodedRow {
    pub(crate) seq: u64,
    pub(crate) record: AuditRecord,
    pub(crate) prev_hash: Hash,
    pub(crate) hash: Hash,
}

/// Decodes a row selected with [`COLUMNS`]. A value of the wrong type or an unknown name is
/// [`StoreError::Corrupt`], naming the column.
pub(crate) fn decode(row: &Row<'_>) -> Result<DecodedRow> {
    let raw_seq: i64 = row.get(0)?;
    let seq = to_u64(raw_seq, "audit", &raw_seq, "seq")?;
    let bad = |why: String| StoreError::Corrupt {
        table: "audit",
        row: seq.to_string(),
        why,
    };
    let col = |e: rusqlite::Error| bad(column_error(e));
    let text = |i: usize| -> Result<String> { row.get::<_, String>(i).map_err(col) };
    let opt_text =
        |i: usize| -> Result<Option<String>> { row.get::<_, Option<String>>(i).map_err(col) };
    let int = |i: usize, name: &str| -> Result<u64> {
        let v: i64 = row.get(i).map_err(col)?;
        to_u64(v, "audit", &seq, name)
    };
    let named = |i: usize, name: &str| -> Result<Option<String>> {
        let v = opt_text(i)?;
        if let Some(s) = &v {
            if s.is_empty() {
                return Err(bad(format!("{name} is empty")));
            }
        }
        Ok(v)
    };
    fn known<T: DeserializeOwned>(
        v: Option<String>,
        name: &str,
        bad: &dyn Fn(String) -> StoreError,
    ) -> Result<Option<T>> {
        match v {
            None => Ok(None),
            Some(s) => parse_enum(&s)
                .map(Some)
                .ok_or_else(|| bad(format!("{name} {s:?} is not a known value"))),
        }
    }
    let arguments_text = text(10)?;
    let arguments: Value = serde_json::from_str(&arguments_text)
        .map_err(|e| bad(format!("arguments are not JSON: {e}")))?;
    let outcome_text = text(13)?;
    let record = AuditRecord {
        time_us: int(1, "time_us")?,
        session: text(2)?.into(),
        profile: text(3)?.into(),
        tool: text(4)?.into(),
        version: opt_text(5)?.map(Into::into),
        call_id: text(6)?.into(),
        decision: known(named(7, "decision")?, "decision", &bad)?,
        rule: opt_text(8)?.map(Cow::Owned),
        approval: known(named(9, "approval")?, "approval", &bad)?,
        arguments,
        result_bytes: usize::try_from(int(11, "result_bytes")?)
            .map_err(|_| bad("result_bytes does not fit".into()))?,
        truncated: opt_text(12)?,
        outcome: parse_enum(&outcome_text)
            .ok_or_else(|| bad(format!("outcome {outcome_text:?} is not a known value")))?,
        error_kind: known(named(14, "error_kind")?, "error_kind", &bad)?,
        error_reason: opt_text(15)?,
        attempts: u32::try_from(int(16, "attempts")?)
            .map_err(|_| bad("attempts does not fit in 32 bits".into()))?,
        duration_us: int(17, "duration_us")?,
        grant: row.get::<_, Option<i64>>(20).map_err(col)?,
        scope: known(named(21, "scope")?, "scope", &bad)?,
        idempotency_key: opt_text(22)?.map(Into::into),
        ledger: known(named(23, "ledger")?, "ledger", &bad)?,
        principal: match (opt_text(24)?, opt_text(25)?) {
            (Some(subject), Some(issuer)) => Some(toolgate_core::Principal::new(issuer, subject)),
            (None, None) => None,
            _ => return Err(bad("a principal without its issuer".into())),
        },
    };
    let hash_col = |i: usize, name: &str| -> Result<Hash> {
        let v: Vec<u8> = row.get(i).map_err(col)?;
        Hash::try_from(v.as_slice())
            .map_err(|_| bad(format!("{name} is {} bytes, not 32", v.len())))
    };
    Ok(DecodedRow {
        seq,
        record,
        prev_hash: hash_col(18, "prev_hash")?,
        hash: hash_col(19, "hash")?,
    })
}

fn column_error(e: rusqlite::Error) -> String {
    match e {
        rusqlite::Error::InvalidColumnType(i, name, Type::Null) => {
            format!("column {i} ({name}) is NULL")
        }
        rusqlite::Error::InvalidColumnType(i, name, t) => {
            format!("column {i} ({name}) holds a value of type {t}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_names_are_the_serde_names() {
        for d in [Decision::Allow, Decision::Ask, Decision::Deny] {
            assert_eq!(decision_name(d), enum_name(&d));
        }
        for a in [
            Approval::Approved,
            Approval::Granted,
            Approval::Rejected,
            Approval::Corrected,
            Approval::Pending,
        ] {
            assert_eq!(approval_name(a), enum_name(&a));
        }
        for o in [
            Outcome::Ok,
            Outcome::RecoverableError,
            Outcome::FatalError,
            Outcome::InputRequired,
            Outcome::Started,
        ] {
            assert_eq!(outcome_name(o), enum_name(&o));
        }
    }

    #[test]
    fn insert_sql_numbers_parameters_row_by_row() {
        let one = insert_sql(1);
        assert!(one.ends_with(
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)"
        ));
        let two = insert_sql(2);
        assert!(two.ends_with(
            "?26), (?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47, ?48, ?49, ?50, ?51, ?52)"
        ));
        assert_eq!(two.matches('?').count(), 2 * INSERT_COLUMNS);
    }
}
