//! Which request headers a model may send, and which response headers it gets back.
//!
//! A model never sends credentials (`Authorization`, `Cookie`, ...: the operator configures
//! them per host) nor a header the client sets itself (`Host`, `Content-Length`,
//! `Accept-Encoding`, `Idempotency-Key`, ...); `http_fetch` takes the headers of a read
//! ([`FETCH_HEADERS`]), `http_request` those and the headers of a write ([`REQUEST_HEADERS`])
//! and application headers named `X-...` (except the ones that claim where a request came
//! from). The response's headers come back only from [`RESPONSE_HEADERS`]: never
//! `Set-Cookie`.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;
use toolgate_core::{ArgumentFault, ToolError};

/// Request headers `http_fetch` sends for the model.
pub const FETCH_HEADERS: [&str; 8] = [
    "accept",
    "accept-language",
    "cache-control",
    "if-modified-since",
    "if-none-match",
    "pragma",
    "range",
    "user-agent",
];

/// Request headers `http_request` sends besides [`FETCH_HEADERS`] and `X-...` ones.
pub const REQUEST_HEADERS: [&str; 5] = [
    "content-language",
    "content-type",
    "if-match",
    "if-unmodified-since",
    "prefer",
];

/// `X-...` headers refused all the same: they claim where a request came from.
const X_REFUSED: [&str; 6] = [
    "x-forwarded-",
    "x-real-ip",
    "x-client-ip",
    "x-original-",
    "x-host",
    "x-cluster-client-ip",
];

/// Credentials: the operator's to configure, never the model's to send.
const CREDENTIALS: [&str; 4] = ["authorization", "proxy-authorization", "cookie", "cookie2"];

/// Headers the client sets itself or that concern the connection: never a credential's.
const CLIENT_HEADERS: [&str; 12] = [
    "accept-encoding",
    "connection",
    "content-length",
    "expect",
    "host",
    "idempotency-key",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Why `name` cannot be the header of an operator's credential (`[http.credentials]`), or
/// `None` when it can: it must be a header name, and not one the client sets itself or one
/// about the connection (`Host`, `Content-Length`, `Transfer-Encoding`, ...).
pub fn credential_header_problem(name: &str) -> Option<String> {
    if HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Some(format!(
            "{name:?} is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
        ));
    }
    let lower = name.to_ascii_lowercase();
    CLIENT_HEADERS.contains(&lower.as_str()).then(|| {
        format!(
            "{name} is set by the HTTP client itself and cannot carry a credential; use the \
             header the API reads it from, such as Authorization or X-Api-Key"
        )
    })
}

/// The most headers one call may send.
pub const MAX_HEADERS: usize = 32;
/// The longest header value a call may send, in bytes.
pub const MAX_HEADER_VALUE: usize = 4096;

/// Response headers returned to the model (others are left out, `Set-Cookie` always).
pub const RESPONSE_HEADERS: [&str; 20] = [
    "accept-ranges",
    "age",
    "allow",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-range",
    "content-type",
    "etag",
    "expires",
    "last-modified",
    "link",
    "location",
    "retry-after",
    "www-authenticate",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
];

/// The longest response header value returned, in bytes (longer ones are cut).
const MAX_RESPONSE_VALUE: usize = 2048;

/// The model's `headers` as a header map, when every one is allowed (`writes`: the
/// `http_request` allowlist).
///
/// # Errors
/// `invalid_arguments` with one fault per refused header, at `/headers/<name>`, saying why
/// and what is allowed.
pub fn request_headers(
    given: &BTreeMap<String, String>,
    writes: bool,
) -> Result<HeaderMap, ToolError> {
    let mut faults = Vec::new();
    let mut map = HeaderMap::with_capacity(given.len());
    if given.len() > MAX_HEADERS {
        faults.push(ArgumentFault {
            pointer: "/headers".into(),
            message: format!("at most {MAX_HEADERS} headers, got {}", given.len()),
        });
    }
    for (name, value) in given {
        let pointer = format!("/headers/{}", name.replace('~', "~0").replace('/', "~1"));
        let lower = name.to_ascii_lowercase();
        let refusal = if let Err(e) = HeaderName::from_bytes(name.as_bytes()) {
            Some(format!("{name:?} is not a header name ({e})"))
        } else if CREDENTIALS.contains(&lower.as_str()) {
            Some(format!(
                "{name} is not sent: a model does not send credentials; the operator \
                 configures them for a host (toolgate.toml, [http.credentials]), and they are \
                 added on the way out"
            ))
        } else if !allowed(&lower, writes) {
            Some(format!(
                "{name} is not sent by this tool (it sets the connection's headers itself); \
                 the headers it sends are {}",
                allowed_list(writes)
            ))
        } else if value.len() > MAX_HEADER_VALUE {
            Some(format!(
                "the value of {name} is {} bytes, over the limit of {MAX_HEADER_VALUE}",
                value.len()
            ))
        } else {
            match HeaderValue::from_str(value) {
                Ok(v) => {
                    if let Ok(n) = HeaderName::from_bytes(name.as_bytes()) {
                        map.append(n, v);
                    }
                    None
                }
                Err(_) => Some(format!(
                    "the value of {name} is not a header value (visible ASCII and spaces only)"
                )),
            }
        };
        if let Some(message) = refusal {
            faults.push(ArgumentFault { pointer, message });
        }
    }
    if faults.is_empty() {
        Ok(map)
    } else {
        Err(ToolError::invalid_arguments(
            format!(
                "{} of the headers cannot be sent; send only {}",
                faults.len(),
                allowed_list(writes)
            ),
            faults,
        ))
    }
}

