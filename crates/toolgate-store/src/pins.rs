//! The gateway's pins: the definition of each upstream tool the operator has accepted, in the
//! `upstream_pins` table, and each upstream's last known health, in `upstream_health`.
//!
//! A pin moves between three states ([`PinState`]):
//!
//! - `pinned`: the definition seen is the one accepted (the first one seen, when it was clean,
//!   or one the operator approved); the tool is served;
//! - `changed`: the upstream now sends a definition other than the accepted one; the tool is
//!   hidden and refused (`tool_definition_changed`) until the operator approves the new one;
//! - `quarantined`: the first definition seen carried text aimed at the model (or the tool
//!   changed while quarantined); never served until approved.
//!
//! [`Store::observe_definition`] applies what the gateway sees, in one transaction;
//! [`Store::approve_pins`] accepts what was seen. An upstream that goes back to the accepted
//! definition is served again without approval.

use crate::error::{Result, StoreError};
use crate::store::{to_i64, to_u64, Store};
use rusqlite::{OptionalExtension, Row, TransactionBehavior};
use serde::{Deserialize, Serialize};

/// The state of one upstream tool's pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    /// The definition seen is the accepted one: the tool is served.
    Pinned,
    /// The definition changed since it was accepted: blocked until approved.
    Changed,
    /// Quarantined before its first listing: blocked until approved.
    Quarantined,
}

impl PinState {
    /// The name stored and shown: `pinned`, `changed`, `quarantined`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PinState::Pinned => "pinned",
            PinState::Changed => "changed",
            PinState::Quarantined => "quarantined",
        }
    }

    fn parse(s: &str) -> Option<PinState> {
        match s {
            "pinned" => Some(PinState::Pinned),
            "changed" => Some(PinState::Changed),
            "quarantined" => Some(PinState::Quarantined),
            _ => None,
        }
    }
}

/// One upstream tool's pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The upstream's name (from the configuration).
    pub upstream: String,
    /// The tool's name as the upstream spells it.
    pub tool: String,
    /// The pin's state.
    pub state: PinState,
    /// The hash of the accepted definition (hex SHA-256 of its canonical JSON), when one was.
    pub pinned_hash: Option<String>,
    /// The accepted definition (canonical JSON), when one was.
    pub pinned_definition: Option<String>,
    /// The hash of the definition seen last.
    pub seen_hash: String,
    /// The definition seen last (canonical JSON).
    pub seen_definition: String,
    /// Why the tool is blocked (`changed` or `quarantined`), for the operator.
    pub reason: Option<String>,
    /// When the tool was first seen, in microseconds since the Unix epoch.
    pub first_seen_us: u64,
    /// When the row last changed, in microseconds since the Unix epoch.
    pub updated_us: u64,
    /// When the operator last approved it, in microseconds since the Unix epoch.
    pub approved_us: Option<u64>,
}

impl Pin {
    /// Whether the tool is served: pinned, and the definition seen is the accepted one.
    pub fn is_served(&self) -> bool {
        self.state == PinState::Pinned && self.pinned_hash.as_deref() == Some(&self.seen_hash)
    }
}

/// A definition the gateway saw, to apply with [`Store::observe_definition`].
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The upstream's name.
    pub upstream: &'a str,
    /// The tool's name as the upstream spells it.
    pub tool: &'a str,
    /// Hex SHA-256 of `definition`.
    pub hash: &'a str,
    /// The definition's canonical JSON.
    pub definition: &'a str,
    /// Why the definition must be quarantined (the findings of the gateway's checks), when
    /// it must.
    pub quarantine: Option<&'a str>,
}

/// An upstream's last known health, as the gateway records it on every change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamHealth {
    /// The upstream's name.
    pub upstream: String,
    /// `starting`, `ready`, `open` (the circuit breaker is open), `restarting` or `failed`.
    pub state: String,
    /// What happened last, for the operator.
    pub detail: Option<String>,
    /// How often the upstream's process was restarted.
    pub restarts: u64,
    /// Calls that failed or timed out, in all.
    pub failures: u64,
    /// Notifications it sent over its budgets, dropped, in all (stores of before it: 0).
    #[serde(default)]
    pub dropped: u64,
    /// When this was recorded, in microseconds since the Unix epoch.
    pub updated_us: u64,
}

