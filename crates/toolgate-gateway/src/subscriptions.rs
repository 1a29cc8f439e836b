//! Resource subscriptions through the gateway (specification 2025-11-25, "Resources",
//! "Subscriptions"): which sessions of toolgate's server are subscribed to which resource of
//! an upstream, the upstream's own `resources/subscribe` and `unsubscribe` sent for them, and
//! its `notifications/resources/updated` relayed.
//!
//! Per upstream, a table from the upstream's own URI to the URI as toolgate lists it
//! (namespaced) and the subscribed sessions, each with its [`UpdateSink`]:
//!
//! - the first session's subscribe is forwarded (the namespace taken off); a later session's
//!   only joins the table. A forwarded subscribe the upstream refuses subscribes no one.
//! - an unsubscribe is forwarded when the last session leaves, by unsubscribing or by its
//!   session ending (`session_ended`); an unsubscribe from a session that is not
//!   subscribed is refused ([`CatalogError::NotSubscribed`]) and nothing is forwarded.
//! - an update the upstream sends for a URI in the table goes to that URI's sessions, at
//!   the namespaced URI, and to no other; one for a URI no session is subscribed to is
//!   dropped (logged at debug). URIs match exactly.
//! - a restarted upstream (a new connection) is sent a subscribe for every URI in the table
//!   (`resubscribe`).
//!
//! Forwarding is serialized per upstream, so a subscribe and an unsubscribe of the same URI
//! never cross on the way.
//!
//! What one session can make the gateway hold is bounded: it may be subscribed to at most
//! `[gateway] max_subscriptions` resources at once, across the upstreams (`Held`; a
//! subscribe past it is refused before anything is sent upstream, saying to unsubscribe
//! first), each URI at most [`MAX_URI_BYTES`] long.

use crate::catalog::CatalogError;
use crate::upstream::Upstream;
use parking_lot::Mutex;
use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
use std::collections::HashMap;
use std::sync::Arc;

/// The longest URI (as listed) a session may subscribe to through the gateway, in bytes.
pub const MAX_URI_BYTES: usize = 4096;

/// How many upstream resources each session is subscribed to (or is being subscribed to),
/// across the upstreams, and the most it may be.
pub(crate) struct Held {
    limit: u32,
    by_session: Mutex<HashMap<u64, u32>>,
}

impl Held {
    /// At most `limit` subscriptions a session.
    pub(crate) fn new(limit: u32) -> Held {
        Held {
            limit,
            by_session: Mutex::new(HashMap::new()),
        }
    }

    fn refused(&self, listed: &str) -> CatalogError {
        CatalogError::NotSubscribable(
            listed.to_string(),
            format!(
                "this session is subscribed to {} resources, the most one session may be \
                 (`[gateway] max_subscriptions`); unsubscribe from one \
                 (resources/unsubscribe) first",
                self.limit
            ),
        )
    }

    /// Whether `session` may subscribe to one more resource (listed as `listed`).
    ///
    /// # Errors
    /// [`CatalogError::NotSubscribable`] when it holds as many as it may, or `listed` is
    /// over [`MAX_URI_BYTES`].
    pub(crate) fn check(&self, session: u64, listed: &str) -> Result<(), CatalogError> {
        uri_ok(listed)?;
        let held = self.by_session.lock().get(&session).copied().unwrap_or(0);
        if held >= self.limit {
            return Err(self.refused(listed));
        }
        Ok(())
    }

    /// Counts one more subscription of `session`, when it may hold one more.
    fn take(&self, session: u64, listed: &str) -> Result<(), CatalogError> {
        let mut by_session = self.by_session.lock();
        let held = by_session.entry(session).or_insert(0);
        if *held >= self.limit {
            return Err(self.refused(listed));
        }
        *held += 1;
        Ok(())
    }

    /// One subscription of `session` less.
    fn give_back(&self, session: u64) {
        let mut by_session = self.by_session.lock();
        if let Some(held) = by_session.get_mut(&session) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                by_session.remove(&session);
            }
        }
    }

    /// `session` is over: it holds none.
    pub(crate) fn forget(&self, session: u64) {
        self.by_session.lock().remove(&session);
    }

    #[cfg(test)]
    fn held(&self, session: u64) -> u32 {
        self.by_session.lock().get(&session).copied().unwrap_or(0)
    }
}

