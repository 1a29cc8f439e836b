//! The authorization server's signing keys: found through its metadata (RFC 8414 §3, then
//! OpenID Connect Discovery) when no `jwks_uri` is configured, fetched once and kept.
//!
//! A token whose key id (`kid`) is not among the kept keys makes one refresh (a key rotation),
//! at most one every [`MIN_REFRESH`] (5 s) (a flood of made-up key ids cannot turn into a flood of
//! requests to the authorization server); a key id still unknown after it is refused. The keys
//! are refreshed too when older than [`MAX_AGE`]; a failed refresh keeps the keys held and is
//! logged. With no keys at all (the JWKS endpoint down from the start), every token is refused:
//! fail closed.

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
            client,
        }
    }

    /// Which key set is held: it changes each time the keys are fetched again (a rotation,
    /// an unknown key id, their age), so what was verified under other keys is verified anew.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The key for `kid` (`None`: the token names none, which is accepted only when the set
    /// holds exactly one key).
    pub(crate) async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        let stale = {
            let held = self.held.read();
            if let Some(k) = lookup(&held, kid) {
                if held.fetched.is_some_and(|t| t.elapsed() < MAX_AGE) {
                    return Ok(k);
                }
            }
            held.fetched.is_some_and(|t| t.elapsed() >= MAX_AGE)
        };
        self.refresh(stale).await;
        let held = self.held.read();
        match lookup(&held, kid) {
            Some(k) => Ok(k),
            None if held.fetched.is_none() => Err(KeyError::Unavailable(
                "the authorization server's signing keys (JWKS) could not be fetched".into(),
            )),
            None => Err(KeyError::Unknown(format!(
                "no signing key {:?} is the authorization server's",
                kid.unwrap_or("(none named)")
            ))),
        }
    }

    /// Fetches the keys again unless another refresh ran within [`MIN_REFRESH`] (`stale`:
    /// the keys are old, refresh whatever the last try).
    async fn refresh(&self, stale: bool) {
        let _one = self.refreshing.lock().await;
        if !stale
            && self
                .held
                .read()
                .tried
                .is_some_and(|t| t.elapsed() < MIN_REFRESH)
        {
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
}
