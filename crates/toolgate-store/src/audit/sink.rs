//! [`SqliteAuditSink`]: the audit log's writer, a background thread with group commit.
//!
//! `record` moves the record into a bounded channel and returns; it never touches the disk.
//! The writer thread blocks for the first queued record, takes everything else queued behind
//! it, and writes the whole group in one `BEGIN IMMEDIATE` transaction: read the chain's head,
//! then per record the arguments' canonical JSON with secrets redacted (one pass), the record's
//! canonical JSON, `hash = sha256(prev || json)`, insert, and one commit for the group. `flush` waits until every record taken before it is committed (or
//! given up on).
//!
//! Written records go back to the callers to be freed: the writer sends them in chunks of 64
//! over a return channel, and each `record` frees one waiting chunk. Memory is then freed by
//! the thread that allocated it; freed by the writer, it would go back to the caller's malloc
//! arena across threads, which costs the caller more than the whole enqueue (measured in
//! BENCHMARKS.md). When the callers stop calling, at most [`RETURN_CHUNKS`] chunks wait.
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
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use toolgate_core::{AuditRecord, AuditSink};

/// Records per chunk on the return channel.
const RETURN_CHUNK: usize = 64;
/// Chunks the return channel holds; past that the writer frees records itself.
pub const RETURN_CHUNKS: usize = 1024;

const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(250),
    Duration::from_secs(1),
];

/// What the writer has done, shared with the sink.
#[derive(Default)]
struct Progress {
    /// Records handed to the channel.
    sent: AtomicU64,
    /// Times `record` found the queue full and waited for room.
    waits: AtomicU64,
    state: Mutex<Done>,
    changed: Condvar,
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
    tx: Option<SyncSender<AuditRecord>>,
    /// Written records, to be freed on a caller's thread.
    returned: Mutex<Receiver<Vec<AuditRecord>>>,
    thread: Option<JoinHandle<()>>,
    progress: Arc<Progress>,
}

impl std::fmt::Debug for SqliteAuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteAuditSink")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl SqliteAuditSink {
    /// Starts a writer for `store`, on a connection of its own.
    ///
    /// # Errors
    /// Opening the writer's connection (as [`Store::open`]); spawning the thread
    /// ([`StoreError::AuditWriter`]).
    pub fn new(store: &Store) -> Result<SqliteAuditSink> {
        let conn = store.reconnect()?;
        let (tx, rx) = mpsc::sync_channel(store.options().audit_queue.max(1));
        let (back_tx, back_rx) = mpsc::sync_channel(RETURN_CHUNKS);
        let progress = Arc::new(Progress::default());
        let p = progress.clone();
        let thread = std::thread::Builder::new()
            .name("toolgate-audit-sqlite".into())
            .spawn(move || {
                writer_loop(conn, rx, back_tx, &p);
                p.state.lock().exited = true;
                p.changed.notify_all();
            })
            .map_err(|e| StoreError::AuditWriter {
                lost: 0,
                last_error: format!("cannot start the writer thread: {e}"),
            })?;
        Ok(SqliteAuditSink {
            tx: Some(tx),
            returned: Mutex::new(back_rx),
            thread: Some(thread),
            progress,
        })
    }

    /// The writer's counters now.
    pub fn stats(&self) -> WriterStats {
        let p = &self.progress;
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
        let target = self.progress.sent.load(Ordering::Acquire);
        let mut d = self.progress.state.lock();
        while d.committed + d.lost < target && !d.exited {
            self.progress.changed.wait(&mut d);
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
        let Some(tx) = &self.tx else { return };
        let sent = match tx.try_send(record) {
            Ok(()) => true,
            Err(TrySendError::Full(r)) => {
                self.progress.waits.fetch_add(1, Ordering::Relaxed);
                tx.send(r).is_ok()
            }
            Err(TrySendError::Disconnected(_)) => false,
        };
        if sent {
            self.progress.sent.fetch_add(1, Ordering::Release);
        } else {
            tracing::error!("the audit writer is gone; a record was dropped");
        }
        // free one chunk of written records here, on the caller's thread (see the module docs)
        if let Some(back) = self.returned.try_lock() {
            if let Ok(chunk) = back.try_recv() {
                drop(back);
                drop(chunk);
            }
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
        self.tx.take();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                tracing::error!("the audit writer thread panicked");
            }
        }
    }
}

