//! `toolgate serve`: the built-in tools as an MCP server, over stdio (the default) or
//! streamable HTTP at `/mcp` (`--http 127.0.0.1:PORT`). The transport flags and their rules
//! live in [`toolgate_mcp::cli::ServeArgs`]; every call goes through the same pipeline as
//! `toolgate call`, audited to the same store, with approval requests sent to the MCP client.

use crate::exit::Exit;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// How long a `session` approval given through the client's form holds (a span such as
    /// `30m` or `8h`, or `never`: until the session ends; default: the configuration's
    /// `approvals.session_expires`, else never).
    #[arg(long, value_name = "SPAN", value_parser = super::call::parse_expiry)]
    session_expires: Option<super::call::Expiry>,
    /// The longest expiry an answer through the form may ask for (a span, or `never`: no cap
    /// but the form's year; default: the configuration's `approvals.max_expires`).
    #[arg(long, value_name = "SPAN", value_parser = super::call::parse_expiry)]
    max_expires: Option<super::call::Expiry>,
}

/// Runs the command until stdin closes (stdio) or SIGINT/SIGTERM; the audit records of every
/// call are committed before it returns.
pub fn run(mut args: Args) -> anyhow::Result<Exit> {
    let workspace = args.serve.open_workspace()?;
    let config = super::load_config(
        &workspace,
        args.serve.config.as_deref(),
        super::ConfigUse::Run,
    )?;
    let workspace = workspace
        .with_hard_link_reads(config.hard_link_reads())
        .context("opening the workspace")?;
    let profile_chosen = args.serve.profile.is_some() || args.serve.role.is_some();
    let setup = super::session_setup(
        &config,
        args.serve.role.as_deref(),
        args.serve.profile.as_deref(),
        &args.serve.attrs,
    )?;
    if !profile_chosen {
        warn_roleless_callers_get(&config, &setup.profile);
    }
    args.serve.profile = Some(setup.profile);
    args.serve.attributes = setup.attributes;
    args.serve.budgets = config.budgets();
    args.serve.token_env = Some(config.token_env().to_string());
    let server = &config.raw().server;
    args.serve.limits.fill_from(&toolgate_mcp::cli::LimitArgs {
        max_body_bytes: server.max_body_bytes,
        max_connections: server.max_connections,
        max_connections_per_peer: server.max_connections_per_peer,
        header_timeout_ms: server.header_timeout_ms,
        body_timeout_ms: server.body_timeout_ms,
        idle_timeout_ms: server.idle_timeout_ms,
        max_sessions: server.max_sessions,
        max_requests_in_flight: server.max_requests_in_flight,
    });
    warn_unset_token_env(&config, &args.serve);
    // flags over the configuration over the built-in defaults
    let always = args
        .serve
        .always_expires_hours
        .map(|h| Some(std::time::Duration::from_secs(u64::from(h) * 3600)));
    let expiry = config
        .grant_expiry()
        .with(
            args.session_expires.map(|e| e.0),
            always,
            args.max_expires.map(|e| e.0),
        )
        .map_err(anyhow::Error::msg)?;
    args.serve.grant_expiry = Some(toolgate_mcp::cli::GrantExpiryArgs {
        session: expiry.session,
        always: expiry.always,
        max: expiry.max,
    });
    let request_limits = config.request_rate_limits();
    if !request_limits.is_empty() {
        args.serve.request_limits = Some(toolgate_mcp::cli::RequestLimits(std::sync::Arc::new(
            request_limits,
        )));
    }
    if let Some(auth) = config.auth() {
        args.serve.auth = Some(super::auth::auth_config(auth)?);
        args.serve.identity_setup = Some(super::auth::shaper(
            std::sync::Arc::new(config.clone()),
            args.serve.profile.clone().unwrap_or_default(),
        ));
    }
    let recording = super::recording::Recording::open(
        &workspace,
        args.store
            .clone()
            .or_else(|| config.store_path(workspace.root())),
        args.audit.as_deref(),
        args.no_audit,
    )?;
    let shell = config.shell_config_storing(workspace.root(), &recording.files());
    let gateway = super::gateway::start(&config, &workspace, args.store.clone(), shell.clone())?;
    let registry = super::gateway::registry(&config, &workspace, shell, gateway.as_ref())?;
    let mut builder = toolgate_mcp::pipeline_builder(super::shared(registry))
        .policy(config.policy())
        .audit(recording.audit.clone())
        .results(recording.results.clone())
        .grant_max_expiry(expiry.max)
        .ledger_options(config.ledger_options());
    if let Some(grants) = recording.grants() {
        builder = builder.grants(grants);
    }
    if let Some(ledger) = recording.ledger() {
        builder = builder.ledger(ledger);
    }
    builder = builder.rate_limits(config.rate_limits());
    if let Some(quota) = config.quota() {
        let store = recording.quota_store().context(
            "[limits.quota] counts calls in the store: serve without --audit FILE and --no-audit",
        )?;
        builder = builder.quota(store, quota);
    }
    let pipeline = builder.build();
    sweep_in_background(&workspace);
    if let Some(g) = &gateway {
        g.attach(pipeline.clone());
    }
    // the workspace's files as resources, to the profiles that include the resource tools;
    let mut serve = args.serve;
    serve
        .catalogs
        .push(Arc::new(toolgate_mcp::catalog::WorkspaceCatalog));
    // then the upstreams' resources, templates and prompts, namespaced
    if let Some(g) = &gateway {
        serve
            .catalogs
            .push(Arc::new(super::gateway_catalog::GatewayCatalog(
                g.gateway.catalog(),
            )));
    }
    let served = toolgate_mcp::cli::run(serve, pipeline.clone(), workspace);
    if let Some(g) = gateway {
        g.stop();
    }
    let flushed = recording.finish(&pipeline);
    served?;
    flushed.context("writing the audit records")?;
    Ok(Exit::Success)
}

