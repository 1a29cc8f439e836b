//! Confined, atomic file replacement: the one way the write tools change a file.
//!
//! The sequence, for a path already resolved inside the workspace ([`WsPath`], no symbolic
//! link on it when it was resolved):
//!
//! 1. **Parent.** [`Target::open`] opens the parent directory by walking its components one
//!    at a time from the workspace root's directory handle, each with
//!    `openat(O_PATH | O_NOFOLLOW)` and checked with `fstat` on the handle it got. A
//!    component that is a symbolic link (so it changed after the path was resolved) fails
//!    the walk instead of being followed: a parent swapped for a link between the check and
//!    the use cannot lead the write out of the workspace.
//!    With [`Parents::Create`], missing components are made with `mkdirat` (mode `0o777`
//!    less the umask) and opened the same way.
//! 2. **Target.** [`Target::existing`] looks at the final component with
//!    `fstatat(AT_SYMLINK_NOFOLLOW)` and refuses a symbolic link (one appeared after the path
//!    was resolved), a directory, anything that is not a regular file (a FIFO, a socket, a
//!    device: never opened) and a regular file with more than one hard link (its other names
//!    may be outside the workspace, and an edit would show and change a file shared with
//!    them). [`Target::read`] reads it through `openat(O_NOFOLLOW | O_NONBLOCK)` and checks
//!    the open file is the one looked at.
//! 3. **Temporary file.** [`Target::replace`] creates `.toolgate-<16 random hex digits>.tmp`
//!    in the same directory with `O_CREAT | O_EXCL | O_NOFOLLOW`, writes the new content
//!    whole, gives it the permission bits of the file it replaces (`mode & 0o777`: set-id and
//!    sticky bits are dropped; owner and group are the writer's) or `0o666` less the umask
//!    for a new file, and `fsync`s it.
//! 4. **Commit.** Unless the call was cancelled, or the target is now something
//!    [`Target::existing`] refuses: with [`Base::Current`] (write_file) the temporary file is
//!    renamed over the target with `renameat` relative to the parent's handle (a rename
//!    replaces the name itself, never writes through it). With [`Base::Unchanged`]
//!    (edit_file) the target is opened and checked to be the file the caller read (its inode
//!    pinned), then swapped with the temporary file at once (`renameat2(RENAME_EXCHANGE)`);
//!    the old file must still begin with the content read (a change in place, even one that
//!    keeps size and timestamp, swaps it back, with what was appended to the new file
//!    meanwhile, and fails with [`WriteError::Changed`]), and what was appended to it since it
//!    was read, by a writer that opened it before the swap and wrote after, is carried into
//!    the new file until the old one has stayed the same for 5 ms (200 ms at most); the old
//!    file is then removed. A file system without `RENAME_EXCHANGE` gets the check and a
//!    plain rename. Either way the parent is `fsync`ed so the commit survives a crash.
//!
//! Any failure before the rename removes the temporary file; one a killed process left is
//! hidden from the tools and removed once stale ([`super::temp`]). The target is either untouched
//! or wholly replaced, never partly written; concurrent writers each rename a whole file, so
//! the last rename wins and readers see one whole version or another.
//!
//! What remains, by design: a directory that another process moves *out* of the workspace
//! after step 1 takes the write with it (the handle follows the directory); moving it there
//! needs write access outside the workspace, which the sandboxed tools do not have. Between
//! the last check and the rename (microseconds), a hard link made to the target keeps the
//! old content under its other name; nothing is written through it. A writer that keeps the
//! old file open and writes to it later than the few milliseconds the commit watches it (a
//! logger that never reopens its file) writes into a removed file, as with any tool that
//! replaces files; a line appended at the very moment of the swap can land one line late.

use cap_std::fs::Dir;
use rand::Rng;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Component;
use tokio_util::sync::CancellationToken;
use toolgate_core::workspace::io_error;
#[cfg(doc)]
use toolgate_core::Workspace;
use toolgate_core::{ErrorKind, ToolError, WsPath};

/// How many random names [`Target::replace`] tries for its temporary file before it gives up.
const TEMP_ATTEMPTS: usize = 8;

