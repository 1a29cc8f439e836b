//! `run_shell`: one bash command in a kernel sandbox, with the workspace as working directory.
//!
//! The sequence of one call:
//!
//! 1. the working directory (`cwd`, default the root) is resolved inside the workspace and
//!    must be a directory;
//! 2. the sandbox is checked against [`sandbox_report`]: a missing piece refuses the call
//!    (`sandbox_unavailable`) unless the configuration allows unsandboxed runs;
//!
//!    both steps run first in the guard, so such a call fails before anyone is asked to
//!    approve it, and again in the handler (the tree may change while a person thinks);
//! 3. a private temporary directory is made, the mounts over workspace paths are planned
//!    (`binds.rs`: protected paths read-only and pinned, root and nested, `.toolgate` created
//!    when absent, the paths the configuration denies hidden or read-only), and the Landlock
//!    ruleset is built;
//! 4. `bash --noprofile --norc -c COMMAND` is spawned with the allowlisted environment, stdin
//!    from `/dev/null`, and the child set-up of `sandbox.rs` (session, namespaces, read-only
//!    binds, limits, no capabilities, Landlock), in a cgroup of its own where the machine
//!    gives one (`cgroup.rs`: the child joins it before anything else);
//! 5. stdout and stderr are read concurrently into bounded [`Capture`]s while the call waits
//!    for the shell, its timeout (`timeout_ms`, capped by the call's own deadline) or its
//!    cancellation; when the caller listens to progress, their lines are streamed to it
//!    meanwhile, rate-limited, cleaned and capped ([`super::stream`]);
//! 6. at the timeout or cancellation the run is stopped as `stop.rs` says: the whole group
//!    frozen at once (SIGSTOP), so the script starts no further step; what ignores SIGTERM
//!    killed; the rest sent SIGTERM and continued, the script itself staying stopped; after
//!    [`ShellConfig::kill_grace`] at most, SIGKILL to the shell (PID 1 of its namespace, whose
//!    death takes every process of the run with it) and the group. After a normal exit,
//!    whatever is left of the group gets SIGKILL. Then, with a cgroup, what it counted as hit
//!    (`limits_exceeded`) is read, every process still in it is killed and it is removed. If
//!    the call's future is dropped, the same SIGKILL runs and the cgroup goes the same way;
//! 7. the streams become the result: each within its preview cap (a third head, two thirds
//!    tail), the rest kept behind a result handle that the preview's marker names with the
//!    offset to read on from. A non-zero exit is an ordinary result; a timeout is
//!    `outcome_unknown` (reason `timeout`) saying how the command was stopped, with the end of
//!    the output in the message;
//! 8. the protected paths are looked for again: one the command created is moved aside or
//!    left, as `created.rs` says, and listed in the result (`protected_created`) or, for a
//!    failed run, in the error's message;
//! 9. a write the output shows refused on an entry the run had bound read-only (`git config`
//!    on `.git/config`, `.vscode/settings.json`), which each stream's reader watched for as
//!    the bytes arrived (`refused.rs`), is explained in the result (`protected_refused`: the
//!    entry, why it is read-only, what to do instead) or, for a failed run, in the error's
//!    message.

use super::binds::{self, PathRules};
use super::cgroup::RunCgroup;
use super::output::{Capture, CaptureLimits, Captured};
use super::parse::analyze;
use super::refused::{self, RefusedScan, Watched};
use super::report::{cached_report, sandbox_report, SandboxReport};
use super::sandbox::{self, BindKind, ChildSetup, UserMaps};
use super::stop;
use super::stream::{OutputProgress, Stream};
use super::{env, fs_rules, ShellConfig, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
use rustix::process::{Pid, Resource as Rlim, Signal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use toolgate_core::pattern::program;
use toolgate_core::sanitize::clean_output;
use toolgate_core::{
    Access, Effects, ErrorKind, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool,
};

/// The longest command accepted, in bytes (the schema's `maxLength` counts characters).
pub const MAX_COMMAND_LEN: usize = 100_000;

/// How long the streams may still be read after the shell is gone, before what was read is
/// taken as it is (a process outside the PID namespace may hold a pipe open).
const DRAIN: Duration = Duration::from_secs(2);

/// Arguments of `run_shell`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunShellArgs {
    /// The bash command line to run, for example `cargo test -q 2>&1 | tail -n 50`.
    #[schemars(length(min = 1, max = 100000))]
    pub command: String,
    /// The working directory, relative to the workspace root (default: the root).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// How long the command may run, in milliseconds (default 120000, at most 600000). At
    /// the timeout every process of the command is killed.
    #[serde(default)]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout_ms: Option<u64>,
}

/// The result of `run_shell`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunShellOutput {
    /// The shell's exit code; absent when a signal ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the shell (for example 9 for SIGKILL), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Wall time from spawn to exit, in milliseconds.
    pub duration_ms: u64,
    /// Standard output: all of it, or at most 24 KiB by default: its first third, a marker
    /// line naming the bytes left out and the `read_result` call (handle and offset) that
    /// reads them, and its last two thirds.
    pub stdout: String,
    /// Standard error, as `stdout` (at most 12 KiB by default).
    pub stderr: String,
    /// Whether `stdout` leaves bytes out.
    pub stdout_truncated: bool,
    /// Whether `stderr` leaves bytes out.
    pub stderr_truncated: bool,
    /// Bytes written to standard output in all.
    pub stdout_bytes: u64,
    /// Bytes written to standard error in all.
    pub stderr_bytes: u64,
    /// When `stdout` is truncated: a handle for `read_result` holding more of it (all of it
    /// up to 2 MiB; past that its first 2 MiB and last 256 KiB by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_handle: Option<String>,
    /// When `stderr` is truncated: a handle for `read_result` holding more of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_handle: Option<String>,
    /// Whether the command ran in the full sandbox.
    pub sandboxed: bool,
    /// What the sandbox lacked, when `sandboxed` is false.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_missing: Vec<String>,
    /// Protected paths (`.vscode`, `.envrc`, `.husky`, ...) the command created, each moved
    /// aside into `.toolgate/quarantine/` or left in place, as its note says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_created: Vec<super::created::ProtectedCreated>,
    /// Writes the output shows the sandbox refused (EBUSY, EROFS, EACCES, EPERM) on entries
    /// the run had bound read-only (`.git/config` for `git config` or `git submodule add`,
    /// `.git/hooks`, `.vscode`, ...), each with why and what to do instead: such a command
    /// cannot succeed in run_shell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_refused: Vec<super::refused::ProtectedRefused>,
    /// The limits of the run the command hit, each in a sentence saying what happened and
    /// what to do instead: more processes at once than a run may have (forks refused), more
    /// memory than a run may use (processes killed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits_exceeded: Vec<String>,
}

