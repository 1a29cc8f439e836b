//! Approval grants: an approver's answer that outlives one call.
//!
//! When the policy says [`crate::Decision::Ask`], the authorize stage first looks for an active
//! grant covering the call ([`find_covering`]); one found approves the call without asking, and
//! the audit record names it ([`crate::AuditRecord::grant`]). Otherwise the approver is asked;
//! an answer with a scope ([`crate::ApprovalAnswer::ApprovedFor`]) stores a new grant
//! ([`GrantStore::insert`]). A grant never overrides a deny: it is consulted only on `ask`.
//!
//! A grant covers calls of the tools matching its `tool_pattern` (and, when it has resource
//! patterns, touching only resources each matching one of its `resource_patterns`) with a
//! scope:
//!
//! - [`GrantScope::Once`]: one call of one session, spent atomically
//!   ([`GrantStore::spend_once`]), so two concurrent calls cannot both use it;
//! - [`GrantScope::Session`]: every call of one session;
//! - [`GrantScope::Always`]: every call of every session.
//!
//! A grant an approval leaves behind for a session that acts for a [`crate::Principal`] is
//! bound to that principal: it covers that principal's calls alone, whatever its scope (a
//! grant without one, such as an operator's `toolgate approvals grant`, covers everyone's).
//!
//! A grant is active while it is not revoked, not expired and, for `once`, not spent. The
//! grants of one session expire when that session ends ([`GrantStore::end_session`], called
//! by [`crate::Pipeline::end_session`]).
//! [`MemoryGrantStore`] keeps grants in memory; `toolgate-store` keeps them in SQLite.
//!
//! An approver's scoped answer grants what its question showed ([`Asked`]): the tool on the
//! commands, paths and hosts the call touches, never the whole tool unless the call touches
//! nothing or the person typed a broader pattern.

mod asked;
mod memory;

pub use asked::{Asked, MAX_LINE_CHARS, MAX_PATTERNS, MAX_SHOWN};
pub use memory::MemoryGrantStore;
pub use patterns::{GrantPatternCache, PATTERN_CACHE_CAPACITY};

use crate::tool::ResolvedResource;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How long a grant holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
}

impl fmt::Display for GrantScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GrantScope {
    type Err = GrantError;

    /// Parses `once`, `session` or `always`.
    fn from_str(s: &str) -> Result<Self, GrantError> {
        match s {
            "once" => Ok(GrantScope::Once),
            "session" => Ok(GrantScope::Session),
            "always" => Ok(GrantScope::Always),
            other => Err(GrantError::Invalid(format!(
                "scope {:?} is not once, session or always",
                other.chars().take(40).collect::<String>()
            ))),
        }
    }
}

/// What went wrong with a grant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// The grant is not acceptable (empty or oversized pattern, missing session, ...).
    #[error("invalid grant: {0}")]
    Invalid(String),
    /// The grant store failed (for example an SQLite error).
    #[error("grant store: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The longest pattern, session, note or approver name accepted, in bytes.
pub const MAX_GRANT_TEXT: usize = 4096;

/// The longest a grant may hold: 100 years (36,525 days). Longer asks for no expiry at all
/// (until revoked), which is said so; a span past it is refused rather than stored as a time
/// no view can show and no store column can hold (the store keeps times as `i64`
/// microseconds, about 292,000 years from 1970).
pub const MAX_EXPIRY: std::time::Duration = std::time::Duration::from_secs(36_525 * 86_400);

/// [`MAX_EXPIRY`] in microseconds.
const MAX_EXPIRY_US: u64 = MAX_EXPIRY.as_secs() * 1_000_000;

/// The latest time a grant may name, in microseconds since the epoch: what an `i64` column
/// holds.
const MAX_TIME_US: u64 = i64::MAX as u64;

