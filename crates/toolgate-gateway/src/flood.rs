//! The budgets of what an upstream sends unasked: its log messages, progress notifications,
//! resource updates, `notifications/resources/list_changed` and its requests to the client
//! (`sampling/createMessage`, `elicitation/create`: [`crate::relay`]), each metered as it
//! arrives, before anything else is done with it.
//!
//! Each kind of each upstream has a [`Budget`]: a GCRA limiter (the `governor` crate) of the
//! entry's `notifications` rate and burst (`toolgate_config::upstreams::NotificationLimits`).
//! A notification within it is handled as before; one over it is dropped, never queued, so a
//! flooding upstream costs neither the sessions' send queues nor the clients' context. Drops
//! are counted: in the budget ([`Budget::dropped`], shown by `toolgate stats` through the
//! upstream's health), in the metric `toolgate_upstream_notifications_dropped_total` (labels
//! `upstream`, `kind`), and in the log, at most once a [`LOG_WINDOW`] (the first drop of a
//! window is logged with the drops since the last line).
//!
//! `notifications/tools/list_changed` and `prompts/list_changed` are not metered here: they
//! coalesce (a `Notify`), and the supervisor lists an upstream's tools or prompts again at
//! most once a second (`MIN_RELIST_INTERVAL` of `upstream.rs`).

