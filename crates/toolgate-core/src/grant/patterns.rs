//! How a grant's patterns meet a call.
//!
//! Until the shared pattern module lands, a grant's tool pattern is an exact tool name and
//! resource patterns are refused when a grant is made (and cover nothing when read back), so
//! no grant ever covers more than its author could see.

use super::GrantError;
use crate::tool::ResolvedResource;

pub(super) fn check(tool: &str, resource: Option<&str>) -> Result<(), GrantError> {
    if tool.is_empty() || tool.chars().any(|c| c.is_control() || c == '*') {
        return Err(GrantError::Invalid(format!(
            "tool pattern {tool:?}: only an exact tool name is accepted"
        )));
    }
    if let Some(r) = resource {
        return Err(GrantError::Invalid(format!(
            "resource pattern {r:?}: resource patterns are not supported yet"
        )));
    }
    Ok(())
}

pub(super) fn covers(
    tool_pattern: &str,
    resource_pattern: Option<&str>,
    tool: &str,
    _resources: &[ResolvedResource],
) -> bool {
    resource_pattern.is_none() && tool_pattern == tool
}
