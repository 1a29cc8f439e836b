//! A cgroup for each run: how many processes a run may have at once (`pids.max`) and how much
//! memory its processes may use together (`memory.max`, `memory.limit_in_bytes`), which no
//! rlimit bounds for root (the kernel never applies `RLIMIT_NPROC` to uid 0, and
//! `RLIMIT_AS` is per process).
//!
//! The sequence:
//!
//! 1. where this machine lets toolgate make cgroups is found once per process
//!    (`cgroup_site.rs`: the v1 `pids` and `memory` hierarchies, or a delegated cgroup v2
//!    subtree; never by moving toolgate's own process), and the empty cgroups a crashed
//!    toolgate left there are removed;
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

use super::cgroup_site::{owner, CgroupSite, PREFIX};
use super::ShellLimits;
use rustix::fs::{Mode, OFlags};
use rustix::process::{Pid, Signal};
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long killing and removing a run's cgroup may take before it is left to the next start.
const REMOVE_WITHIN: Duration = Duration::from_secs(5);

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
            gone &= kill_and_remove_dir(dir, self.version).is_ok();
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

/// One pass over the cgroup `dir` (of cgroup `version`): `cgroup.kill` (v2) or SIGKILL to
/// each member, then `rmdir`. `Ok` when it is gone (or was not there).
///
/// # Errors
/// The `rmdir`'s, while a member is still dying (`EBUSY`).
pub(super) fn kill_and_remove_dir(dir: &Path, version: u8) -> io::Result<()> {
    if version == 2 {
        // ENOENT before Linux 5.14: the members are killed one by one below
        let _ = fs::write(dir.join("cgroup.kill"), "1");
    }
    kill_members(dir);
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
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
pub fn bytes_text(bytes: u64) -> String {
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
