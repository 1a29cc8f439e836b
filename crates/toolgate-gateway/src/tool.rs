//! An upstream's tool as a toolgate tool: [`UpstreamTool`] (served) and [`BlockedTool`]
//! (changed or quarantined: never listed, refused when called).
//!
//! A call of an upstream tool, inside the pipeline's execute stage:
//!
//! 1. the upstream's breaker, then the tool's, admit it, or it ends at once with
//!    `tool_failed` / `upstream_unavailable` (recoverable, saying when to try again);
//! 2. the live connection is taken (none: `upstream_unavailable`);
//! 3. path arguments declared in the configuration are resolved inside the workspace again
//!    and sent as absolute paths (the guard stage confined them; the upstream must not read
//!    them relative to anything else);
//! 4. `tools/call` is sent, with a progress token routed to the caller when it listens;
//!    dropping the call (the caller cancelled, or the timeout passed) sends
//!    `notifications/cancelled` upstream;
//! 5. the answer becomes the output ([`crate::result`]); a transport failure is a
//!    recoverable `tool_failed` (`upstream_failed`), and counts towards the breakers, as does
//!    a call dropped at its deadline.
//!
//! Under the idempotency ledger (a tool neither read-only nor idempotent: absent hints, or a
//! claim `trust` does not cover), the pipeline claims the call's key before step 1 and a call
//! sent again with it is answered from the ledger, never sent upstream again. The tool tells
//! the ledger what its end means: every failure before `tools/call` left (a breaker open, no
//! connection, a path argument out of bounds, the request not accepted by the connection) is
//! `no_effect` (the key is free again); a connection lost after it left is `outcome_unknown`
//! (`upstream_failed`: the key stays unsettled until the operator resolves it, since the
//! upstream may have acted); the upstream's own answer, an error result or a JSON-RPC error,
//! is recorded and replayed. The key goes upstream too, in `_meta` under
//! [`IDEMPOTENCY_META_KEY`], for a server (another toolgate) that keeps a ledger of its own.

use crate::breaker::{Admission, Breaker};
use crate::client::ProgressRoutes;
use crate::upstream::Upstream;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_config::upstreams::ArgumentKind;
use toolgate_core::{
    Access, Args, ErrorKind, Resource, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
};

/// The `_meta` key the call's idempotency key is sent upstream under (the key toolgate's own
/// MCP server reads it from).
pub const IDEMPOTENCY_META_KEY: &str = "io.toolgate/idempotency-key";

/// An argument that names a resource.
#[derive(Debug, Clone)]
pub(crate) struct ResourceArgument {
    pub(crate) name: String,
    pub(crate) kind: ArgumentKind,
    pub(crate) access: Access,
}

/// A served upstream tool.
pub struct UpstreamTool {
    spec: ToolSpec,
    upstream: Arc<Upstream>,
    /// The name the upstream knows it by.
    tool: Arc<str>,
    breaker: Breaker,
    resources: Vec<ResourceArgument>,
}

impl UpstreamTool {
    pub(crate) fn new(
        spec: ToolSpec,
        upstream: Arc<Upstream>,
        tool: Arc<str>,
        resources: Vec<ResourceArgument>,
    ) -> UpstreamTool {
        UpstreamTool {
            breaker: crate::upstream::breaker(&upstream.config),
            spec,
            upstream,
            tool,
            resources,
        }
    }

    fn unavailable(&self, why: &str, retry_in: Option<Duration>) -> ToolError {
        let when = match retry_in {
            Some(d) if !d.is_zero() => format!("try again in {} s", d.as_secs().max(1)),
            _ => "try again later".to_string(),
        };
        ToolError::failed(format!(
            "{} is unavailable: the upstream server {} {why}; {when}, or use another tool",
            self.spec.name,
            self.upstream.name()
        ))
        .with_reason("upstream_unavailable")
        .no_effect()
    }