fn writer_loop(
    mut conn: Connection,
    rx: Receiver<AuditRecord>,
    back: SyncSender<Vec<AuditRecord>>,
    progress: &Progress,
) {
    // 64 MiB of page cache (default 2 MiB): the index pages a long log touches stay in memory
    if let Err(e) = conn.pragma_update(None, "cache_size", -65_536) {
        tracing::warn!(error = %e, "setting the audit writer's cache size");
    }
    let mut group: Vec<AuditRecord> = Vec::new();
    let mut scratch = Scratch::default();
    while let Ok(first) = rx.recv() {
        group.push(first);
        while let Ok(r) = rx.try_recv() {
            group.push(r);
        }
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
        let mut d = progress.state.lock();
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
        progress.changed.notify_all();
        give_back(&back, &mut group);
    }
}

/// Sends `group`'s records back to the callers in chunks; what does not fit is freed here.
fn give_back(back: &SyncSender<Vec<AuditRecord>>, group: &mut Vec<AuditRecord>) {
    while !group.is_empty() {
        let at = group.len().saturating_sub(RETURN_CHUNK);
        let chunk = group.split_off(at);
        if back.try_send(chunk).is_err() {
            group.clear();
        }
    }
}

#[derive(Default)]
struct Scratch {
    canonical: Vec<u8>,
    arguments: Vec<u8>,
}

/// Writes `group` (normalized) in one transaction, chained to the head of the table.
fn write_group(conn: &mut Connection, group: &[AuditRecord], s: &mut Scratch) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (mut seq, mut prev) = head(&tx)?;
    {
        let mut stmt = tx.prepare_cached(row::INSERT)?;
        for r in group {
            seq += 1;
            s.arguments.clear();
            write_value_redacted(&mut s.arguments, &r.arguments);
            s.canonical.clear();
            canonical_json_with(r, &s.arguments, &mut s.canonical);
            let hash = chain_hash(&prev, &s.canonical);
            let arguments = std::str::from_utf8(&s.arguments).unwrap_or("null");
            row::insert(&mut stmt, seq, r, arguments, &prev, &hash)?;
            prev = hash;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn records(n: usize) -> Vec<AuditRecord> {
        (0..n)
            .map(|i| AuditRecord {
                time_us: i as u64,
                session: "s".into(),
                profile: "p".into(),
                tool: "t".into(),
                version: None,
                call_id: format!("c{i}").into(),
                decision: None,
                rule: None,
                approval: None,
                grant: None,
                scope: None,
                arguments: serde_json::json!({}),
                result_bytes: 0,
                truncated: None,
                outcome: toolgate_core::Outcome::Ok,
                error_kind: None,
                error_reason: None,
                attempts: 1,
                duration_us: 1,
            })
            .collect()
    }

    #[test]
    fn written_records_go_back_in_chunks_and_overflow_is_freed_here() {
        let (tx, rx) = mpsc::sync_channel(3);
        let mut group = records(150);
        give_back(&tx, &mut group);
        assert!(group.is_empty());
        let sizes: Vec<usize> = rx.try_iter().map(|c| c.len()).collect();
        assert_eq!(sizes, vec![64, 64, 22]);
        // a full channel: the writer frees the rest itself and does not block
        let mut group = records(64 * 5);
        give_back(&tx, &mut group);
        assert!(group.is_empty());
        assert_eq!(rx.try_iter().count(), 3);
    }
}
