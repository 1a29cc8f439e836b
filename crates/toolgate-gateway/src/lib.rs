//! toolgate-gateway: other makers' MCP servers behind toolgate's pipeline.
//!
//! Each `[[upstreams]]` entry of `toolgate.toml` is an MCP server, over stdio (started,
//! sandboxed and supervised here) or streamable HTTP, reached with rmcp's client. Its tools
//! become tools of toolgate's registry, listed as `<upstream>__<tool>`, so the MCP server,
//! `toolgate call` and library users call them through the one `Pipeline` and its nine
//! stages, under the same policy, approvals, budgets, truncation and audit. This crate knows
//! no server and no binary.
//!
//! | module | concern |
//! |---|---|
//! | [`gateway`] | the [`Gateway`]: upstreams started, tools turned into registry tools, the registry rebuilt on change |
//! | `upstream.rs` | one upstream's supervisor: start, serve, restart with backoff, health |
//! | `connect.rs` | one connection: a sandboxed stdio process or an HTTP endpoint, the handshake, the first `tools/list` |
//! | `client.rs` | rmcp's client handler: progress routed to the call, `list_changed`, resource updates |
//! | [`flood`] | the budgets of what an upstream sends unasked: over them, dropped and counted |
//! | [`logs`] | an upstream's log messages to the client of its call in flight |
//! | [`relay`] | an upstream's sampling and elicitation requests to the client of its call in flight, opt-in |
//! | [`subscriptions`] | resource subscriptions: forwarded, relayed to the subscribed sessions only |
//! | [`naming`] | `<upstream><separator><tool>` within MCP's name rule and 64 characters |
//! | [`definition`] | the pinned definition: canonical JSON and its SHA-256 |
//! | [`quarantine`] | what in a definition is aimed at the model |
//! | [`effects`] | annotations that can only tighten, under the operator's trust |
//! | [`tool`] | [`UpstreamTool`] (a call's sequence) and [`BlockedTool`] |
//! | [`result`] | an upstream's answer as a toolgate output |
//! | [`breaker`] | the circuit breaker, per upstream and per tool |
//! | [`catalog`] | upstream resources, templates and prompts, namespaced; completion forwarded |
//! | [`served`] | the unlisted tools that read an upstream's resources and get its prompts |
//! | [`review`] | what `toolgate upstream list` and `diff` show the operator |

#![deny(missing_docs)]

mod answer;
pub mod breaker;
pub mod catalog;
mod client;
mod connect;
pub mod definition;
pub mod effects;
pub mod flood;
pub mod gateway;
mod http_client;
mod listing;
pub mod logs;
pub mod naming;
pub mod quarantine;
pub mod relay;
pub mod result;
pub mod review;
pub mod served;
mod stdout_lines;
pub mod subscriptions;
pub mod tool;
mod upstream;

pub use catalog::{CatalogChange, CatalogError, UpstreamCatalog};
pub use connect::StartContext;
pub use gateway::{BaseRegistry, Gateway, GatewayOptions, UpstreamStatus, WrapTool};
pub use tool::{BlockReason, BlockedTool, UpstreamTool, IDEMPOTENCY_META_KEY};
