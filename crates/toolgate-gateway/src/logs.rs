//! An upstream's log messages (`notifications/message`, specification 2025-11-25,
//! "Logging") to the client of the call it is serving.
//!
//! A notification names no request, so a message is routed by what is in flight: while a
//! call of the upstream runs, its client's [`ClientLog`] is routed (`LogRoutes::route`); a
//! message goes to the one session whose calls are in flight then, and is dropped (logged at
//! debug) when none is or calls of two sessions are (it cannot be told whose it is, and it
//! must never reach another session). The client's own `logging/setLevel` filters it (the
//! sink's).
//!
//! What the upstream wrote is attacker-controlled: the logger becomes `<upstream>` or
//! `<upstream>/<logger>`, and every string of the data (and of the logger) is cleaned like an
//! output, invisible and bidirectional characters removed; a message's data over
//! [`MAX_LOG_BYTES`] is replaced by a note saying so.

// logging: deprecated by SEP-2577, still what 2025-11-25 servers and clients use.
#![allow(deprecated)]

use parking_lot::Mutex;
use rmcp::model::LoggingMessageNotificationParam;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The largest data of an upstream's log message passed on (its JSON): 16 KiB.
pub const MAX_LOG_BYTES: usize = 16 << 10;

/// Where one call's client log messages go (it applies the client's level).
pub type ClientLog = Arc<dyn Fn(LoggingMessageNotificationParam) + Send + Sync>;

/// Called in a call's task, as the call starts: the [`ClientLog`] of its client, when it asked
/// for log messages.
pub type ClientLogHook = Arc<dyn Fn() -> Option<ClientLog> + Send + Sync>;

/// The calls of one upstream in flight whose clients take log messages.
#[derive(Default)]
pub(crate) struct LogRoutes {
    routes: Mutex<Vec<(u64, Arc<str>, ClientLog)>>,
    next: AtomicU64,
    /// The upstream's credentials, replaced in its messages ([`crate::answer`]).
    secrets: toolgate_tools::http::secrets::Secrets,
}

impl LogRoutes {
    /// Routes for an upstream whose messages must not carry `secrets`.
    pub(crate) fn new(secrets: toolgate_tools::http::secrets::Secrets) -> LogRoutes {
        LogRoutes {
            routes: Mutex::default(),
            next: AtomicU64::new(0),
            secrets,
        }
    }

    /// Routes the upstream's log messages to `log` (the client of a call in `session`) until
    /// the guard is dropped.
    pub(crate) fn route(self: &Arc<Self>, session: &str, log: ClientLog) -> LogRoute {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.routes.lock().push((id, Arc::from(session), log));
        LogRoute {
            routes: self.clone(),
            id,
        }
    }

    /// An upstream's log message: cleaned and sent to the client of the calls in flight,
    /// when they are all one session's. Returns whether it was passed on.
    pub(crate) fn deliver(
        &self,
        upstream: &str,
        mut message: LoggingMessageNotificationParam,
    ) -> bool {
        let log = {
            let routes = self.routes.lock();
            let Some((_, session, log)) = routes.first() else {
                return false;
            };
            if routes.iter().any(|(_, s, _)| s != session) {
                return false;
            }
            log.clone()
        };
        message.logger = Some(match message.logger.as_deref().map(clean) {
            Some(l) if !l.is_empty() => format!("{upstream}/{l}"),
            _ => upstream.to_string(),
        });
        // measured by counting, not by writing the JSON out; before cleaning too, so an
        // oversized message is not cleaned only to be left out (cleaning can make it longer:
        // a control character becomes a visible escape)
        let too_large = |data: &Value| toolgate_core::json::compact_len(data) > MAX_LOG_BYTES;
        if !too_large(&message.data) {
            clean_value(&mut message.data);
            self.secrets.scrub_value(&mut message.data);
        }
        if too_large(&message.data) {
            message.data = Value::String(format!(
                "a log message of the upstream server {upstream} over {MAX_LOG_BYTES} bytes, \
                 left out"
            ));
        }
        message.meta = None;
        log(message);
        true
    }
}

