//! Stage 4, guard: the tool's own semantic checks, then every path it declares resolved inside
//! the workspace (symlinks followed, the deepest existing ancestor for new paths).

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::registry::Entry;
use crate::tool::{Args, ResolvedResource, Resource};
use std::panic::AssertUnwindSafe;

/// The resolved resources the call touches.
///
/// # Errors
/// What the tool's guard returns; `unsafe_input` (`path_outside_workspace`, `no_workspace`,
/// `symlink_loop`) or `invalid_input` for a path; `internal` if the guard panics.
pub fn guard(
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
) -> Result<Vec<ResolvedResource>, ToolError> {
    let declared = std::panic::catch_unwind(AssertUnwindSafe(|| entry.tool.guard(args, ctx)))
        .map_err(|_| ToolError::internal("the tool's guard panicked").with_reason("panic"))??;
    let mut resolved = Vec::with_capacity(declared.len());
    for r in declared {
        resolved.push(match r {
            Resource::Path { path, access } => ResolvedResource::Path {
                path: ctx.resolve(&path)?,
                access,
            },
            Resource::Url { url } => ResolvedResource::Url(url),
            Resource::Command { command } => ResolvedResource::Command(command),
            Resource::Recipient { address } => ResolvedResource::Recipient(
                crate::pattern::normalize_address(&address).ok_or_else(|| {
                    ToolError::invalid_input(format!(
                        "{address:?} is not an email address (local@domain); send one such as \
                         ann@example.com"
                    ))
                    .with_reason("invalid_address")
                })?,
            ),
        });
    }
    Ok(resolved)
}
