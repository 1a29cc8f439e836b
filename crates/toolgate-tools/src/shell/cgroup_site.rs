//! Where runs' cgroups are made on this machine ([`site`], a [`CgroupSite`]), probed once per
//! process, and the names that tie each cgroup to the toolgate process that made it.
//!
//! From `/proc/self/mountinfo` and toolgate's own cgroups in `/proc/self/cgroup`, in order:
//!
//! 1. cgroup v1 (or a hybrid machine): the `pids` hierarchy (and the `memory` one when
//!    mounted), under toolgate's own cgroup in each;
//! 2. a pure cgroup v2: a cgroup whose `cgroup.subtree_control` hands `pids` (and `memory`) to
//!    its children: toolgate's own (when it hands them on already, or toolgate may enable them
//!    there: the root cgroup, which the no-internal-processes rule exempts) or, when toolgate
//!    was started in a leaf of a delegated subtree (systemd's `Delegate=yes` with
//!    `DelegateSubgroup=`, a container whose entry point moved itself into a child cgroup),
//!    its parent. toolgate never moves its own process.
//!
//! Each candidate is proven by making and removing a cgroup there. Then the cgroups left by a
//! toolgate process that is no longer running (a crash) are removed when empty: each is named
//! `toolgate-run-PID-START-N` after the process that made it, its pid and its start time (so
//! a later process with the same pid is not taken for it).

use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The prefix of every cgroup toolgate makes.
pub(super) const PREFIX: &str = "toolgate-run-";

/// Where runs' cgroups are made on this machine, as `toolgate check` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CgroupSite {
    /// The cgroup version: 1 (the `pids` and `memory` hierarchies, also on a hybrid
    /// machine) or 2.
    pub version: u8,
    /// The directory in which each run's cgroup with `pids.max` is made.
    pub pids: PathBuf,
    /// The directory in which each run's memory cgroup is made (v2: the same as `pids`);
    /// `None` without a memory controller, and then the memory of a run is not capped.
    pub memory: Option<PathBuf>,
}

impl CgroupSite {
    /// The site in words: `cgroup v1 (pids under /sys/fs/cgroup/pids, memory under ...)`.
    pub fn describe(&self) -> String {
        let memory = match &self.memory {
            Some(m) if *m == self.pids => String::from(" with memory"),
            Some(m) => format!(", memory under {}", m.display()),
            None => String::from(", no memory controller"),
        };
        format!(
            "cgroup v{} (pids under {}{memory})",
            self.version,
            self.pids.display()
        )
    }
}

/// The site of this machine, probed once per process (and stale cgroups of earlier toolgate
/// processes removed then); `None` when it gives toolgate none.
pub(crate) fn site() -> Option<&'static CgroupSite> {
    static SITE: OnceLock<Option<CgroupSite>> = OnceLock::new();
    SITE.get_or_init(|| {
        let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        let site = find(&parse_mounts(&mounts), &parse_own(&own))?;
        for dir in site.dirs() {
            remove_stale(dir, site.version);
        }
        Some(site)
    })
    .as_ref()
}

impl CgroupSite {
    /// Its distinct directories, the pids one first.
    pub(super) fn dirs(&self) -> Vec<&Path> {
        let mut dirs = vec![self.pids.as_path()];
        if let Some(m) = self.memory.as_deref().filter(|m| *m != self.pids) {
            dirs.push(m);
        }
        dirs
    }
}

/// One cgroup mount of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    /// The cgroup the mount shows at its mount point (`/` unless a container bound a subtree).
    root: String,
    /// Where it is mounted.
    point: PathBuf,
    /// cgroup2 rather than a v1 hierarchy.
    v2: bool,
    /// The v1 controllers of the hierarchy (its super options).
    controllers: Vec<String>,
}