/// Removes the temporary files a killed write left in the workspace, once stale
/// ([`toolgate_tools::fs::temp`]), on a thread of its own: serving does not wait for the walk.
fn sweep_in_background(workspace: &toolgate_core::Workspace) {
    use std::os::fd::AsFd;
    let workspace = workspace.clone();
    let spawned = std::thread::Builder::new()
        .name("toolgate-sweep".into())
        .spawn(move || {
            let swept = toolgate_tools::fs::temp::sweep(
                workspace.dir().as_fd(),
                std::time::SystemTime::now(),
            );
            if swept.removed > 0 || swept.errors > 0 {
                tracing::info!(
                    removed = swept.removed,
                    directories = swept.dirs,
                    unreadable = swept.errors,
                    "swept stale temporary files"
                );
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the sweep of stale temporary files");
    }
}

/// Says loudly when `[server.auth.roles]` narrows what callers get but a caller no role holds
/// for (a user in no group, a claim of another type) gets `profile`, the server's default
/// `default` (every tool), because no `--profile` or `--role` was given.
fn warn_roleless_callers_get(config: &toolgate_config::Config, profile: &str) {
    let roles = config.auth().map_or(0, |a| a.roles.len());
    if roles == 0 || profile != "default" {
        return;
    }
    eprintln!(
        "toolgate: WARNING: [server.auth.roles] gives callers roles by their claims, and a \
         caller no role holds for gets the profile default (every tool); serve with --profile \
         explore (or a narrower profile of your own) so that only the roles widen what a caller \
         gets, or with --profile default to keep this and not be warned"
    );
}

/// Says loudly when the configuration names a token variable that is not set: the server
/// then makes a random token for this start, and clients holding the intended one get 401.
fn warn_unset_token_env(config: &toolgate_config::Config, serve: &toolgate_mcp::cli::ServeArgs) {
    let Some(var) = config.token_env_configured() else {
        return;
    };
    if serve.http.is_none() || serve.token.is_some() || serve.no_token {
        return;
    }
    if std::env::var(var).map_or(true, |v| v.is_empty()) {
        eprintln!(
            "toolgate: WARNING: server.token_env names {var}, which is not set (or empty): \
             serving with a random token made for this start instead; clients configured with \
             the token from {var} will be refused (401). Set {var}, or pass --token."
        );
        tracing::warn!(variable = var, "the configured token variable is not set");
    }
}
