//! [`SqliteAuditSink`]: the audit log's writer, a background thread with group commit.
//!
//! `record` copies what the writer needs of a record into the queue and frees the record at
//! once, on its own thread while its memory is still warm in that core's cache: the
//! arguments' canonical JSON (as sent: [`write_value`]) and the record's text fields go to the
//! end of one shared byte buffer, its numbers and enums
//! with the offsets of its text into an [`Entry`]. The writer then reads only that buffer:
//! it never touches a caller's allocations, and callers never free memory the writer has
//! read (both cost the caller a cache miss per allocation: 1.4 µs a call in the rules
//! benchmark when the queue held whole records, BENCHMARKS.md). Arguments larger than [`COPY_LIMIT`] bytes are not copied on the
//! caller's path: their value is moved into the entry, and the writer writes them.
//!
//! Redaction is the writer's: it reads each record's arguments back from their text (or takes
//! the moved value) and stores what [`write_value_redacted`] gives (secrets redacted, long
//! strings and arguments bounded: `toolgate_core::redact::for_audit`), and the idempotency
//! key as `toolgate_core::redact::idempotency_key` gives it. Canonical JSON read
//! back is the same value (numbers are written as `serde_json` parses them back), so what is
//! stored and hashed does not depend on which way the arguments came.
//!
//! The writer takes the whole queue at once (the entries and the buffer, swapped with its
//! own emptied ones under the lock) and writes the group in one `BEGIN IMMEDIATE`
//! transaction: read the chain's head, then per record its canonical JSON,
//! `hash = sha256(prev || json)`, and one multi-row `INSERT` per 32 records; one commit for
//! the group. After a commit it waits for the next group to fill up to [`GROUP_TARGET`]
//! records or for [`LINGER`], whichever is first: a caller wakes it only when `pending`
//! reaches that size (one wake-up per group, not per record), and a trickle of records is
//! still committed within [`LINGER`]. `flush` wakes it at once and waits until every record
//! taken before it is committed (or given up on). Records are written in the order callers
//! pushed them, and none is dropped: when `pending` holds the queue's capacity, `record`
//! waits for the writer to take it.
//!
//! A durable record ([`AuditSink::record_durable`]: the intent and the record of a call that
//! may act) gets a ticket, its place in that order, and wakes the writer at once, which takes
//! whatever is pending without waiting for [`LINGER`]; its caller waits asynchronously until
//! the writer settles that ticket ([`CommitTracker`]). While the writer commits one group,
//! the records of every other call arrive and wait together for the next: under load one
//! commit covers many calls (group commit), with no lingering for a lone one.
//!
//! A failed group is retried three times (50 ms, 250 ms, 1 s apart: a lock held too long by
//! another process, a full disk that clears); after that its records are counted as lost, the
//! error is kept, and [`SqliteAuditSink::flush_checked`] reports it.

use super::canonical::{
    canonical_json_with, chain_hash, saturate, write_value, write_value_redacted, Hash, View,
    GENESIS,
};
use super::row;
use crate::error::{Result, StoreError};
use crate::store::Store;
use parking_lot::{Condvar, Mutex};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use toolgate_core::audit::{AuditCommit, AuditError, CommitTracker};
use toolgate_core::{
    Approval, AuditRecord, AuditSink, Decision, ErrorKind, GrantScope, LedgerEvent, Outcome,
};

/// Records in `pending` at which a caller wakes the writer.
pub const GROUP_TARGET: usize = 512;

/// How long the writer waits for a group to reach [`GROUP_TARGET`] before it writes what it
/// has: the longest a record waits before its commit starts, when nobody flushes.
pub const LINGER: Duration = Duration::from_millis(2);

const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(250),
    Duration::from_secs(1),
];

/// The queue between the callers and the writer, and what the writer has done.
struct Shared {
    queue: Mutex<Queue>,
    /// The writer waits here for work.
    work: Condvar,
    /// Callers wait here for room in `pending`.
    room: Condvar,
    /// Most records `pending` holds.
    capacity: usize,
    /// Records handed to the queue.
    sent: AtomicU64,
    /// Times `record` found the queue full and waited for room.
    waits: AtomicU64,
    state: Mutex<Done>,
    changed: Condvar,
    /// Settled with the last ticket of each group written.
    tracker: Arc<CommitTracker>,
}