fn allowed(lower: &str, writes: bool) -> bool {
    FETCH_HEADERS.contains(&lower)
        || writes
            && (REQUEST_HEADERS.contains(&lower)
                || lower.starts_with("x-") && !X_REFUSED.iter().any(|p| lower.starts_with(p)))
}

fn allowed_list(writes: bool) -> String {
    let mut names: Vec<&str> = FETCH_HEADERS.to_vec();
    if writes {
        names.extend(REQUEST_HEADERS);
        names.sort_unstable();
        return format!("{} and application headers named X-...", names.join(", "));
    }
    names.join(", ")
}

/// The response headers the model gets: those of [`RESPONSE_HEADERS`], lower case, repeated
/// ones joined with `, `, each value cut to 2 KiB.
pub fn response_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in RESPONSE_HEADERS {
        let mut values = headers.get_all(name).iter().peekable();
        if values.peek().is_none() {
            continue;
        }
        let joined: Vec<String> = values
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let mut value = joined.join(", ");
        if value.len() > MAX_RESPONSE_VALUE {
            let mut end = MAX_RESPONSE_VALUE;
            while !value.is_char_boundary(end) {
                end -= 1;
            }
            value.truncate(end);
            value.push_str("...");
        }
        out.insert(name.to_string(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn fetch_takes_only_the_headers_of_a_read() {
        let ok = request_headers(
            &headers(&[("Accept", "text/html"), ("Range", "bytes=0-99")]),
            false,
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        let e = request_headers(
            &headers(&[
                ("Authorization", "Bearer x"),
                ("Cookie", "a=b"),
                ("Host", "internal"),
                ("Content-Type", "text/plain"),
                ("X-Api-Key", "k"),
                ("Accept", "x"),
            ]),
            false,
        )
        .unwrap_err();
        let pointers: Vec<&str> = e.faults.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/headers/Authorization",
                "/headers/Content-Type",
                "/headers/Cookie",
                "/headers/Host",
                "/headers/X-Api-Key"
            ]
        );
        assert!(e.faults[0].message.contains("[http.credentials]"));
    }

    #[test]
    fn request_takes_write_and_application_headers_but_no_credentials_or_origin_claims() {
        let ok = request_headers(
            &headers(&[
                ("content-type", "application/json"),
                ("X-GitHub-Api-Version", "2022-11-28"),
                ("If-Match", "\"etag\""),
            ]),
            true,
        )
        .unwrap();
        assert_eq!(ok.len(), 3);
        for refused in [
            "Authorization",
            "Proxy-Authorization",
            "X-Forwarded-For",
            "X-Real-IP",
            "Transfer-Encoding",
            "Content-Length",
            "Idempotency-Key",
            "Accept-Encoding",
            "Connection",
            "bad name",
        ] {
            assert!(
                request_headers(&headers(&[(refused, "1")]), true).is_err(),
                "{refused}"
            );
        }
        // values: no line breaks (the sanitize stage refuses them too), bounded length
        assert!(request_headers(&headers(&[("Accept", "a\r\nX: y")]), true).is_err());
        let long = "a".repeat(MAX_HEADER_VALUE + 1);
        assert!(request_headers(&headers(&[("Accept", &long)]), true).is_err());
    }

    #[test]
    fn responses_show_selected_headers_never_cookies() {
        let mut h = HeaderMap::new();
        h.insert("content-type", HeaderValue::from_static("text/html"));
        h.insert("set-cookie", HeaderValue::from_static("session=secret"));
        h.insert("server", HeaderValue::from_static("x"));
        h.append("link", HeaderValue::from_static("<a>; rel=next"));
        h.append("link", HeaderValue::from_static("<b>; rel=prev"));
        let shown = response_headers(&h);
        assert_eq!(
            shown,
            BTreeMap::from([
                ("content-type".to_string(), "text/html".to_string()),
                (
                    "link".to_string(),
                    "<a>; rel=next, <b>; rel=prev".to_string()
                ),
            ])
        );
    }
}
