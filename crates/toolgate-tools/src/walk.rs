//! Workspace-confined directory walks for `glob` and `search_code`, on ripgrep's `ignore`
//! crate.
//!
//! The sequence, for a base directory already resolved inside the workspace:
//!
//! 1. the walk starts at the base's canonical host path with `follow_links(false)`: a symlink
//!    is reported as itself and never descended into, so no walk enters a directory outside
//!    the workspace through a link;
//! 2. ignore rules: the `.gitignore` and `.ignore` files of the base and the directories below
//!    it are applied by the walker, inside a git repository or not (`require_git(false)`);
//!    those of the directories between the workspace root and the base are read here through
//!    the workspace's directory handle and applied by the entry filter. Nothing above the
//!    workspace root is read: no parent ignore files, no global gitignore, no
//!    `.git/info/exclude`;
//! 3. before the walker descends into a directory (and reads its ignore files by host path),
//!    the filter checks them with `lstat`: a directory whose `.gitignore` or `.ignore` is a
//!    symlink, not a regular file (a FIFO, a device) or larger than [`MAX_IGNORE_FILE_BYTES`]
//!    is skipped with a warning, so no ignore file can make the walk read outside the
//!    workspace, block, or read without end; `.git` directories and toolgate's store
//!    (`.toolgate`) are never walked, and
//!    toolgate's own temporary files ([`crate::fs::temp`]) are never reported;
//! 4. callers open what they read through the workspace's directory handle (cap-std) with the
//!    path relative to the root, so a directory swapped for a link during the walk cannot lead
//!    a read out; names a walk reports are checked the same way before they are shown.
//!
//! What remains: the walker reads the ignore files it passed in step 3 by host path, so a file
//! swapped for a link between that check and the read is followed (it influences which
//! workspace files are listed; its content is never shown).

use crate::text::rel_display;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::{DirEntry, Match, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use toolgate_core::workspace::io_error;
use toolgate_core::{Workspace, WsPath};

/// Ignore files the walker reads in every directory, in increasing precedence.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];
/// An ignore file larger than this many bytes is not read (1 MiB).
pub(crate) const MAX_IGNORE_FILE_BYTES: u64 = 1 << 20;
/// At most this many warnings are reported by one walk.
const MAX_WARNINGS: usize = 20;
/// A path in a warning is cut to this many characters.
const MAX_SHOWN_PATH: usize = 160;
/// At most this many walker threads, whatever the machine has.
const MAX_THREADS: usize = 8;

/// What a walk includes beyond the defaults.
#[derive(Debug, Default)]
pub(crate) struct WalkOptions {
    /// Walk hidden files and directories (names starting with `.`) too.
    pub hidden: bool,
    /// `rg -g`-style globs restricting which files are reported.
    pub overrides: Option<Override>,
}

/// Warnings collected during a walk, shared between the walker's threads; bounded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Warnings(Arc<Mutex<(Vec<String>, usize)>>);

impl Warnings {
    /// Records a warning (past [`MAX_WARNINGS`] only the count grows).
    pub(crate) fn push(&self, warning: String) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if w.0.len() < MAX_WARNINGS {
            w.0.push(warning);
        } else {
            w.1 += 1;
        }
    }

    /// The warnings, sorted, with a last line for those left out.
    pub(crate) fn take(&self) -> Vec<String> {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (mut list, dropped) = std::mem::take(&mut *w);
        list.sort();
        if dropped > 0 {
            list.push(format!("... and {dropped} more warnings"));
        }
        list
    }
}

/// What a walk could not read: how many entries, and the first one's path (relative to the
/// workspace root) with the reason, so the warning a model reads says what to look at.
#[derive(Debug, Default)]
pub(crate) struct Unreadable {
    count: u64,
    first: Option<String>,
}