/// Whether [`Target::open`] creates missing parent directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// Create missing parents inside the workspace (no-follow, as the walk opens them).
    Create,
    /// Every parent must exist: a missing one is [`WriteError::NotFound`].
    MustExist,
}

/// What [`Target::replace`] may replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base<'a> {
    /// Whatever the target is just before the rename, if [`Target::existing`] accepts it (or
    /// no file at all).
    Current,
    /// Only the file the caller read (same device, inode, size and modification time), whose
    /// content was `.1`: the commit swaps the new file in, and what was appended to the old
    /// one meanwhile is carried over (see the module docs, step 4).
    Unchanged(&'a Existing, &'a [u8]),
}

/// A regular file found at the target, as `fstatat` saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    /// Its permission bits (`mode & 0o777`).
    pub permissions: u32,
    /// Its size in bytes.
    pub size: u64,
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
}

/// Why a confined write failed. Turned into the error for the model by
/// [`WriteError::into_tool_error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A component of the path is a symbolic link now (it was not when the path was resolved):
    /// the tree changed under the call, and the link might lead out.
    #[error("a component of the path became a symbolic link after the path was resolved")]
    LinkOnTheWay,
    /// A component on the way is a file, not a directory.
    #[error("a component on the way is not a directory")]
    NotADirectory,
    /// The target, or (with [`Parents::MustExist`]) a parent, does not exist.
    #[error("the file does not exist")]
    NotFound,
    /// The target is a directory.
    #[error("the target is a directory")]
    IsADirectory,
    /// The target is a FIFO, socket or device.
    #[error("the target is not a regular file")]
    NotRegular,
    /// The target has this many hard links.
    #[error("the target has {0} hard links")]
    HardLink(u64),
    /// The target (or the content for it) has this many bytes, more than the limit.
    #[error("the file is {len} bytes, more than the limit of {max}")]
    TooLarge {
        /// Its size in bytes.
        len: u64,
        /// The limit in bytes.
        max: u64,
    },
    /// The target changed between the read and the commit ([`Base::Unchanged`]).
    #[error("the file changed while the call ran")]
    Changed,
    /// The call was cancelled before the commit; nothing was changed.
    #[error("the call was cancelled before the file was replaced")]
    Cancelled,
    /// The file system failed.
    #[error("{op}: {source}")]
    Io {
        /// What was being done (`open`, `write`, `rename`, ...).
        op: &'static str,
        /// The error.
        source: io::Error,
    },
}

impl WriteError {
    fn io(op: &'static str, e: impl Into<io::Error>) -> Self {
        WriteError::Io {
            op,
            source: e.into(),
        }
    }

