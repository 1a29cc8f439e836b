//! Approval grants: an approver's answer that outlives one call, in the `grants` table.
//!
//! A grant approves calls of the tools matching `tool_pattern` (and, when set, touching a
//! resource matching `resource_pattern`) with a scope:
//!
//! - [`GrantScope::Once`]: one call of `session`; [`Store::use_once_grant`] spends it
//!   atomically, so two concurrent calls cannot both use it;
//! - [`GrantScope::Session`]: every call of `session`;
//! - [`GrantScope::Always`]: every call of every session.
//!
//! A grant is active while it is not revoked, not expired (`expires_us` absent or in the
//! future) and, for `Once`, not used. The store keeps patterns as text and does not interpret
//! them: the policy decides what matches ([`Store::active_grants`] returns the candidates of a
//! session, and the policy matches their patterns against the call).

use crate::error::{Result, StoreError};
use crate::store::{to_i64, Store};
use rusqlite::types::Value as SqlValue;
use rusqlite::{OptionalExtension, Row};
use serde::{Deserialize, Serialize};

/// How long a grant holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// One call of one session.
    Once,
    /// Every call of one session.
    Session,
    /// Every call of every session.
    Always,
}

impl GrantScope {
    /// The stored name: `once`, `session` or `always`.
    pub const fn as_str(self) -> &'static str {
        match self {
            GrantScope::Once => "once",
            GrantScope::Session => "session",
            GrantScope::Always => "always",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "once" => Some(GrantScope::Once),
            "session" => Some(GrantScope::Session),
            "always" => Some(GrantScope::Always),
            _ => None,
        }
    }
}

/// The longest pattern, note or approver name accepted, in bytes.
pub const MAX_GRANT_TEXT: usize = 4096;

/// A grant to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGrant {
    /// Tool names it covers (a pattern the policy interprets, such as `write_file` or `fs.*`).
    pub tool_pattern: String,
    /// Resources it covers (a path glob, host pattern or command prefix), or any resource.
    pub resource_pattern: Option<String>,
    /// How long it holds.
    pub scope: GrantScope,
    /// The session, required for `Once` and `Session`; for `Always`, `None` (every session).
    pub session: Option<String>,
    /// When it was granted, microseconds since the Unix epoch.
    pub created_us: u64,
    /// When it stops holding, microseconds since the Unix epoch (`None`: until revoked).
    pub expires_us: Option<u64>,
    /// Who granted it (an operator name, `terminal`, `mcp-client`).
    pub granted_by: Option<String>,
    /// Free text (the approver's words).
    pub note: Option<String>,
}

impl NewGrant {
    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(StoreError::InvalidGrant(m));
        if self.tool_pattern.trim().is_empty() {
            return bad("tool_pattern is empty".into());
        }
        for (name, v) in [
            ("tool_pattern", Some(&self.tool_pattern)),
            ("resource_pattern", self.resource_pattern.as_ref()),
            ("session", self.session.as_ref()),
            ("granted_by", self.granted_by.as_ref()),
            ("note", self.note.as_ref()),
        ] {
            if let Some(v) = v {
                if v.len() > MAX_GRANT_TEXT {
                    return bad(format!(
                        "{name} is {} bytes, more than {MAX_GRANT_TEXT}",
                        v.len()
                    ));
                }
                if v.contains('\0') {
                    return bad(format!("{name} contains NUL"));
                }
            }
        }
        if self
            .resource_pattern
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            return bad("resource_pattern is empty (leave it out to cover any resource)".into());
        }
        match (self.scope, &self.session) {
            (GrantScope::Once | GrantScope::Session, None) => {
                return bad(format!("a {} grant needs a session", self.scope.as_str()))
            }
            (_, Some(s)) if s.is_empty() => return bad("session is empty".into()),
            (GrantScope::Always, Some(_)) => {
                return bad("an always grant holds for every session; leave the session out".into())
            }
            _ => {}
        }
        if let Some(e) = self.expires_us {
            if e <= self.created_us {
                return bad("expires_us is not after created_us".into());
            }
        }
        Ok(())
    }
}

/// A stored grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// Its id (for revoking).
    pub id: i64,
    /// Tool names it covers.
    pub tool_pattern: String,
    /// Resources it covers (`None`: any).
    pub resource_pattern: Option<String>,
    /// How long it holds.
    pub scope: GrantScope,
    /// Its session (`None` for `always`).
    pub session: Option<String>,
    /// When it was granted (µs since the epoch).
    pub created_us: u64,
    /// When it expires (µs since the epoch), if ever.
    pub expires_us: Option<u64>,
    /// When it was revoked (µs since the epoch).
    pub revoked_us: Option<u64>,
    /// When a `once` grant was spent (µs since the epoch).
    pub used_us: Option<u64>,
    /// Who granted it.
    pub granted_by: Option<String>,
    /// Free text.
    pub note: Option<String>,
}

impl Grant {
    /// Whether it holds at `now_us`: not revoked, not expired, not spent.
    pub fn is_active(&self, now_us: u64) -> bool {
        self.revoked_us.is_none()
            && self.used_us.is_none()
            && self.expires_us.is_none_or(|e| e > now_us)
    }
}

/// Which grants [`Store::list_grants`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantFilter {
    /// Only grants that hold at this time (µs since the epoch); `None` lists revoked, expired
    /// and spent ones too.
    pub active_at: Option<u64>,
    /// Only grants of this session (and `always` grants, which hold for every session).
    pub session: Option<String>,
}

const GRANT_COLUMNS: &str = "id, tool_pattern, resource_pattern, scope, session, created_us, \
     expires_us, revoked_us, used_us, granted_by, note";

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
    Ok(Grant {
        id,
        tool_pattern: r.get(1)?,
        resource_pattern: r.get(2)?,
        scope: GrantScope::parse(&scope).ok_or_else(|| bad(format!("scope {scope:?}")))?,
        session: r.get(4)?,
        created_us: time(5)?.unwrap_or(0),
        expires_us: time(6)?,
        revoked_us: time(7)?,
        used_us: time(8)?,
        granted_by: r.get(9)?,
        note: r.get(10)?,
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
        g.check()?;
        let id = self.with_conn(|conn| {
            conn.execute(
                "INSERT INTO grants (tool_pattern, resource_pattern, scope, session, created_us, \
                 expires_us, granted_by, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    g.tool_pattern,
                    g.resource_pattern,
                    g.scope.as_str(),
                    g.session,
                    to_i64(g.created_us),
                    g.expires_us.map(to_i64),
                    g.granted_by,
                    g.note
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
