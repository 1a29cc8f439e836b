//! The idempotency ledger: a side-effecting call acts once per idempotency key, however often
//! it is sent.
//!
//! For a call of a tool that is neither `read_only` nor `idempotent` and has a key (the
//! caller's, or one derived from its caller, tool and arguments: [`key`]), the execute stage
//! ([`crate::pipeline`]) does, in order:
//!
//! 0. **look up** the key ([`Ledger::lookup`]) right after decode, before the guard, the
//!    policy and the budget: a key that already has an answer (a replay, a conflict, a call in
//!    progress, an unsettled call) gets it there, without its call being judged or approved
//!    again, since nothing will act;
//! 1. **claim** the key ([`Ledger::claim`]) and commit the claim before the handler runs. The
//!    answer ([`Claimed`], decided by [`decide`] for every backend alike):
//!    - [`Claimed::Held`]: the key was free; this call runs;
//!    - [`Claimed::Done`]: a call with this key and these arguments ended; its recorded
//!      result comes back without running the handler, marked as a replay;
//!    - [`Claimed::Conflict`]: the key was used for another tool or other arguments
//!      (`invalid_input` / `idempotency_conflict`);
//!    - [`Claimed::InProgress`]: the call holding the key is still within its timeout
//!      (`in_progress`: wait and ask again);
//!    - [`Claimed::Unsettled`]: the call holding it ended without recording an end (its
//!      process died, or it timed out, panicked or was cancelled mid-way). Never run again
//!      silently: the tool's reconcile hook ([`crate::Tool::reconcile`]) may settle it
//!      (done: its result; not done: this call runs), else the call gets `outcome_unknown`
//!      until the operator settles it ([`Ledger::settle`], `toolgate ledger resolve`).
//! 2. run the handler once (no automatic retry: that is only for idempotent tools);
//! 3. **end** the claim by what the handler's end says about the world:
//!    - success: [`Ledger::complete`] with the output ([`LedgerState::Succeeded`]);
//!    - a failure after the handler may have acted: [`Ledger::complete`] with the error
//!      ([`LedgerState::Failed`]), replayed to a call sent again;
//!    - a failure the handler marks as before acting ([`crate::ToolError::no_effect`]), or a
//!      cancellation before the handler started: [`Ledger::release`], the key is free again;
//!    - a timeout, a panic, a cancellation mid-way, a handler's own `outcome_unknown`:
//!      [`Ledger::abandon`], the entry is unsettled.
//!
//! A process that dies while its call runs leaves the claim in progress; the claim's lease
//! (the call's deadline plus a grace period) tells the next caller when nobody can still be
//! running it, and from then on the entry reads as unsettled.
//!
//! Keys are kept per principal ([`Claim::principal`]; `None`, the local caller, for sessions
//! without one): one principal's key never finds another's call. Ended entries expire after
//! the retention ([`LedgerOptions::retention`]), unsettled ones never (only
//! [`Ledger::settle`] frees their key); an entry of a derived key is reused by a new
//! call once it is older than the derived-key window ([`LedgerOptions::derived_key_window`]).
//!
//! [`MemoryLedger`] keeps the ledger in memory (a library without a store); `toolgate-store`
//! keeps it in SQLite, shared by every process using the store.

pub mod key;
mod memory;
mod recorded;
#[cfg(test)]
mod tests;

pub use key::{arguments_hash, check_key, derive_key, ArgsHash, DERIVED_PREFIX, MAX_KEY_BYTES};
pub use memory::MemoryLedger;
pub use recorded::Recorded;

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What the reconcile hook of a tool found out about an earlier call
/// ([`crate::Tool::reconcile`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Reconciliation<T = crate::ToolOutput> {
    /// The effect happened; this is the call's result (recorded and returned as a replay).
    Done(T),
    /// The effect did not happen: the call may run now.
    NotDone,
    /// The tool cannot tell: the entry stays unsettled for the operator.
    Unknown,
}

/// The state of a ledger entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerState {
    /// Claimed by a call that is still within its lease.
    InProgress,
    /// Claimed by a call that ended without recording an end (timed out, panicked, cancelled
    /// mid-way, or its process died: an in-progress entry past its lease reads as this).
    Unknown,
    /// The call succeeded (or was settled as done); its result is recorded.
    Succeeded,
    /// The call failed after it may have acted; its error is recorded.
    Failed,
}

