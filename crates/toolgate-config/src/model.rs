//! The serde types of `toolgate.toml`. Every table refuses unknown keys, and the JSON Schema
//! at `schema/toolgate.schema.json` is generated from these types ([`crate::schema`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole `toolgate.toml`. Every table is optional; an empty file is toolgate's defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigFile {
    /// Agent profiles (tool sets) by name, added to the built-in `default` (every tool) and
    /// `explore` (the read-only tools that stay inside the workspace); a profile of the same
    /// name replaces the built-in one.
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// Roles by name: which profiles a session of the role may use, and the session
    /// attributes it carries. A session's role is given with `--role`.
    pub roles: BTreeMap<String, RoleConfig>,
    /// Allow, ask and deny rules over tools and the resources a call touches; all matching
    /// rules combine by `deny > ask > allow`.
    pub rules: Vec<RuleConfig>,
    /// What the policy decides for calls no rule decides, by the tool's metadata.
    pub risk: RiskConfig,
    /// Session budgets.
    pub budgets: BudgetsConfig,
    /// Per-call limits that tighten every tool's own.
    pub limits: LimitsConfig,
    /// Where the store lives.
    pub store: StoreConfig,
    /// `run_shell` settings.
    pub shell: ShellSettings,
    /// The file tools' settings.
    pub files: FilesSettings,
    /// The MCP server's settings (`toolgate serve`).
    pub server: ServerConfig,
    /// How long the grants of approvers' scoped answers hold (`session` and `always`
    /// answers at the terminal prompt and through the MCP client).
    pub approvals: ApprovalsConfig,
    /// The idempotency ledger of side-effecting calls: how long entries are kept, and the
    /// window of keys derived for calls sent without one.
    pub ledger: LedgerConfig,
    /// The email assistant (toolgate-mail): when present, `toolgate serve` and `toolgate
    /// call` register its tools.
    pub mail: Option<MailSettings>,
    /// The HTTP tools' settings (`http_fetch`, `http_request`): the address ranges they may
    /// reach, redirects, timeouts, the body cap, name resolution and per-host credentials.
    pub http: HttpSettings,
    /// Settings of every upstream (the gateway).
    pub gateway: crate::upstreams::GatewayConfig,
    /// Other makers' MCP servers whose tools toolgate serves through its pipeline.
    pub upstreams: Vec<crate::upstreams::UpstreamConfig>,
}

/// One agent profile: a tool is in it when it is picked by `tools`, `tags` or `effects` (any
/// of them; every tool when all three are empty), passes `max_risk` and `require`, and is not
/// in `exclude`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileConfig {
    /// Tools by name (exact names of registered tools).
    pub tools: Vec<String>,
    /// Tools carrying any of these tags.
    pub tags: Vec<String>,
    /// Tools with any of these effects.
    pub effects: Vec<EffectSelector>,
    /// Effects every tool of the profile must have.
    pub require: Vec<EffectSelector>,
    /// Tools left out by name, whatever picks them.
    pub exclude: Vec<String>,
    /// The highest risk class a tool of the profile may have.
    pub max_risk: Option<RiskClass>,
    /// Tools of the profile (by name) left out of `tools/list` and of exports: the model
    /// finds them with `search_tools` (which the profile then has) and can call them.
    pub deferred: Vec<String>,
    /// List at most this many tools (`search_tools` counted); the rest, in name order, are
    /// deferred.
    #[schemars(range(min = 1))]
    pub max_listed: Option<usize>,
}

/// An effect a profile selects tools by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EffectSelector {
    /// Tools marked `read_only`.
    ReadOnly,
    /// Tools not marked `destructive`.
    NotDestructive,
    /// Tools that do not reach outside the workspace (not `open_world`).
    ClosedWorld,
}

/// A risk class, as tools declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RiskClass {
    /// Reads inside the workspace.
    Read,
    /// Writes inside the workspace.
    Write,
    /// Reaches systems outside the workspace.
    External,
    /// Can do harm that is hard to undo.
    Dangerous,
}