/// A grant to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGrant {
    /// Tool names it covers: a tool pattern (`write_file`, `fs_*`, `*`; see [`crate::pattern`]).
    pub tool_pattern: String,
    /// Resources it covers (`path:<glob>`, `host:<pattern>`, `command:<prefix>`): a call is
    /// covered when each resource it touches matches one of them. Empty: any resource.
    pub resource_patterns: Vec<String>,
    /// How long it holds.
    pub scope: GrantScope,
    /// The session, required for `Once` and `Session`; `None` for `Always` (every session).
    pub session: Option<String>,
    /// When it was granted, microseconds since the Unix epoch.
    pub created_us: u64,
    /// When it stops holding, microseconds since the Unix epoch (`None`: until revoked).
    pub expires_us: Option<u64>,
    /// Who granted it (an operator, `terminal`, `mcp-client`).
    pub granted_by: Option<String>,
    /// Free text (the approver's words).
    pub note: Option<String>,
    /// The principal whose calls alone it covers (`None`: everyone's).
    pub principal: Option<crate::Principal>,
}

impl NewGrant {
    /// Checks the grant can be stored.
    ///
    /// # Errors
    /// [`GrantError::Invalid`] for an empty or oversized pattern, text with NUL (or a line
    /// break in a resource pattern), more than [`MAX_PATTERNS`] resource patterns, a `once`
    /// or `session` grant without a session, an `always` grant with one, an expiry not after
    /// creation or more than [`MAX_EXPIRY`] after it, or a time past what an `i64` of
    /// microseconds holds.
    pub fn check(&self) -> Result<(), GrantError> {
        let bad = |m: String| Err(GrantError::Invalid(m));
        if self.tool_pattern.trim().is_empty() {
            return bad("tool_pattern is empty".into());
        }
        if self.resource_patterns.len() > MAX_PATTERNS {
            return bad(format!(
                "{} resource patterns, more than {MAX_PATTERNS}",
                self.resource_patterns.len()
            ));
        }
        for p in &self.resource_patterns {
            if p.trim().is_empty() {
                return bad(
                    "a resource pattern is empty (leave them out to cover any resource)".into(),
                );
            }
            if p.contains(['\n', '\r']) {
                return bad("a resource pattern holds a line break".into());
            }
        }
        let resources = self.resource_patterns.join("\n");
        for (name, v) in [
            ("tool_pattern", Some(self.tool_pattern.as_str())),
            ("resource_patterns", Some(resources.as_str())),
            ("session", self.session.as_deref()),
            ("granted_by", self.granted_by.as_deref()),
            ("note", self.note.as_deref()),
            ("principal", self.principal.as_ref().map(|p| &*p.subject)),
            (
                "principal issuer",
                self.principal.as_ref().map(|p| &*p.issuer),
            ),
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
        if self.created_us > MAX_TIME_US {
            return bad(format!(
                "created_us {} is past the latest time a store holds ({MAX_TIME_US} µs)",
                self.created_us
            ));
        }
        if let Some(e) = self.expires_us {
            if e <= self.created_us {
                return bad("expires_us is not after created_us".into());
            }
            if e - self.created_us > MAX_EXPIRY_US {
                return bad(format!(
                    "the grant would hold for more than {} days (100 years), the longest \
                     expiry: give a shorter one, or none for a grant that holds until revoked",
                    MAX_EXPIRY.as_secs() / 86_400
                ));
            }
        }
        Ok(())
    }
}

/// A stored grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// Its id (for revoking; named in audit records of the calls it approved).
    pub id: i64,
    /// Tool names it covers.
    pub tool_pattern: String,
    /// Resources it covers, each call's resources every one matching one of them (empty:
    /// any).
    pub resource_patterns: Vec<String>,
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
    /// The principal whose calls alone it covers (`None`: everyone's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<crate::Principal>,
}

impl Grant {
    /// Whether it holds at `now_us`: not revoked, not expired, not spent.
    pub fn is_active(&self, now_us: u64) -> bool {
        self.revoked_us.is_none()
            && self.used_us.is_none()
            && self.expires_us.is_none_or(|e| e > now_us)
    }

    /// Whether it holds for `session` (its own, or any for `always`).
    pub fn is_for_session(&self, session: &str) -> bool {
        self.scope == GrantScope::Always || self.session.as_deref() == Some(session)
    }