    /// The arguments as the policy decided them: declared path arguments made absolute inside
    /// the workspace, declared URL arguments in the WHATWG URL Standard's serialization (the
    /// parse the `host:` rules were matched on), so an upstream whose URL parser reads the
    /// text otherwise (RFC 3986 takes `http://a.example\\@b.example/` to be a request to
    /// `b.example`; WHATWG, `a.example`) is sent what every parser reads alike
    /// (`http://a.example//@b.example/`).
    fn resolved(&self, mut args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Some(obj) = args.as_object_mut() else {
            return Ok(args);
        };
        for r in &self.resources {
            let Some(v) = obj.get_mut(&r.name) else {
                continue;
            };
            let one = |s: &str| -> Result<Value, ToolError> {
                match r.kind {
                    ArgumentKind::Path => {
                        let ws = ctx.require_workspace()?;
                        let rel = ctx.resolve(s)?;
                        Ok(Value::String(
                            ws.root().join(rel.as_path()).to_string_lossy().into_owned(),
                        ))
                    }
                    ArgumentKind::Url => url::Url::parse(s)
                        .map(|u| Value::String(u.into()))
                        .map_err(|e| {
                            ToolError::invalid_input(format!(
                                "`{}` is not a URL ({e}); send one such as \
                                 https://example.com/page",
                                r.name
                            ))
                            .with_reason("invalid_url")
                        }),
                }
            };
            match v {
                Value::String(s) => *v = one(s)?,
                Value::Array(items) => {
                    for item in items.iter_mut() {
                        if let Value::String(s) = item {
                            *item = one(s)?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(args)
    }

    /// Refuses a declared URL argument whose host name resolves (with the system's resolver,
    /// as the upstream's own lookup would) to an address the egress policy blocks: the
    /// `http://vm/` of `/etc/hosts`, a name of a public DNS zone pointing at 127.0.0.1. A name
    /// that does not resolve within [`NAME_LOOKUP`] passes (the upstream cannot connect to it
    /// either); the upstream resolves again when it connects, which this cannot pin.
    async fn names_reach_public(&self, args: &Value) -> Result<(), ToolError> {
        let Some(obj) = args.as_object() else {
            return Ok(());
        };
        for r in &self.resources {
            if !matches!(r.kind, ArgumentKind::Url) {
                continue;
            }
            let values: Vec<&str> = match obj.get(&r.name) {
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => continue,
            };
            for v in values {
                let Ok(url) = url::Url::parse(v) else {
                    continue;
                };
                let Some(url::Host::Domain(host)) = url.host() else {
                    continue;
                };
                let port = url.port_or_known_default().unwrap_or(80);
                let lookup = tokio::net::lookup_host((host, port));
                let Ok(Ok(found)) = tokio::time::timeout(NAME_LOOKUP, lookup).await else {
                    continue;
                };
                let ips: Vec<std::net::IpAddr> = found.map(|a| a.ip()).collect();
                if !ips.is_empty() {
                    self.upstream
                        .egress
                        .check_answers(host, &ips)
                        .map_err(|e| ToolError::from(e).no_effect())?;
                }
            }
        }
        Ok(())
    }

    async fn run(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.names_reach_public(&args).await?;
        let up = match self.upstream.breaker.admit() {
            Ok(a) => a,
            Err(left) => {
                return Err(self.unavailable("is failing (its circuit breaker is open)", Some(left)))
            }
        };
        let mine = match self.breaker.admit() {
            Ok(a) => a,
            Err(left) => {
                self.upstream.breaker.abandoned(up);
                return Err(self.unavailable(
                    "keeps failing this tool (its circuit breaker is open)",
                    Some(left),
                ));
            }
        };
        let mut outcome = Outcome {
            tool: self,
            up,
            mine,
            deadline: ctx.deadline(),
            settled: false,
        };
        let Some(peer) = self.upstream.peer.load_full() else {
            outcome.settled = true;
            self.upstream.breaker.abandoned(up);
            self.breaker.abandoned(mine);
            return Err(self.unavailable("is not running (it is being started again)", None));
        };
        let arguments = match self.resolved(args, &ctx) {
            Ok(Value::Object(m)) => Some(m),
            Ok(_) => None,
            Err(e) => {
                outcome.settled = true;
                self.upstream.breaker.abandoned(up);
                self.breaker.abandoned(mine);
                return Err(e.no_effect());
            }
        };
        let mut params = CallToolRequestParams::new(self.tool.to_string());
        params.arguments = arguments;
        if let Some(key) = ctx.idempotency_key() {
            let mut meta = RequestMetaObject::default();
            meta.insert(IDEMPOTENCY_META_KEY.into(), Value::String(key.into()));
            params.meta = Some(meta);
        }
        // the upstream's log messages meanwhile go to this call's client
        let _log = self.upstream.log_route(&ctx);
        // and its requests (sampling, elicitation), where its entry relays them
        let _requests = self.upstream.request_route(&ctx);
        let answer = call(&peer, params, &self.upstream.progress, &ctx).await;
        outcome.settled = true;
        match answer {
            Err(Sent::No(e)) => {
                // the connection took no request: nothing reached the upstream
                if peer.is_transport_closed() {
                    self.upstream.connection_lost(&peer);
                }
                self.upstream.breaker.abandoned(up);
                self.breaker.abandoned(mine);
                Err(self.unavailable(
                    &format!("is not running ({e}; it is being started again)"),
                    None,
                ))
            }
            Err(Sent::Yes(e)) => Err(self.lost(&peer, up, mine, &e, &ctx)),
            Ok(result) => {
                self.upstream.breaker.success();
                self.breaker.success();
                let prefix = crate::catalog::uri_prefix(&self.upstream.config, "");
                crate::result::output(result, &self.spec.name, &prefix)
            }
            Err(Sent::Answered(e)) => {
                // the upstream answered: a protocol error about this call, not a failure of it
                self.upstream.breaker.success();
                self.breaker.success();
                Err(crate::result::answered_error(
                    &self.spec.name,
                    &e.message,
                    e.code.0,
                ))
            }
        }
    }

    /// The error of a call whose request left but whose answer never came (the connection
    /// was lost or the upstream wrote something that is not an answer). The upstream may
    /// have acted: under an idempotency key the call is `outcome_unknown` (the ledger keeps
    /// the key unsettled), without one a transient `tool_failed`.
    fn lost(
        &self,
        peer: &Peer<RoleClient>,
        up: Admission,
        mine: Admission,
        e: &rmcp::ServiceError,
        ctx: &ToolContext,
    ) -> ToolError {
        let why = describe(e);
        if peer.is_transport_closed() {
            self.upstream.connection_lost(peer);
        }
        self.upstream.call_failed(up, &why);
        self.breaker.failure(mine);
        let message = format!(
            "{} failed: the upstream server {} did not answer ({why}); the call may or may not \
             have had its effect",
            self.spec.name,
            self.upstream.name()
        );
        match ctx.idempotency_key() {
            Some(key) => ToolError::new(
                ErrorKind::OutcomeUnknown,
                format!(
                    "{message}. Check whether it did before acting again: sent again with \
                     idempotency key {key:?} it is not sent upstream, and gets outcome_unknown \
                     until the operator settles it (`toolgate ledger resolve`)"
                ),
            )
            .with_reason("upstream_failed"),
            None => ToolError::failed(message)
                .with_reason("upstream_failed")
                .transient(),
        }
    }
}

/// The most characters of an rmcp error a message quotes.
const DESCRIBE_CHARS: usize = 300;

/// An rmcp error as a message quotes it: the transport's Rust type names left out
/// (`Transport [rmcp::transport::worker::WorkerTransport<...>] error: `), secrets in it
/// redacted (a key in an upstream URL's query), and cut to
/// [`DESCRIBE_CHARS`] characters, since rmcp's text may end with the upstream's whole
/// unreadable answer.
pub(crate) fn describe(e: &rmcp::ServiceError) -> String {
    described(&e.to_string())
}

fn described(full: &str) -> String {
    let mut text = full;
    if let Some(rest) = text.strip_prefix("Transport send error: ") {
        text = rest;
    }
    if let Some(rest) = text.strip_prefix("Transport [") {
        if let Some(end) = rest.find("] error: ") {
            text = &rest[end + "] error: ".len()..];
        }
    }
    // a key in an HTTP upstream's query (`?api_key=...`), which reqwest's errors repeat
    let text = toolgate_core::redact::redact_inline(text);
    match text.char_indices().nth(DESCRIBE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

/// How far a `tools/call` got when it failed.
enum Sent {
    /// The connection did not take the request: the upstream never saw it.
    No(rmcp::ServiceError),
    /// The upstream answered with a JSON-RPC error.
    Answered(rmcp::model::ErrorData),
    /// The request left and no answer came.
    Yes(rmcp::ServiceError),
}

/// Sends `tools/call` and waits for its answer. rmcp puts a progress token of its own on
/// every request: the upstream's progress for it goes to the call's caller while it runs.
/// Dropped before the answer (cancelled, or past its deadline), it sends
/// `notifications/cancelled` for the request.
async fn call(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    routes: &Arc<ProgressRoutes>,
    ctx: &ToolContext,
) -> Result<CallToolResult, Sent> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(Sent::No)?;
    let _route = ctx
        .wants_progress()
        .then(|| routes.route(handle.progress_token.clone(), ctx.clone()));
    let mut abandoned = Abandoned {
        peer,
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    match answer {
        Ok(ServerResult::CallToolResult(r)) => Ok(r),
        Ok(_) => Err(Sent::Yes(rmcp::ServiceError::UnexpectedResponse)),
        Err(rmcp::ServiceError::McpError(e)) => Err(Sent::Answered(e)),
        Err(e) => Err(Sent::Yes(e)),
    }
}

/// Sends `notifications/cancelled` for a request dropped before its answer.
struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let cancelled = CancelledNotificationParam::new(
                    Some(id),
                    Some("the caller cancelled the call, or it ran past its timeout".into()),
                );
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

/// Settles the breakers of a call dropped before its answer: at its deadline it is a
/// failure (a hang), before it the caller cancelled.
struct Outcome<'a> {
    tool: &'a UpstreamTool,
    up: Admission,
    mine: Admission,
    deadline: Instant,
    settled: bool,
}

impl Drop for Outcome<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        if Instant::now() + Duration::from_millis(50) >= self.deadline {
            self.tool
                .upstream
                .call_failed(self.up, "a call ran past its timeout");
            self.tool.breaker.failure(self.mine);
        } else {
            self.tool.upstream.breaker.abandoned(self.up);
            self.tool.breaker.abandoned(self.mine);
        }
    }
}

impl Tool for UpstreamTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        Ok(Args::new(arguments.clone()))
    }

    fn guard(&self, args: &Args, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let Some(obj) = args.downcast_ref::<Value>().and_then(Value::as_object) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for r in &self.resources {
            let values: Vec<&str> = match obj.get(&r.name) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v.as_str().ok_or_else(|| not_a_resource(r, Some(i), v)))
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(not_a_resource(r, None, other)),
            };
            for v in values {
                out.push(match r.kind {
                    ArgumentKind::Path => Resource::Path {
                        path: v.to_string(),
                        access: r.access,
                    },
                    ArgumentKind::Url => {
                        // an http(s) URL to a private or metadata address, as the HTTP tools
                        // refuse it (a URL that does not parse is refused later, saying so)
                        if let Ok(url) = url::Url::parse(v) {
                            if matches!(url.scheme(), "http" | "https") {
                                self.upstream.egress.check(&url).map_err(ToolError::from)?;
                            } else if let Some(ip) = literal_ip(&url) {
                                // `ws://169.254.169.254/`, `ftp://127.0.0.1/`: the address
                                // is checked whatever the scheme
                                self.upstream.egress.check_ip(ip).map_err(|why| {
                                    ToolError::from(
                                        toolgate_core::egress::Blocked::PrivateAddress {
                                            host: ip.to_string(),
                                            addr: ip,
                                            resolved: false,
                                            why,
                                        },
                                    )
                                })?;
                            }
                        }
                        Resource::Url { url: v.to_string() }
                    }
                });
            }
        }
        Ok(out)
    }

