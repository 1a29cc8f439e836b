//! What a run's private mount namespace puts over workspace paths: the plan the parent makes
//! before each run, which `sandbox.rs` applies in the child, and what the parent checks after
//! it.
//!
//! In order:
//!
//! 1. the protected entries are found: every file, directory or link whose name is one of
//!    the protected names of [`crate::fs::protected`] (the one list the write tools refuse:
//!    `.git`, `.toolgate`, `toolgate.toml`, `.vscode`, `.idea`, `.claude`, `.cursor`,
//!    `.gemini`, `.codex`, `.mcp.json`, `.husky`, `.devcontainer`, `.envrc`, `.gitconfig`, the
//!    shell rc files; any spelling the file systems take for the same name, such as
//!    `.VSCode`), at the root and below it ([`find_protected`], see "Finding them" below),
//!    plus [`ShellConfig::protected`] (`.toolgate`, `.git/hooks`, `.git/config` and the
//!    configuration file);
//! 2. every directory above a protected path is pinned, so the protected path cannot be moved
//!    away with its directory and replaced by a new one (`mv .git .git-old`, `mv app app2`
//!    over `app/.vscode`); a regular file found where a directory should be (`.git` of a
//!    linked worktree, which names the real git directory) is bound read-only instead;
//! 3. each protected entry is bound read-only onto itself: neither its content nor its
//!    directory entry can change (writing, `rm`, `mv`, a rename over it and a hard link to it
//!    all fail). A git directory is not bound whole, since `git commit`, `checkout` and
//!    `fetch` write its objects, index, refs and logs: what runs code or points git elsewhere
//!    is, namely its `config`, `config.worktree` and `hooks` (created empty when absent, as
//!    `git init` would), the `config.worktree` of each of its linked worktrees
//!    (`worktrees/*/`), and the same of each submodule's git directory under `modules/` (at
//!    any depth, `git status` recurses into submodules). A protected link is not followed by
//!    the mount (a mount cannot sit on a link); the file or directory it leads to inside the
//!    workspace is bound read-only in its place (outside the workspace everything is
//!    read-only already). `.toolgate` is created first when absent, so it cannot be created
//!    by the command either;
//! 4. the workspace is walked against [`ShellConfig::read_only`] (paths the configuration
//!    denies writing) and [`ShellConfig::hidden`] (paths it denies reading, and the store):
//!    each file or directory they match is bound read-only, or covered by an empty read-only
//!    file or directory; the walk does not descend below a match (the mount covers it) nor
//!    follow links (a link is resolved where it leads, and a match there is covered).
//!
//! ## Finding them
//!
//! Protected entries are looked for breadth first, the root's first, without following
//! links, to [`MAX_PROTECTED_DEPTH`] components and at most [`MAX_PROTECTED_ENTRIES`] entries
//! a run (past that budget the deeper levels are not looked at; `toolgate check` says so).
//! The walk does not enter a protected entry (it is bound whole, or is a git directory
//! handled as above) nor a directory of dependencies or build output ([`SKIPPED_DIRS`]:
//! `node_modules`, `vendor`, `target`, virtual environments, caches). Those hold other
//! people's packages, often with their own `.git`, `.vscode` or `.husky`, which package
//! managers delete and replace (`npm install`, `composer update`): binding them would break
//! those tools, and a directory of dependencies is not one an editor or an agent opens as a
//! project. This is a name list, not `.gitignore`: the command can change `.gitignore`, so
//! the list of what is looked at would be the command's to choose.
//!
//! Cost: the walk reads directory entries (their type comes with them) and takes one `stat`
//! per directory. With `node_modules` skipped, a workspace of 100,000 dependency entries
//! costs nothing; its source tree is what is read. A directory whose inode and status change
//! time are those of the last look (and that time was settled then, see
//! [`UNCHANGED_MARGIN`]) is not read again: any entry added, removed or renamed in it would
//! have changed that time, which no call can set back. So the look after a run reads only
//! the directories the run changed, and run_shell keeps its last look per workspace for the
//! next run to start from: a run that follows another costs about a `stat` per directory,
//! twice. Measured (`per_run_cost_with_a_large_tree`, debug build, 100,000 entries in
//! `node_modules` and 10,000 source files in 520 directories): CPU time in toolgate per run
//! 5 ms without this look, 20 ms for a first run, 10.5 ms for a following one.
//!
//! ## What a run creates
//!
//! A protected entry that does not exist when a run starts cannot be bound without creating
//! it, so the parent looks again when the run ends ([`created`]): a protected entry that was
//! not there before (or is another file than before: a link replaced) was created by the
//! command. Such an entry is never left unsaid: the result lists it (`protected_created`),
//! with why it is protected, and the audit records the result. What happens to it:
//!
//! - a git directory or `.git` file is a new repository (`git init sub`, `git clone URL
//!   dir`, a submodule's checkout): ordinary work, left in place and not listed; from the
//!   next run on its configuration and hooks are read-only like any other. Unless it was
//!   given more than `git init` and `git clone` write (hooks, or a configuration key beyond
//!   [`NEW_REPOSITORY_KEYS`] and those `git -c` may set harmlessly, such as
//!   `core.fsmonitor`): then it is listed, left in place, and the note names what it holds
//!   (a `git init . && git config core.fsmonitor ...` in a workspace without a repository
//!   would otherwise wait for the user's next `git status`). A new `.git` file is judged by
//!   the git directory its `gitdir:` line names (which covers a `git submodule add`'s new
//!   `.git/modules/<name>`), and one naming a directory outside the workspace is listed;
//! - created in a directory that existed when the run started (the root, `app/`): moved
//!   aside, whole, into `.toolgate/quarantine/<time>-<n>/` under the same relative path
//!   (which the command can neither read nor write), and the result says where. That is what
//!   the write tools do (they refuse such a write), without destroying anything: the
//!   operator reads the file there and moves it back when it was wanted. Deleting it would
//!   lose what may be the user's data (a `git checkout` of a branch that tracks
//!   `.vscode/`), and leaving it would leave the attack in place
//!   (`.vscode/settings.json` with `chat.tools.autoApprove` is read by the next editor
//!   session, not the next run);
//! - created in a directory the run created itself (a clone, an unpacked archive, a
//!   generated project): left in place and listed, since moving it would break what the run
//!   was for and no editor has that directory open yet.
//!
//! The look after the run lists every directory listed before it whatever the budget, so a
//! command cannot hide what it made there by filling the workspace with entries; the budget
//! only bounds directories the run made. A move is done from directory descriptors opened
//! from the root without following links, so nothing outside the workspace is moved; one
//! that fails leaves the entry in place and the result says so. Not seen: what a run creates
//! deeper than [`MAX_PROTECTED_DEPTH`] or in a [`SKIPPED_DIRS`] directory, and inside an
//! existing git directory unless a new `.git` file names it.
//!
//! What the rule walk finds is what exists when the run starts: a file created later that a
//! pattern matches is not covered until the next run (`toolgate check` says so), and a hard
//! link made earlier under another name is not either. Patterns anchored at the root without
//! `**` are walked only to their depth; any other needs the whole tree, at most
//! [`MAX_WALK_ENTRIES`] entries (more refuses the run) and [`MAX_BINDS`] mounts.