impl LedgerState {
    /// The stored name: `in_progress`, `unknown`, `succeeded` or `failed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LedgerState::InProgress => "in_progress",
            LedgerState::Unknown => "unknown",
            LedgerState::Succeeded => "succeeded",
            LedgerState::Failed => "failed",
        }
    }

    /// Whether the call ended with a recorded result (succeeded or failed).
    pub const fn is_ended(self) -> bool {
        matches!(self, LedgerState::Succeeded | LedgerState::Failed)
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "in_progress" => LedgerState::InProgress,
            "unknown" => LedgerState::Unknown,
            "succeeded" => LedgerState::Succeeded,
            "failed" => LedgerState::Failed,
            _ => return None,
        })
    }
}

impl std::fmt::Display for LedgerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the ledger did with a call, as its audit record says
/// ([`crate::AuditRecord::ledger`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LedgerEvent {
    /// The call claimed its key and its handler ran.
    Executed,
    /// The recorded result of an earlier call with the key came back; the handler did not
    /// run.
    Replayed,
    /// The tool's reconcile hook found the unsettled earlier call done; its result came back.
    ReconciledDone,
    /// The tool's reconcile hook found the unsettled earlier call not done; this call ran.
    ReconciledNotDone,
    /// The operator settled an unsettled entry as done (`toolgate ledger resolve --done`).
    ResolvedDone,
    /// The operator settled an unsettled entry as not done and freed its key
    /// (`toolgate ledger resolve --not-done`).
    ResolvedNotDone,
}

impl LedgerEvent {
    /// The wire name, for example `replayed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LedgerEvent::Executed => "executed",
            LedgerEvent::Replayed => "replayed",
            LedgerEvent::ReconciledDone => "reconciled_done",
            LedgerEvent::ReconciledNotDone => "reconciled_not_done",
            LedgerEvent::ResolvedDone => "resolved_done",
            LedgerEvent::ResolvedNotDone => "resolved_not_done",
        }
    }
}

/// How long entries live, and the window of derived keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerOptions {
    /// An ended entry is forgotten this long after its last change (default 24 hours): a call
    /// sent again later acts again. An unsettled entry is kept until it is settled, however
    /// long. `[ledger] retention` in `toolgate.toml`.
    pub retention: Duration,
    /// A call without a key gets one derived from its caller, tool and arguments; the same
    /// call sent again within this span after the first ended is answered from the ledger,
    /// later it acts again (default 10 minutes; zero: no derived keys). `[ledger]
    /// derived_key_window` in `toolgate.toml`.
    pub derived_key_window: Duration,
    /// How long after a call's deadline its claim still counts as in progress (default 5 s):
    /// past it, a claim without an end was left by a process that died.
    pub lease_grace: Duration,
}

impl Default for LedgerOptions {
    fn default() -> Self {
        LedgerOptions {
            retention: Duration::from_secs(24 * 3600),
            derived_key_window: Duration::from_secs(600),
            lease_grace: Duration::from_secs(5),
        }
    }
}

/// A call's claim on its key, made before its handler runs.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// The principal the key belongs to (`None`: the local caller).
    pub principal: Option<&'a str>,
    /// The idempotency key (checked: [`check_key`]).
    pub key: &'a str,
    /// Whether the key was derived ([`derive_key`]) rather than sent.
    pub derived: bool,
    /// The tool.
    pub tool: &'a str,
    /// SHA-256 of the canonical arguments ([`arguments_hash`]).
    pub args_hash: &'a ArgsHash,
    /// The session of the call.
    pub session: &'a str,
    /// The call id.
    pub call_id: &'a str,
    /// The arguments with secrets redacted, cut to [`ARGUMENTS_PREVIEW_BYTES`], for the
    /// operator who settles an entry.
    pub arguments: &'a str,
    /// A random number naming this claim: only its holder ends it.
    pub holder: u64,
    /// Now, µs since the Unix epoch.
    pub now_us: u64,
    /// Until when the claim counts as in progress (the call's deadline plus the grace).
    pub lease_until_us: u64,
    /// Entries last changed before this are forgotten (now minus the retention).
    pub expire_before_us: u64,
    /// For a derived key: an ended entry of a derived key, ended before this, is stale and
    /// taken over by this call (now minus the window). `None` for a sent key.
    pub reuse_before_us: Option<u64>,
}

/// The longest arguments preview kept with an entry, in bytes.
pub const ARGUMENTS_PREVIEW_BYTES: usize = 1024;