    /// The error for the model about the path it sent, shown as `shown`:
    ///
    /// | error | kind | reason |
    /// |---|---|---|
    /// | `LinkOnTheWay` | `unsafe_input` | `path_outside_workspace` |
    /// | `HardLink` | `unsafe_input` | `hard_link` |
    /// | `TooLarge` | `unsafe_input` | `limit_exceeded` |
    /// | `NotFound` | `tool_failed` | `not_found` |
    /// | `NotADirectory` | `tool_failed` | `not_a_directory` |
    /// | `IsADirectory` | `tool_failed` | `is_a_directory` |
    /// | `NotRegular` | `tool_failed` | `not_a_regular_file` |
    /// | `Changed` | `tool_failed` | `file_changed` |
    /// | `Cancelled` | `cancelled` | |
    /// | `Io` | `tool_failed` | `io_error`, `io_permission_denied`, ... |
    pub fn into_tool_error(self, shown: &str) -> ToolError {
        match self {
            WriteError::LinkOnTheWay => ToolError::unsafe_input(
                "path_outside_workspace",
                format!(
                    "{shown:?}: a directory or file on the way was replaced by a symbolic link \
                     while the call ran, and toolgate does not write through links it did not \
                     check; the path may lead outside the workspace. Check the path with \
                     list_dir and send it again"
                ),
            ),
            WriteError::HardLink(n) => ToolError::unsafe_input(
                "hard_link",
                format!(
                    "{shown:?} has {n} hard links; its other names may be outside the workspace, \
                     so toolgate does not change it. Write to a new file instead"
                ),
            ),
            WriteError::TooLarge { len, max } => ToolError::unsafe_input(
                "limit_exceeded",
                format!(
                    "{shown:?} is or would become {len} bytes, more than the limit of {max} \
                     bytes; change smaller files, or split this one"
                ),
            ),
            WriteError::NotFound => ToolError::not_found(format!(
                "{shown:?} does not exist; check the path with list_dir or glob"
            )),
            WriteError::NotADirectory => ToolError::failed(format!(
                "{shown:?}: a component on the way is a file, not a directory"
            ))
            .with_reason("not_a_directory"),
            WriteError::IsADirectory => {
                ToolError::failed(format!("{shown:?} is a directory, not a file"))
                    .with_reason("is_a_directory")
            }
            WriteError::NotRegular => ToolError::failed(format!(
                "{shown:?} is not a regular file (a FIFO, socket or device); only regular files \
                 are written"
            ))
            .with_reason("not_a_regular_file"),
            WriteError::Changed => ToolError::failed(format!(
                "{shown:?} was changed by someone else while the edit ran, so the edit was not \
                 applied; read the file again and send the edit against its current content"
            ))
            .with_reason("file_changed"),
            WriteError::Cancelled => ToolError::new(
                ErrorKind::Cancelled,
                format!("the call was cancelled before {shown:?} was changed; nothing was written"),
            ),
            WriteError::Io { op, source } => {
                let mut e = io_error(shown, &source);
                e.message = format!("{} (while trying to {op})", e.message);
                e
            }
        }
    }
}

/// The parent directory of a file to write, opened without following links, and the file's
/// name in it. See the module docs for the sequence.
#[derive(Debug)]
pub struct Target {
    parent: OwnedFd,
    name: OsString,
}

/// How the walk opens each component: a path-only handle (enough for the `*at` calls, no
/// read permission needed), not following a link.
const WALK_FLAGS: OFlags = OFlags::PATH.union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

