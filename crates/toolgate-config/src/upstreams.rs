//! `[[upstreams]]` and `[gateway]`: other makers' MCP servers whose tools toolgate serves
//! through its pipeline (the gateway, crate `toolgate-gateway`), and the checks of their
//! entries at load.

use crate::problem::Seg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::pattern::ToolPattern;

/// The separator between an upstream's name and its tool's name by default:
/// `<upstream>__<tool>`.
pub const DEFAULT_SEPARATOR: &str = "__";
/// The longest listed name the gateway makes (clients such as OpenAI's cap tool names at 64
/// characters).
pub const MAX_LISTED_NAME: usize = 64;
/// A call's timeout by default, in milliseconds.
pub const DEFAULT_UPSTREAM_TIMEOUT_MS: u64 = 30_000;
/// How long an upstream has to start and list its tools by default, in milliseconds.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 15_000;
/// Consecutive failures or timeouts that open an upstream tool's circuit breaker by default.
pub const DEFAULT_FAILURE_THRESHOLD: u32 = 5;
/// How long an open breaker waits before a probe call, by default, in milliseconds.
pub const DEFAULT_COOLDOWN_MS: u64 = 30_000;

/// The resource subscriptions one session may hold through the gateway, by default.
pub const DEFAULT_MAX_SUBSCRIPTIONS: u32 = 100;
/// The most `[gateway] max_subscriptions` may be.
pub const MAX_MAX_SUBSCRIPTIONS: u32 = 100_000;

/// `[gateway]`: settings of every upstream.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// What joins an upstream's name and its tool's name in the names toolgate lists
    /// (default `__`: `files__read_file`); 1 to 3 characters of `_`, `-`, `.`.
    pub separator: Option<String>,
    /// The upstream resources one session may be subscribed to at once (`resources/subscribe`
    /// through the gateway; default 100, 1 to 100000). A subscribe past it is refused, nothing
    /// sent upstream: unsubscribe from another resource first.
    pub max_subscriptions: Option<u32>,
}

impl GatewayConfig {
    /// The upstream resources one session may be subscribed to at once.
    pub fn max_subscriptions(&self) -> u32 {
        self.max_subscriptions.unwrap_or(DEFAULT_MAX_SUBSCRIPTIONS)
    }
}

/// One `[[upstreams]]` entry: an MCP server, over stdio (`command`) or streamable HTTP
/// (`url`), whose tools are served as `<name><separator><tool>` through toolgate's
/// pipeline.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// The upstream's name: 1 to 32 characters of `A-Z a-z 0-9 -`, unique; the prefix of its
    /// tools' names.
    pub name: String,
    /// The program of a stdio server, started and supervised by toolgate (absolute, or
    /// found on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Names of environment variables passed on to the program from toolgate's own
    /// environment (the sandbox's scrubbed environment gets nothing else).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The endpoint of a streamable HTTP server (`http://` or `https://`; HTTPS by rustls,
    /// the server's certificate checked against the system's roots and `ca_file`). Without
    /// credentials (`user:password@` is refused: send them in `headers`, from the
    /// environment) or a fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A PEM file of CA certificates trusted for an `https://` upstream besides the
    /// system's roots (a private CA, a self-signed server); relative paths are from the
    /// workspace root. Checked at load: it must be a readable file of PEM certificates, at
    /// most 1 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// Headers sent to an HTTP upstream, each value read from an environment variable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderConfig>,
    /// Which of the upstream's tools are served (default: all).
    #[serde(default)]
    pub tools: ToolFilter,
    /// What the operator vouches for about the upstream's tools. Without it, an upstream's
    /// annotations can only make a tool more restricted: `read_only` lets a `readOnlyHint`
    /// stand, `idempotent` an `idempotentHint`, `not_destructive` a `destructiveHint: false`,
    /// `closed_world` an `openWorldHint: false`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trust: Vec<TrustConfig>,
    /// Run a stdio server under run_shell's kernel sandbox (default true); `false` only by
    /// the operator's explicit choice.
    #[serde(default = "yes")]
    pub sandbox: bool,
    /// Namespace what the upstream serves (default true): its tools and prompts as
    /// `<name><separator><tool>`, its resource URIs as `<name>+<uri>`. `false` keeps its own
    /// names and URIs (a gateway that fronts one server transparently); a name that would
    /// shadow a built-in tool or another upstream's is still not served.
    #[serde(default = "yes")]
    pub prefix: bool,
    /// Give a sandboxed stdio server the host's network (default false: its own loopback
    /// only).
    #[serde(default)]
    pub network: bool,
    /// A call's timeout, in milliseconds (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How long the server has to start, answer `initialize` and list its tools, in
    /// milliseconds (default 15000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// Consecutive failures or timeouts of a tool (or of the whole upstream) that open its
    /// circuit breaker (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_threshold: Option<u32>,
    /// How long an open breaker answers `upstream_unavailable` before letting one probe
    /// call through, in milliseconds (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_ms: Option<u64>,
    /// Arguments of the upstream's tools that name workspace paths or URLs, so the policy's
    /// `path:` and `host:` rules cover them and paths are confined to the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ArgumentConfig>,
    /// How many notifications the upstream may send unasked, by kind: what is over is
    /// dropped (never queued), counted and logged (default: [`NotificationLimits`]'s).
    #[serde(default, skip_serializing_if = "NotificationLimits::is_default")]
    pub notifications: NotificationLimits,
    /// The requests the upstream may send to the client of a call it is serving (default
    /// none): `sampling` (`sampling/createMessage`, asking the client's model) and
    /// `elicitation` (`elicitation/create`, asking the user). Only what is listed here is
    /// declared to the upstream; a request is relayed when the calls of the upstream in
    /// flight are all one session's and that session's client declared the capability,
    /// otherwise the upstream gets a JSON-RPC error saying which condition failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relay: Vec<RelayKind>,
}