use super::sandbox::{Bind, BindKind};
use super::ShellConfig;
use crate::fs::protected;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use toolgate_core::pattern::{PathPattern, PathPatternSet};

/// The most workspace entries one run looks at against the path patterns.
pub const MAX_WALK_ENTRIES: usize = 1_000_000;
/// The most mounts one run makes over workspace paths.
pub const MAX_BINDS: usize = 4096;

/// The path patterns of a configuration, matched together ([`ShellConfig::read_only`] first,
/// then [`ShellConfig::hidden`]), and how deep a walk must go for them.
#[derive(Debug)]
pub(crate) struct PathRules {
    set: Option<PathPatternSet>,
    patterns: Vec<PathPattern>,
    read_only: usize,
    /// `None`: the whole tree.
    depth: Option<usize>,
}

impl PathRules {
    pub(crate) fn new(config: &ShellConfig) -> PathRules {
        let patterns: Vec<PathPattern> = config
            .read_only
            .iter()
            .chain(&config.hidden)
            .cloned()
            .collect();
        let depth = patterns
            .iter()
            .map(pattern_depth)
            .try_fold(0, |d, p| p.map(|p| d.max(p)));
        let set = PathPatternSet::new(patterns.iter().map(Some)).ok();
        PathRules {
            set,
            read_only: config.read_only.len(),
            patterns,
            depth,
        }
    }

    /// What `rel` gets, if anything: hidden wins over read-only.
    fn decide(&self, rel: &Path) -> Option<BindKind> {
        let n = self.patterns.len();
        if n == 0 {
            return None;
        }
        // on the stack for up to 256 patterns (one call per workspace entry)
        let mut inline = [0u64; 4];
        let mut heap = Vec::new();
        let hits: &mut [u64] = if n <= 256 {
            &mut inline[..n.div_ceil(64)]
        } else {
            heap.resize(n.div_ceil(64), 0);
            &mut heap
        };
        match &self.set {
            Some(set) => set.matches_into(rel, hits),
            None => {
                for (i, p) in self.patterns.iter().enumerate() {
                    if p.matches(rel) {
                        hits[i / 64] |= 1 << (i % 64);
                    }
                }
            }
        }
        let hit = |i: usize| hits[i / 64] >> (i % 64) & 1 == 1;
        if (self.read_only..n).any(hit) {
            Some(BindKind::Hide)
        } else if (0..self.read_only).any(hit) {
            Some(BindKind::ReadOnly)
        } else {
            None
        }
    }
}

/// How deep below the root a pattern can first match, or `None` when at any depth: a
/// pattern anchored at the root (a leading `/`, or a `/` inside) without `**` matches paths of
/// exactly as many components (and what lies below them, which the mount covers).
fn pattern_depth(p: &PathPattern) -> Option<usize> {
    let text = p.as_str().trim();
    let body = text.trim_start_matches('/').trim_end_matches('/');
    let body = body.strip_prefix("./").unwrap_or(body);
    let anchored = text.starts_with('/') || body.contains('/');
    if !anchored || body.contains("**") {
        return None;
    }
    Some(body.split('/').count())
}

/// The mounts of one run, and what they cover (workspace-relative) for the run's report.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub binds: Vec<Bind>,
    pub hidden: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
    /// The protected entries found when the run started, to tell what it created.
    pub found: Found,
}

/// Why a run cannot be confined as its configuration asks.
#[derive(Debug)]
pub(crate) enum PlanError {
    /// More than [`MAX_WALK_ENTRIES`] entries to look at.
    TooManyEntries,
    /// More than [`MAX_BINDS`] paths to cover.
    TooManyBinds,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::TooManyEntries => write!(
                f,
                "the workspace has more than {MAX_WALK_ENTRIES} entries to check against the \
                 configuration's path rules"
            ),
            PlanError::TooManyBinds => write!(
                f,
                "the configuration's path rules and the protected paths (.git, .vscode, ...) \
                 match more than {MAX_BINDS} files and directories; deny their directory \
                 instead, or remove protected entries the workspace does not need"
            ),
        }
    }
}

/// What run_shell's sandbox covers in a workspace now: the paths a run starting now would
/// hide and bind read-only (workspace-relative), as [`covered`] finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Covered {
    /// Files and directories covered by an empty read-only one (the command cannot read them).
    pub hidden: Vec<PathBuf>,
    /// Files and directories bound read-only (the command cannot change them, nor move them
    /// or the directories above a protected path away).
    pub read_only: Vec<PathBuf>,
    /// The protected entries found (names of [`crate::fs::protected`], root and nested).
    pub protected: Vec<PathBuf>,
    /// Whether looking for protected entries stopped at [`MAX_PROTECTED_ENTRIES`] before
    /// [`MAX_PROTECTED_DEPTH`], so deeper ones are not covered.
    pub protected_cut: bool,
}

/// What a run of `config` in the workspace at `root` would cover if it started now (for
/// `toolgate check`), without creating anything.
///
/// # Errors
/// Why a run could not be confined as `config` asks (too many entries or paths).
pub fn covered(root: &Path, config: &ShellConfig) -> Result<Covered, String> {
    let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
    let plan =
        plan(&root, config, &PathRules::new(config), false, None).map_err(|e| e.to_string())?;
    Ok(Covered {
        hidden: plan.hidden,
        read_only: plan.read_only,
        protected: plan.found.entries.keys().cloned().collect(),
        protected_cut: plan.found.cut,
    })
}

/// Paths to pin and to bind read-only, each once, with whether it is a directory. A path may
/// be both (a directory above one protected entry that is the target of a protected link):
/// the pin is mounted first, the read-only clone over it.
#[derive(Default)]
struct Marks {
    pins: Vec<(PathBuf, bool)>,
    read_only: Vec<(PathBuf, bool)>,
    pinned: HashSet<PathBuf>,
    made_read_only: HashSet<PathBuf>,
}

impl Marks {
    fn pin(&mut self, rel: &Path) {
        if self.pinned.insert(rel.to_path_buf()) {
            self.pins.push((rel.to_path_buf(), true));
        }
    }

