//! [`HttpClient`]: requests whose every connection, first URL and redirect hops alike, passes
//! the egress policy, the call's policy and the operator's credentials rules.
//!
//! For each hop, in order, before anything is sent:
//!
//! 1. the URL is checked by the egress policy ([`EgressPolicy::check`]): scheme, credentials in
//!    the URL, an IP address host;
//! 2. a hop to a host the call has not been authorized for is decided by the policy
//!    ([`ToolContext::decide_url`], the `host:` rules): followed only on `allow`;
//! 3. the request is built: the model's allowed headers, `Accept-Encoding` (toolgate
//!    decompresses itself, counting every byte), the call's idempotency key, and the
//!    operator's credential for the host when the hop is of the origin the call named (the
//!    same scheme, host and port);
//! 4. the connection: the name is resolved by the [`GuardedResolver`] only, every answer
//!    checked, and the connection goes to a checked answer (the `Host` header and TLS SNI keep
//!    the name); system proxy variables are ignored. When the call's policy has deny or ask
//!    rules over addresses ([`ToolContext::names_addresses`]), every answer is decided by them
//!    too ([`super::resolve::decide_addresses`]), and the connection is a new one made for
//!    this request (no pooled connection, which another call's policy let through);
//! 5. a redirect (301, 302, 303, 307, 308 with a `Location`) is followed by the client itself,
//!    at most `max_redirects` times: 303, and 301/302 after a POST, become a GET without a
//!    body (RFC 9110 §15.4); 307 and 308 keep the method and body.

use super::config::HttpConfig;
use super::resolve::{GuardedResolver, ResolveError};
use super::secrets::Secrets;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use toolgate_core::egress::{Blocked, EgressPolicy};
use toolgate_core::{Decision, ToolContext, ToolError};
use url::Url;

/// The `User-Agent` of every request.
pub const USER_AGENT: &str = concat!("toolgate/", env!("CARGO_PKG_VERSION"));

/// The encodings toolgate decodes ([`super::body`]).
const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// A failed request: the error for the model, and whether a request may have reached a server
/// (so a side effect may have happened).
#[derive(Debug)]
pub struct Failure {
    /// The error.
    pub error: ToolError,
    /// Whether a request may have been delivered.
    pub sent: bool,
}

impl Failure {
    fn before(error: ToolError) -> Failure {
        Failure { error, sent: false }
    }
    fn after(error: ToolError) -> Failure {
        Failure { error, sent: true }
    }
}

/// One request as a tool sends it.
#[derive(Debug)]
pub struct Request<'a> {
    /// The method.
    pub method: Method,
    /// The first URL, checked already by the tool's guard (it is checked again).
    pub url: Url,
    /// The model's headers, already within the tool's allowlist.
    pub headers: HeaderMap,
    /// The body, when there is one.
    pub body: Option<bytes::Bytes>,
    /// The call's idempotency key, sent as `Idempotency-Key`.
    pub idempotency_key: Option<&'a str>,
}

/// The final response of a request, its body not read yet ([`super::body::read`]).
#[derive(Debug)]
pub struct Fetched {
    /// The URL that answered.
    pub url: Url,
    /// The redirects followed, in order (each hop's URL).
    pub redirects: Vec<Url>,
    /// The response.
    pub response: reqwest::Response,
}

/// Whether a host's credential may go over plain `http://`, and its header and value, or the
/// variable that is unset.
type HostCredential = (bool, Result<(HeaderName, HeaderValue), String>);

