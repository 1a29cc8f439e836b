//! `toolgate serve`: the built-in tools as an MCP server, over stdio (the default) or
//! streamable HTTP at `/mcp` (`--http 127.0.0.1:PORT`). The transport flags and their rules
//! live in [`toolgate_mcp::cli::ServeArgs`]; every call goes through the same pipeline as
//! `toolgate call`, audited to the same store, with approval requests sent to the MCP client.

use crate::exit::Exit;
use anyhow::Context;
use std::path::PathBuf;

/// Arguments of `toolgate serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    serve: toolgate_mcp::cli::ServeArgs,
    /// Append audit records to this JSON-lines file instead of the store.
    #[arg(long, value_name = "FILE", conflicts_with = "no_audit")]
    audit: Option<PathBuf>,
    /// Do not write audit records.
    #[arg(long)]
    no_audit: bool,
    /// The store for audit records and truncated results (default
    /// `<workspace>/.toolgate/toolgate.db`).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
}

/// Runs the command until stdin closes (stdio) or SIGINT/SIGTERM; the audit records of every
/// call are committed before it returns.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    let workspace = args.serve.open_workspace()?;
    let config = super::load_config(&workspace, args.serve.config.as_deref())?;
    let setup = super::session_setup(
        &config,
        args.serve.role.as_deref(),
        args.serve.profile.as_deref(),
        &args.serve.attrs,
    )?;
    args.serve.profile = Some(setup.profile);
    args.serve.attributes = setup.attributes;
    args.serve.budgets = config.budgets();
    args.serve.token_env = Some(config.token_env().to_string());
    let recording = super::recording::Recording::open(
        &workspace,
        args.store
            .clone()
            .or_else(|| config.store_path(workspace.root())),
        args.audit.as_deref(),
        args.no_audit,
    )?;
    let mut builder =
        toolgate_mcp::pipeline_builder(super::shared(super::builtin_registry(&config)?))
            .policy(config.policy())
            .audit(recording.audit.clone())
            .results(recording.results.clone());
    if let Some(grants) = recording.grants() {
        builder = builder.grants(grants);
    }
    let pipeline = builder.build();
    let served = toolgate_mcp::cli::run(args.serve, pipeline.clone(), workspace);
    let flushed = recording.finish(&pipeline);
    served?;
    flushed.context("writing the audit records")?;
    Ok(Exit::Success)
}
