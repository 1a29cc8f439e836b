//! Progress while a call runs: when the client sent a `progressToken`, a
//! `notifications/progress` every interval saying the call is still running (`progress` is the
//! elapsed time in seconds, which only grows, as the specification requires).

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use std::future::Future;
use std::time::Duration;
use tokio::time::{Instant, MissedTickBehavior};

/// Runs `call`, notifying `peer` every `every` until it completes.
pub async fn with_progress<F: Future>(
    call: F,
    peer: &Peer<RoleServer>,
    token: ProgressToken,
    every: Duration,
    tool: &str,
) -> F::Output {
    tokio::pin!(call);
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at(started + every, every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            out = &mut call => return out,
            _ = ticks.tick() => {
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
