//! The authorization server's signing keys: found through its metadata (RFC 8414 §3, then
//! OpenID Connect Discovery) when no `jwks_uri` is configured, fetched once and kept.
//!
//! A token whose key id (`kid`) is not among the kept keys makes one refresh (a key rotation),
//! at most one every [`MIN_REFRESH`] (5 s) (a flood of made-up key ids cannot turn into a flood of
//! requests to the authorization server); a key id still unknown after it is refused. The keys
//! are refreshed too when older than [`MAX_AGE`], behind the request that finds them old (it is
//! verified with the keys held, so a slow authorization server delays no request), and at most
//! once every [`MIN_REFRESH`] as well: a failed refresh keeps the keys held and is logged, and
//! the next is tried no sooner (old keys whose refresh fails would otherwise make every request
//! a request to the authorization server, each waiting out its timeout in turn). With no keys
//! at all (the JWKS endpoint down from the start), every token is refused: fail closed.

use super::fetch;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The least time between two refreshes for unknown key ids.
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
/// The age after which the keys are fetched again.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// One usable key: its decoding key and the algorithm its JWK pins, if any.
pub(crate) struct Key {
    pub(crate) key: DecodingKey,
    pub(crate) alg: Option<Algorithm>,
}

#[derive(Default)]
struct Held {
    /// Keys by key id (`""` for a key without one).
    keys: HashMap<String, Arc<Key>>,
    fetched: Option<Instant>,
    /// The last refresh tried (fetched or not).
    tried: Option<Instant>,
}

/// The keys of one authorization server.
pub(crate) struct KeySet {
    issuer: String,
    /// The configured `jwks_uri`, or the one discovered.
    jwks_uri: tokio::sync::OnceCell<String>,
    configured: Option<String>,
    held: RwLock<Held>,
    /// One refresh at a time.
    refreshing: tokio::sync::Mutex<()>,
    /// Bumped each time the keys held are replaced.
    generation: std::sync::atomic::AtomicU64,
    /// The age after which the keys are fetched again ([`MAX_AGE`]).
    max_age: Duration,
    /// The least time between two refreshes ([`MIN_REFRESH`]).
    min_refresh: Duration,
    client: reqwest::Client,
}

/// Why no key was found for a token.
#[derive(Debug)]
pub(crate) enum KeyError {
    /// The key id is not the authorization server's (after a refresh, or within
    /// [`MIN_REFRESH`] of the last one).
    Unknown(String),
    /// No key could be fetched at all.
    Unavailable(String),
}

impl KeySet {
    pub(crate) fn new(issuer: &str, jwks_uri: Option<&str>, client: reqwest::Client) -> Self {
        KeySet {
            issuer: issuer.to_string(),
            jwks_uri: tokio::sync::OnceCell::new(),
            configured: jwks_uri.map(str::to_string),
            held: RwLock::new(Held::default()),
            refreshing: tokio::sync::Mutex::new(()),
            generation: std::sync::atomic::AtomicU64::new(0),
            max_age: MAX_AGE,
            min_refresh: MIN_REFRESH,
            client,
        }
    }

    /// The same keys, fetched again once older than `max_age`, at most once every
    /// `min_refresh` (tests).
    #[cfg(test)]
    fn with_timing(mut self, max_age: Duration, min_refresh: Duration) -> Self {
        self.max_age = max_age;
        self.min_refresh = min_refresh;
        self
    }

    /// Which key set is held: it changes each time the keys are fetched again (a rotation,
    /// an unknown key id, their age), so what was verified under other keys is verified anew.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The key for `kid` (`None`: the token names none, which is accepted only when the set
    /// holds exactly one key).
    pub(crate) async fn key(self: &Arc<Self>, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        let (found, old) = {
            let held = self.held.read();
            let old = held.fetched.is_some_and(|t| t.elapsed() >= self.max_age);
            (lookup(&held, kid), old)
        };
        if let Some(k) = found {
            if old {
                self.refresh_behind();
            }
            return Ok(k);
        }
        self.refresh().await;
        let held = self.held.read();
        match lookup(&held, kid) {
            Some(k) => Ok(k),
            None if held.fetched.is_none() => Err(KeyError::Unavailable(
                "the authorization server's signing keys (JWKS) could not be fetched".into(),
            )),
            // the authorization server is misconfigured, not the token: 503, as when it is down
            None if held.keys.is_empty() => Err(KeyError::Unavailable(
                "the authorization server's JWKS holds no signing key toolgate can verify with"
                    .into(),
            )),
            None => Err(KeyError::Unknown(format!(
                "no signing key {:?} is the authorization server's",
                kid.unwrap_or("(none named)")
            ))),
        }
    }

