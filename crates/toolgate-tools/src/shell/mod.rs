//! The shell family: [`run_shell`] runs a bash command in a kernel sandbox.
//!
//! | file | concern |
//! |---|---|
//! | [`run_shell`] | the tool: arguments, the run's sequence, its structured result |
//! | `sandbox.rs` | what the child does between fork and exec (the crate's only unsafe code) |
//! | `stop.rs` | stopping a run at its timeout or cancellation before its script takes another step |
//! | `cgroup.rs` | a cgroup per run: its processes and memory bounded, every process killed at its end |
//! | `cgroup_site.rs` | where this machine lets toolgate make those cgroups, and stale ones removed |
//! | `binds.rs` | what the run's mount namespace puts over workspace paths: pins, read-only, hidden |
//! | `protected_scan.rs` | finding the protected entries (root and nested) a run starts with, cheaply |
//! | `created.rs` | the protected paths a run created: moved aside or listed in its result |
//! | [`process`] | a long-running program (an MCP stdio server) under the same sandbox |
//! | `fs_rules.rs` | the Landlock ruleset: read everywhere but denied paths, write in the workspace |
//! | [`env`](mod@env) | the environment allowlist and git's hardening variables |
//! | [`git_identity`] | the author and committer of a run's commits: the operator's, by default |
//! | [`output`] | capturing stdout and stderr in bounded memory |
//! | [`stream`] | the output streamed as progress while the command runs, bounded and clean |
//! | [`parse`] | every command a command line runs, read with bash's grammar ([`analyze`]) |
//! | [`policy`] | allow, ask and deny rules over those commands ([`ShellPolicy`]) |
//! | [`vars`] | the variables a line sets: harmless, changing what runs, or undoing the sandbox's pins |
//! | [`report`] | what the sandbox can enforce on this machine ([`sandbox_report`]) |
//!
//! A sandboxed run cannot write outside the workspace and its private temporary directory,
//! cannot write the workspace's protected paths (those of [`crate::fs::protected`], at the
//! root and nested, and the configuration file) nor move them away, has one it creates moved
//! aside or reported (`created.rs`),
//! cannot read the workspace paths its configuration hides (the store, denied paths) nor
//! write those it makes read-only, reaches no network
//! unless [`ShellConfig::allow_network`] and no service behind a socket file unless
//! [`ShellConfig::allow_unix_sockets`], sees no inherited secret, runs under resource
//! limits without capabilities (in a cgroup of its own where the machine gives one, which
//! bounds its processes and memory even for root: [`CgroupSite`]), and dies whole at its
//! timeout. When the kernel lacks what
//! that needs, run_shell refuses to run (`tool_failed`, reason `sandbox_unavailable`) unless
//! [`ShellConfig::allow_unsandboxed`] says otherwise, and then says so in every result.

mod binds;
mod cgroup;
mod cgroup_site;
mod created;
pub mod env;
mod fs_rules;
pub mod git_identity;
pub mod output;
pub mod parse;
pub mod policy;
pub mod process;
mod protected_scan;
mod refused;
pub mod report;
pub mod run_shell;
mod sandbox;
mod stop;
pub mod stream;
#[cfg(test)]
mod test_files;
pub mod vars;

/// The name of the shell built-in ([`RunShell`]).
pub const RUN_SHELL: &str = "run_shell";

pub use binds::{covered, Covered, MAX_BINDS, MAX_WALK_ENTRIES};
pub use cgroup::bytes_text;
pub use cgroup_site::CgroupSite;
pub use created::ProtectedCreated;
pub use fs_rules::MIN_ABI as MIN_LANDLOCK_ABI;
pub use git_identity::{GitIdentity, Identity};
pub use output::CaptureLimits;
pub use parse::{analyze, CommandAnalysis, Redirect, SimpleCommand};
pub use policy::{CommandPattern, CommandRule, CommandRules, PatternError, ShellPolicy};
pub use process::SandboxedProcess;
pub use protected_scan::{MAX_PROTECTED_DEPTH, MAX_PROTECTED_ENTRIES, SKIPPED_DIRS};
pub use refused::ProtectedRefused;
pub use report::{sandbox_report, SandboxReport};
pub use run_shell::RunShell;
pub use stream::StreamLimits;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use toolgate_core::pattern::{MatchMode, PathPattern};

/// The default `timeout_ms` of a run: 120 s.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest `timeout_ms` the schema accepts: 600 s.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The default [`ShellLimits::run_processes`]: 512.
pub const DEFAULT_RUN_PROCESSES: u64 = 512;
/// The default [`ShellLimits::run_memory_bytes`]: 16 GiB (as the address space of one
/// process).
pub const DEFAULT_RUN_MEMORY_BYTES: u64 = 16 << 30;