/// A role: the profiles its sessions may use, and the attributes they carry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RoleConfig {
    /// Profiles a session of this role may use; the first is its default.
    pub profiles: Vec<String>,
    /// Session attributes every session of the role starts with (strings, numbers, booleans);
    /// `--attr key=value` adds to them but cannot change one the role sets.
    pub attributes: BTreeMap<String, AttributeValue>,
}

/// A session attribute's value.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AttributeValue {
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    String(String),
}

/// A rule's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionConfig {
    /// The call runs.
    Allow,
    /// The call runs when the approver approves.
    Ask,
    /// The call does not run.
    Deny,
}

/// Read or write, for a rule over paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccessConfig {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// One rule: `decision` for calls to tools matching `tool` that touch a resource matching
/// `resource` (when given), in sessions where the Cedar condition holds (when given). A rule
/// needs `tool` or `resource` or both.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// A name for the rule, shown in decisions and the audit log (default `rules[N]`).
    #[serde(default)]
    pub name: Option<String>,
    /// What matching calls get.
    pub decision: DecisionConfig,
    /// A glob over tool names (`read_file`, `fs_*`, `*`).
    #[serde(default)]
    pub tool: Option<String>,
    /// A resource pattern: `path:<glob>`, `host:<pattern>` or `command:<prefix>`.
    #[serde(default)]
    pub resource: Option<String>,
    /// For `path:` rules: only reads or only writes (default both).
    #[serde(default)]
    pub access: Option<AccessConfig>,
    /// Roles the rule applies to (default every role, and sessions without one).
    #[serde(default)]
    pub roles: Vec<String>,
    /// A Cedar condition that must hold for the rule to apply (the body of a `when { }`
    /// clause), over `context.attributes`, `context.tool`, `context.role`,
    /// `context.profile` and `context.arguments`.
    #[serde(default)]
    pub when: Option<String>,
    /// A Cedar condition that must not hold for the rule to apply (the body of an
    /// `unless { }` clause).
    #[serde(default)]
    pub unless: Option<String>,
    /// Why, shown to the operator and the approver.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Decisions by the tool's metadata, for calls no rule decides (and combined with the rules
/// that do: the strongest wins).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RiskConfig {
    /// For tools marked `destructive` (default `ask`).
    pub destructive: DecisionConfig,
    /// For tools of risk `dangerous` (default `ask`).
    pub dangerous: DecisionConfig,
    /// For tools of risk `external` (default `allow`).
    pub external: DecisionConfig,
    /// For everything else (default `allow`).
    pub default: DecisionConfig,
}

impl Default for RiskConfig {
    fn default() -> Self {
        RiskConfig {
            destructive: DecisionConfig::Ask,
            dangerous: DecisionConfig::Ask,
            external: DecisionConfig::Allow,
            default: DecisionConfig::Allow,
        }
    }
}

/// Session budgets; absent means unlimited.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetsConfig {
    /// Calls per session.
    pub max_calls: Option<u64>,
    /// Calls of any one tool per session.
    pub max_calls_per_tool: Option<u64>,
    /// Wall time after the session's start after which no call starts, in milliseconds.
    pub max_wall_time_ms: Option<u64>,
    /// Result bytes (before truncation) per session.
    pub max_result_bytes: Option<u64>,
}

/// Per-call limits; each only lowers a tool's own. Rate limits and the daily quota count
/// calls the policy let through, per caller (the OAuth principal; without `[server.auth]`
/// every session is the one local caller) and per tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// The longest a call may run, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// The most bytes of a result handed back before it is truncated.
    pub max_result_bytes: Option<u64>,
    /// Rate limits (`[[limits.rate]]`); a call over one gets the recoverable `rate_limited`
    /// error with `retry_after_ms`.
    pub rate: Vec<RateConfig>,
    /// The daily quota of calls per caller, counted in the store (a restart does not reset
    /// it).
    pub quota: Option<QuotaConfig>,
}