impl Target {
    /// Opens the parent of `path` (resolved inside the workspace whose root directory handle
    /// is `root`, from [`Workspace::writable_dir`]), step 1 of the module docs.
    ///
    /// # Errors
    /// [`WriteError::IsADirectory`] for the root itself, [`WriteError::LinkOnTheWay`],
    /// [`WriteError::NotADirectory`], [`WriteError::NotFound`] (with [`Parents::MustExist`])
    /// or [`WriteError::Io`].
    pub fn open(root: &Dir, path: &WsPath, parents: Parents) -> Result<Target, WriteError> {
        let mut names: Vec<&OsStr> = Vec::new();
        for c in path.as_path().components() {
            match c {
                Component::Normal(n) => names.push(n),
                Component::CurDir => {}
                // a resolved path has neither; never walk one
                _ => return Err(WriteError::LinkOnTheWay),
            }
        }
        let Some(name) = names.pop() else {
            return Err(WriteError::IsADirectory);
        };
        let mut dir = rustix::fs::openat(
            root.as_fd(),
            ".",
            WALK_FLAGS | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .map_err(|e| WriteError::io("open the workspace root", e))?;
        for component in names {
            dir = open_child(&dir, component, parents)?;
        }
        Ok(Target {
            parent: dir,
            name: name.to_os_string(),
        })
    }

    /// The regular file at the target now, `None` when there is none (step 2).
    ///
    /// # Errors
    /// [`WriteError::LinkOnTheWay`], [`WriteError::IsADirectory`], [`WriteError::NotRegular`],
    /// [`WriteError::HardLink`], [`WriteError::Io`].
    pub fn existing(&self) -> Result<Option<Existing>, WriteError> {
        match rustix::fs::statat(&self.parent, &self.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => check_regular(&st).map(Some),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(WriteError::io("look at the file", e)),
        }
    }

    /// Reads the whole target, at most `max` bytes, and what it was when read (step 2).
    ///
    /// # Errors
    /// [`WriteError::NotFound`], [`WriteError::TooLarge`], [`WriteError::Changed`] when the
    /// file opened is not the one looked at, and the errors of [`Target::existing`].
    pub fn read(&self, max: u64) -> Result<(Vec<u8>, Existing), WriteError> {
        let seen = self.existing()?.ok_or(WriteError::NotFound)?;
        if seen.size > max {
            return Err(WriteError::TooLarge {
                len: seen.size,
                max,
            });
        }
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.parent, &self.name, flags, Mode::empty()).map_err(
            |e| match e {
                Errno::LOOP => WriteError::LinkOnTheWay,
                Errno::NOENT => WriteError::Changed,
                e => WriteError::io("open the file", e),
            },
        )?;
        let opened = check_regular(
            &rustix::fs::fstat(&fd).map_err(|e| WriteError::io("look at the file", e))?,
        )?;
        if opened != seen {
            return Err(WriteError::Changed);
        }
        let mut bytes = Vec::with_capacity(seen.size as usize);
        std::fs::File::from(fd)
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| WriteError::io("read the file", e))?;
        if bytes.len() as u64 > max {
            return Err(WriteError::TooLarge {
                len: bytes.len() as u64,
                max,
            });
        }
        Ok((bytes, seen))
    }

    /// Replaces the target with `content` atomically (steps 3 and 4). `permissions` are the
    /// bits for the new file (`None`: `0o666` less the umask); `cancel` is checked just
    /// before the rename.
    ///
    /// # Errors
    /// [`WriteError::Cancelled`], [`WriteError::Changed`] (with [`Base::Unchanged`]), the
    /// errors of [`Target::existing`], and [`WriteError::Io`] when creating, writing, syncing
    /// or renaming fails. The temporary file is removed on every error.
    pub fn replace(
        &self,
        content: &[u8],
        permissions: Option<u32>,
        base: Base<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), WriteError> {
        let (file, name) = self.create_temp(permissions)?;
        let mut temp = TempGuard {
            dir: self.parent.as_fd(),
            name,
            armed: true,
        };
        let mut file = std::fs::File::from(file);
        file.write_all(content)
            .map_err(|e| WriteError::io("write the temporary file", e))?;
        if let Some(bits) = permissions {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(bits & 0o777))
                .map_err(|e| WriteError::io("set the permissions", e))?;
        }
        file.sync_all()
            .map_err(|e| WriteError::io("sync the temporary file", e))?;
        if cancel.is_cancelled() {
            return Err(WriteError::Cancelled);
        }
        match base {
            Base::Current => {
                self.existing()?;
                self.rename_over(&temp.name)?;
                temp.armed = false;
            }
            Base::Unchanged(read, was) => {
                let old = self.pin(read)?;
                if !self.exchange(&temp.name)? {
                    // a file system without RENAME_EXCHANGE: the check above, then a rename
                    self.rename_over(&temp.name)?;
                    temp.armed = false;
                } else if let Err(e) = carry_appends(&old, &file, read, was) {
                    // the old file was changed, not only appended to: it goes back, with what
                    // was appended to the new one meanwhile, and the caller reads again
                    self.exchange(&temp.name)?;
                    self.carry_back(&file, &old, content.len() as u64);
                    return Err(e);
                }
                // else the old file has the temporary name now, which the guard removes
            }
        }
        // the content is in place; a failed directory sync only weakens durability
        let synced = rustix::fs::openat(
            &self.parent,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .and_then(rustix::fs::fsync);
        if let Err(e) = synced {
            tracing::warn!(error = %e, "syncing the directory after a rename failed");
        }
        // what a killed write left in this directory goes with the next write in it
        super::temp::sweep_dir(self.parent.as_fd(), std::time::SystemTime::now());
        Ok(())
    }

    /// Opens the target and checks it is still the file the caller read: its inode, pinned
    /// for the commit.
    fn pin(&self, read: &Existing) -> Result<std::fs::File, WriteError> {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.parent, &self.name, flags, Mode::empty()).map_err(
            |e| match e {
                Errno::LOOP => WriteError::LinkOnTheWay,
                Errno::NOENT => WriteError::Changed,
                e => WriteError::io("open the file", e),
            },
        )?;
        let now = check_regular(
            &rustix::fs::fstat(&fd).map_err(|e| WriteError::io("look at the file", e))?,
        )?;
        if now != *read {
            return Err(WriteError::Changed);
        }
        Ok(std::fs::File::from(fd))
    }

    /// Swaps the temporary file and the target at once (`renameat2(RENAME_EXCHANGE)`);
    /// `false` (and nothing done) when the file system cannot.
    fn exchange(&self, temp: &OsStr) -> Result<bool, WriteError> {
        match rustix::fs::renameat_with(
            &self.parent,
            temp,
            &self.parent,
            &self.name,
            rustix::fs::RenameFlags::EXCHANGE,
        ) {
            Ok(()) => Ok(true),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => Ok(false),
            Err(e) => Err(WriteError::io("swap the new file in", e)),
        }
    }

    /// Renames the temporary file over the target.
    fn rename_over(&self, temp: &OsStr) -> Result<(), WriteError> {
        rustix::fs::renameat(&self.parent, temp, &self.parent, &self.name).map_err(|e| match e {
            Errno::ISDIR | Errno::NOTEMPTY | Errno::EXIST => WriteError::IsADirectory,
            e => WriteError::io("rename the temporary file over the target", e),
        })
    }

    /// After the old file was swapped back in: what others appended to the new one (past its
    /// own `new_len` bytes) is appended to the old one, which is the target again. Best
    /// effort: a failure is logged.
    fn carry_back(&self, new: &std::fs::File, old: &std::fs::File, new_len: u64) {
        use std::os::unix::fs::FileExt;
        let result = (|| -> io::Result<()> {
            let len = new.metadata()?.len();
            if len <= new_len {
                return Ok(());
            }
            let mut tail = vec![0; (len - new_len) as usize];
            new.read_exact_at(&mut tail, new_len)?;
            let flags = OFlags::WRONLY
                | OFlags::APPEND
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.parent, &self.name, flags, Mode::empty())?;
            let (a, b) = (rustix::fs::fstat(&fd)?, rustix::fs::fstat(old)?);
            if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
                return Err(io::Error::other("the target changed again"));
            }
            std::fs::File::from(fd).write_all(&tail)
        })();
        if let Err(e) = result {
            tracing::warn!(error = %e, "bytes appended during a refused edit could not be carried back");
        }
    }

    /// Creates the temporary file beside the target under a fresh random name.
    fn create_temp(&self, permissions: Option<u32>) -> Result<(OwnedFd, OsString), WriteError> {
        // read-write: after a refused commit what was appended to it is read back
        let flags = OFlags::RDWR
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NOCTTY
            | OFlags::CLOEXEC;
        // an existing file's bits are set with fchmod once the content is in; until then the
        // temporary file is private
        let mode = Mode::from_raw_mode(if permissions.is_some() { 0o600 } else { 0o666 });
        let mut rng = rand::rng();
        let mut last = Errno::EXIST;
        for _ in 0..TEMP_ATTEMPTS {
            let name = super::temp::temp_name(rng.random::<u64>());
            match rustix::fs::openat(&self.parent, &name, flags, mode) {
                Ok(fd) => return Ok((fd, name)),
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => return Err(WriteError::io("create a temporary file", e)),
            }
        }
        Err(WriteError::io("create a temporary file", last))
    }
}

