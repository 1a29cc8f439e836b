//! Walking the hash chain: [`Store::verify_audit`].
//!
//! Rows are read in `seq` order. The walk expects sequence numbers 1, 2, 3, ... and, for each
//! row, recomputes `sha256(prev || canonical JSON of the record decoded from its columns)`
//! with `prev` the hash of the row before. The first row that does not fit is the break:
//!
//! - a sequence number is skipped: [`BreakKind::Missing`] (a record was deleted);
//! - the row's own `prev_hash` and content still give its stored `hash`, but `prev_hash` is not
//!   the hash of the row before: [`BreakKind::OutOfPlace`] (records were reordered, deleted and
//!   the rest renumbered, or the row before was replaced with a recomputed hash);
//! - otherwise: [`BreakKind::Edited`] (a column was changed);
//! - a column that cannot be decoded: [`BreakKind::Undecodable`].
//!
//! Intent records are rows of the chain like any other. The walk also pairs them with their
//! calls' records ([`super::intents`]) and counts those nothing completed: calls whose
//! process stopped while they ran. They do not break the chain; they are what to look at
//! after a crash.
//!
//! What a chain inside the file cannot show: records cut off the end, or a whole chain
//! rewritten by someone who recomputed every hash. Keep the `head` hash that `verify` reports
//! somewhere else (a ticket, another machine) and compare it later to catch both.

use super::canonical::{canonical_json, chain_hash, hex, Hash, GENESIS};
use super::intents::Intents;
use super::row::{self, COLUMNS};
use crate::error::{Result, StoreError};
use crate::store::Store;
use serde::Serialize;

/// How the chain is broken at a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum BreakKind {
    /// No record has this sequence number: it was deleted.
    Missing,
    /// The record's columns do not give its hash: it was edited.
    Edited,
    /// The record is intact but does not follow the record before it: records were moved or
    /// renumbered, or the record before was replaced (with a recomputed hash).
    OutOfPlace,
    /// A column cannot be decoded (wrong type, unknown name); the text says which.
    Undecodable(String),
}

impl std::fmt::Display for BreakKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BreakKind::Missing => f.write_str("missing (deleted)"),
            BreakKind::Edited => f.write_str("edited (its hash does not match its content)"),
            BreakKind::OutOfPlace => f.write_str(
                "out of place (it does not follow the record before it: records reordered or \
                 renumbered, or the record before replaced)",
            ),
            BreakKind::Undecodable(why) => write!(f, "undecodable ({why})"),
        }
    }
}

/// What [`Store::verify_audit`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Verification {
    /// Every record is in place.
    Intact {
        /// Records checked.
        records: u64,
        /// The last record's hash, hex (absent for an empty log): keep it elsewhere to detect
        /// a cut-off or rewritten log later.
        #[serde(skip_serializing_if = "Option::is_none")]
        head: Option<String>,
        /// Calls with an intent record and no record of their end (`toolgate audit
        /// --outcome started` lists them): their process stopped while they ran.
        unfinished: u64,
    },
    /// The chain breaks at `seq`.
    Broken {
        /// The first sequence number that does not fit.
        seq: u64,
        /// How.
        #[serde(rename = "break")]
        kind: BreakKind,
        /// Records verified before it.
        verified: u64,
    },
}

impl Verification {
    /// Whether the chain is intact.
    pub fn is_intact(&self) -> bool {
        matches!(self, Verification::Intact { .. })
    }
}

impl Store {
    /// Walks the whole audit chain (see the module docs). Streams rows: memory does not grow
    /// with the log (only with the calls left unfinished). About a second per million records.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the table cannot be read at all; a damaged row is a
    /// [`Verification::Broken`], not an error.
    pub fn verify_audit(&self) -> Result<Verification> {
        self.with_conn(|conn| {
            let tx = conn.transaction()?; // one snapshot for the whole walk
            let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY seq"))?;
            let mut rows = stmt.query([])?;
            let mut expected: u64 = 1;
            let mut prev: Hash = GENESIS;
            let mut buf = Vec::with_capacity(512);
            let mut intents = Intents::default();
            while let Some(r) = rows.next()? {
                let d = match row::decode(r) {
                    Ok(d) => d,
                    Err(StoreError::Corrupt { why, .. }) => {
                        let seq: i64 = r.get(0).unwrap_or(-1);
                        return Ok(broken(seq, expected, BreakKind::Undecodable(why)));
                    }
                    Err(e) => return Err(e),
                };
                if d.seq != expected {
                    let kind = if d.seq > expected {
                        BreakKind::Missing
                    } else {
                        BreakKind::OutOfPlace
                    };
                    return Ok(Verification::Broken {
                        seq: expected.min(d.seq),
                        kind,
                        verified: expected - 1,
                    });
                }
                buf.clear();
                canonical_json(&d.record, &mut buf);
                let want = chain_hash(&prev, &buf);
                if want != d.hash {
                    let kind = if d.prev_hash != prev && chain_hash(&d.prev_hash, &buf) == d.hash {
                        BreakKind::OutOfPlace
                    } else {
                        BreakKind::Edited
                    };
                    return Ok(Verification::Broken {
                        seq: d.seq,
                        kind,
                        verified: expected - 1,
                    });
                }
                prev = want;
                expected += 1;
                let r = &d.record;
                intents.see(
                    d.seq,
                    &r.session,
                    r.call_id.as_str(),
                    r.time_us,
                    r.outcome.as_str(),
                );
            }
            let records = expected - 1;
            Ok(Verification::Intact {
                records,
                head: (records > 0).then(|| hex(&prev)),
                unfinished: intents.unfinished().len() as u64,
            })
        })
    }
}

fn broken(seq: i64, expected: u64, kind: BreakKind) -> Verification {
    Verification::Broken {
        seq: u64::try_from(seq).unwrap_or(expected),
        kind,
        verified: expected - 1,
    }
}
