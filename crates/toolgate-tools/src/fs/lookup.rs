//! Looking before acting: what a resolved path names (for the guards, which refuse a call
//! bound to fail before anyone is asked about it), and, for a path that names nothing, the
//! error that says so with the nearest names that do exist.
//!
//! The near names come from the deepest directory on the path that exists: its entries (at
//! most [`MAX_SCANNED`]) are compared with the first missing component
//! ([`toolgate_core::suggest::nearness`]: case, `_` and `-` ignored, small edit distances),
//! and the nearest few are suggested as whole paths, with a `glob` pattern that finds the
//! file's name anywhere in the workspace.

use std::path::{Component, Path, PathBuf};
use toolgate_core::suggest::nearness;
use toolgate_core::workspace::{display_rel, io_error};
use toolgate_core::{Access, ToolContext, ToolError, Workspace, WsPath};

/// Directory entries compared with a missing name, at most.
pub const MAX_SCANNED: usize = 4096;
/// Near names suggested, at most.
pub const MAX_SUGGESTED: usize = 3;

/// What a path must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file (or anything but a directory: the tool says what else it refuses).
    File,
    /// A directory.
    Dir,
    /// Either.
    Any,
}

/// Checks that `path` exists and is of `kind`, looking only (one `stat` relative to the
/// workspace's directory handle).
///
/// # Errors
/// `tool_failed` / `not_found` with near names the policy lets the call read
/// ([`not_found`]), `is_a_directory` (with a `list_dir` hint) or `not_a_directory`; another
/// I/O reason; what [`ToolContext::require_workspace`] returns.
pub(crate) fn expect(ctx: &ToolContext, path: &WsPath, kind: Kind) -> Result<(), ToolError> {
    let ws = ctx.require_workspace()?;
    let visible = |rel: &Path| ctx.permits(rel, Access::Read);
    let shown = path.display();
    let is_dir = if path.is_root() {
        true
    } else {
        match ws.dir().metadata(path.as_path()) {
            Ok(m) => m.is_dir(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_found(ws, path, &visible))
            }
            Err(e) => return Err(io_error(&shown, &e)),
        }
    };
    match (kind, is_dir) {
        (Kind::File, true) => Err(ToolError::failed(format!(
            "{shown:?} is a directory, not a file; use list_dir to see its entries"
        ))
        .with_reason("is_a_directory")),
        (Kind::Dir, false) => Err(ToolError::failed(format!(
            "{shown:?} is a file, not a directory; use read_file to read it, or send its \
             directory"
        ))
        .with_reason("not_a_directory")),
        _ => Ok(()),
    }
}

/// `tool_failed` / `not_found` for `path`, which does not exist: the message names up to
/// [`MAX_SUGGESTED`] existing paths close to it (`did you mean "src/lib.rs"?`) among those
/// `visible` says the call may see (relative to the root: a path the policy does not let it
/// read is not named, as list_dir and glob do not show it), and a `glob` pattern for its file
/// name; the details list the suggestions (`near`).
pub(crate) fn not_found(
    ws: &Workspace,
    path: &WsPath,
    visible: &dyn Fn(&Path) -> bool,
) -> ToolError {
    let shown = path.display();
    let near = near_names(ws, path.as_path(), visible);
    let name = path
        .as_path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut message = format!("{shown:?} does not exist");
    if near.is_empty() {
        message.push('.');
    } else {
        let listed: Vec<String> = near.iter().map(|p| format!("{p:?}")).collect();
        message.push_str(&format!("; did you mean {}?", listed.join(" or ")));
    }
    if name.is_empty() || name.contains(['*', '?', '[', '{']) {
        message.push_str(" Use list_dir or glob to find the right path");
    } else {
        message.push_str(&format!(
            " To find it by name anywhere in the workspace, call glob with {{\"pattern\": \
             \"**/{name}\"}}; list_dir shows a directory's entries"
        ));
    }
    ToolError::not_found(message).with_details(serde_json::json!({ "near": near }))
}