/// Resource limits of a run (`setrlimit`, soft and hard). `None` leaves a limit as toolgate's
/// own process has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShellLimits {
    /// CPU time per process, in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// Address space per process, in bytes (`RLIMIT_AS`).
    pub address_space_bytes: Option<u64>,
    /// Processes of the user (`RLIMIT_NPROC`; the kernel does not apply it to root).
    pub processes: Option<u64>,
    /// The largest file a process may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Processes (and threads) of one run at once, all of them together (`pids.max` of the
    /// run's cgroup), where the machine gives run_shell a cgroup ([`CgroupSite`]). Unlike
    /// `RLIMIT_NPROC`, it bounds root too. A fork past it fails with `EAGAIN`.
    pub run_processes: Option<u64>,
    /// Memory of one run, all its processes together, in bytes (`memory.max`, or
    /// `memory.limit_in_bytes` with cgroup v1), where the machine gives run_shell a cgroup
    /// with a memory controller. Past it the kernel reclaims what it can, then kills the
    /// largest process of the run.
    pub run_memory_bytes: Option<u64>,
}

impl Default for ShellLimits {
    /// 600 CPU seconds, 16 GiB of address space, 1024 processes, 1 GiB files, 4096 open
    /// files, no core dumps, and with a cgroup 512 processes and 16 GiB of memory per run.
    fn default() -> Self {
        ShellLimits {
            cpu_seconds: Some(600),
            address_space_bytes: Some(16 << 30),
            processes: Some(1024),
            file_size_bytes: Some(1 << 30),
            open_files: Some(4096),
            run_processes: Some(DEFAULT_RUN_PROCESSES),
            run_memory_bytes: Some(DEFAULT_RUN_MEMORY_BYTES),
        }
    }
}

/// How run_shell runs commands; pass it to [`register_shell`](crate::register_shell).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShellConfig {
    /// Run even when the kernel lacks part of the sandbox (default false: refuse with
    /// `sandbox_unavailable`). Results then carry `sandboxed: false` and what was missing.
    pub allow_unsandboxed: bool,
    /// Give the command the host's network (default false: a private network namespace with
    /// only its own loopback interface).
    pub allow_network: bool,
    /// Let the command create `AF_UNIX` sockets (default false: creating one fails with
    /// `EPERM`). A socket file outside the workspace is out of reach of the file rules and
    /// the network namespace, and the service behind it (a container engine, the user's
    /// systemd or D-Bus session, an ssh or gpg agent) acts outside the sandbox.
    pub allow_unix_sockets: bool,
    /// The bash to run (default: `/bin/bash`, or `/usr/bin/bash` when that is the one that
    /// exists).
    pub bash: PathBuf,
    /// Variables passed on from toolgate's environment when set (default
    /// [`env::DEFAULT_INHERIT`]).
    pub inherit_env: Vec<String>,
    /// Variables set to fixed values. Default: where the Rust toolchain lives
    /// (`RUSTUP_HOME`, `CARGO_HOME`, from toolgate's environment or `$HOME/.rustup` and
    /// `$HOME/.cargo` when those exist), since `HOME` is the run's private directory and
    /// rustup's proxies could not find the toolchain otherwise; both stay read-only.
    pub env: BTreeMap<String, String>,
    /// Paths the command may not read (absolute). Default: the usual credential stores
    /// ([`CREDENTIAL_STORES`]: `.ssh`, `.aws`, `.gnupg`, `.netrc`, `.git-credentials`,
    /// `.docker`, `.kube`, `.config/gh`, `.config/gcloud`, `.pgpass`, `.npmrc`, ...) of
    /// `$HOME`, `/root` and every directory of `/home`.
    pub deny_read: Vec<PathBuf>,
    /// Directories the command may write besides the workspace and its private temporary
    /// directory (absolute; default none).
    pub extra_writable: Vec<PathBuf>,
    /// Workspace paths that stay read-only, directory entry included (relative to the root):
    /// default `.toolgate` (toolgate's state, created empty when missing so it cannot be
    /// created by the command), `.git/hooks` and `.git/config`; the configuration adds its own
    /// file. The directories above each are pinned, so none can be moved away and replaced.
    /// Every entry named as [`crate::fs::protected`] names them (`.vscode`, a nested `.git`'s
    /// config and hooks, ...) is protected the same way on top of these, wherever it exists
    /// when a run starts (see `binds.rs`).
    pub protected: Vec<String>,
    /// Workspace paths the command may not read, matched as deny rules match (every
    /// spelling, a directory with everything below it): each file or directory they match
    /// when a run starts is covered by an empty read-only one. Default: `/.toolgate` (the
    /// store); the configuration adds its read-denying path rules and its store.
    pub hidden: Vec<PathPattern>,
    /// Workspace paths the command may not write (matched the same way): each file or
    /// directory they match when a run starts is bound read-only. Default none; the
    /// configuration adds its write-denying path rules.
    pub read_only: Vec<PathPattern>,
    /// Who the commits made in a run are by (`GIT_AUTHOR_*` and `GIT_COMMITTER_*`, each
    /// unless the run's environment sets it already; not given to a [`SandboxedProcess`], a
    /// third-party server). Default [`GitIdentity::Operator`]: the `user.name` and
    /// `user.email` of the operator's global git configuration, nothing else of it, read once
    /// per process.
    pub git_identity: GitIdentity,
    /// Resource limits.
    pub limits: ShellLimits,
    /// After the timeout or a cancel, how long the commands of the run (never the script
    /// itself, which is stopped at once) have between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// How stdout is kept and shown.
    pub stdout: CaptureLimits,
    /// How stderr is kept and shown.
    pub stderr: CaptureLimits,
    /// How output is streamed as progress while the command runs, when the caller listens
    /// (see [`stream`]).
    pub progress: StreamLimits,
}

