//! toolgate as an OAuth 2.1 resource server: the MCP specification's authorization section
//! (revisions 2025-11-25 and 2026-07-28) for the server side.
//!
//! Every request to `/mcp` carries `Authorization: Bearer TOKEN` (RFC 6750 §2.1; never the
//! query string), checked on every request, never inferred from a session id and never passed
//! on to anything:
//!
//! 1. **JWT** (default): the header's `alg` one of [`AuthConfig::algorithms`] (never `none`,
//!    never HMAC), the key the authorization server's by its `kid` ([`jwks`]), the signature,
//!    then `iss` = the issuer, `aud` one of [`AuthConfig::audiences`] (a token for another
//!    resource is never accepted), `exp` and `nbf` within [`AuthConfig::leeway`], a `sub`;
//!    a token accepted is remembered by its SHA-256 for up to a minute under the same keys
//!    (`verified.rs`), so the same token sent again costs a hash and an `exp` check, not a
//!    signature check (a key rotation or its expiry ends that at once);
//! 2. **introspection** ([`introspect`], RFC 7662) with an introspection endpoint: `active`,
//!    then the same `iss`, `aud`, `exp`/`nbf` and `sub` checks on its answer;
//! 3. the scopes (`scope` and `scp`, each a space-separated string or a list): every one of
//!    [`AuthConfig::required_scopes`].
//!
//! Answers (RFC 6750 §3, MCP "Error Handling" and "Scope Challenge Handling"): no token:
//! `401` with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; a second
//! `Authorization` header or an `access_token` in the query: `400` with
//! `error="invalid_request"` (which of two tokens counts is a question a proxy in front may
//! answer differently, and a token in a URL is in logs and histories); a token refused:
//! `401` with `error="invalid_token"` too; too few scopes: `403` with
//! `error="insufficient_scope"` and the scopes needed; the authorization server's keys or
//! introspection unreachable: `503` (fail closed). The Protected Resource Metadata (RFC 9728)
//! is served at `/.well-known/oauth-protected-resource` followed by the resource's path, and
//! at `/.well-known/oauth-protected-resource` itself ([`ResourceServer::metadata_paths`]).

mod fetch;
pub mod introspect;
pub mod jwks;
mod verified;

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use std::time::{SystemTime, UNIX_EPOCH};
use toolgate_core::Principal;

/// The default clock skew allowed on `exp` and `nbf`, in seconds.
pub const DEFAULT_LEEWAY_SECS: u64 = 30;

/// The default accepted algorithms.
pub const DEFAULT_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::RS256,
    Algorithm::ES256,
    Algorithm::PS256,
    Algorithm::EdDSA,
];