/// The holder of a claim, for ending it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held<'a> {
    /// The principal the key belongs to.
    pub principal: Option<&'a str>,
    /// The key.
    pub key: &'a str,
    /// The claim's holder number ([`Claim::holder`]).
    pub holder: u64,
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Claimed {
    /// This claim holds the key: the call runs.
    Held,
    /// A call with the key and these arguments ended; here is its result.
    Done {
        /// [`LedgerState::Succeeded`] or [`LedgerState::Failed`].
        state: LedgerState,
        /// The recorded result.
        result: Recorded,
    },
    /// The key belongs to a call of another tool or with other arguments.
    Conflict {
        /// The tool the key was first used with.
        tool: String,
    },
    /// The call holding the key is still within its lease.
    InProgress {
        /// Its session.
        session: String,
        /// Its call id.
        call_id: String,
        /// Until when it may still be running, µs since the epoch.
        until_us: u64,
    },
    /// The call holding the key ended without recording an end.
    Unsettled {
        /// Its session.
        session: String,
        /// Its call id.
        call_id: String,
        /// When it claimed the key, µs since the epoch.
        since_us: u64,
    },
}

/// A stored entry as [`decide`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    /// Its tool.
    pub tool: &'a str,
    /// Its arguments' hash.
    pub args_hash: &'a [u8],
    /// Whether its key was derived.
    pub derived: bool,
    /// Its stored state (an in-progress entry past its lease included).
    pub state: LedgerState,
    /// Its lease, while in progress.
    pub lease_until_us: Option<u64>,
    /// When it was claimed.
    pub created_us: u64,
    /// When it last changed.
    pub updated_us: u64,
    /// Its session.
    pub session: &'a str,
    /// Its call id.
    pub call_id: &'a str,
}

impl Stored<'_> {
    /// The state as it reads at `now_us`: an in-progress entry past its lease is unknown.
    pub fn state_at(&self, now_us: u64) -> LedgerState {
        match self.state {
            LedgerState::InProgress if self.lease_until_us.is_none_or(|l| l < now_us) => {
                LedgerState::Unknown
            }
            s => s,
        }
    }
}

/// What a backend does with a claim on a key that has an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Replace the entry with the claim (it expired, or a derived key's entry went stale).
    Take,
    /// Answer with the entry's recorded result ([`Claimed::Done`]).
    Replay,
    /// Answer with this and leave the entry as it is.
    Refuse(Claimed),
}

/// The rule every backend applies to a claim on a key that has an entry, in order:
/// an ended entry past the retention is taken over (an unsettled one never expires: whether
/// its effect happened is for the operator to settle, and a new call on its key could do it
/// twice); another tool or other arguments
/// is a conflict; a live claim is in progress; an unknown one (or one past its lease) is
/// unsettled; an ended entry of a derived key, ended before the window, is taken over by a
/// derived claim; any other ended entry is replayed.
pub fn decide(existing: &Stored<'_>, claim: &Claim<'_>) -> Verdict {
    let state = existing.state_at(claim.now_us);
    if existing.updated_us < claim.expire_before_us && state.is_ended() {
        return Verdict::Take;
    }
    if existing.tool != claim.tool || existing.args_hash != claim.args_hash.as_slice() {
        return Verdict::Refuse(Claimed::Conflict {
            tool: existing.tool.to_string(),
        });
    }
    match state {
        LedgerState::InProgress => Verdict::Refuse(Claimed::InProgress {
            session: existing.session.to_string(),
            call_id: existing.call_id.to_string(),
            until_us: existing.lease_until_us.unwrap_or(0),
        }),
        LedgerState::Unknown => Verdict::Refuse(Claimed::Unsettled {
            session: existing.session.to_string(),
            call_id: existing.call_id.to_string(),
            since_us: existing.created_us,
        }),
        LedgerState::Succeeded | LedgerState::Failed => match claim.reuse_before_us {
            Some(before) if existing.derived && existing.updated_us < before => Verdict::Take,
            _ => Verdict::Replay,
        },
    }
}

/// How an unsettled entry is settled ([`Ledger::settle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement<'a> {
    /// The effect happened: the entry becomes succeeded with `result` (the JSON of a
    /// [`Recorded`]), replayed to the calls sent again.
    Done {
        /// The JSON of the result to record.
        result: &'a str,
        /// Who settled it (`operator`, `reconcile`).
        by: &'a str,
    },
    /// The effect did not happen: the entry is removed and the key is free.
    NotDone,
}

/// The answer of [`Ledger::settle`].
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// The entry was unsettled and is settled now; this is how it was before.
    Settled(LedgerEntry),
    /// There is no entry with that key.
    Missing,
    /// The entry is not unsettled (in progress, or ended): nothing was changed.
    NotUnsettled(LedgerEntry),
}