/// A request an upstream may send to the client of a call it is serving, relayed by the
/// gateway (`[[upstreams]] relay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayKind {
    /// `sampling/createMessage`: the client's model is asked for a message.
    Sampling,
    /// `elicitation/create`: the client's user is asked for input.
    Elicitation,
}

impl RelayKind {
    /// `sampling` or `elicitation`, as configured.
    pub const fn as_str(self) -> &'static str {
        match self {
            RelayKind::Sampling => "sampling",
            RelayKind::Elicitation => "elicitation",
        }
    }
}

/// The budgets of what an upstream sends unasked, each a steady rate and a burst (GCRA, the
/// `governor` crate). A notification over its kind's budget is dropped, never queued; drops
/// are counted (`toolgate_upstream_notifications_dropped_total{upstream, kind}`) and logged
/// at most once a window. The result of a call is never affected; a dropped progress
/// notification may be the call's last one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationLimits {
    /// `notifications/message` (log messages; default 50 a second, bursts of 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<NotificationRate>,
    /// `notifications/progress` (default 20 a second, bursts of 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<NotificationRate>,
    /// `notifications/resources/updated` (default 20 a second, bursts of 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_updated: Option<NotificationRate>,
    /// `notifications/resources/list_changed`, each passed on to every session (default 1 a
    /// second, bursts of 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<NotificationRate>,
    /// Requests to the client (`sampling/createMessage`, `elicitation/create`), relayed or
    /// not: one over the budget is answered with an error at once, without being relayed or
    /// audited one by one (default 2 a second, bursts of 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<NotificationRate>,
}

/// A kind of notification an upstream sends unasked, metered by [`NotificationLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotificationKind {
    /// `notifications/message`.
    Log,
    /// `notifications/progress`.
    Progress,
    /// `notifications/resources/updated`.
    ResourceUpdated,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// Requests to the client: `sampling/createMessage`, `elicitation/create`.
    Requests,
}

impl NotificationKind {
    /// Every kind.
    pub const ALL: [NotificationKind; 5] = [
        NotificationKind::Log,
        NotificationKind::Progress,
        NotificationKind::ResourceUpdated,
        NotificationKind::ResourcesListChanged,
        NotificationKind::Requests,
    ];