use governor::clock::{Clock, DefaultClock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use parking_lot::Mutex;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_config::upstreams::{NotificationKind, NotificationLimits};

/// The shortest time between two log lines about one budget's drops: 10 s.
pub const LOG_WINDOW: Duration = Duration::from_secs(10);

/// The name of the counter of dropped notifications (labels `upstream`, `kind`).
pub const DROPPED_METRIC: &str = "toolgate_upstream_notifications_dropped_total";

/// One kind of one upstream's notifications: how many may pass, and what was dropped.
pub struct Budget<C: Clock = DefaultClock> {
    limiter: RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<C::Instant>>,
    clock: C,
    upstream: Arc<str>,
    kind: NotificationKind,
    /// Every notification dropped so far.
    dropped: AtomicU64,
    /// When the last log line was written, and the drops since.
    window: Mutex<(Option<C::Instant>, u64)>,
}

impl Budget {
    /// `kind`'s budget for `upstream`: a notification every `period`, bursts of `burst`.
    pub fn new(upstream: Arc<str>, kind: NotificationKind, period: Duration, burst: u32) -> Self {
        Budget::with_clock(upstream, kind, period, burst, DefaultClock::default())
    }
}

impl<C: Clock + Clone> Budget<C> {
    /// As [`Budget::new`], timed by `clock`.
    pub fn with_clock(
        upstream: Arc<str>,
        kind: NotificationKind,
        period: Duration,
        burst: u32,
        clock: C,
    ) -> Self {
        // a zero period or burst is refused at load; read as the smallest that is not
        let quota = Quota::with_period(period.max(Duration::from_nanos(1)))
            .expect("a period above zero")
            .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
        Budget {
            limiter: RateLimiter::direct_with_clock(quota, clock.clone()),
            clock,
            upstream,
            kind,
            dropped: AtomicU64::new(0),
            window: Mutex::new((None, 0)),
        }
    }

    /// One notification arrived: whether it may pass. One that may not is counted, and the
    /// drops are logged when the window since the last line is over.
    pub fn admit(&self) -> bool {
        if self.limiter.check().is_ok() {
            return true;
        }
        self.dropped.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(
            DROPPED_METRIC,
            "upstream" => self.upstream.clone(),
            "kind" => self.kind.as_str(),
        )
        .increment(1);
        if let Some(n) = self.over() {
            tracing::warn!(
                upstream = %self.upstream,
                kind = self.kind.as_str(),
                dropped = n,
                "the upstream sends more notifications of this kind than its budget \
                 (`notifications` of its entry) allows; those over it are dropped"
            );
        }
        false
    }

    /// Counts one drop in the window: the drops to log now (those since the last line), when
    /// the last line is at least [`LOG_WINDOW`] old.
    fn over(&self) -> Option<u64> {
        let now = self.clock.now();
        let mut window = self.window.lock();
        window.1 += 1;
        let due = window
            .0
            .is_none_or(|last| Duration::from(now.duration_since(last)) >= LOG_WINDOW);
        if !due {
            return None;
        }
        let n = std::mem::take(&mut window.1);
        window.0 = Some(now);
        Some(n)
    }

    /// Every notification of this budget dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// One upstream's budgets, one a kind.
pub(crate) struct Budgets {
    log: Budget,
    progress: Budget,
    resource_updated: Budget,
    resources_list_changed: Budget,
    requests: Budget,
}

impl Budgets {
    /// The budgets of the upstream `upstream` from its entry's `notifications`.
    pub(crate) fn new(upstream: &str, limits: &NotificationLimits) -> Budgets {
        let upstream: Arc<str> = Arc::from(upstream);
        let budget = |kind| {
            let (period, burst) = limits.budget(kind);
            Budget::new(upstream.clone(), kind, period, burst)
        };
        Budgets {
            log: budget(NotificationKind::Log),
            progress: budget(NotificationKind::Progress),
            resource_updated: budget(NotificationKind::ResourceUpdated),
            resources_list_changed: budget(NotificationKind::ResourcesListChanged),
            requests: budget(NotificationKind::Requests),
        }
    }

    /// The budget of `kind`.
    pub(crate) fn of(&self, kind: NotificationKind) -> &Budget {
        match kind {
            NotificationKind::Log => &self.log,
            NotificationKind::Progress => &self.progress,
            NotificationKind::ResourceUpdated => &self.resource_updated,
            NotificationKind::ResourcesListChanged => &self.resources_list_changed,
            NotificationKind::Requests => &self.requests,
        }
    }

    /// Every notification of the upstream dropped so far, of every kind.
    pub(crate) fn dropped(&self) -> u64 {
        NotificationKind::ALL
            .iter()
            .map(|k| self.of(*k).dropped())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;
    use pretty_assertions::assert_eq;

    fn budget(per_second: u32, burst: u32) -> (Budget<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let b = Budget::with_clock(
            Arc::from("up"),
            NotificationKind::Log,
            Duration::from_secs(1) / per_second,
            burst,
            clock.clone(),
        );
        (b, clock)
    }

    fn admitted(b: &Budget<FakeRelativeClock>, n: usize) -> usize {
        (0..n).filter(|_| b.admit()).count()
    }

    #[test]
    fn a_burst_passes_then_the_steady_rate_and_the_rest_is_counted() {
        let (b, clock) = budget(10, 25);
        // a flood at one instant: the burst passes, nothing more
        assert_eq!(admitted(&b, 1000), 25);
        assert_eq!(b.dropped(), 975);
        // then 10 a second, however many come
        for _ in 0..5 {
            clock.advance(Duration::from_secs(1));
            assert_eq!(admitted(&b, 1000), 10);
        }
        assert_eq!(b.dropped(), 975 + 5 * 990);
        // a quiet while refills the burst, no more
        clock.advance(Duration::from_secs(60));
        assert_eq!(admitted(&b, 1000), 25);
    }

    #[test]
    fn within_the_budget_nothing_is_dropped() {
        let (b, clock) = budget(20, 20);
        for _ in 0..100 {
            assert!(b.admit());
            clock.advance(Duration::from_millis(50));
        }
        assert_eq!(b.dropped(), 0);
    }

    #[test]
    fn drops_are_logged_once_a_window_with_the_count_since_the_last_line() {
        let (b, clock) = budget(1, 1);
        assert!(b.admit());
        // the first drop is logged at once
        assert_eq!(b.over(), Some(1));
        // the rest of the window: counted, not logged
        for _ in 0..500 {
            assert_eq!(b.over(), None);
        }
        clock.advance(LOG_WINDOW - Duration::from_millis(1));
        assert_eq!(b.over(), None);
        clock.advance(Duration::from_millis(1));
        assert_eq!(b.over(), Some(502), "the drops since the last line");
        assert_eq!(b.over(), None);
    }

    #[test]
    fn each_kind_has_a_budget_of_its_own_from_the_entry_or_the_default() {
        let limits: NotificationLimits = serde_json::from_value(serde_json::json!({
            "log": {"per_second": 2, "burst": 3},
            "resources_list_changed": {"per_minute": 6}
        }))
        .unwrap();
        let budgets = Budgets::new("up", &limits);
        let passed = |kind| (0..1000).filter(|_| budgets.of(kind).admit()).count();
        // the real clock runs meanwhile: a steady rate may let one more pass on a slow machine
        let about = |n: usize, want: usize| (want..=want + 2).contains(&n);
        let log = passed(NotificationKind::Log);
        assert!(about(log, 3), "{log}");
        let changed = passed(NotificationKind::ResourcesListChanged);
        assert!(about(changed, 6), "{changed}");
        // the defaults' bursts
        let progress = passed(NotificationKind::Progress);
        assert!(about(progress, 50), "{progress}");
        let updated = passed(NotificationKind::ResourceUpdated);
        assert!(about(updated, 50), "{updated}");
        let all = 4000 - (log + changed + progress + updated);
        assert_eq!(budgets.dropped(), all as u64);
    }
}