    /// Whether a refresh was tried less than [`MIN_REFRESH`] ago.
    fn tried_lately(&self) -> bool {
        self.held
            .read()
            .tried
            .is_some_and(|t| t.elapsed() < self.min_refresh)
    }

    /// Refreshes old keys on a task of its own, unless a refresh runs or was tried within
    /// [`MIN_REFRESH`]; the request that found them old goes on with them.
    fn refresh_behind(self: &Arc<Self>) {
        if self.tried_lately() || self.refreshing.try_lock().is_err() {
            return;
        }
        let keys = Arc::clone(self);
        tokio::spawn(async move { keys.refresh().await });
    }

    /// Fetches the keys again unless another refresh was tried within [`MIN_REFRESH`] (one
    /// at a time: a request arriving during one waits for it and takes its keys).
    async fn refresh(&self) {
        let _one = self.refreshing.lock().await;
        if self.tried_lately() {
            return;
        }
        self.held.write().tried = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                tracing::info!(keys = keys.len(), issuer = %self.issuer, "fetched the authorization server's signing keys");
                let mut held = self.held.write();
                held.keys = keys;
                held.fetched = Some(Instant::now());
                self.generation
                    .fetch_add(1, std::sync::atomic::Ordering::Release);
            }
            Err(e) => tracing::error!(
                issuer = %self.issuer,
                error = %e,
                "cannot fetch the authorization server's signing keys (JWKS): tokens signed \
                 with keys not held are refused until it answers"
            ),
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, Arc<Key>>, String> {
        let uri = self
            .jwks_uri
            .get_or_try_init(|| async {
                match &self.configured {
                    Some(u) => Ok(u.clone()),
                    None => discover(&self.client, &self.issuer).await,
                }
            })
            .await?;
        let doc = fetch::json(self.client.get(uri.as_str()))
            .await
            .map_err(|e| format!("JWKS {uri}: {e}"))?;
        let set: JwkSet =
            serde_json::from_value(doc).map_err(|e| format!("JWKS {uri}: not a JWK set: {e}"))?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            if let Some(k) = usable(jwk) {
                keys.insert(jwk.common.key_id.clone().unwrap_or_default(), Arc::new(k));
            }
        }
        if keys.is_empty() {
            tracing::warn!(jwks = %uri, listed = set.keys.len(), "the JWKS holds no usable signing key (RSA, EC or OKP for signatures): every token is refused with 503 until it does");
        }
        Ok(keys)
    }
}

fn lookup(held: &Held, kid: Option<&str>) -> Option<Arc<Key>> {
    match kid {
        Some(kid) => held.keys.get(kid).cloned(),
        None if held.keys.len() == 1 => held.keys.values().next().cloned(),
        None => None,
    }
}

/// A JWK for signatures (`use` absent or `sig`) that jsonwebtoken can verify with.
fn usable(jwk: &Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        Some(a) => Some(a.to_string().parse::<Algorithm>().ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key { key, alg })
}