    /// Whether its patterns cover a call of `tool` touching `resources`: the tool matches the
    /// tool pattern ([`crate::pattern::ToolPattern`]) and, when the grant has resource
    /// patterns ([`crate::pattern::ResourcePattern`], matched as written:
    /// [`crate::pattern::MatchMode::Grant`]), the call touches at least one resource and each
    /// one matches one of them. A pattern that does not parse covers nothing.
    pub fn covers(&self, tool: &str, resources: &[ResolvedResource]) -> bool {
        covers(&self.tool_pattern, &self.resource_patterns, tool, resources)
    }
}

/// Which grants [`GrantStore::list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantFilter {
    /// Only grants that hold at this time (µs since the epoch); `None` lists revoked, expired
    /// and spent ones too.
    pub active_at: Option<u64>,
    /// Only grants of this session (and `always` grants, which hold for every session).
    pub session: Option<String>,
}

/// Where grants live. The authorize stage calls [`find_covering`] over it on every call the
/// policy asks about, so `active` should be cheap (an indexed query).
pub trait GrantStore: Send + Sync {
    /// The grants that hold for `session` at `now_us`: its `once` and `session` grants and
    /// every `always` grant, oldest first.
    ///
    /// # Errors
    /// [`GrantError::Store`].
    fn active(&self, session: &str, now_us: u64) -> Result<Vec<Grant>, GrantError>;

    /// Stores a grant and returns it with its id.
    ///
    /// # Errors
    /// [`GrantError::Invalid`] (see [`NewGrant::check`]); [`GrantError::Store`].
    fn insert(&self, grant: &NewGrant) -> Result<Grant, GrantError>;

    /// Spends a `once` grant at `now_us`: `true` for the one caller that spent it, `false`
    /// when it is not an active `once` grant.
    ///
    /// # Errors
    /// [`GrantError::Store`].
    fn spend_once(&self, id: i64, now_us: u64) -> Result<bool, GrantError>;

    /// Revokes a grant at `now_us`; `false` when there is no such grant or it was revoked
    /// already.
    ///
    /// # Errors
    /// [`GrantError::Store`].
    fn revoke(&self, id: i64, now_us: u64) -> Result<bool, GrantError>;

    /// Grants matching `filter`, oldest first.
    ///
    /// # Errors
    /// [`GrantError::Store`].
    fn list(&self, filter: &GrantFilter) -> Result<Vec<Grant>, GrantError>;

    /// Ends the grants of `session` alone (`session` and `once`) when the session ends: each
    /// still active expires at `now_us` (so it is listed as expired, not active); `always`
    /// grants and grants of other sessions are untouched. Returns how many ended.
    ///
    /// # Errors
    /// [`GrantError::Store`].
    fn end_session(&self, session: &str, now_us: u64) -> Result<usize, GrantError>;

    /// The store's cache of compiled grant patterns, which [`find_covering`] matches through
    /// so a lookup does not parse every candidate's patterns again (default: none, each
    /// lookup parses them).
    fn pattern_cache(&self) -> Option<&GrantPatternCache> {
        None
    }
}

/// The active grant of `session` (acting for `principal`, if any) covering a call of `tool`
/// touching `resources` at `now_us`, if any; a grant bound to another principal is never one. A standing grant (`session` or `always`) is preferred; a `once` grant is used only
/// when no standing grant covers the call, and is spent here (a once grant another call spent
/// first is skipped). Patterns are matched through the store's [`GrantPatternCache`] when it
/// has one ([`GrantStore::pattern_cache`]).
///
/// # Errors
/// [`GrantError::Store`] from the store.
pub fn find_covering(
    store: &dyn GrantStore,
    session: &str,
    principal: Option<&crate::Principal>,
    tool: &str,
    resources: &[ResolvedResource],
    now_us: u64,
) -> Result<Option<Grant>, GrantError> {
    let cache = store.pattern_cache();
    let covers = |g: &Grant| match cache {
        Some(c) => c.covers(g, tool, resources),
        None => g.covers(tool, resources),
    };
    let mut candidates: Vec<Grant> = store
        .active(session, now_us)?
        .into_iter()
        .filter(|g| {
            g.is_active(now_us)
                && g.is_for_session(session)
                && crate::Principal::may_use(principal, g.principal.as_ref())
                && covers(g)
        })
        .collect();
    // always before session before once; oldest first within a scope
    candidates.sort_by_key(|g| (std::cmp::Reverse(g.scope), g.id));
    for g in candidates {
        if g.scope != GrantScope::Once {
            return Ok(Some(g));
        }
        if store.spend_once(g.id, now_us)? {
            return Ok(Some(Grant {
                used_us: Some(now_us),
                ..g
            }));
        }
    }
    Ok(None)
}

