//! A cgroup for each run: how many processes a run may have at once (`pids.max`) and how much
//! memory its processes may use together (`memory.max`, `memory.limit_in_bytes`), which no
//! rlimit bounds for root (the kernel never applies `RLIMIT_NPROC` to uid 0, and
//! `RLIMIT_AS` is per process).
//!
//! The sequence:
//!
//! 1. [`site`], once per process: where this machine lets toolgate make cgroups, found from
//!    `/proc/self/mountinfo` and toolgate's own cgroup in `/proc/self/cgroup`, and proven by
//!    making and removing one. With cgroup v1 (or a hybrid machine) the `pids` hierarchy (and
//!    the `memory` one when mounted), under toolgate's own cgroup in each; with a pure cgroup
//!    v2, a cgroup whose `cgroup.subtree_control` hands `pids` (and `memory`) to its children:
//!    toolgate's own (when it hands them on already, or toolgate may enable them there: the
//!    root cgroup, which the no-internal-processes rule exempts) or, when
//!    toolgate was started in a leaf of a delegated subtree (systemd's `Delegate=yes` with
//!    `DelegateSubgroup=`, a container whose entry point moved itself into a child cgroup),
//!    its parent. toolgate never moves its own process. Cgroups left by a toolgate that is no
//!    longer running (a crash) are removed there when empty: each is named
//!    `toolgate-run-PID-START-N` after the process that made it;
//! 2. [`RunCgroup::create`] makes the run's cgroup and writes its limits;
//! 3. the child writes `0` into each `cgroup.procs` as the first step of its set-up
//!    (`sandbox.rs`), so the command never runs outside it;
//! 4. when the run ends, [`RunCgroup::exceeded`] reads what was hit (`pids.events`,
//!    `memory.events` or `memory.oom_control`) for the result;
//! 5. [`RunCgroup::finish`] kills every process left in it (`cgroup.kill` on v2; otherwise
//!    SIGKILL to each pid of `cgroup.procs`, through a pidfd checked to be in the cgroup,
//!    until it is empty) and removes it. Dropping a [`RunCgroup`] does the same.
//!
//! In the full sandbox the command cannot leave its cgroup nor raise its limits: every mount
//! is read-only in its mount namespace, Landlock lets it write only in the workspace and its
//! temporary directory, and it holds no capability (a root command without them could write
//! the root-owned cgroup files).

use super::ShellLimits;
use rustix::fs::{Mode, OFlags};
use rustix::process::{Pid, Signal};
use serde::Serialize;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The prefix of every cgroup toolgate makes.
const PREFIX: &str = "toolgate-run-";

/// How long killing and removing a run's cgroup may take before it is left to the next start.
const REMOVE_WITHIN: Duration = Duration::from_secs(5);

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
            remove_stale(dir);
        }
        Some(site)
    })
    .as_ref()
}

impl CgroupSite {
    /// Its distinct directories, the pids one first.
    fn dirs(&self) -> Vec<&Path> {
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
fn owner() -> String {
    let pid = std::process::id();
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// A process's start time, in clock ticks since boot (field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// The owner of a cgroup named by [`RunCgroup::create`] (or a probe): its pid and start time.
fn parse_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    Some((pid, start))
}

/// Removes the empty cgroups in `dir` that a toolgate process no longer running made (a
/// non-empty one is left: its processes are not toolgate's to judge).
fn remove_stale(dir: &Path) {
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
        match fs::remove_dir(e.path()) {
            Ok(()) => {
                tracing::info!(cgroup = %e.path().display(), "removed a stale run_shell cgroup")
            }
            Err(err) => tracing::warn!(
                cgroup = %e.path().display(),
                error = %err,
                "a stale run_shell cgroup still holds processes; left in place"
            ),
        }
    }
}

/// The cgroup of one run (see the module docs). Dropping it kills what is left in it and
/// removes it (on a thread of its own, so a drop never waits).
#[derive(Debug)]
pub(crate) struct RunCgroup {
    version: u8,
    pids: PathBuf,
    memory: Option<PathBuf>,
    max_processes: Option<u64>,
    max_memory: Option<u64>,
    done: bool,
}

impl RunCgroup {
    /// Makes a run's cgroup in `site` with the limits of `limits`.
    ///
    /// # Errors
    /// The failed `mkdir` or write; what was made is removed.
    pub(crate) fn create(site: &CgroupSite, limits: &ShellLimits) -> io::Result<RunCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{PREFIX}{}-{}",
            owner(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut cg = RunCgroup {
            version: site.version,
            pids: site.pids.join(&name),
            memory: None,
            max_processes: limits.run_processes,
            max_memory: None,
            done: false,
        };
        fs::create_dir(&cg.pids)?;
        // from here on, a failure removes what was made (drop)
        if let Some(n) = limits.run_processes {
            fs::write(cg.pids.join("pids.max"), n.to_string())?;
        }
        if let (Some(dir), Some(bytes)) = (&site.memory, limits.run_memory_bytes) {
            let dir = dir.join(&name);
            if dir != cg.pids {
                fs::create_dir(&dir)?;
            }
            cg.memory = Some(dir.clone());
            if site.version == 2 {
                fs::write(dir.join("memory.max"), bytes.to_string())?;
                // swap would let a run hold more than the cap (v1's memsw counts both)
                let _ = fs::write(dir.join("memory.swap.max"), "0");
            } else {
                fs::write(dir.join("memory.limit_in_bytes"), bytes.to_string())?;
                // with swap accounting, swap counts too (it must not be below the other)
                let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
            }
            cg.max_memory = Some(bytes);
        }
        Ok(cg)
    }