/// One rate limit: `per_second` or `per_minute` calls (one of the two), with bursts of
/// `burst` calls (default: the same number).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    /// A name for the limit, shown in the error (default `limits.rate[N]`).
    #[serde(default)]
    pub name: Option<String>,
    /// What the limit counts: `calls` (default: tool calls the policy let through, refused
    /// with the recoverable `rate_limited`) or `requests` (every HTTP request of a caller to
    /// `/mcp`, refused before dispatch with `429` and `Retry-After`; `per = "principal"`
    /// only, no `tool`; `toolgate serve --http` only).
    #[serde(default)]
    pub counts: RateCountsConfig,
    /// What the calls are counted per: `principal` (default), `tool` or `principal_tool`.
    #[serde(default)]
    pub per: RatePerConfig,
    /// A glob over the tool names it counts (default every tool).
    #[serde(default)]
    pub tool: Option<String>,
    /// Calls per second.
    #[serde(default)]
    pub per_second: Option<u32>,
    /// Calls per minute.
    #[serde(default)]
    pub per_minute: Option<u32>,
    /// Calls that may come at once (default: the calls per period).
    #[serde(default)]
    pub burst: Option<u32>,
}

/// What a rate limit counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateCountsConfig {
    /// Tool calls, in the pipeline's budget stage (recoverable `rate_limited`).
    #[default]
    Calls,
    /// HTTP requests to `/mcp`, before dispatch (`429` with `Retry-After`).
    Requests,
}

/// What a rate limit counts per.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatePerConfig {
    /// Each caller (principal) has a bucket.
    #[default]
    Principal,
    /// Each tool has a bucket, whoever calls it.
    Tool,
    /// Each caller has a bucket per tool.
    PrincipalTool,
}

/// The daily quota.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaConfig {
    /// Calls per caller per UTC day.
    pub calls_per_day: u64,
}

/// Where the store lives.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// The SQLite file: relative to the workspace root or absolute (default
    /// `.toolgate/toolgate.db`).
    pub path: Option<String>,
}

/// `run_shell` settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ShellSettings {
    /// Give commands the host's network (default false: no network).
    pub network: bool,
    /// Run even where the kernel lacks part of the sandbox (default false: refuse).
    pub allow_unsandboxed: bool,
    /// Let commands create unix sockets (default false: refused, since through a socket
    /// file outside the workspace a service such as a container engine or an ssh agent
    /// would act for the command outside the sandbox).
    pub unix_sockets: bool,
    /// Processes (and threads) one run may have at once, all of them together (default 512;
    /// 8 to 4194304). Enforced by a cgroup of the run (`pids.max`) where the machine gives
    /// toolgate one (`toolgate check` says), root included; a fork past it fails.
    #[schemars(range(min = 8, max = 4194304))]
    pub max_processes: Option<u64>,
    /// Memory one run may use, all its processes together, in bytes (default 17179869184,
    /// 16 GiB; 16777216 to 1125899906842624). Enforced by the run's cgroup where it has a
    /// memory controller: past it the kernel kills the run's largest process.
    #[schemars(range(min = 16777216, max = 1125899906842624u64))]
    pub max_memory_bytes: Option<u64>,
    /// Who the commits made by commands are by (commands run with a private `HOME`, where git
    /// finds no configuration): `true` (the default) the `user.name` and `user.email` of the
    /// operator's global git configuration, read once at start and nothing else of it;
    /// `false` none; or `{ name = "...", email = "..." }`. What the commands' environment sets
    /// (`GIT_AUTHOR_NAME`, ...) wins.
    pub git_identity: GitIdentityConfig,
}

/// `[shell] git_identity`: `true`, `false` or `{ name, email }`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum GitIdentityConfig {
    /// `true`: the operator's own (the default); `false`: none.
    Operator(bool),
    /// This name and email address.
    Explicit {
        /// The name (`user.name`).
        name: String,
        /// The email address (`user.email`).
        email: String,
    },
}

