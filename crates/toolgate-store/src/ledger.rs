//! The idempotency ledger in the `idempotency` table: [`Store`] is a
//! [`toolgate_core::Ledger`], so every process using one store (`toolgate call`, `toolgate
//! serve`) shares one ledger: a call claimed by one is in progress, unsettled or replayed for
//! the others.
//!
//! Every method is one transaction (a claim is `BEGIN IMMEDIATE`: read the key's row, decide
//! with [`toolgate_core::ledger::decide`], write), committed before it returns: in WAL mode
//! with `synchronous=NORMAL` a claim survives a crash of the process (SIGKILL) that follows
//! it; [`crate::Durability::Full`] makes it survive a power cut too. A row is keyed by
//! principal (`''` for none) and key. Ended rows last changed before the claims' retention
//! are deleted every 256 claims, and by [`toolgate_core::Ledger::prune`]; a row in progress
//! or unsettled is kept until it is settled.

use crate::error::StoreError;
use crate::store::{to_i64, Store};
use rusqlite::TransactionBehavior;
use std::sync::atomic::Ordering;
use toolgate_core::ledger::{
    decide, hex, Claim, Claimed, Held, Ledger, LedgerEntry, LedgerError, LedgerFilter, LedgerState,
    Recorded, Settled, Settlement, Stored, Verdict,
};

const COLUMNS: &str = "principal, key, derived, tool, args_hash, session, call_id, arguments, \
     state, lease_until_us, created_us, updated_us, settled_by";

/// A row as read back, its result left out.
struct Row {
    principal: String,
    key: String,
    derived: bool,
    tool: String,
    args_hash: Vec<u8>,
    session: String,
    call_id: String,
    arguments: String,
    state: LedgerState,
    lease_until_us: Option<u64>,
    created_us: u64,
    updated_us: u64,
    settled_by: Option<String>,
}

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> Result<Row, LedgerError> {
        let key: String = r.get(1).map_err(store)?;
        let bad = |why: String| LedgerError::Corrupt {
            key: key.clone(),
            why,
        };
        let time = |i: usize| -> Result<Option<u64>, LedgerError> {
            let v: Option<i64> = r.get(i).map_err(store)?;
            v.map(|v| u64::try_from(v).map_err(|_| bad(format!("column {i} is negative"))))
                .transpose()
        };
        let state: String = r.get(8).map_err(store)?;
        Ok(Row {
            principal: r.get(0).map_err(store)?,
            derived: r.get(2).map_err(store)?,
            tool: r.get(3).map_err(store)?,
            args_hash: r.get(4).map_err(store)?,
            session: r.get(5).map_err(store)?,
            call_id: r.get(6).map_err(store)?,
            arguments: r.get(7).map_err(store)?,
            state: LedgerState::parse(&state).ok_or_else(|| bad(format!("state {state:?}")))?,
            lease_until_us: time(9)?,
            created_us: time(10)?.unwrap_or(0),
            updated_us: time(11)?.unwrap_or(0),
            settled_by: r.get(12).map_err(store)?,
            key: key.clone(),
        })
    }

    fn stored(&self) -> Stored<'_> {
        Stored {
            tool: &self.tool,
            args_hash: &self.args_hash,
            derived: self.derived,
            state: self.state,
            lease_until_us: self.lease_until_us,
            created_us: self.created_us,
            updated_us: self.updated_us,
            session: &self.session,
            call_id: &self.call_id,
        }
    }

    fn listed(self, now_us: u64) -> LedgerEntry {
        let state = self.stored().state_at(now_us);
        LedgerEntry {
            principal: (!self.principal.is_empty()).then_some(self.principal),
            key: self.key,
            derived: self.derived,
            tool: self.tool,
            args_hash: hex(&self.args_hash),
            session: self.session,
            call_id: self.call_id,
            arguments: self.arguments,
            state,
            created_us: self.created_us,
            updated_us: self.updated_us,
            lease_until_us: self.lease_until_us,
            settled_by: self.settled_by,
        }
    }
}

fn store(e: impl Into<StoreError>) -> LedgerError {
    LedgerError::Store(Box::new(e.into()))
}

fn principal(p: Option<&str>) -> &str {
    p.unwrap_or("")
}

/// The key's row, in `conn`'s transaction.
fn row(
    conn: &rusqlite::Connection,
    principal: &str,
    key: &str,
) -> Result<Option<Row>, LedgerError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM idempotency WHERE principal = ?1 AND key = ?2"
        ))
        .map_err(store)?;
    let mut rows = stmt.query([principal, key]).map_err(store)?;
    match rows.next().map_err(store)? {
        Some(r) => Ok(Some(Row::read(r)?)),
        None => Ok(None),
    }
}

