//! What a run's private mount namespace puts over workspace paths: the plan the parent makes
//! before each run, which `sandbox.rs` applies in the child.
//!
//! In order:
//!
//! 1. every directory above a protected path ([`ShellConfig::protected`]: `.toolgate`,
//!    `.git/hooks`, `.git/config`, the configuration file) is pinned, so the protected path
//!    cannot be moved away with its directory and replaced by a new one (`mv .git .git-old`);
//!    a regular file found where a directory should be (`.git` of a linked worktree, which
//!    names the real git directory) is bound read-only instead;
//! 2. each protected path that exists is bound read-only onto itself: neither its content
//!    nor its directory entry can change (writing, `rm`, `mv`, a rename over it and a hard
//!    link to it all fail); `.toolgate` is created first when absent, so it cannot be
//!    created by the command either;
//! 3. the workspace is walked against [`ShellConfig::read_only`] (paths the configuration
//!    denies writing) and [`ShellConfig::hidden`] (paths it denies reading, and the store):
//!    each file or directory they match is bound read-only, or covered by an empty read-only
//!    file or directory; the walk does not descend below a match (the mount covers it) nor
//!    follow links (a link is resolved where it leads, and a match there is covered).
//!
//! What the walk finds is what exists when the run starts: a file created later that a
//! pattern matches is not covered until the next run (`toolgate check` says so), and a hard
//! link made earlier under another name is not either. Patterns anchored at the root without
//! `**` are walked only to their depth; any other needs the whole tree, at most
//! [`MAX_WALK_ENTRIES`] entries (more refuses the run) and [`MAX_BINDS`] mounts.

use super::sandbox::{Bind, BindKind};
use super::ShellConfig;
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
                "the configuration's path rules match more than {MAX_BINDS} files and \
                 directories; deny their directory instead"
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
}

/// What a run of `config` in the workspace at `root` would cover if it started now (for
/// `toolgate check`), without creating anything.
///
/// # Errors
/// Why a run could not be confined as `config` asks (too many entries or paths).
pub fn covered(root: &Path, config: &ShellConfig) -> Result<Covered, String> {
    let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
    let plan = plan(&root, config, &PathRules::new(config), false).map_err(|e| e.to_string())?;
    Ok(Covered {
        hidden: plan.hidden,
        read_only: plan.read_only,
    })
}

/// The plan for a run in the workspace at `root` (canonical) under `config` and `rules`
/// (see the module docs); `create` makes the protected directories that must exist first.
///
/// # Errors
/// [`PlanError`] when the walk or the mounts would pass their bounds.
pub(crate) fn plan(
    root: &Path,
    config: &ShellConfig,
    rules: &PathRules,
    create: bool,
) -> Result<Plan, PlanError> {
    let mut pins: Vec<(PathBuf, bool)> = Vec::new();
    let mut read_only: Vec<(PathBuf, bool)> = Vec::new();
    for rel in &config.protected {
        let rel = Path::new(rel);
        if !is_plain(rel) {
            continue;
        }
        if create {
            create_when_absent(root, rel);
        }
        let mut above = PathBuf::new();
        let mut reachable = true;
        for c in rel.parent().into_iter().flat_map(Path::components) {
            above.push(c);
            match std::fs::symlink_metadata(root.join(&above)) {
                Ok(m) if m.is_dir() => pins.push((above.clone(), true)),
                Ok(m) if m.is_file() => {
                    read_only.push((above.clone(), false));
                    reachable = false;
                    break;
                }
                // a link (everything outside the workspace is read-only already) or nothing
                _ => {
                    reachable = false;
                    break;
                }
            }
        }
        if !reachable {
            continue;
        }
        match std::fs::symlink_metadata(root.join(rel)) {
            Ok(m) if m.is_dir() => read_only.push((rel.to_path_buf(), true)),
            Ok(m) if m.is_file() => read_only.push((rel.to_path_buf(), false)),
            _ => {}
        }
    }
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
    Ok(plan)
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
        let plan = plan(root, &config, &rules, true).unwrap();
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
        let plan = super::plan(root, &config, &rules, true).unwrap();
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
            plan(t.path(), &config, &rules, true),
            Err(PlanError::TooManyBinds)
        ));
    }
}