/// The `run_shell` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Default)]
pub struct RunShell {
    config: Arc<ShellConfig>,
    report: Option<Arc<SandboxReport>>,
    reads: Arc<OnceLock<fs_rules::ReadGrants>>,
    paths: Arc<OnceLock<PathRules>>,
    /// The last look for protected entries, and the workspace root it was in: the next run
    /// there reads again only the directories that changed since (`protected_scan.rs`).
    protected: Arc<Mutex<Option<LastLook>>>,
}

/// A workspace root and the last look for protected entries in it.
type LastLook = (std::path::PathBuf, Arc<super::protected_scan::Found>);

impl RunShell {
    /// The tool with `config`.
    pub fn new(config: ShellConfig) -> RunShell {
        // the operator's git identity is read now, once, beside start-up rather than in it
        // or in the first run
        config.git_identity.read_in_background();
        RunShell {
            config: Arc::new(config),
            report: None,
            reads: Arc::default(),
            paths: Arc::default(),
            protected: Arc::default(),
        }
    }

    /// Uses `report` instead of probing the kernel ([`sandbox_report`]): for tests, and for
    /// hosts that must pretend a piece is missing.
    pub fn with_sandbox_report(mut self, report: SandboxReport) -> RunShell {
        self.report = Some(Arc::new(report));
        self
    }

    /// Its configuration.
    pub fn config(&self) -> &ShellConfig {
        &self.config
    }
}

const DESCRIPTION: &str = "Run a bash command in the workspace and return its exit code, \
stdout and stderr. Use it to build, test, run scripts and use command-line tools; do not use it \
to read, list, find or search files (use read_file, list_dir, glob and search_code), nor to \
write or edit files when write_file or edit_file can. The command runs in a sandbox: it can \
write only inside the workspace and its own temporary directory ($TMPDIR, also $HOME), cannot \
change the protected paths write_file refuses (.toolgate, git's config and hooks, .vscode, \
.cursor, .claude, .husky, .envrc, .mcp.json, shell rc files, ...; one it creates is moved \
aside and listed in protected_created; a write refused on one is explained in \
protected_refused), has no network, no inherited secrets and no \
privileges, and every process it starts is killed at the timeout (`timeout_ms`, default \
120000, at most 600000) or when it ends. `cwd` is a directory relative to the workspace root. \
Returns {exit_code, signal, duration_ms, stdout, stderr, stdout_truncated, stderr_truncated, \
stdout_bytes, stderr_bytes, stdout_handle, stderr_handle, sandboxed, protected_created, \
protected_refused, limits_exceeded}; a non-zero exit code is a normal result. A run may have a bounded number of \
processes at once and a bounded amount of memory in all: limits_exceeded says when the command \
hit one and what to do instead. Long output shows its first third and its last two thirds (the end, where a \
build's or a test run's verdict is, is always shown) with a marker between them naming the \
read_result handle and offset that read the part left out. At the timeout the script is \
stopped at once, before it starts another step, and every process it started is ended; the \
call fails with outcome_unknown (reason timeout) and the end of the output: check its effects \
before running it again.";

/// Refuses a command that names, as an argument, a path in a git directory (or a git
/// directory itself) that does not exist yet (`cp -r g sub/.git`, `cp f .git/commondir`,
/// `dd of=.git/commondir`): the sandbox holds read-only only the git metadata that exists
/// when the run starts, so a line that makes new metadata and then runs git (`... && git -C
/// sub status`) would have git read a configuration (a filter, an alternate common
/// directory) the line wrote. What the line makes by other means is moved aside after the
/// run (see `created`). `cwd` is the call's working directory, relative to the workspace;
/// after a `cd` (`moves`) every such name is refused, wherever it leads.
///
/// # Errors
/// `unsafe_input` / `protected_path` naming the path.
fn new_git_metadata(
    ctx: &ToolContext,
    cwd: Option<&str>,
    moves: bool,
    argv: &[String],
) -> Result<(), ToolError> {
    use crate::fs::protected::is_git_name;
    let Some(program) = argv.first().map(|w| program::program_name(w)) else {
        return Ok(());
    };
    // programs that write none of their operands, git itself (which makes its metadata as
    // git does), the removers and find (whose paths there are patterns to match or prune)
    // are passed over
    if super::parse::never_writes_operands(program)
        || matches!(program, "git" | "rm" | "rmdir" | "find")
    {
        return Ok(());
    }
    let Ok(ws) = ctx.require_workspace() else {
        return Ok(());
    };
    let mut pattern_next = false;
    for word in &argv[1..] {
        // a pattern names what to match or leave out, not a path to write (`tar
        // --exclude='.git/*'`, `zip -x '.git/*'`, `--exclude=sub/.git`, `--exclude sub/.git`)
        let excludes = word.starts_with('-')
            && ["exclude", "include", "ignore", "filter"]
                .iter()
                .any(|k| word.contains(k));
        let pattern = std::mem::replace(&mut pattern_next, excludes && !word.contains('='));
        if pattern || excludes || word.contains(['*', '?', '[']) {
            continue;
        }
        // `of=.git/commondir`, `--target-directory=.git`: the value after `=` too
        let value = word.split_once('=').map(|(_, v)| v);
        for text in std::iter::once(word.as_str()).chain(value) {
            if !text
                .split('/')
                .any(|c| is_git_name(std::ffi::OsStr::new(c)))
            {
                continue;
            }
            let joined;
            let path = match cwd {
                Some(cwd) if !text.starts_with('/') => {
                    joined = format!("{cwd}/{text}");
                    joined.as_str()
                }
                _ => text,
            };
            let Ok(p) = ws.resolve(path) else { continue };
            let in_git = p.as_path().components().any(|c| is_git_name(c.as_os_str()));
            if in_git && (moves || ws.dir().symlink_metadata(p.as_path()).is_err()) {
                return Err(ToolError::unsafe_input(
                    "protected_path",
                    format!(
                        "`{}` names {:?} in a git directory that does not exist before the line runs: a line that \
                         makes git metadata could have git run code from a configuration it \
                         wrote, so toolgate's tools do not make it. Make repositories with git \
                         itself (`git init`, `git clone`), or ask the operator to make this change",
                        program,
                        p.display()
                    ),
                )
                .with_details(serde_json::json!({"protected": "git internals (.git)"})));
            }
        }
    }
    Ok(())
}

