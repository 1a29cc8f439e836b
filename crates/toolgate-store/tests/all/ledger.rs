//! The idempotency ledger in SQLite: the backend contract, shared by every connection to one
//! file, one holder among racing claims, and damaged rows refused by key.

use super::support::TempStore;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::{Arc, Barrier};
use toolgate_core::ledger::{arguments_hash, Claimed, Held, Ledger, LedgerError, LedgerState};
use toolgate_store::Store;
use toolgate_test_support::ledger::{check, claim};

/// Takes a version 3 store (a current one after [`super::identity::VERSION_3`]) back to
/// version 2: the audit without the ledger's columns, the `idempotency` table as version 2
/// made it (unused then).
pub const VERSION_2_LEDGER: &str = "
    ALTER TABLE audit DROP COLUMN idempotency_key;
    ALTER TABLE audit DROP COLUMN ledger;
    DROP TABLE idempotency;
    CREATE TABLE idempotency (
        key        TEXT PRIMARY KEY,
        tool       TEXT NOT NULL,
        args_hash  BLOB NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('in_progress', 'succeeded', 'failed')),
        result     TEXT,
        created_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL
    );
    PRAGMA user_version = 2;";

#[test]
fn a_version_2_store_gets_the_ledger_and_keeps_its_chain() {
    let t = TempStore::new();
    let sink = toolgate_store::SqliteAuditSink::new(&t.store).unwrap();
    for i in 0..3 {
        toolgate_core::AuditSink::record(&sink, super::support::rec(i));
    }
    sink.flush_checked().unwrap();
    drop(sink);
    t.raw().execute_batch(super::identity::VERSION_3).unwrap();
    t.raw().execute_batch(VERSION_2_LEDGER).unwrap();
    let reopened = Store::open(t.path()).unwrap();
    assert!(reopened.verify_audit().unwrap().is_intact());
    let h = arguments_hash(&json!({}));
    assert_eq!(
        reopened.claim(&claim("k", &h, 1, 1000)).unwrap(),
        Claimed::Held
    );
    let v: i64 = t
        .raw()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, toolgate_store::SCHEMA_VERSION);
}

#[test]
fn the_sqlite_ledger_keeps_the_contract() {
    let t = TempStore::new();
    check(&t.store);
}

#[test]
fn every_store_on_the_file_sees_one_ledger() {
    let t = TempStore::new();
    let other = Store::open(t.path()).unwrap();
    let h = arguments_hash(&json!({"to": "a@b"}));
    assert_eq!(
        t.store.claim(&claim("k", &h, 1, 1000)).unwrap(),
        Claimed::Held
    );
    assert!(matches!(
        other.claim(&claim("k", &h, 2, 1001)).unwrap(),
        Claimed::InProgress { .. }
    ));
    let held = Held {
        principal: None,
        key: "k",
        holder: 1,
    };
    let out = toolgate_core::ledger::Recorded::output_json(&toolgate_core::ToolOutput::text("ok"));
    assert!(t
        .store
        .complete(&held, LedgerState::Succeeded, &out, 1002)
        .unwrap());
    assert!(matches!(
        other.claim(&claim("k", &h, 2, 1003)).unwrap(),
        Claimed::Done { .. }
    ));
    // and a store opened after the first was dropped (another process later)
    drop(other);
    let reopened = Store::open(t.path()).unwrap();
    assert_eq!(reopened.ledger_entries("k", 1004).unwrap().len(), 1);
}

#[test]
fn racing_claims_on_separate_connections_have_one_holder() {
    let t = TempStore::new();
    let path = t.path();
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let answers: Vec<Claimed> = (0..threads)
        .map(|i| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let store = Store::open(path).unwrap();
                let h = arguments_hash(&json!({"n": 1}));
                barrier.wait();
                store.claim(&claim("race", &h, i as u64, 1000)).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let held = answers.iter().filter(|a| **a == Claimed::Held).count();
    assert_eq!(held, 1, "{answers:?}");
    assert!(answers
        .iter()
        .all(|a| matches!(a, Claimed::Held | Claimed::InProgress { .. })));
}

#[test]
fn a_damaged_row_is_refused_naming_its_key() {
    let t = TempStore::new();
    let h = arguments_hash(&json!({}));
    assert_eq!(
        t.store.claim(&claim("k", &h, 1, 1000)).unwrap(),
        Claimed::Held
    );
    let held = Held {
        principal: None,
        key: "k",
        holder: 1,
    };
    assert!(t
        .store
        .complete(&held, LedgerState::Succeeded, "{}", 1001)
        .unwrap());
    // the result is no result
    match t.store.claim(&claim("k", &h, 2, 1002)) {
        Err(LedgerError::Corrupt { key, why }) => {
            assert_eq!(key, "k");
            assert!(why.contains("not a result"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // a state the table does not know cannot even be written
    assert!(t
        .raw()
        .execute("UPDATE idempotency SET state = 'maybe' WHERE key = 'k'", [])
        .is_err());
    t.raw()
        .execute("UPDATE idempotency SET created_us = -5 WHERE key = 'k'", [])
        .unwrap();
    match t.store.claim(&claim("k", &h, 3, 1003)) {
        Err(LedgerError::Corrupt { key, why }) => {
            assert_eq!(key, "k");
            assert!(why.contains("negative"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let e = t.store.ledger_entries("k", 1004).unwrap_err().to_string();
    assert!(e.contains("\"k\"") && e.contains("negative"), "{e}");
}

/// 1,000 side-effecting calls through the pipeline with the SQLite ledger, under injected
/// transient faults and timeouts, each sent again until settled: the counting server on
/// 127.0.0.1 sees no key twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_faulty_calls_deliver_every_key_exactly_once() {
    use std::sync::Arc;
    use std::time::Duration;
    use toolgate_core::{LedgerOptions, Pipeline, Registry};
    use toolgate_test_support::chaos;
    use toolgate_test_support::counting::{CountingServer, Faults, Send};
    let t = TempStore::new();
    let server = CountingServer::start();
    let mut send = Send::new(&server, Faults::random(0x0dd_ba11, chaos::mix()));
    send.timeout = Duration::from_millis(500);
    let p = Pipeline::builder(Registry::builder().tool(send).build().unwrap())
        .ledger(Arc::new(t.store.clone()))
        .ledger_options(LedgerOptions {
            lease_grace: Duration::from_millis(50),
            ..LedgerOptions::default()
        })
        .build();
    let report = chaos::run(&p, 1000, 10).await;
    eprintln!("{report:?}");
    chaos::check(&server, 1000);
    assert!(report.replays > 0 && report.unknown > 0, "{report:?}");
    // nothing is left in progress or unsettled
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    let left = Ledger::list(&t.store, &Default::default(), now).unwrap();
    assert_eq!(left.len(), 1000);
    assert!(left
        .iter()
        .all(|e| matches!(e.state, LedgerState::Succeeded | LedgerState::Failed)));
}
