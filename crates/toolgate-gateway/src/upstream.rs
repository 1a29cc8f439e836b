//! One upstream and its supervisor: the task that starts the server, keeps the live
//! connection where calls find it, lists the tools again on `notifications/tools/list_changed`,
//! and restarts a server that exits or stops answering, with backoff.
//!
//! The supervisor's loop, per attempt:
//!
//! 1. start and hand-shake ([`crate::connect`]) within `startup_timeout_ms`;
//! 2. hand the tools to the gateway (pinning and quarantine, then the registry), and
//!    subscribe again to the resources sessions are subscribed to;
//! 3. serve: the connection is where calls find it until the server exits, the transport
//!    closes, the upstream's breaker opens (a hung stdio server is restarted), or the
//!    gateway shuts down; a `list_changed` of its tools or prompts lists them again, at most
//!    once a [`MIN_RELIST_INTERVAL`] (a change said meanwhile is listed after it);
//! 4. wait the backoff (0.5 s doubling to 30 s; back to 0.5 s after a connection that
//!    worked) and start again.

use crate::breaker::{Admission, Breaker, BreakerState};
use crate::client::{Handler, ProgressRoutes};
use crate::connect::{self, StartContext};
use crate::flood::Budgets;
use crate::gateway::GatewayInner;
use crate::logs::{ClientLogHook, LogRoute, LogRoutes};
use crate::relay::{ClientRequestHook, Relay, RequestRoute, RequestRoutes};
use crate::subscriptions::Subscriptions;
use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use rmcp::service::{Peer, RoleClient};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolgate_config::upstreams::{DEFAULT_COOLDOWN_MS, DEFAULT_FAILURE_THRESHOLD};
use toolgate_config::UpstreamConfig;
use toolgate_store::{Store, UpstreamHealth};

/// The first wait before a restart.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait before a restart.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The shortest time between two listings of an upstream's tools (or of its prompts) on its
/// `list_changed`, so a flood of them cannot keep the supervisor listing.
pub const MIN_RELIST_INTERVAL: Duration = Duration::from_secs(1);

/// An upstream's state, as health shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamState {
    /// Starting (the first time, or after a restart).
    Starting,
    /// Connected: its tools are served.
    Ready,
    /// Its last start failed or it stopped; waiting to start again.
    Down,
}

impl UpstreamState {
    /// `starting`, `ready`, `down`.
    pub const fn as_str(self) -> &'static str {
        match self {
            UpstreamState::Starting => "starting",
            UpstreamState::Ready => "ready",
            UpstreamState::Down => "down",
        }
    }
}

/// Why a connection is ended by its supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Restart {
    /// Its transport closed (the server exited, the connection dropped).
    Closed,
    /// Its breaker opened (a stdio server that may be hung).
    Hung,
}

pub(crate) struct Health {
    pub(crate) state: UpstreamState,
    pub(crate) detail: Option<String>,
    pub(crate) restarts: u64,
    pub(crate) failures: u64,
}

/// One configured upstream.
pub(crate) struct Upstream {
    pub(crate) config: UpstreamConfig,
    /// The live connection's peer, while there is one.
    pub(crate) peer: ArcSwapOption<Peer<RoleClient>>,
    /// The whole upstream's breaker (a crash or hang fails every tool).
    pub(crate) breaker: Breaker,
    pub(crate) progress: Arc<ProgressRoutes>,
    list_changed: Arc<Notify>,
    prompts_changed: Arc<Notify>,
    /// Which sessions are subscribed to which of its resources.
    pub(crate) subscriptions: Arc<Subscriptions>,
    /// The clients of its calls in flight, for its log messages.
    logs: Arc<LogRoutes>,
    /// What it may send unasked ([`crate::flood`]).
    pub(crate) budgets: Arc<Budgets>,
    client_log: Option<ClientLogHook>,
    /// The sessions and clients of its calls in flight, for its requests (when its entry
    /// relays any).
    requests: Arc<RequestRoutes>,
    client_requests: Option<ClientRequestHook>,
    restart: Notify,
    pub(crate) health: Mutex<Health>,
    /// Where the URLs its tools are given may lead ([`GatewayOptions::egress`]).
    ///
    /// [`GatewayOptions::egress`]: crate::gateway::GatewayOptions::egress
    pub(crate) egress: toolgate_core::egress::EgressPolicy,
    /// The credentials toolgate hands it, kept out of its answers ([`crate::answer`]).
    pub(crate) secrets: toolgate_tools::http::secrets::Secrets,
    /// What its latest listings quarantined, for its resource reads.
    pub(crate) screened: Mutex<crate::catalog::screened::Screened>,
    store: Store,
}