impl Unreadable {
    /// Counts an entry the walker itself could not read (a directory it could not list, a
    /// path too long for the system, a loop).
    pub(crate) fn walk_error(&mut self, walk: &Walk, err: &ignore::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(describe_walk_error(walk, err));
        }
    }

    /// Counts a file that was found but could not be opened or read; `rel` is its path
    /// relative to the workspace root.
    pub(crate) fn file(&mut self, rel: &Path, err: &std::io::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!(
                "{}: {}",
                shorten(&rel_display(rel)),
                os_reason(err)
            ));
        }
    }

    /// Adds another thread's tally; the first kept is the one whose path sorts first, so the
    /// warning does not depend on the threads' timing.
    pub(crate) fn merge(&mut self, other: Unreadable) {
        self.count += other.count;
        self.first = match (self.first.take(), other.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// The warning to report, if anything could not be read: `"N files or directories could
    /// not be read and were skipped (the first: PATH: REASON)"`.
    pub(crate) fn warning(&self) -> Option<String> {
        let first = self.first.as_deref()?;
        Some(format!(
            "{} files or directories could not be read and were skipped (the first: {first})",
            self.count
        ))
    }
}

/// `path: reason` of a walk error, the path relative to the workspace root (`?` when the
/// error names none under it).
fn describe_walk_error(walk: &Walk, err: &ignore::Error) -> String {
    let mut path = None;
    let mut cur = err;
    let why = loop {
        match cur {
            ignore::Error::WithPath { path: p, err } => {
                path.get_or_insert(p.as_path());
                cur = err;
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                cur = err
            }
            ignore::Error::Loop { child, .. } => {
                path.get_or_insert(child.as_path());
                break "a symbolic link loop".to_string();
            }
            ignore::Error::Io(e) => break os_reason(e),
            other => break other.to_string(),
        }
    };
    let shown = match path.and_then(|p| walk.relative(p)) {
        Some(rel) if rel.as_os_str().is_empty() => Cow::Borrowed("."),
        Some(rel) => rel_display(rel),
        None => Cow::Borrowed("?"),
    };
    format!("{}: {why}", shorten(&shown))
}

/// A path shown in a warning: at most [`MAX_SHOWN_PATH`] characters, its middle replaced by
/// `...` when longer (a path too long for the system is often the reason itself).
fn shorten(path: &str) -> Cow<'_, str> {
    let chars = path.chars().count();
    if chars <= MAX_SHOWN_PATH {
        return Cow::Borrowed(path);
    }
    let keep = (MAX_SHOWN_PATH - 3) / 2;
    let head: String = path.chars().take(keep).collect();
    let tail: String = path.chars().skip(chars - keep).collect();
    Cow::Owned(format!("{head}...{tail} ({chars} characters)"))
}

/// An I/O error's text without the `(os error N)` tail a model cannot use.
fn os_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// A planned walk over one base directory (or file) of a workspace.
pub(crate) struct Walk {
    /// The canonical workspace root; every walked path starts with it.
    pub root: PathBuf,
    /// The base's host path.
    pub base_abs: PathBuf,
    builder: WalkBuilder,
    /// Warnings found while planning and walking.
    pub warnings: Warnings,
}

impl Walk {
    /// Plans a walk of `base` (a resolved path; the walk reports an error entry when it does
    /// not exist). Problems with ignore files become warnings, never errors.
    pub(crate) fn new(ws: &Workspace, base: &WsPath, opts: WalkOptions) -> Walk {
        let root = ws.root().to_path_buf();
        let base_abs = host_path(ws, base);
        let warnings = Warnings::default();
        let mut builder = WalkBuilder::new(&base_abs);
        builder
            .follow_links(false)
            .hidden(!opts.hidden)
            .parents(false)
            .git_global(false)
            .git_exclude(false)
            .git_ignore(true)
            .ignore(true)
            .require_git(false)
            .current_dir(&root)
            .threads(threads());
        if let Some(o) = opts.overrides {
            builder.overrides(o);
        }
        // the base's own ignore files are read by the walker before any filter runs
        if let Some(why) = unsafe_ignore_file(&base_abs) {
            warnings.push(format!(
                "the ignore files of {} were not applied: {why}",
                base.display()
            ));
            builder.git_ignore(false).ignore(false);
        }
        let ancestors = Arc::new(ancestor_ignores(ws, base, &warnings));
        let filter_root = root.clone();
        let filter_warnings = warnings.clone();
        builder.filter_entry(move |entry| {
            keep_entry(entry, &ancestors, &filter_root, &filter_warnings)
        });
        Walk {
            root,
            base_abs,
            builder,
            warnings,
        }
    }