    fn call(&self, args: Args, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        match args.downcast::<Value>() {
            Ok(v) => Box::pin(async move {
                let answer = self.run(v, ctx).await;
                self.upstream.held(answer)
            }),
            Err(_) => Box::pin(async {
                Err(ToolError::internal(
                    "decoded arguments of the wrong type reached an upstream tool",
                ))
            }),
        }
    }
}

/// The IP address a URL names as its host, when it names one (`[::1]` as `::1`).
fn literal_ip(url: &url::Url) -> Option<std::net::IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(ip.into()),
        url::Host::Ipv6(ip) => Some(ip.into()),
        url::Host::Domain(_) => None,
    }
}

/// How long [`UpstreamTool::names_reach_public`] waits for one name's addresses.
const NAME_LOOKUP: Duration = Duration::from_secs(2);

/// The error for a declared path or URL argument whose value toolgate cannot read as one (a
/// number, an object, an array holding one): passed on, it would reach the upstream with no
/// rule deciding it.
fn not_a_resource(r: &ResourceArgument, item: Option<usize>, value: &Value) -> ToolError {
    let (what, example) = match r.kind {
        ArgumentKind::Path => ("a workspace path", "\"src/main.rs\""),
        ArgumentKind::Url => ("a URL", "\"https://example.com/page\""),
    };
    let message = match item {
        None => format!(
            "`{}` names {what} here, so it must be a string (or an array of strings), not {}; \
             send for example {example}",
            r.name,
            json_type(value)
        ),
        Some(i) => format!(
            "`{}` names {what} in each item here, so its items must be strings, but item {i} is \
             {}; send for example [{example}]",
            r.name,
            json_type(value)
        ),
    };
    ToolError::invalid_arguments(
        message.clone(),
        vec![toolgate_core::ArgumentFault {
            pointer: match item {
                Some(i) => format!("/{}/{i}", toolgate_core::schema::escape_pointer(&r.name)),
                None => format!("/{}", toolgate_core::schema::escape_pointer(&r.name)),
            },
            message,
        }],
    )
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why an upstream tool is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockReason {
    /// Its definition changed since it was pinned (`tool_definition_changed`).
    Changed,
    /// Quarantined before its first listing (`tool_quarantined`).
    Quarantined,
}

impl BlockReason {
    /// The error reason a call gets.
    pub const fn as_str(self) -> &'static str {
        match self {
            BlockReason::Changed => "tool_definition_changed",
            BlockReason::Quarantined => "tool_quarantined",
        }
    }
}

