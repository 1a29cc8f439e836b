//! The intent record of a call that may act: committed before its handler runs (which does
//! not run when the commit fails), and the call's own record committed before its result
//! returns; read-only calls have neither wait.

use super::*;
use parking_lot::Mutex;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use toolgate_test_support::tools::destructive;

/// A sink that keeps what it was given and how: `true` for a durable record. Durable
/// records fail while `broken` is set.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<(Outcome, String, bool)>>,
    broken: std::sync::atomic::AtomicBool,
}

impl AuditSink for Recorder {
    fn record(&self, r: AuditRecord) {
        self.seen
            .lock()
            .push((r.outcome, r.call_id.as_str().to_owned(), false));
    }

    fn record_durable(&self, r: AuditRecord) -> AuditCommit {
        if self.broken.load(Ordering::SeqCst) {
            return AuditCommit::ready(Err(AuditError::new("disk I/O error")));
        }
        self.seen
            .lock()
            .push((r.outcome, r.call_id.as_str().to_owned(), true));
        AuditCommit::ready(Ok(()))
    }
}

fn with_recorder() -> (Pipeline, Arc<Recorder>, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let sink = Arc::new(Recorder::default());
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let p = Pipeline::builder(reg)
        .approver(Arc::new(PreApproved))
        .audit(sink.clone())
        .build();
    (p, sink, runs)
}

#[tokio::test]
async fn a_call_that_may_act_is_committed_before_and_after_its_handler() {
    let (p, sink, runs) = with_recorder();
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("w", "delete_all", json!({})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
    let read = p
        .dispatch(ToolCall::new("r", "echo", json!({"text": "x"})), &s)
        .await;
    assert!(!read.is_error, "{read:?}");
    // a call that stopped before execute has no intent and no wait, whatever its tool
    sink.broken.store(true, Ordering::SeqCst);
    let bad = p
        .dispatch(ToolCall::new("w", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&bad).reason.as_deref(), Some("duplicate_call_id"));
    assert_eq!(
        *sink.seen.lock(),
        [
            (Outcome::Started, "w".to_owned(), true),
            (Outcome::Ok, "w".to_owned(), true),
            (Outcome::Ok, "r".to_owned(), false),
            (Outcome::RecoverableError, "w".to_owned(), false),
        ]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn no_handler_runs_when_its_intent_cannot_be_committed() {
    let (p, sink, runs) = with_recorder();
    sink.broken.store(true, Ordering::SeqCst);
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("w", "delete_all", json!({})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::Internal);
    assert_eq!(e.reason.as_deref(), Some("audit_unavailable"));
    assert!(e.message.contains("was not run"), "{}", e.message);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // the refusal itself is still recorded, on the sink's ordinary path
    assert_eq!(
        *sink.seen.lock(),
        [(Outcome::FatalError, "w".to_owned(), false)]
    );
    // reads go on while the store is down
    let read = p
        .dispatch(ToolCall::new("r", "echo", json!({"text": "x"})), &s)
        .await;
    assert!(!read.is_error, "{read:?}");
}

#[tokio::test]
async fn the_intent_holds_what_was_decided_before_the_handler_ran() {
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let (p, audit) = pipeline_with(reg, Arc::new(PreApproved));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("w", "delete_all", json!({})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
    let records = audit.records();
    assert_eq!(records.len(), 2);
    let (intent, done) = (&records[0], &records[1]);
    assert_eq!(intent.outcome, Outcome::Started);
    assert_eq!(done.outcome, Outcome::Ok);
    assert_eq!(audit.calls(), std::slice::from_ref(done));
    // the same call, decision and arguments; nothing of the end yet
    assert_eq!(
        (
            &intent.session,
            &intent.call_id,
            &intent.tool,
            intent.time_us
        ),
        (&done.session, &done.call_id, &done.tool, done.time_us)
    );
    assert_eq!(
        (intent.decision, &intent.rule, intent.approval),
        (done.decision, &done.rule, done.approval)
    );
    assert_eq!(intent.arguments, done.arguments);
    assert_eq!((intent.attempts, intent.result_bytes), (0, 0));
    assert_eq!(intent.error_kind, None);
    assert_eq!(done.attempts, 1);
}

#[tokio::test]
async fn jsonl_records_of_calls_that_act_are_in_the_file_when_the_result_returns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let sink = Arc::new(JsonlAuditSink::open(&path).unwrap());
    let p = Pipeline::builder(reg)
        .approver(Arc::new(PreApproved))
        .audit(sink.clone())
        .build();
    let s = p.session("s").build().unwrap();
    let calls = (0..50).map(|i| {
        let (p, s) = (&p, &s);
        async move {
            p.dispatch(ToolCall::new(format!("c{i}"), "delete_all", json!({})), s)
                .await
        }
    });
    for r in futures::future::join_all(calls).await {
        assert!(!r.is_error, "{r:?}");
        // no flush: what a reader of the file sees the moment the result is back
        let text = std::fs::read_to_string(&path).unwrap();
        let id = format!("\"call_id\":\"{}\"", r.call_id.as_str());
        let lines: Vec<_> = text.lines().filter(|l| l.contains(&id)).collect();
        assert_eq!(lines.len(), 2, "{id}: {lines:?}");
        assert!(lines[0].contains("\"outcome\":\"started\""), "{}", lines[0]);
        assert!(lines[1].contains("\"outcome\":\"ok\""), "{}", lines[1]);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 50);
}
