//! File-system tools: [`read_file`], [`list_dir`] and [`glob`] read; [`write_file`] and
//! [`edit_file`] write. Every path they take is resolved inside the session's workspace and
//! every path they return is relative to its root.
//!
//! The write tools share [`atomic`] (confined, atomic replacement of one file),
//! [`protected`] (the paths no tool writes by default) and, for `edit_file`, the exact-match
//! engine and the diff. `lookup` checks what a path names before a call is put to an
//! approver, and says which names are near when it names nothing.

pub mod atomic;
mod diff;
pub mod edit_file;
pub mod glob;
pub mod list_dir;
pub(crate) mod lookup;
pub mod protected;
pub mod read_file;
mod replace;
pub mod temp;
pub mod write_file;

/// Checks that `opened` (a file or directory a tool opened by `path`, its canonical path in
/// `ws`) is the entry at that path: the kernel's name for the open file
/// (`/proc/self/fd/N`) is its name for the workspace root's descriptor joined with `path`. The open follows links
/// inside the workspace, and a link swapped in between the path's resolution and the open
/// would have the tool read what nobody judged (`pub/a.txt` made a link to
/// `secrets/key.txt`). Where `/proc` cannot be read the check passes: the sandbox's reads
/// stay confined to the workspace either way.
///
/// # Errors
/// `tool_failed` / `file_changed` (recoverable): nothing was read.
pub(crate) fn check_opened(
    ws: &toolgate_core::Workspace,
    path: &toolgate_core::WsPath,
    opened: std::os::fd::BorrowedFd<'_>,
) -> Result<(), toolgate_core::ToolError> {
    use std::os::fd::{AsFd, AsRawFd};
    let name = |fd: std::os::fd::BorrowedFd<'_>| {
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    };
    // the root by its descriptor's name too, so a workspace moved meanwhile still compares
    let (Ok(actual), Ok(root)) = (name(opened), name(ws.dir().as_fd())) else {
        return Ok(());
    };
    let expected = if path.is_root() {
        root
    } else {
        root.join(path.as_path())
    };
    if actual == expected {
        return Ok(());
    }
    Err(toolgate_core::ToolError::failed(format!(
        "{:?} changed while the call ran (a link was made or moved there meanwhile), so \
         nothing was read; send the call again",
        path.display()
    ))
    .with_reason("file_changed"))
}

pub use edit_file::EditFile;
pub use glob::Glob;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use write_file::WriteFile;