struct Queue {
    /// Records waiting for the writer, in the order they were pushed.
    pending: Group,
    /// A caller wakes the writer when `pending` reaches this length (`usize::MAX` while the
    /// writer is busy and will look by itself).
    wake_at: usize,
    /// `flush` asked for the pending records to be written now.
    flush: bool,
    /// The sink is being dropped: write what is pending and stop.
    closed: bool,
    /// A durable record is pending: write now, without lingering.
    urgent: bool,
    /// Records pushed so far: the ticket of the last one.
    pushed: u64,
}

#[derive(Default)]
struct Done {
    /// Records committed.
    committed: u64,
    /// Records given up on.
    lost: u64,
    /// Groups committed.
    groups: u64,
    last_error: Option<String>,
    /// The writer thread has ended.
    exited: bool,
}

/// Counters of a [`SqliteAuditSink`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriterStats {
    /// Records taken by `record`.
    pub taken: u64,
    /// Records committed to the store.
    pub committed: u64,
    /// Records the writer gave up on after retries.
    pub lost: u64,
    /// Transactions (groups) committed.
    pub groups: u64,
    /// Times `record` waited because the queue was full.
    pub queue_full_waits: u64,
}

/// An [`AuditSink`] writing to the `audit` table of a [`Store`] from a background thread, with
/// group commit and a hash chain (see the module docs).
///
/// Dropping the sink commits what is queued and joins the thread.
pub struct SqliteAuditSink {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SqliteAuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteAuditSink")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl SqliteAuditSink {
    /// Starts a writer for `store`, on a connection of its own. The queue holds
    /// [`StoreOptions::audit_queue`](crate::StoreOptions::audit_queue) records.
    ///
    /// # Errors
    /// Opening the writer's connection (as [`Store::open`]); spawning the thread
    /// ([`StoreError::AuditWriter`]).
    pub fn new(store: &Store) -> Result<SqliteAuditSink> {
        let conn = store.reconnect()?;
        let capacity = store.options().audit_queue.max(1);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                pending: Group::default(),
                wake_at: 1,
                flush: false,
                closed: false,
                urgent: false,
                pushed: 0,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            capacity,
            sent: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            state: Mutex::new(Done::default()),
            changed: Condvar::new(),
            tracker: CommitTracker::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("toolgate-audit-sqlite".into())
            .spawn(move || {
                let guard = ExitGuard(s);
                writer_loop(conn, &guard.0);
            })
            .map_err(|e| StoreError::AuditWriter {
                lost: 0,
                last_error: format!("cannot start the writer thread: {e}"),
            })?;
        Ok(SqliteAuditSink {
            shared,
            thread: Some(thread),
        })
    }

    /// The writer's counters now.
    pub fn stats(&self) -> WriterStats {
        let p = &self.shared;
        let d = p.state.lock();
        WriterStats {
            taken: p.sent.load(Ordering::Acquire),
            committed: d.committed,
            lost: d.lost,
            groups: d.groups,
            queue_full_waits: p.waits.load(Ordering::Relaxed),
        }
    }

    /// Waits until every record taken so far is committed or given up on.
    ///
    /// # Errors
    /// [`StoreError::AuditWriter`] when records have been lost since the sink started (with
    /// the last error), or the writer thread is gone with records still queued.
    pub fn flush_checked(&self) -> Result<()> {
        let p = &self.shared;
        let target = p.sent.load(Ordering::Acquire);
        {
            let mut q = p.queue.lock();
            q.flush = true;
        }
        p.work.notify_one();
        let mut d = p.state.lock();
        while d.committed + d.lost < target && !d.exited {
            p.changed.wait(&mut d);
        }
        if d.lost > 0 || d.committed < target {
            return Err(StoreError::AuditWriter {
                lost: d.lost.max(target - d.committed.min(target)),
                last_error: d
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "the writer thread stopped".into()),
            });
        }
        Ok(())
    }
}

