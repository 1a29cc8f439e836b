//! The `serve` command line, shared by `toolgate serve` and any binary that serves its own
//! registry the same way (a test server, a conformance fixture): parse [`ServeArgs`] with
//! clap (flatten it into the binary's own arguments), build a pipeline with
//! [`crate::pipeline_builder`] (and the binary's audit sink and result store), then [`run`].
//!
//! What it prints goes to stderr (stdout is the protocol on stdio). Over HTTP the first line
//! is `toolgate: serving MCP at http://ADDR/mcp`; when the token was generated for this start,
//! the next line is `toolgate: token: TOKEN`, the bearer token every request must carry.
//! Over HTTP a Prometheus recorder is installed for the process and `GET /metrics` serves it
//! ([`crate::prometheus`]).

use crate::{Error, HttpConfig, McpServer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Pipeline, Workspace};

/// The environment variable that can hold the bearer token.
pub const TOKEN_ENV: &str = "TOOLGATE_TOKEN";

/// Arguments of `serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// The workspace root the tools are confined to (default: the current directory).
    #[arg(long, short)]
    pub workspace: Option<PathBuf>,
    /// The agent profile every client runs under (default: the role's first profile, else
    /// `default`).
    #[arg(long, short)]
    pub profile: Option<String>,
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The role every client's session has (one of the configuration's `roles`).
    #[arg(long)]
    pub role: Option<String>,
    /// A session attribute, `key=value`, for the policy's conditions (repeatable).
    #[arg(long = "attr", value_name = "KEY=VALUE")]
    pub attrs: Vec<String>,
    /// The session attributes every client's session starts with, resolved by the binary from
    /// the configuration's role and `--attr`.
    #[arg(skip)]
    pub attributes: std::collections::BTreeMap<String, serde_json::Value>,
    /// The budgets of every client's session (from the configuration).
    #[arg(skip)]
    pub budgets: toolgate_core::Budgets,
    /// The environment variable that holds the bearer token (from the configuration;
    /// default [`TOKEN_ENV`]).
    #[arg(skip)]
    pub token_env: Option<String>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (for example
    /// 127.0.0.1:8765; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The bearer token HTTP requests must carry (default: $TOOLGATE_TOKEN, else a random
    /// token made at start and printed on stderr). Required for a non-loopback address.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Serve HTTP on loopback without a token (any local process can then call tools).
    #[arg(long, conflicts_with = "token")]
    pub no_token: bool,
    /// Another Host authority to accept (host or host:port), for a non-loopback address.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Another browser Origin to accept (scheme://host:port).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// What clients may hold: connections, timeouts, sessions, requests in flight.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Hours an `always` approval given through the client's form holds when the answer does
    /// not say (1 to 8760; default: the configuration's `approvals.always_expires`, else 24).
    #[arg(long, value_name = "HOURS",
          value_parser = clap::value_parser!(u32).range(1..=8760))]
    pub always_expires_hours: Option<u32>,
    /// How long the grants of answers given through the form hold, resolved by the binary
    /// from its configuration and flags (with it, `always_expires_hours` was resolved into
    /// it); `None`: the built-in defaults and `--always-expires-hours`.
    #[arg(skip)]
    pub grant_expiry: Option<GrantExpiryArgs>,
    /// Check OAuth access tokens of this authorization server instead of a static token (the
    /// binary's `[server.auth]`).
    #[arg(skip)]
    pub auth: Option<crate::http::auth::AuthConfig>,
    /// How a verified caller's sessions are shaped (the binary's role mapping).
    #[arg(skip)]
    pub identity_setup: Option<Shaper>,
    /// Rate limits on each caller's HTTP requests (the binary's `[[limits.rate]]` with
    /// `counts = "requests"`).
    #[arg(skip)]
    pub request_limits: Option<RequestLimits>,
    /// The resources, templates, prompts and completion served besides the tools (the
    /// binary's: the workspace's files, the upstreams'), in order ([`crate::catalog`]).
    #[arg(skip)]
    pub catalogs: crate::catalog::Catalogs,
    /// Seconds calls in flight may run on after SIGINT or SIGTERM.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub grace: u64,
}

