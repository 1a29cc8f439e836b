//! [`SqliteAuditSink`]: the audit log's writer, a background thread with group commit.
//!
//! Callers and the writer share a bounded queue of three vectors that change hands by swapping
//! under one lock: `pending` (callers push records), the writer's group (being written) and
//! `written` (records already committed, freed by callers). `record` pushes the record, pops
//! one written record, and frees it after unlocking: memory is freed by the thread that
//! allocated it, while it is still warm in that core's cache, and the writer never frees a
//! caller's allocation (freed by the writer, it would go back to the caller's malloc arena
//! across threads, which costs the caller more than the whole enqueue). The vectors are reused,
//! so the queue's memory is the size of the groups in flight, not of its capacity.
//!
//! The writer takes all of `pending` at once and writes the whole group in one
//! `BEGIN IMMEDIATE` transaction: read the chain's head, then per record the arguments'
//! canonical JSON with secrets redacted (one pass), the record's canonical JSON,
//! `hash = sha256(prev || json)`, and one multi-row `INSERT` per 32 records; one commit for
//! the group. After a commit it waits for the next group to fill up to [`GROUP_TARGET`]
//! records or for [`LINGER`], whichever is first: a caller wakes it only when `pending`
//! reaches that size (one wake-up per group, not per record), and a trickle of records is
//! still committed within [`LINGER`]. `flush` wakes it at once and waits until every record
//! taken before it is committed (or given up on). Records are written in the order callers
//! pushed them, and none is dropped: when `pending` holds the queue's capacity, `record`
//! waits for the writer to take it.
//!
//! A failed group is retried three times (50 ms, 250 ms, 1 s apart: a lock held too long by
//! another process, a full disk that clears); after that its records are counted as lost, the
//! error is kept, and [`SqliteAuditSink::flush_checked`] reports it.

use super::canonical::{canonical_json_with, chain_hash, write_value_redacted, Hash, GENESIS};
use super::row;
use crate::error::{Result, StoreError};
use crate::store::Store;
use parking_lot::{Condvar, Mutex};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use toolgate_core::{AuditRecord, AuditSink};

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
}

