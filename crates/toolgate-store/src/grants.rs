//! Approval grants: an approver's answer that outlives one call, in the `grants` table.
//!
//! A grant approves calls of the tools matching `tool_pattern` (and, when it has resource
//! patterns, touching only resources each matching one of them) with a scope:
//!
//! - [`GrantScope::Once`]: one call of `session`; [`Store::use_once_grant`] spends it
//!   atomically, so two concurrent calls cannot both use it;
//! - [`GrantScope::Session`]: every call of `session`;
//! - [`GrantScope::Always`]: every call of every session.
//!
//! A grant is active while it is not revoked, not expired (`expires_us` absent or in the
//! future) and, for `Once`, not used. The store keeps patterns as text, the resource patterns
//! one per line in the `resource_pattern` column (NULL for none: a grant of one pattern is
//! stored as that pattern, as before grants had several; [`Store::active_grants`]
//! returns the candidates of a session, and [`toolgate_core::grant::find_covering`] matches
//! their patterns against the call), and keeps each grant's patterns compiled in memory, by
//! grant id, once looked up ([`GrantPatternCache`]), so a call does not parse them again. The
//! types are toolgate-core's ([`toolgate_core::grant`]); `Store` is a
//! [`toolgate_core::GrantStore`], so a pipeline's grants live here with
//! `PipelineBuilder::grants(Arc::new(store))`.

use crate::error::{Result, StoreError};
use crate::store::{to_i64, Store};
use rusqlite::types::Value as SqlValue;
use rusqlite::{OptionalExtension, Row};
pub use toolgate_core::grant::{Grant, GrantFilter, GrantScope, NewGrant, MAX_GRANT_TEXT};
use toolgate_core::grant::{GrantError, GrantPatternCache, GrantStore};

const GRANT_COLUMNS: &str = "id, tool_pattern, resource_pattern, scope, session, created_us, \
     expires_us, revoked_us, used_us, granted_by, note, principal, principal_issuer";

fn decode(r: &Row<'_>) -> Result<Grant> {
    let id: i64 = r.get(0)?;
    let bad = |why: String| StoreError::Corrupt {
        table: "grants",
        row: id.to_string(),
        why,
    };
    let time = |i: usize| -> Result<Option<u64>> {
        let v: Option<i64> = r.get(i)?;
        v.map(|v| u64::try_from(v).map_err(|_| bad(format!("column {i} is negative"))))
            .transpose()
    };
    let scope: String = r.get(3)?;
    let resources: Option<String> = r.get(2)?;
    Ok(Grant {
        id,
        tool_pattern: r.get(1)?,
        resource_patterns: resources
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default(),
        scope: scope
            .parse::<GrantScope>()
            .map_err(|_| bad(format!("scope {scope:?}")))?,
        session: r.get(4)?,
        created_us: time(5)?.unwrap_or(0),
        expires_us: time(6)?,
        revoked_us: time(7)?,
        used_us: time(8)?,
        granted_by: r.get(9)?,
        note: r.get(10)?,
        principal: match (
            r.get::<_, Option<String>>(11)?,
            r.get::<_, Option<String>>(12)?,
        ) {
            (Some(subject), Some(issuer)) => Some(toolgate_core::Principal::new(issuer, subject)),
            (None, None) => None,
            _ => return Err(bad("a principal without its issuer".into())),
        },
    })
}

const ACTIVE: &str =
    "revoked_us IS NULL AND used_us IS NULL AND (expires_us IS NULL OR expires_us > ?)";

