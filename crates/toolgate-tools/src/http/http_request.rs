//! `http_request`: any method with a body, for APIs that change something. Destructive and not
//! idempotent, so the default policy asks before each call and the pipeline's idempotency
//! ledger lets a call act at most once per key; the call's key goes to the server as
//! `Idempotency-Key`, so a server that honours it refuses a second delivery too.
//!
//! The guard checks the URL by the egress policy (no I/O), the headers, the body and
//! `max_bytes`, and declares the URL for the policy's `host:` rules; the handler sends through
//! the shared [`HttpClient`] (every connection checked, every redirect hop checked before it is
//! followed). A failure before any request could reach a server is marked
//! [`ToolError::no_effect`], so the ledger frees the key for the same call to run again.

use super::client::{HttpClient, Request};
use super::headers::request_headers;
use super::response::{exchange, max_bytes, HttpResponse};
use super::HttpConfig;
use reqwest::header::{HeaderValue, CONTENT_TYPE};
use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use toolgate_core::{
    ArgumentFault, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool,
};

/// The largest request body `http_request` sends, in bytes (`body` as UTF-8, or `json` as
/// serialized): 4 MiB.
pub const MAX_REQUEST_BODY: usize = 4 << 20;

/// The method of `http_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum RequestMethod {
    /// GET: read (prefer http_fetch, which needs no approval).
    #[serde(rename = "GET")]
    Get,
    /// HEAD: the status and headers only.
    #[serde(rename = "HEAD")]
    Head,
    /// POST: create, or act.
    #[serde(rename = "POST")]
    Post,
    /// PUT: replace.
    #[serde(rename = "PUT")]
    Put,
    /// PATCH: change part.
    #[serde(rename = "PATCH")]
    Patch,
    /// DELETE: remove.
    #[serde(rename = "DELETE")]
    Delete,
    /// OPTIONS: what the resource allows.
    #[serde(rename = "OPTIONS")]
    Options,
}

impl RequestMethod {
    fn method(self) -> Method {
        match self {
            RequestMethod::Get => Method::GET,
            RequestMethod::Head => Method::HEAD,
            RequestMethod::Post => Method::POST,
            RequestMethod::Put => Method::PUT,
            RequestMethod::Patch => Method::PATCH,
            RequestMethod::Delete => Method::DELETE,
            RequestMethod::Options => Method::OPTIONS,
        }
    }

    /// Whether a request of this method may carry a body (RFC 9110 §9.3: GET and HEAD
    /// bodies have no defined meaning, and servers drop or refuse them).
    fn takes_body(self) -> bool {
        !matches!(self, RequestMethod::Get | RequestMethod::Head)
    }
}

/// Arguments of `http_request`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpRequestArgs {
    /// The absolute http:// or https:// URL, for example `https://api.example.com/v1/items`.
    #[schemars(length(min = 1, max = 8192))]
    pub url: String,
    /// The method: `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`, `GET` or `HEAD`.
    pub method: RequestMethod,
    /// Request headers by name: Accept, Accept-Language, Cache-Control, Content-Language,
    /// Content-Type, If-Match, If-Modified-Since, If-None-Match, If-Unmodified-Since, Pragma,
    /// Prefer, Range, User-Agent and application headers `X-...`. No credentials: the
    /// operator configures those per host.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 32))]
    pub headers: BTreeMap<String, String>,
    /// The body as text, sent as UTF-8 (Content-Type from `headers`, `text/plain;
    /// charset=utf-8` when not given). Not with `json`, nor with GET or HEAD.
    #[serde(default)]
    pub body: Option<String>,
    /// The body as JSON, sent serialized with Content-Type `application/json` (unless
    /// `headers` names another). Not with `body`, nor with GET or HEAD.
    #[serde(default)]
    pub json: Option<serde_json::Value>,
    /// The most response body bytes to read (default and highest: the operator's limit,
    /// 1048576 unless configured); a longer body is cut there and marked `truncated`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_bytes: Option<u64>,
}

/// The `http_request` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    client: Arc<HttpClient>,
}

impl HttpRequest {
    /// The tool with its own client under `config`.
    pub fn new(config: HttpConfig) -> HttpRequest {
        HttpRequest::with_client(Arc::new(HttpClient::new(config)))
    }

    /// The tool over `client` (shared with `http_fetch`: one connection pool).
    pub fn with_client(client: Arc<HttpClient>) -> HttpRequest {
        HttpRequest { client }
    }
}

