//! [`GuardedResolver`]: name resolution that checks every answer before a connection is made.
//!
//! The HTTP client resolves names only through it, once per connection, and connects only to
//! the addresses it returns, so the address checked is the address connected to: a name that
//! answers differently the next time (DNS rebinding) has no next time. The order: the
//! operator's static answers (`[http.hosts]`), else the operator's name servers
//! (`[http] nameservers`, through hickory-resolver), else the system's resolver; then every
//! answer through [`EgressPolicy::check_answers`], one blocked answer blocking the name; then,
//! when the request is sent within [`decide_addresses`] (a call whose policy names addresses,
//! [`ToolContext::names_addresses`]), every answer through the call's policy
//! ([`ToolContext::decide_address`]), one denied or asked-about answer refusing the name.

use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::TokioResolver;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::egress::{Blocked, EgressPolicy};
use toolgate_core::{Decision, ToolContext, Verdict};

tokio::task_local! {
    /// The call whose policy decides the answers of the names resolved in this task.
    static CALL: ToolContext;
}

/// Runs `fut` (a request being sent) with every name it resolves decided by `ctx`'s policy
/// as well ([`ToolContext::decide_address`]): a connection made while `fut` is polled goes
/// only to addresses that policy lets through. The connection must be made in this task: use
/// a client without a connection pool, since a pooled connection was made for another call.
pub async fn decide_addresses<F: std::future::Future>(ctx: ToolContext, fut: F) -> F::Output {
    CALL.scope(ctx, fut).await
}

/// Why a name gave no address to connect to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// An answer is a blocked address, or there was none.
    #[error(transparent)]
    Blocked(#[from] Blocked),
    /// An answer is an address the call's policy denies or asks about
    /// ([`ToolContext::decide_address`]).
    #[error(
        "the host {host:?} resolves to {address}, which the operator's policy {} (rule {})",
        if verdict.decision == Decision::Deny { "does not allow" } else { "asks a person about" },
        verdict.rule
    )]
    Policy {
        /// The name.
        host: String,
        /// The answer the policy decided.
        address: IpAddr,
        /// Its verdict: deny or ask.
        verdict: Verdict,
    },
    /// The resolver failed: the name does not exist, or no server answered.
    #[error("the host {host:?} could not be resolved: {why}")]
    Failed {
        /// The name.
        host: String,
        /// What the resolver said.
        why: String,
    },
}

/// The operator's name servers could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the name servers cannot be used: {0}")]
pub struct SetupError(String);

/// Resolves names for connections, checking every answer (see the module docs). Cheap to
/// clone.
#[derive(Clone)]
pub struct GuardedResolver {
    inner: Arc<Inner>,
}

struct Inner {
    egress: EgressPolicy,
    hosts: HashMap<String, Vec<IpAddr>>,
    dns: Dns,
    timeout: Duration,
}

enum Dns {
    System,
    Servers(Box<TokioResolver>),
}

impl std::fmt::Debug for GuardedResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedResolver")
            .field("egress", &self.inner.egress)
            .field("hosts", &self.inner.hosts.len())
            .field(
                "dns",
                &match self.inner.dns {
                    Dns::System => "system",
                    Dns::Servers(_) => "nameservers",
                },
            )
            .finish()
    }
}

impl GuardedResolver {
    /// A resolver checking answers against `egress`: `hosts` answers first (keys as
    /// [`super::HttpConfig::host_key`] gives them), then `nameservers` (each asked over UDP and
    /// TCP), or the system's resolver when there are none; a lookup gives up after `timeout`.
    ///
    /// # Errors
    /// When hickory-resolver cannot be set up over `nameservers`.
    pub fn new(
        egress: EgressPolicy,
        hosts: HashMap<String, Vec<IpAddr>>,
        nameservers: &[SocketAddr],
        timeout: Duration,
    ) -> Result<Self, SetupError> {
        let dns = if nameservers.is_empty() {
            Dns::System
        } else {
            let mut config = ResolverConfig::from_parts(None, Vec::new(), Vec::new());
            for ns in nameservers {
                let mut udp = ConnectionConfig::udp();
                udp.port = ns.port();
                let mut tcp = ConnectionConfig::tcp();
                tcp.port = ns.port();
                config.add_name_server(NameServerConfig::new(ns.ip(), true, vec![udp, tcp]));
            }
            let mut builder =
                TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
            let opts = builder.options_mut();
            opts.timeout = timeout;
            opts.attempts = 1;
            // the operator's servers replace the system's resolver, /etc/hosts included
            opts.use_hosts_file = ResolveHosts::Never;
            opts.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
            Dns::Servers(Box::new(
                builder.build().map_err(|e| SetupError(e.to_string()))?,
            ))
        };
        Ok(GuardedResolver {
            inner: Arc::new(Inner {
                egress,
                hosts,
                dns,
                timeout,
            }),
        })
    }

    /// The checked addresses of `host` (a name, not an IP address), deduplicated, in the
    /// resolver's order.
    ///
    /// # Errors
    /// [`ResolveError::Blocked`] when an answer is blocked or there is none,
    /// [`ResolveError::Failed`] when the resolver fails.
    pub async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, ResolveError> {
        let key = super::HttpConfig::host_key(host).unwrap_or_else(|| host.to_string());
        let mut answers = match self.inner.hosts.get(&key) {
            Some(fixed) => fixed.clone(),
            None => self.lookup(host).await?,
        };
        let mut seen = Vec::with_capacity(answers.len());
        answers.retain(|ip| {
            let new = !seen.contains(ip);
            seen.push(*ip);
            new
        });
        self.inner.egress.check_answers(host, &answers)?;
        Ok(answers)
    }

    async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, ResolveError> {
        let failed = |why: String| ResolveError::Failed {
            host: host.to_string(),
            why,
        };
        let lookup = async {
            match &self.inner.dns {
                Dns::System => tokio::net::lookup_host((host, 0))
                    .await
                    .map(|addrs| addrs.map(|a| a.ip()).collect())
                    .map_err(|e| failed(e.to_string())),
                Dns::Servers(r) => r
                    .lookup_ip(host)
                    .await
                    .map(|l| l.iter().collect())
                    .map_err(|e| failed(e.to_string())),
            }
        };
        tokio::time::timeout(self.inner.timeout, lookup)
            .await
            .unwrap_or_else(|_| Err(failed("no answer in time".into())))
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        // read here, synchronously: the connection is being made in the caller's task
        let call = CALL.try_with(ToolContext::clone).ok();
        Box::pin(async move {
            let addrs = GuardedResolver::resolve(&this, name.as_str()).await?;
            if let Some(ctx) = call {
                for &address in &addrs {
                    if let Some(verdict) = ctx.decide_address(name.as_str(), address) {
                        return Err(Box::new(ResolveError::Policy {
                            host: name.as_str().to_string(),
                            address,
                            verdict,
                        })
                            as Box<dyn std::error::Error + Send + Sync>);
                    }
                }
            }
            let addrs: reqwest::dns::Addrs =
                Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}