    /// Its key in [`NotificationLimits`] and its metric label: `log`, `progress`,
    /// `resource_updated`, `resources_list_changed`, `requests`.
    pub const fn as_str(self) -> &'static str {
        match self {
            NotificationKind::Log => "log",
            NotificationKind::Progress => "progress",
            NotificationKind::ResourceUpdated => "resource_updated",
            NotificationKind::ResourcesListChanged => "resources_list_changed",
            NotificationKind::Requests => "requests",
        }
    }

    /// Its budget when the entry does not set one: (notifications per second, burst).
    pub const fn default_rate(self) -> (u32, u32) {
        match self {
            NotificationKind::Log => (50, 100),
            NotificationKind::Progress | NotificationKind::ResourceUpdated => (20, 50),
            NotificationKind::ResourcesListChanged => (1, 5),
            NotificationKind::Requests => (2, 5),
        }
    }
}

impl NotificationLimits {
    fn is_default(&self) -> bool {
        *self == NotificationLimits::default()
    }

    /// What the entry sets for `kind`.
    pub fn get(&self, kind: NotificationKind) -> Option<&NotificationRate> {
        match kind {
            NotificationKind::Log => self.log.as_ref(),
            NotificationKind::Progress => self.progress.as_ref(),
            NotificationKind::ResourceUpdated => self.resource_updated.as_ref(),
            NotificationKind::ResourcesListChanged => self.resources_list_changed.as_ref(),
            NotificationKind::Requests => self.requests.as_ref(),
        }
    }

    /// The budget of `kind`: a notification every `period`, bursts of `burst`; the entry's
    /// (checked at load), else [`NotificationKind::default_rate`]. An unchecked entry's zero
    /// is read as 1.
    pub fn budget(&self, kind: NotificationKind) -> (std::time::Duration, u32) {
        let (per_second, burst) = kind.default_rate();
        let Some(r) = self.get(kind) else {
            return (std::time::Duration::from_secs(1) / per_second, burst);
        };
        let (count, period) = match (r.per_second, r.per_minute) {
            (Some(n), _) => (n.max(1), std::time::Duration::from_secs(1)),
            (None, Some(n)) => (n.max(1), std::time::Duration::from_secs(60)),
            (None, None) => (per_second, std::time::Duration::from_secs(1)),
        };
        (period / count, r.burst.unwrap_or(count).max(1))
    }
}

/// One kind's budget: `per_second` or `per_minute` notifications (one of the two, at least
/// 1), bursts of `burst` (default: the same number).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationRate {
    /// Notifications a second, steadily.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub per_second: Option<u32>,
    /// Notifications a minute, steadily.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub per_minute: Option<u32>,
    /// Notifications that may come at once (default: the number per period).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub burst: Option<u32>,
}

fn yes() -> bool {
    true
}

/// A header sent to an HTTP upstream.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderConfig {
    /// The header's name (`Authorization`, `X-Api-Key`).
    pub name: String,
    /// The environment variable holding its value (never the value itself).
    pub value_env: String,
}

/// Include and exclude patterns over an upstream's own tool names (globs: `read_*`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ToolFilter {
    /// Tools served (default: every tool).
    pub include: Vec<String>,
    /// Tools never served, whatever `include` says.
    pub exclude: Vec<String>,
}

/// What the operator vouches for about an upstream's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrustConfig {
    /// A `readOnlyHint: true` is believed.
    ReadOnly,
    /// An `idempotentHint: true` is believed.
    Idempotent,
    /// A `destructiveHint: false` is believed.
    NotDestructive,
    /// An `openWorldHint: false` is believed.
    ClosedWorld,
}

/// An argument of an upstream's tools that names a resource.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgumentConfig {
    /// The tools (a glob over the upstream's own names: `*`, `read_*`).
    pub tool: String,
    /// The argument's name (top-level; a string, or an array of strings).
    pub argument: String,
    /// What it names.
    pub kind: ArgumentKind,
    /// For a path: read or write (default: read for a tool taken as read-only, else write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<crate::model::AccessConfig>,
}

/// What an argument names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentKind {
    /// A path inside the workspace: confined like the built-in tools' paths and decided by
    /// `path:` rules.
    Path,
    /// A URL: decided by `host:` rules.
    Url,
}