const COLUMNS: &str = "upstream, tool, state, pinned_hash, pinned_definition, seen_hash, \
     seen_definition, reason, first_seen_us, updated_us, approved_us";

fn decode(r: &Row<'_>) -> Result<Pin> {
    let upstream: String = r.get(0)?;
    let tool: String = r.get(1)?;
    let key = format!("{upstream}/{tool}");
    let state: String = r.get(2)?;
    let time = |i: usize, col: &str| -> Result<u64> {
        to_u64(r.get::<_, i64>(i)?, "upstream_pins", &key, col)
    };
    Ok(Pin {
        state: PinState::parse(&state).ok_or_else(|| StoreError::Corrupt {
            table: "upstream_pins",
            row: key.clone(),
            why: format!("state {state:?}"),
        })?,
        pinned_hash: r.get(3)?,
        pinned_definition: r.get(4)?,
        seen_hash: r.get(5)?,
        seen_definition: r.get(6)?,
        reason: r.get(7)?,
        first_seen_us: time(8, "first_seen_us")?,
        updated_us: time(9, "updated_us")?,
        approved_us: r
            .get::<_, Option<i64>>(10)?
            .map(|v| to_u64(v, "upstream_pins", &key, "approved_us"))
            .transpose()?,
        upstream,
        tool,
    })
}