/// Writes `claim` as the key's row, in progress (replacing any row of the key).
fn put_claim(conn: &rusqlite::Connection, claim: &Claim<'_>) -> Result<(), LedgerError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO idempotency (principal, key, derived, tool, args_hash, session, \
         call_id, arguments, state, holder, lease_until_us, created_us, updated_us) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'in_progress', ?9, ?10, ?11, ?11)",
    )
    .map_err(store)?
    .execute(rusqlite::params![
        principal(claim.principal),
        claim.key,
        claim.derived,
        claim.tool,
        &claim.args_hash[..],
        claim.session,
        claim.call_id,
        claim.arguments,
        claim.holder as i64,
        to_i64(claim.lease_until_us),
        to_i64(claim.now_us),
    ])
    .map_err(store)?;
    Ok(())
}

/// The recorded result of the claim's key.
fn result_of(
    conn: &rusqlite::Connection,
    claim: &Claim<'_>,
) -> Result<Option<String>, LedgerError> {
    conn.prepare_cached("SELECT result FROM idempotency WHERE principal = ?1 AND key = ?2")
        .map_err(store)?
        .query_row([principal(claim.principal), claim.key], |r| r.get(0))
        .map_err(store)
}

/// Ended entries past the retention; an entry in progress or unknown is kept until it is
/// settled, however old (a new call on its key could do its effect twice).
const PRUNE: &str = "DELETE FROM idempotency WHERE updated_us < ?1 \
     AND state IN ('succeeded', 'failed')";