struct Queue {
    /// Records waiting for the writer, in the order they were pushed.
    pending: Vec<AuditRecord>,
    /// Committed records, for callers to free.
    written: Vec<AuditRecord>,
    /// A caller wakes the writer when `pending` reaches this length (`usize::MAX` while the
    /// writer is busy and will look by itself).
    wake_at: usize,
    /// `flush` asked for the pending records to be written now.
    flush: bool,
    /// The sink is being dropped: write what is pending and stop.
    closed: bool,
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
                pending: Vec::new(),
                written: Vec::new(),
                wake_at: 1,
                flush: false,
                closed: false,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            capacity,
            sent: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            state: Mutex::new(Done::default()),
            changed: Condvar::new(),
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

impl AuditSink for SqliteAuditSink {
    fn record(&self, record: AuditRecord) {
        let p = &*self.shared;
        let mut q = p.queue.lock();
        if q.pending.len() >= p.capacity && !q.closed {
            p.waits.fetch_add(1, Ordering::Relaxed);
            while q.pending.len() >= p.capacity && !q.closed {
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
            return;
        }
        q.pending.push(record);
        let wake = q.pending.len() >= q.wake_at;
        if wake {
            // one wake-up per group: the writer sets `wake_at` again when it waits
            q.wake_at = usize::MAX;
        }
        // one written record freed per record taken, here, after unlocking (see the module docs)
        let freed = q.written.pop();
        drop(q);
        p.sent.fetch_add(1, Ordering::Release);
        if wake {
            p.work.notify_one();
        }
        drop(freed);
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

/// Takes the next group into `group` (an empty vector on entry), waiting as the module docs
/// say. Returns false when the sink is closed and nothing is pending.
fn next_group(shared: &Shared, group: &mut Vec<AuditRecord>) -> bool {
    let target = GROUP_TARGET.min(shared.capacity);
    let mut q = shared.queue.lock();
    loop {
        let n = q.pending.len();
        if n >= target || (n > 0 && (q.flush || q.closed)) {
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
    std::mem::swap(&mut q.pending, group);
    drop(q);
    shared.room.notify_all();
    true
}

fn writer_loop(mut conn: Connection, shared: &Shared) {
    // 64 MiB of page cache (default 2 MiB): the index pages a long log touches stay in memory
    if let Err(e) = conn.pragma_update(None, "cache_size", -65_536) {
        tracing::warn!(error = %e, "setting the audit writer's cache size");
    }
    let mut group: Vec<AuditRecord> = Vec::new();
    let mut scratch = Scratch::new();
    while next_group(shared, &mut group) {
        for r in &mut group {
            row::normalize(r);
        }
        let n = group.len() as u64;
        let mut outcome = write_group(&mut conn, &group, &mut scratch);
        for delay in RETRY_DELAYS {
            if outcome.is_ok() {
                break;
            }
            std::thread::sleep(delay);
            outcome = write_group(&mut conn, &group, &mut scratch);
        }
        let mut d = shared.state.lock();
        match outcome {
            Ok(()) => {
                d.committed += n;
                d.groups += 1;
            }
            Err(e) => {
                tracing::error!(error = %e, records = n, "the audit writer lost a group of records");
                d.lost += n;
                d.last_error = Some(e.to_string());
            }
        }
        drop(d);
        shared.changed.notify_all();
        give_back(shared, &mut group);
    }
}

/// Hands `group`'s written records to the callers to free ([`Queue::written`]), leaving
/// `group` an empty vector to take the next group into. Under the lock it only swaps vectors
/// and moves the shorter one's records: what the callers have not freed yet is usually a few.
fn give_back(shared: &Shared, group: &mut Vec<AuditRecord>) {
    let mut q = shared.queue.lock();
    if q.written.len() + group.len() > shared.capacity {
        // nobody is calling: free them here rather than keep more than a queue's worth
        drop(q);
        group.clear();
        return;
    }
    if q.written.len() < group.len() {
        std::mem::swap(&mut q.written, group);
    }
    q.written.append(group);
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

    /// Redacts and writes `r`'s arguments, its canonical JSON and its chain hash after `prev`,
    /// binds the row as row `i` of `stmt`, and returns the hash.
    fn bind(
        &mut self,
        stmt: &mut rusqlite::Statement<'_>,
        i: usize,
        seq: u64,
        r: &AuditRecord,
        prev: &Hash,
    ) -> rusqlite::Result<Hash> {
        self.arguments.clear();
        write_value_redacted(&mut self.arguments, &r.arguments);
        self.canonical.clear();
        canonical_json_with(r, &self.arguments, &mut self.canonical);
        let hash = chain_hash(prev, &self.canonical);
        // written from a `Value`, whose strings are UTF-8: never the fallback
        let arguments = std::str::from_utf8(&self.arguments).unwrap_or("null");
        row::bind(stmt, i, seq, r, arguments, prev, &hash)?;
        Ok(hash)
    }
}

/// Rows per multi-row `INSERT` ([`row::insert_sql`]); a group's last, shorter run of rows goes
/// in one-row statements.
const ROWS_PER_INSERT: usize = 32;

/// Writes `group` (normalized) in one transaction, chained to the head of the table.
fn write_group(conn: &mut Connection, group: &[AuditRecord], s: &mut Scratch) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (mut seq, mut prev) = head(&tx)?;
    {
        let mut many = tx.prepare_cached(&s.insert_many)?;
        let mut one = tx.prepare_cached(&s.insert_one)?;
        let mut chunks = group.chunks_exact(ROWS_PER_INSERT);
        for chunk in &mut chunks {
            for (i, r) in chunk.iter().enumerate() {
                seq += 1;
                prev = s.bind(&mut many, i, seq, r, &prev)?;
            }
            many.raw_execute()?;
        }
        for r in chunks.remainder() {
            seq += 1;
            prev = s.bind(&mut one, 0, seq, r, &prev)?;
            one.raw_execute()?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// The last sequence number and hash (0 and [`GENESIS`] for an empty log). A head whose hash
/// was damaged (not 32 bytes) is chained from the SHA-256 of what is there, so the log keeps
/// growing; `verify` reports the damaged row.
pub(crate) fn head(conn: &Connection) -> Result<(u64, Hash)> {
    let row: Option<(i64, Vec<u8>)> = conn
        .query_row(
            "SELECT seq, CAST(hash AS BLOB) FROM audit ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
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
