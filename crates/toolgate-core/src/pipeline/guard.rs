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
/// `symlink_loop`) or `invalid_input` for a path; `invalid_input` (`invalid_url`) for a URL
/// that is not absolute with a host, `invalid_address` for a recipient that is not an
/// address; `internal` if the guard panics.
pub fn guard(
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
) -> Result<Vec<ResolvedResource>, ToolError> {
    let declared = std::panic::catch_unwind(AssertUnwindSafe(|| entry.tool.guard(args, ctx)))
        .map_err(|_| ToolError::internal("the tool's guard panicked").with_reason("panic"))??;
    let mut resolved = Vec::with_capacity(declared.len());
    for r in declared {
        let mut named = None;
        resolved.push(match r {
            Resource::Path { path, access } => {
                let canonical = ctx.resolve(&path)?;
                // a name that is a link (`.env` to `settings/prod.env`) is a resource too: a
                // rule naming the link holds for what it leads to (nothing to work out when
                // the path as written is already the canonical one, as it mostly is)
                if std::path::Path::new(&path) != canonical.as_path() {
                    named = ctx
                        .workspace()
                        .and_then(|ws| ws.lexical(&path))
                        .filter(|named| *named != canonical)
                        .map(|path| ResolvedResource::Path { path, access });
                }
                ResolvedResource::Path {
                    path: canonical,
                    access,
                }
            }
            Resource::Url { url } => ResolvedResource::Url(absolute_url(url)?),
            Resource::Command { command } => ResolvedResource::Command(command),
            Resource::PossibleCommand { command } => ResolvedResource::PossibleCommand(command),
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
        resolved.extend(named);
    }
    Ok(resolved)
}

/// `url` when it is an absolute URL with a host (`https://example.com/x`), which `host:` rules
/// can decide; anything else (`example.com/x`, `//example.com/x`, `mailto:a`) would match no
/// rule, so a deny rule would not hold for a receiver that reads it as a host after all.
///
/// # Errors
/// `invalid_input` (`invalid_url`) saying what to send instead.
fn absolute_url(url: String) -> Result<String, ToolError> {
    match url::Url::parse(&url) {
        Ok(u) if u.host().is_some() => Ok(url),
        _ => {
            let shown: String = url.chars().take(200).collect();
            Err(ToolError::invalid_input(format!(
                "{shown:?} is not an absolute URL with a host; send one with its scheme and host, \
                 such as https://example.com/page"
            ))
            .with_reason("invalid_url"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::absolute_url;

    #[test]
    fn only_urls_a_host_rule_can_decide_pass() {
        for ok in [
            "https://example.com/page",
            "http://[::1]:8080/",
            "HTTP://EVIL.COM./x",
            "ftp://files.example.org/a",
            "http:example.com",
        ] {
            assert_eq!(absolute_url(ok.to_string()).unwrap(), ok);
        }
        for bad in [
            "example.com/x",
            "//example.com/x",
            "mailto:a@example.com",
            "",
            "/etc/passwd",
            "data:text/plain,hi",
        ] {
            let e = absolute_url(bad.to_string()).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("invalid_url"), "{bad}");
            assert!(
                e.message.contains("https://example.com/page"),
                "{bad}: {}",
                e.message
            );
        }
        let long = format!("x{}", "y".repeat(5000));
        assert!(absolute_url(long).unwrap_err().message.len() < 400);
    }
}
