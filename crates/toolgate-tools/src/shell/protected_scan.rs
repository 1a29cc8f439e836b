//! How run_shell finds the protected entries of a workspace (the names of
//! [`crate::fs::protected`]) that `binds.rs` binds read-only before a run, and that
//! `created.rs` compares with a second look after it.
//!
//! Protected entries are looked for breadth first, the root's first, without following
//! links, to [`MAX_PROTECTED_DEPTH`] components and at most [`MAX_PROTECTED_ENTRIES`] entries
//! a run. Past that budget the run is refused (`sandbox_failed`): an entry the look did not
//! reach could not be kept read-only, and a command could otherwise fill the workspace with
//! files to make the next run's protections lapse; `toolgate check` says so too.
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

use crate::fs::protected;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// How deep protected entries are looked for: paths of at most this many components.
pub const MAX_PROTECTED_DEPTH: usize = 8;
/// The most entries one run looks at for protected entries (before and again after it).
pub const MAX_PROTECTED_ENTRIES: usize = 1_000_000;
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
    pub(super) entries: BTreeMap<PathBuf, Identity>,
    /// The directories whose every entry was looked at (`""` for the root).
    pub(super) listed: HashMap<PathBuf, Listing>,
    /// Whether the walk stopped at [`MAX_PROTECTED_ENTRIES`].
    pub(super) cut: bool,
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
pub(super) struct Listing {
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
pub(super) struct Identity {
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
    find_protected_within(root, earlier, free, MAX_PROTECTED_ENTRIES)
}

/// [`find_protected`] with a budget of `budget` entries instead of [`MAX_PROTECTED_ENTRIES`].
pub(crate) fn find_protected_within(
    root: &Path,
    earlier: Option<&Found>,
    free: bool,
    budget: usize,
) -> Found {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    let mut found = Found::default();
    let settled_before = found.started.checked_sub(UNCHANGED_MARGIN);
    let mut queue = std::collections::VecDeque::from([(PathBuf::new(), 1usize)]);
    let mut seen = 0usize;
    'dirs: while let Some((rel, depth)) = queue.pop_front() {
        let prior = earlier.and_then(|b| b.listed.get(&rel).map(|l| (b, l)));
        let counted = !(free && prior.is_some());
        if counted && seen >= budget {
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
                    if seen > budget {
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
                if seen > budget {
                    found.cut = true;
                    continue 'dirs;
                }
            }
            let name = entry.file_name();
            if protected::protected_entry(rel.file_name(), &name).is_some() {
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

#[cfg(test)]
mod tests {
    use super::super::test_files::touch;
    use super::*;
    use pretty_assertions::assert_eq;

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
            ".config/git/config",
            ".config/nextest.toml",
            "x/git/config",
        ] {
            touch(root, f);
        }
        let found = find_protected(root, None, false);
        let paths: Vec<&Path> = found.entries.keys().map(PathBuf::as_path).collect();
        assert_eq!(
            paths,
            [
                ".config/git",
                ".vscode",
                "1/2/3/4/5/6/7/.idea",
                "a/b/.ENVRC"
            ]
            .map(Path::new)
        );
        assert!(!found.cut);
        assert!(
            found.listed.contains_key(Path::new("")) && found.listed.contains_key(Path::new("a/b"))
        );
        assert!(!found.listed.contains_key(Path::new("a/node_modules")));
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
}