    fn read_only(&mut self, rel: &Path, dir: bool) {
        if self.made_read_only.insert(rel.to_path_buf()) {
            self.read_only.push((rel.to_path_buf(), dir));
        }
    }
}

/// The plan for a run in the workspace at `root` (canonical) under `config` and `rules`
/// (see the module docs); `create` makes the protected directories that must exist first;
/// `earlier` is the last look for protected entries in this workspace, whose listings of
/// directories that have not changed since are taken as they are ([`find_protected`]).
///
/// # Errors
/// [`PlanError`] when the walk or the mounts would pass their bounds.
pub(crate) fn plan(
    root: &Path,
    config: &ShellConfig,
    rules: &PathRules,
    create: bool,
    earlier: Option<&Found>,
) -> Result<Plan, PlanError> {
    let mut marks = Marks::default();
    for rel in &config.protected {
        let rel = Path::new(rel);
        if !is_plain(rel) {
            continue;
        }
        if create {
            create_when_absent(root, rel);
        }
        if !pin_above(root, rel, &mut marks) {
            continue;
        }
        match std::fs::symlink_metadata(root.join(rel)) {
            Ok(m) if m.is_dir() => marks.read_only(rel, true),
            Ok(m) if m.is_file() => marks.read_only(rel, false),
            _ => {}
        }
    }
    let found = find_protected(root, earlier, false);
    for rel in found.entries.keys() {
        protect(root, rel, create, &mut marks);
    }
    let Marks {
        mut pins,
        mut read_only,
        ..
    } = marks;
    let mut hidden: Vec<(PathBuf, bool)> = Vec::new();
    if !rules.patterns.is_empty() {
        let mut walk = Walk {
            root,
            rules,
            seen: 0,
            hidden: &mut hidden,
            read_only: &mut read_only,
        };
        walk.dir(Path::new(""), 0)?;
    }
    // a pin is made before the mounts below it, so the read-only clones carry it
    pins.sort_by_key(|(p, _)| p.components().count());
    pins.dedup();
    let mut plan = Plan::default();
    for (rel, dir, kind) in pins
        .iter()
        .map(|(p, d)| (p, *d, BindKind::Pin))
        .chain(read_only.iter().map(|(p, d)| (p, *d, BindKind::ReadOnly)))
        .chain(hidden.iter().map(|(p, d)| (p, *d, BindKind::Hide)))
    {
        let Some(components) = components(rel) else {
            continue;
        };
        plan.binds.push(Bind {
            components,
            dir,
            kind,
        });
    }
    if plan.binds.len() > MAX_BINDS {
        return Err(PlanError::TooManyBinds);
    }
    plan.hidden = hidden.into_iter().map(|(p, _)| p).collect();
    plan.read_only = read_only.into_iter().map(|(p, _)| p).collect();
    plan.found = found;
    Ok(plan)
}

/// Pins every directory above `rel`; `false` when one is missing or a link (then `rel` is
/// not reachable as planned), or a regular file (bound read-only instead: `.git` of a linked
/// worktree).
fn pin_above(root: &Path, rel: &Path, marks: &mut Marks) -> bool {
    let mut above = PathBuf::new();
    for c in rel.parent().into_iter().flat_map(Path::components) {
        above.push(c);
        match std::fs::symlink_metadata(root.join(&above)) {
            Ok(m) if m.is_dir() => marks.pin(&above),
            Ok(m) if m.is_file() => {
                marks.read_only(&above, false);
                return false;
            }
            // a link (everything outside the workspace is read-only already) or nothing
            _ => return false,
        }
    }
    true
}

/// Marks the protected entry `rel` (found by [`find_protected`]): a git directory as the
/// module docs say, any other file or directory read-only whole, a link by what it leads to.
fn protect(root: &Path, rel: &Path, create: bool, marks: &mut Marks) {
    let Ok(meta) = std::fs::symlink_metadata(root.join(rel)) else {
        return;
    };
    let git = rel.file_name().is_some_and(protected::is_git_name);
    if meta.is_symlink() {
        if let Some(target) = link_target(root, rel) {
            if git {
                if target_is_dir(root, &target) {
                    git_dir(root, &target, create, marks, 0);
                } else {
                    protect_path(root, &target, marks);
                }
            } else {
                protect_path(root, &target, marks);
            }
        }
        return;
    }
    if git && meta.is_dir() {
        git_dir(root, rel, create, marks, 0);
    } else {
        protect_path(root, rel, marks);
    }
}

fn target_is_dir(root: &Path, rel: &Path) -> bool {
    std::fs::symlink_metadata(root.join(rel)).is_ok_and(|m| m.is_dir())
}

/// Where the link `rel` leads, relative to the root, when that is a file or directory inside
/// the workspace other than the root itself (the whole workspace cannot be read-only).
fn link_target(root: &Path, rel: &Path) -> Option<PathBuf> {
    let target = std::fs::canonicalize(root.join(rel)).ok()?;
    let inside = target.strip_prefix(root).ok()?;
    is_plain(inside).then(|| inside.to_path_buf())
}

/// Pins what is above `rel` and binds it read-only when it is a file or a directory; a link
/// there is resolved once (a link's target is canonical, so no further link follows).
fn protect_path(root: &Path, rel: &Path, marks: &mut Marks) {
    if !pin_above(root, rel, marks) {
        return;
    }
    match std::fs::symlink_metadata(root.join(rel)) {
        Ok(m) if m.is_dir() => marks.read_only(rel, true),
        Ok(m) if m.is_file() => marks.read_only(rel, false),
        Ok(m) if m.is_symlink() => {
            if let Some(target) = link_target(root, rel) {
                if pin_above(root, &target, marks) {
                    match std::fs::symlink_metadata(root.join(&target)) {
                        Ok(m) if m.is_dir() => marks.read_only(&target, true),
                        Ok(m) if m.is_file() => marks.read_only(&target, false),
                        _ => {}
                    }
                }
            }
        }
        _ => {}
    }
}

/// The entries of a git directory that run code or point git elsewhere.
const GIT_DIR_ENTRIES: [&str; 3] = ["config", "config.worktree", "hooks"];
/// How deep `modules/` is looked into for submodules' git directories (a submodule's name
/// may hold `/`, and submodules nest).
const MAX_MODULES_DEPTH: usize = 8;