impl GitIdentityConfig {
    /// run_shell's setting: an explicit identity that is not a valid one (built in code, since
    /// the file's is checked when read) gives none.
    pub fn to_shell(&self) -> toolgate_tools::shell::GitIdentity {
        use toolgate_tools::shell::{GitIdentity, Identity};
        match self {
            GitIdentityConfig::Operator(true) => GitIdentity::Operator,
            GitIdentityConfig::Operator(false) => GitIdentity::Off,
            GitIdentityConfig::Explicit { name, email } => Identity::new(name, email)
                .map(GitIdentity::Fixed)
                .unwrap_or(GitIdentity::Off),
        }
    }
}

impl Default for GitIdentityConfig {
    fn default() -> Self {
        GitIdentityConfig::Operator(true)
    }
}

impl<'de> Deserialize<'de> for GitIdentityConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Explicit {
            name: String,
            email: String,
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = GitIdentityConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "true (the user.name and user.email of your git configuration), false \
                     (none) or a table { name = \"...\", email = \"...\" }",
                )
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(GitIdentityConfig::Operator(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let e = Explicit::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                toolgate_tools::shell::Identity::new(&e.name, &e.email).map_err(|why| {
                    serde::de::Error::custom(format!(
                        "{why}; write git_identity = {{ name = \"Your Name\", email = \"you@example.com\" }}"
                    ))
                })?;
                Ok(GitIdentityConfig::Explicit {
                    name: e.name,
                    email: e.email,
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The file tools' settings (`read_file`, `read_resource`, `search_code`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FilesSettings {
    /// Path globs, relative to the workspace as in `path:` rules (`node_modules/.pnpm`,
    /// `.venv/**`), under which a file with several hard links is read. Elsewhere such a
    /// file is refused (`hard_link`), since its other names may be outside the workspace;
    /// package managers that link their store into the workspace (pnpm, uv on Linux) make
    /// every installed file one. Default: none.
    pub read_hard_links: Vec<String>,
}

/// The MCP server's settings. The limits bound what clients can hold (see the README's
/// "Limits"); `toolgate serve`'s flags of the same names replace them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// The name of the environment variable holding the HTTP bearer token (never the token
    /// itself; default `TOOLGATE_TOKEN`).
    pub token_env: Option<String>,
    /// The largest HTTP request body, in bytes (default 4194304, 4 MiB; 413 past it).
    pub max_body_bytes: Option<u64>,
    /// HTTP connections open at once (default 512); one more is closed when accepted.
    pub max_connections: Option<u64>,
    /// HTTP connections open at once from one peer IP address (default 128).
    pub max_connections_per_peer: Option<u64>,
    /// Milliseconds a client has to send a request's head, from connecting or from the
    /// previous answer (default 10000); then the connection is closed.
    pub header_timeout_ms: Option<u64>,
    /// Milliseconds a client has to send a request's body after its head (default 30000;
    /// 408 after).
    pub body_timeout_ms: Option<u64>,
    /// Milliseconds an HTTP connection may go without a byte moving (default 120000; at
    /// least 20000, above the SSE keep-alive of 15 s).
    pub idle_timeout_ms: Option<u64>,
    /// Live MCP sessions over HTTP one caller may hold: the holder of the token (each OAuth
    /// principal, once those are served; default 128; 429 past it).
    pub max_sessions: Option<u64>,
    /// Requests one MCP session may have in flight, stdio and HTTP (default 256).
    pub max_requests_in_flight: Option<u64>,
    /// toolgate as an OAuth 2.1 resource server: every HTTP request carries an access token
    /// of this authorization server, whose subject is the caller (the MCP specification's
    /// authorization section). The static token is not used then.
    pub auth: Option<AuthConfig>,
}

/// `[server.auth]`: the authorization server whose access tokens the HTTP server accepts,
/// and what a token's claims become. Tokens are JWTs checked against the issuer's JWKS, or,
/// with `introspection_endpoint`, opaque tokens asked about (RFC 7662).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// The authorization server's issuer identifier (RFC 8414), the `iss` every token must
    /// carry; its metadata is found at `/.well-known/oauth-authorization-server` (or
    /// `/.well-known/openid-configuration`) under it.
    pub issuer: String,
    /// The canonical URI of this server's MCP endpoint (`https://mcp.example.com/mcp`, the
    /// proxy's URL when one is in front): the `resource` of the Protected Resource Metadata
    /// (RFC 9728) and the audience tokens must be issued for (default: `http://ADDR/mcp` of
    /// the bound loopback address).
    pub resource: Option<String>,
    /// The accepted `aud` values (default: `resource` alone).
    pub audiences: Vec<String>,
    /// The JWKS URL (default: the issuer metadata's `jwks_uri`).
    pub jwks_uri: Option<String>,
    /// The RFC 7662 introspection endpoint, for opaque (non-JWT) tokens; with it, every
    /// token is introspected instead of verified as a JWT.
    pub introspection_endpoint: Option<String>,
    /// The environment variable holding toolgate's client id at the introspection endpoint.
    pub client_id_env: Option<String>,
    /// The environment variable holding toolgate's client secret there.
    pub client_secret_env: Option<String>,
    /// The scopes listed in the Protected Resource Metadata (default: `required_scopes`).
    pub scopes_supported: Vec<String>,
    /// Scopes every token must carry (`403 insufficient_scope` otherwise).
    pub required_scopes: Vec<String>,
    /// Token claims copied into the session's attributes (`context.attributes` in rule
    /// conditions), for example `["groups", "email"]`.
    pub claims: Vec<String>,
    /// Accepted JWT signature algorithms (default `RS256`, `ES256`, `PS256`, `EdDSA`);
    /// `none` and the HMAC algorithms are never accepted.
    pub algorithms: Vec<String>,
    /// Seconds of clock skew allowed on `exp` and `nbf` (default 30, at most 300).
    pub leeway_secs: Option<u64>,
    /// Roles given by the token's claims: role name to a Cedar condition over
    /// `context.attributes` (the copied claims), such as
    /// `'context.attributes.groups.contains("toolgate-admins")'`; the first role (by name)
    /// whose condition holds is the caller's, and its profiles and attributes apply.
    pub roles: BTreeMap<String, String>,
}

/// How long approval grants hold. Each value is a span in humantime syntax (`90s`, `30m`,
/// `8h`, `7d`, `1d 12h`; at least one second) or `never`. `toolgate call` flags
/// (`--session-expires`, `--always-expires`, `--max-expires`) and `toolgate serve` flags
/// replace them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// How long a grant of a `session` answer holds (default `never`: until its session ends
    /// or it is revoked; with `max_expires`, at most that).
    pub session_expires: Option<String>,
    /// How long a grant of an `always` answer holds when the answer does not say (default
    /// `24h`; with `max_expires`, at most that).
    pub always_expires: Option<String>,
    /// The longest expiry an answer may ask for; a longer one (or `never`) is refused and
    /// asked again (default `never`: no cap).
    pub max_expires: Option<String>,
}