impl Upstream {
    pub(crate) fn new(
        config: UpstreamConfig,
        store: Store,
        client_log: Option<ClientLogHook>,
        client_requests: Option<ClientRequestHook>,
    ) -> Upstream {
        let secrets = crate::answer::secrets_of(&config);
        Upstream {
            breaker: breaker(&config),
            budgets: Arc::new(Budgets::new(&config.name, &config.notifications)),
            logs: Arc::new(LogRoutes::new(secrets.clone())),
            secrets,
            egress: toolgate_core::egress::EgressPolicy::new(),
            config,
            peer: ArcSwapOption::empty(),
            progress: Arc::default(),
            list_changed: Arc::default(),
            prompts_changed: Arc::default(),
            subscriptions: Arc::default(),
            client_log,
            requests: Arc::default(),
            client_requests,
            restart: Notify::new(),
            health: Mutex::new(Health {
                state: UpstreamState::Starting,
                detail: None,
                restarts: 0,
                failures: 0,
            }),
            screened: Mutex::default(),
            store,
        }
    }

    /// `answer`, an answer of this upstream's (a call's, a read's, a prompt's) or the error
    /// its call ended with, with the credentials toolgate hands it replaced
    /// ([`crate::answer`]).
    pub(crate) fn held(
        &self,
        mut answer: Result<toolgate_core::ToolOutput, toolgate_core::ToolError>,
    ) -> Result<toolgate_core::ToolOutput, toolgate_core::ToolError> {
        match &mut answer {
            Ok(out) => crate::answer::scrub_output(out, &self.secrets),
            Err(e) => crate::answer::scrub_error(e, &self.secrets),
        }
        answer
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// A call failed or timed out: counted, and a stdio server whose breaker this opened is
    /// restarted (it may be hung).
    pub(crate) fn call_failed(&self, admission: Admission, why: &str) {
        let opened = self.breaker.failure(admission);
        {
            let mut h = self.health.lock();
            h.failures += 1;
        }
        if opened {
            tracing::warn!(upstream = %self.name(), why, "the upstream's circuit breaker opened");
            self.set_health(
                None,
                Some(format!("circuit breaker open after failures; last: {why}")),
            );
            if self.config.command.is_some() {
                self.restart.notify_one();
            }
        }
    }

    /// Routes the upstream's log messages to the client of the call of `ctx` (when it asked
    /// for them) until the returned route is dropped, at the call's end.
    pub(crate) fn log_route(&self, ctx: &toolgate_core::ToolContext) -> Option<LogRoute> {
        let log = (self.client_log.as_ref()?)()?;
        Some(self.logs.route(ctx.session_id(), log))
    }

    /// Routes the upstream's requests (sampling, elicitation) to the client of the call of
    /// `ctx` until the returned route is dropped, at the call's end; `None` when its entry
    /// relays none (nothing to route). A call whose client cannot be sent requests is routed
    /// too: it still counts as its session's call in flight ([`crate::relay`]).
    pub(crate) fn request_route(&self, ctx: &toolgate_core::ToolContext) -> Option<RequestRoute> {
        if self.config.relay.is_empty() {
            return None;
        }
        let client = self.client_requests.as_ref().and_then(|hook| hook());
        Some(self.requests.route(ctx, client))
    }

    /// The connection of `peer` is gone (a call found its transport closed): the supervisor
    /// notices at once rather than at its next look. Nothing when `peer` is not the live
    /// connection's (the supervisor has it in hand already, or has made a new one).
    pub(crate) fn connection_lost(&self, peer: &Peer<RoleClient>) {
        if self
            .peer
            .load()
            .as_deref()
            .is_some_and(|live| std::ptr::eq(live, peer))
        {
            self.restart.notify_one();
        }
    }

    /// Why the live connection is to end, now that a restart was asked for: its transport
    /// closed, or its breaker is open (a stdio server that stopped answering). `None` for a
    /// request about an earlier connection (a call that found the last one closed, a breaker
    /// since closed by the new connection): the `Notify` keeps one such request past the
    /// connection it was meant for, and acting on it would end a good connection (and make
    /// its resubscriptions twice).
    fn restart_asked(&self, transport_closed: bool) -> Option<Restart> {
        if transport_closed {
            return Some(Restart::Closed);
        }
        (self.config.command.is_some() && self.breaker.state() != BreakerState::Closed)
            .then_some(Restart::Hung)
    }

    /// Updates the health (`state` when given) and records it in the store and the metrics.
    pub(crate) fn set_health(&self, state: Option<UpstreamState>, detail: Option<String>) {
        let record = {
            let mut h = self.health.lock();
            if let Some(s) = state {
                h.state = s;
            }
            h.detail = detail;
            let breaker = self.breaker.state();
            let shown = match (h.state, breaker) {
                (UpstreamState::Ready, BreakerState::Closed) => "ready".to_string(),
                (UpstreamState::Ready, b) => format!("ready, breaker {}", b.as_str()),
                (s, _) => s.as_str().to_string(),
            };
            metrics::gauge!("toolgate_upstream_up", "upstream" => self.config.name.clone()).set(
                if h.state == UpstreamState::Ready {
                    1.0
                } else {
                    0.0
                },
            );
            metrics::gauge!("toolgate_upstream_breaker_open", "upstream" => self.config.name.clone())
                .set(if breaker == BreakerState::Closed { 0.0 } else { 1.0 });
            UpstreamHealth {
                upstream: self.config.name.clone(),
                state: shown,
                detail: h.detail.clone(),
                restarts: h.restarts,
                failures: h.failures,
                dropped: self.budgets.dropped(),
                updated_us: toolgate_core::audit::now_us(std::time::SystemTime::now()),
            }
        };
        if let Err(e) = self.store.record_upstream_health(&record) {
            tracing::warn!(upstream = %self.name(), error = %e, "recording the upstream's health");
        }
    }

    /// The supervisor: runs until `shutdown`. `first` is told when the first attempt ended
    /// (its tools handed over, or its failure recorded).
    pub(crate) async fn supervise(
        self: Arc<Self>,
        gateway: Weak<GatewayInner>,
        start: Arc<StartContext>,
        first: tokio::sync::oneshot::Sender<()>,
        shutdown: CancellationToken,
    ) {
        let mut first = Some(first);
        let mut backoff = FIRST_BACKOFF;
        loop {
            // what ended the last attempt stays shown while starting again
            let last = self.health.lock().detail.clone();
            self.set_health(Some(UpstreamState::Starting), last);
            let Some(catalog_changes) = gateway.upgrade().map(|g| g.catalog_changes.clone()) else {
                return;
            };
            let audit_of = gateway.clone();
            let handler = Handler {
                progress: self.progress.clone(),
                list_changed: self.list_changed.clone(),
                prompts_changed: self.prompts_changed.clone(),
                subscriptions: self.subscriptions.clone(),
                catalog_changes,
                logs: self.logs.clone(),
                budgets: self.budgets.clone(),
                upstream: self.config.name.clone(),
                relay: Relay {
                    upstream: self.config.name.clone(),
                    kinds: self.config.relay.clone(),
                    routes: self.requests.clone(),
                    budgets: self.budgets.clone(),
                    audit: Arc::new(move || audit_of.upgrade()?.audit_sink()),
                },
            };
            let attempt = tokio::select! {
                r = connect::connect(&self.config, &start, handler) => r,
                () = shutdown.cancelled() => return,
            };
            match attempt {
                Ok(mut conn) => {
                    backoff = FIRST_BACKOFF;
                    self.breaker.success();
                    self.peer.store(Some(Arc::new(conn.service.peer().clone())));
                    if let Some(g) = gateway.upgrade() {
                        g.apply_tools(&self, std::mem::take(&mut conn.tools));
                    }
                    self.set_health(Some(UpstreamState::Ready), None);
                    // a restarted upstream: its sessions' subscriptions are made again
                    crate::subscriptions::resubscribe(&self).await;
                    self.ask_for_logs().await;
                    if let Some(f) = first.take() {
                        let _ = f.send(());
                    }
                    let why = self.serve(&mut conn, &gateway, &shutdown).await;
                    self.peer.store(None);
                    drop(conn);
                    let Some(why) = why else { return };
                    tracing::warn!(upstream = %self.name(), why, "the upstream stopped; restarting it");
                    self.set_health(Some(UpstreamState::Down), Some(why));
                }
                Err(why) => {
                    tracing::warn!(upstream = %self.name(), why, "the upstream could not be started");
                    self.set_health(Some(UpstreamState::Down), Some(why));
                    if let Some(f) = first.take() {
                        let _ = f.send(());
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = shutdown.cancelled() => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            self.health.lock().restarts += 1;
            metrics::counter!("toolgate_upstream_restarts_total", "upstream" => self.config.name.clone())
                .increment(1);
        }
    }

    /// Serves one connection until it ends; `None` when the gateway shuts down, else why the
    /// connection ended.
    async fn serve(
        self: &Arc<Self>,
        conn: &mut connect::Connection,
        gateway: &Weak<GatewayInner>,
        shutdown: &CancellationToken,
    ) -> Option<String> {
        let peer = conn.service.peer().clone();
        // when the tools and the prompts were last listed again
        let (mut tools_listed, mut prompts_listed) = (None, None);
        // a look at the connection and the drops every 250 ms, however busy the other
        // branches are (a sleep made anew each turn would never end while an upstream floods)
        let mut look = tokio::time::interval(Duration::from_millis(250));
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // the drops last recorded in the store's health, and when
        let (mut recorded_drops, mut drops_recorded_at) =
            (self.budgets.dropped(), tokio::time::Instant::now());
        loop {
            tokio::select! {
                // in this order: an upstream that keeps sending `list_changed` (each relisting
                // awaited here) must not starve the look, which chance alone could
                biased;
                () = shutdown.cancelled() => return None,
                _ = look.tick() => {
                    // drops are recorded with the health at most once a second
                    let dropped = self.budgets.dropped();
                    if dropped != recorded_drops
                        && drops_recorded_at.elapsed() >= Duration::from_secs(1)
                    {
                        recorded_drops = dropped;
                        drops_recorded_at = tokio::time::Instant::now();
                        let detail = self.health.lock().detail.clone();
                        self.set_health(None, detail);
                    }
                    if peer.is_transport_closed() || conn.service.is_closed() {
                        return Some(self.ended(conn));
                    }
                    if let Some(p) = &mut conn.process {
                        if p.exit_status().is_some() {
                            return Some(self.ended(conn));
                        }
                    }
                }
                () = self.restart.notified() => {
                    if let Some(why) = self.restart_asked(peer.is_transport_closed()) {
                        return Some(match why {
                            Restart::Closed => self.ended(conn),
                            Restart::Hung => "restarted: it stopped answering (its breaker opened)".into(),
                        });
                    }
                }
                () = self.list_changed.notified() => {
                    if !spaced(&mut tools_listed, shutdown).await {
                        return None;
                    }
                    let listed = tokio::time::timeout(
                        self.config.startup_timeout(),
                        crate::listing::all::<rmcp::model::Tool>(&peer, self.name()),
                    )
                    .await;
                    match listed {
                        Ok(Ok(tools)) => {
                            if let Some(g) = gateway.upgrade() {
                                g.apply_tools(self, tools);
                            }
                        }
                        Ok(Err(e)) => tracing::warn!(upstream = %self.name(), error = %e, "listing the changed tools"),
                        Err(_) => tracing::warn!(upstream = %self.name(), "listing the changed tools timed out"),
                    }
                }
                () = self.prompts_changed.notified() => {
                    if !spaced(&mut prompts_listed, shutdown).await {
                        return None;
                    }
                    if let Some(g) = gateway.upgrade() {
                        let i = g.upstreams.iter().position(|u| Arc::ptr_eq(u, self));
                        if let Some(i) = i {
                            crate::catalog::UpstreamCatalog::new(g).relist_prompts(i).await;
                        }
                    }
                }
            }
        }
    }

    /// Asks an upstream that declares logging for every log message (`logging/setLevel`
    /// `debug`): each client's own level filters what it gets ([`crate::logs`]).
    async fn ask_for_logs(&self) {
        if self.client_log.is_none() || !crate::catalog::declares(self, |c| c.logging.is_some()) {
            return;
        }
        #[allow(deprecated)] // logging/setLevel: what 2025-11-25 servers answer
        let asked = crate::catalog::ask(self, "logging/setLevel", |p| async move {
            p.set_level(rmcp::model::SetLevelRequestParams::new(
                rmcp::model::LoggingLevel::Debug,
            ))
            .await
        })
        .await;
        if let Err(e) = asked {
            tracing::warn!(upstream = %self.name(), error = %e, "asking the upstream for its log messages");
        }
    }

    fn ended(&self, conn: &mut connect::Connection) -> String {
        let status = conn
            .process
            .as_mut()
            .and_then(|p| p.exit_status())
            .map(|s| format!("the server exited ({s})"))
            .unwrap_or_else(|| "the connection closed".to_string());
        let tail = connect::stderr_text(&conn.stderr);
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its stderr ended with: {tail}")
        }
    }
}

/// Waits until [`MIN_RELIST_INTERVAL`] has passed since `last` (when there was a last),
/// then sets `last` to now. False when the gateway shut down meanwhile.
async fn spaced(last: &mut Option<tokio::time::Instant>, shutdown: &CancellationToken) -> bool {
    if let Some(at) = *last {
        tokio::select! {
            () = tokio::time::sleep_until(at + MIN_RELIST_INTERVAL) => {}
            () = shutdown.cancelled() => return false,
        }
    }
    *last = Some(tokio::time::Instant::now());
    true
}

/// A breaker with the entry's threshold and cool-down.
pub(crate) fn breaker(config: &UpstreamConfig) -> Breaker {
    Breaker::new(
        config
            .failure_threshold
            .unwrap_or(DEFAULT_FAILURE_THRESHOLD),
        Duration::from_millis(config.cooldown_ms.unwrap_or(DEFAULT_COOLDOWN_MS)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use tokio::time::Instant;

    fn upstream(entry: serde_json::Value, dir: &std::path::Path) -> Upstream {
        let config: UpstreamConfig = serde_json::from_value(entry).unwrap();
        let store = Store::open(dir.join("toolgate.db")).unwrap();
        Upstream::new(config, store, None, None)
    }

    #[test]
    fn a_restart_asked_for_an_earlier_connection_leaves_the_live_one_alone() {
        let t = tempfile::tempdir().unwrap();
        let u = upstream(
            serde_json::json!({"name": "up", "command": "srv", "failure_threshold": 2}),
            t.path(),
        );
        // a call found the last connection closed after its supervisor had moved on: the
        // request is kept by the Notify, and the new connection (transport open, breaker
        // closed) must not be ended for it
        u.restart.notify_one();
        assert!(u.restart.notified().now_or_never().is_some(), "kept");
        assert_eq!(u.restart_asked(false), None);
        // the live connection's transport closed
        assert_eq!(u.restart_asked(true), Some(Restart::Closed));
        // its breaker opened: a stdio server that may be hung is started again
        let admission = u.breaker.admit().unwrap();
        u.call_failed(admission, "timed out");
        assert_eq!(u.restart_asked(false), None, "one failure of two");
        let admission = u.breaker.admit().unwrap();
        u.call_failed(admission, "timed out");
        assert!(
            u.restart.notified().now_or_never().is_some(),
            "the breaker's opening asks for a restart"
        );
        assert_eq!(u.restart_asked(false), Some(Restart::Hung));
        // the new connection closes the breaker: a request left from the opening is stale
        u.breaker.success();
        assert_eq!(u.restart_asked(false), None);
    }

    #[test]
    fn an_http_upstream_is_not_restarted_for_its_breaker() {
        let t = tempfile::tempdir().unwrap();
        let u = upstream(
            serde_json::json!({"name": "up", "url": "http://127.0.0.1:9/mcp", "failure_threshold": 1}),
            t.path(),
        );
        let admission = u.breaker.admit().unwrap();
        u.call_failed(admission, "refused");
        assert_ne!(u.breaker.state(), BreakerState::Closed);
        assert!(u.restart.notified().now_or_never().is_none(), "not asked");
        assert_eq!(u.restart_asked(false), None);
        assert_eq!(u.restart_asked(true), Some(Restart::Closed));
    }

    #[tokio::test]
    async fn listings_again_are_a_second_apart_and_a_shutdown_ends_the_wait() {
        let shutdown = CancellationToken::new();
        let mut last = None;
        let start = Instant::now();
        assert!(spaced(&mut last, &shutdown).await);
        assert!(
            start.elapsed() < MIN_RELIST_INTERVAL / 2,
            "the first at once"
        );
        assert!(spaced(&mut last, &shutdown).await);
        assert!(
            start.elapsed() >= MIN_RELIST_INTERVAL,
            "the next a second after"
        );
        let cancel = shutdown.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        let waited = Instant::now();
        assert!(!spaced(&mut last, &shutdown).await, "shut down meanwhile");
        assert!(waited.elapsed() < MIN_RELIST_INTERVAL);
    }
}