impl UpstreamConfig {
    /// A call's timeout.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_UPSTREAM_TIMEOUT_MS))
    }

    /// How long the server has to start and list its tools.
    pub fn startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.startup_timeout_ms
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT_MS),
        )
    }

    /// Whether the operator lets the upstream's requests of `kind` reach the client.
    pub fn relays(&self, kind: RelayKind) -> bool {
        self.relay.contains(&kind)
    }

    /// Whether the operator vouches for `what`.
    pub fn trusts(&self, what: TrustConfig) -> bool {
        self.trust.contains(&what)
    }
}

/// The largest `ca_file` read, in bytes.
pub const MAX_CA_FILE_BYTES: u64 = 1 << 20;

/// Why `text` (relative to `root`) cannot be an upstream's `ca_file`, if it cannot: it must
/// be a regular file of at most [`MAX_CA_FILE_BYTES`] holding at least one PEM certificate
/// (whether each parses is found when the upstream connects, by the TLS library).
fn ca_file_problem(root: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Read;
    if text.trim().is_empty() || text.contains('\0') {
        return Err("the CA file must be a file path".into());
    }
    let path = root.join(text);
    let file = std::fs::File::open(&path).map_err(|e| {
        format!("{text:?} cannot be read ({e}); give a PEM file of CA certificates")
    })?;
    let meta = file.metadata().map_err(|e| format!("{text:?}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{text:?} is not a file; give a PEM file of CA certificates"
        ));
    }
    if meta.len() > MAX_CA_FILE_BYTES {
        return Err(format!(
            "{text:?} is {} bytes, over the {MAX_CA_FILE_BYTES} a CA file may have",
            meta.len()
        ));
    }
    let mut body = String::new();
    file.take(MAX_CA_FILE_BYTES)
        .read_to_string(&mut body)
        .map_err(|_| format!("{text:?} is not text; give a PEM file of CA certificates"))?;
    if !body.contains("-----BEGIN CERTIFICATE-----") {
        return Err(format!(
            "{text:?} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(())
}

/// The path of `upstream`'s `ca_file` under the workspace `root`, when it has one.
pub fn ca_file_path(
    root: &std::path::Path,
    upstream: &UpstreamConfig,
) -> Option<std::path::PathBuf> {
    upstream.ca_file.as_ref().map(|c| root.join(c))
}

/// A count of notifications: a negative one is refused saying what to write (rather than
/// as a type error).
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = Option::<i64>::deserialize(d)?;
    n.map(|n| {
        u32::try_from(n).map_err(|_| {
            serde::de::Error::custom(format!(
                "{n} is not a number of notifications: write 1 to 1000000"
            ))
        })
    })
    .transpose()
}

/// Checks `[gateway]` and every `[[upstreams]]` entry (files named relative to `root`); each
/// problem goes to `problem` with its key path.
pub(crate) fn check(
    root: &std::path::Path,
    gateway: &GatewayConfig,
    upstreams: &[UpstreamConfig],
    problem: &mut dyn FnMut(Vec<Seg>, String),
) {
    let key = |k: &str| Seg::Key(k.to_string());
    let sep = gateway.separator.as_deref().unwrap_or(DEFAULT_SEPARATOR);
    if let Some(s) = &gateway.separator {
        if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| matches!(b, b'_' | b'-' | b'.')) {
            problem(
                vec![key("gateway"), key("separator")],
                format!("{s:?} cannot separate names: write 1 to 3 characters of _ - ."),
            );
        }
    }
    if let Some(m) = gateway.max_subscriptions {
        if !(1..=MAX_MAX_SUBSCRIPTIONS).contains(&m) {
            problem(
                vec![key("gateway"), key("max_subscriptions")],
                format!("{m} is out of range: write 1 to {MAX_MAX_SUBSCRIPTIONS}"),
            );
        }
    }
    for (i, u) in upstreams.iter().enumerate() {
        let at = |k: &str| vec![key("upstreams"), Seg::Index(i), key(k)];
        check_notifications(i, &u.notifications, problem);
        for (j, kind) in u.relay.iter().enumerate() {
            if u.relay[..j].contains(kind) {
                problem(
                    vec![key("upstreams"), Seg::Index(i), key("relay"), Seg::Index(j)],
                    format!(
                        "{:?} is listed twice: list each request once",
                        kind.as_str()
                    ),
                );
            }
        }
        let name_ok = !u.name.is_empty()
            && u.name.len() <= 32
            && u.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !name_ok {
            problem(
                at("name"),
                format!(
                    "{:?} cannot name an upstream: write 1 to 32 characters of A-Z a-z 0-9 -",
                    u.name
                ),
            );
        } else if u.name.contains(sep) {
            problem(
                at("name"),
                format!("the name must not contain the separator {sep:?}"),
            );
        }
        if upstreams[..i].iter().any(|o| o.name == u.name) {
            problem(
                at("name"),
                format!("another upstream is named {:?}", u.name),
            );
        }
        match (&u.command, &u.url) {
            (Some(_), Some(_)) => problem(
                at("url"),
                "an upstream has either `command` (stdio) or `url` (streamable HTTP), not both"
                    .into(),
            ),
            (None, None) => problem(
                vec![key("upstreams"), Seg::Index(i)],
                "an upstream needs `command` (a stdio server) or `url` (streamable HTTP)".into(),
            ),
            (Some(c), None) if c.trim().is_empty() || c.contains('\0') => {
                problem(at("command"), "the command must name a program".into())
            }
            (None, Some(url)) => {
                if let Some(why) = url_problem(url) {
                    problem(at("url"), why);
                }
            }
            _ => {}
        }
        if let Some(ca) = &u.ca_file {
            if !u
                .url
                .as_deref()
                .is_some_and(|url| url.starts_with("https://"))
            {
                problem(
                    at("ca_file"),
                    "`ca_file` is for https:// upstreams (`url`)".into(),
                );
            }
            if let Err(why) = ca_file_problem(root, ca) {
                problem(at("ca_file"), why);
            }
        }
        if u.url.is_some() {
            for (k, set) in [
                ("args", !u.args.is_empty()),
                ("env", !u.env.is_empty()),
                ("network", u.network),
            ] {
                if set {
                    problem(at(k), format!("`{k}` is for stdio upstreams (`command`)"));
                }
            }
        }
        if u.command.is_some() && !u.headers.is_empty() {
            problem(
                at("headers"),
                "`headers` are for HTTP upstreams (`url`)".into(),
            );
        }
        for (j, v) in u.env.iter().enumerate() {
            if !crate::secrets::is_env_name(v) {
                problem(
                    vec![key("upstreams"), Seg::Index(i), key("env"), Seg::Index(j)],
                    format!("{v:?} is not an environment variable's name"),
                );
            }
        }
        for (j, h) in u.headers.iter().enumerate() {
            let ok = !h.name.is_empty()
                && h.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
            if !ok {
                problem(
                    vec![
                        key("upstreams"),
                        Seg::Index(i),
                        key("headers"),
                        Seg::Index(j),
                        key("name"),
                    ],
                    format!("{:?} is not a header name", h.name),
                );
            }
        }
        for (k, list) in [("include", &u.tools.include), ("exclude", &u.tools.exclude)] {
            for (j, p) in list.iter().enumerate() {
                if let Err(e) = ToolPattern::parse(p) {
                    problem(
                        vec![
                            key("upstreams"),
                            Seg::Index(i),
                            key("tools"),
                            key(k),
                            Seg::Index(j),
                        ],
                        e.to_string(),
                    );
                }
            }
        }
        for (j, a) in u.arguments.iter().enumerate() {
            let at = |k: &str| {
                vec![
                    key("upstreams"),
                    Seg::Index(i),
                    key("arguments"),
                    Seg::Index(j),
                    key(k),
                ]
            };
            if let Err(e) = ToolPattern::parse(&a.tool) {
                problem(at("tool"), e.to_string());
            }
            if a.argument.is_empty() {
                problem(at("argument"), "name the argument".into());
            }
            if a.access.is_some() && a.kind != ArgumentKind::Path {
                problem(at("access"), "`access` is for path arguments".into());
            }
        }
        for (k, v, least, most) in [
            ("timeout_ms", u.timeout_ms, 1, 86_400_000),
            ("startup_timeout_ms", u.startup_timeout_ms, 1, 600_000),
            ("cooldown_ms", u.cooldown_ms, 1, 86_400_000),
            (
                "failure_threshold",
                u.failure_threshold.map(u64::from),
                1,
                1000,
            ),
        ] {
            if let Some(v) = v {
                if !(least..=most).contains(&v) {
                    problem(
                        at(k),
                        format!("{v} is out of range: write {least} to {most}"),
                    );
                }
            }
        }
    }
}