impl SqliteAuditSink {
    /// Puts `entry`, whose text is `text`, at the end of the queue; waits while it is full.
    /// Returns its ticket (its place in the order of records, from 1), or `None` when the
    /// writer is gone and the record was dropped. A `durable` entry wakes the writer now.
    fn enqueue(&self, mut entry: Entry, text: &[u8], durable: bool) -> Option<u64> {
        let p = &*self.shared;
        let mut q = p.queue.lock();
        if q.pending.entries.len() >= p.capacity && !q.closed {
            p.waits.fetch_add(1, Ordering::Relaxed);
            while q.pending.entries.len() >= p.capacity && !q.closed {
                // the writer is busy (it takes a full queue as soon as it looks) or waiting
                // for a group: either way it must look now
                q.wake_at = 0;
                p.work.notify_one();
                p.room.wait(&mut q);
            }
        }
        if q.closed {
            drop(q);
            tracing::error!("the audit writer is gone; a record was dropped");
            return None;
        }
        entry.start = q.pending.text.len();
        q.pending.text.extend_from_slice(text);
        q.pending.entries.push(entry);
        q.pushed += 1;
        let ticket = q.pushed;
        q.pending.last_ticket = ticket;
        if durable {
            q.urgent = true;
        }
        let wake = q.pending.entries.len() >= q.wake_at || (durable && q.wake_at != usize::MAX);
        if wake {
            // one wake-up per group: the writer sets `wake_at` again when it waits
            q.wake_at = usize::MAX;
        }
        drop(q);
        p.sent.fetch_add(1, Ordering::Release);
        if wake {
            p.work.notify_one();
        }
        Some(ticket)
    }

    /// Encodes `record` on this thread and queues it (see [`SqliteAuditSink::enqueue`]).
    fn push(&self, record: AuditRecord, durable: bool) -> Option<u64> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let scratch = &mut *scratch;
            scratch.clear();
            let entry = Entry::encode(record, scratch);
            self.enqueue(entry, scratch, durable)
        })
    }
}

