//! Counting the tool calls in flight, so a shutdown can let them finish within a grace period.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// A count of running calls and a way to wait for it to reach zero.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// Held while one call runs; dropping it ends the call.
#[derive(Debug)]
pub struct Guard<'a>(&'a InFlight);

/// [`Guard`] for a shared count, to move into what outlives the caller (a response body).
#[derive(Debug)]
pub struct OwnedGuard(std::sync::Arc<InFlight>);

impl InFlight {
    /// Marks one call as running until the guard is dropped.
    pub fn enter(&self) -> Guard<'_> {
        self.count.fetch_add(1, Ordering::AcqRel);
        Guard(self)
    }

    /// Marks one call as running until the owned guard is dropped.
    pub fn enter_owned(self: &std::sync::Arc<Self>) -> OwnedGuard {
        self.count.fetch_add(1, Ordering::AcqRel);
        OwnedGuard(self.clone())
    }

    fn leave(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Calls running now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Waits until no call runs or `grace` has passed; `true` when none is left.
    pub async fn wait_idle(&self, grace: Duration) -> bool {
        let now = tokio::time::Instant::now();
        // a grace past what an Instant holds waits as long as one can (about a century)
        let deadline = now
            .checked_add(grace)
            .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400)))
            .unwrap_or(now);
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            // Registered before the count is read, so a drop in between still wakes us.
            notified.as_mut().enable();
            if self.count() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.count() == 0;
            }
        }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl Drop for OwnedGuard {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_for_the_last_call() {
        let f = std::sync::Arc::new(InFlight::default());
        assert!(f.wait_idle(Duration::from_millis(1)).await);
        let f2 = f.clone();
        let task = tokio::spawn(async move {
            let _g = f2.enter();
            tokio::time::sleep(Duration::from_millis(50)).await;
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(f.count(), 1);
        assert!(!f.wait_idle(Duration::from_millis(5)).await);
        assert!(f.wait_idle(Duration::from_secs(5)).await);
        task.await.unwrap();
    }
}
