//! Workspace confinement: every path a tool touches resolves inside one root directory.
//!
//! The sequence, for a path argument:
//!
//! 1. refuse NUL; take an absolute path only when it lies under the root, compared component by
//!    component (so `/work/proj-evil` is not under `/work/proj`);
//! 2. walk the components one at a time against the root's directory handle: `.` is skipped,
//!    `..` pops a resolved component (and fails at the root), and every existing component is
//!    checked with `lstat`; a symlink is replaced by its target (relative targets splice in,
//!    absolute ones must lie under the root), at most [`MAX_SYMLINKS`] times;
//! 3. components that do not exist yet are kept as they are, so the deepest existing ancestor
//!    decides, and a dangling link cannot point a later write outside.
//!
//! The result is a canonical relative path ([`WsPath`]). Tools then open it *relative to the
//! root handle* with cap-std, which resolves beneath the root again at open time (openat2 with
//! `RESOLVE_BENEATH` where the kernel has it): a component swapped for a symlink between the
//! check and the use cannot escape.

use crate::error::ToolError;
use crate::pattern::PathPattern;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// How many symlinks one resolution may follow before it is refused as a loop (Linux's own
/// limit is 40).
pub const MAX_SYMLINKS: usize = 40;

/// A directory the tools of a session are confined to. Cheap to clone.
///
/// A workspace is writable or read-only; the pipeline hands tools marked `read_only` a
/// read-only view ([`Workspace::read_only`]), whose [`Workspace::writable_dir`] fails.
#[derive(Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
    writable: bool,
}

struct Inner {
    /// Canonical absolute root.
    root: PathBuf,
    /// The root as given, when it differs from the canonical one (for absolute arguments).
    given: Option<PathBuf>,
    dir: Dir,
    /// Where a file with several hard links may be read ([`Workspace::reads_hard_link`]).
    hard_link_reads: Box<[PathPattern]>,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.inner.root)
            .field("writable", &self.writable)
            .field("hard_link_reads", &self.inner.hard_link_reads)
            .finish()
    }
}

/// Puts a `.gitignore` of `*` in toolgate's state directory `state` when it has none, so the
/// store, logs and quarantined entries never show in the user's `git status` nor go into a
/// commit. Best effort: a state directory that cannot take it works as before.
fn ignored_by_git(state: &Dir) {
    use cap_std::fs::OpenOptions;
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    if let Ok(mut f) = state.open_with(".gitignore", &opts) {
        use std::io::Write;
        let _ = f.write_all(b"# toolgate's own state: the store, logs, quarantined entries\n*\n");
    }
}

/// A path inside the workspace: relative to the root, canonical (no `.`, `..` or symlink
/// components at the time it was resolved). The root itself is `.`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WsPath(PathBuf);

impl WsPath {
    /// The relative path, for opening against [`Workspace::dir`].
    pub fn as_path(&self) -> &Path {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.as_os_str() == "."
    }

    /// The path as shown to the model: relative, `/`-separated, `.` for the root.
    pub fn display(&self) -> String {
        display_rel(&self.0)
    }
}