thread_local! {
    /// Each caller thread's buffer for the record it is encoding.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Arguments whose text may exceed this many bytes are written by the writer, not copied by
/// the caller (a file's content given to `write_file`, say): the estimate counts each string
/// and key with its quotes and a separator, 24 bytes per other scalar and 2 per array or
/// object (at least the JSON's length unless strings need escapes), and stops once past the
/// limit.
const COPY_LIMIT: usize = 16 * 1024;

/// Whether `v`'s JSON text stays within `budget` bytes, by the estimate of [`COPY_LIMIT`].
fn within(v: &Value, budget: &mut usize) -> bool {
    match v {
        Value::String(s) => spend(budget, s.len() + 3),
        Value::Array(a) => spend(budget, 2) && a.iter().all(|x| within(x, budget)),
        Value::Object(o) => {
            spend(budget, 2)
                && o.iter()
                    .all(|(k, x)| spend(budget, k.len() + 3) && within(x, budget))
        }
        _ => spend(budget, 24),
    }
}

/// Takes `n` bytes from `budget`; false (and `budget` unchanged) when it has fewer.
fn spend(budget: &mut usize, n: usize) -> bool {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}

/// The records of a group: their entries and the text they point into.
#[derive(Default)]
struct Group {
    entries: Vec<Entry>,
    text: Vec<u8>,
    /// The ticket of the last entry.
    last_ticket: u64,
}

impl Group {
    /// Empties the group for reuse, keeping its buffers unless a large group grew them past
    /// what the queue usually holds.
    fn clear(&mut self) {
        self.entries.clear();
        self.text.clear();
        if self.text.capacity() > 4 * COPY_LIMIT * GROUP_TARGET / 8 {
            self.text = Vec::new();
        }
    }
}

/// One record in the queue: its numbers and enums, and where its text is in the group's
/// buffer, from `start`: session, profile, tool, version, call id, rule, truncation handle,
/// error reason, idempotency key and the arguments' redacted canonical JSON, each ending at
/// its `ends` offset
/// (relative to `start`); an optional field is absent when its bit of `present` is clear.
struct Entry {
    time_us: u64,
    duration_us: u64,
    result_bytes: u64,
    attempts: u32,
    grant: Option<i64>,
    decision: Option<Decision>,
    approval: Option<Approval>,
    scope: Option<GrantScope>,
    outcome: Outcome,
    error_kind: Option<ErrorKind>,
    ledger: Option<LedgerEvent>,
    principal: Option<toolgate_core::Principal>,
    start: usize,
    ends: [usize; TEXT_FIELDS],
    present: u16,
    /// Arguments past [`COPY_LIMIT`], for the writer to write (their text is then empty).
    large: Option<Value>,
}

const TEXT_FIELDS: usize = 10;
const VERSION: usize = 3;
const RULE: usize = 5;
const TRUNCATED: usize = 6;
const ERROR_REASON: usize = 7;
const IDEMPOTENCY_KEY: usize = 8;
const ARGUMENTS: usize = 9;

impl Entry {
    /// Encodes `r`, appending its text to `text` (empty on entry); `start` is set when the
    /// entry is queued.
    fn encode(r: AuditRecord, text: &mut Vec<u8>) -> Entry {
        let mut ends = [0; TEXT_FIELDS];
        let mut present = 0u16;
        let mut put = |i: usize, s: Option<&str>, text: &mut Vec<u8>| {
            if let Some(s) = s {
                text.extend_from_slice(s.as_bytes());
                present |= 1 << i;
            }
            ends[i] = text.len();
        };
        put(0, Some(&r.session), text);
        put(1, Some(&r.profile), text);
        put(2, Some(&r.tool), text);
        put(VERSION, r.version.as_deref(), text);
        put(4, Some(r.call_id.as_str()), text);
        put(RULE, r.rule.as_deref(), text);
        put(TRUNCATED, r.truncated.as_deref(), text);
        put(ERROR_REASON, r.error_reason.as_deref(), text);
        put(IDEMPOTENCY_KEY, r.idempotency_key.as_deref(), text);
        let large = if within(&r.arguments, &mut { COPY_LIMIT }) {
            write_value(text, &r.arguments);
            None
        } else {
            Some(r.arguments)
        };
        ends[ARGUMENTS] = text.len();
        Entry {
            time_us: saturate(r.time_us),
            duration_us: saturate(r.duration_us),
            result_bytes: saturate(r.result_bytes as u64),
            attempts: r.attempts,
            grant: r.grant,
            decision: r.decision,
            approval: r.approval,
            scope: r.scope,
            outcome: r.outcome,
            error_kind: r.error_kind,
            ledger: r.ledger,
            principal: r.principal,
            start: 0,
            ends,
            present,
            large,
        }
    }

    /// The byte range of text field `i` in the group's text.
    fn range(&self, i: usize) -> Range<usize> {
        let from = if i == 0 { 0 } else { self.ends[i - 1] };
        self.start + from..self.start + self.ends[i]
    }

    /// The record as a [`View`] over `text` (the group's text, UTF-8 as the fields were), and
    /// its arguments' text (empty for [`Entry::large`]).
    fn view<'a>(&'a self, text: &'a str) -> (View<'a>, &'a str) {
        let field = |i: usize| text.get(self.range(i)).unwrap_or_default();
        let optional = |i: usize| (self.present >> i & 1 == 1).then(|| field(i));
        (
            View {
                approval: self.approval,
                attempts: self.attempts,
                call_id: field(4),
                decision: self.decision,
                duration_us: self.duration_us,
                error_kind: self.error_kind,
                error_reason: optional(ERROR_REASON),
                grant: self.grant,
                idempotency_key: optional(IDEMPOTENCY_KEY),
                ledger: self.ledger,
                outcome: self.outcome,
                principal: self.principal.as_ref(),
                profile: field(1),
                result_bytes: self.result_bytes,
                rule: optional(RULE),
                scope: self.scope,
                session: field(0),
                time_us: self.time_us,
                tool: field(2),
                truncated: optional(TRUNCATED),
                version: optional(VERSION),
            },
            field(ARGUMENTS),
        )
    }
}

impl AuditSink for SqliteAuditSink {
    fn record(&self, record: AuditRecord) {
        self.push(record, false);
    }

    fn record_durable(&self, record: AuditRecord) -> AuditCommit {
        match self.push(record, true) {
            Some(ticket) => self.shared.tracker.wait(ticket),
            None => AuditCommit::ready(Err(AuditError::new("the audit writer stopped"))),
        }
    }

    fn flush(&self) {
        if let Err(e) = self.flush_checked() {
            tracing::error!(error = %e, "audit flush");
        }
    }
}