    /// Runs the walk on the walker's threads. Each thread gets a state from `make`; `visit`
    /// sees every entry the walk yields (errors included) with that thread's state. Returns
    /// every thread's state once the walk is over.
    pub(crate) fn run<S, M, V>(&self, make: M, visit: V) -> Vec<S>
    where
        S: Send,
        M: Fn() -> S + Sync,
        V: Fn(&mut S, Result<DirEntry, ignore::Error>) -> WalkState + Sync,
    {
        let out = Mutex::new(Vec::new());
        let mut builder = StateBuilder {
            make: &make,
            visit: &visit,
            out: &out,
        };
        self.builder.build_parallel().visit(&mut builder);
        out.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// The path of a walked entry relative to the workspace root, or `None` for a path that
    /// is not under it (never expected: the walk does not follow links).
    pub(crate) fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok()
    }
}

/// The host path of a resolved path: the root joined with it, without a trailing `.` for the
/// root itself (the `ignore` crate compares path prefixes byte by byte).
pub(crate) fn host_path(ws: &Workspace, path: &WsPath) -> PathBuf {
    if path.is_root() {
        ws.root().to_path_buf()
    } else {
        ws.root().join(path.as_path())
    }
}

/// Walker threads: the machine's parallelism, at most [`MAX_THREADS`].
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

/// Whether the walker may descend into the directory (or report the file) `entry`.
fn keep_entry(entry: &DirEntry, ancestors: &[Gitignore], root: &Path, warnings: &Warnings) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    // a write's temporary file is not the workspace's content ([`crate::fs::temp`])
    if !is_dir && crate::fs::temp::is_temp_name(entry.file_name()) {
        return false;
    }
    for gi in ancestors {
        match gi.matched(entry.path(), is_dir) {
            Match::Ignore(_) => return false,
            Match::Whitelist(_) => break,
            Match::None => {}
        }
    }
    if !is_dir {
        return true;
    }
    // toolgate's store holds every session's audit log and results ([`crate::fs::protected`])
    if entry.file_name() == ".git" || crate::fs::protected::is_store_name(entry.file_name()) {
        return false;
    }
    match unsafe_ignore_file(entry.path()) {
        None => true,
        Some(why) => {
            let rel = entry.path().strip_prefix(root).unwrap_or(Path::new("?"));
            warnings.push(format!("skipped directory {}: {why}", rel_display(rel)));
            false
        }
    }
}

/// Why the ignore files of directory `dir` must not be read by host path, if they must not.
fn unsafe_ignore_file(dir: &Path) -> Option<String> {
    for name in IGNORE_FILES {
        match std::fs::symlink_metadata(dir.join(name)) {
            Ok(m) if m.is_file() && m.len() <= MAX_IGNORE_FILE_BYTES => {}
            Ok(m) if m.is_file() => {
                return Some(format!(
                    "its {name} is larger than {MAX_IGNORE_FILE_BYTES} bytes"
                ))
            }
            Ok(_) => {
                return Some(format!(
                    "its {name} is a symbolic link or not a regular file"
                ))
            }
            Err(_) => {}
        }
    }
    None
}

