//! One file per subcommand.

pub mod approvals;
pub mod audit;
pub mod call;
pub mod recording;
pub mod serve;
pub mod stats;
pub mod store;
pub mod tools;
pub mod validate;

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toolgate_core::{Registry, Workspace};

/// The built-in registry: the read-only workspace tools, write_file and edit_file, and
/// run_shell with its default configuration (it refuses to run where the kernel lacks its
/// sandbox). The write tools and run_shell are destructive: the default policy asks, and
/// `call --yes` is the operator's approval.
pub fn builtin_registry() -> anyhow::Result<Registry> {
    let builder = toolgate_tools::register_read_only(Registry::builder());
    let builder = toolgate_tools::register_write_tools(builder);
    toolgate_tools::register_shell(builder, toolgate_tools::shell::ShellConfig::default())
        .build()
        .context("registering the built-in tools")
}

/// Opens the workspace at `dir` (default: the current directory).
pub fn open_workspace(dir: Option<&Path>) -> anyhow::Result<Workspace> {
    let dir: PathBuf = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    Workspace::open(&dir).with_context(|| format!("opening workspace {}", dir.display()))
}

/// Wraps a registry for the pipeline.
pub fn shared(registry: Registry) -> Arc<Registry> {
    Arc::new(registry)
}

/// The workspace's store file, `<root>/.toolgate/toolgate.db`. The directory is created (mode
/// 0700) without following a link, so a workspace that plants `.toolgate -> elsewhere` gets an
/// error instead of toolgate writing its state outside it; the store itself refuses a
/// symlinked database file.
pub fn workspace_store(workspace: &Workspace) -> anyhow::Result<PathBuf> {
    let dir = workspace
        .state_dir(".toolgate")
        .context("preparing the workspace's .toolgate directory (it must be a real directory)")?;
    Ok(dir.join("toolgate.db"))
}

/// Prints `rows` to stdout as JSON lines (`json`) or with `table`, buffered.
///
/// # Errors
/// Serialization or write errors (a closed pipe ends the process first: see `main`).
pub fn print_rows<T: serde::Serialize>(
    rows: &[T],
    json: bool,
    table: impl FnOnce(&mut dyn std::io::Write, &[T]) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        for r in rows {
            serde_json::to_writer(&mut out, r)?;
            out.write_all(b"\n")?;
        }
    } else {
        table(&mut out, rows)?;
    }
    out.flush()?;
    Ok(())
}
