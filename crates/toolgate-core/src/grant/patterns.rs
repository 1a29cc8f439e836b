//! How a grant's patterns meet a call, through the shared matcher ([`crate::pattern`]).
//!
//! A grant grants, so its patterns match in [`MatchMode::Grant`]: exactly what they say (a
//! path glob compares case-sensitively against the canonical path, a command prefix names the
//! program as the command writes it). A grant with a resource pattern covers a call only when
//! the call touches at least one resource and every one matches: a call that also touches a
//! file outside the pattern is asked about.

use super::GrantError;
use crate::pattern::{MatchMode, ResourcePattern, ToolPattern};
use crate::tool::ResolvedResource;

pub(super) fn check(tool: &str, resource: Option<&str>) -> Result<(), GrantError> {
    ToolPattern::parse(tool).map_err(|e| GrantError::Invalid(e.to_string()))?;
    if let Some(r) = resource {
        ResourcePattern::parse_with(r, MatchMode::Grant)
            .map_err(|e| GrantError::Invalid(e.to_string()))?;
    }
    Ok(())
}

pub(super) fn covers(
    tool_pattern: &str,
    resource_pattern: Option<&str>,
    tool: &str,
    resources: &[ResolvedResource],
) -> bool {
    let Ok(tp) = ToolPattern::parse(tool_pattern) else {
        return false;
    };
    if !tp.matches(tool) {
        return false;
    }
    match resource_pattern {
        None => true,
        Some(r) => match ResourcePattern::parse_with(r, MatchMode::Grant) {
            Ok(rp) => !resources.is_empty() && resources.iter().all(|res| rp.matches(res)),
            Err(_) => false,
        },
    }
}
