//! [`HttpResponse`]: what both HTTP tools return, and the exchange that makes it: send (with
//! redirects), read the body within the cap, turn it into text.

use super::body;
use super::client::{Failure, Fetched, HttpClient, Request};
use super::headers::response_headers;
use super::text::{self, Format, Kind};
use reqwest::{Method, StatusCode};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use toolgate_core::{ToolContext, ToolError};

/// Bodies longer than this are turned into text on the blocking pool, off the async runtime.
/// HTML (and a body without a type, which may be HTML) always is: its conversion costs
/// microseconds per element and up to [`super::html::MAX_DEPTH`] levels of the converter's
/// recursion, which a fresh blocking thread's stack holds in a debug build too.
const BLOCKING_CONVERSION_BYTES: usize = 64 << 10;

/// The result of `http_fetch` and `http_request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HttpResponse {
    /// The URL that answered, after redirects.
    pub url: String,
    /// The HTTP status code (a 404 or a 500 is a normal result).
    pub status: u16,
    /// Selected response headers, by lower-case name (content-type, content-length, etag,
    /// last-modified, location, retry-after, link, ...; never set-cookie).
    pub headers: BTreeMap<String, String>,
    /// How `body` was made: `markdown` (converted from HTML), `json` or `text` (as sent), or
    /// `empty`.
    pub format: Format,
    /// The body as text.
    pub body: String,
    /// Bytes of the body read, after decompression.
    pub body_bytes: u64,
    /// Whether the body went on past `max_bytes` and was cut there.
    pub truncated: bool,
    /// The redirects followed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<String>,
    /// The idempotency key sent as `Idempotency-Key` (`http_request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// Sends `req` through `client` and makes the result: the body read within `max_bytes` and
/// turned into text by its type (none for HEAD, 204 and 304), every form of the operator's
/// credentials replaced in it and in its errors ([`super::secrets`]).
///
/// # Errors
/// The client's errors ([`HttpClient::send`]); `binary_content` for a body that is not text
/// (refused before it is read when its type says so), `limit_exceeded` for a longer
/// `Content-Length`, the body reader's errors ([`body::read`]).
pub async fn exchange(
    client: &HttpClient,
    req: Request<'_>,
    max_bytes: u64,
    ctx: &ToolContext,
) -> Result<HttpResponse, Failure> {
    let secrets = client.secrets();
    match exchange_raw(client, req, max_bytes, ctx).await {
        Ok(mut response) => {
            secrets.scrub_response(&mut response);
            Ok(response)
        }
        Err(mut failure) => {
            secrets.scrub_error(&mut failure.error);
            Err(failure)
        }
    }
}

/// [`exchange`] before the credentials are replaced.
async fn exchange_raw(
    client: &HttpClient,
    req: Request<'_>,
    max_bytes: u64,
    ctx: &ToolContext,
) -> Result<HttpResponse, Failure> {
    let head = req.method == Method::HEAD;
    let key = req.idempotency_key.map(str::to_owned);
    let Fetched {
        url,
        redirects,
        response,
    } = client.send(req, ctx).await?;
    let after = |error: ToolError| Failure { error, sent: true };
    let status = response.status();
    let headers = response_headers(response.headers());
    let content_type = headers.get("content-type").cloned().unwrap_or_default();
    let (media, charset) = text::media_type(&content_type);
    let kind = text::kind(&media);
    let no_body = head || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;
    let (body, format, body_bytes, truncated) = if no_body {
        drop(response);
        (String::new(), Format::Empty, 0, false)
    } else {
        if kind == Kind::Binary {
            let size = body::content_length(response.headers());
            return Err(after(text::binary(&media, size)));
        }
        let read = body::read(response, max_bytes).await.map_err(after)?;
        let bytes = read.bytes.len() as u64;
        let off_runtime = matches!(kind, Kind::Html | Kind::Unknown)
            || read.bytes.len() > BLOCKING_CONVERSION_BYTES;
        let (text, format) = if off_runtime {
            crate::blocking::run(move || {
                text::to_text(kind, &media, charset.as_deref(), &read.bytes)
            })
            .await
        } else {
            text::to_text(kind, &media, charset.as_deref(), &read.bytes)
        }
        .map_err(after)?;
        (text, format, bytes, read.truncated)
    };
    Ok(HttpResponse {
        url: url.into(),
        status: status.as_u16(),
        headers,
        format,
        body,
        body_bytes,
        truncated,
        redirects: redirects.into_iter().map(String::from).collect(),
        idempotency_key: key,
    })
}

/// The body cap of a call: `asked` (the call's `max_bytes`), at most the operator's `limit`.
///
/// # Errors
/// `unsafe_input` / `limit_exceeded` when `asked` is above `limit`, saying the highest value
/// allowed.
pub fn max_bytes(asked: Option<u64>, limit: u64) -> Result<u64, ToolError> {
    match asked {
        None => Ok(limit),
        Some(n) if n <= limit => Ok(n.max(1)),
        Some(n) => Err(ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "max_bytes {n} is above the limit of {limit} bytes set here; send at most \
                 {limit}, or leave it out"
            ),
        )),
    }
}
