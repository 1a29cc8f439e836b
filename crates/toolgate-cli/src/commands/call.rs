//! `toolgate call TOOL ARGS`: one call through the whole pipeline.

use crate::exit::Exit;
use crate::terminal_approver::TerminalApprover;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Approver, NobodyApprover, Pipeline, PreApproved, ToolCall};

/// An expiry given on the command line: a span, or `None` for never.
#[derive(Debug, Clone, Copy)]
pub struct Expiry(pub Option<Duration>);

/// Parses a span such as `30m`, `8h` or `7d` (at least one second), or `never`.
pub fn parse_expiry(s: &str) -> Result<Expiry, String> {
    toolgate_config::parse_expiry(s).map(Expiry)
}

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
    /// The agent profile to call as (default: the role's first profile, else `default`).
    #[arg(long, short)]
    profile: Option<String>,
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The session's role (one of the configuration's `roles`): the profiles it may use and
    /// the attributes it carries.
    #[arg(long)]
    role: Option<String>,
    /// A session attribute, `key=value`, for the policy's conditions (repeatable).
    #[arg(long = "attr", value_name = "KEY=VALUE")]
    attrs: Vec<String>,
    /// The session id (default: a new one, which ends with this call: a `session` answer at
    /// the prompt then approves this call only). A named session goes on in later calls
    /// with the same id; its session grants hold until they expire or are revoked.
    #[arg(long)]
    session: Option<String>,
    /// The call id to send and to expect back.
    #[arg(long, default_value = "call-1")]
    id: String,
    /// Pin a version of the tool.
    #[arg(long)]
    version: Option<String>,
    /// The call's idempotency key: a side-effecting call sent again with the same key and
    /// arguments (by this or any process using the store) prints the first call's result,
    /// marked `"replayed": true`, instead of acting twice. 1 to 255 letters, digits or
    /// `- _ . : ~ + / = @`.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    /// The operator approves this one call in advance, for calls that ask for approval.
    /// Without it, a call that asks is put to you at the terminal when there is one, and
    /// rejected when there is none.
    #[arg(long)]
    yes: bool,
    /// The expiry offered for an `always` answer at the terminal prompt (a span such as
    /// `8h` or `7d`, or `never`; default: the configuration's `approvals.always_expires`,
    /// else 24h).
    #[arg(long, value_name = "SPAN", value_parser = parse_expiry)]
    always_expires: Option<Expiry>,
    /// How long the grant of a `session` answer at the terminal prompt holds (a span, or
    /// `never`: until the session ends; default: the configuration's
    /// `approvals.session_expires`, else never).
    #[arg(long, value_name = "SPAN", value_parser = parse_expiry)]
    session_expires: Option<Expiry>,
    /// The longest expiry an `always` answer at the terminal prompt may ask for (a span, or
    /// `never`: no cap; default: the configuration's `approvals.max_expires`, else no cap).
    #[arg(long, value_name = "SPAN", value_parser = parse_expiry)]
    max_expires: Option<Expiry>,
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
    let config = super::load_config(&workspace, args.config.as_deref(), super::ConfigUse::Run)?;
    let workspace = workspace
        .with_hard_link_reads(config.hard_link_reads())
        .context("opening the workspace")?;
    let setup = super::session_setup(
        &config,
        args.role.as_deref(),
        args.profile.as_deref(),
        &args.attrs,
    )?;
    let recording = super::recording::Recording::open(
        &workspace,
        args.store
            .clone()
            .or_else(|| config.store_path(workspace.root())),
        args.audit.as_deref(),
        args.no_audit,
    )?;
    // flags over the configuration over the built-in defaults
    let expiry = config
        .grant_expiry()
        .with(
            args.session_expires.map(|e| e.0),
            args.always_expires.map(|e| e.0),
            args.max_expires.map(|e| e.0),
        )
        .map_err(anyhow::Error::msg)?;
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(PreApproved)
    } else if let Some(tty) = TerminalApprover::open(expiry) {
        Arc::new(tty)
    } else {
        Arc::new(NobodyApprover)
    };
    let shell = config.shell_config_storing(workspace.root(), &recording.files());
    let gateway = super::gateway::start(&config, &workspace, args.store.clone(), shell.clone())?;
    let registry = super::gateway::registry(&config, &workspace, shell, gateway.as_ref())?;
    let mut builder = Pipeline::builder(super::shared(registry))
        .policy(config.policy())
        .audit(recording.audit.clone())
        .results(recording.results.clone())
        .approver(approver)
        .grant_max_expiry(expiry.max)
        .ledger_options(config.ledger_options());
    if let Some(grants) = recording.grants() {
        builder = builder.grants(grants);
    }
    if let Some(ledger) = recording.ledger() {
        builder = builder.ledger(ledger);
    }
    let pipeline = builder.build();
    // a session made for this call ends with it (its session grants too); one named with
    // --session goes on in later calls
    let named = args.session.is_some();
    let session_id = args.session.clone().unwrap_or_else(new_session_id);
    let mut session = pipeline
        .session(session_id)
        .profile(setup.profile)
        .budgets(config.budgets())
        .workspace(workspace);
    for (k, v) in setup.attributes {
        session = session.attribute(k, v);
    }
    let session = session.build()?;
    let mut call = ToolCall::raw(
        args.id.as_str(),
        args.tool.as_str(),
        args.arguments.as_str(),
    );
    if let Some(v) = &args.version {
        call = call.with_version(v.as_str());
    }
    if let Some(k) = &args.idempotency_key {
        call = call.with_idempotency_key(k.as_str());
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
    if !named {
        pipeline.end_session(&session);
    }
    if let Some(g) = gateway {
        g.stop();
    }
    // the record is committed before the result is shown (SIGTERM and Ctrl-C cancel the call
    // above and still get here)
    let flushed = recording.finish(&pipeline);
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
