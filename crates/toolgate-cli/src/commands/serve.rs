//! `toolgate serve`: the built-in tools as an MCP server, over stdio (the default) or
//! streamable HTTP at `/mcp` (`--http 127.0.0.1:PORT`). The transport flags and their rules
//! live in [`toolgate_mcp::cli::ServeArgs`]; every call goes through the same pipeline as
//! `toolgate call`, audited to the same store, with approval requests sent to the MCP client.

use crate::exit::Exit;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::{AuditSink, JsonlAuditSink, MemoryResultStore, NullAuditSink, ResultStore};
use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};

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
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let workspace = args.serve.open_workspace()?;
    let store_path = match args.store.clone() {
        Some(p) => p,
        None => super::workspace_store(&workspace)?,
    };
    let audit_needs_store = !args.no_audit && args.audit.is_none();
    let store = match Store::open(&store_path) {
        Ok(s) => Some(s),
        Err(e) if audit_needs_store => return Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "truncated results are kept in memory");
            None
        }
    };
    let mut sqlite_audit: Option<Arc<SqliteAuditSink>> = None;
    let audit: Arc<dyn AuditSink> = if args.no_audit {
        Arc::new(NullAuditSink)
    } else if let Some(path) = &args.audit {
        Arc::new(
            JsonlAuditSink::open(path)
                .with_context(|| format!("opening the audit log {}", path.display()))?,
        )
    } else {
        let store = store.as_ref().context("the store is not open")?;
        let sink = Arc::new(SqliteAuditSink::new(store)?);
        sqlite_audit = Some(sink.clone());
        sink
    };
    let results: Arc<dyn ResultStore> = match &store {
        Some(s) => Arc::new(SqliteResultStore::new(s.clone())),
        None => Arc::new(MemoryResultStore::default()),
    };
    let pipeline = toolgate_mcp::pipeline_builder(super::shared(super::builtin_registry()?))
        .audit(audit)
        .results(results)
        .build();
    let served = toolgate_mcp::cli::run(args.serve, pipeline.clone(), workspace);
    let flushed = match &sqlite_audit {
        Some(sink) => sink.flush_checked(),
        None => {
            pipeline.audit().flush();
            Ok(())
        }
    };
    served?;
    flushed.context("writing the audit records")?;
    Ok(Exit::Success)
}