/// git subcommands that print a file's content from git's objects (a revision's, the
/// index's) or its history, by the paths they are given.
const GIT_READS_BY_PATH: [&str; 14] = [
    "show",
    "cat-file",
    "grep",
    "diff",
    "log",
    "blame",
    "archive",
    "checkout",
    "restore",
    "whatchanged",
    "format-patch",
    "annotate",
    "difftool",
    "stash",
];

/// Declares as reads the files a git command prints from git's objects by name, so a path
/// rule that keeps a file from being read holds for its committed copies too: the path of a
/// `REV:PATH` operand (`git show HEAD:.env`, `git cat-file -p :.env`; relative to the
/// working directory when it starts `./` or `../`, to the workspace otherwise), every operand
/// after `--`, and every operand that names an existing file (`git log -p .env`). Content
/// reached by an object id (`git cat-file -p 1a2b3c`) or printed whole (`git log -p`) is not
/// named, and is not declared.
fn git_reads(ctx: &ToolContext, cwd: Option<&str>, argv: &[String], out: &mut Vec<Resource>) {
    if argv.first().map(|w| program::program_name(w)) != Some("git") {
        return;
    }
    let mut words = argv[1..].iter();
    // global options, with the values of those that take one
    let sub = loop {
        match words.next().map(String::as_str) {
            Some("-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path") => {
                words.next();
            }
            Some(w) if w.starts_with('-') => {}
            Some(w) => break w,
            None => return,
        }
    };
    if !GIT_READS_BY_PATH.contains(&sub) {
        return;
    }
    let in_cwd = |p: &str| match cwd {
        Some(cwd) if !p.starts_with('/') => format!("{cwd}/{p}"),
        _ => p.to_string(),
    };
    let exists = |p: &str| {
        ctx.workspace()
            .and_then(|ws| ws.resolve(p).ok().map(|r| (ws, r)))
            .is_some_and(|(ws, r)| ws.dir().symlink_metadata(r.as_path()).is_ok())
    };
    let mut pathspecs = false;
    for word in words {
        if pathspecs {
            out.push(Resource::read(in_cwd(word)));
            continue;
        }
        if word == "--" {
            pathspecs = true;
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        // `HEAD:.env`, `HEAD~2:src/.env`, `:.env` and `:0:.env` (the index)
        let named = match word.strip_prefix(':') {
            Some(rest) => Some(
                rest.strip_prefix(|c: char| c.is_ascii_digit())
                    .and_then(|r| r.strip_prefix(':'))
                    .unwrap_or(rest),
            ),
            None => word.split_once(':').map(|(_, path)| path),
        };
        if let Some(path) = named {
            let path = path.trim_start_matches('/');
            if !path.is_empty() && !word.contains("://") {
                out.push(Resource::read(
                    if path.starts_with("./") || path.starts_with("../") {
                        in_cwd(path)
                    } else {
                        path.to_string()
                    },
                ));
            }
            continue;
        }
        if exists(&in_cwd(word)) {
            out.push(Resource::read(in_cwd(word)));
        }
    }
}

impl TypedTool for RunShell {
    type Args = RunShellArgs;
    type Output = RunShellOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder(super::RUN_SHELL)
            .title("Run shell command")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
                concurrency_safe: false,
            })
            .risk(Risk::Dangerous)
            // running the same command again (the tests, after an edit) is meant to run it:
            // only a key the caller sends makes a re-send a replay
            .no_derived_idempotency_key()
            // the command's own timeout governs; the pipeline's only backs it up
            .timeout(Duration::from_millis(MAX_TIMEOUT_MS) + Duration::from_secs(30))
            .tag("shell")
            .example(
                "Run the tests",
                serde_json::json!({"command": "cargo test -q 2>&1 | tail -n 40"}),
            )
            .example(
                "List changed files in a subdirectory, with a short timeout",
                serde_json::json!({"command": "git status --short .", "cwd": "src", "timeout_ms": 10000}),
            )
    }

    /// Refuses a line that would undo the sandbox's git settings (`protected_setting`, see
    /// [`super::vars`]). Declares every command the line runs (for the audit and the policy)
    /// and the files its redirections touch: every written target (so `> ../x` is refused as outside the
    /// workspace before anything runs) and every read target given as a relative path. Reads
    /// elsewhere and targets only known at run time are left to the sandbox.
    fn guard(&self, args: &RunShellArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        check_command(&args.command)?;
        // steps 1 and 2, so a call that cannot run fails before anyone is asked to approve it
        working_dir(ctx, args.cwd.as_deref())?;
        check_sandbox(
            &self.config,
            self.report.as_deref().unwrap_or_else(|| cached_report()),
        )?;
        let analysis = analyze(&args.command);
        if !analysis.pinned.is_empty() {
            // refused before approval, whatever the policy: like a write to `.git`
            return Err(ToolError::unsafe_input(
                "protected_setting",
                format!(
                    "the command would undo git settings the sandbox pins: {}",
                    analysis.pinned.join("; ")
                ),
            ));
        }
        let mut resources = Vec::new();
        if let Some(cwd) = &args.cwd {
            resources.push(Resource::read(cwd));
        }
        // after `cd`, a relative name's directory is known only when the line runs
        let moves = analysis.commands.iter().any(|c| {
            c.argv
                .first()
                .is_some_and(|w| matches!(program::program_name(w), "cd" | "pushd" | "popd"))
        });
        for command in &analysis.commands {
            new_git_metadata(ctx, args.cwd.as_deref(), moves, &command.argv)?;
            git_reads(ctx, args.cwd.as_deref(), &command.argv, &mut resources);
            resources.push(Resource::Command {
                command: command.display(),
            });
        }
        for command in &analysis.possible {
            resources.push(Resource::PossibleCommand {
                command: command.display(),
            });
        }
        for r in &analysis.redirects {
            if r.path.starts_with('~') || r.path.is_empty() {
                continue;
            }
            let in_cwd = |p: &str| match &args.cwd {
                Some(cwd) if !p.starts_with('/') => format!("{cwd}/{p}"),
                _ => p.to_string(),
            };
            match r.access {
                Access::Write => {
                    let target = in_cwd(&r.path);
                    // a redirection into a git directory is refused as the write tools
                    // refuse it: the sandbox holds read-only only what exists there, and a
                    // file made in it (`echo ../g > .git/commondir`) sends git to a
                    // configuration the line wrote
                    if let Ok(p) = ctx.resolve(&target) {
                        let in_git = p
                            .as_path()
                            .components()
                            .any(|c| crate::fs::protected::is_git_name(c.as_os_str()));
                        if let (true, Some(why)) = (in_git, crate::fs::protected::is_protected(&p))
                        {
                            return Err(crate::fs::protected::protected_error(&p.display(), why));
                        }
                    }
                    resources.push(Resource::write(target))
                }
                Access::Read if !r.path.starts_with('/') => {
                    resources.push(Resource::read(in_cwd(&r.path)))
                }
                Access::Read => {}
            }
        }
        Ok(resources)
    }

    async fn call(
        &self,
        args: RunShellArgs,
        ctx: ToolContext,
    ) -> Result<RunShellOutput, ToolError> {
        check_command(&args.command)?;
        let ws = ctx.require_workspace()?.clone();
        ws.writable_dir()?;
        let cwd_host = working_dir(&ctx, args.cwd.as_deref())?;
        let timeout = Duration::from_millis(
            args.timeout_ms
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS),
        );
        let config = self.config.clone();
        let report = match &self.report {
            Some(r) => (**r).clone(),
            None => sandbox_report(),
        };
        let reads = self
            .reads
            .get_or_init(|| fs_rules::ReadGrants::new(&config.deny_read));
        // nothing has run before the spawn: a failure up to it leaves the call's key free;
        // walking the workspace for the path rules is blocking work
        let earlier = self
            .protected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|(root, _)| root == ws.root())
            .map(|(_, found)| found.clone());
        let mut plan = if report.mount_namespace {
            let (config, paths, root) =
                (config.clone(), self.paths.clone(), ws.root().to_path_buf());
            crate::blocking::run(move || {
                let rules = paths.get_or_init(|| PathRules::new(&config));
                binds::plan(&root, &config, rules, true, earlier.as_deref()).map_err(|e| {
                    ToolError::failed(format!(
                        "the sandbox cannot confine this run as the configuration asks ({e}); \
                         the command did not run"
                    ))
                    .with_reason("sandbox_failed")
                })
            })
            .await
            .map_err(ToolError::no_effect)?
        } else {
            binds::Plan::default()
        };
        let found = std::mem::take(&mut plan.found);
        let run = Run::prepare(
            &config,
            &report,
            Rules { reads, plan },
            ws.root(),
            &cwd_host,
            Program::Bash(&args.command),
        )
        .map_err(ToolError::no_effect)?;
        let result = run.execute(&config, &ctx, timeout).await;
        if !report.mount_namespace {
            return result;
        }
        // what the command created among the protected paths (created.rs)
        let root = ws.root().to_path_buf();
        let Ok((created, after)) =
            crate::blocking::run(move || Ok(super::created::created(&root, &found))).await
        else {
            return result;
        };
        *self
            .protected
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            Some((ws.root().to_path_buf(), Arc::new(after)));
        if created.is_empty() {
            return result;
        }
        match result {
            Ok(mut out) => {
                out.protected_created = created;
                Ok(out)
            }
            Err(mut e) => {
                for c in &created {
                    e.message.push_str(&format!("\n{}", c.note));
                }
                Err(e)
            }
        }
    }
}

