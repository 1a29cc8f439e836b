//! `toolgate call TOOL ARGS`: one call through the whole pipeline.

use crate::exit::Exit;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::{
    Approver, AuditSink, JsonlAuditSink, MemoryResultStore, NobodyApprover, NullAuditSink,
    Pipeline, PreApproved, ResultStore, ToolCall,
};
use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};

/// Arguments of `toolgate call`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tool to call.
    tool: String,
    /// The arguments: a JSON object (default `{}`).
    #[arg(default_value = "{}")]
    arguments: String,
    /// The workspace root the tools are confined to (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// The agent profile to call as.
    #[arg(long, short, default_value = toolgate_core::registry::DEFAULT_PROFILE)]
    profile: String,
    /// The session id (default: a new one).
    #[arg(long)]
    session: Option<String>,
    /// The call id to send and to expect back.
    #[arg(long, default_value = "call-1")]
    id: String,
    /// Pin a version of the tool.
    #[arg(long)]
    version: Option<String>,
    /// The operator approves this one call in advance, for calls that ask for approval.
    #[arg(long)]
    yes: bool,
    /// Append the audit record to this JSON-lines file instead of the store.
    #[arg(long, value_name = "FILE", conflicts_with = "no_audit")]
    audit: Option<PathBuf>,
    /// Do not write an audit record.
    #[arg(long)]
    no_audit: bool,
    /// The store for the audit record and truncated results (default
    /// `<workspace>/.toolgate/toolgate.db`).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let workspace = super::open_workspace(args.workspace.as_deref())?;
    let store_path = match args.store.clone() {
        Some(p) => p,
        None => super::workspace_store(&workspace)?,
    };
    let audit_needs_store = !args.no_audit && args.audit.is_none();
    // the store keeps truncated results for `read_result` in a later call of the session; when
    // nothing is audited to it, a store that cannot be opened only costs that
    let store = match Store::open(&store_path) {
        Ok(s) => Some(s),
        Err(e) if audit_needs_store => return Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "truncated results are kept in memory for this call only");
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
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(PreApproved)
    } else {
        Arc::new(NobodyApprover)
    };
    let pipeline = Pipeline::builder(super::shared(super::builtin_registry()?))
        .audit(audit)
        .results(results)
        .approver(approver)
        .build();
    let session_id = args.session.clone().unwrap_or_else(new_session_id);
    let session = pipeline
        .session(session_id)
        .profile(args.profile.clone())
        .workspace(workspace)
        .build()?;
    let mut call = ToolCall::raw(
        args.id.as_str(),
        args.tool.as_str(),
        args.arguments.as_str(),
    );
    if let Some(v) = &args.version {
        call = call.with_version(v.as_str());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let result = rt.block_on(async {
        let cancel = cancel_on_signal();
        pipeline.dispatch_with(call, &session, cancel).await
    });
    // the record is committed before the result is shown (SIGTERM and Ctrl-C cancel the call
    // above and still get here)
    let flushed = match &sqlite_audit {
        Some(sink) => sink.flush_checked(),
        None => {
            pipeline.audit().flush();
            Ok(())
        }
    };
    if let Some(s) = &store {
        if let Err(e) = s.prune_results(toolgate_core::audit::now_us(std::time::SystemTime::now()))
        {
            tracing::warn!(error = %e, "pruning expired results");
        }
    }
    println!("{}", serde_json::to_string_pretty(&result)?);
    flushed.context("writing the audit record")?;
    Ok(match &result.error {
        None => Exit::Success,
        Some(e) if e.is_recoverable() => Exit::Recoverable,
        Some(_) => Exit::Fatal,
    })
}

/// A token cancelled by Ctrl-C or SIGTERM, so an interrupted call still records and prints its
/// (cancelled) result. Once the handlers are installed, neither signal ends the process: it
/// finishes the call, commits the audit record and exits.
fn cancel_on_signal() -> toolgate_core::CancellationToken {
    let token = toolgate_core::CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            t.cancel();
        }
    });
    let t = token.clone();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::spawn(async move {
                if term.recv().await.is_some() {
                    t.cancel();
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "cannot watch for SIGTERM"),
    }
    token
}

fn new_session_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    format!("cli-{now:x}-{}", std::process::id())
}
