//! What a run created among the protected paths, and what toolgate does with it.
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
//! - a `commondir` file inside a git directory that was there before the run (its own, a
//!   submodule's under `modules/`, or a linked worktree's under `worktrees/` that does not
//!   hold git's `../..`): it makes git take the configuration and hooks from the directory it
//!   names, around the read-only `config` and `hooks`, so it is moved aside and listed, and a
//!   linked worktree's gets git's `../..` back;
//! - created in a directory the run created itself (a clone, an unpacked archive, a
//!   generated project): left in place and listed, since moving it would break what the run
//!   was for and no editor has that directory open yet.
//!
//! The look after the run lists every directory listed before it whatever the budget, so a
//! command cannot hide what it made there by filling the workspace with entries; the budget
//! only bounds directories the run made. A move is done from directory descriptors opened
//! from the root without following links, so nothing outside the workspace is moved; one
//! that fails leaves the entry in place and the result says so. Not seen: what a run creates
//! deeper than [`MAX_PROTECTED_DEPTH`](super::protected_scan::MAX_PROTECTED_DEPTH) or in a [`SKIPPED_DIRS`](super::protected_scan::SKIPPED_DIRS) directory, and inside an
//! existing git directory, other than a `commondir`, unless a new `.git` file names it.

use super::binds::{is_plain, subdirs};
use super::protected_scan::{find_protected, Found};
use crate::fs::protected;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

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
        let why =
            protected::protected_entry(parent.file_name(), name).unwrap_or("a protected path");
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
                         elsewhere, or ask the operator, who can move it back. If git \
                         tracks it (a branch checked out), git now shows it deleted: leave \
                         that out of commits (add files by name, not git add -A or git \
                         commit -a)",
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
    for rel in after.entries.keys() {
        let is_old_git_dir = rel.file_name().is_some_and(protected::is_git_name)
            && before.entries.contains_key(rel)
            && std::fs::symlink_metadata(root.join(rel)).is_ok_and(|m| m.is_dir());
        if !is_old_git_dir {
            continue;
        }
        for file in foreign_commondirs(root, rel) {
            let shown = file.display().to_string();
            let dest = quarantine
                .get_or_insert_with(|| quarantine_dir(root))
                .clone()
                .and_then(|q| move_aside(root, &file, &q).map(|()| q.join(&file)));
            // a linked worktree's directory gets git's own pointer back, so the worktree
            // still works; a repository's own git directory needs none
            let in_worktree = file
                .parent()
                .and_then(Path::parent)
                .is_some_and(|p| p.file_name().is_some_and(|n| n == "worktrees"));
            let restored = dest.is_ok() && in_worktree && restore_commondir(root, &file).is_ok();
            let entry = ProtectedCreated {
                path: shown.clone(),
                protected: COMMONDIR_WHY.to_string(),
                moved_to: dest.as_ref().ok().map(|d| d.display().to_string()),
                note: match &dest {
                    Ok(d) => format!(
                        "the command wrote {shown:?}, which makes git take this repository's \
                         configuration and hooks from another directory (so git run outside \
                         the sandbox would run what that directory names); git writes one only \
                         in a linked worktree's directory, holding \"../..\". toolgate moved it \
                         to {:?}{}. Do not write files inside .git: use git commands, or ask \
                         the operator",
                        d.display(),
                        if restored {
                            " and wrote git's \"../..\" in its place"
                        } else {
                            ""
                        }
                    ),
                    Err(e) => format!(
                        "the command wrote {shown:?}, which makes git take this repository's \
                         configuration and hooks from another directory; toolgate could not \
                         move it aside ({e}), so it is still there: tell the operator"
                    ),
                },
            };
            tracing::warn!(path = %entry.path, moved_to = ?entry.moved_to, "run_shell wrote a git commondir");
            out.push(entry);
        }
    }
    (out, after)
}

/// Writes git's own `../..` to the linked worktree's `commondir` at `rel` (just moved aside),
/// creating it beneath the root without following links and without replacing anything.
fn restore_commondir(root: &Path, rel: &Path) -> Result<(), String> {
    use rustix::fs::{Mode, OFlags};
    let (Some(name), Some(parent)) = (rel.file_name(), rel.parent()) else {
        return Err("not a path below the root".into());
    };
    let root_fd = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("the workspace root: {e}"))?;
    let dir =
        open_dir_beneath(&root_fd, parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let fd = rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| format!("{}: {e}", rel.display()))?;
    use std::io::Write;
    std::fs::File::from(fd)
        .write_all(b"../..\n")
        .map_err(|e| format!("{}: {e}", rel.display()))
}