/// The working directory on the host: `cwd` (default the root) resolved inside the
/// workspace, which must be a directory.
///
/// # Errors
/// What [`ToolContext::resolve`] returns; `tool_failed` / `not_found` (naming `list_dir` to
/// look), `not_a_directory`, or another I/O reason.
fn working_dir(ctx: &ToolContext, cwd: Option<&str>) -> Result<std::path::PathBuf, ToolError> {
    let ws = ctx.require_workspace()?;
    let cwd = ctx.resolve(cwd.unwrap_or("."))?;
    let host = ws.root().join(cwd.as_path());
    match std::fs::metadata(&host) {
        Ok(m) if m.is_dir() => Ok(host),
        Ok(_) => Err(ToolError::failed(format!(
            "cwd {:?} is not a directory; send a directory relative to the workspace root",
            cwd.display()
        ))
        .with_reason("not_a_directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::not_found(format!(
            "cwd {:?} does not exist; send a directory that exists, relative to the workspace \
             root (list_dir shows them), or leave cwd out to run at the root",
            cwd.display()
        ))),
        Err(e) => Err(toolgate_core::workspace::io_error(&cwd.display(), &e)),
    }
}

/// Refuses the run when the sandbox lacks a piece this configuration needs, unless the
/// configuration allows unsandboxed runs.
///
/// # Errors
/// `tool_failed` / `sandbox_unavailable`, with the report in the details.
fn check_sandbox(config: &ShellConfig, report: &SandboxReport) -> Result<(), ToolError> {
    let missing = report.missing_for(!config.allow_network);
    if !missing.is_empty() && !config.allow_unsandboxed {
        return Err(ToolError::failed(format!(
            "run_shell cannot run here: the kernel lacks what its sandbox needs ({}); the \
             operator can allow unsandboxed runs in the configuration, the model cannot",
            missing.join("; ")
        ))
        .with_reason("sandbox_unavailable")
        .with_details(serde_json::json!({ "sandbox": report })));
    }
    Ok(())
}