/// Checks the `notifications` budgets of the `i`th upstream.
fn check_notifications(
    i: usize,
    limits: &NotificationLimits,
    problem: &mut dyn FnMut(Vec<Seg>, String),
) {
    /// The most notifications a second (or a minute) and in a burst a budget may allow.
    const MOST: u32 = 1_000_000;
    for kind in NotificationKind::ALL {
        let Some(r) = limits.get(kind) else { continue };
        let at = |k: &str| {
            let mut p = vec![
                Seg::Key("upstreams".into()),
                Seg::Index(i),
                Seg::Key("notifications".into()),
                Seg::Key(kind.as_str().into()),
            ];
            if !k.is_empty() {
                p.push(Seg::Key(k.into()));
            }
            p
        };
        match (r.per_second, r.per_minute) {
            (Some(_), Some(_)) | (None, None) => problem(
                at(""),
                "write one of per_second and per_minute (notifications passed on, at least 1)"
                    .into(),
            ),
            _ => {}
        }
        for (k, v) in [
            ("per_second", r.per_second),
            ("per_minute", r.per_minute),
            ("burst", r.burst),
        ] {
            match v {
                Some(0) => problem(
                    at(k),
                    "0 would drop every notification: write at least 1 (1 to 1000000)".into(),
                ),
                Some(n) if n > MOST => {
                    problem(at(k), format!("{n} is out of range: write 1 to {MOST}"))
                }
                _ => {}
            }
        }
    }
}

