//! Daily quotas: the calls of each principal per UTC day, in the `quota` table, so a restart
//! does not reset them. `Store` is a [`toolgate_core::rate::QuotaStore`]: a pipeline counts
//! here with `PipelineBuilder::quota(Arc::new(store), quota)`.
//!
//! One call is one `INSERT ... ON CONFLICT DO UPDATE ... WHERE calls < max RETURNING calls`:
//! counting and checking are one statement, so two processes sharing the store cannot both
//! take the last call. Rows of past days are left for `toolgate store` maintenance (a row is
//! a few dozen bytes per principal per day).

use crate::error::{Result, StoreError};
use crate::store::{to_i64, Store};
use rusqlite::OptionalExtension;
use toolgate_core::rate::{QuotaError, QuotaStore};
use toolgate_core::Principal;

impl Store {
    /// Counts one call of `principal` (`None`: the local caller, stored with empty subject and
    /// issuer) on `day` (days since the Unix epoch, UTC) unless `max` are counted already: the
    /// count after, or `None` when the quota was used up.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn take_quota(
        &self,
        principal: Option<&Principal>,
        day: u64,
        max: u64,
    ) -> Result<Option<u64>> {
        let (subject, issuer) = principal.map_or(("", ""), |p| (&*p.subject, &*p.issuer));
        self.with_conn(|conn| {
            let n: Option<i64> = conn
                .query_row(
                    "INSERT INTO quota (principal, issuer, day, calls) VALUES (?1, ?2, ?3, 1) \
                     ON CONFLICT (principal, issuer, day) DO UPDATE SET calls = calls + 1 \
                     WHERE calls < ?4 RETURNING calls",
                    rusqlite::params![subject, issuer, to_i64(day), to_i64(max)],
                    |r| r.get(0),
                )
                .optional()?;
            // a first call with max 0 still inserts: refuse it without counting
            Ok(n.and_then(|n| u64::try_from(n).ok()).filter(|n| *n <= max))
        })
    }

    /// The calls of `principal` counted on `day`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn quota_used(&self, principal: Option<&Principal>, day: u64) -> Result<u64> {
        let (subject, issuer) = principal.map_or(("", ""), |p| (&*p.subject, &*p.issuer));
        self.with_conn(|conn| {
            let n: Option<i64> = conn
                .query_row(
                    "SELECT calls FROM quota WHERE principal = ?1 AND issuer = ?2 AND day = ?3",
                    rusqlite::params![subject, issuer, to_i64(day)],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(n.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
        })
    }
}

impl QuotaStore for Store {
    fn take(
        &self,
        principal: Option<&Principal>,
        day: u64,
        max: u64,
    ) -> std::result::Result<Option<u64>, QuotaError> {
        self.take_quota(principal, day, max)
            .map_err(|e: StoreError| QuotaError(Box::new(e)))
    }
}
