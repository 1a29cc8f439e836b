//! Who is calling, for what must outlive one stateless request.
//!
//! On protocol revision 2026-07-28 over HTTP (and for every client when legacy sessions are
//! off) a request stands alone: no `Mcp-Session-Id` ties it to the ones before. Each is still
//! served by a connection of its own, but its calls do not run in a toolgate session of their
//! own (whose budgets would start full and whose result handles would be gone with it): they
//! run in the session of their **caller**, so `max_calls` counts every
//! call a caller makes and a `read_result` handle from one request reads in the next.
//!
//! The caller is the [`crate::http::Caller`] the HTTP guard established ([`CallerKey::of`]):
//! with an authorization server (`[server.auth]`), the verified principal (issuer and
//! subject) and its kept claims, so a refreshed token keeps the caller's session and a token
//! whose claims changed gets a new one, built from them; with the one static token of
//! `toolgate serve`, a SHA-256 of the `Authorization` header (everyone holding the token is
//! one caller); without a token (`--no-token`, loopback) the one anonymous caller.
//!
//! The caller also names the session's caller ([`CallerKey::name`]), from which the
//! idempotency ledger derives keys for calls sent without one: a client's re-send of a
//! side-effecting call in a later request is answered from the ledger, even after its session
//! was evicted or the server restarted.
//!
//! A caller's session lasts as long as the server, except that at most [`MAX_CALLERS`] are
//! kept: past that, the one unused longest ends (its session grants end with it, its budget
//! starts over if it comes back). Call ids may repeat in a caller's session (each stateless
//! request has ids of its own).

use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use toolgate_core::{Pipeline, Session};

/// Callers whose sessions are kept at once, at most.
pub const MAX_CALLERS: usize = 1024;

/// Who sends a request: a hash of the credential it carries (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallerKey([u8; 32]);

impl CallerKey {
    /// The caller of a stateless HTTP request, from its head: `None` when the request belongs
    /// to an MCP session (it carries `Mcp-Session-Id`), whose connection has a session of its
    /// own.
    ///
    /// Where the HTTP guard let the request in without a credential to check (a server without
    /// a token: [`crate::http::Caller::Anonymous`]), whatever `Authorization` it sends is not
    /// a credential, so it is the one anonymous caller (otherwise a client could be as many
    /// callers as headers it makes up).
    pub fn of(parts: &http::request::Parts) -> Option<CallerKey> {
        if parts.headers.contains_key("mcp-session-id") {
            return None;
        }
        let credential = match parts.extensions.get::<crate::http::Caller>() {
            Some(crate::http::Caller::Anonymous) => &[][..],
            Some(crate::http::Caller::Principal(id)) => {
                let mut h = Sha256::new();
                for part in [&*id.principal.issuer, &*id.principal.subject] {
                    h.update((part.len() as u64).to_le_bytes());
                    h.update(part.as_bytes());
                }
                h.update(serde_json::to_vec(&id.claims).unwrap_or_default());
                return Some(CallerKey(h.finalize().into()));
            }
            _ => parts
                .headers
                .get(http::header::AUTHORIZATION)
                .map(http::HeaderValue::as_bytes)
                .unwrap_or_default(),
        };
        Some(CallerKey(Sha256::digest(credential).into()))
    }

    /// The caller's name for what outlives its session (the idempotency keys derived for its
    /// calls, [`toolgate_core::Session::caller`]): `http-` and 128 bits of the hash, in hex.
    pub fn name(&self) -> String {
        format!("http-{}", toolgate_core::ledger::hex(&self.0[..16]))
    }
}

/// A caller's session, ended when it is dropped (evicted, or the server stops).
pub(crate) struct CallerSession {
    pub(crate) session: Session,
    pipeline: Pipeline,
}

impl Drop for CallerSession {
    fn drop(&mut self) {
        self.pipeline.end_session(&self.session);
    }
}

/// The sessions of the callers of stateless requests, by [`CallerKey`]; at most
/// [`MAX_CALLERS`], the one unused longest ending first.
#[derive(Default)]
pub(crate) struct Callers {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Each caller's session and the tick of its last request.
    by_key: HashMap<CallerKey, (Arc<CallerSession>, u64)>,
    /// Counts requests, to order callers by their last one.
    tick: u64,
}