/// Marks the git directory `rel`: its [`GIT_DIR_ENTRIES`] (`hooks` created when absent and
/// `create`), its linked worktrees' `config.worktree`, and each git directory under
/// `modules/` the same way.
fn git_dir(root: &Path, rel: &Path, create: bool, marks: &mut Marks, depth: usize) {
    if depth > MAX_MODULES_DEPTH || !pin_above(root, &rel.join("config"), marks) {
        return;
    }
    for name in GIT_DIR_ENTRIES {
        let entry = rel.join(name);
        if create && name == "hooks" && std::fs::symlink_metadata(root.join(&entry)).is_err() {
            if let Err(e) = std::fs::create_dir(root.join(&entry)) {
                tracing::warn!(path = %entry.display(), error = %e, "cannot create a git directory's hooks");
            }
        }
        protect_path(root, &entry, marks);
    }
    for worktree in subdirs(root, &rel.join("worktrees")) {
        let entry = worktree.join("config.worktree");
        if std::fs::symlink_metadata(root.join(&entry)).is_ok() {
            protect_path(root, &entry, marks);
        }
    }
    let mut stack: Vec<(PathBuf, usize)> = subdirs(root, &rel.join("modules"))
        .into_iter()
        .map(|d| (d, depth + 1))
        .collect();
    while let Some((dir, d)) = stack.pop() {
        if d > MAX_MODULES_DEPTH {
            continue;
        }
        if std::fs::symlink_metadata(root.join(&dir).join("HEAD")).is_ok() {
            git_dir(root, &dir, create, marks, d);
        } else {
            stack.extend(subdirs(root, &dir).into_iter().map(|s| (s, d + 1)));
        }
    }
}

/// The directories (not links) directly in `rel`, at most 1024.
fn subdirs(root: &Path, rel: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .take(1024)
        .map(|e| rel.join(e.file_name()))
        .collect()
}

/// How deep protected entries are looked for: paths of at most this many components.
pub const MAX_PROTECTED_DEPTH: usize = 8;
/// The most entries one run looks at for protected entries (before and again after it).
pub const MAX_PROTECTED_ENTRIES: usize = 200_000;
/// Directories the walk for protected entries does not enter: dependencies and build output
/// (see the module docs). Compared exactly: the command cannot rename a directory that holds
/// a protected entry (it is pinned), so it cannot hide one by renaming.
pub const SKIPPED_DIRS: [&str; 9] = [
    "node_modules",
    "vendor",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".cache",
    ".mypy_cache",
];

/// The protected entries of a workspace at one moment ([`find_protected`]).
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Each protected entry (relative to the root), with what tells it from another put in
    /// its place ([`Identity`]).
    entries: BTreeMap<PathBuf, Identity>,
    /// The directories whose every entry was looked at (`""` for the root).
    listed: HashMap<PathBuf, Listing>,
    /// Whether the walk stopped at [`MAX_PROTECTED_ENTRIES`].
    cut: bool,
    /// When the walk started.
    started: std::time::SystemTime,
}

impl Default for Found {
    fn default() -> Self {
        Found {
            entries: BTreeMap::new(),
            listed: HashMap::new(),
            cut: false,
            started: std::time::SystemTime::now(),
        }
    }
}

/// What one directory held when it was listed.
#[derive(Debug, Clone)]
struct Listing {
    ino: u64,
    /// Its status change time (seconds, nanoseconds): any entry added, removed or renamed in
    /// it sets this to the time of the change, and no system call sets it otherwise.
    ctime: (i64, i64),
    /// The directories below it the walk went on into.
    subdirs: Vec<PathBuf>,
    /// The protected entries in it.
    protected: Vec<PathBuf>,
    /// How many entries it held.
    count: usize,
    /// Whether `ctime` was older than the walk that read it by [`UNCHANGED_MARGIN`]: only
    /// then does an equal `ctime` later show that nothing changed since that read.
    settled: bool,
}

/// How long before a walk starts a directory must have last changed for the look after a run
/// to take its earlier listing as it is: the kernel stamps changes with a clock that may lag
/// the one read here by a tick (up to 10 ms), so a change during the run is always stamped
/// later than the walk's start minus this.
const UNCHANGED_MARGIN: std::time::Duration = std::time::Duration::from_millis(50);

/// What tells a protected entry from another put in its place during a run: its inode number
/// (which the file system may hand to the new entry once the old one is removed), its type,
/// and for a link where it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    ino: u64,
    kind: std::fs::FileType,
    link: Option<PathBuf>,
}

/// Looks for protected entries below `root` (see "Finding them" in the module docs).
///
/// A directory `earlier` listed that has not changed since (same inode, same status change
/// time, and that older than the start of the walk that read it by [`UNCHANGED_MARGIN`]) is
/// taken as listed then, without reading it again: before a run `earlier` is the last look in this
/// workspace, after it the look when it started. After a run (`free`), a directory listed
/// before is listed whatever the budget and does not count against it, so a run cannot keep
/// an entry it made there from being seen by filling the workspace with files.
pub(crate) fn find_protected(root: &Path, earlier: Option<&Found>, free: bool) -> Found {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    let mut found = Found::default();
    let settled_before = found.started.checked_sub(UNCHANGED_MARGIN);
    let mut queue = std::collections::VecDeque::from([(PathBuf::new(), 1usize)]);
    let mut seen = 0usize;
    'dirs: while let Some((rel, depth)) = queue.pop_front() {
        let prior = earlier.and_then(|b| b.listed.get(&rel).map(|l| (b, l)));
        let counted = !(free && prior.is_some());
        if counted && seen >= MAX_PROTECTED_ENTRIES {
            found.cut = true;
            continue;
        }
        let path = root.join(&rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let ctime = (meta.ctime(), meta.ctime_nsec());
        if let Some((b, old)) = prior {
            if old.settled && old.ino == meta.ino() && old.ctime == ctime {
                if counted {
                    seen += old.count;
                    if seen > MAX_PROTECTED_ENTRIES {
                        found.cut = true;
                        continue;
                    }
                }
                for p in &old.protected {
                    if let Some(identity) = b.entries.get(p) {
                        found.entries.insert(p.clone(), identity.clone());
                    }
                }
                queue.extend(old.subdirs.iter().map(|d| (d.clone(), depth + 1)));
                found.listed.insert(rel, old.clone());
                continue;
            }
        }
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        let mut listing = Listing {
            ino: meta.ino(),
            ctime,
            subdirs: Vec::new(),
            protected: Vec::new(),
            count: 0,
            settled: settled_before.is_some_and(|t| before_time(ctime, t)),
        };
        for entry in entries {
            let Ok(entry) = entry else {
                continue 'dirs;
            };
            listing.count += 1;
            if counted {
                seen += 1;
                if seen > MAX_PROTECTED_ENTRIES {
                    found.cut = true;
                    continue 'dirs;
                }
            }
            let name = entry.file_name();
            if protected::protected_name(&name).is_some() {
                let path = rel.join(&name);
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let link = kind
                    .is_symlink()
                    .then(|| std::fs::read_link(root.join(&path)).ok())
                    .flatten();
                found.entries.insert(
                    path.clone(),
                    Identity {
                        ino: entry.ino(),
                        kind,
                        link,
                    },
                );
                listing.protected.push(path);
                continue;
            }
            if depth < MAX_PROTECTED_DEPTH
                && entry.file_type().is_ok_and(|t| t.is_dir())
                && !name.to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n))
            {
                let path = rel.join(&name);
                listing.subdirs.push(path.clone());
                queue.push_back((path, depth + 1));
            }
        }
        found.listed.insert(rel, listing);
    }
    found
}