/// The HTTP client of the HTTP tools; see the module docs. The underlying connection pool is
/// made at the first request (a pooled connection was made to a checked address).
pub struct HttpClient {
    config: HttpConfig,
    egress: EgressPolicy,
    client: OnceLock<Result<reqwest::Client, String>>,
    /// The same without a connection pool, for calls whose policy decides addresses.
    unpooled: OnceLock<Result<reqwest::Client, String>>,
    /// Credentials by host key.
    credentials: HashMap<String, HostCredential>,
    /// The credentials' values, replaced in what the model reads.
    secrets: Secrets,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client under `config`. Nothing is set up until the first request.
    pub fn new(config: HttpConfig) -> Self {
        let egress = EgressPolicy::new().allow_private(config.allow_private.iter().copied());
        let credentials = config
            .credentials
            .iter()
            .map(|(host, c)| {
                let header = HeaderName::from_bytes(c.header.as_bytes());
                let value = c.value.as_ref().map(|v| HeaderValue::from_str(&v.0));
                let entry = match (header, value) {
                    (Ok(h), Some(Ok(mut v))) => {
                        v.set_sensitive(true);
                        Ok((h, v))
                    }
                    _ => Err(c.value_env.clone()),
                };
                (host.clone(), (c.plain_http, entry))
            })
            .collect();
        let secrets = Secrets::new(
            config
                .credentials
                .iter()
                .filter_map(|(host, c)| c.value.as_ref().map(|v| (host.as_str(), v.0.as_str()))),
        );
        HttpClient {
            config,
            egress,
            client: OnceLock::new(),
            unpooled: OnceLock::new(),
            credentials,
            secrets,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// The egress policy of its connections.
    pub fn egress(&self) -> &EgressPolicy {
        &self.egress
    }

    /// The operator's credential values, to be replaced in whatever a server sent back before
    /// the model reads it.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The pooled client, or with `pooled` false the client that makes a new connection for
    /// every request.
    fn client(&self, pooled: bool) -> Result<&reqwest::Client, ToolError> {
        let cell = if pooled { &self.client } else { &self.unpooled };
        cell.get_or_init(|| build_client(&self.config, &self.egress, pooled))
            .as_ref()
            .map_err(|why| {
                ToolError::failed(format!(
                    "the HTTP client could not be set up ({why}); tell the user, since no \
                     request can be sent until the operator fixes it"
                ))
                .with_reason("client_unavailable")
            })
    }

    /// Sends `req`, following redirects as the module docs say, and returns the final
    /// response with its body unread.
    ///
    /// # Errors
    /// `unsafe_input` / `url_blocked` (`private_address`, `scheme_not_allowed`, ...,
    /// `redirect_to_blocked` for a hop, naming it); `tool_failed` with `connect_failed`,
    /// `dns_failed`, `too_many_redirects`, `bad_redirect`, `credential_missing`,
    /// `request_failed`; each with whether the request may have been delivered.
    pub async fn send(&self, req: Request<'_>, ctx: &ToolContext) -> Result<Fetched, Failure> {
        // a policy over addresses decides each connection's answers, so each request makes
        // its own connection, in this task, under this call's policy
        let decide_addresses = ctx.names_addresses();
        let client = self.client(!decide_addresses).map_err(Failure::before)?;
        let Request {
            mut method,
            url: first,
            mut headers,
            mut body,
            idempotency_key,
        } = req;
        headers.insert(
            reqwest::header::ACCEPT_ENCODING,
            HeaderValue::from_static(ACCEPT_ENCODING),
        );
        if let Some(key) = idempotency_key {
            let value = HeaderValue::from_str(key).map_err(|_| {
                Failure::before(ToolError::invalid_input(
                    "the call's idempotency key cannot be sent as an HTTP header; send a key of \
                     visible ASCII characters",
                ))
            })?;
            headers.insert(HeaderName::from_static("idempotency-key"), value);
        }
        let first_host = host_key(&first);
        let mut authorized = vec![first_host.clone()];
        let mut url = first.clone();
        let mut redirects: Vec<Url> = Vec::new();
        loop {
            let hop = redirects.len();
            let sent = hop > 0;
            let blocked = |b: &Blocked| -> Failure {
                let error = if hop == 0 {
                    b.to_tool_error()
                } else {
                    redirect_blocked(&redirects, hop, b.to_string(), b.details())
                };
                Failure { error, sent }
            };
            self.egress.check(&url).map_err(|b| blocked(&b))?;
            let host = host_key(&url);
            if !authorized.contains(&host) {
                let verdict = ctx.decide_url(url.as_str());
                match verdict.decision {
                    Decision::Allow => authorized.push(host.clone()),
                    d => {
                        let why = if d == Decision::Deny {
                            "which the operator's policy does not allow".to_string()
                        } else {
                            "which the operator's policy asks a person about, and a redirect \
                             is not put to a person; to go there, call the tool again with \
                             that URL itself so it can be approved"
                                .to_string()
                        };
                        let details = serde_json::json!({
                            "url_blocked": "policy",
                            "decision": d,
                            "rule": &*verdict.rule,
                        });
                        return Err(Failure::after(redirect_blocked(
                            &redirects, hop, why, details,
                        )));
                    }
                }
            }
            let mut hop_headers = headers.clone();
            self.add_credential(&first, &url, &mut hop_headers)
                .map_err(|e| Failure { error: e, sent })?;
            let mut builder = client
                .request(method.clone(), url.clone())
                .headers(hop_headers);
            if let Some(b) = &body {
                builder = builder.body(b.clone());
            }
            let sending = builder.send();
            let response = if decide_addresses {
                super::resolve::decide_addresses(ctx.clone(), sending).await
            } else {
                sending.await
            }
            .map_err(|e| self.send_error(&e, &url, &redirects, hop))?;
            let status = response.status();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned);
            let (Some(location), true) = (location, is_redirect(status)) else {
                return Ok(Fetched {
                    url,
                    redirects,
                    response,
                });
            };
            if self.config.max_redirects == 0 {
                return Ok(Fetched {
                    url,
                    redirects,
                    response,
                });
            }
            if redirects.len() as u32 >= self.config.max_redirects {
                let chain: Vec<&str> = std::iter::once(first.as_str())
                    .chain(redirects.iter().map(Url::as_str))
                    .collect();
                return Err(Failure::after(
                    ToolError::failed(format!(
                        "too_many_redirects: {} redirected more than {} times ({}); fetch the \
                         last URL yourself if it is the one you want",
                        first,
                        self.config.max_redirects,
                        chain.join(" -> ")
                    ))
                    .with_reason("too_many_redirects"),
                ));
            }
            let next = url.join(&location).map_err(|e| {
                Failure::after(
                    ToolError::failed(format!(
                        "bad_redirect: {url} answered {status} with a Location that is not a \
                         URL ({location:?}: {e}); the page cannot be followed"
                    ))
                    .with_reason("bad_redirect"),
                )
            })?;
            drop(response);
            // RFC 9110 §15.4: 303 (and 301/302 after POST, as every client does) turn into a
            // GET without a body; 307 and 308 keep both
            let to_get = status == StatusCode::SEE_OTHER && method != Method::HEAD
                || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST;
            if to_get {
                method = Method::GET;
                body = None;
                for h in [
                    reqwest::header::CONTENT_TYPE,
                    reqwest::header::CONTENT_LANGUAGE,
                ] {
                    headers.remove(h);
                }
            }
            redirects.push(next.clone());
            url = next;
        }
    }

    /// Adds the operator's credential for `url`'s host, when there is one and `url` is of the
    /// origin the call named (`first`): the same scheme, host and port.
    ///
    /// # Errors
    /// `credential_missing` when its variable is unset; `invalid_input` /
    /// `credential_needs_https` when the call names plain `http://` on the host and the
    /// credential may go only over `https://` (nothing is sent).
    fn add_credential(
        &self,
        first: &Url,
        url: &Url,
        headers: &mut HeaderMap,
    ) -> Result<(), ToolError> {
        let host = host_key(url);
        let Some((plain_http, entry)) = self.credentials.get(&host) else {
            return Ok(());
        };
        if url == first && url.scheme() == "http" && !plain_http {
            let mut https = url.clone();
            let _ = https.set_scheme("https");
            if url.port().is_some() {
                // another port may be another server: the operator's https one is the default
                let _ = https.set_port(None);
            }
            return Err(ToolError::invalid_input(format!(
                "credential_needs_https: the operator's credential for {host} goes only over \
                 https://, and this URL is plain http:// (anyone on the path could read it); \
                 nothing was sent: send {https} instead"
            ))
            .with_reason("credential_needs_https"));
        }
        // the origin, not the host alone: another port of the same host is another server
        // (curl's CVE-2022-27776 leaked credentials so), and another scheme is either a
        // downgrade to plain text or another port too
        let same_origin = host == host_key(first)
            && url.scheme() == first.scheme()
            && url.port_or_known_default() == first.port_or_known_default();
        if !same_origin {
            return Ok(());
        }
        match entry {
            Ok((name, value)) => {
                headers.insert(name.clone(), value.clone());
                Ok(())
            }
            Err(var) => Err(ToolError::failed(format!(
                "credential_missing: the operator configured a credential for {host}, but its \
                 environment variable {var} is not set, so no request was sent; tell the user"
            ))
            .with_reason("credential_missing")),
        }
    }

    /// The error of a request that failed before a response came.
    fn send_error(&self, e: &reqwest::Error, url: &Url, redirects: &[Url], hop: usize) -> Failure {
        if let Some(resolve) = find_source::<ResolveError>(e) {
            return match resolve {
                ResolveError::Blocked(b) if hop == 0 => Failure::before(b.to_tool_error()),
                ResolveError::Blocked(b) => {
                    Failure::after(redirect_blocked(redirects, hop, b.to_string(), b.details()))
                }
                ResolveError::Policy {
                    host,
                    address,
                    verdict,
                } => {
                    let why = if verdict.decision == Decision::Deny {
                        "which the operator's policy does not allow".to_string()
                    } else {
                        "which the operator's policy asks a person about; the addresses a name \
                         resolves to are decided when connecting, after the call was approved, \
                         so nobody can be asked: tell the user, who can ask the operator"
                            .to_string()
                    };
                    let details = serde_json::json!({
                        "url_blocked": "policy",
                        "decision": verdict.decision,
                        "rule": &*verdict.rule,
                        "host": host,
                        "address": address.to_string(),
                    });
                    if hop == 0 {
                        Failure::before(
                            ToolError::unsafe_input(
                                "url_blocked",
                                format!(
                                    "address_blocked: the host {host:?} resolves to {address}, \
                                     {why} (rule {}). Nothing was sent; fetch another URL",
                                    verdict.rule
                                ),
                            )
                            .with_details(details),
                        )
                    } else {
                        let why = format!("its host {host:?} resolves to {address}, {why}");
                        Failure::after(redirect_blocked(redirects, hop, why, details))
                    }
                }
                ResolveError::Failed { host, why } => Failure {
                    error: ToolError::failed(format!(
                        "dns_failed: the host {host:?} could not be resolved ({why}); check the \
                         host name, or try again later if it should exist"
                    ))
                    .with_reason("dns_failed"),
                    sent: hop > 0,
                },
            };
        }
        if e.is_builder() {
            // the URL is one the HTTP stack cannot send (an `http::Uri` holds at most 64 KiB):
            // nothing left for it
            let why = root_cause(e);
            return if hop == 0 {
                Failure::before(ToolError::invalid_input(format!(
                    "the URL cannot be requested ({why}); send a shorter, valid http(s) URL"
                )))
            } else {
                Failure::after(
                    ToolError::failed(format!(
                        "bad_redirect: redirect {hop} goes to a URL on {:?} that cannot be \
                         requested ({why}; it is {} bytes long); the page cannot be followed: \
                         fetch another URL",
                        url.host_str().unwrap_or_default(),
                        url.as_str().len()
                    ))
                    .with_reason("bad_redirect"),
                )
            };
        }
        let target = format!(
            "{}:{}",
            url.host_str().unwrap_or_default(),
            url.port_or_known_default().unwrap_or_default()
        );
        if e.is_connect() {
            return Failure {
                error: ToolError::failed(format!(
                    "connect_failed: could not connect to {target} ({}); the server may be \
                     down: try again later, or another URL",
                    root_cause(e)
                ))
                .with_reason("connect_failed")
                .transient(),
                sent: hop > 0,
            };
        }
        Failure::after(
            ToolError::failed(format!(
                "request_failed: the request to {target} failed ({}); it may or may not have \
                 reached the server",
                root_cause(e)
            ))
            .with_reason("request_failed")
            .transient(),
        )
    }
}

/// Whether `status` is a redirect the client follows.
fn is_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// `url`'s host as [`HttpConfig::host_key`] gives it.
pub(crate) fn host_key(url: &Url) -> String {
    match url.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => String::new(),
    }
}

