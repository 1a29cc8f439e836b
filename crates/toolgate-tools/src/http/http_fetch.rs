//! `http_fetch`: a page or an API answer as text, read-only and idempotent.
//!
//! The guard checks the URL by the egress policy (no I/O), the headers and `max_bytes`, and
//! declares the URL, so the policy's `host:` rules decide the call before it runs; the handler
//! sends GET or HEAD through the [`HttpClient`] (every connection checked, every redirect hop
//! checked before it is followed) and returns the body as text ([`super::response`]).

use super::client::{HttpClient, Request};
use super::headers::request_headers;
use super::response::{exchange, max_bytes, HttpResponse};
use super::HttpConfig;
use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use toolgate_core::{
    Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool,
};

/// The method of `http_fetch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum FetchMethod {
    /// The status, headers and body.
    #[default]
    #[serde(rename = "GET")]
    Get,
    /// The status and headers only.
    #[serde(rename = "HEAD")]
    Head,
}

/// Arguments of `http_fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpFetchArgs {
    /// The absolute http:// or https:// URL to fetch, for example
    /// `https://docs.rs/serde/latest/serde/`.
    #[schemars(length(min = 1, max = 8192))]
    pub url: String,
    /// `GET` (default) for the body, or `HEAD` for the status and headers only.
    #[serde(default)]
    pub method: FetchMethod,
    /// Request headers by name, only these: Accept, Accept-Language, Cache-Control,
    /// If-Modified-Since, If-None-Match, Pragma, Range, User-Agent. No credentials: the
    /// operator configures those per host.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 32))]
    pub headers: BTreeMap<String, String>,
    /// The most body bytes to read (default and highest: the operator's limit, 1048576
    /// unless configured); a longer body is cut there and marked `truncated`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_bytes: Option<u64>,
}

/// The `http_fetch` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone)]
pub struct HttpFetch {
    client: Arc<HttpClient>,
}

impl HttpFetch {
    /// The tool with its own client under `config`.
    pub fn new(config: HttpConfig) -> HttpFetch {
        HttpFetch::with_client(Arc::new(HttpClient::new(config)))
    }

    /// The tool over `client` (shared with `http_request`: one connection pool).
    pub fn with_client(client: Arc<HttpClient>) -> HttpFetch {
        HttpFetch { client }
    }
}

const DESCRIPTION: &str = "Fetch a web page or an API answer over HTTP(S) and return it as \
text: HTML converted to Markdown, JSON and other text as sent. Use it to read documentation, \
issues, package pages or a read-only API; for requests that change something (POST, PUT, \
DELETE) use http_request. Only public http:// and https:// URLs are fetched: local, private \
and cloud metadata addresses, other schemes and credentials in the URL are refused \
(url_blocked, with the reason), and so is a redirect to any of them. Binary content (images, \
PDFs, archives) is refused with its type and size. Returns {url, status, headers, format, \
body, body_bytes, truncated, redirects}; a 404 or 500 is a normal result with its status. \
`max_bytes` caps the body read (a longer body is cut, `truncated`); a long result keeps its \
head and tail and read_result pages through the rest.";

impl TypedTool for HttpFetch {
    type Args = HttpFetchArgs;
    type Output = HttpResponse;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("http_fetch")
            .title("Fetch a URL")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: true,
                concurrency_safe: true,
            })
            .risk(Risk::External)
            .timeout(self.client.config().timeout)
            .tag("http")
            .example(
                "Read a documentation page",
                serde_json::json!({"url": "https://docs.rs/serde/latest/serde/"}),
            )
            .example(
                "Check a resource without downloading it",
                serde_json::json!({"url": "https://example.com/big.json", "method": "HEAD"}),
            )
    }

    /// The URL by the egress policy (scheme, credentials, an address host), the headers and
    /// `max_bytes`; declares the URL for the policy's `host:` rules.
    fn guard(&self, args: &HttpFetchArgs, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let url = self.client.egress().check_url(&args.url)?;
        request_headers(&args.headers, false)?;
        max_bytes(args.max_bytes, self.client.config().max_bytes)?;
        Ok(vec![Resource::Url { url: url.into() }])
    }

    async fn call(&self, args: HttpFetchArgs, ctx: ToolContext) -> Result<HttpResponse, ToolError> {
        let url = self.client.egress().check_url(&args.url)?;
        let headers = request_headers(&args.headers, false)?;
        let cap = max_bytes(args.max_bytes, self.client.config().max_bytes)?;
        let method = match args.method {
            FetchMethod::Get => Method::GET,
            FetchMethod::Head => Method::HEAD,
        };
        let req = Request {
            method,
            url,
            headers,
            body: None,
            idempotency_key: None,
        };
        exchange(&self.client, req, cap, &ctx)
            .await
            .map_err(|f| f.error)
    }
}