/// Refuses a command the schema would let through but the shell cannot take.
fn check_command(command: &str) -> Result<(), ToolError> {
    if command.len() > MAX_COMMAND_LEN {
        return Err(ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "the command is {} bytes, more than run_shell takes ({MAX_COMMAND_LEN}); put \
                 long scripts in a file with write_file and run that",
                command.len()
            ),
        ));
    }
    if command.contains('\r') {
        // bash keeps a carriage return in a word (`echo x\r#$(cmd)` runs cmd), where the
        // grammar the rules read it with takes it for white space (and the rest for a
        // comment): the two would read different commands
        return Err(ToolError::invalid_arguments(
            "the command holds a carriage return (U+000D, as in CRLF line ends), which bash \
             keeps as part of a word; send lines separated by \\n only",
            vec![toolgate_core::ArgumentFault {
                pointer: "/command".into(),
                message: "must not contain a carriage return (U+000D)".into(),
            }],
        ));
    }
    if command.trim().is_empty() {
        return Err(ToolError::invalid_arguments(
            "the command is empty; send the bash command line to run",
            vec![toolgate_core::ArgumentFault {
                pointer: "/command".into(),
                message: "must not be blank".into(),
            }],
        ));
    }
    Ok(())
}

/// The rules of a run: Landlock's read grants (opened once per tool) and the mounts over
/// workspace paths planned for it.
pub(crate) struct Rules<'a> {
    pub(crate) reads: &'a fs_rules::ReadGrants,
    pub(crate) plan: binds::Plan,
}

/// The temporary directories a spawned run keeps until it ends (its private `$TMPDIR`, and
/// the covers of hidden paths).
#[derive(Debug)]
pub(crate) struct Kept {
    // the thread the server was forked from: its drop (or toolgate's death) kills the server
    _parent: sandbox::Parent,
    _tmp: tempfile::TempDir,
    _cover: Option<tempfile::TempDir>,
    // its drop kills what is left in it and removes it
    _cgroup: Option<RunCgroup>,
}

/// What a sandboxed run executes.
pub(crate) enum Program<'a> {
    /// `bash --noprofile --norc -c SCRIPT`, stdin from `/dev/null` (run_shell).
    Bash(&'a str),
    /// A program with its arguments, stdin piped (a long-running server, see
    /// [`super::process`]).
    Exec {
        /// The program.
        program: &'a Path,
        /// Its arguments.
        args: &'a [String],
    },
}

/// One prepared run: the command to spawn and what the sandbox lacks.
/// A run's home directory: a directory of 32 random letters and digits inside a directory its owner
/// may enter and write but not list (mode `0300`; the command runs without the capability
/// to read past that), so `/tmp/toolgate-home-*/.lesskey` names nothing a command can find
/// and only `$HOME`, `~` or a bare `cd` (which make a line uncertain) lead there. Both are
/// removed when it is dropped.
pub(crate) struct PrivateHome {
    // dropped first: removing it needs only the parent's write and search permissions
    home: tempfile::TempDir,
    parent: tempfile::TempDir,
}

impl PrivateHome {
    fn new() -> std::io::Result<PrivateHome> {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::Builder::new()
            .prefix("toolgate-home-")
            .tempdir()?;
        let home = tempfile::Builder::new()
            .prefix("")
            .rand_bytes(32)
            .tempdir_in(parent.path())?;
        std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o300))?;
        Ok(PrivateHome { home, parent })
    }

    fn path(&self) -> &Path {
        self.home.path()
    }
}

impl Drop for PrivateHome {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        // listable again, so the parent's own removal can read it
        let _ =
            std::fs::set_permissions(self.parent.path(), std::fs::Permissions::from_mode(0o700));
    }
}

pub(crate) struct Run {
    command: Command,
    new_pid: bool,
    missing: Vec<String>,
    cgroup: Option<RunCgroup>,
    /// The entries bound read-only, whose refused writes the output is read for.
    watched: Arc<Watched>,
    // removed when the run ends
    _tmp: tempfile::TempDir,
    _home: PrivateHome,
    _cover: Option<tempfile::TempDir>,
}