/// The idempotency ledger's settings. Each value is a span in humantime syntax (`90s`, `30m`,
/// `24h`, `7d`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LedgerConfig {
    /// How long an ended entry is kept after its last change (default `24h`, at least `1s`):
    /// a side-effecting call sent again with its key within it gets the first call's result;
    /// later it acts again. An unsettled entry (a call that ended without recording whether
    /// it acted) is kept until `toolgate ledger resolve` settles it, however old.
    pub retention: Option<String>,
    /// How long after a call without a key ended the same call (same caller, tool and
    /// arguments) is answered from the ledger (default `10m`; `0s` derives no keys; at most
    /// the retention).
    pub derived_key_window: Option<String>,
}

/// `[mail]`: the email assistant's SMTP server, sender, contacts book and limits. Credentials
/// are never written here: `username_env` and `password_env` name the environment variables
/// that hold them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailSettings {
    /// The SMTP server's host name or address.
    pub smtp_host: String,
    /// Its port (default 587 for `starttls`, 465 for `tls`, 25 for `none`).
    #[serde(default)]
    pub smtp_port: Option<u16>,
    /// How the connection is secured (default `starttls`; `none` only for a loopback host).
    #[serde(default)]
    pub tls: Option<MailTls>,
    /// The environment variable holding the SMTP user name (with `password_env`).
    #[serde(default)]
    pub username_env: Option<String>,
    /// The environment variable holding the SMTP password (with `username_env`).
    #[serde(default)]
    pub password_env: Option<String>,
    /// The sender: `assistant@example.com` or `Assistant <assistant@example.com>`.
    pub from: String,
    /// The contacts book: a `.csv` (header `name,email,organization,aliases`) or `.vcf`
    /// file, or a list of them, relative to the workspace root or absolute.
    #[serde(default)]
    pub contacts: Option<ContactsFiles>,
    /// The SMTP timeout and `send_email`'s call timeout, a span (`30s`, `2m`; default `30s`).
    #[serde(default)]
    pub timeout: Option<String>,
    /// The largest message sent, in bytes, attachments encoded (default 10485760, 10 MiB).
    #[serde(default)]
    pub max_message_bytes: Option<u64>,
    /// A PEM file of the CA certificates trusted for the server's TLS certificate instead of
    /// the public web roots (an internal relay's private CA), relative to the workspace root
    /// or absolute.
    #[serde(default)]
    pub ca_file: Option<String>,
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MailTls {
    /// Plain text: only for a loopback host.
    None,
    /// STARTTLS (RFC 3207), required.
    Starttls,
    /// TLS from the first byte (RFC 8314).
    Tls,
}

