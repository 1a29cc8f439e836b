//! The idempotency ledger and the audit intent of a side-effecting call, composed: the key is
//! claimed, then the intent committed, then the handler runs; a call the ledger answers
//! writes no intent, and a call whose intent cannot be committed leaves its key free.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use toolgate_core::audit::{AuditCommit, AuditError};
use toolgate_core::ledger::LedgerFilter;
use toolgate_test_support::counting::{CountingServer, Faults, Send};

/// A memory sink whose durable commits fail while `broken` is set.
#[derive(Default)]
struct Flaky {
    memory: MemoryAuditSink,
    broken: AtomicBool,
}

impl AuditSink for Flaky {
    fn record(&self, r: AuditRecord) {
        self.memory.record(r);
    }

    fn record_durable(&self, r: AuditRecord) -> AuditCommit {
        if self.broken.load(Ordering::SeqCst) {
            return AuditCommit::ready(Err(AuditError::new("disk I/O error")));
        }
        self.memory.record_durable(r)
    }
}

fn call(id: &str, key: &str, body: &str) -> ToolCall {
    ToolCall::new(id, "send", json!({"to": "ops@example.com", "body": body}))
        .with_idempotency_key(key)
}

#[tokio::test]
async fn the_key_is_claimed_then_the_intent_committed_and_answers_write_none() {
    let server = CountingServer::start();
    let audit = Arc::new(Flaky::default());
    let ledger = Arc::new(MemoryLedger::default());
    let p = Pipeline::builder(
        Registry::builder()
            .tool(Send::new(&server, Faults::none()))
            .build()
            .unwrap(),
    )
    .audit(audit.clone())
    .ledger(ledger.clone())
    .build();
    let s = p.session("s").build().unwrap();

    // the intent cannot be committed: nothing is sent, and the key is not left taken
    audit.broken.store(true, Ordering::SeqCst);
    let r = p.dispatch(call("1", "K", "hi"), &s).await;
    assert_eq!(err(&r).reason.as_deref(), Some("audit_unavailable"));
    assert_eq!(server.deliveries(), 0);
    assert!(
        ledger.list(&LedgerFilter::default(), 0).unwrap().is_empty(),
        "the claim was released"
    );

    // the sink works again: the same key runs once, under its intent
    audit.broken.store(false, Ordering::SeqCst);
    let r = p.dispatch(call("2", "K", "hi"), &s).await;
    assert!(!r.is_error && !r.replayed, "{r:?}");
    // answers from the ledger act on nothing and write no intent
    assert!(p.dispatch(call("3", "K", "hi"), &s).await.replayed);
    let conflict = p.dispatch(call("4", "K", "bye"), &s).await;
    assert_eq!(
        err(&conflict).reason.as_deref(),
        Some("idempotency_conflict")
    );
    assert_eq!(server.count("K"), 1);

    let trail: Vec<_> = audit
        .memory
        .records()
        .iter()
        .map(|r| {
            (
                r.call_id.as_str().to_owned(),
                r.outcome,
                r.idempotency_key.as_deref().map(str::to_owned),
                r.ledger,
            )
        })
        .collect();
    let k = || Some("K".to_owned());
    assert_eq!(
        trail,
        [
            ("1".into(), Outcome::FatalError, k(), None),
            ("2".into(), Outcome::Started, k(), None),
            ("2".into(), Outcome::Ok, k(), Some(LedgerEvent::Executed)),
            ("3".into(), Outcome::Ok, k(), Some(LedgerEvent::Replayed)),
            ("4".into(), Outcome::RecoverableError, k(), None),
        ]
    );
}
