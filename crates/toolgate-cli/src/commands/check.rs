//! `toolgate check [--config F] [--workspace DIR]`: validates the configuration, printing each
//! problem at `file:line:column`; a valid one is recorded as the configuration in force in the
//! workspace (see [`super::in_force`]). Then what the sandbox can enforce here and the
//! effective profiles and rules. `--print-schema` prints the configuration's JSON Schema
//! instead.

use crate::exit::Exit;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `toolgate check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// Print the JSON Schema of toolgate.toml and exit.
    #[arg(long)]
    print_schema: bool,
}

/// Runs the command: exit 0 when the configuration is valid, 1 when it has problems.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let mut out = std::io::stdout().lock();
    if args.print_schema {
        out.write_all(toolgate_config::schema::schema_json().as_bytes())?;
        return Ok(Exit::Success);
    }
    let workspace = super::open_workspace(args.workspace.as_deref())?;
    let tools = super::builtin_tools(&toolgate_config::Config::default())?;
    let specs: Vec<&toolgate_core::ToolSpec> = tools.iter().map(|t| t.spec()).collect();
    let loaded = toolgate_config::locate(workspace.root(), args.config.as_deref())
        .map_err(|p| vec![p])
        .and_then(|located| {
            toolgate_config::load(workspace.root(), args.config.as_deref(), &specs)
                .map(|c| (located, c))
        });
    let (located, config) = match loaded {
        Ok(c) => c,
        Err(problems) => {
            for p in &problems {
                writeln!(out, "{p}")?;
            }
            writeln!(
                out,
                "toolgate: {} problem{} in the configuration",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )?;
            return Ok(Exit::HostError);
        }
    };
    match config.file() {
        Some(f) => writeln!(out, "configuration {}: ok", f.display())?,
        None => writeln!(
            out,
            "no configuration (no {} in {}): toolgate's defaults",
            toolgate_config::CONFIG_FILE,
            workspace.root().display()
        )?,
    }
    super::in_force::record(&workspace, args.config.as_deref(), &located)?;
    writeln!(
        out,
        "in force: calls in this workspace run under {} from now on",
        match config.file() {
            Some(f) => f.display().to_string(),
            None => "toolgate's defaults".to_string(),
        }
    )?;
    let report = toolgate_tools::shell::sandbox_report();
    let shell = config.shell_config();
    let missing = report.missing_for(!shell.allow_network);
    writeln!(
        out,
        "sandbox: landlock ABI {}, mount namespace {}, network namespace {}, pid namespace {}, \
         process limit {}",
        report.landlock_abi,
        yes(report.mount_namespace),
        yes(report.network_namespace),
        yes(report.pid_namespace),
        yes(report.process_limit)
    )?;
    if missing.is_empty() {
        writeln!(out, "sandbox: run_shell runs fully sandboxed here")?;
    } else if shell.allow_unsandboxed {
        writeln!(
            out,
            "sandbox: run_shell runs WITHOUT part of its sandbox (shell.allow_unsandboxed): missing {}",
            missing.join("; ")
        )?;
    } else {
        writeln!(
            out,
            "sandbox: run_shell refuses to run here: missing {}",
            missing.join("; ")
        )?;
    }
    writeln!(
        out,
        "shell: network {}",
        if shell.allow_network { "on" } else { "off" }
    )?;
    for line in config.summary(&specs) {
        writeln!(out, "{line}")?;
    }
    Ok(Exit::Success)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