/// Whether the time `(seconds, nanoseconds)` since the epoch is before `t`.
fn before_time((secs, nanos): (i64, i64), t: std::time::SystemTime) -> bool {
    let Ok(t) = t.duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    i128::from(secs) * 1_000_000_000 + i128::from(nanos) < t.as_nanos() as i128
}

/// A protected entry a run created (see "What a run creates" in the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProtectedCreated {
    /// The entry, relative to the workspace root.
    pub path: String,
    /// Why it is protected (as the write tools say).
    pub protected: String,
    /// Where toolgate moved it, relative to the workspace root (under
    /// `.toolgate/quarantine/`); absent when it was left in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// What happened and what to do, for the model and the operator.
    pub note: String,
}

/// What the run that started with `before` created among the protected entries of the
/// workspace at `root`, each moved aside or left as the module docs say; and the look after
/// it (for the next run to start from).
pub(crate) fn created(root: &Path, before: &Found) -> (Vec<ProtectedCreated>, Found) {
    let after = find_protected(root, Some(before), true);
    let mut out = Vec::new();
    let mut quarantine: Option<Result<PathBuf, String>> = None;
    for (rel, identity) in &after.entries {
        if before.entries.get(rel) == Some(identity) {
            continue;
        }
        let Some(name) = rel.file_name() else {
            continue;
        };
        // a new repository (git init, git clone, a submodule's checkout): ordinary work,
        // unless it was given what runs code
        if protected::is_git_name(name) && !before.entries.contains_key(rel) {
            if let Some(concern) = new_repository_concern(root, rel) {
                let shown = rel.display().to_string();
                out.push(ProtectedCreated {
                    note: format!(
                        "the command made a new repository {shown:?} whose {concern}, beyond \
                         what git init and git clone write; such keys and hooks can make git run \
                         programs when it is used there outside the sandbox. It was left in \
                         place (from the next run on its configuration and hooks are \
                         read-only); tell the operator"
                    ),
                    path: shown,
                    protected: protected::protected_name(name)
                        .unwrap_or("git internals")
                        .to_string(),
                    moved_to: None,
                });
            }
            continue;
        }
        let parent = rel.parent().unwrap_or(Path::new(""));
        let in_existing_dir = before.listed.contains_key(parent);
        if !in_existing_dir && before.cut {
            // the walk before the run did not look there: it may have been there all along
            continue;
        }
        let why = protected::protected_name(name).unwrap_or("a protected path");
        let shown = rel.display().to_string();
        let entry = if in_existing_dir {
            let dest = quarantine
                .get_or_insert_with(|| quarantine_dir(root))
                .clone()
                .and_then(|q| move_aside(root, rel, &q).map(|()| q.join(rel)));
            match dest {
                Ok(dest) => ProtectedCreated {
                    path: shown.clone(),
                    protected: why.to_string(),
                    moved_to: Some(dest.display().to_string()),
                    note: format!(
                        "the command created {shown:?}, a protected path ({why}), which \
                         toolgate's tools do not write; toolgate moved it to {:?}, out of \
                         reach of the commands. Do not create it again: change files \
                         elsewhere, or ask the operator, who can move it back",
                        dest.display()
                    ),
                },
                Err(e) => ProtectedCreated {
                    path: shown.clone(),
                    protected: why.to_string(),
                    moved_to: None,
                    note: format!(
                        "the command created {shown:?}, a protected path ({why}), which \
                         toolgate's tools do not write; toolgate could not move it aside \
                         ({e}), so it is still there: tell the operator"
                    ),
                },
            }
        } else {
            ProtectedCreated {
                path: shown.clone(),
                protected: why.to_string(),
                moved_to: None,
                note: format!(
                    "the command created {shown:?}, a protected path ({why}), in a directory \
                     it created itself (a clone, an unpacked archive, a generated project), so \
                     it was left in place; from the next run on it is read-only. Tell the \
                     operator if it was not meant"
                ),
            }
        };
        tracing::warn!(path = %entry.path, moved_to = ?entry.moved_to, "run_shell created a protected path");
        out.push(entry);
    }
    (out, after)
}

/// The configuration keys (lower case; `*` any subsection) that `git init`, `git clone` and
/// `git submodule` write to a new repository, besides those `git -c` may set harmlessly.
const NEW_REPOSITORY_KEYS: [&str; 16] = [
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.worktree",
    "extensions.objectformat",
    "extensions.refstorage",
    "remote.*.url",
    "remote.*.fetch",
    "branch.*.remote",
    "branch.*.merge",
    "submodule.*.url",
    "submodule.*.active",
];

