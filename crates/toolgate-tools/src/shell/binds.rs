//! What a run's private mount namespace puts over workspace paths: the plan the parent makes
//! before each run, which `sandbox.rs` applies in the child, and what the parent checks after
//! it.
//!
//! In order:
//!
//! 1. the protected entries are found: every file, directory or link whose name is one of
//!    the protected names of [`crate::fs::protected`] (the one list the write tools refuse:
//!    `.git`, `.toolgate`, `toolgate.toml`, editors' and agents' settings (`.vscode`,
//!    `.claude`, `.cursor`, `.mcp.json`, ...), `.husky`, `.devcontainer`, `.envrc`,
//!    `.gitconfig`, the shells' start-up files, `.ssh`; any spelling the file systems take for the same name, such as
//!    `.VSCode`), at the root and below it (`protected_scan.rs` says how far it looks and what
//!    it costs),
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
//!    file or directory, and every directory above it is pinned (as in step 2: `mv secrets
//!    s2` would carry the cover along and leave the file under a name the rules do not match
//!    at the next run); the walk does not descend below a match (the mount covers it) nor
//!    follow links (a link is resolved where it leads, and a match there is covered).
//!
//! When the run ends, `created.rs` looks again and deals with the protected entries the
//! command created, which no mount could hold since they did not exist.
//!
//! What the rule walk finds is what exists when the run starts: a file created later that a
//! pattern matches is not covered until the next run (`toolgate check` says so), and a hard
//! link made earlier under another name is not either. Patterns anchored at the root without
//! `**` are walked only to their depth; any other needs the whole tree, at most
//! [`MAX_WALK_ENTRIES`] entries (more refuses the run) and [`MAX_BINDS`] mounts.

use super::protected_scan::{find_protected_within, Found, MAX_PROTECTED_ENTRIES};
use super::sandbox::{Bind, BindKind};
use super::ShellConfig;
use crate::fs::protected;
use std::collections::HashSet;
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
    /// More than [`MAX_PROTECTED_ENTRIES`](super::MAX_PROTECTED_ENTRIES) entries to look
    /// through for protected paths: those past the budget could not be made read-only.
    ProtectedLookCut,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::TooManyEntries => write!(
                f,
                "the workspace has more than {MAX_WALK_ENTRIES} entries to check against the \
                 configuration's path rules"
            ),
            PlanError::ProtectedLookCut => write!(
                f,
                "the workspace has more than {} entries (outside {}) to look through for \
                 protected paths (.git, .vscode, ...), so those past them could not be kept \
                 read-only; remove what the workspace does not need (generated files), or ask \
                 the operator",
                super::MAX_PROTECTED_ENTRIES,
                super::SKIPPED_DIRS.join(", ")
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
    /// Whether looking for protected entries stopped at
    /// [`MAX_PROTECTED_ENTRIES`](super::MAX_PROTECTED_ENTRIES) before
    /// [`MAX_PROTECTED_DEPTH`](super::MAX_PROTECTED_DEPTH), so deeper ones are not covered.
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
    plan_within(root, config, rules, create, earlier, MAX_PROTECTED_ENTRIES)
}

/// [`plan`] with a look for protected entries of at most `budget` entries.
fn plan_within(
    root: &Path,
    config: &ShellConfig,
    rules: &PathRules,
    create: bool,
    earlier: Option<&Found>,
    budget: usize,
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
    let found = find_protected_within(root, earlier, false, budget);
    // a run must not start with protected entries it could not find: fail closed (a command
    // that filled the workspace past the budget would otherwise have them writable next run)
    if create && found.cut {
        return Err(PlanError::ProtectedLookCut);
    }
    for rel in found.entries.keys() {
        protect(root, rel, create, &mut marks);
    }
    let Marks {
        mut pins,
        mut read_only,
        pinned,
        ..
    } = marks;
    let mut hidden: Vec<(PathBuf, bool)> = Vec::new();
    if !rules.patterns.is_empty() {
        let protected_read_only = read_only.len();
        let mut walk = Walk {
            root,
            rules,
            seen: 0,
            hidden: &mut hidden,
            read_only: &mut read_only,
        };
        walk.dir(Path::new(""), 0)?;
        // the directories above what the rules cover are pinned as well: renaming one (`mv
        // secrets s2`) carried the cover along and left the file, at the next run, under a
        // name the rules do not match
        let mut above = Marks {
            pinned,
            ..Marks::default()
        };
        for (rel, _) in hidden.iter().chain(&read_only[protected_read_only..]) {
            pin_above(root, rel, &mut above);
        }
        pins.append(&mut above.pins);
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
pub(super) const MAX_MODULES_DEPTH: usize = 8;

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
pub(super) fn subdirs(root: &Path, rel: &Path) -> Vec<PathBuf> {
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
        } else if rel == Path::new(".toolgate") {
            // as the workspace's state directory keeps itself out of the user's git status
            // (`Workspace::state_dir`); new, so nothing is there to be followed
            let _ = std::fs::write(
                path.join(".gitignore"),
                "# toolgate's own state: the store, logs, quarantined entries\n*\n",
            );
        }
    }
}

