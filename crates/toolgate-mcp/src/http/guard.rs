//! The HTTP guard in front of `/mcp`, in this order:
//!
//! 0. one request, one authority: a second `Host` or `Origin` header, or an absolute-form
//!    request target (or HTTP/2 `:authority`) that names another host than `Host`, is `400`
//!    (RFC 9112 §3.2: the target's authority wins over `Host`, so two that differ are two
//!    answers to "which server?", and a guard must not check one while the other is served)
//! 1. the credential, sent once, in the header: a second `Authorization` header or an
//!    `access_token` in the query is `400` with `WWW-Authenticate: Bearer
//!    error="invalid_request"` (RFC 6750 §3.1: a proxy in front may check one of two tokens
//!    while this guard checks the other, and a token in a URL is in logs and histories); then
//!    with an authorization server (`[server.auth]`), an access token checked by the resource
//!    server ([`super::auth`]: `401`, `403 insufficient_scope` or `503`, with
//!    `WWW-Authenticate` naming the Protected Resource Metadata); else the bearer token, when
//!    one is configured: `Authorization: Bearer TOKEN`, compared in constant time (`401` with
//!    `WWW-Authenticate: Bearer`). The Protected Resource Metadata itself (`GET` at its
//!    well-known paths) needs no credential.
//! 2. `Host` (or the HTTP/2 authority): one of the allowed authorities, against DNS rebinding
//!    (`403`)
//! 3. `Origin`, when present: one of the allowed origins (`403`); requests without `Origin`
//!    (every non-browser client) pass
//!
//! The token comes first so that a request without a credential learns nothing else
//! (security case transport-auth-65: a foreign Origin without a token gets `401`). A request
//! that passes carries its [`Caller`] in its extensions.

use super::auth::{Refusal, ResourceServer};
use super::caller::Caller;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderMap, StatusCode};
use std::net::SocketAddr;
use std::sync::Arc;

/// What the guard lets through.
#[derive(Debug, Clone)]
pub struct Guard {
    token: Option<String>,
    /// The resource server, when access tokens are checked instead of `token`.
    auth: Option<Arc<ResourceServer>>,
    /// The paths of the Protected Resource Metadata (no credential needed).
    metadata_paths: Vec<String>,
    /// Lower-case `host` or `host:port` authorities; empty means any host.
    hosts: Vec<String>,
    /// Lower-case `scheme://host:port` origins.
    origins: Vec<String>,
}

