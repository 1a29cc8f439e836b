//! Spilled results: the full text behind a truncation handle, in the `results` table.
//!
//! [`SqliteResultStore`] implements [`toolgate_core::ResultStore`]: `put` gives the text a new
//! unguessable handle (`res_` and 128 random bits) bound to its session and queues it for a
//! background writer (module `spill`), so the caller does not wait on SQLite; until its row is
//! committed the text is served from memory, so the handle reads at once in this process.
//! [`ResultStore::flush`] waits for the rows to be committed, so a later process (another
//! `toolgate call read_result` of the same session) finds them: `toolgate call` flushes before
//! it prints its result, `toolgate serve` when it stops, and dropping the store drains the
//! queue. `get` returns a text only to the same session and only before it expires. Results
//! expire [`crate::StoreOptions::result_retention`] after they were stored; expired rows are
//! deleted by [`Store::prune_results`], which the writer also runs every 64 results.

mod spill;

pub use spill::MAX_QUEUED_BYTES;

use crate::error::Result;
use crate::store::{now_us, to_i64, Store};
use rusqlite::OptionalExtension;
use spill::{Spill, Spiller};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{ResultStore, ToolError};

/// A [`ResultStore`] over a [`Store`] (see the module docs).
pub struct SqliteResultStore {
    store: Store,
    retention: Duration,
    puts: AtomicU32,
    spiller: Spiller,
}

impl std::fmt::Debug for SqliteResultStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteResultStore")
            .field("store", &self.store)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl SqliteResultStore {
    /// Results in `store`, kept for the store's `result_retention`; starts the writer thread.
    pub fn new(store: Store) -> Self {
        let retention = store.options().result_retention;
        Self::with_retention(store, retention)
    }

    /// Results in `store`, kept for `retention`; starts the writer thread.
    pub fn with_retention(store: Store, retention: Duration) -> Self {
        SqliteResultStore {
            spiller: Spiller::start(store.clone()),
            store,
            retention,
            puts: AtomicU32::new(0),
        }
    }

    fn expires(&self, now_us: u64) -> u64 {
        now_us.saturating_add(u64::try_from(self.retention.as_micros()).unwrap_or(u64::MAX))
    }

    /// Stores `text` for `session` at time `now_us` (microseconds since the Unix epoch),
    /// committed when it returns (the caller writes, not the queue), and returns its handle.
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn put_at(&self, session: &str, text: &str, now_us: u64) -> Result<String> {
        let handle = toolgate_core::results::new_handle();
        let expires = self.expires(now_us);
        self.store.with_conn(|conn| {
            conn.prepare_cached(
                "INSERT INTO results (handle, session, created_us, expires_us, text) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(rusqlite::params![
                handle,
                session,
                to_i64(now_us),
                to_i64(expires),
                text
            ])?;
            Ok(())
        })?;
        if self.puts.fetch_add(1, Ordering::Relaxed) % 64 == 63 {
            if let Err(e) = self.store.prune_results(now_us) {
                tracing::warn!(error = %e, "pruning expired results");
            }
        }
        Ok(handle)
    }

    /// The text behind `handle` if it belongs to `session` and has not expired at `now_us`,
    /// read from the table (a spill still queued is not there yet: [`ResultStore::get`]
    /// serves it from memory).
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn get_at(&self, session: &str, handle: &str, now_us: u64) -> Result<Option<String>> {
        self.store.with_conn(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT text FROM results WHERE handle = ?1 AND session = ?2 AND expires_us > ?3",
                )?
                .query_row(rusqlite::params![handle, session, to_i64(now_us)], |r| {
                    r.get(0)
                })
                .optional()?)
        })
    }
}

fn unavailable(e: crate::StoreError) -> ToolError {
    tracing::error!(error = %e, "the result store failed");
    ToolError::internal("the store for truncated results is unavailable; try the call again later")
}

impl ResultStore for SqliteResultStore {
    /// Queues `text` for the writer and returns its handle at once (the caller writes it
    /// itself when the writer thread could not start).
    fn put(&self, session: &str, text: String) -> std::result::Result<String, ToolError> {
        let now = now_us();
        if !self.spiller.running() {
            return self.put_at(session, &text, now).map_err(unavailable);
        }
        let handle = toolgate_core::results::new_handle();
        self.spiller.put(Spill {
            handle: handle.as_str().into(),
            session: session.into(),
            text: Arc::new(text),
            created_us: now,
            expires_us: self.expires(now),
        });
        Ok(handle)
    }

    fn get(&self, session: &str, handle: &str) -> std::result::Result<Option<Arc<str>>, ToolError> {
        if let Some(held) = self.spiller.get(session, handle) {
            return Ok(held);
        }
        self.get_at(session, handle, now_us())
            .map(|t| t.map(Arc::from))
            .map_err(unavailable)
    }

    /// Waits until every result queued so far is committed.
    fn flush(&self) -> std::result::Result<(), ToolError> {
        self.spiller.flush().map_err(|(failed, error)| {
            tracing::error!(%error, failed, "spilled results were not written");
            ToolError::internal(format!(
                "{failed} truncated results could not be written to the store ({error}); their \
                 handles read only in this process"
            ))
        })
    }
}

impl Store {
    /// Deletes results that expired at or before `now_us`; returns how many.
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn prune_results(&self, now_us: u64) -> Result<usize> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                "DELETE FROM results WHERE expires_us <= ?1",
                [to_i64(now_us)],
            )?)
        })
    }

    /// How many results are stored (expired ones not yet pruned included; results still
    /// queued by a [`SqliteResultStore`] are not counted until committed).
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn result_count(&self) -> Result<u64> {
        self.with_conn(|conn| {
            let n: i64 = conn.query_row("SELECT count(*) FROM results", [], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }
}