const DESCRIPTION: &str = "Send an HTTP(S) request that may change something (POST, PUT, \
PATCH, DELETE, ...) with an optional body, and return the answer as text. Each call is put to \
the user for approval unless the operator's policy allows its host. To only read a page or an \
API, use http_fetch instead. The call's idempotency key is sent as the Idempotency-Key header, \
and a call sent again with the same key returns the first answer without sending the request \
again. Send the body as `json` (any JSON value, sent as application/json) or as `body` (text). \
Only public http:// and https:// URLs are reached: local, private and cloud metadata \
addresses, other schemes and credentials in the URL are refused (url_blocked, with the \
reason), and so is a redirect to any of them. Returns {url, status, headers, format, body, \
body_bytes, truncated, redirects, idempotency_key}; a 4xx or 5xx is a normal result with its \
status.";

/// The request body of `args` and its default Content-Type, checked.
fn body(args: &HttpRequestArgs) -> Result<Option<(Vec<u8>, &'static str)>, ToolError> {
    let fault = |pointer: &str, message: String| {
        ToolError::invalid_arguments(
            message.clone(),
            vec![ArgumentFault {
                pointer: pointer.into(),
                message,
            }],
        )
    };
    let (bytes, pointer, content_type) = match (&args.body, &args.json) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(fault(
                "/json",
                "send the body as either `body` (text) or `json`, not both".into(),
            ))
        }
        (Some(text), None) => (
            text.as_bytes().to_vec(),
            "/body",
            "text/plain; charset=utf-8",
        ),
        (None, Some(value)) => (
            serde_json::to_vec(value).map_err(|e| fault("/json", e.to_string()))?,
            "/json",
            "application/json",
        ),
    };
    if !args.method.takes_body() {
        return Err(fault(
            pointer,
            format!(
                "a {} request carries no body; leave it out, or use POST, PUT or PATCH",
                args.method.method()
            ),
        ));
    }
    if bytes.len() > MAX_REQUEST_BODY {
        return Err(ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "the request body is {} bytes, above the limit of {MAX_REQUEST_BODY} bytes; \
                 send a smaller body",
                bytes.len()
            ),
        ));
    }
    Ok(Some((bytes, content_type)))
}

impl TypedTool for HttpRequest {
    type Args = HttpRequestArgs;
    type Output = HttpResponse;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("http_request")
            .title("Send an HTTP request")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
                concurrency_safe: false,
            })
            .risk(Risk::External)
            .timeout(self.client.config().timeout)
            .tag("http")
            .example(
                "Create an item through a JSON API",
                serde_json::json!({
                    "url": "https://api.example.com/v1/items",
                    "method": "POST",
                    "json": {"name": "report", "done": false}
                }),
            )
            .example(
                "Delete a resource",
                serde_json::json!({"url": "https://api.example.com/v1/items/42", "method": "DELETE"}),
            )
    }

    /// The URL by the egress policy (scheme, credentials, an address host), the headers, the
    /// body and `max_bytes`; declares the URL for the policy's `host:` rules.
    fn guard(
        &self,
        args: &HttpRequestArgs,
        _ctx: &ToolContext,
    ) -> Result<Vec<Resource>, ToolError> {
        let url = self.client.egress().check_url(&args.url)?;
        request_headers(&args.headers, true)?;
        body(args)?;
        max_bytes(args.max_bytes, self.client.config().max_bytes)?;
        Ok(vec![Resource::Url { url: url.into() }])
    }

    async fn call(
        &self,
        args: HttpRequestArgs,
        ctx: ToolContext,
    ) -> Result<HttpResponse, ToolError> {
        let checked = || -> Result<_, ToolError> {
            let url = self.client.egress().check_url(&args.url)?;
            let mut headers = request_headers(&args.headers, true)?;
            let body = body(&args)?.map(|(bytes, content_type)| {
                headers
                    .entry(CONTENT_TYPE)
                    .or_insert(HeaderValue::from_static(content_type));
                bytes::Bytes::from(bytes)
            });
            let cap = max_bytes(args.max_bytes, self.client.config().max_bytes)?;
            Ok((url, headers, body, cap))
        };
        let (url, headers, body, cap) = checked().map_err(ToolError::no_effect)?;
        let req = Request {
            method: args.method.method(),
            url,
            headers,
            body,
            idempotency_key: ctx.idempotency_key(),
        };
        exchange(&self.client, req, cap, &ctx).await.map_err(|f| {
            if f.sent {
                f.error
            } else {
                f.error.no_effect()
            }
        })
    }
}