/// Whether `rel` is a relative path of plain names.
pub(super) fn is_plain(rel: &Path) -> bool {
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
        self.dir_named(rel, rel, depth, 0)
    }

    /// Looks at the entries of the directory `rel`, matching the rules against them under the
    /// name `named` (another name when `rel` was reached through a link: `secrets` linking to
    /// `private`, matched as `secrets/...`); `links` counts the links followed so far.
    fn dir_named(
        &mut self,
        rel: &Path,
        named: &Path,
        depth: usize,
        links: usize,
    ) -> Result<(), PlanError> {
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
            let path = rel.join(entry.file_name());
            let name = named.join(entry.file_name());
            if kind.is_symlink() {
                // a link the rules name (`.env` to `settings/prod.env`, `secrets` to
                // `private` under `secrets/**`): what it leads to inside the workspace is
                // covered as the link would be
                let Some(target) = link_target(self.root, &path) else {
                    continue;
                };
                let is_dir = target_is_dir(self.root, &target);
                match self.rules.decide(&name) {
                    Some(BindKind::Hide) => self.hidden.push((target, is_dir)),
                    Some(_) => self.read_only.push((target, is_dir)),
                    None if is_dir && links < MAX_WALK_LINKS => {
                        self.dir_named(&target, &name, depth + 1, links + 1)?
                    }
                    None => {}
                }
                continue;
            }
            let is_dir = kind.is_dir();
            if !is_dir && !kind.is_file() {
                continue;
            }
            match self.rules.decide(&name) {
                Some(BindKind::Hide) => self.hidden.push((path, is_dir)),
                Some(_) => self.read_only.push((path, is_dir)),
                None if is_dir => self.dir_named(&path, &name, depth + 1, links)?,
                None => {}
            }
        }
        Ok(())
    }
}

/// The most links one branch of the rule walk follows (a loop of links ends there).
const MAX_WALK_LINKS: usize = 8;

#[cfg(test)]
mod tests {
    use super::super::test_files::touch;
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
        // the directories above what the rules cover are pinned: `mv app app2` cannot carry
        // the covers of app/.env and app/secrets away
        let pins: Vec<String> = plan
            .binds
            .iter()
            .filter(|b| b.kind == BindKind::Pin)
            .map(|b| {
                b.components
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        for dir in ["app", ".git"] {
            assert!(pins.contains(&dir.to_string()), "{dir}: {pins:?}");
        }
        assert!(!pins.contains(&"docs".to_string()), "{pins:?}");
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

    /// A link the rules name covers what it leads to, a file (`.env` to `settings/prod.env`)
    /// or a directory whose entries the rules name through the link (`secrets` to `private`
    /// under `secrets/**`).
    #[test]
    fn what_a_named_link_leads_to_is_covered() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        touch(root, "settings/prod.env");
        touch(root, "private/key.txt");
        touch(root, "private/readme.md");
        std::os::unix::fs::symlink("settings/prod.env", root.join(".env")).unwrap();
        std::os::unix::fs::symlink("private", root.join("secrets")).unwrap();
        // a loop of links ends
        std::os::unix::fs::symlink("..", root.join("private/up")).unwrap();
        let mut config = ShellConfig::default();
        config.hidden.push(pattern(".env"));
        config.hidden.push(pattern("secrets/*.txt"));
        let rules = PathRules::new(&config);
        let plan = plan(root, &config, &rules, false, None).unwrap();
        for p in ["settings/prod.env", "private/key.txt"] {
            assert!(
                plan.hidden.contains(&PathBuf::from(p)),
                "{p}: {:?}",
                plan.hidden
            );
        }
        assert!(!plan.hidden.contains(&PathBuf::from("private/readme.md")));
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

    /// A look for protected entries cut by its budget refuses the run (fail closed: a
    /// command that filled the workspace would otherwise leave the next run's protected
    /// entries past the budget writable); `toolgate check`'s look (no run) reports the cut.
    #[test]
    fn a_look_cut_by_its_budget_refuses_the_run() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..50 {
            touch(t.path(), &format!("junk/{i}"));
        }
        touch(t.path(), "zz/.vscode/settings.json");
        let config = ShellConfig::default();
        let rules = PathRules::new(&config);
        let e =
            plan_within(t.path(), &config, &rules, true, None, 20).expect_err("a cut look refuses");
        assert!(matches!(e, PlanError::ProtectedLookCut));
        assert!(e.to_string().contains("could not be kept read-only"), "{e}");
        let seen = plan_within(t.path(), &config, &rules, false, None, 20).unwrap();
        assert!(seen.found.cut);
        // within the budget the run is planned, the nested entry bound read-only
        let ok = plan_within(t.path(), &config, &rules, true, None, 1_000).unwrap();
        assert!(!ok.found.cut);
        assert!(
            ok.read_only.contains(&PathBuf::from("zz/.vscode")),
            "{:?}",
            ok.read_only
        );
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
}