impl Run {
    pub(crate) fn prepare(
        config: &ShellConfig,
        report: &SandboxReport,
        rules: Rules<'_>,
        root: &Path,
        cwd: &Path,
        program: Program<'_>,
    ) -> Result<Run, ToolError> {
        check_sandbox(config, report)?;
        let reads = rules.reads;
        let missing = report.missing_for(!config.allow_network);
        if !missing.is_empty() {
            tracing::warn!(missing = ?missing, "run_shell runs without its full sandbox, as configured");
        }
        let (cgroup, cgroup_procs) = run_cgroup(config, report)?;
        let tmp = tempfile::Builder::new()
            .prefix("toolgate-sh-")
            .tempdir()
            .map_err(|e| internal("making the run's temporary directory", &e))?;
        let landlock_ok = report.landlock_abi >= fs_rules::MIN_ABI;
        let tmp_path = tmp
            .path()
            .canonicalize()
            .map_err(|e| internal("resolving the temporary directory", &e))?;
        // the run's home is not its temporary directory: a path made from `$TMPDIR` or
        // `mktemp` (`$(mktemp -d)/../.gdbinit`) does not reach the startup files programs
        // read there, and a line naming the home is uncertain (see `parse::reaches_home`)
        let home =
            PrivateHome::new().map_err(|e| internal("making the run's home directory", &e))?;
        let home_path = home
            .path()
            .canonicalize()
            .map_err(|e| internal("resolving the home directory", &e))?;
        let mut writable = vec![root.to_path_buf(), tmp_path, home_path];
        writable.extend(config.extra_writable.iter().cloned());
        let c_path = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
        let landlock = if landlock_ok {
            let rules = fs_rules::FsRules {
                writable: writable.clone(),
                reads: Some(reads),
            };
            let ruleset = fs_rules::build(&rules).map_err(|e| {
                ToolError::failed(format!("the sandbox's file rules could not be built: {e}"))
                    .with_reason("sandbox_failed")
            })?;
            Option::<std::os::fd::OwnedFd>::from(ruleset)
        } else {
            None
        };
        let new_mount = report.mount_namespace;
        let plan = rules.plan;
        let read_only: Vec<String> = plan
            .binds
            .iter()
            .filter(|b| b.kind == BindKind::ReadOnly)
            .map(|b| {
                b.components
                    .iter()
                    .map(|c| String::from_utf8_lossy(c.as_bytes()))
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        let watched = Arc::new(Watched::new(
            read_only,
            &root.to_string_lossy(),
            &cwd.strip_prefix(root)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ));
        let cover = if plan.binds.iter().any(|b| b.kind == BindKind::Hide) {
            Some(
                cover_sources()
                    .map_err(|e| internal("preparing the covers of hidden paths", &e))?,
            )
        } else {
            None
        };
        let hide_sources = cover.as_ref().and_then(|c| {
            Some((
                c_path(&c.path().join("file"))?,
                c_path(&c.path().join("dir"))?,
            ))
        });
        let setup = ChildSetup {
            new_pid: report.pid_namespace,
            user: report.user_namespace.then(UserMaps::own),
            new_mount,
            new_net: !config.allow_network && report.network_namespace,
            writable: writable.iter().filter_map(|p| c_path(p)).collect(),
            root: new_mount.then(|| c_path(root)).flatten(),
            binds: plan.binds,
            hide_sources,
            cwd: c_path(cwd),
            rlimits: rlimits(config),
            drop_caps: true,
            landlock,
            proc_access: fs_rules::proc_access(),
            private_shm: (new_mount && landlock_ok && Path::new("/dev/shm").is_dir())
                .then(fs_rules::shm_access),
            block_unix_sockets: !config.allow_unix_sockets,
            cgroup_procs,
        };
        // commits made by a command have an identity; a long-running server (third-party code)
        // gets only the environment its configuration names
        let identity = match program {
            Program::Bash(_) => config.git_identity.resolve(),
            Program::Exec { .. } => None,
        };
        let mut command = match program {
            Program::Bash(script) => {
                let mut c = Command::new(&config.bash);
                c.arg("--noprofile")
                    .arg("--norc")
                    .arg("-c")
                    .arg(script)
                    .stdin(Stdio::null());
                c
            }
            Program::Exec { program, args } => {
                let mut c = Command::new(program);
                c.args(args).stdin(Stdio::piped());
                c
            }
        };
        command
            .env_clear()
            .envs(env::build(
                std::env::vars_os(),
                &config.inherit_env,
                &config.env,
                tmp.path(),
                home.path(),
                identity,
            ))
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let new_pid = sandbox::install(&mut command, setup);
        Ok(Run {
            command,
            new_pid,
            missing,
            cgroup,
            watched,
            _tmp: tmp,
            _home: home,
            _cover: cover,
        })
    }

    /// Spawns the prepared command and hands it over, with what the sandbox lacks and the
    /// temporary directories to keep while it runs (a long-running server's).
    ///
    /// # Errors
    /// The spawn error ([`sandbox::setup_failure`] tells a failed set-up step).
    pub(crate) async fn spawn(self) -> std::io::Result<(tokio::process::Child, Vec<String>, Kept)> {
        let (child, parent) = sandbox::spawn(self.command, self.new_pid).await?;
        Ok((
            child,
            self.missing,
            Kept {
                _parent: parent,
                _tmp: self._tmp,
                _cover: self._cover,
                _cgroup: self.cgroup,
            },
        ))
    }

    async fn execute(
        self,
        config: &ShellConfig,
        ctx: &ToolContext,
        timeout: Duration,
    ) -> Result<RunShellOutput, ToolError> {
        let Run {
            command,
            new_pid,
            missing,
            cgroup,
            watched,
            _tmp,
            _home,
            _cover,
        } = self;
        // the pipeline's deadline backs the command's own up; leave room to report
        let deadline = (Instant::now() + timeout).min(
            ctx.deadline()
                .checked_sub(config.kill_grace + DRAIN)
                .unwrap_or_else(Instant::now),
        );
        let started = Instant::now();
        // `_parent` lives to the end of the run: a toolgate killed meanwhile takes the run along
        let (mut child, _parent) = sandbox::spawn(command, new_pid)
            .await
            .map_err(|e| spawn_error(&config.bash, &e).no_effect())?;
        let mut group = Group::new(child.id());
        let stop = CancellationToken::new();
        let streamed = ctx
            .wants_progress()
            .then(|| Arc::new(Mutex::new(OutputProgress::new(config.progress))));
        let out = tokio::spawn(read_stream(
            child.stdout.take(),
            config.stdout,
            stop.clone(),
            streamed.clone().map(|p| (p, Stream::Stdout)),
            RefusedScan::new(watched.clone()),
        ));
        let err = tokio::spawn(read_stream(
            child.stderr.take(),
            config.stderr,
            stop.clone(),
            streamed.clone().map(|p| (p, Stream::Stderr)),
            RefusedScan::new(watched.clone()),
        ));
        let streaming_done = CancellationToken::new();
        let streaming = streamed
            .clone()
            .map(|p| tokio::spawn(stream_progress(p, ctx.clone(), streaming_done.clone())));
        let (ended, status) = tokio::select! {
            biased;
            _ = ctx.cancellation().cancelled() => (Ended::Cancelled, None),
            status = child.wait() => (Ended::Exited, Some(status)),
            _ = tokio::time::sleep_until(deadline.into()) => (Ended::TimedOut, None),
        };
        let (status, stopped) = match status {
            Some(status) => {
                // whatever is left of the group (without a PID namespace) goes too
                group.kill(Signal::KILL);
                (status, String::new())
            }
            None => {
                // with a cgroup, what escaped the group dies with it just below
                let whole = new_pid || cgroup.is_some();
                stop::stop(&mut child, group.pid, config.kill_grace, whole).await
            }
        };
        group.disarm();
        let duration = started.elapsed();
        // what the run hit, read before its cgroup goes; then whatever is left in it dies
        // (a process that left the group and, without a PID namespace, the shell's reach)
        let exceeded = cgroup.as_ref().map(RunCgroup::exceeded).unwrap_or_default();
        if let Some(cgroup) = cgroup {
            cgroup.finish().await;
        }
        // the streams end when the last process holding them does; a process that escaped
        // the namespace could hold them open, so stop reading after a short drain
        let timer = tokio::spawn({
            let stop = stop.clone();
            async move {
                tokio::time::sleep(DRAIN).await;
                stop.cancel();
            }
        });
        let (out, err) = (out.await, err.await);
        timer.abort();
        if let (Some(streamed), Some(streaming)) = (streamed, streaming) {
            streaming_done.cancel();
            let _ = streaming.await;
            let last = {
                let mut p = lock(&streamed);
                p.finish();
                p.take()
            };
            if let Some((progress, message)) = last {
                ctx.report_progress(progress, None, Some(message));
            }
        }
        let (Ok((out, out_scan)), Ok((err, err_scan))) = (out, err) else {
            return Err(ToolError::internal(
                "the output readers of run_shell stopped",
            ));
        };
        // stderr first: that is where programs say a write failed
        let protected_refused = refused::notes(
            &watched,
            err_scan.finish().into_iter().chain(out_scan.finish()),
        );
        let with_refused = |mut e: ToolError| {
            for r in &protected_refused {
                e.message.push_str(&format!("\n{}", r.note));
            }
            e
        };
        let status = status.map_err(|e| internal("waiting for the shell", &e))?;
        match ended {
            Ended::Cancelled => Err(with_refused(
                ToolError::new(
                    ErrorKind::Cancelled,
                    format!(
                        "the call was cancelled and the command was stopped: {stopped}{}",
                        limits_text(&exceeded)
                    ),
                )
                .with_reason("effect_unknown"),
            )),
            Ended::TimedOut => Err(with_refused(timed_out(
                ctx, timeout, &stopped, &exceeded, out, err,
            ))),
            Ended::Exited => {
                let stdout = stream_result(ctx, out);
                let stderr = stream_result(ctx, err);
                Ok(RunShellOutput {
                    exit_code: status.code(),
                    signal: status.signal(),
                    duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                    stdout: stdout.text,
                    stderr: stderr.text,
                    stdout_truncated: stdout.truncated,
                    stderr_truncated: stderr.truncated,
                    stdout_bytes: stdout.bytes,
                    stderr_bytes: stderr.bytes,
                    stdout_handle: stdout.handle,
                    stderr_handle: stderr.handle,
                    sandboxed: missing.is_empty(),
                    sandbox_missing: missing,
                    protected_created: Vec::new(),
                    protected_refused,
                    limits_exceeded: exceeded,
                })
            }
        }
    }
}

enum Ended {
    Exited,
    TimedOut,
    Cancelled,
}

/// The process group of a run (the shell's pid, which `setsid` made the group id), killed
/// with SIGKILL when dropped while armed.
struct Group {
    pid: Option<Pid>,
}

impl Group {
    fn new(pid: Option<u32>) -> Group {
        Group {
            pid: pid
                .and_then(|p| i32::try_from(p).ok())
                .and_then(Pid::from_raw),
        }
    }

    fn kill(&self, signal: Signal) {
        if let Some(pid) = self.pid {
            // ESRCH (the group is gone) is the expected outcome after a clean exit
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }

    fn disarm(&mut self) {
        self.pid = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            // the call's future was dropped (the pipeline's deadline): nothing may outlive it
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
}

/// Reads `stream` to its end (or until `stop`) into a capture, into `progress` when the
/// caller listens, and through `scan` (refused writes on read-only entries): each chunk once.
async fn read_stream<R: tokio::io::AsyncRead + Unpin>(
    stream: Option<R>,
    limits: CaptureLimits,
    stop: CancellationToken,
    progress: Option<(Arc<Mutex<OutputProgress>>, Stream)>,
    mut scan: RefusedScan,
) -> (Capture, RefusedScan) {
    let mut capture = Capture::new(limits);
    let Some(mut stream) = stream else {
        return (capture, scan);
    };
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            n = stream.read(&mut buf) => n,
        };
        match n {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                capture.push(&buf[..n]);
                scan.push(&buf[..n]);
                if let Some((p, which)) = &progress {
                    lock(p).push(*which, &buf[..n]);
                }
            }
        }
    }
    (capture, scan)
}

/// Sends the lines waiting in `progress` to the caller every interval, until `done`.
async fn stream_progress(
    progress: Arc<Mutex<OutputProgress>>,
    ctx: ToolContext,
    done: CancellationToken,
) {
    let every = lock(&progress).interval();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = done.cancelled() => return,
            _ = ticks.tick() => {
                let report = lock(&progress).take();
                if let Some((p, message)) = report {
                    ctx.report_progress(p, None, Some(message));
                }
            }
        }
    }
}

