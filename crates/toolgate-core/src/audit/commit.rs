//! Waiting for an audit record to be durable: [`AuditCommit`], what
//! [`AuditSink::record_durable`](super::AuditSink::record_durable) returns, and
//! [`CommitTracker`], the counter a sink with a writer thread settles as it commits.
//!
//! A sink that writes from a background thread gives each durable record a ticket, numbered
//! from 1 in the order the writer will write them. The writer calls [`CommitTracker::settle`]
//! after each group with the last ticket of the group and whether it was committed; a waiter
//! ([`CommitTracker::wait`]) resolves once its ticket is settled. Waiting is asynchronous, so
//! many calls wait at once without holding a thread each: that is what lets one commit cover
//! all of them (group commit).

use futures::future::BoxFuture;
use parking_lot::Mutex;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::Notify;

/// An audit record that could not be made durable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the audit record was not committed: {reason}")]
pub struct AuditError {
    reason: Arc<str>,
}

impl AuditError {
    /// An error saying why (`"disk I/O error"`, `"the audit writer stopped"`).
    pub fn new(reason: impl Into<Arc<str>>) -> Self {
        AuditError {
            reason: reason.into(),
        }
    }

    /// Why the record was not committed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Resolves once a record handed to
/// [`AuditSink::record_durable`](super::AuditSink::record_durable) is durable: `Ok(())` once
/// committed, [`AuditError`] once the sink gave up on it. Dropping it does not withdraw the
/// record, which is still written.
#[must_use = "an AuditCommit says nothing unless awaited"]
pub struct AuditCommit {
    inner: Inner,
}

enum Inner {
    Ready(Option<Result<(), AuditError>>),
    Pending(BoxFuture<'static, Result<(), AuditError>>),
}

impl AuditCommit {
    /// A commit whose outcome is already known.
    pub fn ready(outcome: Result<(), AuditError>) -> Self {
        AuditCommit {
            inner: Inner::Ready(Some(outcome)),
        }
    }

    /// A commit that resolves with `wait`.
    pub fn pending(wait: impl Future<Output = Result<(), AuditError>> + Send + 'static) -> Self {
        AuditCommit {
            inner: Inner::Pending(Box::pin(wait)),
        }
    }
}

impl std::fmt::Debug for AuditCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Ready(r) => f.debug_tuple("AuditCommit::Ready").field(r).finish(),
            Inner::Pending(_) => f.write_str("AuditCommit::Pending"),
        }
    }
}

impl Future for AuditCommit {
    type Output = Result<(), AuditError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().inner {
            Inner::Ready(r) => Poll::Ready(
                r.take()
                    .unwrap_or_else(|| Err(AuditError::new("polled after completion"))),
            ),
            Inner::Pending(f) => f.as_mut().poll(cx),
        }
    }
}

/// Tickets settled by a writer thread, and the waiters for them (see the module docs).
#[derive(Debug, Default)]
pub struct CommitTracker {
    /// Every ticket up to this one is settled.
    settled: AtomicU64,
    /// The writer is gone: tickets past `settled` never will be.
    closed: AtomicBool,
    /// Tickets given up on, in ranges (merged when adjacent), with the last error of each.
    lost: Mutex<Vec<(Range<u64>, AuditError)>>,
    notify: Notify,
}

impl CommitTracker {
    /// A tracker with nothing settled.
    pub fn new() -> Arc<Self> {
        Arc::new(CommitTracker::default())
    }

    /// Settles every ticket up to `upto` (inclusive): committed when `error` is `None`, given
    /// up on otherwise. Tickets settle in order; an `upto` at or below what is settled already
    /// changes nothing.
    pub fn settle(&self, upto: u64, error: Option<&AuditError>) {
        let before = self.settled.load(Ordering::Acquire);
        if upto <= before {
            return;
        }
        if let Some(e) = error {
            let mut lost = self.lost.lock();
            let from = before + 1;
            match lost.last_mut() {
                Some((range, last)) if range.end == from => {
                    range.end = upto + 1;
                    *last = e.clone();
                }
                _ => lost.push((from..upto + 1, e.clone())),
            }
        }
        self.settled.store(upto, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// The writer is gone: every ticket not settled yet fails.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Whether `ticket` is settled, and how.
    fn check(&self, ticket: u64) -> Option<Result<(), AuditError>> {
        if self.settled.load(Ordering::Acquire) >= ticket {
            let lost = self.lost.lock();
            return Some(match lost.iter().rev().find(|(r, _)| r.contains(&ticket)) {
                Some((_, e)) => Err(e.clone()),
                None => Ok(()),
            });
        }
        if self.closed.load(Ordering::Acquire) {
            // settled between the two loads, or never will be
            if self.settled.load(Ordering::Acquire) >= ticket {
                return self.check(ticket);
            }
            return Some(Err(AuditError::new("the audit writer stopped")));
        }
        None
    }

    /// Resolves once `ticket` is settled (at once when it already is).
    pub fn wait(self: &Arc<Self>, ticket: u64) -> AuditCommit {
        if let Some(r) = self.check(ticket) {
            return AuditCommit::ready(r);
        }
        let tracker = self.clone();
        AuditCommit::pending(async move {
            loop {
                let notified = tracker.notify.notified();
                tokio::pin!(notified);
                // registered before the check: a settle between the check and the await
                // still wakes this waiter
                notified.as_mut().enable();
                if let Some(r) = tracker.check(ticket) {
                    return r;
                }
                notified.await;
            }
        })
    }
}

/// Closes a tracker when dropped: a writer thread holds one, so its waiters learn it is gone
/// however it ends, by a panic too.
#[derive(Debug)]
pub struct CloseOnDrop(pub Arc<CommitTracker>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tickets_resolve_when_settled_and_fail_when_lost() {
        let t = CommitTracker::new();
        let first = t.wait(1);
        let second = t.wait(3);
        let fourth = t.wait(4);
        let lost = AuditError::new("disk I/O error");
        let settler = {
            let t = t.clone();
            std::thread::spawn(move || {
                t.settle(2, None);
                t.settle(3, Some(&lost));
                t.settle(3, None); // already settled: no change
            })
        };
        assert_eq!(first.await, Ok(()));
        assert_eq!(
            second.await.unwrap_err().reason(),
            "disk I/O error",
            "ticket 3 was in the lost group"
        );
        settler.join().unwrap();
        assert_eq!(t.wait(2).await, Ok(()));
        t.settle(5, Some(&AuditError::new("full")));
        // adjacent lost groups merge, keeping the last error
        assert_eq!(t.lost.lock().len(), 1);
        assert_eq!(fourth.await.unwrap_err().reason(), "full");
        t.close();
        assert_eq!(t.wait(5).await.unwrap_err().reason(), "full");
        assert_eq!(
            t.wait(6).await.unwrap_err().reason(),
            "the audit writer stopped"
        );
    }

    #[test]
    fn a_ready_commit_is_ready_once() {
        let mut c = AuditCommit::ready(Ok(()));
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(Pin::new(&mut c).poll(&mut cx), Poll::Ready(Ok(())));
        assert!(matches!(
            Pin::new(&mut c).poll(&mut cx),
            Poll::Ready(Err(_))
        ));
    }
}