/// Existing paths close to `rel` (relative to the root, which does not exist): the first
/// missing component replaced by the closest names of its directory, with the rest of the
/// path kept when that exists.
fn near_names(ws: &Workspace, rel: &Path, visible: &dyn Fn(&Path) -> bool) -> Vec<String> {
    let dir = ws.dir();
    let mut existing = PathBuf::new();
    let mut components = rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_)));
    let missing = loop {
        let Some(Component::Normal(name)) = components.next() else {
            return Vec::new();
        };
        let next = existing.join(name);
        match dir.symlink_metadata(&next) {
            Ok(m) if m.is_dir() => existing = next,
            Ok(_) => return Vec::new(),
            Err(_) => break name,
        }
    };
    let rest: PathBuf = components.collect();
    let entries = if existing.as_os_str().is_empty() {
        dir.entries()
    } else {
        dir.read_dir(&existing)
    };
    let Ok(entries) = entries else {
        return Vec::new();
    };
    let wanted = missing.to_string_lossy();
    let mut scored: Vec<(f64, std::ffi::OsString)> = entries
        .take(MAX_SCANNED)
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            nearness(&wanted, &name.to_string_lossy()).map(|n| (n, name))
        })
        .filter(|(_, name)| visible(&existing.join(name)))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTED)
        .map(|(_, name)| {
            let candidate = existing.join(&name);
            let whole = candidate.join(&rest);
            let shown = if !rest.as_os_str().is_empty()
                && visible(&whole)
                && dir.symlink_metadata(&whole).is_ok()
            {
                whole
            } else {
                candidate
            };
            display_rel(&shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("src/nested")).unwrap();
        std::fs::write(t.path().join("src/lib.rs"), "").unwrap();
        std::fs::write(t.path().join("src/main.rs"), "").unwrap();
        std::fs::write(t.path().join("README.md"), "").unwrap();
        let ws = Workspace::open(t.path()).unwrap();
        (t, ws)
    }

    #[test]
    fn near_names_replace_the_first_missing_component() {
        let (_t, ws) = ws();
        let near = |p: &str| near_names(&ws, ws.resolve(p).unwrap().as_path(), &|_| true);
        assert_eq!(near("src/lib.rss"), ["src/lib.rs"]);
        assert_eq!(near("srcc/lib.rs"), ["src/lib.rs"]);
        assert_eq!(near("readme.md"), ["README.md"]);
        assert!(near("zzz/qqq.txt").is_empty());
        // the rest of the path does not exist under the near directory: the directory
        assert_eq!(near("srcc/nope.rs"), ["src"]);
    }

    #[test]
    fn the_error_names_near_paths_and_a_glob() {
        let (_t, ws) = ws();
        let e = not_found(&ws, &ws.resolve("src/lib.rss").unwrap(), &|_| true);
        assert_eq!(e.reason.as_deref(), Some("not_found"));
        assert!(
            e.message.contains("did you mean \"src/lib.rs\"?"),
            "{}",
            e.message
        );
        assert!(e.message.contains("\"**/lib.rss\""), "{}", e.message);
        let e = not_found(&ws, &ws.resolve("nothing/like/it").unwrap(), &|_| true);
        assert!(!e.message.contains("did you mean"), "{}", e.message);
        assert!(e.message.contains("glob"), "{}", e.message);
    }

    #[test]
    fn expect_says_what_the_path_is() {
        let (_t, ws) = ws();
        let at = |p: &str| ws.resolve(p).unwrap();
        let ctx = ToolContext::builder().workspace(ws.clone()).build();
        assert!(expect(&ctx, &at("src/lib.rs"), Kind::File).is_ok());
        assert!(expect(&ctx, &at("src"), Kind::Dir).is_ok());
        assert!(expect(&ctx, &at("."), Kind::Dir).is_ok());
        let reason = |p: &str, k| expect(&ctx, &at(p), k).unwrap_err().reason.unwrap();
        assert_eq!(reason("src", Kind::File), "is_a_directory");
        assert_eq!(reason(".", Kind::File), "is_a_directory");
        assert_eq!(reason("src/lib.rs", Kind::Dir), "not_a_directory");
        assert_eq!(reason("src/nope.rs", Kind::File), "not_found");
    }
}
