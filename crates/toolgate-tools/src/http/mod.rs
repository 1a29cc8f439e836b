//! The HTTP tools: [`http_fetch`] (read-only, idempotent) and [`http_request`] (any method
//! with a body, destructive, asks by default, the call's idempotency key sent along), on one [`HttpClient`] whose every connection passes
//! the egress policy ([`toolgate_core::egress`]).
//!
//! What a call goes through, in order:
//!
//! 1. **guard** (no I/O): the URL by the egress policy (scheme `http`/`https`, no credentials
//!    in it, a host that is an address checked in every spelling the URL standard accepts),
//!    the request headers by the tool's allowlist ([`headers`]), `max_bytes` by the
//!    operator's limit; the URL is declared as the call's resource;
//! 2. **authorize**: the policy's `host:` rules (allow, ask, deny) over the URL, then the risk
//!    default (`http_request` is destructive: it asks);
//! 3. **the request** ([`client`]): each hop checked again before it is sent, a hop to another
//!    host decided by the policy ([`toolgate_core::ToolContext::decide_url`]), names resolved
//!    once by the [`GuardedResolver`] with every answer checked and the connection made to a
//!    checked answer only, redirects followed by the client itself (at most `max_redirects`),
//!    the operator's credential added for the host the call named only;
//! 4. **the body** ([`body`]): a `Content-Length` over the cap refused before reading, bytes
//!    counted on the wire and after decompression (gzip, deflate, br) while streaming, cut at
//!    the cap; binary types refused by their `Content-Type` before reading ([`text`]);
//! 5. **the result** ([`response`]): status, selected headers, the body as text (HTML as
//!    Markdown), with every form of the operator's credentials replaced by a marker in it and
//!    in every error ([`secrets`]: a server may send one back); the pipeline truncates a long
//!    result behind a `read_result` handle.
//!
//! Configuration: [`HttpConfig`] (`[http]` in toolgate.toml).

pub mod body;
pub mod client;
mod config;
pub mod headers;
pub mod html;
pub mod http_fetch;
pub mod http_request;
pub mod resolve;
pub mod response;
pub mod secrets;
pub mod text;

pub use client::HttpClient;
pub use config::{
    Credential, HttpConfig, Secret, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BYTES,
    DEFAULT_MAX_REDIRECTS, DEFAULT_TIMEOUT, MAX_MAX_BYTES, MAX_REDIRECTS, MAX_TIMEOUT,
};
pub use http_fetch::HttpFetch;
pub use http_request::HttpRequest;
pub use resolve::GuardedResolver;
pub use response::HttpResponse;
