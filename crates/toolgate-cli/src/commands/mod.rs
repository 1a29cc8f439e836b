//! One file per subcommand.

pub mod approvals;
pub mod audit;
pub mod auth;
pub mod call;
pub mod check;
pub mod eval;
pub mod export;
pub mod gateway;
pub mod gateway_catalog;
pub mod in_force;
pub mod ledger;
pub mod mail;
pub mod recording;
pub mod serve;
pub mod stats;
pub mod store;
pub mod tools;
pub mod upstream;
pub mod validate;

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toolgate_core::{IntoTool, Registry, Tool, Workspace};

/// The built-in tools under `config`: the read-only workspace tools, write_file and
/// edit_file, run_shell with the configuration's shell settings (by default it refuses to
/// run where the kernel lacks its sandbox), and the HTTP tools with its `[http]` settings,
/// each under the configuration's per-call limits.
pub fn builtin_tools(config: &toolgate_config::Config) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    tools_with_shell(config, config.shell_config())
}

/// The names a configuration may give in its profiles and rules: the built-in tools and the
/// mail tools (named whether or not `[mail]` registers them), from each crate's list of its
/// tools' names: nothing is built, so loading a configuration derives no schema
/// (`nameable_names_are_the_built_tools` checks the lists against the tools).
pub fn nameable_names() -> Vec<&'static str> {
    let mut names = Vec::with_capacity(16);
    names.extend(toolgate_tools::READ_ONLY_TOOLS);
    names.extend(toolgate_tools::resources::RESOURCE_TOOLS);
    names.extend(toolgate_tools::WRITE_TOOLS);
    names.extend(toolgate_tools::HTTP_TOOLS);
    names.push(toolgate_tools::shell::RUN_SHELL);
    names.extend(toolgate_mail::TOOL_NAMES);
    names
}

/// The contracts a configuration may name in its profiles and rules ([`nameable_names`]),
/// built: the built-in tools under the default configuration and the mail tools.
pub fn nameable_specs() -> anyhow::Result<Vec<toolgate_core::ToolSpec>> {
    let mut specs: Vec<toolgate_core::ToolSpec> =
        builtin_tools(&toolgate_config::Config::default())?
            .iter()
            .map(|t| t.spec().clone())
            .collect();
    specs.extend(toolgate_mail::specs());
    Ok(specs)
}

fn tools_with_shell(
    config: &toolgate_config::Config,
    shell: toolgate_tools::shell::ShellConfig,
) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    let mut tools = toolgate_tools::read_only_tools().context("the read-only tools")?;
    tools.extend(toolgate_tools::resource_tools().context("the resource tools")?);
    tools.extend(toolgate_tools::write_tools().context("the write tools")?);
    tools.extend(toolgate_tools::http_tools(config.http_config()).context("the HTTP tools")?);
    tools.push(
        toolgate_tools::shell::RunShell::new(shell)
            .into_tool()
            .context("run_shell")?,
    );
    Ok(tools.into_iter().map(|t| config.limit(t)).collect())
}

/// The built-in registry under `config` in `workspace`: [`builtin_tools`], the mail tools when
/// the configuration has `[mail]`, and the configuration's profiles, without the upstreams'
/// tools: what `export` shows (`serve`, `call` and `tools` add the upstreams' through
/// [`gateway`]). The write tools and run_shell are destructive: the default policy asks, and
/// `call --yes` is the operator's approval.
pub fn builtin_registry(
    config: &toolgate_config::Config,
    workspace: &Workspace,
) -> anyhow::Result<Registry> {
    let tools = tools_with_shell(config, config.shell_config())?;
    registry_of(config, with_mail(config, workspace, tools)?)
}

/// The tools `serve`, `call` and `tools` register before the upstreams' (which the
/// [`gateway`] adds): [`builtin_tools`] with run_shell's configuration `shell`, and the mail
/// tools of `[mail]`.
pub fn base_tools(
    config: &toolgate_config::Config,
    workspace: &Workspace,
    shell: toolgate_tools::shell::ShellConfig,
) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    with_mail(config, workspace, tools_with_shell(config, shell)?)
}

/// `tools` and the mail tools of `[mail]` (none without it), each under the configuration's
/// per-call limits.
fn with_mail(
    config: &toolgate_config::Config,
    workspace: &Workspace,
    mut tools: Vec<Arc<dyn Tool>>,
) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    tools.extend(
        mail::mail_tools(config, workspace.root())?
            .into_iter()
            .map(|t| config.limit(t)),
    );
    Ok(tools)
}