    /// Its distinct directories.
    fn dirs(&self) -> Vec<&Path> {
        let mut dirs = vec![self.pids.as_path()];
        if let Some(m) = self.memory.as_deref().filter(|m| *m != self.pids) {
            dirs.push(m);
        }
        dirs
    }

    /// Its `cgroup.procs` files opened for writing (close-on-exec), for the child to join it
    /// by writing `0` into each before anything else.
    ///
    /// # Errors
    /// The failed open.
    pub(crate) fn procs(&self) -> io::Result<Vec<OwnedFd>> {
        self.dirs()
            .into_iter()
            .map(|d| {
                rustix::fs::open(
                    d.join("cgroup.procs"),
                    OFlags::WRONLY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io::Error::from)
            })
            .collect()
    }

    /// What the run hit, in sentences for the model: the process limit (forks refused) and
    /// the memory cap (processes killed by the kernel's OOM killer).
    pub(crate) fn exceeded(&self) -> Vec<String> {
        let mut out = Vec::new();
        let refused = counter(&self.pids.join("pids.events"), "max");
        if let (Some(max), Some(n)) = (self.max_processes, refused.filter(|n| *n > 0)) {
            out.push(format!(
                "the command tried to run more than {max} processes at once (threads \
                 included), the limit of one run: the kernel refused {n} fork{} (\"Resource \
                 temporarily unavailable\"), so part of it did not run; start fewer processes \
                 at a time (for example `make -j4`, `xargs -P 4`) and never a process per item \
                 of a long list",
                if n == 1 { "" } else { "s" }
            ));
        }
        if let (Some(dir), Some(bytes)) = (&self.memory, self.max_memory) {
            let killed = if self.version == 2 {
                counter(&dir.join("memory.events"), "oom_kill")
            } else {
                counter(&dir.join("memory.oom_control"), "oom_kill")
            };
            if let Some(n) = killed.filter(|n| *n > 0) {
                out.push(format!(
                    "{n} process{} of the command {} killed (SIGKILL) for using more than \
                     {} of memory together, the cap of one run; use less memory at once \
                     (fewer parallel jobs, smaller inputs, streaming instead of loading whole \
                     files)",
                    if n == 1 { "" } else { "es" },
                    if n == 1 { "was" } else { "were" },
                    bytes_text(bytes)
                ));
            }
        }
        out
    }

    /// Kills every process left in it and removes it, waiting (without blocking the
    /// runtime) up to a few seconds; what cannot be removed by then is left to a thread.
    pub(crate) async fn finish(mut self) {
        let deadline = Instant::now() + REMOVE_WITHIN;
        loop {
            if self.kill_and_remove() {
                self.done = true;
                return;
            }
            if Instant::now() >= deadline {
                // the drop goes on trying on a thread
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// One pass: `cgroup.kill` (v2) or SIGKILL to each member, then `rmdir` of each
    /// directory. True when every directory is gone.
    fn kill_and_remove(&self) -> bool {
        let mut gone = true;
        for dir in self.dirs() {
            if !dir.exists() {
                continue;
            }
            if self.version == 2 {
                // ENOENT before Linux 5.14: the members are killed one by one below
                let _ = fs::write(dir.join("cgroup.kill"), "1");
            }
            kill_members(dir);
            match fs::remove_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => gone = false,
            }
        }
        gone
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if self.done || self.kill_and_remove() {
            return;
        }
        let cg = RunCgroup {
            version: self.version,
            pids: self.pids.clone(),
            memory: self.memory.clone(),
            max_processes: None,
            max_memory: None,
            done: true,
        };
        let spawned = std::thread::Builder::new()
            .name("toolgate-cgroup".into())
            .spawn(move || {
                let deadline = Instant::now() + REMOVE_WITHIN;
                while !cg.kill_and_remove() {
                    if Instant::now() >= deadline {
                        tracing::warn!(
                            cgroup = %cg.pids.display(),
                            "a run_shell cgroup could not be removed; the next start removes it once empty"
                        );
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
        if spawned.is_err() {
            tracing::warn!(cgroup = %self.pids.display(), "a run_shell cgroup was left behind");
        }
    }
}

/// SIGKILL to every process `dir/cgroup.procs` lists, each through a pidfd opened and then
/// checked to belong to the cgroup (a pid reused meanwhile by a process elsewhere is spared).
fn kill_members(dir: &Path) {
    let Ok(procs) = fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        let Some(pid) = Pid::from_raw(pid) else {
            continue;
        };
        let member = || {
            fs::read_to_string(format!("/proc/{}/cgroup", pid.as_raw_nonzero()))
                .is_ok_and(|c| c.lines().any(|l| l.ends_with(&format!("/{name}"))))
        };
        match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
            Ok(fd) if member() => {
                let _ = rustix::process::pidfd_send_signal(&fd, Signal::KILL);
            }
            // before Linux 5.3: by pid, checked just before
            Err(rustix::io::Errno::NOSYS) if member() => {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
            _ => {}
        }
    }
}

/// The value of `key` in a flat-keyed cgroup file (`max 3`, `oom_kill 1`).
fn counter(file: &Path, key: &str) -> Option<u64> {
    let text = fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Bytes as a person reads them: `16 GiB`, `512 MiB`, `1000 bytes`.
pub(crate) fn bytes_text(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