impl Store {
    /// Applies a definition the gateway saw and returns the pin as it now is: a tool seen for
    /// the first time is pinned (or quarantined, when `seen.quarantine` says why); the
    /// accepted definition seen again is served; another definition blocks the tool
    /// (`changed`, or `quarantined` while it was never accepted) until
    /// [`Store::approve_pins`]. One `BEGIN IMMEDIATE` transaction, so two gateways sharing a
    /// store cannot both pin a first definition.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn observe_definition(&self, seen: &Observed<'_>, now_us: u64) -> Result<Pin> {
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let old = tx
                .query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM upstream_pins WHERE upstream = ?1 AND tool = ?2"
                    ),
                    rusqlite::params![seen.upstream, seen.tool],
                    |r| Ok(decode(r)),
                )
                .optional()?
                .transpose()?;
            let now = to_i64(now_us);
            let (state, pinned_hash, pinned_definition, reason) = match &old {
                None => match seen.quarantine {
                    Some(why) => (PinState::Quarantined, None, None, Some(why.to_string())),
                    None => (
                        PinState::Pinned,
                        Some(seen.hash.to_string()),
                        Some(seen.definition.to_string()),
                        None,
                    ),
                },
                Some(p) if p.pinned_hash.as_deref() == Some(seen.hash) => (
                    PinState::Pinned,
                    p.pinned_hash.clone(),
                    p.pinned_definition.clone(),
                    None,
                ),
                Some(p) if p.seen_hash == seen.hash && p.state != PinState::Pinned => {
                    // the same blocked definition again: nothing new
                    (
                        p.state,
                        p.pinned_hash.clone(),
                        p.pinned_definition.clone(),
                        p.reason.clone(),
                    )
                }
                Some(p) => {
                    let (state, why) = match &p.pinned_hash {
                        None => (
                            PinState::Quarantined,
                            "its definition changed while it was quarantined",
                        ),
                        Some(_) => (
                            PinState::Changed,
                            "its definition changed since it was pinned",
                        ),
                    };
                    let reason = match seen.quarantine {
                        Some(q) => format!("{why}; {q}"),
                        None => why.to_string(),
                    };
                    (
                        state,
                        p.pinned_hash.clone(),
                        p.pinned_definition.clone(),
                        Some(reason),
                    )
                }
            };
            tx.execute(
                "INSERT INTO upstream_pins (upstream, tool, state, pinned_hash, \
                 pinned_definition, seen_hash, seen_definition, reason, first_seen_us, \
                 updated_us, approved_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL) \
                 ON CONFLICT (upstream, tool) DO UPDATE SET state = ?3, pinned_hash = ?4, \
                 pinned_definition = ?5, seen_hash = ?6, seen_definition = ?7, reason = ?8, \
                 updated_us = ?9",
                rusqlite::params![
                    seen.upstream,
                    seen.tool,
                    state.as_str(),
                    pinned_hash,
                    pinned_definition,
                    seen.hash,
                    seen.definition,
                    reason,
                    now,
                ],
            )?;
            let pin = tx.query_row(
                &format!("SELECT {COLUMNS} FROM upstream_pins WHERE upstream = ?1 AND tool = ?2"),
                rusqlite::params![seen.upstream, seen.tool],
                |r| Ok(decode(r)),
            )??;
            tx.commit()?;
            Ok(pin)
        })
    }

    /// The pins, by upstream and tool; of one upstream when `upstream` is set.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn pins(&self, upstream: Option<&str>) -> Result<Vec<Pin>> {
        self.with_conn(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM upstream_pins WHERE ?1 IS NULL OR upstream = ?1 \
                 ORDER BY upstream, tool"
            ))?;
            let rows = stmt.query_map([upstream], |r| Ok(decode(r)))?;
            rows.map(|r| r?).collect()
        })
    }

    /// Approves what was seen last of `upstream`'s blocked tools (of the one `tool` when
    /// set): each becomes pinned to its seen definition. Returns the pins approved (none
    /// when nothing was blocked).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn approve_pins(
        &self,
        upstream: &str,
        tool: Option<&str>,
        now_us: u64,
    ) -> Result<Vec<Pin>> {
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let approved = {
                let mut stmt = tx.prepare(&format!(
                    "UPDATE upstream_pins SET state = 'pinned', pinned_hash = seen_hash, \
                     pinned_definition = seen_definition, reason = NULL, approved_us = ?3, \
                     updated_us = ?3 WHERE upstream = ?1 AND (?2 IS NULL OR tool = ?2) AND \
                     state != 'pinned' RETURNING {COLUMNS}"
                ))?;
                let rows = stmt
                    .query_map(rusqlite::params![upstream, tool, to_i64(now_us)], |r| {
                        Ok(decode(r))
                    })?;
                rows.map(|r| r?).collect::<Result<Vec<Pin>>>()?
            };
            tx.commit()?;
            Ok(approved)
        })
    }

    /// A mark of the operator's approvals: the latest `approved_us` and how many pins have
    /// one. It changes whenever [`Store::approve_pins`] approves something (in this process
    /// or another sharing the store), so a serving gateway polls it to see approvals without
    /// a restart; one indexless read of a table with a row per upstream tool.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn approvals_mark(&self) -> Result<(i64, i64)> {
        self.with_conn(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT COALESCE(MAX(approved_us), 0), COUNT(approved_us) FROM upstream_pins",
            )?;
            Ok(stmt.query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?)
        })
    }

    /// Records an upstream's health (replacing what was recorded before).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn record_upstream_health(&self, h: &UpstreamHealth) -> Result<()> {
        self.with_conn(|conn| {
            conn.execute(
                "INSERT INTO upstream_health (upstream, state, detail, restarts, failures, \
                 updated_us, dropped) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (upstream) \
                 DO UPDATE SET state = ?2, detail = ?3, restarts = ?4, failures = ?5, \
                 updated_us = ?6, dropped = ?7",
                rusqlite::params![
                    h.upstream,
                    h.state,
                    h.detail,
                    to_i64(h.restarts),
                    to_i64(h.failures),
                    to_i64(h.updated_us),
                    to_i64(h.dropped)
                ],
            )?;
            Ok(())
        })
    }

    /// Every upstream's last recorded health, by name.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn upstream_health(&self) -> Result<Vec<UpstreamHealth>> {
        self.with_conn(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT upstream, state, detail, restarts, failures, updated_us, dropped FROM \
                 upstream_health ORDER BY upstream",
            )?;
            let rows = stmt.query_map([], |r| {
                let upstream: String = r.get(0)?;
                Ok((|| {
                    let n = |i: usize, col: &str| -> Result<u64> {
                        to_u64(r.get::<_, i64>(i)?, "upstream_health", &upstream, col)
                    };
                    Ok(UpstreamHealth {
                        state: r.get(1)?,
                        detail: r.get(2)?,
                        restarts: n(3, "restarts")?,
                        failures: n(4, "failures")?,
                        updated_us: n(5, "updated_us")?,
                        dropped: n(6, "dropped")?,
                        upstream: upstream.clone(),
                    })
                })())
            })?;
            rows.map(|r| r?).collect()
        })
    }
}