impl Callers {
    /// The session of `key`, made with `make` at its first request.
    pub(crate) fn session(
        &self,
        key: CallerKey,
        pipeline: &Pipeline,
        make: impl FnOnce() -> Session,
    ) -> Arc<CallerSession> {
        let mut inner = self.inner.lock();
        inner.tick += 1;
        let now = inner.tick;
        let by_key = &mut inner.by_key;
        if let Some((s, used)) = by_key.get_mut(&key) {
            *used = now;
            return s.clone();
        }
        let evicted = if by_key.len() >= MAX_CALLERS {
            let oldest = by_key
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k);
            oldest.and_then(|k| by_key.remove(&k))
        } else {
            None
        };
        let s = Arc::new(CallerSession {
            session: make(),
            pipeline: pipeline.clone(),
        });
        by_key.insert(key, (s.clone(), now));
        drop(inner);
        // ended outside the lock: ending touches the grant store
        drop(evicted);
        s
    }

    /// How many callers have a session now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().by_key.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(headers: &[(&str, &str)]) -> http::request::Parts {
        let mut b = http::Request::builder().uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn the_credential_is_the_caller_and_a_session_id_is_no_stateless_caller() {
        let a = CallerKey::of(&head(&[("authorization", "Bearer a")])).unwrap();
        let b = CallerKey::of(&head(&[("authorization", "Bearer b")])).unwrap();
        let anonymous = CallerKey::of(&head(&[])).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, anonymous);
        // the name the ledger derives keys from: the same credential, the same name
        assert_eq!(a.name().len(), "http-".len() + 32);
        assert!(a.name().starts_with("http-"));
        assert_ne!(a.name(), b.name());
        assert_eq!(
            a.name(),
            CallerKey::of(&head(&[("authorization", "Bearer a")]))
                .unwrap()
                .name()
        );
        assert_eq!(
            Some(a),
            CallerKey::of(&head(&[("authorization", "Bearer a"), ("accept", "x")]))
        );
        assert_eq!(
            CallerKey::of(&head(&[
                ("authorization", "Bearer a"),
                ("mcp-session-id", "s")
            ])),
            None
        );
        // let in without a token to check: one anonymous caller, whatever it sends
        let mut made_up = head(&[("authorization", "Bearer made-up")]);
        made_up.extensions.insert(crate::http::Caller::Anonymous);
        assert_eq!(CallerKey::of(&made_up), Some(anonymous));
        let mut checked = head(&[("authorization", "Bearer a")]);
        checked.extensions.insert(crate::http::Caller::Token);
        assert_eq!(CallerKey::of(&checked), Some(a));
    }

    #[test]
    fn one_session_per_caller_and_the_longest_unused_ends_first() {
        let registry = toolgate_core::Registry::builder().build().unwrap();
        let pipeline = Pipeline::builder(registry).build();
        let callers = Callers::default();
        let make = |id: String| {
            let p = pipeline.clone();
            move || p.session(id).build().unwrap()
        };
        let key = |i: u32| CallerKey(Sha256::digest(i.to_le_bytes()).into());
        let first = callers.session(key(0), &pipeline, make("c0".into()));
        let again = callers.session(key(0), &pipeline, make("other".into()));
        assert_eq!(again.session.id(), "c0");
        for i in 1..MAX_CALLERS as u32 {
            callers.session(key(i), &pipeline, make(format!("c{i}")));
        }
        assert_eq!(callers.len(), MAX_CALLERS);
        // caller 0 was used again after caller 1 was made: caller 1 is the one to go
        callers.session(key(0), &pipeline, make("c0".into()));
        callers.session(key(9999), &pipeline, make("new".into()));
        assert_eq!(callers.len(), MAX_CALLERS);
        let c1 = callers.session(key(1), &pipeline, make("c1-again".into()));
        assert_eq!(c1.session.id(), "c1-again", "caller 1 had been evicted");
        assert_eq!(
            callers
                .session(key(0), &pipeline, make("x".into()))
                .session
                .id(),
            first.session.id()
        );
    }
}