impl Store {
    /// Stores a grant and returns it with its id.
    ///
    /// # Errors
    /// [`StoreError::InvalidGrant`] for an empty or oversized pattern, a `once`/`session`
    /// grant without a session, an `always` grant with one, or an expiry not after creation;
    /// [`StoreError::Sqlite`].
    pub fn insert_grant(&self, g: &NewGrant) -> Result<Grant> {
        g.check().map_err(|e| match e {
            GrantError::Invalid(m) => StoreError::InvalidGrant(m),
            other => StoreError::InvalidGrant(other.to_string()),
        })?;
        let id = self.with_conn(|conn| {
            conn.execute(
                "INSERT INTO grants (tool_pattern, resource_pattern, scope, session, created_us, \
                 expires_us, granted_by, note, principal, principal_issuer) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                rusqlite::params![
                    g.tool_pattern,
                    (!g.resource_patterns.is_empty()).then(|| g.resource_patterns.join("\n")),
                    g.scope.as_str(),
                    g.session,
                    to_i64(g.created_us),
                    g.expires_us.map(to_i64),
                    g.granted_by,
                    g.note,
                    g.principal.as_ref().map(|p| &*p.subject),
                    g.principal.as_ref().map(|p| &*p.issuer)
                ],
            )?;
            Ok(conn.last_insert_rowid())
        })?;
        self.grant(id)?.ok_or_else(|| StoreError::Corrupt {
            table: "grants",
            row: id.to_string(),
            why: "the grant just stored cannot be read back".into(),
        })
    }

    /// The grant with this id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn grant(&self, id: i64) -> Result<Option<Grant>> {
        self.with_conn(|conn| {
            conn.query_row(
                &format!("SELECT {GRANT_COLUMNS} FROM grants WHERE id = ?1"),
                [id],
                |r| Ok(decode(r)),
            )
            .optional()?
            .transpose()
        })
    }

    /// Grants matching `filter`, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn list_grants(&self, filter: &GrantFilter) -> Result<Vec<Grant>> {
        let mut clauses: Vec<&str> = Vec::new();
        let mut params: Vec<SqlValue> = Vec::new();
        if let Some(now) = filter.active_at {
            clauses.push(ACTIVE);
            params.push(SqlValue::Integer(to_i64(now)));
        }
        if let Some(s) = &filter.session {
            clauses.push("(session = ? OR scope = 'always')");
            params.push(SqlValue::Text(s.clone()));
        }
        let filter = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        self.with_conn(|conn| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {GRANT_COLUMNS} FROM grants{filter} ORDER BY id"
            ))?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                out.push(decode(r)?);
            }
            Ok(out)
        })
    }

    /// The grants that hold for `session` at `now_us`: its `once` and `session` grants and
    /// every `always` grant. The caller matches their patterns against the call.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn active_grants(&self, session: &str, now_us: u64) -> Result<Vec<Grant>> {
        self.list_grants(&GrantFilter {
            active_at: Some(now_us),
            session: Some(session.to_owned()),
        })
    }

    /// Revokes a grant at `now_us`. `false` when there is no such grant or it was revoked
    /// already.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn revoke_grant(&self, id: i64, now_us: u64) -> Result<bool> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                "UPDATE grants SET revoked_us = ?2 WHERE id = ?1 AND revoked_us IS NULL",
                rusqlite::params![id, to_i64(now_us)],
            )? == 1)
        })
    }

    /// Ends the `session` and `once` grants of `session` that are still active at `now_us`
    /// (its session ended): each expires at `now_us`. Returns how many.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn end_session_grants(&self, session: &str, now_us: u64) -> Result<usize> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                &format!(
                    "UPDATE grants SET expires_us = ?1 WHERE session = ?2 AND scope <> 'always' \
                     AND {}",
                    ACTIVE.replace('?', "?1")
                ),
                rusqlite::params![to_i64(now_us), session],
            )?)
        })
    }

    /// Spends a `once` grant for one call at `now_us`: `true` for the one caller that spent
    /// it, `false` when it is not an active `once` grant (spent, revoked, expired, another
    /// scope, or no such grant).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn use_once_grant(&self, id: i64, now_us: u64) -> Result<bool> {
        self.with_conn(|conn| {
            Ok(conn.execute(
                &format!(
                    "UPDATE grants SET used_us = ?1 WHERE id = ?2 AND scope = 'once' AND {}",
                    ACTIVE.replace('?', "?1")
                ),
                rusqlite::params![to_i64(now_us), id],
            )? == 1)
        })
    }
}

fn store_error(e: StoreError) -> GrantError {
    match e {
        StoreError::InvalidGrant(m) => GrantError::Invalid(m),
        other => GrantError::Store(Box::new(other)),
    }
}

/// The grants table as the pipeline's grant store (each method is the `Store` method of the
/// same purpose).
impl GrantStore for Store {
    fn active(&self, session: &str, now_us: u64) -> std::result::Result<Vec<Grant>, GrantError> {
        self.active_grants(session, now_us).map_err(store_error)
    }

    fn insert(&self, grant: &NewGrant) -> std::result::Result<Grant, GrantError> {
        self.insert_grant(grant).map_err(store_error)
    }

    fn spend_once(&self, id: i64, now_us: u64) -> std::result::Result<bool, GrantError> {
        self.use_once_grant(id, now_us).map_err(store_error)
    }

    fn revoke(&self, id: i64, now_us: u64) -> std::result::Result<bool, GrantError> {
        self.revoke_grant(id, now_us).map_err(store_error)
    }

    fn list(&self, filter: &GrantFilter) -> std::result::Result<Vec<Grant>, GrantError> {
        self.list_grants(filter).map_err(store_error)
    }

    fn end_session(&self, session: &str, now_us: u64) -> std::result::Result<usize, GrantError> {
        self.end_session_grants(session, now_us)
            .map_err(store_error)
    }

    fn pattern_cache(&self) -> Option<&GrantPatternCache> {
        Some(&self.inner.grant_patterns)
    }
}