/// The metadata URLs of `issuer`, in the order MCP clients try them (MCP authorization,
/// "Authorization Server Metadata Discovery"): RFC 8414 with the path inserted after the
/// well-known prefix, then OpenID Connect Discovery both ways; for an issuer without a path,
/// RFC 8414's and OpenID's.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(u) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The `jwks_uri` of `issuer`'s metadata, whose `issuer` must be `issuer` itself (RFC 8414
/// §3.3).
async fn discover(client: &reqwest::Client, issuer: &str) -> Result<String, String> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        match fetch::json(client.get(url.as_str())).await {
            Ok(doc) => {
                if doc.get("issuer").and_then(|v| v.as_str()) != Some(issuer) {
                    return Err(format!(
                        "the metadata at {url} names issuer {}, not {issuer}",
                        doc.get("issuer").unwrap_or(&serde_json::Value::Null)
                    ));
                }
                return doc
                    .get("jwks_uri")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| format!("the metadata at {url} has no jwks_uri"));
            }
            Err(e) => tried.push(format!("{url}: {e}")),
        }
    }
    Err(format!(
        "no authorization server metadata for {issuer}: {}",
        tried.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// An RSA public key's modulus (base64url; the auth benchmark's key).
    const N: &str = "kzy7R3L2WcrofEhToM36Mx9S51lZhu-RBsPmkPbMrFgfpNBHHXO-jQkACMQ14Im9dSuE449oKU79ZkL_72CW3oV-ka8VtlXJjNNgjqjprNBGk36R0jTG3cerczXecEw7tzY4RYtZ-WqJW2WA2CkilnFejzWXjAgTIUduJw8zDLMSTTgLKTlywx-r6RqL2NJXRl1ABwgmGXcIaF35AoVbEPJPyLNNS0KE55zoUFv2g70BI00kGFxD8YBQk6a9wbmk3jylCXpWxMAjwTzEbqcJe5YBTBfMAuCKRRiEH-86nxU3x0qio7egVV35DtAmaw49VCHH7hZQ05DvCXwBAjwgkQ";

    /// A JWKS endpoint on 127.0.0.1 that counts its requests and, while `broken`, answers
    /// `503` after [`SLOW`] (an authorization server slow and failing).
    const SLOW: Duration = Duration::from_millis(1500);
    const MIN: Duration = Duration::from_secs(3);

    struct Endpoint {
        url: String,
        asked: Arc<AtomicUsize>,
        broken: Arc<AtomicBool>,
    }

    async fn endpoint() -> Endpoint {
        let asked = Arc::new(AtomicUsize::new(0));
        let broken = Arc::new(AtomicBool::new(false));
        let (a, b) = (asked.clone(), broken.clone());
        let jwks = serde_json::json!({"keys": [
            {"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": N, "e": "AQAB"}
        ]})
        .to_string();
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let (a, b, jwks) = (a.clone(), b.clone(), jwks.clone());
                async move {
                    a.fetch_add(1, Ordering::SeqCst);
                    if b.load(Ordering::SeqCst) {
                        tokio::time::sleep(SLOW).await;
                        return (http::StatusCode::SERVICE_UNAVAILABLE, String::new());
                    }
                    (http::StatusCode::OK, jwks)
                }
            }),
        );
        let addr = fetch::test_server(app).await;
        Endpoint {
            url: format!("http://{addr}/jwks"),
            asked,
            broken,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn old_keys_whose_refresh_fails_serve_at_once_and_ask_once_per_min_refresh() {
        let e = endpoint().await;
        let keys = Arc::new(
            KeySet::new("http://127.0.0.1:1/", Some(&e.url), fetch::client())
                .with_timing(Duration::from_millis(200), MIN),
        );
        assert!(keys.key(Some("k1")).await.is_ok());
        assert_eq!(e.asked.load(Ordering::SeqCst), 1);
        // the keys grow old and the authorization server fails, slowly
        tokio::time::sleep(MIN + Duration::from_millis(100)).await;
        e.broken.store(true, Ordering::SeqCst);
        let start = Instant::now();
        let requests: Vec<_> = (0..20)
            .map(|_| {
                let keys = keys.clone();
                tokio::spawn(async move { keys.key(Some("k1")).await.is_ok() })
            })
            .collect();
        for r in requests {
            assert!(r.await.unwrap(), "the key held serves");
        }
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "a request waited for the refresh: {:?}",
            start.elapsed()
        );
        // a request now and then, for longer than the slow answer takes (within MIN)
        for _ in 0..20 {
            assert!(keys.key(Some("k1")).await.is_ok());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(
            e.asked.load(Ordering::SeqCst),
            2,
            "one refresh tried within the least time between two, not one per request"
        );
        // the next refresh comes after that time, and takes the keys
        e.broken.store(false, Ordering::SeqCst);
        let generation = keys.generation();
        tokio::time::sleep(MIN).await;
        assert!(keys.key(Some("k1")).await.is_ok());
        for _ in 0..50 {
            if keys.generation() != generation {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(keys.generation(), generation + 1);
        assert_eq!(e.asked.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn metadata_urls_insert_the_well_known_prefix() {
        assert_eq!(
            metadata_urls("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example.com/tenant1/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.example.com/.well-known/openid-configuration/tenant1",
                "https://as.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    /// A JWKS that holds no key toolgate can verify with (empty, or encryption keys only) is
    /// the authorization server's fault: unavailable (503), not an unknown key (401).
    #[tokio::test]
    async fn a_jwks_without_a_usable_key_is_unavailable_not_a_bad_token() {
        for jwks in [
            serde_json::json!({"keys": []}),
            serde_json::json!({"keys": [
                {"kty": "RSA", "kid": "k1", "use": "enc", "n": N, "e": "AQAB"}
            ]}),
        ] {
            let body = jwks.to_string();
            let app = axum::Router::new().route(
                "/jwks",
                axum::routing::get(move || {
                    let body = body.clone();
                    async move { body }
                }),
            );
            let addr = fetch::test_server(app).await;
            let keys = Arc::new(KeySet::new(
                "http://127.0.0.1:1/",
                Some(&format!("http://{addr}/jwks")),
                fetch::client(),
            ));
            for kid in [Some("k1"), None] {
                assert!(
                    matches!(keys.key(kid).await, Err(KeyError::Unavailable(_))),
                    "{jwks} {kid:?}"
                );
            }
        }
    }
}
