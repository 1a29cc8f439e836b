//! [`MemoryGrantStore`]: grants in memory, for tests and embedding (they end with the process).

use super::{Grant, GrantError, GrantFilter, GrantPatternCache, GrantScope, GrantStore, NewGrant};
use parking_lot::Mutex;

/// Grants in a vector behind a lock; ids count from 1. Their patterns are compiled once, at
/// their first lookup ([`GrantPatternCache`]).
#[derive(Debug, Default)]
pub struct MemoryGrantStore {
    grants: Mutex<Vec<Grant>>,
    patterns: GrantPatternCache,
}

impl MemoryGrantStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl GrantStore for MemoryGrantStore {
    fn active(&self, session: &str, now_us: u64) -> Result<Vec<Grant>, GrantError> {
        self.list(&GrantFilter {
            active_at: Some(now_us),
            session: Some(session.to_owned()),
        })
    }

    fn insert(&self, grant: &NewGrant) -> Result<Grant, GrantError> {
        grant.check()?;
        let mut grants = self.grants.lock();
        let id = i64::try_from(grants.len()).unwrap_or(i64::MAX - 1) + 1;
        let g = Grant {
            id,
            tool_pattern: grant.tool_pattern.clone(),
            resource_patterns: grant.resource_patterns.clone(),
            scope: grant.scope,
            session: grant.session.clone(),
            created_us: grant.created_us,
            expires_us: grant.expires_us,
            revoked_us: None,
            used_us: None,
            granted_by: grant.granted_by.clone(),
            note: grant.note.clone(),
            principal: grant.principal.clone(),
        };
        grants.push(g.clone());
        Ok(g)
    }

    fn spend_once(&self, id: i64, now_us: u64) -> Result<bool, GrantError> {
        let mut grants = self.grants.lock();
        match grants.iter_mut().find(|g| g.id == id) {
            Some(g) if g.scope == GrantScope::Once && g.is_active(now_us) => {
                g.used_us = Some(now_us);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn revoke(&self, id: i64, now_us: u64) -> Result<bool, GrantError> {
        let mut grants = self.grants.lock();
        match grants.iter_mut().find(|g| g.id == id) {
            Some(g) if g.revoked_us.is_none() => {
                g.revoked_us = Some(now_us);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn end_session(&self, session: &str, now_us: u64) -> Result<usize, GrantError> {
        let mut ended = 0;
        for g in self.grants.lock().iter_mut() {
            if g.scope != GrantScope::Always
                && g.session.as_deref() == Some(session)
                && g.is_active(now_us)
            {
                g.expires_us = Some(now_us);
                ended += 1;
            }
        }
        Ok(ended)
    }

    fn list(&self, filter: &GrantFilter) -> Result<Vec<Grant>, GrantError> {
        Ok(self
            .grants
            .lock()
            .iter()
            .filter(|g| filter.active_at.is_none_or(|t| g.is_active(t)))
            .filter(|g| {
                filter
                    .session
                    .as_deref()
                    .is_none_or(|s| g.is_for_session(s))
            })
            .cloned()
            .collect())
    }

    fn pattern_cache(&self) -> Option<&GrantPatternCache> {
        Some(&self.patterns)
    }
}