/// A [`crate::server::IdentitySetup`] among the arguments.
#[derive(Clone)]
pub struct Shaper(pub crate::server::IdentitySetup);

impl std::fmt::Debug for Shaper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shaper")
    }
}

/// [`toolgate_core::rate::RateLimits`] on requests, among the arguments.
#[derive(Clone, Debug)]
pub struct RequestLimits(pub Arc<toolgate_core::rate::RateLimits>);

impl ServeArgs {
    /// Opens the workspace (`--workspace`, default the current directory).
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be opened.
    pub fn open_workspace(&self) -> Result<Workspace, Error> {
        let dir = match &self.workspace {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        Workspace::open(&dir)
            .map_err(|e| Error::io(format!("opening workspace {}", dir.display()), e))
    }

    /// The HTTP configuration these arguments ask for, with the token resolved: `--token`,
    /// else the variable named by `token_env` (default `$TOOLGATE_TOKEN`), else none with `--no-token` (loopback only), else a random
    /// token; the second value says whether it was generated.
    ///
    /// # Errors
    /// [`Error::Config`] for `--no-token` on a non-loopback address, and what
    /// [`HttpConfig::check`] refuses.
    pub fn http_config(&self, addr: SocketAddr) -> Result<(HttpConfig, bool), Error> {
        let mut config = HttpConfig::new(addr)
            .max_body_bytes(
                self.limits
                    .max_body_bytes
                    .map_or(crate::http::DEFAULT_MAX_BODY_BYTES, count),
            )
            .limits(self.limits.http())
            .grace(Duration::from_secs(self.grace));
        config.allowed_hosts = self.allow_hosts.clone();
        config.allowed_origins = self.allow_origins.clone();
        config.request_limits = self.request_limits.as_ref().map(|l| l.0.clone());
        if let Some(auth) = &self.auth {
            // the access token is the credential: no static token
            config = config.auth(auth.clone());
            config.check()?;
            return Ok((config, false));
        }
        let given = self.token.clone().or_else(|| {
            std::env::var(self.token_env.as_deref().unwrap_or(TOKEN_ENV))
                .ok()
                .filter(|t| !t.is_empty())
        });
        let mut generated = false;
        if let Some(t) = given {
            config = config.token(t);
        } else if self.no_token {
            if !addr.ip().is_loopback() {
                return Err(Error::TokenRequired { addr });
            }
        } else if addr.ip().is_loopback() {
            config = config.token(random_token());
            generated = true;
        }
        config.check()?;
        Ok((config, generated))
    }
}

/// `serve`'s limits (see [`crate::http::Limits`] and the README's "Limits"). Each flag not
/// given falls back to the binary's configuration ([`LimitArgs::fill_from`]), then to the
/// default.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct LimitArgs {
    /// The cap on an HTTP request body, in bytes (default 4194304; 413 past it).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub max_body_bytes: Option<u64>,
    /// HTTP connections open at once (default 512); one more is closed when accepted.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_connections: Option<u64>,
    /// HTTP connections open at once from one peer IP address (default 128).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_connections_per_peer: Option<u64>,
    /// Milliseconds a client has to send a request's head, from connecting or from the
    /// previous answer (default 10000).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub header_timeout_ms: Option<u64>,
    /// Milliseconds a client has to send a request's body after its head (default 30000).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub body_timeout_ms: Option<u64>,
    /// Milliseconds an HTTP connection may go without a byte moving (default 120000; at
    /// least 20000, above the SSE keep-alive of 15 s).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(20_000..=86_400_000))]
    pub idle_timeout_ms: Option<u64>,
    /// Live MCP sessions over HTTP one caller (the token's holder) may hold (default 128).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_sessions: Option<u64>,
    /// Requests one MCP session may have in flight, over stdio or HTTP (default 256).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_requests_in_flight: Option<u64>,
}