impl Default for ShellConfig {
    fn default() -> Self {
        let bash = ["/bin/bash", "/usr/bin/bash"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .unwrap_or_else(|| PathBuf::from("/bin/bash"));
        ShellConfig {
            allow_unsandboxed: false,
            allow_network: false,
            allow_unix_sockets: false,
            bash,
            inherit_env: env::DEFAULT_INHERIT.iter().map(|s| s.to_string()).collect(),
            env: toolchain_env(),
            deny_read: default_deny_read(),
            extra_writable: Vec::new(),
            protected: vec![
                ".toolgate".to_string(),
                ".git/hooks".to_string(),
                ".git/config".to_string(),
            ],
            hidden: vec![
                PathPattern::parse("/.toolgate", MatchMode::Restrict).expect("a valid pattern")
            ],
            read_only: Vec::new(),
            git_identity: GitIdentity::Operator,
            limits: ShellLimits::default(),
            kill_grace: Duration::from_millis(500),
            stdout: CaptureLimits {
                keep_head: 2 << 20,
                keep_tail: 256 << 10,
                preview: 24 << 10,
            },
            stderr: CaptureLimits {
                keep_head: 1 << 20,
                keep_tail: 128 << 10,
                preview: 12 << 10,
            },
            progress: StreamLimits::default(),
        }
    }
}

/// `RUSTUP_HOME` and `CARGO_HOME` as toolgate sees them, so `cargo` works in a run whose
/// `HOME` is private.
fn toolchain_env() -> BTreeMap<String, String> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let mut env = BTreeMap::new();
    for (var, dir) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let value = std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(dir)).filter(|p| p.is_dir()));
        if let Some(v) = value.and_then(|v| v.to_str().map(str::to_string)) {
            env.insert(var.to_string(), v);
        }
    }
    env
}

/// The credential stores of a home directory a command may not read by default: those of
/// `$HOME`, `/root` and every directory of `/home` make [`ShellConfig::deny_read`]'s default.
pub const CREDENTIAL_STORES: [&str; 33] = [
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".config/op",
    ".config/rclone",
    ".config/doctl",
    ".config/configstore",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".s3cfg",
    ".boto",
    ".oci",
    ".password-store",
    ".local/share/keyrings",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".bash_history",
];

/// The credential stores ([`CREDENTIAL_STORES`]) of every home directory on the machine that a
/// command may not read by default: `$HOME`'s, `/root`'s and those of the directories in
/// `/home` (another user's `.ssh` as much as toolgate's own).
fn default_deny_read() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        homes.push(PathBuf::from(home));
    }
    homes.push(PathBuf::from("/root"));
    if let Ok(entries) = std::fs::read_dir("/home") {
        homes.extend(
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    let mut seen = std::collections::HashSet::new();
    homes.retain(|h| seen.insert(std::fs::canonicalize(h).unwrap_or_else(|_| h.clone())));
    homes
        .iter()
        .flat_map(|home| CREDENTIAL_STORES.iter().map(move |p| home.join(p)))
        .collect()
}

#[cfg(test)]
mod deny_read_tests {
    use super::*;

    #[test]
    fn the_credential_stores_of_every_home_are_denied() {
        let denied = default_deny_read();
        for store in [".ssh", ".pgpass", ".config/gcloud", ".aws", ".vault-token"] {
            assert!(
                denied.contains(&std::path::Path::new("/root").join(store)),
                "{store}"
            );
        }
        for home in std::fs::read_dir("/home").into_iter().flatten().flatten() {
            if home.file_type().is_ok_and(|t| t.is_dir()) {
                assert!(denied.contains(&home.path().join(".ssh")), "{home:?}");
            }
        }
        // each once, however many names lead to a home
        let unique: std::collections::HashSet<&PathBuf> = denied.iter().collect();
        assert_eq!(unique.len(), denied.len());
    }
}