/// Removes its route when the call ends.
pub(crate) struct LogRoute {
    routes: Arc<LogRoutes>,
    id: u64,
}

impl Drop for LogRoute {
    fn drop(&mut self) {
        self.routes
            .routes
            .lock()
            .retain(|(id, _, _)| *id != self.id);
    }
}

/// `text` cleaned like an output, its invisible and bidirectional characters removed.
pub(crate) fn clean(text: &str) -> String {
    // removed first: `clean_output` would show them as escapes, and here they are dropped
    let visible: String = text
        .chars()
        .filter(|c| !crate::quarantine::is_invisible(*c))
        .collect();
    toolgate_core::sanitize::clean_output(&visible).into_owned()
}

/// Every string and key of `value` [`clean`]ed, in place.
fn clean_value(value: &mut Value) {
    match value {
        Value::String(s) => *s = clean(s),
        Value::Array(items) => items.iter_mut().for_each(clean_value),
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                clean_value(&mut v);
                map.insert(clean(&k), v);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rmcp::model::LoggingLevel;
    use serde_json::json;

    fn sink() -> (ClientLog, Arc<Mutex<Vec<LoggingMessageNotificationParam>>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let into = got.clone();
        (Arc::new(move |m| into.lock().push(m)), got)
    }

    fn message(data: Value) -> LoggingMessageNotificationParam {
        let mut m = LoggingMessageNotificationParam::new(LoggingLevel::Warning, data);
        m.logger = Some("lo\u{202e}g".into());
        m
    }

    #[test]
    fn a_message_reaches_the_one_session_in_flight_cleaned_and_namespaced() {
        let routes = Arc::new(LogRoutes::default());
        assert!(
            !routes.deliver("up", message(json!("nobody"))),
            "no call in flight"
        );
        let (a, got_a) = sink();
        let (a2, got_a2) = sink();
        let first = routes.route("session-a", a);
        let second = routes.route("session-a", a2);
        let data = json!({"te\u{200b}xt": ["x\u{202e}y\u{1b}[2J", 3]});
        assert!(routes.deliver("up", message(data)));
        let got = got_a.lock().clone();
        assert_eq!(got.len(), 1);
        assert!(got_a2.lock().is_empty(), "once per session");
        assert_eq!(got[0].logger.as_deref(), Some("up/log"));
        assert_eq!(got[0].data, json!({"text": ["xy\\x1b[2J", 3]}));
        drop((first, second));
        assert!(
            !routes.deliver("up", message(json!("late"))),
            "the calls ended"
        );
    }

    #[test]
    fn calls_of_two_sessions_in_flight_get_none_of_it() {
        let routes = Arc::new(LogRoutes::default());
        let (a, got_a) = sink();
        let (b, got_b) = sink();
        let _a = routes.route("session-a", a);
        let b_route = routes.route("session-b", b);
        assert!(!routes.deliver("up", message(json!("whose?"))));
        assert!(got_a.lock().is_empty() && got_b.lock().is_empty());
        drop(b_route);
        assert!(routes.deliver("up", message(json!("a's"))));
        assert_eq!(got_a.lock().len(), 1);
        assert!(got_b.lock().is_empty());
    }

    #[test]
    fn an_oversized_message_is_left_out_saying_so() {
        let routes = Arc::new(LogRoutes::default());
        let (a, got_a) = sink();
        let _a = routes.route("s", a);
        assert!(routes.deliver("up", message(json!("x".repeat(MAX_LOG_BYTES + 1)))));
        let data = got_a.lock()[0].data.clone();
        assert!(data.as_str().unwrap().contains("left out"), "{data}");
        // under the cap as sent (two bytes each), over it once cleaned (each C1 control
        // becomes the visible escape `\u{9b}`, seven bytes in JSON)
        let grows = "\u{9b}".repeat(MAX_LOG_BYTES / 3);
        assert!(toolgate_core::json::compact_len(&json!(grows)) < MAX_LOG_BYTES);
        assert!(routes.deliver("up", message(json!(grows))));
        let data = got_a.lock()[1].data.clone();
        assert!(data.as_str().unwrap().contains("left out"), "{data}");
    }
}
