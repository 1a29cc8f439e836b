//! toolgate-config: `toolgate.toml`, the operator's configuration.
//!
//! A configuration is found at `<workspace>/toolgate.toml` or given with `--config`; without
//! one, everything is toolgate's defaults. A file that is not a regular file in reach (a
//! dangling link, a link out of the workspace, a directory, a FIFO) is refused, never taken
//! for the defaults ([`locate()`]). [`load`] reads it, checks it and compiles it once:
//! every problem comes back as a [`Problem`] located at `file:line:column`. The compiled
//! [`Config`] then gives what the commands build from it:
//!
//! - the agent [`Config::profiles`] for the registry, and the [`Config::session`] setup of a
//!   role (its profile and session attributes);
//! - the [`Config::policy`]: a [`ConfigPolicy`] (protected paths, allow/ask/deny rules over
//!   tools and resources with Cedar conditions, risk defaults) under the shell's command rules;
//! - [`Config::budgets`], the per-call limits ([`Config::limit`]), the store's location
//!   ([`Config::store_path`]), `run_shell`'s settings ([`Config::shell_config`]), the HTTP
//!   tools' settings ([`Config::http_config`], credentials whose variable is unset reported by
//!   [`Config::missing_credentials`]), the environment variable that holds the server's
//!   token, how long approval grants hold ([`Config::grant_expiry`]), the idempotency
//!   ledger's retention and window ([`Config::ledger_options`]), and the email assistant's
//!   `[mail]` settings ([`Config::mail`], checked by [`mail`]).
//!
//! The JSON Schema of the file is generated from [`model::ConfigFile`] ([`schema`]).

#![deny(missing_docs)]

mod approvals;
mod auth;
pub mod cedar;
pub mod cedar_shape;
mod compile;
mod http;
mod ledger;
mod limits;
mod links;
pub mod locate;
pub mod mail;
pub mod model;
mod parse;
pub mod policy;
pub mod problem;
mod rules;
pub mod schema;
mod secrets;
mod session;
pub mod source;
mod store_path;
pub mod upstreams;
mod words;

pub use approvals::{
    check_span, parse_expiry, span_text, GrantExpiry, Override, DEFAULT_ALWAYS_EXPIRES, MAX_EXPIRY,
};
pub use auth::{check_url, ALGORITHMS, DEFAULT_ALGORITHMS, ISSUER_ATTRIBUTE, MAX_LEEWAY_SECS};
pub use compile::{load, load_str, Config, SandboxEnforces, SandboxRule, CONFIG_FILE};
pub use ledger::parse_span;
pub use limits::Limited;
pub use locate::{locate, Located};
pub use policy::{ConfigPolicy, RiskDefaults, ROLE_ATTRIBUTE};
pub use problem::Problem;
pub use session::{parse_attr, SessionError, SessionSetup};
pub use source::{MAX_CONFIG_BYTES, MAX_RULES};
pub use upstreams::{GatewayConfig, UpstreamConfig};