impl LimitArgs {
    /// Takes every value not given here from `fallback` (the configuration's).
    pub fn fill_from(&mut self, fallback: &LimitArgs) {
        let pairs = [
            (&mut self.max_body_bytes, fallback.max_body_bytes),
            (&mut self.max_connections, fallback.max_connections),
            (
                &mut self.max_connections_per_peer,
                fallback.max_connections_per_peer,
            ),
            (&mut self.header_timeout_ms, fallback.header_timeout_ms),
            (&mut self.body_timeout_ms, fallback.body_timeout_ms),
            (&mut self.idle_timeout_ms, fallback.idle_timeout_ms),
            (&mut self.max_sessions, fallback.max_sessions),
            (
                &mut self.max_requests_in_flight,
                fallback.max_requests_in_flight,
            ),
        ];
        for (mine, theirs) in pairs {
            if mine.is_none() {
                *mine = theirs;
            }
        }
    }

    /// The HTTP limits: these values over [`crate::http::Limits::default`].
    pub fn http(&self) -> crate::http::Limits {
        let d = crate::http::Limits::default();
        let ms = |v: Option<u64>, d: Duration| v.map_or(d, Duration::from_millis);
        let mut l = d;
        l.max_connections = self.max_connections.map_or(d.max_connections, count);
        l.max_connections_per_peer = self
            .max_connections_per_peer
            .map_or(d.max_connections_per_peer, count);
        l.header_timeout = ms(self.header_timeout_ms, d.header_timeout);
        l.body_timeout = ms(self.body_timeout_ms, d.body_timeout);
        l.idle_timeout = ms(self.idle_timeout_ms, d.idle_timeout);
        l.max_sessions_per_caller = self.max_sessions.map_or(d.max_sessions_per_caller, count);
        l
    }
}

/// A count from the command line or the configuration (ranges checked there) as a `usize`.
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// How long the grants of answers given through the form hold (see
/// [`crate::McpServerBuilder::grant_expiry`]); each `None` is `never` (no expiry, no cap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrantExpiryArgs {
    /// A `session` grant.
    pub session: Option<Duration>,
    /// An `always` grant whose answer does not say.
    pub always: Option<Duration>,
    /// The longest an answer may ask for.
    pub max: Option<Duration>,
}

/// A random 256-bit token, hex.
pub fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Serves `pipeline` in `workspace` as the arguments say, until stdin closes (stdio) or
/// SIGINT/SIGTERM, on a runtime of its own. Build the pipeline with
/// [`crate::pipeline_builder`] so approval requests go to the client; flush its audit sink
/// after this returns.
///
/// # Errors
/// An unknown profile, a refused HTTP configuration, a failed bind, a client that never
/// initialized.
pub fn run(args: ServeArgs, pipeline: Pipeline, workspace: Workspace) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
        .map_err(|e| Error::io("starting the runtime", e))?;
    let served = runtime.block_on(serve(args, pipeline, workspace));
    // The stdio transport reads stdin on a blocking thread, and that read does not end while
    // the client keeps stdin open: after a SIGTERM, waiting for it (as dropping the runtime
    // does) would never return. The calls have drained by now; give what else blocks a moment.
    runtime.shutdown_timeout(Duration::from_millis(500));
    served
}

/// The stack of each worker thread of [`run`]'s runtime, in bytes. Cedar refuses to evaluate
/// a condition with under 100 KiB of stack left (its recursion guard), and a call's future is
/// polled deep under rmcp, axum and hyper: tokio's default 2 MiB left a debug build about
/// 300 KiB at authorize on the stateless (2026-07-28) path, close enough that a condition
/// failed to evaluate. 8 MiB is reserved address space, touched only as used.
pub const WORKER_STACK_BYTES: usize = 8 << 20;