/// One ledger entry as listed (`toolgate ledger list`), its result left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerEntry {
    /// The idempotency key.
    pub key: String,
    /// The principal it belongs to (`None`: the local caller).
    pub principal: Option<String>,
    /// Whether the key was derived.
    pub derived: bool,
    /// The tool.
    pub tool: String,
    /// The arguments' SHA-256, lower-case hex.
    pub args_hash: String,
    /// The session of the call that claimed it.
    pub session: String,
    /// That call's id.
    pub call_id: String,
    /// That call's arguments, secrets redacted, cut to [`ARGUMENTS_PREVIEW_BYTES`].
    pub arguments: String,
    /// Its state when listed (an in-progress entry past its lease is `unknown`).
    pub state: LedgerState,
    /// When it was claimed, µs since the epoch.
    pub created_us: u64,
    /// When it last changed, µs since the epoch.
    pub updated_us: u64,
    /// Until when a call in progress may still run, µs since the epoch.
    pub lease_until_us: Option<u64>,
    /// Who settled it, when it was settled rather than ended by its call (`operator`,
    /// `reconcile`).
    pub settled_by: Option<String>,
}

/// Which entries to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerFilter {
    /// Only entries in this state (as read at listing time).
    pub state: Option<LedgerState>,
    /// Only entries with this key.
    pub key: Option<String>,
}

/// A ledger backend failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The backend's storage failed (for example an SQLite error).
    #[error("idempotency ledger: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A stored entry cannot be read back.
    #[error("idempotency ledger entry {key:?} cannot be read: {why}")]
    Corrupt {
        /// The key.
        key: String,
        /// What is wrong.
        why: String,
    },
}

/// Where ledger entries live. Every method is one atomic step (one transaction of a database
/// backend), committed before it returns; the execute stage calls them on the caller's path,
/// so a backend keeps them short.
pub trait Ledger: Send + Sync {
    /// Claims `claim.key` for the call ([`Claimed`], decided by [`decide`] when the key has an
    /// entry; a new entry is in progress, held by `claim.holder` until
    /// `claim.lease_until_us`).
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails; the call must not run then.
    fn claim(&self, claim: &Claim<'_>) -> Result<Claimed, LedgerError>;

    /// What [`Ledger::claim`] would find for `claim`, without claiming or changing anything:
    /// `None` when the claim would hold the key (it is free, expired or stale), else the
    /// answer a claim would get (for [`Claimed::Done`], with its recorded result). The
    /// pipeline asks it before the guard and the policy, so a call whose key already has an
    /// answer gets it without being judged or approved again (nothing will act).
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn lookup(&self, claim: &Claim<'_>) -> Result<Option<Claimed>, LedgerError>;

    /// Ends a held claim with `state` ([`LedgerState::Succeeded`] or
    /// [`LedgerState::Failed`]) and `result`, the JSON of a [`Recorded`]. `false` when the
    /// claim is no longer held (settled by someone else meanwhile).
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn complete(
        &self,
        held: &Held<'_>,
        state: LedgerState,
        result: &str,
        now_us: u64,
    ) -> Result<bool, LedgerError>;

    /// Gives up a held claim whose call did not act: the entry is removed and the key is
    /// free. `false` when it is no longer held.
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn release(&self, held: &Held<'_>) -> Result<bool, LedgerError>;

    /// Marks a held claim unknown: its call ended without knowing whether it acted (timeout,
    /// panic, cancellation mid-way). `false` when it is no longer held.
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn abandon(&self, held: &Held<'_>, now_us: u64) -> Result<bool, LedgerError>;

    /// Takes over an unsettled entry for `claim` (same tool and arguments) after the tool's
    /// reconcile hook found its effect not done: the entry is in progress again, held by
    /// `claim.holder`. `false` when the entry is not unsettled any more (another call took it
    /// over or settled it first).
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn take_over(&self, claim: &Claim<'_>) -> Result<bool, LedgerError>;

    /// Settles the unsettled entry of `key` ([`Settlement`]); an entry in progress or ended is
    /// left as it is ([`Settled::NotUnsettled`]).
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn settle(
        &self,
        principal: Option<&str>,
        key: &str,
        settlement: Settlement<'_>,
        now_us: u64,
    ) -> Result<Settled, LedgerError>;

    /// The entries matching `filter`, oldest first, as they read at `now_us`.
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn list(&self, filter: &LedgerFilter, now_us: u64) -> Result<Vec<LedgerEntry>, LedgerError>;

    /// Forgets ended entries (succeeded, failed) last changed before `before_us`; an entry
    /// in progress or unsettled at `now_us` is never forgotten, however old. Returns how
    /// many were forgotten.
    ///
    /// # Errors
    /// [`LedgerError`] when the backend fails.
    fn prune(&self, before_us: u64, now_us: u64) -> Result<usize, LedgerError>;
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}