/// How often [`carry_appends`] looks at the old file, how many looks in a row must find it
/// unchanged before the commit is done, and the longest it follows an old file that keeps
/// growing.
const CARRY_POLL: std::time::Duration = std::time::Duration::from_millis(1);
const CARRY_QUIET: u32 = 5;
const CARRY_MAX: std::time::Duration = std::time::Duration::from_millis(200);

/// After the new file was swapped in: the old one must still begin with `was`, the content
/// read, and what was appended to it since (by a writer that opened it before the swap and
/// wrote after) is appended to the new one, until the old file has stayed the same for a few
/// milliseconds.
///
/// # Errors
/// [`WriteError::Changed`] (before anything is carried) when the old file was changed other
/// than by appending: shorter, or its first bytes differ from `was`.
fn carry_appends(
    old: &std::fs::File,
    new: &std::fs::File,
    read: &Existing,
    was: &[u8],
) -> Result<(), WriteError> {
    use std::os::unix::fs::FileExt;
    let mut carried = read.size;
    let mut checked = false;
    let mut quiet = 0;
    let until = std::time::Instant::now() + CARRY_MAX;
    let flags =
        rustix::fs::fcntl_getfl(new).map_err(|e| WriteError::io("append to the new file", e))?;
    rustix::fs::fcntl_setfl(new, flags | OFlags::APPEND)
        .map_err(|e| WriteError::io("append to the new file", e))?;
    while quiet < CARRY_QUIET && std::time::Instant::now() < until {
        let now = check_regular(
            &rustix::fs::fstat(old).map_err(|e| WriteError::io("look at the old file", e))?,
        )?;
        if !checked {
            // still what was read, or only appended to? (by content: a change in place within
            // the file system's timestamp granularity keeps size and modification time)
            let mut first = vec![0; was.len()];
            if now.size < read.size || old.read_exact_at(&mut first, 0).is_err() || first != was {
                return Err(WriteError::Changed);
            }
            checked = true;
        }
        if now.size > carried {
            let mut tail = vec![0; (now.size - carried) as usize];
            old.read_exact_at(&mut tail, carried)
                .map_err(|e| WriteError::io("read what was appended", e))?;
            (&*new)
                .write_all(&tail)
                .map_err(|e| WriteError::io("append to the new file", e))?;
            carried = now.size;
            quiet = 0;
        } else {
            quiet += 1;
        }
        std::thread::sleep(CARRY_POLL);
    }
    Ok(())
}