/// [`run`] on the caller's runtime.
///
/// # Errors
/// As [`run`].
pub async fn serve(args: ServeArgs, pipeline: Pipeline, workspace: Workspace) -> Result<(), Error> {
    let mut builder = McpServer::builder(pipeline)
        .profile(
            args.profile
                .clone()
                .unwrap_or_else(|| toolgate_core::registry::DEFAULT_PROFILE.to_string()),
        )
        .budgets(args.budgets)
        .workspace(workspace);
    if let Some(n) = args.limits.max_requests_in_flight {
        builder = builder.max_requests_in_flight(count(n));
    }
    match (args.grant_expiry, args.always_expires_hours) {
        (Some(e), _) => builder = builder.grant_expiry(e.session, e.always, e.max),
        (None, Some(hours)) => builder = builder.always_expires_hours(hours),
        (None, None) => {}
    }
    for (k, v) in &args.attributes {
        builder = builder.attribute(k.clone(), v.clone());
    }
    if let Some(shaper) = &args.identity_setup {
        builder = builder.identity_setup(shaper.0.clone());
    }
    for catalog in &args.catalogs.0 {
        builder = builder.catalog(catalog.clone());
    }
    let server = builder.build()?;
    let grace = Duration::from_secs(args.grace);
    match args.http {
        None => crate::serve_stdio(server, shutdown_signal(), grace).await,
        Some(addr) => {
            let (mut config, generated) = args.http_config(addr)?;
            // before the first call: tools keep the handles of the recorder they first saw
            match crate::prometheus::install() {
                Ok(handle) => config = config.metrics(handle),
                Err(e) => tracing::warn!(error = %e, "/metrics is off"),
            }
            let http = crate::serve_http(server, config).await?;
            note(format_args!("toolgate: serving MCP at {}", http.url()));
            if let Some(auth) = &args.auth {
                note(format_args!(
                    "toolgate: access tokens of {} are checked on every request",
                    auth.issuer
                ));
            }
            if generated {
                if let Some(t) = http.token() {
                    note(format_args!("toolgate: token: {t}"));
                    note(format_args!(
                        "toolgate: send it on every request as: Authorization: Bearer TOKEN"
                    ));
                }
            }
            http.run_until(shutdown_signal()).await
        }
    }
}

/// Writes one line to stderr; a closed stderr drops it (`eprintln!` would panic, and a
/// server must outlive the terminal or pipe it was started from).
fn note(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn args(a: &[&str]) -> ServeArgs {
        Cli::parse_from(std::iter::once("serve").chain(a.iter().copied())).serve
    }

    #[test]
    fn loopback_gets_a_random_token_unless_told_otherwise() {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let (c, generated) = args(&[]).http_config(addr).unwrap();
        assert!(generated);
        assert_eq!(c.token.as_ref().map(String::len), Some(64));
        let (c, generated) = args(&["--token", "abc"]).http_config(addr).unwrap();
        assert!(!generated);
        assert_eq!(c.token.as_deref(), Some("abc"));
        let (c, _) = args(&["--no-token"]).http_config(addr).unwrap();
        assert_eq!(c.token, None);
    }

    #[test]
    fn limits_come_from_flags_then_the_configuration_then_the_defaults() {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut a = args(&["--max-connections", "7", "--header-timeout-ms", "1500"]);
        a.limits.fill_from(&LimitArgs {
            max_connections: Some(99),
            max_sessions: Some(3),
            max_body_bytes: Some(2048),
            ..LimitArgs::default()
        });
        let (c, _) = a.http_config(addr).unwrap();
        assert_eq!(c.limits.max_connections, 7);
        assert_eq!(c.limits.header_timeout, Duration::from_millis(1500));
        assert_eq!(c.limits.max_sessions_per_caller, 3);
        assert_eq!(c.max_body_bytes, 2048);
        assert_eq!(
            c.limits.idle_timeout,
            crate::http::Limits::default().idle_timeout
        );
        assert!(Cli::try_parse_from(["serve", "--max-connections", "0"]).is_err());
        assert!(Cli::try_parse_from(["serve", "--body-timeout-ms", "86400001"]).is_err());
    }

    #[test]
    fn non_loopback_without_token_is_refused() {
        let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
        if std::env::var(TOKEN_ENV).is_ok() {
            return;
        }
        assert!(matches!(
            args(&[]).http_config(addr),
            Err(Error::TokenRequired { .. })
        ));
        assert!(matches!(
            args(&["--no-token"]).http_config(addr),
            Err(Error::TokenRequired { .. })
        ));
        assert!(args(&["--token", "t"]).http_config(addr).is_ok());
    }
}
