//! The gateway in the commands that serve tools (`tools`, `call`, `serve`): the
//! configuration's upstreams started on a runtime of their own, their tools added to the
//! built-in registry, and (for `serve`) the registry rebuilt when an upstream's tools change.

use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_core::{Pipeline, Registry, Tool, Workspace};
use toolgate_gateway::{Gateway, GatewayOptions, StartContext};
use toolgate_tools::shell::ShellConfig;

/// The running gateway, and the runtime its supervisors run on (kept for the command's life).
pub struct Running {
    pub gateway: Gateway,
    base: Vec<Arc<dyn Tool>>,
    config: toolgate_config::Config,
    runtime: tokio::runtime::Runtime,
}

impl Running {
    /// The registry: the built-in tools, the profiles and every upstream tool now.
    pub fn registry(&self) -> anyhow::Result<Registry> {
        let (base, config) = (&self.base, &self.config);
        self.gateway
            .registry(&|| base_builder(base, config))
            .context("registering the built-in tools")
    }

    /// Rebuilds `pipeline`'s registry whenever an upstream's tools change.
    pub fn attach(&self, pipeline: Pipeline) {
        let (base, config) = (self.base.clone(), self.config.clone());
        self.gateway
            .attach(pipeline, Arc::new(move || base_builder(&base, &config)));
    }

    /// Stops the upstreams.
    pub fn stop(self) {
        self.gateway.shutdown();
        drop(self.gateway);
        self.runtime
            .shutdown_timeout(std::time::Duration::from_secs(2));
    }
}

fn base_builder(
    base: &[Arc<dyn Tool>],
    config: &toolgate_config::Config,
) -> toolgate_core::RegistryBuilder {
    let mut b = Registry::builder().tools(base.iter().cloned());
    for p in config.profiles() {
        b = b.profile(p.clone());
    }
    b
}

/// Starts the configuration's upstreams, when it has any; pins and health go to the store
/// at `store` (default the workspace's). `shell` is run_shell's configuration for the
/// command, which the built-in run_shell gets and the upstreams' sandbox starts from.
///
/// # Errors
/// The store cannot be opened, or the runtime cannot start.
pub fn start(
    config: &toolgate_config::Config,
    workspace: &Workspace,
    store: Option<PathBuf>,
    shell: ShellConfig,
) -> anyhow::Result<Option<Running>> {
    if config.upstreams().is_empty() {
        return Ok(None);
    }
    let store_path = match store.or_else(|| config.store_path(workspace.root())) {
        Some(p) => p,
        None => super::workspace_store(workspace)?,
    };
    let store = toolgate_store::Store::open(&store_path).with_context(|| {
        format!(
            "opening the store {} for the upstreams' pins",
            store_path.display()
        )
    })?;
    let base = super::base_tools(config, workspace, shell.clone())?;
    let reserved = base.iter().map(|t| t.spec().name.to_string()).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("toolgate-gateway")
        .enable_all()
        .build()
        .context("starting the gateway's runtime")?;
    let limits = config.clone();
    let options = GatewayOptions {
        upstreams: config.upstreams().to_vec(),
        separator: config.gateway_separator().to_string(),
        max_subscriptions: config.gateway_max_subscriptions(),
        store,
        start: StartContext {
            root: workspace.root().to_path_buf(),
            shell,
            report: toolgate_tools::shell::sandbox_report(),
        },
        reserved,
        egress: toolgate_core::egress::EgressPolicy::new()
            .allow_private(config.http_config().allow_private.iter().copied()),
        wrap: Some(Arc::new(move |t| limits.limit(t))),
        // an upstream's log messages go to the client of the call they came with
        client_log: Some(Arc::new(|| {
            let logger = toolgate_mcp::request::client_logger()?;
            let log: toolgate_gateway::logs::ClientLog = Arc::new(move |m| {
                logger.send(m);
            });
            Some(log)
        })),
        // its requests (sampling, elicitation), where its entry opts in, to that client too
        client_requests: Some(Arc::new(|| {
            let requester = toolgate_mcp::request::client_requester()?;
            let capabilities = requester.capabilities();
            let send: toolgate_gateway::relay::SendToClient = Arc::new(move |request| {
                let requester = requester.clone();
                Box::pin(async move { requester.request(request).await })
            });
            Some(toolgate_gateway::relay::RelayClient { capabilities, send })
        })),
    };
    let gateway = runtime.block_on(Gateway::start(options));
    for s in gateway.status() {
        if s.state != "ready" {
            eprintln!(
                "toolgate: upstream {} is {}{} (it is started again with backoff)",
                s.name,
                s.state,
                s.detail.map(|d| format!(": {d}")).unwrap_or_default()
            );
        }
    }
    Ok(Some(Running {
        gateway,
        base,
        config: config.clone(),
        runtime,
    }))
}

/// The registry for a command: the built-in one ([`super::base_tools`] and the profiles),
/// with the upstreams' tools when they run.
pub fn registry(
    config: &toolgate_config::Config,
    workspace: &Workspace,
    shell: ShellConfig,
    running: Option<&Running>,
) -> anyhow::Result<Registry> {
    match running {
        Some(r) => r.registry(),
        None => super::registry_of(config, super::base_tools(config, workspace, shell)?),
    }
}
