//! Progress while a call runs: when the client sent a `progressToken`, a
//! `notifications/progress` every interval saying the call is still running (`progress` is the
//! elapsed time in seconds, which only grows, as the specification requires), until the tool
//! reports progress of its own ([`crate::request::report_progress`]).

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{Instant, MissedTickBehavior};

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
        } = self;
        tokio::pin!(call);
        let started = Instant::now();
        let mut ticks = tokio::time::interval_at(started + every, every);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                out = &mut call => return out,
                _ = ticks.tick() => {
                    if silenced.load(Ordering::Relaxed) {
                        continue;
                    }
                    let secs = started.elapsed().as_secs_f64();
                    let note = ProgressNotificationParam::new(token.clone(), secs)
                        .with_message(format!("{tool} is still running ({secs:.0} s)"));
                    if let Err(e) = peer.notify_progress(note).await {
                        tracing::debug!(error = %e, "progress notification not sent");
                    }
                }
            }
        }
    }
}