impl Drop for SqliteAuditSink {
    fn drop(&mut self) {
        self.shared.queue.lock().closed = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                tracing::error!("the audit writer thread panicked");
            }
        }
    }
}

/// Takes the next group into `group` (emptied on entry), waiting as the module docs say.
/// Returns false when the sink is closed and nothing is pending.
fn next_group(shared: &Shared, group: &mut Group) -> bool {
    let target = GROUP_TARGET.min(shared.capacity);
    let mut q = shared.queue.lock();
    loop {
        let n = q.pending.entries.len();
        if n >= target || (n > 0 && (q.flush || q.closed || q.urgent)) {
            break;
        }
        if n == 0 {
            if q.closed {
                return false;
            }
            // every record taken so far is committed: a flush has nothing to wait for
            q.flush = false;
            q.wake_at = 1;
            shared.work.wait(&mut q);
        } else {
            q.wake_at = target;
            if shared.work.wait_for(&mut q, LINGER).timed_out() {
                break;
            }
        }
    }
    q.wake_at = usize::MAX;
    q.flush = false;
    q.urgent = false;
    std::mem::swap(&mut q.pending, group);
    drop(q);
    shared.room.notify_all();
    true
}

fn writer_loop(mut conn: Connection, shared: &Shared) {
    // SQLite's default page cache (2 MiB): the writer appends, so the pages it touches are
    // the right edges of the table and of its one index (time, which grows with seq); a
    // larger cache would only keep every page it ever wrote, its memory growing with the log
    let mut group = Group::default();
    let mut scratch = Scratch::new();
    while next_group(shared, &mut group) {
        let n = group.entries.len() as u64;
        let mut outcome = write_group(&mut conn, &group, &mut scratch);
        for delay in RETRY_DELAYS {
            if outcome.is_ok() {
                break;
            }
            std::thread::sleep(delay);
            outcome = write_group(&mut conn, &group, &mut scratch);
        }
        let mut d = shared.state.lock();
        let lost = match outcome {
            Ok(()) => {
                d.committed += n;
                d.groups += 1;
                None
            }
            Err(e) => {
                tracing::error!(error = %e, records = n, "the audit writer lost a group of records");
                d.lost += n;
                d.last_error = Some(e.to_string());
                Some(AuditError::new(e.to_string()))
            }
        };
        drop(d);
        shared.changed.notify_all();
        shared.tracker.settle(group.last_ticket, lost.as_ref());
        group.clear();
    }
}

/// Marks the writer gone when its thread ends, by return or by panic: `flush` stops waiting
/// for it, and `record` drops records (with an error) instead of waiting for room forever.
struct ExitGuard(Arc<Shared>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let s = &self.0;
        s.state.lock().exited = true;
        s.changed.notify_all();
        s.queue.lock().closed = true;
        s.room.notify_all();
        s.tracker.close();
    }
}

/// The writer's reused buffers and statement texts.
struct Scratch {
    canonical: Vec<u8>,
    arguments: Vec<u8>,
    insert_one: String,
    insert_many: String,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            canonical: Vec::with_capacity(1024),
            arguments: Vec::with_capacity(512),
            insert_one: row::insert_sql(1),
            insert_many: row::insert_sql(ROWS_PER_INSERT),
        }
    }

    /// Writes `e`'s canonical JSON and its chain hash after `prev`, binds the row as row `i`
    /// of `stmt`, and returns the hash. `text` is the group's text.
    fn bind(
        &mut self,
        stmt: &mut rusqlite::Statement<'_>,
        i: usize,
        seq: u64,
        e: &Entry,
        text: &str,
        prev: &Hash,
    ) -> rusqlite::Result<Hash> {
        let redacted_key;
        let (mut view, sent) = e.view(text);
        // the key as the caller sent it stays in the ledger; the audit keeps it redacted
        if let Some(std::borrow::Cow::Owned(k)) = view
            .idempotency_key
            .map(toolgate_core::redact::idempotency_key)
        {
            redacted_key = k;
            view.idempotency_key = Some(&redacted_key);
        }
        self.arguments.clear();
        match &e.large {
            Some(large) => write_value_redacted(&mut self.arguments, large),
            // the caller's own canonical JSON of a `Value`: it parses
            None => match serde_json::from_str::<Value>(sent) {
                Ok(v) => write_value_redacted(&mut self.arguments, &v),
                Err(_) => self.arguments.extend_from_slice(b"null"),
            },
        }
        // written from a `Value`, whose strings are UTF-8: never the fallback
        let arguments = std::str::from_utf8(&self.arguments).unwrap_or("null");
        self.canonical.clear();
        canonical_json_with(&view, arguments.as_bytes(), &mut self.canonical);
        let hash = chain_hash(prev, &self.canonical);
        row::bind(stmt, i, seq, &view, arguments, prev, &hash)?;
        Ok(hash)
    }
}

