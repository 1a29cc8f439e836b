//! toolgate-mcp: toolgate's registry and dispatch pipeline served as an MCP server, on rmcp
//! (the official Rust SDK, pinned to 3.11.0).
//!
//! Every `tools/call` goes through the same [`toolgate_core::Pipeline`] as library callers;
//! nothing reaches around it. A request's life:
//!
//! 1. transport: stdio ([`serve_stdio`]), or streamable HTTP at `/mcp` ([`serve_http`]) on
//!    connections within [`http::Limits`] and behind the HTTP guard (one `Host` and `Origin`,
//!    bearer token, then `Host`, then `Origin`; body size cap and timeout; TCP_NODELAY)
//! 2. [`jsonrpc`]: each message checked before rmcp reads it, so every request gets one
//!    answer with the right code; one id in flight per session
//! 3. rmcp: JSON-RPC framing, `initialize` or the 2026-07-28 per-request metadata,
//!    `server/discover`, `ping`, cancellation tokens, sessions
//! 4. [`handler`]: `tools/list` from the registry ([`tools`]), `tools/call` as a toolgate
//!    `ToolCall` whose id is the JSON-RPC request id, dispatched with the request's
//!    cancellation token, with "still running" progress while it runs ([`progress`]), in the
//!    connection's toolgate session, or for a stateless HTTP request in its caller's
//!    ([`caller`])
//! 5. the pipeline; when its policy asks, [`ClientApprover`] asks the MCP client through
//!    elicitation ([`approval`]), or, on 2026-07-28, answers with an input-required result
//!    whose signed request state carries the question ([`mrtr`])
//!    `resources/*`, `prompts/*` and `completion/complete` from the server's [`catalog`]s, each
//!    read and get a pipeline call of an unlisted tool, like a `tools/call`
//! 6. [`result`]: the `ToolResult` as a `CallToolResult` (`structuredContent` and its text;
//!    pipeline errors as `isError: true` results; an unknown tool as JSON-RPC `-32602`)
//!
//! A tool running inside such a call can reach its MCP request through [`request`] (report
//! its own progress, send log messages at the level the client asked for, ask the client
//! through its peer or, on 2026-07-28, with an input-required result, fail the request with a
//! JSON-RPC error), and a binary that serves its own registry (a test server, the
//! `conformance-fixture` the official conformance suite runs against) reuses the `serve`
//! command line in [`cli`] or the [`McpServer`] and [`serve_http`] it is built on.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_core::{Registry, Workspace};
//! use toolgate_mcp::{McpServer, HttpConfig};
//!
//! let registry = toolgate_tools::register_read_only(Registry::builder()).build()?;
//! let pipeline = toolgate_mcp::pipeline_builder(registry).build();
//! let server = McpServer::builder(pipeline)
//!     .workspace(Workspace::open(".")?)
//!     .build()?;
//! // stdio: toolgate_mcp::serve_stdio(server, std::future::pending()).await?;
//! let http = toolgate_mcp::serve_http(server, HttpConfig::new("127.0.0.1:0".parse().unwrap())).await?;
//! println!("serving at {} with token {:?}", http.url(), http.token());
//! http.shutdown().await;
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod approval;
pub mod caller;
pub mod catalog;
pub mod cli;
mod error;
pub mod handler;
pub mod http;
pub mod idempotency;
pub mod inflight;
pub mod jsonrpc;
mod misread;
pub mod mrtr;
pub mod progress;
pub mod prometheus;
pub mod request;
pub mod result;
mod server;
pub mod stdio;
pub mod tools;

pub use approval::ClientApprover;
pub use error::Error;
pub use http::{serve_http, HttpConfig, HttpServer};
pub use server::{IdentitySetup, McpServer, McpServerBuilder, SessionShape};
pub use stdio::serve_stdio;

use std::sync::Arc;
use toolgate_core::{Pipeline, PipelineBuilder, Registry};

/// A pipeline builder over `registry` whose approver is a [`ClientApprover`]: approval
/// requests go to the MCP client that made the call. Set the policy, audit sink and result
/// store on it as for any pipeline, then hand the built pipeline to [`McpServer::builder`].
pub fn pipeline_builder(registry: impl Into<Arc<Registry>>) -> PipelineBuilder {
    Pipeline::builder(registry).approver(Arc::new(ClientApprover::new()))
}