/// One contacts file or several.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ContactsFiles {
    /// One file.
    One(String),
    /// Several files.
    Many(Vec<String>),
}

impl ContactsFiles {
    /// The files, in order.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            ContactsFiles::One(p) => vec![p.as_str()],
            ContactsFiles::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// The HTTP tools' settings. Every connection they make goes only to public addresses, unless
/// a range here opens a blocked one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Blocked address ranges (loopback, private, link-local, unique local, ...) the HTTP
    /// tools may reach, in CIDR notation or as single addresses (`["127.0.0.2/32",
    /// "10.1.0.0/16"]`); nothing blocked is reachable otherwise. A cloud metadata address
    /// (`169.254.169.254`, ...) is opened only by its own address, never by a wider range.
    pub allow_private: Vec<String>,
    /// Redirects followed (default 5, at most 20); 0 returns a redirect as it is.
    pub max_redirects: Option<u32>,
    /// Time to set up a connection (resolving the name, TCP, TLS), in milliseconds
    /// (default 10000, at most 600000).
    pub connect_timeout_ms: Option<u64>,
    /// Time a whole call may take, redirects and body included, in milliseconds (default
    /// 30000, at most 600000).
    pub timeout_ms: Option<u64>,
    /// The most body bytes a call reads, on the wire and decompressed alike, and the highest
    /// `max_bytes` a call may ask for (default 1048576, at most 67108864).
    pub max_bytes: Option<u64>,
    /// Name servers to resolve with instead of the system's resolver, as `IP:PORT` (or an IP
    /// for port 53): `["127.0.0.1:5353"]`. Asked over UDP and TCP.
    pub nameservers: Vec<String>,
    /// Static answers by host name, like curl's `--resolve`, consulted before any resolver:
    /// `"api.internal" = ["10.1.2.3"]`. Answers are checked like any other (a blocked one
    /// needs `allow_private`).
    pub hosts: BTreeMap<String, Vec<String>>,
    /// Credentials the HTTP tools add to requests to one host each, by host name or address:
    /// `[http.credentials."api.example.com"]` with `header` and `value_env`. Never shown to
    /// the model, never in results or the audit log, never sent on a redirect to another
    /// host.
    pub credentials: BTreeMap<String, CredentialConfig>,
}

/// A credential for one host: the header `header` with the value of the environment variable
/// `value_env` (the whole value, as `Bearer abc...` for `Authorization`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialConfig {
    /// The header's name (`Authorization`, `X-Api-Key`).
    pub header: String,
    /// The environment variable holding the header's value (never the value itself).
    pub value_env: String,
    /// Also send it over plain `http://` (a service without TLS on this machine or its
    /// network, where anyone on the path can read it); default false: a call naming
    /// `http://` on the host is refused (`credential_needs_https`) before anything is sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plain_http: bool,
}