/// Rows per multi-row `INSERT` ([`row::insert_sql`]); a group's last, shorter run of rows goes
/// in one-row statements.
const ROWS_PER_INSERT: usize = 32;

/// Writes `group` in one transaction, chained to the head of the table.
///
/// Every statement of a group comes from the connection's statement cache, `BEGIN
/// IMMEDIATE` and `COMMIT` included: parsed once per connection, not once per group. A
/// lone call's durable record is a group of its own, so what a group costs beyond its rows
/// is paid on that call's path (the writer's SQL parsing was about a fifth of its time per
/// call through the gateway, BENCHMARKS.md). The 32-row `INSERT` is taken from the cache only
/// for a group that fills it: looking it up hashes its text, and handing it back clears its
/// 800-odd parameters.
fn write_group(conn: &mut Connection, group: &Group, s: &mut Scratch) -> Result<()> {
    // the fields were copied from `str`s, each whole: the text is UTF-8 and every field's
    // range falls on character boundaries
    let text = std::str::from_utf8(&group.text).unwrap_or_default();
    conn.prepare_cached("BEGIN IMMEDIATE")?.raw_execute()?;
    let written = insert_group(conn, group, text, s)
        .and_then(|()| Ok(conn.prepare_cached("COMMIT")?.raw_execute()?));
    if written.is_err() && !conn.is_autocommit() {
        // as dropping a rusqlite `Transaction` does: the group is retried whole or lost whole
        if let Err(e) = conn.execute_batch("ROLLBACK") {
            tracing::warn!(error = %e, "rolling back a failed group of audit records");
        }
    }
    written.map(drop)
}

