//! Stage 1, resolve: the call id is new in the session, and the tool is known and visible to
//! the session's profile.

use crate::call::CallId;
use crate::error::{ErrorKind, ToolError};
use crate::registry::{Entry, Registry};
use crate::session::Session;
use std::sync::Arc;

/// The entry the call names.
///
/// # Errors
/// `invalid_input` (reason `duplicate_call_id`, fatal for the caller's loop, which reused an
/// id) or `unknown_tool` (also for a tool outside the profile, or a pinned version that does
/// not exist).
pub fn resolve(
    registry: &Registry,
    session: &Session,
    id: &CallId,
    name: &str,
    version: Option<&str>,
) -> Result<Arc<Entry>, ToolError> {
    if !session.claim(id) {
        return Err(ToolError::invalid_input(format!(
            "call id {id:?} was already used in this session; every tool call needs a new id"
        ))
        .with_reason("duplicate_call_id"));
    }
    match registry.get_visible(name, version, session.profile_bit) {
        Some(e) => Ok(e.clone()),
        None => Err(unknown(registry, session, name, version)),
    }
}

fn unknown(registry: &Registry, session: &Session, name: &str, version: Option<&str>) -> ToolError {
    let visible = registry
        .get_visible(name, None, session.profile_bit)
        .is_some();
    let message = match version {
        Some(v) if visible => format!(
            "tool {name} has no version {v:?}; call it without a version or with one that exists"
        ),
        _ => format!("tool {name} is not available; call one of the listed tools"),
    };
    ToolError::new(ErrorKind::UnknownTool, message)
}
