//! A circuit breaker: after `threshold` consecutive failures (a transport error, a crash, a
//! timeout) it opens, and calls are answered at once with `upstream_unavailable` for the
//! cool-down; then one probe call goes through (half-open): its success closes the breaker,
//! its failure opens it for another cool-down. A result the upstream sends, an error result
//! included, is a success: the upstream answered.

use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// The state shown in health: `closed`, `open` or `half_open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are refused until the cool-down ends.
    Open,
    /// One probe call is in flight.
    HalfOpen,
}

impl BreakerState {
    /// `closed`, `open`, `half_open`.
    pub const fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// One breaker (per upstream, and per upstream tool).
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cooldown: Duration,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    consecutive: u32,
    opened: Option<Instant>,
    probing: bool,
}

/// Leave to make one call; report how it went with [`Breaker::success`],
/// [`Breaker::failure`] or [`Breaker::abandoned`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// The call is the half-open probe.
    pub probe: bool,
}

impl Breaker {
    /// A closed breaker that opens after `threshold` (at least 1) consecutive failures and
    /// stays open for `cooldown`.
    pub fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker {
            threshold: threshold.max(1),
            cooldown,
            inner: Mutex::new(Inner {
                consecutive: 0,
                opened: None,
                probing: false,
            }),
        }
    }

    /// Admits a call, or says how long the breaker stays open.
    ///
    /// # Errors
    /// The time left of the cool-down (zero while a probe is in flight).
    pub fn admit(&self) -> Result<Admission, Duration> {
        let mut s = self.inner.lock();
        let Some(opened) = s.opened else {
            return Ok(Admission { probe: false });
        };
        if s.probing {
            return Err(Duration::ZERO);
        }
        let elapsed = opened.elapsed();
        if elapsed < self.cooldown {
            return Err(self.cooldown - elapsed);
        }
        s.probing = true;
        Ok(Admission { probe: true })
    }

    /// The call got an answer: the breaker closes.
    pub fn success(&self) {
        let mut s = self.inner.lock();
        s.consecutive = 0;
        s.opened = None;
        s.probing = false;
    }

    /// The call failed: counts towards opening; a failed probe opens again. Returns whether
    /// this failure opened the breaker.
    pub fn failure(&self, admission: Admission) -> bool {
        let mut s = self.inner.lock();
        s.consecutive = s.consecutive.saturating_add(1);
        if admission.probe || (s.opened.is_none() && s.consecutive >= self.threshold) {
            s.opened = Some(Instant::now());
            s.probing = false;
            return true;
        }
        false
    }

    /// The call ended without an outcome (the caller cancelled it): a probe's leave is
    /// given back.
    pub fn abandoned(&self, admission: Admission) {
        if admission.probe {
            self.inner.lock().probing = false;
        }
    }

    /// The state now.
    pub fn state(&self) -> BreakerState {
        let s = self.inner.lock();
        match (s.opened, s.probing) {
            (None, _) => BreakerState::Closed,
            (Some(_), true) => BreakerState::HalfOpen,
            (Some(_), false) => BreakerState::Open,
        }
    }

    /// Consecutive failures counted now.
    pub fn consecutive_failures(&self) -> u32 {
        self.inner.lock().consecutive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_probes_after_the_cooldown_and_closes_on_success() {
        let b = Breaker::new(2, Duration::from_millis(40));
        let a = b.admit().unwrap();
        assert!(!b.failure(a));
        b.success();
        assert!(!b.failure(b.admit().unwrap()));
        assert!(b.failure(b.admit().unwrap()));
        assert_eq!(b.state(), BreakerState::Open);
        assert!(b.admit().unwrap_err() > Duration::ZERO);
        std::thread::sleep(Duration::from_millis(50));
        let probe = b.admit().unwrap();
        assert!(probe.probe);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert_eq!(b.admit(), Err(Duration::ZERO));
        // a failed probe opens it again for a whole cool-down
        assert!(b.failure(probe));
        assert!(b.admit().is_err());
        std::thread::sleep(Duration::from_millis(50));
        let probe = b.admit().unwrap();
        b.abandoned(probe);
        let probe = b.admit().unwrap();
        b.success();
        assert!(probe.probe);
        assert_eq!(b.state(), BreakerState::Closed);
        assert_eq!(b.consecutive_failures(), 0);
    }
}