impl Guard {
    /// The guard of a server bound to `addr`: the loopback names with the bound port (and the
    /// bound address itself) plus `extra_hosts`; origins `http://` of the same, plus
    /// `extra_origins`. A wildcard address with no extra host accepts any `Host` (a token is
    /// required there).
    pub fn new(
        addr: SocketAddr,
        token: Option<String>,
        extra_hosts: &[String],
        extra_origins: &[String],
    ) -> Guard {
        let port = addr.port();
        let mut names: Vec<String> = Vec::new();
        if addr.ip().is_loopback() {
            names.extend(["localhost".into(), "127.0.0.1".into(), "[::1]".into()]);
        }
        if !addr.ip().is_unspecified() {
            names.push(match addr {
                SocketAddr::V4(a) => a.ip().to_string(),
                SocketAddr::V6(a) => format!("[{}]", a.ip()),
            });
        }
        names.sort();
        names.dedup();
        let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        if port == 80 {
            hosts.extend(names.iter().cloned());
        }
        let mut origins: Vec<String> = hosts.iter().map(|h| format!("http://{h}")).collect();
        let wildcard_any = addr.ip().is_unspecified() && extra_hosts.is_empty();
        hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
        if wildcard_any {
            hosts.clear();
        }
        origins.extend(
            extra_origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase()),
        );
        Guard {
            token,
            auth: None,
            metadata_paths: Vec::new(),
            hosts,
            origins,
        }
    }

    /// Checks access tokens with `auth` instead of a static token.
    pub fn with_auth(mut self, auth: Arc<ResourceServer>) -> Guard {
        self.metadata_paths = auth.metadata_paths();
        self.auth = Some(auth);
        self.token = None;
        self
    }

    /// Who sent a request with these headers and request-target `authority`, or why it is
    /// refused.
    ///
    /// # Errors
    /// `400`, `401` or `403`, as the module documentation orders them.
    pub fn check(
        &self,
        headers: &HeaderMap,
        authority: Option<&str>,
    ) -> Result<Caller, StatusCode> {
        let host = self.check_head(headers, authority)?;
        let caller = match &self.token {
            Some(token) => {
                let presented = presented(headers);
                match presented {
                    Some(p) if constant_time_eq(p.as_bytes(), token.as_bytes()) => Caller::Token,
                    _ => return Err(StatusCode::UNAUTHORIZED),
                }
            }
            None => Caller::Anonymous,
        };
        self.check_authority(headers, host)?;
        Ok(caller)
    }

    /// Step 0: one `Host`, at most one `Origin`, a target naming no other host; the host.
    fn check_head<'h>(
        &self,
        headers: &'h HeaderMap,
        authority: Option<&'h str>,
    ) -> Result<Option<&'h str>, StatusCode> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() || headers.get_all(header::ORIGIN).iter().nth(1).is_some() {
            return Err(StatusCode::BAD_REQUEST);
        }
        Ok(match (host, authority) {
            (Some(h), Some(a)) => match h.to_str() {
                Ok(h) if h.eq_ignore_ascii_case(a) => Some(a),
                _ => return Err(StatusCode::BAD_REQUEST),
            },
            (Some(h), None) => Some(h.to_str().map_err(|_| StatusCode::BAD_REQUEST)?),
            (None, a) => a,
        })
    }

    /// Steps 2 and 3: `Host` and `Origin` allowed.
    fn check_authority(&self, headers: &HeaderMap, host: Option<&str>) -> Result<(), StatusCode> {
        if !self.hosts.is_empty() {
            match host.map(str::to_ascii_lowercase) {
                Some(h) if self.hosts.contains(&h) => {}
                _ => return Err(StatusCode::FORBIDDEN),
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin
                .to_str()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .map_err(|_| StatusCode::FORBIDDEN)?;
            if !self.origins.contains(&origin) {
                return Err(StatusCode::FORBIDDEN);
            }
        }
        Ok(())
    }

    /// [`Guard::check`] with the resource server checking the access token; a request for the
    /// Protected Resource Metadata (`metadata`) needs none.
    async fn check_oauth(
        &self,
        auth: &ResourceServer,
        headers: &HeaderMap,
        target: &http::Uri,
        metadata: bool,
    ) -> Result<Caller, Response> {
        let authority = target.authority().map(|a| a.as_str());
        let host = self.check_head(headers, authority).map_err(refuse)?;
        let caller = if metadata {
            Caller::Anonymous
        } else {
            if let Err(why) = credential_sent_once(headers, target.query()) {
                return Err(refuse_token(auth, &Refusal::Malformed(why)));
            }
            let identity = match presented(headers) {
                None => Err(Refusal::Missing),
                Some(token) => auth.verify(token).await,
            };
            match identity {
                Ok(id) => Caller::Principal(Arc::new(id)),
                Err(refusal) => return Err(refuse_token(auth, &refusal)),
            }
        };
        self.check_authority(headers, host).map_err(refuse)?;
        Ok(caller)
    }
}

/// Step 1's first check: at most one `Authorization` header, and no `access_token` among the
/// parameters of the `query`; what to send instead otherwise.
fn credential_sent_once(headers: &HeaderMap, query: Option<&str>) -> Result<(), &'static str> {
    if headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .nth(1)
        .is_some()
    {
        return Err("bad request: send one Authorization header (Bearer TOKEN), not two\n");
    }
    let in_query = query.is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes()).any(|(name, _)| name == "access_token")
    });
    if in_query {
        return Err(
            "bad request: send the token as Authorization: Bearer TOKEN, not in the query \
             (access_token=): a URL is kept in logs and histories\n",
        );
    }
    Ok(())
}

/// The bearer token of `Authorization`, if it has exactly one (two headers are no token:
/// which one counts is not for the guard to guess).
fn presented(headers: &HeaderMap) -> Option<&str> {
    let mut all = headers.get_all(header::AUTHORIZATION).iter();
    let value = all.next()?;
    if all.next().is_some() {
        return None;
    }
    value.to_str().ok().and_then(bearer)
}

fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The axum middleware.
pub(crate) async fn middleware(
    State(guard): State<Arc<Guard>>,
    mut req: Request,
    next: Next,
) -> Response {
    let caller = match &guard.auth {
        Some(auth) => {
            let metadata = req.method() == http::Method::GET
                && guard.metadata_paths.iter().any(|p| p == req.uri().path());
            match guard
                .check_oauth(auth, req.headers(), req.uri(), metadata)
                .await
            {
                Ok(caller) => caller,
                Err(response) => return response,
            }
        }
        None => {
            let authority = req.uri().authority().map(|a| a.as_str());
            if guard.token.is_some() {
                if let Err(why) = credential_sent_once(req.headers(), req.uri().query()) {
                    // Host first, as check orders it: a malformed head is told so
                    if let Err(status) = guard.check_head(req.headers(), authority) {
                        return refuse(status);
                    }
                    return refuse_malformed_token(why);
                }
            }
            match guard.check(req.headers(), authority) {
                Ok(caller) => caller,
                Err(status) => return refuse(status),
            }
        }
    };
    req.extensions_mut().insert(caller.clone());
    let delete = req.method() == http::Method::DELETE;
    let mut response = super::caller::REQUEST_CALLER
        .scope(caller, next.run(req))
        .await;
    // rmcp answers a session DELETE with 202; clients expect 200 or 204 for a terminated
    // session (the Python SDK logs 202 as a failure).
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// The answer to a request whose access token was refused (see [`super::auth`]).
fn refuse_token(auth: &ResourceServer, refusal: &Refusal) -> Response {
    let (status, text) = match refusal {
        Refusal::Missing => (
            StatusCode::UNAUTHORIZED,
            "unauthorized: send an access token of this server's authorization server as \
             Authorization: Bearer TOKEN (see the resource_metadata of WWW-Authenticate)\n"
                .to_string(),
        ),
        Refusal::Invalid(why) => {
            tracing::info!(reason = %why, "refused an access token");
            (
                StatusCode::UNAUTHORIZED,
                "unauthorized: the access token is not valid for this resource; get a new one \
                 from the authorization server\n"
                    .to_string(),
            )
        }
        Refusal::Malformed(why) => (StatusCode::BAD_REQUEST, why.to_string()),
        Refusal::InsufficientScope => (
            StatusCode::FORBIDDEN,
            "forbidden: the access token lacks a scope this resource needs (see the scope of \
             WWW-Authenticate)\n"
                .to_string(),
        ),
        Refusal::Unavailable(why) => {
            tracing::error!(reason = %why, "cannot check access tokens: refusing the request");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable: the authorization server cannot be reached to check the access \
                 token; try again later\n"
                    .to_string(),
            )
        }
    };
    let mut builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(
            header::WWW_AUTHENTICATE,
            // the scopes a library user configured may hold what a header cannot: the
            // challenge then says only "Bearer"
            http::HeaderValue::from_str(&auth.challenge(refusal))
                .unwrap_or_else(|_| http::HeaderValue::from_static("Bearer")),
        );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        builder = builder.header(header::RETRY_AFTER, "10");
    }
    builder.body(Body::from(text)).expect("a valid response")
}

/// The answer to a static token sent twice or in the query.
fn refuse_malformed_token(why: &'static str) -> Response {
    Response::builder()
        .status(StatusCode::BAD_REQUEST)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::WWW_AUTHENTICATE, "Bearer error=\"invalid_request\"")
        .body(Body::from(why))
        .expect("a valid response")
}

