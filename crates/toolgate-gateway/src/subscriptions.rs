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

use crate::catalog::CatalogError;
use crate::upstream::Upstream;
use parking_lot::Mutex;
use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
use std::collections::HashMap;
use std::sync::Arc;

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
/// `sink`; a session already subscribed stays so.
///
/// # Errors
/// [`CatalogError::NotSubscribable`] when the upstream does not declare subscriptions;
/// [`CatalogError::Upstream`] when it refused the subscribe or did not answer.
pub(crate) async fn subscribe(
    u: &Upstream,
    own: &str,
    listed: String,
    session: u64,
    sink: UpdateSink,
) -> Result<(), CatalogError> {
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
    if !u.subscriptions.is_subscribed(own) {
        forward(u, own, true).await?;
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
