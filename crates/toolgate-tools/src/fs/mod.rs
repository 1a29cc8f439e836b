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

/// Opens `path` (canonical in `ws`: no component is a link) for reading, following no link
/// on the way (`openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH` from the workspace
/// root's descriptor), non-blocking so a FIFO does not hang the call; a directory when
/// `directory`. A component swapped for a link since the path was resolved (`pub/a.txt`
/// made a link to `secrets/key.txt` while the call ran) fails the open ([`is_changed`])
/// instead of being followed, so a tool reads the entry the policy judged or nothing. On a
/// kernel without `openat2` (before 5.6, or a filter that refuses it) the path is opened
/// as before and the kernel's name for the open descriptor (`/proc/self/fd`) is compared
/// with the path.
///
/// # Errors
/// The open's I/O error; `ELOOP` when the path changed ([`is_changed`]).
pub(crate) fn open_exact(
    ws: &toolgate_core::Workspace,
    path: &toolgate_core::WsPath,
    directory: bool,
) -> std::io::Result<std::fs::File> {
    let target = if path.is_root() {
        std::path::Path::new(".")
    } else {
        path.as_path()
    };
    open_exact_rel(ws, target, directory)
}

/// [`open_exact`] of `rel`, a path relative to the workspace root with no link on it (a
/// file a walk found).
///
/// # Errors
/// As [`open_exact`]'s.
pub(crate) fn open_exact_rel(
    ws: &toolgate_core::Workspace,
    rel: &std::path::Path,
    directory: bool,
) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    if directory {
        flags |= OFlags::DIRECTORY;
    }
    let target = rel;
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(ws.dir(), target, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
            let file = if directory {
                ws.dir().open_dir(target)?.into_std_file()
            } else {
                ws.dir()
                    .open_with(target, &crate::walk::read_options())?
                    .into_std()
            };
            if opened_elsewhere(ws, rel, std::os::fd::AsFd::as_fd(&file)) {
                return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
            }
            Ok(file)
        }
        Err(e) => Err(e.into()),
    }
}

/// Whether an error of [`open_exact`] says the path changed since it was resolved: a link
/// on the way (`ELOOP`) or a way out of the workspace (`EXDEV`).
pub(crate) fn is_changed(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EXDEV))
}

/// The error of a path that changed while the call ran: `tool_failed` / `file_changed`
/// (recoverable), naming the path as the call gave it resolved; nothing was read.
pub(crate) fn changed_error(shown: &str) -> toolgate_core::ToolError {
    toolgate_core::ToolError::failed(format!(
        "{shown:?} changed while the call ran (a link was made or moved there meanwhile), so \
         nothing was read; send the call again"
    ))
    .with_reason("file_changed")
}

/// Whether the kernel's name for `opened` (`/proc/self/fd/N`) is not the workspace root's
/// (by its own descriptor, so a workspace moved meanwhile still compares) joined with
/// `path`. False where `/proc` cannot be read.
fn opened_elsewhere(
    ws: &toolgate_core::Workspace,
    rel: &std::path::Path,
    opened: std::os::fd::BorrowedFd<'_>,
) -> bool {
    use std::os::fd::{AsFd, AsRawFd};
    let name = |fd: std::os::fd::BorrowedFd<'_>| {
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    };
    let (Ok(actual), Ok(root)) = (name(opened), name(ws.dir().as_fd())) else {
        return false;
    };
    let expected = if rel == std::path::Path::new(".") {
        root
    } else {
        root.join(rel)
    };
    actual != expected
}

pub use edit_file::EditFile;
pub use glob::Glob;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use write_file::WriteFile;