/// What an approver asks to be granted along with approving a call (the answer
/// [`crate::ApprovalAnswer::ApprovedFor`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRequest {
    /// How long the approval holds. `once` stores nothing: it approves this call only.
    pub scope: GrantScope,
    /// The tools it covers (a tool pattern); `None`: exactly the tool of this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The resources it covers (resource patterns; a call is covered when each resource it
    /// touches matches one); empty: any resource. Approvers that ask a person grant what the
    /// question showed ([`Asked::patterns`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Seconds until it expires; `None`: until revoked (a `session` grant also ends with its
    /// session: [`GrantStore::end_session`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<u64>,
}

impl GrantRequest {
    /// A request of `scope` for exactly the tool of the call, any resource, no expiry.
    pub fn new(scope: GrantScope) -> Self {
        GrantRequest {
            scope,
            tool: None,
            resources: Vec::new(),
            expires_in_secs: None,
        }
    }

    /// A request of `scope` for the tool of the call on `resources` (patterns), no expiry.
    pub fn on(scope: GrantScope, resources: &[String]) -> Self {
        GrantRequest {
            resources: resources.to_vec(),
            ..GrantRequest::new(scope)
        }
    }

    /// The grant it asks for, for a call of `tool` in `session` (acting for `principal`, to
    /// whom the grant is then bound) at `now_us`.
    ///
    /// # Errors
    /// [`GrantError::Invalid`] for a `once` request (nothing to store), a pattern that does
    /// not parse, or what [`NewGrant::check`] refuses.
    pub fn to_new_grant(
        &self,
        tool: &str,
        session: &str,
        principal: Option<&crate::Principal>,
        now_us: u64,
        granted_by: Option<&str>,
    ) -> Result<NewGrant, GrantError> {
        if self.scope == GrantScope::Once {
            return Err(GrantError::Invalid(
                "a once approval covers this call only and is not stored".into(),
            ));
        }
        let tool_pattern = self.tool.clone().unwrap_or_else(|| tool.to_owned());
        for r in &self.resources {
            check_patterns(&tool_pattern, Some(r))?;
        }
        check_patterns(&tool_pattern, None)?;
        let expires_us = match self.expires_in_secs {
            None => None,
            Some(0) => {
                return Err(GrantError::Invalid(
                    "an expiry of 0 seconds is already past".into(),
                ))
            }
            Some(s) if s > MAX_EXPIRY.as_secs() => {
                return Err(GrantError::Invalid(format!(
                    "an expiry of {s} seconds is longer than the longest, {} seconds (100 \
                     years): ask for a shorter one, or none for a grant that holds until revoked",
                    MAX_EXPIRY.as_secs()
                )))
            }
            // at most 100 years in µs: no overflow; a `now_us` that absurd is refused by check
            Some(s) => Some(now_us.saturating_add(s * 1_000_000)),
        };
        let grant = NewGrant {
            tool_pattern,
            resource_patterns: self.resources.clone(),
            scope: self.scope,
            session: (self.scope != GrantScope::Always).then(|| session.to_owned()),
            created_us: now_us,
            expires_us,
            granted_by: granted_by.map(str::to_owned),
            note: None,
            principal: principal.cloned(),
        };
        grant.check()?;
        Ok(grant)
    }
}

/// Checks a tool pattern and an optional resource pattern parse.
///
/// # Errors
/// [`GrantError::Invalid`] naming the pattern and why.
pub fn check_patterns(tool: &str, resource: Option<&str>) -> Result<(), GrantError> {
    patterns::check(tool, resource)
}

fn covers(
    tool_pattern: &str,
    resource_patterns: &[String],
    tool: &str,
    resources: &[ResolvedResource],
) -> bool {
    patterns::covers(tool_pattern, resource_patterns, tool, resources)
}

mod patterns;

#[cfg(test)]
mod tests;
