//! Progress while a call runs: when the client sent a `progressToken`, a
//! `notifications/progress` every interval saying the call is still running (`progress` is the
//! elapsed time in seconds, which only grows, as the specification requires), until the tool
//! reports progress of its own, through its `ToolContext` ([`channel`]) or
//! [`crate::request::report_progress`].
//!
//! A tool's reports are queued without blocking the tool (at most [`QUEUE`]; more are
//! dropped while the client is slow) and sent in order; the ones queued when the call ends
//! are sent before its result. The values sent only grow: a report whose `progress` is not
//! above the last one sent (or is not a finite number) goes out with the next larger value.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};
use toolgate_core::{ProgressReport, ProgressSink};

/// How many of a tool's reports may wait for the client.
pub const QUEUE: usize = 256;

/// A sink for the pipeline ([`toolgate_core::Pipeline::dispatch_with_progress`]) and the
/// receiving end for [`Ticks::reports`].
pub fn channel() -> (Arc<dyn ProgressSink>, mpsc::Receiver<ProgressReport>) {
    let (tx, rx) = mpsc::channel(QUEUE);
    let sink = move |report: ProgressReport| {
        if tx.try_send(report).is_err() {
            tracing::debug!("a progress report was dropped: the client is behind");
        }
    };
    (Arc::new(sink), rx)
}

/// "Still running" notifications for one call.
pub struct Ticks<'a> {
    /// The client.
    pub peer: &'a Peer<RoleServer>,
    /// The client's token for this call.
    pub token: ProgressToken,
    /// The interval.
    pub every: Duration,
    /// The tool, named in the message.
    pub tool: &'a str,
    /// Set when the tool reports its own progress: the ticks stop.
    pub silenced: Arc<AtomicBool>,
    /// The tool's own reports ([`channel`]).
    pub reports: mpsc::Receiver<ProgressReport>,
}

impl Ticks<'_> {
    /// Runs `call`, notifying every interval until it completes.
    pub async fn around<F: Future>(self, call: F) -> F::Output {
        let Ticks {
            peer,
            token,
            every,
            tool,
            silenced,
            mut reports,
        } = self;
        tokio::pin!(call);
        let started = Instant::now();
        let mut ticks = tokio::time::interval_at(started + every, every);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut out = Outgoing {
            peer,
            token,
            last: 0.0,
        };
        let mut open = true;
        loop {
            tokio::select! {
                biased;
                done = &mut call => {
                    // what the tool reported before it returned goes out before the result
                    while let Ok(r) = reports.try_recv() {
                        out.send(r).await;
                    }
                    return done;
                }
                r = reports.recv(), if open => match r {
                    Some(r) => {
                        silenced.store(true, Ordering::Relaxed);
                        out.send(r).await;
                    }
                    None => open = false,
                },
                _ = ticks.tick() => {
                    if silenced.load(Ordering::Relaxed) {
                        continue;
                    }
                    let secs = started.elapsed().as_secs_f64();
                    out.send(ProgressReport {
                        progress: secs,
                        total: None,
                        message: Some(format!("{tool} is still running ({secs:.0} s)")),
                    })
                    .await;
                }
            }
        }
    }
}

/// The notifications of one call, with the last `progress` sent.
struct Outgoing<'a> {
    peer: &'a Peer<RoleServer>,
    token: ProgressToken,
    last: f64,
}

impl Outgoing<'_> {
    async fn send(&mut self, report: ProgressReport) {
        let progress = grown(self.last, report.progress);
        self.last = progress;
        let mut note = ProgressNotificationParam::new(self.token.clone(), progress);
        note.total = report.total;
        note.message = report.message;
        if let Err(e) = self.peer.notify_progress(note).await {
            tracing::debug!(error = %e, "progress notification not sent");
        }
    }
}

/// `next` when it is a finite number above `last`, else the next larger value than `last`.
fn grown(last: f64, next: f64) -> f64 {
    if next.is_finite() && next > last {
        next
    } else {
        last.next_up()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_sent_only_grow() {
        assert_eq!(grown(0.0, 3.0), 3.0);
        assert!(grown(3.0, 1.0) > 3.0);
        assert!(grown(3.0, 3.0) > 3.0);
        assert!(grown(3.0, f64::NAN) > 3.0);
        assert!(grown(3.0, f64::INFINITY).is_finite());
        assert!(grown(3.0, -0.0) > 3.0);
    }
}