/// The registry of `tools` under the configuration's profiles.
pub fn registry_of(
    config: &toolgate_config::Config,
    tools: Vec<Arc<dyn Tool>>,
) -> anyhow::Result<Registry> {
    // the built-in tools' schemas are derived from their Rust types (compiled at each
    // tool's first call; `builtin_schemas_compile` checks them all); an upstream's are
    // compiled here
    let mut builder = Registry::builder().defer_derived_schemas(true).tools(tools);
    for p in config.profiles() {
        builder = builder.profile(p.clone());
    }
    builder.build().context("registering the built-in tools")
}

/// What a command does with the configuration it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigUse {
    /// Runs calls under it (`call`, `serve`): it must be the one in force, and is recorded as
    /// in force ([`in_force`]).
    Run,
    /// Only shows what it gives (`tools`, `export`): it must be the one in force; nothing is
    /// recorded.
    Show,
}

/// Loads the configuration of `workspace` (`--config FILE`, else `toolgate.toml` in its root,
/// else the defaults), checked against the built-in tools, refusing one that is not the
/// configuration in force ([`in_force`]).
///
/// # Errors
/// Every problem, one a line, located at `file:line:column`; a configuration that changed
/// since calls last ran.
pub fn load_config(
    workspace: &Workspace,
    explicit: Option<&Path>,
    used: ConfigUse,
) -> anyhow::Result<toolgate_config::Config> {
    let problems = |problems: Vec<toolgate_config::Problem>| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        anyhow::anyhow!(
            "the configuration has problems (see `toolgate check`):\n{}",
            lines.join("\n")
        )
    };
    let located =
        toolgate_config::locate(workspace.root(), explicit).map_err(|p| problems(vec![p]))?;
    in_force::check(workspace, explicit, &located)?;
    let config =
        toolgate_config::load(workspace.root(), explicit, &nameable_names()).map_err(problems)?;
    if let Some(p) = store_problem(&config, workspace.root()) {
        return Err(problems(vec![p]));
    }
    if used == ConfigUse::Run {
        in_force::record(workspace, explicit, &located)?;
    }
    Ok(config)
}

/// The configured store opened as `serve` would open it, when the file is there already: a
/// problem at `[store] path` when it does not open (not a database, another program's, a
/// newer toolgate's). A missing file was checked at load (its directory must be writable).
pub fn store_problem(
    config: &toolgate_config::Config,
    root: &std::path::Path,
) -> Option<toolgate_config::Problem> {
    let path = config.store_path(root)?;
    if path.symlink_metadata().is_err() {
        return None;
    }
    match toolgate_store::Store::open_existing(&path) {
        Ok(_) => None,
        Err(e) => config.store_problem(e.to_string()),
    }
}

/// The session setup from `--role`, `--profile` and `--attr`.
///
/// # Errors
/// An unknown role, a profile the role may not use, a bad `--attr`.
pub fn session_setup(
    config: &toolgate_config::Config,
    role: Option<&str>,
    profile: Option<&str>,
    attrs: &[String],
) -> anyhow::Result<toolgate_config::SessionSetup> {
    let attrs = attrs
        .iter()
        .map(|a| toolgate_config::parse_attr(a))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(config.session(role, profile, attrs)?)
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
            // hidden characters as JSON escapes: the same value, one line in any viewer
            let line = serde_json::to_string(r)?;
            out.write_all(toolgate_core::escape::json_line(&line).as_bytes())?;
            out.write_all(b"\n")?;
        }
    } else {
        table(&mut out, rows)?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use toolgate_core::schema::CompiledSchema;

    /// `registry_of` compiles the built-in tools' schemas at each tool's first call: every
    /// one of them (the mail tools' too) must compile, checked here as registration would.
    /// The names a configuration may give are exactly the tools built: the crates' name lists
    /// cannot drift from their tools.
    #[test]
    fn nameable_names_are_the_built_tools() {
        let mut built: Vec<String> = super::nameable_specs()
            .unwrap()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        let mut names: Vec<String> = super::nameable_names()
            .into_iter()
            .map(str::to_string)
            .collect();
        built.sort();
        names.sort();
        assert_eq!(names, built);
    }

    #[test]
    fn builtin_schemas_compile() {
        let specs = super::nameable_specs().unwrap();
        for name in ["read_file", "run_shell", "http_request", "send_email"] {
            assert!(specs.iter().any(|s| &*s.name == name), "{name} is named");
        }
        for spec in specs {
            CompiledSchema::compile(&spec.name, "inputSchema", &spec.input_schema)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            if let Some(mut output) = spec.output_schema.clone() {
                toolgate_core::truncate::widen_output_schema(&mut output);
                CompiledSchema::compile(&spec.name, "outputSchema", &output)
                    .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            }
        }
    }
}