/// RFC 7662 client credentials and endpoint. Its `Debug` never shows the client secret
/// (`<redacted>`).
#[derive(Clone)]
#[non_exhaustive]
pub struct Introspection {
    /// The introspection endpoint.
    pub endpoint: String,
    /// toolgate's client id there.
    pub client_id: String,
    /// toolgate's client secret there.
    pub client_secret: String,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

impl Introspection {
    /// Introspection at `endpoint` as client `client_id` with `client_secret`.
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Introspection {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }
}

/// What the resource server accepts (`[server.auth]`).
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthConfig {
    /// The authorization server's issuer identifier: every token's `iss`.
    pub issuer: String,
    /// The canonical URI of the MCP endpoint (`None`: `http://ADDR/mcp` of the bound
    /// address, loopback only).
    pub resource: Option<String>,
    /// Accepted `aud` values (empty: the resource alone).
    pub audiences: Vec<String>,
    /// The JWKS URL (`None`: discovered from the issuer's metadata).
    pub jwks_uri: Option<String>,
    /// Introspect every token instead of verifying it as a JWT.
    pub introspection: Option<Introspection>,
    /// Scopes listed in the metadata (empty: `required_scopes`).
    pub scopes_supported: Vec<String>,
    /// Scopes every token must carry.
    pub required_scopes: Vec<String>,
    /// Claims kept from the token (the session's attributes).
    pub claims: Vec<String>,
    /// Accepted signature algorithms.
    pub algorithms: Vec<Algorithm>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    pub leeway: u64,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("audiences", &self.audiences)
            .field("jwks_uri", &self.jwks_uri)
            .field(
                "introspection",
                &self.introspection.as_ref().map(|i| &i.endpoint),
            )
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

impl AuthConfig {
    /// Tokens of `issuer`, verified as JWTs against its discovered keys, with the defaults.
    pub fn new(issuer: impl Into<String>) -> Self {
        AuthConfig {
            issuer: issuer.into(),
            resource: None,
            audiences: Vec::new(),
            jwks_uri: None,
            introspection: None,
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            claims: Vec::new(),
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: DEFAULT_LEEWAY_SECS,
        }
    }
}

/// A verified caller: its principal, the claims kept (in the order of
/// [`AuthConfig::claims`]) and its scopes.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Issuer and subject.
    pub principal: Principal,
    /// The claims [`AuthConfig::claims`] names that the token carried.
    pub claims: Map<String, Value>,
    /// The token's scopes.
    pub scopes: Vec<String>,
}

/// Why a request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token: `401`.
    Missing,
    /// The token sent in a way this server does not take (RFC 6750 §3.1 `invalid_request`):
    /// two `Authorization` headers, or an `access_token` in the query: `400`, the message
    /// saying what to send instead.
    Malformed(&'static str),
    /// A token refused (expired, wrong issuer or audience, bad signature, unknown key...):
    /// `401 invalid_token`, the reason logged, not sent.
    Invalid(String),
    /// A token without every required scope: `403 insufficient_scope`.
    InsufficientScope,
    /// The authorization server could not be asked (keys, introspection): `503`.
    Unavailable(String),
}

/// The verifier and the metadata of one server.
pub struct ResourceServer {
    config: AuthConfig,
    resource: String,
    metadata_url: String,
    keys: std::sync::Arc<jwks::KeySet>,
    verified: verified::Verified,
    client: reqwest::Client,
    /// Turns for introspection requests ([`introspect::MAX_IN_FLIGHT`]).
    introspections: tokio::sync::Semaphore,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("config", &self.config)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// The resource server for `config`, whose resource is `resource` (the configured one,
    /// or the bound address's `/mcp`).
    ///
    /// # Errors
    /// A resource that is not an absolute URL.
    pub fn new(mut config: AuthConfig, resource: String) -> Result<Self, String> {
        let url = url::Url::parse(&resource)
            .map_err(|e| format!("the resource {resource:?} is not a URL: {e}"))?;
        let path = url.path().trim_end_matches('/');
        let metadata_url = format!(
            "{}/.well-known/oauth-protected-resource{path}",
            url.origin().ascii_serialization()
        );
        if config.audiences.is_empty() {
            config.audiences = vec![resource.clone()];
        }
        if config.scopes_supported.is_empty() {
            config.scopes_supported = config.required_scopes.clone();
        }
        let client = fetch::client();
        Ok(ResourceServer {
            keys: std::sync::Arc::new(jwks::KeySet::new(
                &config.issuer,
                config.jwks_uri.as_deref(),
                client.clone(),
            )),
            config,
            resource,
            metadata_url,
            verified: verified::Verified::default(),
            client,
            introspections: tokio::sync::Semaphore::new(introspect::MAX_IN_FLIGHT),
        })
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The paths the Protected Resource Metadata is served at: the resource's path under
    /// `/.well-known/oauth-protected-resource`, and that prefix alone (RFC 9728 §3.1).
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![url::Url::parse(&self.metadata_url)
            .map(|u| u.path().to_string())
            .unwrap_or_default()];
        let root = "/.well-known/oauth-protected-resource".to_string();
        if !paths.contains(&root) {
            paths.push(root);
        }
        paths
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let mut doc = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "toolgate",
        });
        if !self.config.scopes_supported.is_empty() {
            doc["scopes_supported"] = serde_json::json!(self.config.scopes_supported);
        }
        if self.config.introspection.is_none() {
            doc["resource_signing_alg_values_supported"] = Value::Array(
                self.config
                    .algorithms
                    .iter()
                    .map(|a| Value::String(format!("{a:?}")))
                    .collect(),
            );
        }
        doc
    }

    /// The `WWW-Authenticate` value for `refusal` (RFC 6750 §3, RFC 9728 §5.1).
    pub fn challenge(&self, refusal: &Refusal) -> String {
        let mut v = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        let scope = self.config.required_scopes.join(" ");
        match refusal {
            Refusal::Missing | Refusal::Unavailable(_) => {}
            Refusal::Invalid(_) => v.push_str(
                ", error=\"invalid_token\", error_description=\"the access token is not valid \
                 for this resource\"",
            ),
            Refusal::InsufficientScope => v.push_str(
                ", error=\"insufficient_scope\", error_description=\"the access token lacks a \
                 scope this resource needs\"",
            ),
            Refusal::Malformed(_) => v.push_str(
                ", error=\"invalid_request\", error_description=\"send the access token in one \
                 Authorization header only\"",
            ),
        }
        if !scope.is_empty() {
            v.push_str(&format!(", scope=\"{scope}\""));
        }
        v
    }

    /// Verifies `token` (see the module documentation).
    ///
    /// # Errors
    /// The [`Refusal`].
    pub async fn verify(&self, token: &str) -> Result<Identity, Refusal> {
        let claims = match &self.config.introspection {
            Some(i) => {
                let claims =
                    introspect::introspect(&self.client, i, &self.introspections, token).await?;
                introspect::validate(
                    &claims,
                    &self.config.issuer,
                    &self.config.audiences,
                    self.config.leeway,
                    now_secs(),
                )?;
                claims
            }
            None => return self.verify_jwt_identity(token).await,
        };
        self.accept(claims)
    }

    /// The identity of a JWT: from [`verified`] when this very token was verified under the
    /// keys held now, is not expired and was verified less than [`verified::TTL`] ago;
    /// otherwise verified in full and, when accepted, kept.
    async fn verify_jwt_identity(&self, token: &str) -> Result<Identity, Refusal> {
        let digest = verified::digest(token);
        let generation = self.keys.generation();
        if let Some(identity) = self.verified.get(&digest, generation, now_secs()) {
            return Ok(identity);
        }
        let claims = self.verify_jwt(token).await?;
        let expires = match claims.get("exp") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().map(|f| f as u64))
                .map(|e| e.saturating_add(self.config.leeway)),
            _ => None,
        };
        let identity = self.accept(claims)?;
        // the generation read before the keys were used: a refresh in between ends the entry
        if let Some(expires) = expires {
            self.verified
                .put(digest, identity.clone(), expires, generation);
        }
        Ok(identity)
    }

    /// The JWT's claims, its signature checked and `iss`, `aud`, `exp` and `nbf` validated.
    async fn verify_jwt(&self, token: &str) -> Result<Map<String, Value>, Refusal> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Refusal::Invalid(format!("not a JWT with a known algorithm: {e}")))?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(Refusal::Invalid(format!(
                "the algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = self
            .keys
            .key(header.kid.as_deref())
            .await
            .map_err(|e| match e {
                jwks::KeyError::Unknown(m) => Refusal::Invalid(m),
                jwks::KeyError::Unavailable(m) => Refusal::Unavailable(m),
            })?;
        if key.alg.is_some_and(|a| a != header.alg) {
            return Err(Refusal::Invalid(format!(
                "the key is for {:?}, the token says {:?}",
                key.alg, header.alg
            )));
        }
        let mut v = Validation::new(header.alg);
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&self.config.audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = self.config.leeway;
        v.validate_nbf = true;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &v)
            .map_err(|e| Refusal::Invalid(format!("the token was refused: {e}")))?;
        // jsonwebtoken takes a list of issuers too; RFC 7519 §4.1.1 says one string
        if !data.claims.get("iss").is_some_and(Value::is_string) {
            return Err(Refusal::Invalid("the token's iss is not one string".into()));
        }
        Ok(data.claims)
    }

    /// The identity of verified `claims`: a `sub`, then the scopes. A subject is 1 to 1024
    /// bytes without control, invisible, blank or bidirectional characters
    /// ([`hidden_in_subject`]): it names the principal in the audit, the logs and an
    /// approver's question, where `\u{202e}` could reorder what a person reads and
    /// `alice\u{3164}` pass for `alice`.
    fn accept(&self, mut claims: Map<String, Value>) -> Result<Identity, Refusal> {
        let subject = match claims.get("sub") {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= 1024 => {
                if s.chars().any(hidden_in_subject) {
                    return Err(Refusal::Invalid(
                        "the token's subject (sub) holds control, invisible, blank or \
                         bidirectional characters"
                            .into(),
                    ));
                }
                s.clone()
            }
            _ => return Err(Refusal::Invalid("the token has no subject (sub)".into())),
        };
        let mut scopes: Vec<String> = Vec::new();
        for claim in ["scope", "scp"] {
            for scope in scope_list(claims.get(claim)) {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_string());
                }
            }
        }
        if !self
            .config
            .required_scopes
            .iter()
            .all(|s| scopes.contains(s))
        {
            return Err(Refusal::InsufficientScope);
        }
        let mut kept = Map::new();
        for c in &self.config.claims {
            if let Some(v) = claims.remove(c) {
                kept.insert(c.clone(), v);
            }
        }
        Ok(Identity {
            principal: Principal::new(self.config.issuer.as_str(), subject),
            claims: kept,
            scopes,
        })
    }
}