/// The lines in waiting; a panic elsewhere while holding them leaves them usable.
fn lock(p: &Mutex<OutputProgress>) -> std::sync::MutexGuard<'_, OutputProgress> {
    p.lock().unwrap_or_else(PoisonError::into_inner)
}

struct StreamResult {
    text: String,
    truncated: bool,
    bytes: u64,
    handle: Option<String>,
}

/// The capture as the model sees it: what was kept goes to the result store when the preview
/// leaves part of it out, and the preview's marker names its handle.
fn stream_result(ctx: &ToolContext, capture: Capture) -> StreamResult {
    let captured = capture.finish();
    let truncated = captured.truncated();
    let handle = truncated.then(|| keep(ctx, &captured)).flatten();
    StreamResult {
        text: captured.preview(handle.as_deref()),
        truncated,
        bytes: captured.total_bytes,
        handle,
    }
}

/// Puts what was kept of a stream in the result store, for `read_result`.
fn keep(ctx: &ToolContext, captured: &Captured) -> Option<String> {
    ctx.results()
        .put(ctx.session_id(), captured.kept.clone())
        .map_err(|e| tracing::warn!(error = %e, "run_shell could not keep its full output"))
        .ok()
}

/// The error of a run stopped at its timeout: what was done to it, and the end of both
/// streams for the model (the rest kept behind a handle, as for a finished run).
fn timed_out(
    ctx: &ToolContext,
    timeout: Duration,
    stopped: &str,
    exceeded: &[String],
    out: Capture,
    err: Capture,
) -> ToolError {
    let end = |c: Capture, name: &str| {
        let captured = c.finish();
        let text = &captured.kept;
        let start =
            toolgate_core::results::floor_char_boundary(text, text.len().saturating_sub(2000));
        let mut shown = format!("--- end of {name} ({} bytes) ---\n", captured.total_bytes);
        if start > 0 {
            if let Some(h) = keep(ctx, &captured) {
                shown.push_str(&format!(
                    "[... the {start} bytes before this are left out here; read them with \
                     read_result {{\"handle\":\"{h}\",\"offset\":0}} ...]\n"
                ));
            }
        }
        shown.push_str(&clean_output(&text[start..]));
        shown
    };
    let (out, err) = (end(out, "stdout"), end(err, "stderr"));
    ToolError::new(
        ErrorKind::OutcomeUnknown,
        format!(
            "the command did not finish within its timeout of {} ms and was stopped: {stopped}. \
             Its effects may be partial: check them before running it again, with a longer \
             timeout_ms or in smaller steps.{}\n{out}\n{err}",
            timeout.as_millis(),
            limits_text(exceeded)
        ),
    )
    .with_reason("timeout")
}