/// `unsafe_input` / `url_blocked` for hop `hop` of `redirects` (1-based in the message), not
/// followed for `why`.
fn redirect_blocked(
    redirects: &[Url],
    hop: usize,
    why: String,
    mut details: serde_json::Value,
) -> ToolError {
    let target = &redirects[hop - 1];
    let from = hop.checked_sub(2).map(|i| redirects[i].as_str());
    let cause = details
        .get("url_blocked")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    details["url_blocked"] = "redirect_to_blocked".into();
    details["cause"] = cause;
    details["hop"] = hop.into();
    details["to"] = target.as_str().into();
    let from = match from {
        Some(f) => format!("{f} (itself a redirect)"),
        None => "the URL".to_string(),
    };
    ToolError::unsafe_input(
        "url_blocked",
        format!(
            "redirect_to_blocked: {from} redirected to {target} (redirect {hop}), which was \
             not followed: {why}. Nothing was fetched from it; fetch another URL"
        ),
    )
    .with_details(details)
}

/// The first error of type `T` in `e`'s chain of sources.
fn find_source<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(t) = err.downcast_ref::<T>() {
            return Some(t);
        }
        cur = err.source();
    }
    None
}

/// The innermost cause of `e`, for a message (`connection refused`).
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The reqwest client: no proxy (system proxy variables ignored), no redirects and no
/// decompression of its own, names resolved only by the guarded resolver, TLS by rustls on
/// aws-lc-rs with the platform's roots, HTTP/1.1.
fn build_client(
    config: &HttpConfig,
    egress: &EgressPolicy,
    pooled: bool,
) -> Result<reqwest::Client, String> {
    let hosts = config
        .hosts
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let resolver = GuardedResolver::new(
        egress.clone(),
        hosts,
        &config.nameservers,
        config.connect_timeout,
    )
    .map_err(|e| format!("the name servers: {e}"))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| format!("the TLS roots: {e}"))?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let builder = reqwest::Client::builder();
    // no idle connection kept: hyper-util then connects in the request's own task, where
    // `decide_addresses` is in scope, and never hands a request another call's connection
    let builder = if pooled {
        builder.pool_idle_timeout(std::time::Duration::from_secs(30))
    } else {
        builder.pool_max_idle_per_host(0)
    };
    builder
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .user_agent(USER_AGENT)
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true)
        .http1_only()
        .dns_resolver(resolver)
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| e.to_string())
}