/// Whether `name` is the listed name of a tool some upstream may serve
/// (`<upstream><separator><tool>`, any name at all for an upstream with `prefix = false`, and
/// the `toolgate.upstream.<upstream>.read_resource` and `.get_prompt` tools of its resources
/// and prompts): the configuration may name such tools before they are seen.
pub(crate) fn is_upstream_tool(
    gateway: &GatewayConfig,
    upstreams: &[UpstreamConfig],
    name: &str,
) -> bool {
    let sep = gateway.separator.as_deref().unwrap_or(DEFAULT_SEPARATOR);
    upstreams.iter().any(|u| {
        // an unprefixed upstream's tools keep names no configuration can know beforehand
        !u.prefix
            || name
                .strip_prefix(u.name.as_str())
                .and_then(|rest| rest.strip_prefix(sep))
                .is_some_and(|tool| !tool.is_empty())
            || [RESOURCE_TOOL_SUFFIX, PROMPT_TOOL_SUFFIX]
                .iter()
                .any(|suffix| name == format!("toolgate.upstream.{}.{suffix}", u.name))
    })
}

/// The last part of the name of an upstream's resource-reading tool,
/// `toolgate.upstream.<name>.read_resource` (toolgate-gateway's `served`).
pub const RESOURCE_TOOL_SUFFIX: &str = "read_resource";
/// The last part of the name of an upstream's prompt-getting tool,
/// `toolgate.upstream.<name>.get_prompt`.
pub const PROMPT_TOOL_SUFFIX: &str = "get_prompt";

/// What is wrong with an upstream's `url`, if anything: not an absolute `http://` or
/// `https://` URL (RFC 3986, read with the `url` crate), or one holding credentials
/// (`user:password@`, which would show wherever the URL is shown: logs, `toolgate stats`,
/// error messages) or a fragment.
fn url_problem(url: &str) -> Option<String> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || url.contains(char::is_whitespace) {
        return Some(format!("{url:?} is not an http:// or https:// URL"));
    }
    let parsed = match url::Url::parse(url) {
        Ok(u) => u,
        Err(e) => return Some(format!("{url:?} is not a URL: {e}")),
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(
            "the URL holds credentials (user:password@), which would be shown wherever the URL \
             is (logs, `toolgate stats`, error messages); leave them out and send them as a \
             header from an environment variable: headers = [{ name = \"Authorization\", \
             value_env = \"UPSTREAM_AUTH\" }]"
                .into(),
        );
    }
    if parsed.fragment().is_some() {
        return Some(format!(
            "{url:?} has a fragment (#...), which no request sends; leave it out"
        ));
    }
    None
}