impl Ledger for Store {
    fn claim(&self, claim: &Claim<'_>) -> Result<Claimed, LedgerError> {
        let prune = self.inner.ledger_claims.fetch_add(1, Ordering::Relaxed) % 256 == 255;
        self.ledger_conn(|conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(store)?;
            if prune {
                tx.prepare_cached(PRUNE)
                    .map_err(store)?
                    .execute([to_i64(claim.expire_before_us)])
                    .map_err(store)?;
            }
            let existing = row(&tx, principal(claim.principal), claim.key)?;
            let verdict = match &existing {
                None => Verdict::Take,
                Some(r) => decide(&r.stored(), claim),
            };
            let answer = match verdict {
                Verdict::Take => {
                    put_claim(&tx, claim)?;
                    Claimed::Held
                }
                Verdict::Refuse(answer) => answer,
                Verdict::Replay => Claimed::Done {
                    state: existing.map_or(LedgerState::Succeeded, |r| r.state),
                    result: Recorded::from_json(
                        claim.key,
                        result_of(&tx, claim)?.as_deref().unwrap_or(""),
                    )?,
                },
            };
            tx.commit().map_err(store)?;
            Ok(answer)
        })
    }

    fn lookup(&self, claim: &Claim<'_>) -> Result<Option<Claimed>, LedgerError> {
        self.ledger_conn(|conn| {
            let Some(existing) = row(conn, principal(claim.principal), claim.key)? else {
                return Ok(None);
            };
            Ok(match decide(&existing.stored(), claim) {
                Verdict::Take => None,
                Verdict::Refuse(answer) => Some(answer),
                Verdict::Replay => Some(Claimed::Done {
                    state: existing.state,
                    result: Recorded::from_json(
                        claim.key,
                        result_of(conn, claim)?.as_deref().unwrap_or(""),
                    )?,
                }),
            })
        })
    }

    fn complete(
        &self,
        held: &Held<'_>,
        state: LedgerState,
        result: &str,
        now_us: u64,
    ) -> Result<bool, LedgerError> {
        self.ledger_conn(|conn| {
            Ok(conn
                .prepare_cached(
                    "UPDATE idempotency SET state = ?4, result = ?5, holder = NULL, \
                     lease_until_us = NULL, updated_us = ?6 \
                     WHERE principal = ?1 AND key = ?2 AND holder = ?3 AND state = 'in_progress'",
                )
                .map_err(store)?
                .execute(rusqlite::params![
                    principal(held.principal),
                    held.key,
                    held.holder as i64,
                    state.as_str(),
                    result,
                    to_i64(now_us)
                ])
                .map_err(store)?
                == 1)
        })
    }

    fn release(&self, held: &Held<'_>) -> Result<bool, LedgerError> {
        self.ledger_conn(|conn| {
            Ok(conn
                .prepare_cached(
                    "DELETE FROM idempotency WHERE principal = ?1 AND key = ?2 AND holder = ?3 \
                     AND state = 'in_progress'",
                )
                .map_err(store)?
                .execute(rusqlite::params![
                    principal(held.principal),
                    held.key,
                    held.holder as i64
                ])
                .map_err(store)?
                == 1)
        })
    }

    fn abandon(&self, held: &Held<'_>, now_us: u64) -> Result<bool, LedgerError> {
        self.ledger_conn(|conn| {
            Ok(conn
                .prepare_cached(
                    "UPDATE idempotency SET state = 'unknown', holder = NULL, \
                     lease_until_us = NULL, updated_us = ?4 \
                     WHERE principal = ?1 AND key = ?2 AND holder = ?3 AND state = 'in_progress'",
                )
                .map_err(store)?
                .execute(rusqlite::params![
                    principal(held.principal),
                    held.key,
                    held.holder as i64,
                    to_i64(now_us)
                ])
                .map_err(store)?
                == 1)
        })
    }

    fn take_over(&self, claim: &Claim<'_>) -> Result<bool, LedgerError> {
        self.ledger_conn(|conn| {
            Ok(conn
                .prepare_cached(
                    "UPDATE idempotency SET state = 'in_progress', holder = ?5, \
                     lease_until_us = ?6, session = ?7, call_id = ?8, arguments = ?9, \
                     created_us = ?10, updated_us = ?10, settled_by = NULL, result = NULL \
                     WHERE principal = ?1 AND key = ?2 AND tool = ?3 AND args_hash = ?4 \
                     AND (state = 'unknown' OR (state = 'in_progress' AND lease_until_us < ?10))",
                )
                .map_err(store)?
                .execute(rusqlite::params![
                    principal(claim.principal),
                    claim.key,
                    claim.tool,
                    &claim.args_hash[..],
                    claim.holder as i64,
                    to_i64(claim.lease_until_us),
                    claim.session,
                    claim.call_id,
                    claim.arguments,
                    to_i64(claim.now_us),
                ])
                .map_err(store)?
                == 1)
        })
    }

    fn settle(
        &self,
        who: Option<&str>,
        key: &str,
        settlement: Settlement<'_>,
        now_us: u64,
    ) -> Result<Settled, LedgerError> {
        self.ledger_conn(|conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(store)?;
            let Some(before) = row(&tx, principal(who), key)? else {
                return Ok(Settled::Missing);
            };
            let before = before.listed(now_us);
            if before.state != LedgerState::Unknown {
                return Ok(Settled::NotUnsettled(before));
            }
            match settlement {
                Settlement::Done { result, by } => tx
                    .execute(
                        "UPDATE idempotency SET state = 'succeeded', result = ?3, \
                         settled_by = ?4, holder = NULL, lease_until_us = NULL, updated_us = ?5 \
                         WHERE principal = ?1 AND key = ?2",
                        rusqlite::params![principal(who), key, result, by, to_i64(now_us)],
                    )
                    .map_err(store)?,
                Settlement::NotDone => tx
                    .execute(
                        "DELETE FROM idempotency WHERE principal = ?1 AND key = ?2",
                        [principal(who), key],
                    )
                    .map_err(store)?,
            };
            tx.commit().map_err(store)?;
            Ok(Settled::Settled(before))
        })
    }

    fn list(&self, filter: &LedgerFilter, now_us: u64) -> Result<Vec<LedgerEntry>, LedgerError> {
        self.ledger_conn(|conn| {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM idempotency WHERE ?1 IS NULL OR key = ?1 \
                     ORDER BY created_us, key"
                ))
                .map_err(store)?;
            let mut rows = stmt.query([filter.key.as_deref()]).map_err(store)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(store)? {
                let entry = Row::read(r)?.listed(now_us);
                if filter.state.is_none_or(|s| s == entry.state) {
                    out.push(entry);
                }
            }
            Ok(out)
        })
    }

    fn prune(&self, before_us: u64, _now_us: u64) -> Result<usize, LedgerError> {
        self.ledger_conn(|conn| conn.execute(PRUNE, [to_i64(before_us)]).map_err(store))
    }
}

impl Store {
    /// The ledger entries with `key`, of every principal, as they read at `now_us`.
    ///
    /// # Errors
    /// [`StoreError::Ledger`] saying what the ledger reported.
    pub fn ledger_entries(&self, key: &str, now_us: u64) -> crate::Result<Vec<LedgerEntry>> {
        Ledger::list(
            self,
            &LedgerFilter {
                state: None,
                key: Some(key.to_string()),
            },
            now_us,
        )
        .map_err(|e| StoreError::Ledger {
            key: key.chars().take(64).collect(),
            why: e.to_string(),
        })
    }

    /// Runs `f` on the shared connection, for the ledger's methods.
    fn ledger_conn<T>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let mut conn = self.inner.conn.lock();
        f(&mut conn)
    }
}