/// A blocked upstream tool: tagged unlisted, so `tools/list` never shows it (nor its
/// definition), and refused by its guard, before any policy or approval, with the reason.
/// A call also asks the gateway to read the pins again now (the operator may just have
/// approved it from another process: the next call finds it served).
pub struct BlockedTool {
    spec: ToolSpec,
    reason: BlockReason,
    upstream: String,
    tool: String,
    recheck: Arc<tokio::sync::Notify>,
}

impl BlockedTool {
    pub(crate) fn new(
        listed: &str,
        upstream: &str,
        tool: &str,
        reason: BlockReason,
        recheck: Arc<tokio::sync::Notify>,
    ) -> Option<BlockedTool> {
        let spec = ToolSpec::builder(listed)
            .description("Blocked by the operator's gateway.")
            .input_schema(serde_json::json!({"type": "object"}))
            .tag(toolgate_core::registry::UNLISTED_TAG)
            .tag("upstream")
            .build()
            .ok()?;
        Some(BlockedTool {
            spec,
            reason,
            upstream: upstream.to_string(),
            tool: tool.to_string(),
            recheck,
        })
    }
}

impl Tool for BlockedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        Ok(Args::new(arguments.clone()))
    }

    fn guard(&self, _args: &Args, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        self.recheck.notify_one();
        let why = match self.reason {
            BlockReason::Changed => "its definition changed since the operator approved it",
            BlockReason::Quarantined => {
                "its definition carries text aimed at the model, so it is quarantined"
            }
        };
        Err(ToolError::failed(format!(
            "{} cannot be called: {why}. Nothing was run; tell the user that the operator must \
             review it (toolgate upstream diff {} / approve {} {}), and use another tool \
             meanwhile",
            self.spec.name, self.upstream, self.upstream, self.tool
        ))
        .with_reason(self.reason.as_str()))
    }

    fn call(&self, _args: Args, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async {
            Err(ToolError::internal(
                "a blocked upstream tool reached execute",
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_errors_lose_their_type_names_and_the_upstreams_whole_answer() {
        let body = format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": 2, \"result\": \"{}\"}}",
            "x".repeat(5000)
        );
        let full = format!(
            "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<rmcp::\
             transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::\
             client::Client>>] error: unexpected server response: could not parse JSON response \
             as ServerJsonRpcMessage: unexpected end of hex escape at line 1 column 85: {body}"
        );
        let got = described(&full);
        assert!(
            got.starts_with("unexpected server response: could not parse"),
            "{got}"
        );
        assert!(!got.contains("rmcp::"), "{got}");
        assert_eq!(got.chars().count(), DESCRIBE_CHARS + 1);
        assert!(got.ends_with('…'));
        assert_eq!(described("Transport closed"), "Transport closed");
        assert_eq!(
            described("Transport [x] no error marker"),
            "Transport [x] no error marker"
        );
        assert_eq!(
            described("error sending request for url (http://h/mcp?api_key=k3y-123&v=1)"),
            "error sending request for url (http://h/mcp?api_key=[REDACTED]&v=1)"
        );
    }
}