/// What a new git directory `rel` holds beyond what `git init` or `git clone` write: hooks
/// (other than the `.sample` ones) or configuration keys outside [`NEW_REPOSITORY_KEYS`] and
/// the harmless ones (`core.fsmonitor`, `diff.external`, an alias, an `include.path`...).
///
/// A `.git` file (`gitdir: PATH`, a submodule's checkout or a linked worktree) is judged by
/// the git directory it names, which must lie inside the workspace.
fn new_repository_concern(root: &Path, rel: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(root.join(rel)).ok()?;
    if meta.is_file() {
        return match git_file_target(root, rel) {
            Ok(target) => new_repository_concern(root, &target).map(|c| {
                format!(
                    "git directory {} (named by its gitdir line) {c}",
                    target.display()
                )
            }),
            Err(why) => Some(why),
        };
    }
    let dir = root.join(rel);
    if !meta.is_dir() {
        return None;
    }
    let mut concerns = Vec::new();
    let config = std::fs::File::open(dir.join("config")).ok().and_then(|f| {
        use std::io::Read;
        let mut text = Vec::new();
        f.take(1 << 20).read_to_end(&mut text).ok()?;
        Some(String::from_utf8_lossy(&text).into_owned())
    });
    let keys = unusual_git_keys(config.as_deref().unwrap_or(""));
    if !keys.is_empty() {
        concerns.push(format!("configuration sets {}", keys.join(", ")));
    }
    let hooks: Vec<String> = std::fs::read_dir(dir.join("hooks"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample"))
        .take(10)
        .collect();
    if !hooks.is_empty() {
        concerns.push(format!("hooks directory holds {}", hooks.join(", ")));
    }
    (!concerns.is_empty()).then(|| concerns.join(" and whose "))
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative to the file's directory or
/// absolute), relative to the root; why it cannot be judged otherwise.
fn git_file_target(root: &Path, rel: &Path) -> Result<PathBuf, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(root.join(rel))
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| format!("gitdir file cannot be read ({e})"))?;
    let Some(named) = text.trim().strip_prefix("gitdir:").map(str::trim) else {
        return Err("file is not a gitdir pointer".into());
    };
    let base = root.join(rel.parent().unwrap_or(Path::new("")));
    let target = std::fs::canonicalize(base.join(named))
        .map_err(|_| format!("gitdir line names {named:?}, which does not exist"))?;
    match target.strip_prefix(root) {
        Ok(inside) if is_plain(inside) => Ok(inside.to_path_buf()),
        _ => Err(format!(
            "gitdir line points git outside the workspace, at {}",
            target.display()
        )),
    }
}

/// The keys of a git configuration file that neither a new repository has nor `git -c` may
/// set harmlessly (section and key in lower case, as git compares them), at most 10.
fn unusual_git_keys(text: &str) -> Vec<String> {
    let mut section = String::new();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut rest = line.trim();
        if let Some(body) = rest.strip_prefix('[') {
            let Some((head, after)) = body.split_once(']') else {
                section.clear();
                continue;
            };
            section = match head.trim().split_once(char::is_whitespace) {
                Some((name, sub)) => {
                    format!(
                        "{}.{}",
                        name.to_ascii_lowercase(),
                        sub.trim().trim_matches('"')
                    )
                }
                None => head.trim().to_ascii_lowercase(),
            };
            rest = after.trim();
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let (key, value) = rest
            .split_once('=')
            .map_or((rest, "true"), |(k, v)| (k.trim(), v.trim()));
        let key = format!("{section}.{}", key.to_ascii_lowercase());
        let expected =
            toolgate_core::pattern::program::git_setting_is_harmless(&format!("{key}={value}"))
                || NEW_REPOSITORY_KEYS.iter().any(|p| git_key_matches(p, &key));
        if !expected && !out.contains(&key) && out.len() < 10 {
            out.push(key);
        }
    }
    out
}

/// Whether `key` is `pattern`, where `*` in `section.*.name` stands for any subsection.
fn git_key_matches(pattern: &str, key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    match pattern.split_once(".*.") {
        Some((section, name)) => lower
            .strip_prefix(section)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.strip_suffix(name))
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => lower == pattern,
    }
}

/// A new directory `.toolgate/quarantine/<unix seconds>-<n>` (relative to the root).
fn quarantine_dir(root: &Path) -> Result<PathBuf, String> {
    let store = root.join(".toolgate");
    match std::fs::symlink_metadata(&store) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(".toolgate is not a directory".into()),
        Err(e) => return Err(format!(".toolgate: {e}")),
    }
    let base = Path::new(".toolgate").join("quarantine");
    std::fs::create_dir_all(root.join(&base)).map_err(|e| format!("{}: {e}", base.display()))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for n in 0..1000 {
        let dir = base.join(format!("{secs}-{n}"));
        match std::fs::create_dir(root.join(&dir)) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        }
    }
    Err("no free name in .toolgate/quarantine".into())
}

/// Moves `rel` to `quarantine/rel` (both relative to the root), opening both parents from
/// the root without following links and renaming without replacing anything.
fn move_aside(root: &Path, rel: &Path, quarantine: &Path) -> Result<(), String> {
    use rustix::fs::{Mode, OFlags, RenameFlags};
    let (Some(name), Some(parent)) = (rel.file_name(), rel.parent()) else {
        return Err("not a path below the root".into());
    };
    let dest_parent = quarantine.join(parent);
    std::fs::create_dir_all(root.join(&dest_parent))
        .map_err(|e| format!("{}: {e}", dest_parent.display()))?;
    let root_fd = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("the workspace root: {e}"))?;
    let from =
        open_dir_beneath(&root_fd, parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let to = open_dir_beneath(&root_fd, &dest_parent)
        .map_err(|e| format!("{}: {e}", dest_parent.display()))?;
    rustix::fs::renameat_with(&from, name, &to, name, RenameFlags::NOREPLACE)
        .map_err(|e| format!("moving it: {e}"))
}

/// The directory `rel` opened beneath `root` one component at a time, never through a link.
fn open_dir_beneath(
    root: &std::os::fd::OwnedFd,
    rel: &Path,
) -> rustix::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    use std::os::fd::AsFd;
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::openat(root, ".", flags, Mode::empty())?;
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Err(rustix::io::Errno::INVAL);
        };
        dir = rustix::fs::openat(dir.as_fd(), name, flags, Mode::empty())?;
    }
    Ok(dir)
}

/// `.toolgate` is created when absent (so the command cannot create it), and `.git/hooks`
/// when `.git` is a directory.
fn create_when_absent(root: &Path, rel: &Path) {
    let path = root.join(rel);
    if path.symlink_metadata().is_ok() {
        return;
    }
    let parent_is_dir = path
        .parent()
        .and_then(|p| p.symlink_metadata().ok())
        .is_some_and(|m| m.is_dir());
    let creatable = rel == Path::new(".toolgate") || rel == Path::new(".git/hooks");
    if creatable && parent_is_dir {
        if let Err(e) = std::fs::create_dir(&path) {
            tracing::warn!(path = %path.display(), error = %e, "cannot create a protected directory");
        }
    }
}

/// Whether `rel` is a relative path of plain names.
fn is_plain(rel: &Path) -> bool {
    rel.components().count() > 0 && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

fn components(rel: &Path) -> Option<Vec<CString>> {
    rel.components()
        .map(|c| CString::new(c.as_os_str().as_bytes()).ok())
        .collect()
}

struct Walk<'a> {
    root: &'a Path,
    rules: &'a PathRules,
    seen: usize,
    hidden: &'a mut Vec<(PathBuf, bool)>,
    read_only: &'a mut Vec<(PathBuf, bool)>,
}