/// The limits a run hit, as sentences to append to a message (empty when none).
fn limits_text(exceeded: &[String]) -> String {
    exceeded
        .iter()
        .map(|e| format!(" Limit exceeded: {e}."))
        .collect()
}

/// The run's cgroup and its `cgroup.procs` files for the child, when the machine gives one
/// (`report.cgroup`).
///
/// # Errors
/// `tool_failed` / `sandbox_failed` when the machine gave one at start but this run's cannot
/// be made (the command would run without its process and memory limits), unless the
/// configuration allows unsandboxed runs: then the run goes on without it, logged.
fn run_cgroup(
    config: &ShellConfig,
    report: &SandboxReport,
) -> Result<(Option<RunCgroup>, Vec<OwnedFd>), ToolError> {
    let Some(site) = &report.cgroup else {
        return Ok((None, Vec::new()));
    };
    let made = RunCgroup::create(site, &config.limits).and_then(|cg| {
        let procs = cg.procs()?;
        Ok((cg, procs))
    });
    match made {
        Ok((cg, procs)) => Ok((Some(cg), procs)),
        Err(e) if config.allow_unsandboxed => {
            tracing::warn!(
                error = %e,
                site = %site.describe(),
                "run_shell could not make the run's cgroup; it runs bounded by its timeout and \
                 rlimits only, as allow_unsandboxed permits"
            );
            Ok((None, Vec::new()))
        }
        Err(e) => Err(ToolError::failed(format!(
            "the sandbox could not make the run's cgroup in {} ({e}), which bounds its \
             processes and memory; the command did not run. It may be a passing shortage \
             (too many cgroups): try again shortly, or tell the operator",
            site.describe()
        ))
        .with_reason("sandbox_failed")),
    }
}

/// A private directory holding the empty read-only file and directory that cover hidden
/// paths (outside every directory the command may write).
fn cover_sources() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("toolgate-cover-")
        .tempdir()?;
    let file = dir.path().join("file");
    std::fs::write(&file, b"")?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444))?;
    let empty = dir.path().join("dir");
    std::fs::create_dir(&empty)?;
    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o555))?;
    Ok(dir)
}

/// The configured limits, never above toolgate's own hard limits (raising them would fail).
fn rlimits(config: &ShellConfig) -> Vec<(Rlim, u64)> {
    let l = config.limits;
    let mut out = vec![(Rlim::Core, 0)];
    for (resource, limit) in [
        (Rlim::Cpu, l.cpu_seconds),
        (Rlim::As, l.address_space_bytes),
        (Rlim::Nproc, l.processes),
        (Rlim::Fsize, l.file_size_bytes),
        (Rlim::Nofile, l.open_files),
    ] {
        let Some(limit) = limit else { continue };
        let hard = rustix::process::getrlimit(resource).maximum;
        out.push((resource, hard.map_or(limit, |h| limit.min(h))));
    }
    out
}

fn spawn_error(bash: &Path, e: &std::io::Error) -> ToolError {
    if let Some((step, errno)) = sandbox::setup_failure(e) {
        return ToolError::failed(format!(
            "the sandbox could not be set up ({step}: {errno}); the command did not run"
        ))
        .with_reason("sandbox_failed");
    }
    if e.kind() == std::io::ErrorKind::NotFound {
        return ToolError::failed(format!(
            "the shell {} does not exist on this machine",
            bash.display()
        ))
        .with_reason("shell_not_found");
    }
    internal("starting the shell", e)
}

fn internal(what: &str, e: &std::io::Error) -> ToolError {
    ToolError::internal(format!("run_shell failed {what}: {e}"))
}