/// Removes the temporary file when dropped, unless it was renamed (`armed` cleared).
struct TempGuard<'a> {
    dir: BorrowedFd<'a>,
    name: OsString,
    armed: bool,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Err(e) = rustix::fs::unlinkat(self.dir, &self.name, AtFlags::empty()) {
                tracing::warn!(error = %e, "removing a temporary file failed");
            }
        }
    }
}

/// Opens (and with [`Parents::Create`] makes) the directory `name` in `dir` as an `O_PATH`
/// handle, never following a link: what was opened is checked with `fstat` on the handle
/// itself, so a link swapped in at any moment is seen as a link.
fn open_child(dir: &OwnedFd, name: &OsStr, parents: Parents) -> Result<OwnedFd, WriteError> {
    let fd = match rustix::fs::openat(dir, name, WALK_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if parents == Parents::Create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(WriteError::io("create a directory", e)),
            }
            rustix::fs::openat(dir, name, WALK_FLAGS, Mode::empty()).map_err(walk_error)?
        }
        Err(e) => return Err(walk_error(e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| WriteError::io("look at a directory", e))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => Ok(fd),
        FileType::Symlink => Err(WriteError::LinkOnTheWay),
        _ => Err(WriteError::NotADirectory),
    }
}

/// Why opening a directory on the way failed.
fn walk_error(e: Errno) -> WriteError {
    match e {
        Errno::NOENT => WriteError::NotFound,
        Errno::LOOP => WriteError::LinkOnTheWay,
        e => WriteError::io("open a directory on the way", e),
    }
}