/// The cgroup mounts of a `/proc/PID/mountinfo` text (`ID PARENT MAJ:MIN ROOT POINT OPTS
/// [TAGS...] - FSTYPE SOURCE SUPER_OPTS`; spaces in paths escaped as `\040`).
fn parse_mounts(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let head: Vec<&str> = head.split(' ').collect();
        let tail: Vec<&str> = tail.split(' ').collect();
        let (Some(root), Some(point), Some(fstype)) = (head.get(3), head.get(4), tail.first())
        else {
            continue;
        };
        let v2 = match *fstype {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        let controllers = tail
            .get(2)
            .map(|o| o.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        out.push(Mount {
            root: unescape(root),
            point: PathBuf::from(unescape(point)),
            v2,
            controllers,
        });
    }
    out
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let code = b
            .get(i + 1..i + 4)
            .filter(|_| b[i] == b'\\')
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u8::from_str_radix(d, 8).ok());
        match code {
            Some(v) => {
                out.push(v);
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// toolgate's own cgroups as `/proc/self/cgroup` lists them (`ID:CONTROLLERS:PATH`): the v1
/// ones by controller, and the v2 one (`0::PATH`).
#[derive(Debug, Default, PartialEq, Eq)]
struct Own {
    pids: Option<String>,
    memory: Option<String>,
    unified: Option<String>,
}

fn parse_own(text: &str) -> Own {
    let mut own = Own::default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            own.unified = Some(path.to_string());
            continue;
        }
        for c in controllers.split(',') {
            match c {
                "pids" => own.pids = Some(path.to_string()),
                "memory" => own.memory = Some(path.to_string()),
                _ => {}
            }
        }
    }
    own
}

/// The directory of cgroup `path` in `mount` (`None` when the mount does not show it, as a
/// `/..` path of a cgroup outside a container's namespace).
fn dir_in(mount: &Mount, path: &str) -> Option<PathBuf> {
    if path.split('/').any(|c| c == "..") {
        return None;
    }
    let rel = if mount.root == "/" {
        path
    } else {
        let rest = path.strip_prefix(mount.root.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    let rel = rel.trim_start_matches('/');
    Some(if rel.is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(rel)
    })
}

/// The site, given the mounts and toolgate's own cgroups: v1 when the `pids` hierarchy is
/// mounted, else v2 (see the module docs); each candidate proven by making a cgroup there.
fn find(mounts: &[Mount], own: &Own) -> Option<CgroupSite> {
    let v1 = |controller: &str, path: &Option<String>| {
        let mount = mounts
            .iter()
            .find(|m| !m.v2 && m.controllers.iter().any(|c| c == controller))?;
        let dir = dir_in(mount, path.as_deref()?)?;
        proves(&dir, &[controller]).then_some(dir)
    };
    if let Some(pids) = v1("pids", &own.pids) {
        return Some(CgroupSite {
            version: 1,
            pids,
            memory: v1("memory", &own.memory),
        });
    }
    let mount = mounts.iter().find(|m| m.v2)?;
    let own_dir = dir_in(mount, own.unified.as_deref()?)?;
    let parent = own_dir
        .parent()
        .filter(|p| p.starts_with(&mount.point))
        .map(Path::to_path_buf);
    let mut candidates = vec![(own_dir.clone(), true)];
    if let Some(p) = parent {
        // a subtree handed over for toolgate to manage: its namespace's root, or delegated
        let delegated = p == mount.point || is_delegated(&p);
        candidates.push((p, delegated));
    }
    for (dir, allowed) in candidates {
        if !allowed {
            continue;
        }
        let mut enabled = controllers(&dir.join("cgroup.subtree_control"));
        if !enabled.iter().any(|c| c == "pids") && dir == own_dir {
            // possible only where toolgate's is the sole process-free cgroup (the root)
            let _ = fs::write(dir.join("cgroup.subtree_control"), "+pids");
            let _ = fs::write(dir.join("cgroup.subtree_control"), "+memory");
            enabled = controllers(&dir.join("cgroup.subtree_control"));
        }
        if !enabled.iter().any(|c| c == "pids") || !proves(&dir, &["pids"]) {
            continue;
        }
        let memory = enabled.iter().any(|c| c == "memory").then(|| dir.clone());
        return Some(CgroupSite {
            version: 2,
            pids: dir,
            memory,
        });
    }
    None
}

/// The controllers a `cgroup.controllers` or `cgroup.subtree_control` file lists.
fn controllers(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether systemd marked `dir` as delegated (the `trusted.delegate` or `user.delegate`
/// extended attribute).
fn is_delegated(dir: &Path) -> bool {
    let mut buf = [0u8; 8];
    ["trusted.delegate", "user.delegate"]
        .into_iter()
        .any(|name| matches!(rustix::fs::getxattr(dir, name, &mut buf), Ok(n) if buf[..n] == *b"1"))
}

/// Whether a cgroup can be made in `dir` and shows the files of `controllers` (`pids` makes
/// `pids.max`); the proof is removed.
fn proves(dir: &Path, wanted: &[&str]) -> bool {
    let probe = dir.join(format!("{PREFIX}{}-probe", owner()));
    if fs::create_dir(&probe).is_err() {
        return false;
    }
    let ok = wanted.iter().all(|c| {
        let file = match *c {
            "pids" => "pids.max",
            "memory" => "memory.limit_in_bytes",
            _ => return false,
        };
        probe.join(file).exists() || (*c == "memory" && probe.join("memory.max").exists())
    });
    let _ = fs::remove_dir(&probe);
    ok
}

/// `PID-START`: this process and its start time (so a later process with the same pid is not
/// taken for it).
pub(super) fn owner() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// A process's start time, in clock ticks since boot (field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// The owner of a cgroup named by `RunCgroup::create` (or a probe): its pid and start time.
fn parse_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    Some((pid, start))
}

/// How many passes of killing and removing a stale cgroup gets, 5 ms apart.
const STALE_PASSES: u32 = 40;

/// Removes the cgroups in `dir` (of cgroup `version`) that a toolgate process no longer
/// running made, killing what is left in them first: processes of a run whose toolgate died
/// (a run never outlives its toolgate on purpose; with a PID namespace its processes die
/// with it, without one they may be left here). One that cannot be emptied within
/// [`STALE_PASSES`] passes is left, logged.
fn remove_stale(dir: &Path, version: u8) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, start)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        if start_time(pid) == Some(start) {
            continue;
        }
        let path = e.path();
        let mut passes = 0;
        let removed = loop {
            match super::cgroup::kill_and_remove_dir(&path, version) {
                Ok(()) => break Ok(()),
                Err(err) if passes + 1 >= STALE_PASSES => break Err(err),
                Err(_) => {}
            }
            passes += 1;
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        match removed {
            Ok(()) => {
                tracing::info!(cgroup = %path.display(), "removed a stale run_shell cgroup")
            }
            Err(err) => tracing::warn!(
                cgroup = %path.display(),
                error = %err,
                "a stale run_shell cgroup could not be emptied; left in place"
            ),
        }
    }
}

#[cfg(test)]
#[path = "cgroup_site_tests.rs"]
mod tests;