/// Refuses a URI over [`MAX_URI_BYTES`].
fn uri_ok(listed: &str) -> Result<(), CatalogError> {
    if listed.len() > MAX_URI_BYTES {
        return Err(CatalogError::NotSubscribable(
            format!(
                "{}...",
                listed
                    .char_indices()
                    .nth(64)
                    .map_or(listed, |(i, _)| &listed[..i])
            ),
            format!(
                "the URI is {} bytes, over the {MAX_URI_BYTES} a subscribed URI may have",
                listed.len()
            ),
        ));
    }
    Ok(())
}

/// Where a session's `notifications/resources/updated` go: called with the URI as toolgate
/// lists it. Must not block (a server's sink sends in a task of its own).
pub type UpdateSink = Arc<dyn Fn(String) + Send + Sync>;

/// One upstream's subscriptions.
#[derive(Default)]
pub(crate) struct Subscriptions {
    /// By the upstream's own URI.
    table: Mutex<HashMap<String, Subscribed>>,
    /// Held while a subscribe or unsubscribe is forwarded.
    forwarding: tokio::sync::Mutex<()>,
}

struct Subscribed {
    /// The URI as toolgate lists it.
    listed: String,
    /// The subscribed sessions, by the server's subscriber id.
    sessions: HashMap<u64, UpdateSink>,
}

impl Subscriptions {
    /// The upstream sent `notifications/resources/updated` for its `uri`: sent on to the
    /// sessions subscribed to it. Returns how many.
    pub(crate) fn updated(&self, uri: &str) -> usize {
        let table = self.table.lock();
        let Some(s) = table.get(uri) else {
            return 0;
        };
        for sink in s.sessions.values() {
            sink(s.listed.clone());
        }
        s.sessions.len()
    }

    fn uris(&self) -> Vec<String> {
        self.table.lock().keys().cloned().collect()
    }

    fn is_subscribed(&self, uri: &str) -> bool {
        self.table.lock().contains_key(uri)
    }

    /// Whether `session` is subscribed to the upstream's `uri`.
    pub(crate) fn holds(&self, uri: &str, session: u64) -> bool {
        self.table
            .lock()
            .get(uri)
            .is_some_and(|s| s.sessions.contains_key(&session))
    }
}

/// The upstream's answer to a forwarded request, within its timeout.
async fn forward(u: &Upstream, own: &str, on: bool) -> Result<(), CatalogError> {
    let what = if on {
        "resources/subscribe"
    } else {
        "resources/unsubscribe"
    };
    let uri = own.to_string();
    #[allow(deprecated)] // resources/subscribe: what 2025-11-25 servers answer
    crate::catalog::ask(u, what, |p| async move {
        if on {
            p.subscribe(SubscribeRequestParams::new(uri)).await
        } else {
            p.unsubscribe(UnsubscribeRequestParams::new(uri)).await
        }
    })
    .await
}

/// Subscribes `session` to the upstream's `own` URI (listed as `listed`), its updates to
/// `sink`; a session already subscribed stays so. Counted in `held`.
///
/// # Errors
/// [`CatalogError::NotSubscribable`] when the upstream does not declare subscriptions, the
/// session holds as many subscriptions as it may, or the URI is too long;
/// [`CatalogError::Upstream`] when it refused the subscribe or did not answer.
pub(crate) async fn subscribe(
    u: &Upstream,
    held: &Held,
    own: &str,
    listed: String,
    session: u64,
    sink: UpdateSink,
) -> Result<(), CatalogError> {
    uri_ok(&listed)?;
    if !crate::catalog::declares(u, |c| {
        c.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
    }) {
        return Err(CatalogError::NotSubscribable(
            listed,
            format!(
                "the upstream server {} does not offer resource subscriptions",
                u.name()
            ),
        ));
    }
    let _forwarding = u.subscriptions.forwarding.lock().await;
    let again = u.subscriptions.holds(own, session);
    if !again {
        held.take(session, &listed)?;
    }
    if !u.subscriptions.is_subscribed(own) {
        if let Err(e) = forward(u, own, true).await {
            if !again {
                held.give_back(session);
            }
            return Err(e);
        }
    }
    u.subscriptions
        .table
        .lock()
        .entry(own.to_string())
        .or_insert_with(|| Subscribed {
            listed,
            sessions: HashMap::new(),
        })
        .sessions
        .insert(session, sink);
    Ok(())
}