/// Why a `commondir` file in a git directory is protected.
const COMMONDIR_WHY: &str = "git's pointer to a repository's common directory, whose \
    configuration and hooks git then uses";

/// The `commondir` files of the git directory `rel` (and of its submodules' git directories
/// under `modules/`) that git did not write: git writes one only in a linked worktree's
/// directory (`worktrees/<name>/commondir`, holding `../..`). Any other makes git read the
/// configuration and hooks of the directory it names, so a command could plant a
/// `core.fsmonitor` there for the user's next `git status` outside the sandbox, though the
/// repository's own `config` and `hooks` are read-only.
fn foreign_commondirs(root: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(rel.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        if depth > super::binds::MAX_MODULES_DEPTH {
            continue;
        }
        let own = dir.join("commondir");
        if std::fs::symlink_metadata(root.join(&own)).is_ok() {
            out.push(own);
        }
        for worktree in subdirs(root, &dir.join("worktrees")) {
            let file = worktree.join("commondir");
            let Ok(meta) = std::fs::symlink_metadata(root.join(&file)) else {
                continue;
            };
            let written_by_git = meta.is_file()
                && meta.len() < 64
                && std::fs::read_to_string(root.join(&file)).is_ok_and(|t| t.trim_end() == "../..");
            if !written_by_git {
                out.push(file);
            }
        }
        let mut modules: Vec<(PathBuf, usize)> = subdirs(root, &dir.join("modules"))
            .into_iter()
            .map(|d| (d, depth + 1))
            .collect();
        while let Some((m, d)) = modules.pop() {
            if d > super::binds::MAX_MODULES_DEPTH {
                continue;
            }
            if std::fs::symlink_metadata(root.join(&m).join("HEAD")).is_ok() {
                stack.push((m, d));
            } else {
                modules.extend(subdirs(root, &m).into_iter().map(|s| (s, d + 1)));
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::super::test_files::touch;
    use super::*;
    use pretty_assertions::assert_eq;

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
        // a moved entry git tracks shows as deleted: the note says to keep that out of commits
        assert!(
            created[0].note.contains("leave that out of commits"),
            "{}",
            created[0].note
        );
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

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn a_commondir_git_did_not_write_is_moved_aside() {
        let t = tempfile::tempdir().unwrap();
        let root = &t.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".toolgate")).unwrap();
        git(root, &["init", "-q"]);
        touch(root, "a");
        git(root, &["add", "a"]);
        git(root, &["commit", "-qm", "a"]);
        git(root, &["worktree", "add", "-q", "wt"]);
        // a copy of the git directory with a configuration that runs a program at git status
        git(root, &["clone", "-q", "--bare", ".", "evil"]);
        std::fs::write(
            root.join("evil/config"),
            "[core]\n\tfsmonitor = touch pwned\n",
        )
        .unwrap();
        let before = find_protected(root, None, false);
        // git's own worktree pointer is left alone
        let (created, _) = created(root, &before);
        assert_eq!(created, []);
        // the repository's and the worktree's pointed at it, as a command can write them
        std::fs::write(root.join(".git/commondir"), "../evil\n").unwrap();
        std::fs::write(root.join(".git/worktrees/wt/commondir"), "../../../evil\n").unwrap();
        assert!(git(root, &["config", "core.fsmonitor"]).contains("touch pwned"));
        let (created, _) = super::created(root, &before);
        let got: Vec<&str> = created.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            got,
            [".git/commondir", ".git/worktrees/wt/commondir"],
            "{created:?}"
        );
        for c in &created {
            let moved = root.join(c.moved_to.as_deref().unwrap());
            assert!(moved.starts_with(root.join(".toolgate/quarantine")) && moved.is_file());
            assert!(c
                .note
                .contains("configuration and hooks from another directory"));
        }
        assert!(!root.join(".git/commondir").exists());
        // the worktree has git's pointer back and works
        assert_eq!(
            std::fs::read_to_string(root.join(".git/worktrees/wt/commondir")).unwrap(),
            "../..\n"
        );
        assert!(
            created[1].note.contains("wrote git's"),
            "{}",
            created[1].note
        );
        let wt_common = git(&root.join("wt"), &["rev-parse", "--git-common-dir"]);
        assert_eq!(Path::new(wt_common.trim()), root.join(".git"));
        // git reads the repository's own configuration again
        let common = git(root, &["rev-parse", "--git-common-dir"]);
        assert_eq!(common.trim(), ".git");
        assert!(!git(root, &["config", "--list"]).contains("fsmonitor"));
    }
}