/// Inserts `group`'s rows (whose text is `text`) after the head of the table, inside the
/// transaction [`write_group`] began.
fn insert_group(conn: &Connection, group: &Group, text: &str, s: &mut Scratch) -> Result<()> {
    let (mut seq, mut prev) = head(conn)?;
    let mut chunks = group.entries.chunks_exact(ROWS_PER_INSERT);
    if chunks.len() > 0 {
        let mut many = conn.prepare_cached(&s.insert_many)?;
        for chunk in &mut chunks {
            for (i, e) in chunk.iter().enumerate() {
                seq += 1;
                prev = s.bind(&mut many, i, seq, e, text, &prev)?;
            }
            many.raw_execute()?;
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut one = conn.prepare_cached(&s.insert_one)?;
        for e in rest {
            seq += 1;
            prev = s.bind(&mut one, 0, seq, e, text, &prev)?;
            one.raw_execute()?;
        }
    }
    Ok(())
}

/// The last sequence number and hash (0 and [`GENESIS`] for an empty log). A head whose hash
/// was damaged (not 32 bytes) is chained from the SHA-256 of what is there, so the log keeps
/// growing; `verify` reports the damaged row.
pub(crate) fn head(conn: &Connection) -> Result<(u64, Hash)> {
    let row: Option<(i64, Vec<u8>)> = conn
        .prepare_cached("SELECT seq, CAST(hash AS BLOB) FROM audit ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    match row {
        None => Ok((0, GENESIS)),
        Some((seq, hash)) => {
            let seq = u64::try_from(seq).map_err(|_| StoreError::Corrupt {
                table: "audit",
                row: seq.to_string(),
                why: "seq is negative".into(),
            })?;
            let hash = Hash::try_from(hash.as_slice()).unwrap_or_else(|_| {
                use sha2::Digest;
                sha2::Sha256::digest(&hash).into()
            });
            Ok((seq, hash))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::canonical::write_value;
    use serde_json::json;
    use std::borrow::Cow;

    /// canonical.rs's full record, with counts past SQLite's range and text that is not ASCII.
    fn record(arguments: Value) -> AuditRecord {
        let mut r = crate::audit::canonical::tests::full();
        r.arguments = arguments;
        r.time_us = u64::MAX;
        r.profile = "défaut".into();
        r.rule = Some(Cow::Borrowed("rules[3]"));
        r.error_reason = Some("ünïcode \u{1F600}".into());
        r
    }

    /// What the writer hashes, from the queue: the canonical JSON of the record read back
    /// from its entry (one of several in the group's text).
    fn through_queue(records: &[AuditRecord]) -> Vec<(String, bool)> {
        let mut group = Group::default();
        let mut scratch = Vec::new();
        for r in records {
            scratch.clear();
            let mut e = Entry::encode(r.clone(), &mut scratch);
            e.start = group.text.len();
            group.text.extend_from_slice(&scratch);
            group.entries.push(e);
        }
        let text = std::str::from_utf8(&group.text).unwrap();
        group
            .entries
            .iter()
            .map(|e| {
                let (view, sent) = e.view(text);
                let mut redacted = Vec::new();
                match &e.large {
                    Some(v) => write_value_redacted(&mut redacted, v),
                    None => write_value_redacted(
                        &mut redacted,
                        &serde_json::from_str::<Value>(sent).unwrap(),
                    ),
                }
                let arguments = std::str::from_utf8(&redacted).unwrap();
                let mut out = Vec::new();
                canonical_json_with(&view, arguments.as_bytes(), &mut out);
                (String::from_utf8(out).unwrap(), e.large.is_some())
            })
            .collect()
    }

    /// An entry read back gives the record's canonical JSON byte for byte (arguments
    /// redacted), whether the caller copied the arguments or handed them over, with optional
    /// fields absent or present and text that is not ASCII.
    #[test]
    fn entries_read_back_as_the_records_they_encode() {
        let mut bare = record(json!({}));
        bare.version = None;
        bare.rule = None;
        bare.truncated = None;
        bare.error_reason = None;
        bare.decision = None;
        bare.approval = None;
        bare.grant = None;
        bare.scope = None;
        bare.error_kind = None;
        let mut keyed = record(json!({"to": "a@b"}));
        keyed.idempotency_key = Some("K-0001".into());
        keyed.ledger = Some(LedgerEvent::Executed);
        let records = [
            record(json!({"z": 1, "password": "x", "a": ["sk-abcdefghijklmnop1234", null]})),
            bare,
            keyed,
            record(json!({"content": "x".repeat(COPY_LIMIT), "token": "t"})),
            record(json!({"words": vec!["ab"; COPY_LIMIT / 4]})),
            record(json!({"path": "é"})),
        ];
        let got = through_queue(&records);
        for (r, (json, large)) in records.iter().zip(&got) {
            let mut arguments = Vec::new();
            write_value_redacted(&mut arguments, &r.arguments);
            let mut expect = Vec::new();
            canonical_json_with(&View::of(r), &arguments, &mut expect);
            assert_eq!(json, &String::from_utf8(expect).unwrap());
            let mut plain = Vec::new();
            write_value(&mut plain, &r.arguments);
            assert_eq!(*large, plain.len() > COPY_LIMIT, "{}", plain.len());
        }
        assert!(got[0].0.contains("\"time_us\":9223372036854775807"));
        assert!(
            got[2]
                .0
                .contains(r#""idempotency_key":"K-0001","ledger":"executed""#),
            "{}",
            got[2].0
        );
    }

    /// The size estimate is at least the arguments' JSON length when no string needs an
    /// escape (so a value within the limit is a copy of about that size), and not wildly more.
    #[test]
    fn the_copy_estimate_bounds_the_json() {
        for v in [
            json!(null),
            json!({"a": [1, 2.5, -3, true, null], "é": {"b": "c"}}),
            json!(vec!["x"; 100]),
            json!({"k": "v".repeat(1000), "n": 1e300, "list": [[], {}, [""]]}),
        ] {
            let mut plain = Vec::new();
            write_value(&mut plain, &v);
            assert!(!within(&v, &mut (plain.len() - 1)), "{v}");
            assert!(within(&v, &mut (plain.len() * 8 + 64)), "{v}");
        }
    }
}