impl Walk<'_> {
    /// Looks at the entries of the directory `rel` (at `depth` components below the root).
    fn dir(&mut self, rel: &Path, depth: usize) -> Result<(), PlanError> {
        if self.rules.depth.is_some_and(|d| depth >= d) {
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(self.root.join(rel)) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            self.seen += 1;
            if self.seen > MAX_WALK_ENTRIES {
                return Err(PlanError::TooManyEntries);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue;
            }
            let path = rel.join(entry.file_name());
            let is_dir = kind.is_dir();
            if !is_dir && !kind.is_file() {
                continue;
            }
            match self.rules.decide(&path) {
                Some(BindKind::Hide) => self.hidden.push((path, is_dir)),
                Some(_) => self.read_only.push((path, is_dir)),
                None if is_dir => self.dir(&path, depth + 1)?,
                None => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use toolgate_core::pattern::MatchMode;

    fn pattern(p: &str) -> PathPattern {
        PathPattern::parse(p, MatchMode::Restrict).unwrap()
    }

    #[test]
    fn anchored_patterns_are_walked_to_their_depth_only() {
        for (p, depth) in [
            ("/.toolgate", Some(1)),
            ("/state/tg.db*", Some(2)),
            ("config/prod.env", Some(2)),
            (".env", None),
            ("secrets", None),
            ("/a/**/b", None),
            ("**/x", None),
        ] {
            assert_eq!(pattern_depth(&pattern(p)), depth, "{p}");
        }
    }

    #[test]
    fn the_plan_pins_binds_and_hides_what_exists() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for d in [".git/hooks", "app/secrets/sub", "docs", "big"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".git/config",
            "app/.env",
            ".ENV",
            "docs/a.md",
            "app/secrets/sub/k.pem",
            "sub.toml",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink("app/.env", root.join("link.env")).unwrap();
        let mut config = ShellConfig::default();
        config.protected.push("conf/toolgate.toml".into());
        config.hidden.push(pattern(".env"));
        config.hidden.push(pattern("secrets"));
        config.read_only.push(pattern("docs"));
        let rules = PathRules::new(&config);
        let plan = plan(root, &config, &rules, true, None).unwrap();
        let mut hidden = plan.hidden.clone();
        hidden.sort();
        assert_eq!(
            hidden,
            [".ENV", ".toolgate", "app/.env", "app/secrets"]
                .map(PathBuf::from)
                .to_vec()
        );
        let mut ro = plan.read_only.clone();
        ro.sort();
        assert_eq!(
            ro,
            [".git/config", ".git/hooks", ".toolgate", "docs"]
                .map(PathBuf::from)
                .to_vec()
        );
        // pins first (.git above the protected paths), hides last
        let kinds: Vec<BindKind> = plan.binds.iter().map(|b| b.kind).collect();
        assert_eq!(kinds.first(), Some(&BindKind::Pin));
        assert_eq!(kinds.last(), Some(&BindKind::Hide));
        assert!(root.join(".toolgate").is_dir(), ".toolgate is created");
        // a `.git` file (a linked worktree's pointer) is bound read-only, not walked through
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
        let plan = super::plan(root, &config, &rules, true, None).unwrap();
        assert!(
            plan.read_only.contains(&PathBuf::from(".git")),
            "{:?}",
            plan.read_only
        );
    }

    #[test]
    fn bounds_refuse_rather_than_leave_paths_uncovered() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..(MAX_BINDS + 1) {
            std::fs::write(t.path().join(format!("{i}.pem")), "k").unwrap();
        }
        let mut config = ShellConfig::default();
        config.hidden.push(pattern("*.pem"));
        let rules = PathRules::new(&config);
        assert!(matches!(
            plan(t.path(), &config, &rules, true, None),
            Err(PlanError::TooManyBinds)
        ));
    }
    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }

    #[test]
    fn protected_entries_are_found_at_depth_but_not_in_dependencies() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for f in [
            ".vscode/settings.json",
            "a/b/.ENVRC",
            "a/node_modules/x/.vscode/s.json",
            "vendor/p/.git/config",
            "src/main.rs",
            "1/2/3/4/5/6/7/.idea/x",
            "1/2/3/4/5/6/7/8/.idea/x",
        ] {
            touch(root, f);
        }
        let found = find_protected(root, None, false);
        let paths: Vec<&Path> = found.entries.keys().map(PathBuf::as_path).collect();
        assert_eq!(
            paths,
            [".vscode", "1/2/3/4/5/6/7/.idea", "a/b/.ENVRC"].map(Path::new)
        );
        assert!(!found.cut);
        assert!(
            found.listed.contains_key(Path::new("")) && found.listed.contains_key(Path::new("a/b"))
        );
        assert!(!found.listed.contains_key(Path::new("a/node_modules")));
    }

    #[test]
    fn a_git_directory_is_bound_by_its_config_and_hooks_with_its_submodules() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for f in [
            "sub/.git/config",
            "sub/.git/HEAD",
            "sub/.git/objects/ab/cd",
            "sub/.git/modules/libs/one/HEAD",
            "sub/.git/modules/libs/one/config",
            "sub/.git/modules/libs/one/modules/inner/HEAD",
            "sub/.git/modules/libs/one/modules/inner/config.worktree",
            "sub/.git/worktrees/w/config.worktree",
            "sub/.git/worktrees/w/HEAD",
        ] {
            touch(root, f);
        }
        let config = ShellConfig::default();
        let plan = plan(root, &config, &PathRules::new(&config), true, None).unwrap();
        let mut ro: Vec<&Path> = plan.read_only.iter().map(PathBuf::as_path).collect();
        ro.sort();
        assert_eq!(
            ro,
            [
                ".toolgate",
                "sub/.git/config",
                "sub/.git/hooks",
                "sub/.git/modules/libs/one/config",
                "sub/.git/modules/libs/one/hooks",
                "sub/.git/modules/libs/one/modules/inner/config.worktree",
                "sub/.git/modules/libs/one/modules/inner/hooks",
                "sub/.git/worktrees/w/config.worktree",
            ]
            .map(Path::new)
        );
        // objects, refs and HEAD stay writable; hooks were made so they cannot be made later
        assert!(root
            .join("sub/.git/modules/libs/one/modules/inner/hooks")
            .is_dir());
        let pins: Vec<&CString> = plan
            .binds
            .iter()
            .filter(|b| b.kind == BindKind::Pin)
            .map(|b| b.components.last().unwrap())
            .collect();
        assert!(pins.contains(&&CString::new(".git").unwrap()), "{pins:?}");
    }

    #[test]
    fn a_link_target_above_another_protected_entry_is_pinned_and_read_only() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        touch(root, "zz/.vscode/settings.json");
        touch(root, "zz/y/keep");
        std::os::unix::fs::symlink("..", root.join("zz/y/.idea")).unwrap();
        let config = ShellConfig::default();
        let plan = plan(root, &config, &PathRules::new(&config), false, None).unwrap();
        let kinds: Vec<(String, BindKind)> = plan
            .binds
            .iter()
            .map(|b| {
                let p: Vec<&str> = b.components.iter().map(|c| c.to_str().unwrap()).collect();
                (p.join("/"), b.kind)
            })
            .collect();
        let of = |p: &str| {
            kinds
                .iter()
                .filter(|(x, _)| x == p)
                .map(|(_, k)| *k)
                .collect::<Vec<_>>()
        };
        assert_eq!(of("zz"), [BindKind::Pin, BindKind::ReadOnly], "{kinds:?}");
        assert_eq!(of("zz/.vscode"), [BindKind::ReadOnly], "{kinds:?}");
    }

    #[test]
    fn a_listing_is_reused_only_while_its_directory_is_unchanged() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for f in ["a/b/c/x.rs", "a/b/.envrc", "d/y.rs"] {
            touch(root, f);
        }
        std::thread::sleep(UNCHANGED_MARGIN * 2);
        let first = find_protected(root, None, false);
        assert!(first.listed.values().all(|l| l.settled), "{first:?}");
        // right after the walk: an entry made, one replaced, a directory swapped for another
        touch(root, "a/b/c/.vscode/settings.json");
        std::fs::remove_file(root.join("a/b/.envrc")).unwrap();
        std::os::unix::fs::symlink("c", root.join("a/b/.envrc")).unwrap();
        std::fs::rename(root.join("d"), root.join("d-old")).unwrap();
        touch(root, "d/.idea/x");
        let second = find_protected(root, Some(&first), false);
        let paths: Vec<&Path> = second.entries.keys().map(PathBuf::as_path).collect();
        assert_eq!(
            paths,
            ["a/b/.envrc", "a/b/c/.vscode", "d/.idea"].map(Path::new)
        );
        assert_ne!(
            first.entries[Path::new("a/b/.envrc")],
            second.entries[Path::new("a/b/.envrc")]
        );
        // and what did not change is found again as it was
        let third = find_protected(root, Some(&second), false);
        assert_eq!(third.entries, second.entries);
    }

    #[test]
    fn a_new_repository_is_told_apart_by_what_runs_code() {
        let fresh = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = \
                     false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = \
                     /x/sub\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \
                     \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\
                     \tname = t\n";
        assert_eq!(unusual_git_keys(fresh), Vec::<String>::new());
        let evil = "[core]\n\tfsmonitor = touch pwned\n[Diff]\n\texternal=x\n[alias]\n\
                    \tst = !touch pwned\n[include] path = ../x\n[remote \"o\"] uploadpack = x\n";
        assert_eq!(
            unusual_git_keys(evil),
            [
                "core.fsmonitor",
                "diff.external",
                "alias.st",
                "include.path",
                "remote.o.uploadpack"
            ]
        );
        assert!(git_key_matches("remote.*.url", "REMOTE.a.b.URL"));
        assert!(!git_key_matches("remote.*.url", "remote.url"));
        assert!(!git_key_matches("remote.*.url", "remote..url"));
        // no panic on junk
        for junk in ["[", "[]", "=", "[a \"", "\u{feff}[core]\nx", "[core]]]\n=="] {
            let _ = unusual_git_keys(junk);
        }
    }

    #[test]
    fn a_new_git_file_is_judged_by_the_directory_it_names() {
        let t = tempfile::tempdir().unwrap();
        let root = &t.path().canonicalize().unwrap();
        touch(root, "real/.git/config");
        std::fs::write(root.join("real/.git/config"), "[core]\n\tbare = false\n").unwrap();
        let write = |rel: &str, text: &str| {
            touch(root, rel);
            std::fs::write(root.join(rel), text).unwrap();
        };
        write("a/.git", "gitdir: ../real/.git\n");
        assert_eq!(new_repository_concern(root, Path::new("a/.git")), None);
        write("real/.git/hooks/post-checkout", "touch pwned");
        let c = new_repository_concern(root, Path::new("a/.git")).unwrap();
        assert!(
            c.contains("real/.git") && c.contains("post-checkout"),
            "{c}"
        );
        write("b/.git", "gitdir: /etc\n");
        let c = new_repository_concern(root, Path::new("b/.git")).unwrap();
        assert!(c.contains("outside the workspace"), "{c}");
        for (rel, text) in [
            ("c/.git", "nonsense"),
            ("d/.git", "gitdir: ../nowhere"),
            ("e/.git", "gitdir: .."),
        ] {
            write(rel, text);
            assert!(
                new_repository_concern(root, Path::new(rel)).is_some(),
                "{rel}"
            );
        }
    }

    #[test]
    fn what_a_run_creates_is_moved_aside_or_listed_and_never_deleted() {
        let t = tempfile::tempdir().unwrap();
        let root = &t.path().canonicalize().unwrap();
        touch(root, "app/main.rs");
        std::fs::create_dir(root.join(".toolgate")).unwrap();
        let before = find_protected(root, None, false);
        touch(root, ".vscode/settings.json");
        touch(root, "app/.mcp.json");
        touch(root, "new/.husky/pre-commit");
        touch(root, "repo/.git/config");
        std::fs::write(root.join("repo/.git/config"), "[core]\n\tbare = false\n").unwrap();
        let (created, _) = created(root, &before);
        let got: Vec<(&str, Option<&str>)> = created
            .iter()
            .map(|c| (c.path.as_str(), c.moved_to.as_deref()))
            .collect();
        assert_eq!(got.len(), 3, "{created:?}");
        let q = created[0].moved_to.clone().unwrap();
        let q = Path::new(&q).parent().unwrap();
        assert!(q.starts_with(".toolgate/quarantine"), "{q:?}");
        assert_eq!(
            got,
            [
                (".vscode", Some(q.join(".vscode").to_str().unwrap())),
                (
                    "app/.mcp.json",
                    Some(q.join("app/.mcp.json").to_str().unwrap())
                ),
                ("new/.husky", None),
            ]
        );
        assert!(root.join(q).join(".vscode/settings.json").is_file());
        assert!(root.join(q).join("app/.mcp.json").is_file());
        assert!(!root.join(".vscode").exists() && root.join("new/.husky").is_dir());
        assert!(root.join("repo/.git/config").is_file());
        // without a store directory to move into, nothing is moved and the note says so
        std::fs::remove_dir_all(root.join(".toolgate")).unwrap();
        std::fs::write(root.join(".toolgate"), "").unwrap();
        let before = find_protected(root, None, false);
        touch(root, ".envrc");
        let (created, _) = super::created(root, &before);
        assert_eq!(created.len(), 1);
        assert!(created[0].moved_to.is_none() && created[0].note.contains("could not move"));
        assert!(root.join(".envrc").is_file());
    }
}