/// Unsubscribes `session` from the upstream's `own` URI; the upstream's unsubscribe is
/// forwarded when it was the last session (its failure is logged: the session is
/// unsubscribed either way).
///
/// # Errors
/// [`CatalogError::NotSubscribed`] when the session is not subscribed to it.
pub(crate) async fn unsubscribe(
    u: &Upstream,
    held: &Held,
    own: &str,
    listed: &str,
    session: u64,
) -> Result<(), CatalogError> {
    let _forwarding = u.subscriptions.forwarding.lock().await;
    let last = {
        let mut table = u.subscriptions.table.lock();
        let Some(s) = table.get_mut(own) else {
            return Err(CatalogError::NotSubscribed(listed.to_string()));
        };
        if s.sessions.remove(&session).is_none() {
            return Err(CatalogError::NotSubscribed(listed.to_string()));
        }
        held.give_back(session);
        let last = s.sessions.is_empty();
        if last {
            table.remove(own);
        }
        last
    };
    if last {
        if let Err(e) = forward(u, own, false).await {
            tracing::warn!(upstream = %u.name(), uri = %own, error = %e, "forwarding the last unsubscribe");
        }
    }
    Ok(())
}

/// The session `session` is over: it leaves every subscription of `u`; the upstream is sent
/// an unsubscribe (in a task of its own) for each URI no session is subscribed to now.
pub(crate) fn session_ended(u: &Arc<Upstream>, session: u64) {
    let emptied: Vec<String> = {
        let mut table = u.subscriptions.table.lock();
        let mut emptied = Vec::new();
        table.retain(|own, s| {
            if s.sessions.remove(&session).is_some() && s.sessions.is_empty() {
                emptied.push(own.clone());
                return false;
            }
            true
        });
        emptied
    };
    if emptied.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let u = u.clone();
    runtime.spawn(async move {
        let _forwarding = u.subscriptions.forwarding.lock().await;
        for own in emptied {
            // a session may have subscribed to it again meanwhile
            if u.subscriptions.is_subscribed(&own) {
                continue;
            }
            if let Err(e) = forward(&u, &own, false).await {
                tracing::warn!(upstream = %u.name(), uri = %own, error = %e, "forwarding an unsubscribe at a session's end");
            }
        }
    });
}

/// A new connection to `u`: every URI a session is subscribed to is subscribed again
/// (a failure is logged; the sessions stay subscribed, for the next restart).
pub(crate) async fn resubscribe(u: &Upstream) {
    let _forwarding = u.subscriptions.forwarding.lock().await;
    for own in u.subscriptions.uris() {
        if let Err(e) = forward(u, &own, true).await {
            tracing::warn!(upstream = %u.name(), uri = %own, error = %e, "subscribing again after a restart");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_session_holds_at_most_its_limit_and_each_gives_back_its_own() {
        let held = Held::new(2);
        for uri in ["u+a://1", "u+a://2"] {
            held.check(1, uri).unwrap();
            held.take(1, uri).unwrap();
        }
        let refused = held.check(1, "u+a://3").unwrap_err().to_string();
        assert!(
            refused.contains("u+a://3") && refused.contains("2 resources"),
            "{refused}"
        );
        assert!(
            refused.contains(
                "may be (`[gateway] max_subscriptions`); unsubscribe from one \
                 (resources/unsubscribe) first"
            ),
            "says what to do, in one line of prose: {refused}"
        );
        assert!(!refused.contains("  "), "no run of spaces: {refused:?}");
        assert!(held.take(1, "u+a://3").is_err(), "not counted when refused");
        assert_eq!(held.held(1), 2);
        // another session has its own
        held.take(2, "u+a://1").unwrap();
        held.give_back(1);
        assert_eq!((held.held(1), held.held(2)), (1, 1));
        held.take(1, "u+a://3").unwrap();
        held.forget(1);
        assert_eq!((held.held(1), held.held(2)), (0, 1));
        // giving back more than was taken never underflows
        held.give_back(1);
        assert_eq!(held.held(1), 0);
    }

    #[test]
    fn an_overlong_uri_is_refused_saying_its_length() {
        let held = Held::new(10);
        let long = format!("u+a://{}", "x".repeat(MAX_URI_BYTES));
        let refused = held.check(1, &long).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("{} bytes", long.len())),
            "{refused}"
        );
        assert!(
            refused.len() < 400,
            "the URI is not echoed whole: {refused}"
        );
        held.check(1, &long[..MAX_URI_BYTES]).unwrap();
    }
}
