//! Many side-effecting calls under injected faults, each sent again until it has an answer
//! that settles it, as an agent loop or a client would: the ledger's promise under load is
//! that the [`CountingServer`] sees no idempotency key twice.

use crate::counting::{CountingServer, Fault};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{ErrorKind, Pipeline, ToolCall, ToolResult};

/// The faults of a chaos run, by weight: half of the runs deliver and succeed; the rest fail
/// before delivering (transient, no effect), deliver then fail (the failure is the key's
/// result), deliver then hang past the timeout (unsettled: the reconcile hook finds it done),
/// hang before delivering (unsettled: found not done, run again), or are slow.
pub fn mix() -> Vec<(u32, Fault)> {
    vec![
        (50, Fault::None),
        (12, Fault::FailBefore),
        (12, Fault::SendThenFail),
        (6, Fault::SendThenHang),
        (6, Fault::HangBefore),
        (14, Fault::Slow(20)),
    ]
}

/// What a chaos run saw.
#[derive(Debug, Default)]
pub struct Report {
    /// Calls dispatched in all (first sends and re-sends).
    pub calls: usize,
    /// Answers that were replays.
    pub replays: usize,
    /// `in_progress` answers.
    pub in_progress: usize,
    /// `outcome_unknown` answers (then settled by the reconcile hook on a re-send).
    pub unknown: usize,
    /// Failures before acting, sent again.
    pub released: usize,
}

/// Sends `ops` distinct side-effecting calls of the `send` tool (key `op-N`), `workers` at a
/// time, each again until its answer settles it: a success, or a recorded failure (replayed).
/// Every seventh call is sent twice at once. `in_progress` waits and sends again;
/// `outcome_unknown` and a failure before acting send again.
///
/// # Panics
/// On any other answer, or a call that does not settle in 100 sends.
pub async fn run(p: &Pipeline, ops: usize, workers: usize) -> Report {
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let (p, next) = (p.clone(), next.clone());
            tokio::spawn(async move {
                let session = p.session(format!("w{w}")).build().expect("a session");
                let mut report = Report::default();
                loop {
                    let op = next.fetch_add(1, Ordering::Relaxed);
                    if op >= ops {
                        return report;
                    }
                    settle(&p, &session, op, &mut report).await;
                }
            })
        })
        .collect();
    let mut total = Report::default();
    for t in tasks {
        let r = t.await.expect("a worker");
        total.calls += r.calls;
        total.replays += r.replays;
        total.in_progress += r.in_progress;
        total.unknown += r.unknown;
        total.released += r.released;
    }
    total
}

async fn settle(p: &Pipeline, s: &toolgate_core::Session, op: usize, report: &mut Report) {
    let call = |n: usize| {
        ToolCall::new(
            format!("op{op}-{n}"),
            "send",
            json!({"to": "ops@example.com", "body": format!("message {op}")}),
        )
        .with_idempotency_key(format!("op-{op}"))
    };
    let mut n = 0;
    for _ in 0..100 {
        let answers: Vec<ToolResult> = if n == 0 && op.is_multiple_of(7) {
            let (a, b) = tokio::join!(p.dispatch(call(0), s), p.dispatch(call(1), s));
            n = 2;
            vec![a, b]
        } else {
            n += 1;
            vec![p.dispatch(call(n), s).await]
        };
        let mut settled = false;
        for r in answers {
            report.calls += 1;
            report.replays += usize::from(r.replayed);
            match r.error.as_ref().map(|e| (e.kind, e.reason.as_deref())) {
                None => settled = true,
                Some((ErrorKind::ToolFailed, _)) if r.replayed => settled = true,
                Some((ErrorKind::InProgress, _)) => report.in_progress += 1,
                Some((ErrorKind::OutcomeUnknown, _)) => report.unknown += 1,
                Some((ErrorKind::ToolFailed, _))
                    if r.text().contains("the connection was refused") =>
                {
                    report.released += 1
                }
                // delivered, then failed: recorded, replayed to the next send
                Some((ErrorKind::ToolFailed, _)) if r.text().contains("broke before") => {}
                _ => panic!("op {op}: {r:?}"),
            }
        }
        if settled {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("op {op} did not settle in 100 sends");
}

/// Checks what the server saw after a run of `ops` calls: every key delivered exactly once.
///
/// # Panics
/// When a key was delivered twice, or an op's key never.
pub fn check(server: &CountingServer, ops: usize) {
    let counts = server.counts();
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "keys delivered more than once: {twice:?}");
    for op in 0..ops {
        assert_eq!(counts.get(&format!("op-{op}")), Some(&1), "op-{op}");
    }
    assert_eq!(server.deliveries(), ops as u64);
}
