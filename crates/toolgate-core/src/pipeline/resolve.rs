//! Stage 1, resolve: the call id is new in the session, and the tool is known and visible to
//! the session: in its profile, and not denied to it whatever the arguments
//! ([`crate::Policy::visible`]).

use crate::call::CallId;
use crate::error::{ErrorKind, ToolError};
use crate::policy::Policy;
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
    policy: &dyn Policy,
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
        Some(e) if policy.visible(e.spec(), session) => Ok(e.clone()),
        _ => Err(unknown(registry, policy, session, name, version)),
    }
}

/// Tool names listed in an `unknown_tool` message, at most.
pub const MAX_LISTED_TOOLS: usize = 50;

/// `unknown_tool`, saying which tools the session can call: the closest name first when one
/// is close (`did you mean read_file?`), then the names (at most [`MAX_LISTED_TOOLS`]); the
/// details carry them too (`available`, `did_you_mean`).
fn unknown(
    registry: &Registry,
    policy: &dyn Policy,
    session: &Session,
    name: &str,
    version: Option<&str>,
) -> ToolError {
    let visible = registry
        .get_visible(name, None, session.profile_bit)
        .is_some_and(|e| policy.visible(e.spec(), session));
    if let (Some(v), true) = (version, visible) {
        return ToolError::new(
            ErrorKind::UnknownTool,
            format!(
                "tool {name} has no version {v:?}; call it without a version or with one that \
                 exists"
            ),
        );
    }
    let available: Vec<&str> = registry
        .visible_names(session.profile_bit)
        .filter(|n| {
            registry
                .get_visible(n, None, session.profile_bit)
                // an unlisted tool (a resource reader, a blocked upstream tool) is never
                // named to the model
                .is_some_and(|e| {
                    !e.spec().has_tag(crate::registry::UNLISTED_TAG)
                        && policy.visible(e.spec(), session)
                })
        })
        .take(MAX_LISTED_TOOLS + 1)
        .collect();
    let near = crate::suggest::closest(name, available.iter().copied());
    let mut message = format!("there is no tool {name:?} here");
    match near {
        Some(near) => message.push_str(&format!("; did you mean {near}?")),
        None => message.push('.'),
    }
    let shown = &available[..available.len().min(MAX_LISTED_TOOLS)];
    if shown.is_empty() {
        message.push_str(" This session can call no tools.");
    } else {
        message.push_str(&format!(
            " The tools you can call: {}{}.",
            shown.join(", "),
            if available.len() > MAX_LISTED_TOOLS {
                ", ... (tools/list has them all)"
            } else {
                ""
            }
        ));
    }
    if registry.defers(session.profile_bit) {
        message.push_str(&format!(
            " More tools are not listed: find them with {} (a query saying what the tool should do).",
            crate::search::SEARCH_TOOLS
        ));
    }
    ToolError::new(ErrorKind::UnknownTool, message)
        .with_details(serde_json::json!({ "available": shown, "did_you_mean": near }))
}