/// The ignore rules of the directories from the workspace root down to the base's parent,
/// deepest first, each read through the workspace's directory handle.
fn ancestor_ignores(ws: &Workspace, base: &WsPath, warnings: &Warnings) -> Vec<Gitignore> {
    let mut out = Vec::new();
    if base.is_root() {
        return out;
    }
    // the root (as the empty path), then each directory down to the base's parent
    let mut dirs = vec![PathBuf::new()];
    if let Some(parent) = base.as_path().parent() {
        let mut dir = PathBuf::new();
        for c in parent.components() {
            dir.push(c);
            dirs.push(dir.clone());
        }
    }
    for rel in dirs {
        // no trailing `/.` or `/`: the `ignore` crate strips this root from paths byte by byte
        let abs = if rel.as_os_str().is_empty() {
            ws.root().to_path_buf()
        } else {
            ws.root().join(&rel)
        };
        let mut builder = GitignoreBuilder::new(&abs);
        let mut any = false;
        for name in IGNORE_FILES {
            let file = rel.join(name);
            match read_small(ws.dir(), &file) {
                Ok(Some(text)) => {
                    any = true;
                    let from = abs.join(name);
                    for line in text.lines() {
                        // a line that is not a valid glob is skipped, as git does
                        let _ = builder.add_line(Some(from.clone()), line);
                    }
                }
                Ok(None) => {}
                Err(why) => warnings.push(format!("{} was not applied: {why}", rel_display(&file))),
            }
        }
        if any {
            match builder.build() {
                Ok(gi) => out.push(gi),
                Err(_) => warnings.push(format!(
                    "the ignore rules of {} could not be compiled",
                    if rel.as_os_str().is_empty() {
                        ".".into()
                    } else {
                        rel_display(&rel)
                    }
                )),
            }
        }
    }
    out.reverse();
    out
}

/// The text of a small regular file under `dir`, `None` when it does not exist.
fn read_small(dir: &Dir, rel: &Path) -> Result<Option<String>, String> {
    let mut opts = OpenOptions::new();
    opts.read(true).custom_flags(libc::O_NONBLOCK);
    let meta = match dir.symlink_metadata(rel) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&rel_display(rel), &e).message),
    };
    if !meta.is_file() {
        return Err("it is a symbolic link or not a regular file".into());
    }
    let file = dir
        .open_with(rel, &opts)
        .map_err(|e| io_error(&rel_display(rel), &e).message)?;
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&rel_display(rel), &e).message)?;
    if bytes.len() as u64 > MAX_IGNORE_FILE_BYTES {
        return Err(format!("it is larger than {MAX_IGNORE_FILE_BYTES} bytes"));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Options for opening a file to read during a walk: non-blocking, so a file swapped for a
/// FIFO cannot hang the walk.
pub(crate) fn read_options() -> OpenOptions {
    let mut opts = OpenOptions::new();
    opts.read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    opts
}

struct StateBuilder<'s, S, M, V> {
    make: &'s M,
    visit: &'s V,
    out: &'s Mutex<Vec<S>>,
}

impl<'s, S, M, V> ParallelVisitorBuilder<'s> for StateBuilder<'s, S, M, V>
where
    S: Send + 's,
    M: Fn() -> S + Sync,
    V: Fn(&mut S, Result<DirEntry, ignore::Error>) -> WalkState + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(StateVisitor {
            state: Some((self.make)()),
            visit: self.visit,
            out: self.out,
        })
    }
}

/// One walker thread's visitor; hands its state over when the thread is done with it.
struct StateVisitor<'s, S: Send, V> {
    state: Option<S>,
    visit: &'s V,
    out: &'s Mutex<Vec<S>>,
}

impl<S, V> ParallelVisitor for StateVisitor<'_, S, V>
where
    S: Send,
    V: Fn(&mut S, Result<DirEntry, ignore::Error>) -> WalkState + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match &mut self.state {
            Some(state) => (self.visit)(state, entry),
            None => WalkState::Quit,
        }
    }
}

impl<S: Send, V> Drop for StateVisitor<'_, S, V> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.out
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_bounded_and_sorted() {
        let w = Warnings::default();
        for i in (0..25).rev() {
            w.push(format!("w{i:02}"));
        }
        let list = w.clone().take();
        assert_eq!(list.len(), MAX_WARNINGS + 1);
        assert_eq!(list[0], "w05");
        assert_eq!(list[MAX_WARNINGS], "... and 5 more warnings");
        assert!(w.take().is_empty());
    }
}