fn refuse(status: StatusCode) -> Response {
    let (text, bearer) = match status {
        StatusCode::UNAUTHORIZED => (
            "unauthorized: send the server's token as Authorization: Bearer TOKEN\n",
            true,
        ),
        StatusCode::BAD_REQUEST => (
            "bad request: send one Host header, at most one Origin header, and a request \
             target naming no other host than Host\n",
            false,
        ),
        _ => (
            "forbidden: Host or Origin is not one this server answers\n",
            false,
        ),
    };
    let mut builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8");
    if bearer {
        builder = builder.header(header::WWW_AUTHENTICATE, "Bearer");
    }
    builder.body(Body::from(text)).expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn loopback_guard_checks_token_then_host_then_origin() {
        let g = Guard::new(
            "127.0.0.1:8123".parse().unwrap(),
            Some("s3cret".into()),
            &[],
            &[],
        );
        let ok = [
            ("host", "127.0.0.1:8123"),
            ("authorization", "Bearer s3cret"),
        ];
        assert_eq!(g.check(&headers(&ok), None), Ok(Caller::Token));
        assert_eq!(
            g.check(
                &headers(&[
                    ("host", "localhost:8123"),
                    ("origin", "http://evil.example")
                ]),
                None
            ),
            Err(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            g.check(
                &headers(&[("host", "127.0.0.1:8123"), ("authorization", "Bearer nope")]),
                None
            ),
            Err(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            g.check(
                &headers(&[
                    ("host", "evil.example:8123"),
                    ("authorization", "Bearer s3cret")
                ]),
                None
            ),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            g.check(
                &headers(&[
                    ("host", "localhost:9999"),
                    ("authorization", "Bearer s3cret")
                ]),
                None
            ),
            Err(StatusCode::FORBIDDEN)
        );
        let mut foreign = headers(&ok);
        foreign.insert("origin", "http://evil.example".parse().unwrap());
        assert_eq!(g.check(&foreign, None), Err(StatusCode::FORBIDDEN));
        let mut local = headers(&ok);
        local.insert("origin", "http://localhost:8123".parse().unwrap());
        assert_eq!(g.check(&local, None), Ok(Caller::Token));
    }

    #[test]
    fn a_second_host_or_origin_or_a_target_naming_another_host_is_400() {
        let g = Guard::new(
            "127.0.0.1:8123".parse().unwrap(),
            Some("s3cret".into()),
            &[],
            &[],
        );
        let ok = [
            ("host", "127.0.0.1:8123"),
            ("authorization", "Bearer s3cret"),
        ];
        let mut two_hosts = headers(&ok);
        two_hosts.append("host", "evil.example".parse().unwrap());
        assert_eq!(g.check(&two_hosts, None), Err(StatusCode::BAD_REQUEST));
        // before the token: malformed is malformed
        let mut two_hosts = headers(&[("host", "127.0.0.1:8123")]);
        two_hosts.append("host", "127.0.0.1:8123".parse().unwrap());
        assert_eq!(g.check(&two_hosts, None), Err(StatusCode::BAD_REQUEST));
        let mut two_origins = headers(&ok);
        two_origins.append("origin", "http://127.0.0.1:8123".parse().unwrap());
        two_origins.append("origin", "http://evil.example".parse().unwrap());
        assert_eq!(g.check(&two_origins, None), Err(StatusCode::BAD_REQUEST));
        // an absolute-form target naming another host than Host
        assert_eq!(
            g.check(&headers(&ok), Some("evil.example:8123")),
            Err(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            g.check(&headers(&ok), Some("127.0.0.1:8123")),
            Ok(Caller::Token)
        );
        // HTTP/2: the authority alone is checked like Host
        let no_host = headers(&[("authorization", "Bearer s3cret")]);
        assert_eq!(g.check(&no_host, Some("127.0.0.1:8123")), Ok(Caller::Token));
        assert_eq!(
            g.check(&no_host, Some("evil.example:8123")),
            Err(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn a_token_sent_twice_or_in_the_query_is_no_token() {
        let g = Guard::new(
            "127.0.0.1:8123".parse().unwrap(),
            Some("s3cret".into()),
            &[],
            &[],
        );
        for second in ["Bearer nope", "Bearer s3cret"] {
            let mut twice = headers(&[
                ("host", "127.0.0.1:8123"),
                ("authorization", "Bearer s3cret"),
            ]);
            twice.append("authorization", second.parse().unwrap());
            assert_eq!(g.check(&twice, None), Err(StatusCode::UNAUTHORIZED));
            assert!(credential_sent_once(&twice, None).is_err());
        }
        let once = headers(&[("authorization", "Bearer s3cret")]);
        assert_eq!(credential_sent_once(&once, Some("a=1&b")), Ok(()));
        assert_eq!(
            credential_sent_once(&once, Some("access_token_x=1")),
            Ok(())
        );
        for query in [
            "access_token=s3cret",
            "a=1&access_token=",
            "access%5Ftoken=x",
        ] {
            assert!(credential_sent_once(&once, Some(query)).is_err(), "{query}");
        }
    }

    #[test]
    fn wildcard_bind_accepts_any_host_but_not_any_origin() {
        let g = Guard::new("0.0.0.0:80".parse().unwrap(), None, &[], &[]);
        assert_eq!(
            g.check(&headers(&[("host", "box.lan")]), None),
            Ok(Caller::Anonymous)
        );
        assert_eq!(
            g.check(
                &headers(&[("host", "box.lan"), ("origin", "http://evil.example")]),
                None
            ),
            Err(StatusCode::FORBIDDEN)
        );
        let g = Guard::new(
            "0.0.0.0:80".parse().unwrap(),
            None,
            &["box.lan".into()],
            &[],
        );
        assert_eq!(
            g.check(&headers(&[("host", "box.lan")]), None),
            Ok(Caller::Anonymous)
        );
        assert_eq!(
            g.check(&headers(&[("host", "other.lan")]), None),
            Err(StatusCode::FORBIDDEN)
        );
    }
}