/// The file `st` describes, if it is a regular file with one link.
// the field types of `struct stat` differ between targets
#[allow(clippy::unnecessary_cast)]
fn check_regular(st: &rustix::fs::Stat) -> Result<Existing, WriteError> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(WriteError::LinkOnTheWay),
        FileType::Directory => return Err(WriteError::IsADirectory),
        _ => return Err(WriteError::NotRegular),
    }
    if st.st_nlink as u64 > 1 {
        return Err(WriteError::HardLink(st.st_nlink as u64));
    }
    Ok(Existing {
        permissions: st.st_mode as u32 & 0o777,
        size: st.st_size as u64,
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use toolgate_core::Workspace;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    fn target(ws: &Workspace, p: &str, parents: Parents) -> Result<Target, WriteError> {
        Target::open(ws.dir(), &ws.resolve(p).unwrap(), parents)
    }

    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replace_creates_parents_and_keeps_permissions() {
        let (dir, ws) = setup();
        let never = CancellationToken::new();
        let t = target(&ws, "a/b/c.txt", Parents::Create).unwrap();
        assert_eq!(t.existing().unwrap(), None);
        t.replace(b"one", None, Base::Current, &never).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a/b/c.txt")).unwrap(), b"one");
        let p = dir.path().join("a/b/c.txt");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = t.existing().unwrap().unwrap();
        assert_eq!((e.permissions, e.size), (0o640, 3));
        t.replace(
            b"two!",
            Some(e.permissions),
            Base::Unchanged(&e, b"one"),
            &never,
        )
        .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two!");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(entries(&dir.path().join("a/b")), ["c.txt"]);
    }

    #[test]
    fn missing_parents_are_not_found_unless_created() {
        let (dir, ws) = setup();
        assert!(matches!(
            target(&ws, "x/y.txt", Parents::MustExist),
            Err(WriteError::NotFound)
        ));
        assert!(!dir.path().join("x").exists());
        std::fs::write(dir.path().join("file"), "f").unwrap();
        assert!(matches!(
            target(&ws, "file/y.txt", Parents::Create),
            Err(WriteError::NotADirectory)
        ));
        assert!(matches!(
            target(&ws, ".", Parents::Create),
            Err(WriteError::IsADirectory)
        ));
    }

    #[test]
    fn a_parent_swapped_for_a_link_after_resolution_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("ws/sub")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        let ws = Workspace::open(tmp.path().join("ws")).unwrap();
        let resolved = ws.resolve("sub/out.txt").unwrap();
        std::fs::remove_dir(tmp.path().join("ws/sub")).unwrap();
        std::os::unix::fs::symlink("../outside", tmp.path().join("ws/sub")).unwrap();
        for parents in [Parents::Create, Parents::MustExist] {
            assert!(matches!(
                Target::open(ws.dir(), &resolved, parents),
                Err(WriteError::LinkOnTheWay)
            ));
        }
        assert!(entries(&tmp.path().join("outside")).is_empty());
    }

    #[test]
    fn refused_targets_are_never_opened_or_replaced() {
        let (dir, ws) = setup();
        let never = CancellationToken::new();
        std::fs::write(dir.path().join("one.txt"), "1").unwrap();
        std::fs::hard_link(dir.path().join("one.txt"), dir.path().join("two.txt")).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let t = target(&ws, "two.txt", Parents::MustExist).unwrap();
        assert!(matches!(t.existing(), Err(WriteError::HardLink(2))));
        assert!(matches!(t.read(100), Err(WriteError::HardLink(2))));
        assert!(matches!(
            t.replace(b"x", None, Base::Current, &never),
            Err(WriteError::HardLink(2))
        ));
        let t = target(&ws, "d", Parents::MustExist).unwrap();
        assert!(matches!(t.existing(), Err(WriteError::IsADirectory)));
        let t = target(&ws, "fifo", Parents::MustExist).unwrap();
        assert!(matches!(t.read(100), Err(WriteError::NotRegular)));
        assert_eq!(std::fs::read(dir.path().join("one.txt")).unwrap(), b"1");
        assert_eq!(entries(dir.path()), ["d", "fifo", "one.txt", "two.txt"]);
    }

    #[test]
    fn a_final_component_that_became_a_link_is_refused() {
        let (dir, ws) = setup();
        let t = target(&ws, "f.txt", Parents::MustExist).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("f.txt")).unwrap();
        assert!(matches!(t.existing(), Err(WriteError::LinkOnTheWay)));
        assert!(matches!(t.read(100), Err(WriteError::LinkOnTheWay)));
    }

    #[test]
    fn reads_are_capped_and_changes_before_the_commit_are_caught() {
        let (dir, ws) = setup();
        let never = CancellationToken::new();
        let p = dir.path().join("f.txt");
        std::fs::write(&p, "hello").unwrap();
        let t = target(&ws, "f.txt", Parents::MustExist).unwrap();
        assert!(matches!(
            t.read(4),
            Err(WriteError::TooLarge { len: 5, max: 4 })
        ));
        let (bytes, seen) = t.read(5).unwrap();
        assert_eq!(bytes, b"hello");
        std::fs::write(&p, "hello, changed").unwrap();
        assert!(matches!(
            t.replace(b"edited", None, Base::Unchanged(&seen, &bytes), &never),
            Err(WriteError::Changed)
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"hello, changed");
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        assert!(matches!(
            t.replace(b"late", None, Base::Current, &cancelled),
            Err(WriteError::Cancelled)
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"hello, changed");
        assert_eq!(entries(dir.path()), ["f.txt"]);
        let missing = target(&ws, "missing.txt", Parents::MustExist).unwrap();
        assert!(matches!(missing.read(10), Err(WriteError::NotFound)));
    }

    /// What another process appends to the old file after it was read reaches the new one;
    /// a change that is not an append refuses the commit.
    #[test]
    fn appends_to_the_old_file_are_carried_and_changes_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (old_path, new_path) = (dir.path().join("old"), dir.path().join("new"));
        std::fs::write(&old_path, "HEADER 0\nline 1\n").unwrap();
        let (ws, t) = (toolgate_core::Workspace::open(dir.path()).unwrap(), "old");
        let target = target(&ws, t, Parents::MustExist).unwrap();
        let (was, read) = target.read(1 << 20).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&old_path)
            .unwrap()
            .write_all(b"line 2\n")
            .unwrap();
        std::fs::write(&new_path, "HEADER 1\nline 1\n").unwrap();
        let old = std::fs::File::open(&old_path).unwrap();
        let new = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&new_path)
            .unwrap();
        carry_appends(&old, &new, &read, &was).unwrap();
        assert_eq!(
            std::fs::read_to_string(&new_path).unwrap(),
            "HEADER 1\nline 1\nline 2\n"
        );
        // changed in place, even at the same size: refused
        std::fs::write(&old_path, "HEADER X\nline 1\n").unwrap();
        let old = std::fs::File::open(&old_path).unwrap();
        assert!(matches!(
            carry_appends(&old, &new, &read, &was),
            Err(WriteError::Changed)
        ));
    }

    #[test]
    fn errors_map_to_the_taxonomy() {
        let cases = [
            (
                WriteError::LinkOnTheWay,
                ErrorKind::UnsafeInput,
                Some("path_outside_workspace"),
            ),
            (
                WriteError::HardLink(3),
                ErrorKind::UnsafeInput,
                Some("hard_link"),
            ),
            (
                WriteError::TooLarge { len: 9, max: 1 },
                ErrorKind::UnsafeInput,
                Some("limit_exceeded"),
            ),
            (
                WriteError::NotFound,
                ErrorKind::ToolFailed,
                Some("not_found"),
            ),
            (
                WriteError::NotADirectory,
                ErrorKind::ToolFailed,
                Some("not_a_directory"),
            ),
            (
                WriteError::IsADirectory,
                ErrorKind::ToolFailed,
                Some("is_a_directory"),
            ),
            (
                WriteError::NotRegular,
                ErrorKind::ToolFailed,
                Some("not_a_regular_file"),
            ),
            (
                WriteError::Changed,
                ErrorKind::ToolFailed,
                Some("file_changed"),
            ),
            (WriteError::Cancelled, ErrorKind::Cancelled, None),
            (
                WriteError::io("write", io::Error::from(io::ErrorKind::StorageFull)),
                ErrorKind::ToolFailed,
                Some("io_error"),
            ),
        ];
        for (e, kind, reason) in cases {
            let t = e.into_tool_error("a.txt");
            assert_eq!((t.kind, t.reason.as_deref()), (kind, reason), "{t}");
            assert!(t.message.contains("\"a.txt\""), "{t}");
        }
    }
}