/// The scopes of a `scope` or `scp` claim: a space-separated string (RFC 9068 §2.2.3, and
/// Entra ID's `scp`) or a list of strings (Okta's `scp`); nothing else is a scope.
fn scope_list(claim: Option<&Value>) -> Vec<&str> {
    match claim {
        Some(Value::String(s)) => s.split_whitespace().collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .flat_map(str::split_whitespace)
            .collect(),
        _ => Vec::new(),
    }
}

/// Seconds since the Unix epoch now.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Whether `c` may not be in a token's subject: a control, white space other than the ASCII
/// space (a no-break space, an ideographic one), a
/// character that shows as nothing or reorders text (`toolgate_core::sanitize::is_hidden`:
/// the table the gateway's screen uses), a zero-width joiner or a variation selector.
fn hidden_in_subject(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || toolgate_core::sanitize::is_hidden(c)
        || matches!(
            c,
            '\u{200c}' | '\u{200d}' | '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ResourceServer {
        let mut c = AuthConfig::new("https://as.example.com");
        c.required_scopes = vec!["mcp:tools".into()];
        c.claims = vec!["groups".into()];
        ResourceServer::new(c, "https://mcp.example.com/mcp".into()).unwrap()
    }

    #[test]
    fn the_settings_debug_never_shows_a_secret() {
        let mut c = AuthConfig::new("https://as.example.com");
        c.introspection = Some(Introspection::new(
            "https://as.example.com/introspect",
            "toolgate",
            "s3cret-client-value",
        ));
        let mut http = crate::http::HttpConfig::new(([127, 0, 0, 1], 0).into());
        http.token = Some("t0ken-value-xyz".into());
        http.auth = Some(c);
        let shown = format!("{http:?} {http:#?}");
        assert!(shown.contains("<redacted>"), "{shown}");
        let alone = format!("{:?}", http.auth.as_ref().unwrap().introspection);
        assert!(
            alone.contains("toolgate") && alone.contains("<redacted>") && !alone.contains("s3cret"),
            "{alone}"
        );
        assert!(
            !shown.contains("s3cret") && !shown.contains("t0ken"),
            "{shown}"
        );
    }

    #[test]
    fn metadata_and_challenges_follow_rfc_9728_and_6750() {
        let s = server();
        assert_eq!(
            s.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        let m = s.metadata();
        assert_eq!(m["resource"], "https://mcp.example.com/mcp");
        assert_eq!(m["authorization_servers"][0], "https://as.example.com");
        assert_eq!(m["scopes_supported"][0], "mcp:tools");
        assert_eq!(
            s.challenge(&Refusal::Missing),
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        );
        assert!(s
            .challenge(&Refusal::InsufficientScope)
            .contains("error=\"insufficient_scope\""));
        assert!(s
            .challenge(&Refusal::Invalid("x".into()))
            .contains("error=\"invalid_token\""));
    }

    #[test]
    fn a_subject_and_the_scopes_are_required_and_only_chosen_claims_are_kept() {
        let s = server();
        let claims = |v: Value| v.as_object().unwrap().clone();
        let ok = s
            .accept(claims(serde_json::json!({
                "sub": "alice", "scope": "mcp:tools other", "groups": ["a"], "email": "x"
            })))
            .unwrap();
        assert_eq!(
            ok.principal,
            Principal::new("https://as.example.com", "alice")
        );
        assert_eq!(
            Value::Object(ok.claims),
            serde_json::json!({"groups": ["a"]})
        );
        assert_eq!(
            s.accept(claims(
                serde_json::json!({"sub": "alice", "scp": ["other"]})
            )),
            Err(Refusal::InsufficientScope)
        );
        assert!(matches!(
            s.accept(claims(serde_json::json!({"scope": "mcp:tools"}))),
            Err(Refusal::Invalid(_))
        ));
        assert!(matches!(
            s.accept(claims(serde_json::json!({"sub": "", "scope": "mcp:tools"}))),
            Err(Refusal::Invalid(_))
        ));
        // a subject that would reorder or hide text where it is shown (an approver's
        // question, the audit, a terminal's log) is refused
        for sub in [
            "alice\u{202e}nimda",
            "bob\n2026 INFO admin",
            "eve\u{1b}[2J",
            "x\u{200b}y",
            // blanks and joiners that show as nothing: `alice` to a reader
            "alice\u{3164}",
            "alice\u{34f}",
            "alice\u{200d}",
            "alice\u{200c}",
            "alice\u{fe0f}",
            "alice\u{a0}",
            "alice\u{2800}",
        ] {
            assert!(
                matches!(
                    s.accept(claims(
                        serde_json::json!({"sub": sub, "scope": "mcp:tools"})
                    )),
                    Err(Refusal::Invalid(_))
                ),
                "{sub:?}"
            );
        }
        // other scripts are subjects like any
        assert!(s
            .accept(claims(
                serde_json::json!({"sub": "유저-7 ünïcødé", "scope": "mcp:tools"})
            ))
            .is_ok());
    }
}