/// Renders a relative path for the model with `/` separators.
pub fn display_rel(p: &Path) -> String {
    let mut out = String::new();
    for c in p.components() {
        if let Component::Normal(n) = c {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(&n.to_string_lossy());
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// Why a path was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path holds a NUL byte.
    #[error("the path contains a NUL character")]
    Nul,
    /// The path, or a symlink on the way, leads outside the workspace.
    #[error("path {0:?} is outside the workspace")]
    Outside(String),
    /// More than [`MAX_SYMLINKS`] symlinks on the way.
    #[error("path {0:?} has too many levels of symbolic links")]
    SymlinkLoop(String),
    /// The file system failed.
    #[error("path {path:?}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The error.
        source: io::Error,
    },
}

impl From<PathError> for ToolError {
    fn from(e: PathError) -> Self {
        match e {
            PathError::Nul => ToolError::invalid_input(
                "the path contains a NUL character; send the path without it",
            ),
            PathError::Outside(p) => ToolError::unsafe_input(
                "path_outside_workspace",
                format!(
                    "path {p:?} is outside the workspace; send a path relative to the workspace root \
                     that stays inside it (no '..' above the root, no links that lead out)"
                ),
            ),
            PathError::SymlinkLoop(p) => ToolError::unsafe_input(
                "symlink_loop",
                format!("path {p:?} has too many levels of symbolic links"),
            ),
            PathError::Io { path, source } => io_error(&path, &source),
        }
    }
}

/// Maps an I/O error on `path` (as shown to the model) to a tool error: `not_found`,
/// `permission_denied`-like failures and others are all recoverable `tool_failed`, except an
/// escape caught by the directory handle, which is `path_outside_workspace`.
pub fn io_error(path: &str, e: &io::Error) -> ToolError {
    match e.kind() {
        io::ErrorKind::NotFound => ToolError::not_found(format!("{path:?} does not exist")),
        io::ErrorKind::NotADirectory => ToolError::not_found(format!(
            "{path:?}: a component on the way is not a directory"
        )),
        io::ErrorKind::IsADirectory => {
            ToolError::failed(format!("{path:?} is a directory, not a file"))
                .with_reason("is_a_directory")
        }
        io::ErrorKind::PermissionDenied if is_escape(e) => {
            PathError::Outside(path.to_string()).into()
        }
        io::ErrorKind::PermissionDenied => {
            ToolError::failed(format!("{path:?}: permission denied by the file system"))
                .with_reason("io_permission_denied")
        }
        _ => ToolError::failed(format!("{path:?}: {e}")).with_reason("io_error"),
    }
}

/// cap-std reports an escape as `PermissionDenied` with this text.
fn is_escape(e: &io::Error) -> bool {
    e.to_string().contains("outside of the filesystem")
}

impl Workspace {
    /// Opens `root` (which must be an existing directory) as a writable workspace.
    ///
    /// # Errors
    /// The I/O error of canonicalizing or opening the root.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        let given = root.as_ref();
        let canonical = std::fs::canonicalize(given)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())?;
        let given = if given.is_absolute() && given != canonical {
            Some(given.to_path_buf())
        } else {
            None
        };
        Ok(Workspace {
            inner: Arc::new(Inner {
                root: canonical,
                given,
                dir,
                hard_link_reads: Box::default(),
            }),
            writable: true,
        })
    }

    /// This workspace with files of several hard links readable beneath `patterns`
    /// (workspace-relative path globs, `[files] read_hard_links`); by default none is, since a
    /// hard link's other names may lie outside the workspace, where no path rule sees them.
    /// Meant right after [`Workspace::open`]; on a workspace already shared, the clones keep
    /// the patterns they had.
    ///
    /// # Errors
    /// The I/O error of duplicating the root's descriptor, when the workspace is shared.
    pub fn with_hard_link_reads(self, patterns: Vec<PathPattern>) -> io::Result<Workspace> {
        let mut inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            Err(shared) => Inner {
                root: shared.root.clone(),
                given: shared.given.clone(),
                dir: shared.dir.try_clone()?,
                hard_link_reads: Box::default(),
            },
        };
        inner.hard_link_reads = patterns.into();
        Ok(Workspace {
            inner: Arc::new(inner),
            writable: self.writable,
        })
    }

    /// Whether a file with several hard links at `path` may be read (see
    /// [`Workspace::with_hard_link_reads`]).
    pub fn reads_hard_link(&self, path: &Path) -> bool {
        self.inner.hard_link_reads.iter().any(|p| p.matches(path))
    }

    /// The canonical absolute root. Never show it to a model.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The root directory handle, for reading. Open paths from [`Workspace::resolve`] against
    /// it; cap-std keeps every open beneath the root.
    pub fn dir(&self) -> &Dir {
        &self.inner.dir
    }

    /// The root directory handle for writing.
    ///
    /// # Errors
    /// `permission_denied` when this view is read-only (the tool is marked `read_only`).
    pub fn writable_dir(&self) -> Result<&Dir, ToolError> {
        if self.writable {
            Ok(&self.inner.dir)
        } else {
            Err(ToolError::new(
                crate::ErrorKind::PermissionDenied,
                "this tool is read-only and cannot write to the workspace",
            ))
        }
    }

    /// Opens `<root>/<dir>/<file>` for appending, creating both, for toolgate's own state (an
    /// audit log): `dir` is created with mode 0700 when missing and opened without following a
    /// symlink, and the file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a regular
    /// file. A workspace that plants `.toolgate -> /elsewhere`, a symlinked log or a FIFO gets
    /// an error, never a write outside the workspace or a hang.
    ///
    /// # Errors
    /// The I/O error; `InvalidInput` when the file is not a regular file, or `dir`/`file` is
    /// not a single plain name.
    pub fn open_state_file(&self, dir: &str, file: &str) -> io::Result<std::fs::File> {
        use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
        use cap_std::fs::{OpenOptions, OpenOptionsExt};
        plain_name(file)?;
        let state = self.open_state_dir(dir)?;
        let mut opts = OpenOptions::new();
        opts.append(true).create(true).follow(FollowSymlinks::No);
        // a FIFO planted at the path must not block the open
        opts.custom_flags(libc::O_NONBLOCK);
        let f = state.open_with(file, &opts)?;
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{dir}/{file} is not a regular file"),
            ));
        }
        Ok(f.into_std())
    }

    /// Creates `<root>/<dir>` (mode 0700) when missing and returns its host path, for state
    /// kept by path (an SQLite file); refuses a `dir` that is a symlink or not a directory.
    /// Open files in it without following links (for SQLite: `SQLITE_OPEN_NOFOLLOW`).
    ///
    /// # Errors
    /// The I/O error; `InvalidInput` when `dir` is not a plain name.
    pub fn state_dir(&self, dir: &str) -> io::Result<PathBuf> {
        self.open_state_dir(dir)?;
        Ok(self.inner.root.join(dir))
    }

    fn open_state_dir(&self, dir: &str) -> io::Result<Dir> {
        use cap_fs_ext::DirExt;
        use cap_std::fs::{DirBuilder, DirBuilderExt};
        plain_name(dir)?;
        let mut builder = DirBuilder::new();
        builder.mode(0o700);
        match self.inner.dir.create_dir_with(dir, &builder) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let state = self.inner.dir.open_dir_nofollow(dir)?;
        ignored_by_git(&state);
        Ok(state)
    }

    /// Whether this view may write.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// A read-only view of the same workspace.
    pub fn read_only(&self) -> Workspace {
        Workspace {
            inner: self.inner.clone(),
            writable: false,
        }
    }

    /// The path argument `path` as written, relative to the root with `.` and `..` taken
    /// lexically and no link followed: the name a call uses, which may be a link to the
    /// path [`Workspace::resolve`] gives (`.env` linking to `settings/prod.env`). `None` when
    /// it leads out of the root lexically, or holds NUL.
    pub fn lexical(&self, path: &str) -> Option<WsPath> {
        if path.contains('\0') {
            return None;
        }
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            self.strip_root(p)?
        } else {
            p
        };
        let mut out = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return None;
                    }
                }
                Component::Normal(n) => out.push(n),
                Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        if out.as_os_str().is_empty() {
            out.push(".");
        }
        Some(WsPath(out))
    }

    /// Resolves a path argument (relative to the root, or absolute under it) to a canonical
    /// path inside the workspace, following symlinks as described in the module docs.
    ///
    /// # Errors
    /// [`PathError::Nul`], [`PathError::Outside`], [`PathError::SymlinkLoop`], or
    /// [`PathError::Io`] when `lstat` or `readlink` fails for a reason other than absence.
    pub fn resolve(&self, path: &str) -> Result<WsPath, PathError> {
        if path.contains('\0') {
            return Err(PathError::Nul);
        }
        let outside = || PathError::Outside(path.to_string());
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            self.strip_root(p).ok_or_else(outside)?
        } else {
            p
        };
        let mut pending: VecDeque<OsString> = VecDeque::new();
        push_components(&mut pending, rel, 0).map_err(|()| outside())?;
        let mut stack = PathBuf::new();
        let mut depth = 0usize;
        let mut links = 0usize;
        while let Some(name) = pending.pop_front() {
            if name == ".." {
                if depth == 0 {
                    return Err(outside());
                }
                stack.pop();
                depth -= 1;
                continue;
            }
            stack.push(&name);
            depth += 1;
            let meta = match self.inner.dir.symlink_metadata(&stack) {
                Ok(m) => m,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    continue
                }
                Err(e) if is_escape(&e) => return Err(outside()),
                Err(source) => {
                    return Err(PathError::Io {
                        path: path.to_string(),
                        source,
                    })
                }
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            links += 1;
            if links > MAX_SYMLINKS {
                return Err(PathError::SymlinkLoop(path.to_string()));
            }
            let target = match self.inner.dir.read_link_contents(&stack) {
                Ok(target) => target,
                // the link was replaced between lstat and readlink (EINVAL: not a link any
                // more): look at the component again; `links` bounds the retries
                Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                    stack.pop();
                    depth -= 1;
                    pending.push_front(name);
                    continue;
                }
                Err(source) => {
                    return Err(PathError::Io {
                        path: path.to_string(),
                        source,
                    })
                }
            };
            stack.pop();
            depth -= 1;
            let target_rel = if target.is_absolute() {
                stack.clear();
                depth = 0;
                self.strip_root(&target).ok_or_else(outside)?.to_path_buf()
            } else {
                target
            };
            push_components(&mut pending, &target_rel, 1).map_err(|()| outside())?;
        }
        if depth == 0 {
            stack = PathBuf::from(".");
        }
        Ok(WsPath(stack))
    }

    /// Resolves and returns the path as displayed to the model, for error messages.
    fn strip_root<'a>(&self, p: &'a Path) -> Option<&'a Path> {
        p.strip_prefix(&self.inner.root).ok().or_else(|| {
            self.inner
                .given
                .as_deref()
                .and_then(|g| p.strip_prefix(g).ok())
        })
    }
}

fn plain_name(name: &str) -> io::Result<()> {
    let mut c = Path::new(name).components();
    match (c.next(), c.next()) {
        (Some(Component::Normal(_)), None) => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        )),
    }
}

/// Pushes the components of `p` in front of `pending` (`front != 0`) or at its back, dropping
/// `.`. Fails on a root or prefix component (an absolute path not under the root).
fn push_components(pending: &mut VecDeque<OsString>, p: &Path, front: usize) -> Result<(), ()> {
    let mut names = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => names.push(OsString::from("..")),
            Component::Normal(n) => names.push(n.to_os_string()),
            Component::RootDir | Component::Prefix(_) => return Err(()),
        }
    }
    if front != 0 {
        for n in names.into_iter().rev() {
            pending.push_front(n);
        }
    } else {
        pending.extend(names);
    }
    Ok(())
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
