//! Spilled results: the full text behind a truncation handle, in the `results` table.
//!
//! [`SqliteResultStore`] implements [`toolgate_core::ResultStore`]: `put` stores the text for a
//! session under a new unguessable handle (`res_` and 128 random bits) and returns when it is
//! committed, so a later process (another `toolgate call read_result` of the same session) finds
//! it; `get` returns it only to the same session and only before it expires. Results expire
//! [`crate::StoreOptions::result_retention`] after they were stored; expired rows are deleted by
//! [`Store::prune_results`], which `put` also runs every 64 results.

use crate::error::Result;
use crate::store::{now_us, to_i64, Store};
use rusqlite::OptionalExtension;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{ResultStore, ToolError};

/// A [`ResultStore`] over a [`Store`] (see the module docs).
#[derive(Debug)]
pub struct SqliteResultStore {
    store: Store,
    retention: Duration,
    puts: AtomicU32,
}

impl SqliteResultStore {
    /// Results in `store`, kept for the store's `result_retention`.
    pub fn new(store: Store) -> Self {
        let retention = store.options().result_retention;
        Self::with_retention(store, retention)
    }

    /// Results in `store`, kept for `retention`.
    pub fn with_retention(store: Store, retention: Duration) -> Self {
        SqliteResultStore {
            store,
            retention,
            puts: AtomicU32::new(0),
        }
    }

    /// Stores `text` for `session` at time `now_us` (microseconds since the Unix epoch) and
    /// returns its handle.
    ///
    /// # Errors
    /// [`crate::StoreError::Sqlite`].
    pub fn put_at(&self, session: &str, text: &str, now_us: u64) -> Result<String> {
        let handle = toolgate_core::results::new_handle();
        let expires =
            now_us.saturating_add(u64::try_from(self.retention.as_micros()).unwrap_or(u64::MAX));
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

    /// The text behind `handle` if it belongs to `session` and has not expired at `now_us`.
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
    fn put(&self, session: &str, text: String) -> Result<String, ToolError> {
        self.put_at(session, &text, now_us()).map_err(unavailable)
    }

    fn get(&self, session: &str, handle: &str) -> Result<Option<Arc<str>>, ToolError> {
        self.get_at(session, handle, now_us())
            .map(|t| t.map(Arc::from))
            .map_err(unavailable)
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

    /// How many results are stored (expired ones not yet pruned included).
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
