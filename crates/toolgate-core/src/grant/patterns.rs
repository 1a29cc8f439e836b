//! How a grant's patterns meet a call, through the shared matcher ([`crate::pattern`]).
//!
//! A grant grants, so its patterns match in [`MatchMode::Grant`]: exactly what they say (a
//! path glob compares case-sensitively against the canonical path, a command prefix names the
//! program as the command writes it). A grant with a resource pattern covers a call only when
//! the call touches at least one resource and every one matches: a call that also touches a
//! file outside the pattern is asked about.
//!
//! [`GrantPatternCache`] keeps each grant's patterns compiled, by grant id, so a lookup over
//! N stored grants parses nothing once it has seen them.

use super::{Grant, GrantError};
use crate::pattern::{MatchMode, ResourcePattern, ToolPattern};
use crate::tool::ResolvedResource;
use parking_lot::RwLock;
use std::collections::HashMap;

pub(super) fn check(tool: &str, resource: Option<&str>) -> Result<(), GrantError> {
    ToolPattern::parse(tool).map_err(|e| GrantError::Invalid(e.to_string()))?;
    if let Some(r) = resource {
        ResourcePattern::parse_with(r, MatchMode::Grant)
            .map_err(|e| GrantError::Invalid(e.to_string()))?;
    }
    Ok(())
}

/// A grant's patterns, parsed; `None` when one of them does not parse (it covers nothing).
struct Compiled(Option<(ToolPattern, Option<ResourcePattern>)>);

impl Compiled {
    fn new(tool_pattern: &str, resource_pattern: Option<&str>) -> Self {
        let Ok(tool) = ToolPattern::parse(tool_pattern) else {
            return Compiled(None);
        };
        let resource = match resource_pattern {
            None => None,
            Some(r) => match ResourcePattern::parse_with(r, MatchMode::Grant) {
                Ok(rp) => Some(rp),
                Err(_) => return Compiled(None),
            },
        };
        Compiled(Some((tool, resource)))
    }

    fn covers(&self, tool: &str, resources: &[ResolvedResource]) -> bool {
        let Some((tp, rp)) = &self.0 else {
            return false;
        };
        if !tp.matches(tool) {
            return false;
        }
        match rp {
            None => true,
            Some(rp) => !resources.is_empty() && resources.iter().all(|res| rp.matches(res)),
        }
    }
}

pub(super) fn covers(
    tool_pattern: &str,
    resource_pattern: Option<&str>,
    tool: &str,
    resources: &[ResolvedResource],
) -> bool {
    Compiled::new(tool_pattern, resource_pattern).covers(tool, resources)
}

/// One cached grant: the pattern text it was compiled from, and what it compiled to.
struct Entry {
    tool_pattern: Box<str>,
    resource_pattern: Option<Box<str>>,
    compiled: Compiled,
}

impl Entry {
    fn is_for(&self, grant: &Grant) -> bool {
        *self.tool_pattern == *grant.tool_pattern
            && self.resource_pattern.as_deref() == grant.resource_pattern.as_deref()
    }
}

/// The most grants a [`GrantPatternCache`] holds; past it, it starts again empty.
pub const PATTERN_CACHE_CAPACITY: usize = 4096;

/// Compiled grant patterns by grant id, for a [`super::GrantStore`] to hand to
/// [`super::find_covering`] ([`super::GrantStore::pattern_cache`]): each grant's patterns are
/// parsed at its first lookup, not at every call the policy asks about.
///
/// A grant's patterns never change after it is stored; an entry also keeps the text it was
/// compiled from and is used only for a grant with that same text, so a reused id (a store
/// rebuilt under the cache) is compiled afresh, never matched with another grant's patterns.
/// Matching is exactly [`Grant::covers`]. Holds at most [`PATTERN_CACHE_CAPACITY`] grants.
#[derive(Default)]
pub struct GrantPatternCache {
    entries: RwLock<HashMap<i64, Entry>>,
}

impl std::fmt::Debug for GrantPatternCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantPatternCache")
            .field("grants", &self.entries.read().len())
            .finish()
    }
}

impl GrantPatternCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `grant`'s patterns cover a call of `tool` touching `resources` (as
    /// [`Grant::covers`]), compiling them at the grant's first lookup.
    pub fn covers(&self, grant: &Grant, tool: &str, resources: &[ResolvedResource]) -> bool {
        if let Some(e) = self.entries.read().get(&grant.id) {
            if e.is_for(grant) {
                return e.compiled.covers(tool, resources);
            }
        }
        let entry = Entry {
            tool_pattern: grant.tool_pattern.as_str().into(),
            resource_pattern: grant.resource_pattern.as_deref().map(Into::into),
            compiled: Compiled::new(&grant.tool_pattern, grant.resource_pattern.as_deref()),
        };
        let covers = entry.compiled.covers(tool, resources);
        let mut entries = self.entries.write();
        if entries.len() >= PATTERN_CACHE_CAPACITY {
            entries.clear();
        }
        entries.insert(grant.id, entry);
        covers
    }

    /// How many grants have their patterns compiled here.
    pub fn len(&self) -> usize {
        self.entries.read().len()
    }

    /// Whether no grant has its patterns compiled here.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
