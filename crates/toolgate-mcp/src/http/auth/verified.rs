//! The JWTs verified recently, so a caller sending the same token on every request pays for
//! its signature once, not per request.
//!
//! A JWT's verdict depends only on its bytes, the keys held and the clock. An entry is the
//! identity of one token (looked up by the SHA-256 of its bytes, so the whole token must match)
//! and is used only while all three still hold:
//! - the key set is the one it was verified against (any refresh of the JWKS, a rotation
//!   included, ends every entry: [`super::jwks::KeySet::generation`]);
//! - the token has not expired: `exp` + leeway is checked again on every use;
//! - it was verified less than [`TTL`] ago, so keys are refreshed at their usual age
//!   ([`super::jwks::MAX_AGE`]) even for a caller that only ever sends one token.
//!
//! Refused tokens are never kept (each is checked in full, so its error is the exact one), and
//! introspected (opaque) tokens are not kept either: the authorization server is asked on
//! every request, so a revoked token stops working at once (RFC 7662 §4 leaves caching to the
//! resource server; toolgate does not).

use super::Identity;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long a verified token is used without checking its signature again.
pub const TTL: Duration = Duration::from_secs(60);

/// The most tokens kept; past it, expired entries are dropped, and if none are, all of them.
pub const CAPACITY: usize = 4096;

struct Entry {
    identity: Identity,
    /// `exp` + leeway, seconds since the Unix epoch.
    expires: u64,
    generation: u64,
    at: Instant,
}

/// Identities of verified JWTs by the SHA-256 of the token.
#[derive(Default)]
pub(crate) struct Verified {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

/// The lookup key of `token`.
pub(crate) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Verified {
    /// The identity of a token verified under key set `generation`, not expired at `now`
    /// (seconds since the Unix epoch) and verified less than [`TTL`] ago.
    pub(crate) fn get(&self, key: &[u8; 32], generation: u64, now: u64) -> Option<Identity> {
        let mut entries = self.entries.lock();
        let e = entries.get(key)?;
        if e.generation == generation && now <= e.expires && e.at.elapsed() < TTL {
            return Some(e.identity.clone());
        }
        entries.remove(key);
        None
    }

    /// Keeps `identity` for the token `key`, verified under key set `generation`, valid until
    /// `expires` (seconds since the Unix epoch, leeway included).
    pub(crate) fn put(&self, key: [u8; 32], identity: Identity, expires: u64, generation: u64) {
        let mut entries = self.entries.lock();
        if entries.len() >= CAPACITY {
            let now = super::now_secs();
            entries.retain(|_, e| {
                e.generation == generation && now <= e.expires && e.at.elapsed() < TTL
            });
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(
            key,
            Entry {
                identity,
                expires,
                generation,
                at: Instant::now(),
            },
        );
    }

    /// How many tokens are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Principal;

    fn identity(sub: &str) -> Identity {
        Identity {
            principal: Principal::new("https://as.example.com", sub),
            claims: Default::default(),
            scopes: vec!["mcp:tools".into()],
        }
    }

    #[test]
    fn an_entry_holds_only_for_its_token_its_key_set_and_until_it_expires() {
        let v = Verified::default();
        let a = digest("token-a");
        v.put(a, identity("alice"), 1_000, 1);
        assert_eq!(
            v.get(&a, 1, 999).unwrap().principal.subject.as_ref(),
            "alice"
        );
        assert_eq!(
            v.get(&a, 1, 1_000).unwrap().principal.subject.as_ref(),
            "alice"
        );
        // another token, even one byte longer, is not this one
        assert!(v.get(&digest("token-a "), 1, 999).is_none());
        // expired: gone
        assert!(v.get(&a, 1, 1_001).is_none());
        assert!(v.get(&a, 1, 999).is_none());
        // the keys refreshed: gone
        v.put(a, identity("alice"), 1_000, 1);
        assert!(v.get(&a, 2, 999).is_none());
        assert_eq!(v.len(), 0);
    }

    #[test]
    fn the_map_stays_bounded() {
        let v = Verified::default();
        for i in 0..CAPACITY + 10 {
            v.put(digest(&format!("t{i}")), identity("bob"), u64::MAX, 1);
        }
        assert!(v.len() <= CAPACITY);
        // the newest is kept
        let last = digest(&format!("t{}", CAPACITY + 9));
        assert!(v.get(&last, 1, 0).is_some());
    }
}
