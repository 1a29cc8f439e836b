//! The idempotency ledger: one row per idempotency key of a side-effecting call, in the
//! `idempotency` table, so a call sent again with the same key does not act twice.
//!
//! The sequence a side-effecting tool follows:
//!
//! 1. [`Store::claim_idempotency`] before acting. [`Claim::New`]: this caller owns the key and
//!    acts. [`Claim::InProgress`]: another call holds it (or crashed holding it): do not act;
//!    report `outcome_unknown`. [`Claim::Done`]: the call already ran; return its recorded
//!    result without acting. [`Claim::Conflict`]: the key was used for a different tool or
//!    different arguments: refuse.
//! 2. After acting, [`Store::complete_idempotency`] records the result (`succeeded` or
//!    `failed`); a caller that knows it did not act may [`Store::release_idempotency`] instead,
//!    so the key can be claimed again.
//!
//! Arguments are compared by the SHA-256 of their canonical JSON (keys sorted), so key order
//! does not matter.

use crate::audit::canonical::{value_hash, Hash};
use crate::error::{Result, StoreError};
use crate::store::{to_i64, Store};
use rusqlite::{OptionalExtension, TransactionBehavior};
use serde::Serialize;
use serde_json::Value;

/// The longest idempotency key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 512;

/// How a claimed call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerStatus {
    /// Claimed; the call has not recorded an end.
    InProgress,
    /// The call succeeded.
    Succeeded,
    /// The call failed after it may have acted.
    Failed,
}

impl LedgerStatus {
    fn as_str(self) -> &'static str {
        match self {
            LedgerStatus::InProgress => "in_progress",
            LedgerStatus::Succeeded => "succeeded",
            LedgerStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "in_progress" => Some(LedgerStatus::InProgress),
            "succeeded" => Some(LedgerStatus::Succeeded),
            "failed" => Some(LedgerStatus::Failed),
            _ => None,
        }
    }
}

/// The answer of [`Store::claim_idempotency`].
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The key was free; the caller now holds it and may act.
    New,
    /// Another call holds the key and has not recorded an end.
    InProgress {
        /// When it was claimed (µs since the epoch).
        claimed_us: u64,
    },
    /// The call already ran with these arguments.
    Done {
        /// `Succeeded` or `Failed`.
        status: LedgerStatus,
        /// The result it recorded.
        result: Value,
    },
    /// The key was used for another tool or other arguments.
    Conflict {
        /// The tool the key was first used with.
        tool: String,
    },
}

fn check_key(key: &str) -> Result<()> {
    let why = if key.is_empty() {
        "the key is empty".to_string()
    } else if key.len() > MAX_KEY_BYTES {
        format!("the key is {} bytes, more than {MAX_KEY_BYTES}", key.len())
    } else if key.contains('\0') {
        "the key contains NUL".to_string()
    } else {
        return Ok(());
    };
    Err(StoreError::Ledger {
        key: key.chars().take(64).collect(),
        why,
    })
}

impl Store {
    /// Claims `key` for a call of `tool` with `arguments` at `now_us` (see the module docs).
    ///
    /// # Errors
    /// [`StoreError::Ledger`] for an empty, oversized or NUL-holding key;
    /// [`StoreError::Sqlite`]; [`StoreError::Corrupt`] for a damaged row.
    pub fn claim_idempotency(
        &self,
        key: &str,
        tool: &str,
        arguments: &Value,
        now_us: u64,
    ) -> Result<Claim> {
        check_key(key)?;
        let hash = value_hash(arguments);
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let inserted = tx.execute(
                "INSERT OR IGNORE INTO idempotency (key, tool, args_hash, status, created_us, \
                 updated_us) VALUES (?1, ?2, ?3, 'in_progress', ?4, ?4)",
                rusqlite::params![key, tool, &hash[..], to_i64(now_us)],
            )?;
            let claim = if inserted == 1 {
                Claim::New
            } else {
                existing(&tx, key, tool, &hash)?
            };
            tx.commit()?;
            Ok(claim)
        })
    }

    /// Records how the call holding `key` ended, with its result.
    ///
    /// # Errors
    /// [`StoreError::Ledger`] when `status` is `InProgress`, or the key is not held (never
    /// claimed, released, or already completed); [`StoreError::Sqlite`].
    pub fn complete_idempotency(
        &self,
        key: &str,
        status: LedgerStatus,
        result: &Value,
        now_us: u64,
    ) -> Result<()> {
        check_key(key)?;
        if status == LedgerStatus::InProgress {
            return Err(StoreError::Ledger {
                key: key.into(),
                why: "a call ends as succeeded or failed, not in_progress".into(),
            });
        }
        let n = self.with_conn(|conn| {
            Ok(conn.execute(
                "UPDATE idempotency SET status = ?2, result = ?3, updated_us = ?4 \
                 WHERE key = ?1 AND status = 'in_progress'",
                rusqlite::params![key, status.as_str(), result.to_string(), to_i64(now_us)],
            )?)
        })?;
        if n == 1 {
            Ok(())
        } else {
            Err(StoreError::Ledger {
                key: key.into(),
                why: "the key is not claimed (never claimed, released, or completed already)"
                    .into(),
            })
        }
    }

    /// Gives up a claim that did not act, so the key can be claimed again. `false` when the
    /// key is not held.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn release_idempotency(&self, key: &str) -> Result<bool> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                "DELETE FROM idempotency WHERE key = ?1 AND status = 'in_progress'",
                [key],
            )? == 1)
        })
    }

    /// Deletes ledger rows created before `before_us`; returns how many.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn prune_idempotency(&self, before_us: u64) -> Result<usize> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                "DELETE FROM idempotency WHERE created_us < ?1",
                [to_i64(before_us)],
            )?)
        })
    }
}

/// A ledger row as read back.
struct Row {
    tool: String,
    args_hash: Vec<u8>,
    status: String,
    result: Option<String>,
    created_us: i64,
}

fn existing(conn: &rusqlite::Connection, key: &str, tool: &str, hash: &Hash) -> Result<Claim> {
    let row = conn
        .query_row(
            "SELECT tool, args_hash, status, result, created_us FROM idempotency WHERE key = ?1",
            [key],
            |r| {
                Ok(Row {
                    tool: r.get(0)?,
                    args_hash: r.get(1)?,
                    status: r.get(2)?,
                    result: r.get(3)?,
                    created_us: r.get(4)?,
                })
            },
        )
        .optional()?;
    let bad = |why: String| StoreError::Corrupt {
        table: "idempotency",
        row: key.into(),
        why,
    };
    let Some(Row {
        tool: row_tool,
        args_hash: row_hash,
        status,
        result,
        created_us: created,
    }) = row
    else {
        return Err(bad("the row vanished inside its transaction".into()));
    };
    if row_tool != tool || row_hash.as_slice() != hash.as_slice() {
        return Ok(Claim::Conflict { tool: row_tool });
    }
    match LedgerStatus::parse(&status) {
        Some(LedgerStatus::InProgress) => Ok(Claim::InProgress {
            claimed_us: u64::try_from(created).unwrap_or(0),
        }),
        Some(status) => {
            let result = match result {
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| bad(format!("result is not JSON: {e}")))?,
                None => Value::Null,
            };
            Ok(Claim::Done { status, result })
        }
        None => Err(bad(format!("status {status:?}"))),
    }
}
