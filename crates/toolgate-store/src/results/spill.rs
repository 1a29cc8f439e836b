//! The spill queue: results past the cap are written to the `results` table by a background
//! thread, off the caller's path, as the audit writer writes records.
//!
//! A spill is queued with its handle and kept in memory until its row is committed, so
//! `get` serves it from memory meanwhile: a handle returned to a model reads the moment the
//! model asks, in this process. Other processes find it once committed; [`Spiller::flush`]
//! waits for that (`toolgate call` flushes before it prints the result, `toolgate serve` at
//! shutdown), and dropping the store drains the queue. The queue is bounded by bytes
//! ([`MAX_QUEUED_BYTES`]): past it `put` waits for the writer, so memory stays bounded and no
//! result is dropped. A spill whose write fails stays readable from memory for this process
//! (the oldest such dropped past [`MAX_QUEUED_BYTES`] of them), is logged, and makes the next
//! [`Spiller::flush`] fail.

use crate::error::Result;
use crate::store::{to_i64, Store};
use parking_lot::{Condvar, Mutex};
use rusqlite::Connection;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The most result text queued and not yet committed (64 MiB); `put` waits past it.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;
/// Prune expired results after every this many spills.
const PRUNE_EVERY: u64 = 64;

/// One result to write.
pub(crate) struct Spill {
    pub(crate) handle: Arc<str>,
    pub(crate) session: Arc<str>,
    pub(crate) text: Arc<String>,
    pub(crate) created_us: u64,
    pub(crate) expires_us: u64,
}

/// A spill held in memory until its row is committed (or for good, when its write failed).
struct Held {
    session: Arc<str>,
    text: Arc<String>,
}

#[derive(Default)]
struct State {
    /// Spills waiting for the writer.
    queue: Vec<Spill>,
    /// Every spill not committed: queued, being written, or failed.
    held: HashMap<Arc<str>, Held>,
    /// Bytes of text queued or being written.
    pending_bytes: usize,
    /// Spills queued so far, and of them written (committed or failed).
    queued: u64,
    written: u64,
    /// Spills whose write failed since the last flush, with the last error.
    failed: u64,
    last_error: Option<String>,
    /// Failed spills kept in memory, oldest first, and their bytes.
    failed_order: VecDeque<Arc<str>>,
    failed_bytes: usize,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    /// The writer waits here for work.
    work: Condvar,
    /// Callers wait here for room in the queue or for a flush.
    written: Condvar,
}

/// The queue and its writer thread (see the module docs).
pub(crate) struct Spiller {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Spiller {
    /// Starts the writer on its own connection to `store` (the shared one when a second
    /// cannot be opened).
    pub(crate) fn start(store: Store) -> Spiller {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            written: Condvar::new(),
        });
        let writer = shared.clone();
        let thread = std::thread::Builder::new()
            .name("toolgate-results".into())
            .spawn(move || write_loop(&writer, &store))
            .map_err(|e| tracing::error!(error = %e, "the result writer did not start; results are written by the caller"))
            .ok();
        Spiller { shared, thread }
    }

    /// Whether the writer runs (else the caller writes).
    pub(crate) fn running(&self) -> bool {
        self.thread.is_some()
    }

    /// Queues `spill`, waiting while [`MAX_QUEUED_BYTES`] are pending.
    pub(crate) fn put(&self, spill: Spill) {
        let len = spill.text.len();
        let mut st = self.shared.state.lock();
        while st.pending_bytes > 0 && st.pending_bytes + len > MAX_QUEUED_BYTES {
            self.shared.written.wait(&mut st);
        }
        st.pending_bytes += len;
        st.queued += 1;
        st.held.insert(
            spill.handle.clone(),
            Held {
                session: spill.session.clone(),
                text: spill.text.clone(),
            },
        );
        st.queue.push(spill);
        drop(st);
        self.shared.work.notify_one();
    }

    /// The text behind `handle` while it is held in memory: `Some(None)` when it is held for
    /// another session, `None` when it is not held (then it is in the table, or nowhere).
    pub(crate) fn get(&self, session: &str, handle: &str) -> Option<Option<Arc<str>>> {
        let st = self.shared.state.lock();
        st.held
            .get(handle)
            .map(|h| (&*h.session == session).then(|| Arc::from(h.text.as_str())))
    }

    /// Waits until every spill queued before the call is written.
    ///
    /// # Errors
    /// The last write error, when a spill failed to be written since the last flush (those
    /// spills stay readable from memory in this process).
    pub(crate) fn flush(&self) -> std::result::Result<(), (u64, String)> {
        let mut st = self.shared.state.lock();
        let target = st.queued;
        while st.written < target {
            self.shared.written.wait(&mut st);
        }
        let failed = std::mem::take(&mut st.failed);
        match st.last_error.take() {
            Some(e) if failed > 0 => Err((failed, e)),
            _ => Ok(()),
        }
    }
}

impl Drop for Spiller {
    /// Drains the queue: every spill queued is written before the store goes.
    fn drop(&mut self) {
        self.shared.state.lock().stop = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn write_loop(shared: &Shared, store: &Store) {
    // the writer's own connection, opened at the first spill: most runs never spill, and
    // opening one (reading the schema) is a sizeable part of a server's start
    let mut own: Option<Option<Connection>> = None;
    let mut spills: u64 = 0;
    loop {
        let batch = {
            let mut st = shared.state.lock();
            while st.queue.is_empty() && !st.stop {
                shared.work.wait(&mut st);
            }
            if st.queue.is_empty() {
                return;
            }
            std::mem::take(&mut st.queue)
        };
        let conn = own.get_or_insert_with(|| match store.reconnect() {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %e, "the result writer shares the store's connection");
                None
            }
        });
        let result = match conn {
            Some(conn) => insert(conn, &batch),
            None => store.with_conn(|conn| insert(conn, &batch)),
        };
        spills += batch.len() as u64;
        let now = batch.last().map_or(0, |s| s.created_us);
        if let Err(e) = &result {
            tracing::error!(error = %e, results = batch.len(), "spilled results were not written; they are kept in memory for this run only");
        }
        {
            let mut st = shared.state.lock();
            st.written += batch.len() as u64;
            for spill in &batch {
                st.pending_bytes -= spill.text.len();
            }
            match &result {
                Ok(()) => {
                    for spill in &batch {
                        st.held.remove(&spill.handle);
                    }
                }
                Err(e) => {
                    st.failed += batch.len() as u64;
                    st.last_error = Some(e.to_string());
                    for spill in &batch {
                        st.failed_order.push_back(spill.handle.clone());
                        st.failed_bytes += spill.text.len();
                    }
                    while st.failed_bytes > MAX_QUEUED_BYTES && st.failed_order.len() > 1 {
                        if let Some(old) = st.failed_order.pop_front() {
                            if let Some(h) = st.held.remove(&old) {
                                st.failed_bytes -= h.text.len();
                            }
                        }
                    }
                }
            }
        }
        shared.written.notify_all();
        if spills / PRUNE_EVERY != (spills - batch.len() as u64) / PRUNE_EVERY {
            if let Err(e) = store.prune_results(now) {
                tracing::warn!(error = %e, "pruning expired results");
            }
        }
    }
}

/// Writes `batch` in one transaction.
pub(crate) fn insert(conn: &mut Connection, batch: &[Spill]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO results (handle, session, created_us, expires_us, text) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for s in batch {
            stmt.execute(rusqlite::params![
                &*s.handle,
                &*s.session,
                to_i64(s.created_us),
                to_i64(s.expires_us),
                s.text.as_str()
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}
