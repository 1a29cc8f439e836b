//! How a grant's patterns meet a call, through the shared matcher ([`crate::pattern`]).
//!
//! A grant grants, so its patterns match in [`MatchMode::Grant`]: exactly what they say (a
//! path glob compares case-sensitively against the canonical path, a command prefix names the
//! program as the command writes it). A grant with resource patterns covers a call only when
//! the call touches at least one resource and each one matches one of them: a call that also
//! touches a file or runs a command outside them is asked about.
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

/// A grant's patterns, parsed (no resource pattern: any resource); `None` when one of them
/// does not parse (it covers nothing).
struct Compiled(Option<(ToolPattern, Vec<ResourcePattern>)>);

impl Compiled {
    fn new(tool_pattern: &str, resource_patterns: &[String]) -> Self {
        let Ok(tool) = ToolPattern::parse(tool_pattern) else {
            return Compiled(None);
        };
        let mut resources = Vec::with_capacity(resource_patterns.len());
        for r in resource_patterns {
            match ResourcePattern::parse_with(r, MatchMode::Grant) {
                Ok(rp) => resources.push(rp),
                Err(_) => return Compiled(None),
            }
        }
        Compiled(Some((tool, resources)))
    }

    fn covers(&self, tool: &str, resources: &[ResolvedResource]) -> bool {
        let Some((tp, rps)) = &self.0 else {
            return false;
        };
        if !tp.matches(tool) {
            return false;
        }
        // a command the call may run needs no grant
        let mut needed = resources.iter().filter(|r| !r.only_restricted()).peekable();
        rps.is_empty()
            || (needed.peek().is_some() && needed.all(|res| rps.iter().any(|rp| rp.matches(res))))
    }
}

pub(super) fn covers(
    tool_pattern: &str,
    resource_patterns: &[String],
    tool: &str,
    resources: &[ResolvedResource],
) -> bool {
    Compiled::new(tool_pattern, resource_patterns).covers(tool, resources)
}

/// One cached grant: the pattern text it was compiled from, and what it compiled to.
struct Entry {
    tool_pattern: Box<str>,
    resource_patterns: Vec<String>,
    compiled: Compiled,
}

impl Entry {
    fn is_for(&self, grant: &Grant) -> bool {
        *self.tool_pattern == *grant.tool_pattern
            && self.resource_patterns == grant.resource_patterns
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
            resource_patterns: grant.resource_patterns.clone(),
            compiled: Compiled::new(&grant.tool_pattern, &grant.resource_patterns),
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
