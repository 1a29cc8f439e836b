//! What the sandbox can enforce on this machine: [`sandbox_report`].

use super::cgroup_site::{self, CgroupSite};
use super::fs_rules::MIN_ABI;
use super::sandbox;
use rustix::thread::UnshareFlags;
use serde::Serialize;
use std::sync::OnceLock;

/// What run_shell's sandbox can enforce on the running kernel, as `toolgate check` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxReport {
    /// The kernel's Landlock ABI version (0: no Landlock). run_shell needs at least 3.
    pub landlock_abi: i32,
    /// Whether toolgate runs as root (it then drops every capability in the sandbox).
    pub root: bool,
    /// Whether an unprivileged caller can create a user namespace (the way a non-root
    /// toolgate gets mount and network namespaces). Always false for root, which needs none.
    pub user_namespace: bool,
    /// Whether a fresh mount namespace is available (read-only binds of protected paths).
    pub mount_namespace: bool,
    /// Whether a fresh network namespace is available (no network unless configured).
    pub network_namespace: bool,
    /// Whether a fresh PID namespace is available (root only): every process of a run dies
    /// with it, even one that left the process group with `setsid`.
    pub pid_namespace: bool,
    /// Whether `RLIMIT_NPROC` limits the command's processes. The kernel never applies it
    /// to uid 0, so it is false for root.
    pub process_limit: bool,
    /// Where each run gets a cgroup of its own, bounding its processes and memory (root
    /// included) and killing all of them at its end; `None` when the machine gives toolgate
    /// no cgroup it may make (runs are then bounded by their timeout and, for a caller that
    /// is not root, `RLIMIT_NPROC`). Not part of [`SandboxReport::missing`].
    pub cgroup: Option<CgroupSite>,
    /// What the full sandbox needs and this machine lacks, in words (empty: nothing).
    pub missing: Vec<String>,
}

impl SandboxReport {
    /// What is missing for a run that needs `network` off (`deny_network`) and the rest.
    pub fn missing_for(&self, deny_network: bool) -> Vec<String> {
        let mut missing: Vec<String> = Vec::new();
        if self.landlock_abi < MIN_ABI {
            missing.push(format!(
                "Landlock ABI {MIN_ABI} or newer (the kernel offers {})",
                self.landlock_abi
            ));
        }
        if !self.mount_namespace {
            missing.push(
                "a private mount namespace (root, or unprivileged user namespaces)".to_string(),
            );
        }
        if deny_network && !self.network_namespace {
            missing.push(
                "a private network namespace (root, or unprivileged user namespaces)".to_string(),
            );
        }
        missing
    }
}

/// Probes the kernel once per process (a few milliseconds) and returns the cached report.
pub fn sandbox_report() -> SandboxReport {
    cached_report().clone()
}

/// The report [`sandbox_report`] returns, borrowed.
pub(crate) fn cached_report() -> &'static SandboxReport {
    static REPORT: OnceLock<SandboxReport> = OnceLock::new();
    REPORT.get_or_init(probe)
}

fn probe() -> SandboxReport {
    let landlock_abi = sandbox::landlock_abi();
    let root = rustix::process::geteuid().is_root();
    let (user_namespace, mount_namespace, network_namespace, pid_namespace) = if root {
        (
            false,
            sandbox::thread_can_unshare(UnshareFlags::NEWNS),
            sandbox::thread_can_unshare(UnshareFlags::NEWNET),
            sandbox::thread_can_unshare(UnshareFlags::NEWPID),
        )
    } else {
        let userns = true_binary().is_some_and(|t| sandbox::child_can_use_user_namespace(&t));
        (userns, userns, userns, false)
    };
    let mut report = SandboxReport {
        landlock_abi,
        root,
        user_namespace,
        mount_namespace,
        network_namespace,
        pid_namespace,
        process_limit: !root,
        cgroup: cgroup_site::site().cloned(),
        missing: Vec::new(),
    };
    report.missing = report.missing_for(true);
    report
}

/// A harmless program to exec in a probe.
fn true_binary() -> Option<std::path::PathBuf> {
    ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_consistent() {
        let r = sandbox_report();
        assert_eq!(r, sandbox_report(), "cached");
        assert_eq!(r.missing, r.missing_for(true));
        assert!(r.missing_for(false).len() <= r.missing.len());
        if r.root {
            assert!(!r.process_limit && !r.user_namespace);
        } else {
            assert!(!r.pid_namespace);
        }
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["landlock_abi"].is_number());
    }

    #[test]
    fn missing_pieces_are_named() {
        let r = SandboxReport {
            landlock_abi: 1,
            root: false,
            user_namespace: false,
            mount_namespace: false,
            network_namespace: false,
            pid_namespace: false,
            process_limit: true,
            cgroup: None,
            missing: Vec::new(),
        };
        let missing = r.missing_for(true);
        assert_eq!(missing.len(), 3, "{missing:?}");
        assert!(missing[0].contains("Landlock ABI 3"));
        assert_eq!(r.missing_for(false).len(), 2);
    }
}
