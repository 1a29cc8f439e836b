//! A long-running program under run_shell's sandbox, with stdin and stdout piped: an MCP
//! stdio server the gateway starts and supervises.
//!
//! The same sandbox as a run_shell command, set up by the same code (`run_shell.rs`'s
//! preparation and `sandbox.rs`'s child set-up): Landlock (reads everywhere except the
//! credential stores of [`ShellConfig::deny_read`], writes only in the workspace and a private
//! temporary directory that is also `HOME`), a private mount namespace with the protected
//! paths read-only, a private network namespace unless [`ShellConfig::allow_network`], a PID
//! namespace whose teardown kills every process the server started, the environment of
//! [`ShellConfig::inherit_env`] and [`ShellConfig::env`] only, rlimits and no capabilities,
//! and a cgroup of its own where the machine gives one (its processes and memory bounded as a
//! run's, [`super::CgroupSite`]). The process is killed when the [`SandboxedProcess`] is
//! dropped, and with it every process left in its cgroup, which is removed. Unlike a run, a
//! server has no end at which to look for protected paths it created (`created.rs`): those it
//! binds are the ones that exist when it starts.

use super::binds::{self, PathRules};
use super::fs_rules::ReadGrants;
use super::report::SandboxReport;
use super::run_shell::{Kept, Program, Rules, Run};
use super::sandbox;
use super::ShellConfig;
use std::path::Path;
use toolgate_core::ToolError;

/// A running sandboxed program. Take its pipes from [`SandboxedProcess::child`]; dropping it
/// kills the program (and, in its PID namespace, everything it started) and removes its
/// temporary directory.
#[derive(Debug)]
pub struct SandboxedProcess {
    /// The child: `stdin`, `stdout` and `stderr` are piped.
    pub child: tokio::process::Child,
    missing: Vec<String>,
    _kept: Kept,
}

impl SandboxedProcess {
    /// Starts `program` with `args`, working directory `root` (the workspace), under the
    /// sandbox `config` describes and `report` says this machine enforces (see
    /// [`super::sandbox_report`]). Must run inside a tokio runtime.
    ///
    /// # Errors
    /// `tool_failed` with reason `sandbox_unavailable` (the kernel lacks a piece the sandbox
    /// needs and `config.allow_unsandboxed` is off), `sandbox_failed` (a set-up step failed,
    /// named in the message), `program_not_found`, or `internal` for another spawn error.
    pub async fn spawn(
        config: &ShellConfig,
        report: &SandboxReport,
        root: &Path,
        program: &Path,
        args: &[String],
    ) -> Result<SandboxedProcess, ToolError> {
        let reads = ReadGrants::new(&config.deny_read);
        // the same mounts over workspace paths as a run (protected paths pinned read-only,
        // what the configuration hides hidden); walking the workspace is blocking work
        let plan = if report.mount_namespace {
            let (c, r) = (config.clone(), root.to_path_buf());
            crate::blocking::run(move || {
                binds::plan(&r, &c, &PathRules::new(&c), true, None).map_err(|e| {
                    ToolError::failed(format!(
                        "the sandbox cannot confine the server as the configuration asks ({e}); \
                         it did not start"
                    ))
                    .with_reason("sandbox_failed")
                })
            })
            .await?
        } else {
            binds::Plan::default()
        };
        let run = Run::prepare(
            config,
            report,
            Rules {
                reads: &reads,
                plan,
            },
            root,
            root,
            Program::Exec { program, args },
        )?;
        let (child, missing, kept) = run.spawn().await.map_err(|e| spawn_error(program, &e))?;
        Ok(SandboxedProcess {
            child,
            missing,
            _kept: kept,
        })
    }

    /// What the sandbox lacks on this machine (empty when it is whole); a process runs with
    /// pieces missing only when the configuration allows unsandboxed runs.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }
}

fn spawn_error(program: &Path, e: &std::io::Error) -> ToolError {
    if let Some((step, errno)) = sandbox::setup_failure(e) {
        return ToolError::failed(format!(
            "the sandbox of {} could not be set up ({step}: {errno}); it did not start",
            program.display()
        ))
        .with_reason("sandbox_failed");
    }
    if e.kind() == std::io::ErrorKind::NotFound {
        return ToolError::failed(format!(
            "the program {} does not exist on this machine",
            program.display()
        ))
        .with_reason("program_not_found");
    }
    ToolError::internal(format!("starting {} failed: {e}", program.display()))
}
