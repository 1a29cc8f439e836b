//! Durable records and intents: a durable record is committed when its wait resolves (seen by
//! another connection), waits share commits, a lost group fails its waiters, and readers show
//! each call once (intents paired with their calls' records, unfinished ones listed).

use super::support::{rec, TempStore};
use pretty_assertions::assert_eq;
use std::sync::Arc;
use toolgate_core::{AuditRecord, AuditSink, ErrorKind, Outcome};
use toolgate_store::{AuditQuery, SqliteAuditSink, Store, Verification};

fn intent(i: u64) -> AuditRecord {
    let mut r = rec(i);
    r.outcome = Outcome::Started;
    r.attempts = 0;
    r.result_bytes = 0;
    r
}

fn seqs_and_outcomes(store: &Store, q: &AuditQuery) -> Vec<(String, Outcome)> {
    store
        .audit_records(q)
        .unwrap()
        .into_iter()
        .map(|s| (s.record.call_id.as_str().to_owned(), s.record.outcome))
        .collect()
}

#[tokio::test]
async fn a_durable_record_is_committed_when_its_wait_resolves() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    let other = Store::open(t.path()).unwrap();
    for i in 1..=50 {
        // ordinary records before it are committed with it, in order
        sink.record(rec(1000 + i));
        sink.record_durable(rec(i)).await.unwrap();
        assert_eq!(other.audit_count().unwrap(), 2 * i);
    }
    assert!(other.verify_audit().unwrap().is_intact());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_durable_records_share_commits() {
    let t = TempStore::new();
    let sink = Arc::new(SqliteAuditSink::new(&t.store).unwrap());
    let waits: Vec<_> = (0..2_000u64)
        .map(|i| {
            let sink = sink.clone();
            tokio::spawn(async move { sink.record_durable(rec(i)).await })
        })
        .collect();
    for w in waits {
        w.await.unwrap().unwrap();
    }
    let stats = sink.stats();
    assert_eq!(stats.committed, 2_000);
    // many waiters per commit: far fewer groups than records
    assert!(stats.groups < 1_000, "{stats:?}");
    assert_eq!(t.store.audit_count().unwrap(), 2_000);
}

#[tokio::test]
async fn a_group_that_cannot_be_written_fails_its_waiters() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    sink.record_durable(rec(1)).await.unwrap();
    // the table is gone: every retry fails (about 1.3 s of them)
    t.raw().execute_batch("DROP TABLE audit").unwrap();
    let e = sink.record_durable(rec(2)).await.unwrap_err();
    assert!(e.reason().contains("audit"), "{e}");
    assert!(e.to_string().contains("not committed"), "{e}");
}

/// A group whose transaction fails after some of its rows went in (an insert refused by a
/// trigger, standing for a full disk or a damaged page) is rolled back: none of its rows is
/// kept, its waiter fails, and the writer's connection is left out of any transaction, so the
/// next group commits and the chain still verifies.
#[tokio::test]
async fn a_group_that_fails_midway_is_rolled_back_and_the_writer_goes_on() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    sink.record_durable(rec(1)).await.unwrap();
    let refused = rec(3).time_us;
    let raw = t.raw();
    raw.execute_batch(&format!(
        "CREATE TRIGGER refuse BEFORE INSERT ON audit WHEN NEW.time_us = {refused} \
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
    ))
    .unwrap();
    // rec(2) goes in the failing group, or in one of its own just before it
    sink.record(rec(2));
    let e = sink.record_durable(rec(3)).await.unwrap_err();
    assert!(e.reason().contains("refused by the test"), "{e}");
    raw.execute_batch("DROP TRIGGER refuse").unwrap();
    sink.record_durable(rec(4)).await.unwrap();
    let times: Vec<u64> = t
        .store
        .audit_records(&AuditQuery::default())
        .unwrap()
        .into_iter()
        .map(|s| s.record.time_us)
        .collect();
    assert!(!times.contains(&refused), "{times:?}");
    assert!(
        times.contains(&rec(1).time_us) && times.contains(&rec(4).time_us),
        "{times:?}"
    );
    assert!(t.store.verify_audit().unwrap().is_intact());
    assert_eq!(sink.stats().committed, times.len() as u64);
}

#[tokio::test]
async fn each_call_shows_once_and_unfinished_intents_are_listed() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    // 1 acted and ended; 2 was read-only (no intent); 3 was killed while running; 4 ended
    // in an error after its intent; a refused duplicate of 3 completes nothing
    sink.record_durable(intent(1)).await.unwrap();
    sink.record_durable(intent(3)).await.unwrap();
    sink.record(rec(2));
    sink.record_durable(rec(1)).await.unwrap();
    let mut duplicate = rec(3);
    duplicate.time_us += 1; // dispatched after 3: a time of its own in the session
    duplicate.outcome = Outcome::RecoverableError;
    duplicate.error_kind = Some(ErrorKind::InvalidInput);
    duplicate.error_reason = Some("duplicate_call_id".into());
    sink.record(duplicate);
    sink.record_durable(intent(4)).await.unwrap();
    let mut four = rec(4);
    four.outcome = Outcome::RecoverableError;
    four.error_kind = Some(ErrorKind::ToolFailed);
    sink.record_durable(four).await.unwrap();
    sink.flush_checked().unwrap();

    let calls = seqs_and_outcomes(&t.store, &AuditQuery::default());
    assert_eq!(
        calls,
        [
            ("call-3".to_owned(), Outcome::Started),
            ("call-2".to_owned(), Outcome::Ok),
            ("call-1".to_owned(), Outcome::Ok),
            ("call-3".to_owned(), Outcome::RecoverableError),
            ("call-4".to_owned(), Outcome::RecoverableError),
        ]
    );
    let started = AuditQuery {
        outcome: Some(Outcome::Started),
        ..Default::default()
    };
    assert_eq!(
        seqs_and_outcomes(&t.store, &started),
        [("call-3".to_owned(), Outcome::Started)]
    );
    // the most recent records only: the pairing holds within them
    let recent = AuditQuery {
        limit: Some(3),
        ..Default::default()
    };
    assert_eq!(
        seqs_and_outcomes(&t.store, &recent),
        [
            ("call-3".to_owned(), Outcome::RecoverableError),
            ("call-4".to_owned(), Outcome::RecoverableError),
        ]
    );
    // statistics count calls, not intents: 1, 2, 4 and the refused duplicate
    let stats = t.store.tool_stats(&AuditQuery::default()).unwrap();
    assert_eq!(stats[0].calls, 4);
    match t.store.verify_audit().unwrap() {
        Verification::Intact {
            records,
            unfinished,
            ..
        } => assert_eq!((records, unfinished), (7, 1)),
        broken => panic!("{broken:?}"),
    }
}

/// A side-effecting tool: calls with an odd `n` never end (as if the process were killed
/// while they ran), the others end at once; `entered` counts handlers that started.
fn half_hanging(entered: Arc<std::sync::atomic::AtomicUsize>) -> toolgate_core::DynamicTool {
    let spec = toolgate_core::ToolSpec::builder("hang_odd")
        .description("Ends for even n, runs forever for odd n.")
        .input_schema(serde_json::json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
        }))
        .effects(toolgate_core::Effects::side_effecting())
        .build()
        .unwrap();
    toolgate_core::DynamicTool::new(spec, move |args, _| {
        let entered = entered.clone();
        async move {
            entered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if args["n"].as_u64().unwrap_or(0) % 2 == 1 {
                std::future::pending::<()>().await;
            }
            Ok(toolgate_core::ToolOutput::text("done"))
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_with_one_repeated_id_in_one_session_keep_their_records_apart() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use toolgate_core::{Pipeline, PreApproved, Registry, ToolCall};
    let t = TempStore::new();
    let sink = Arc::new(SqliteAuditSink::new(&t.store).unwrap());
    let entered = Arc::new(AtomicUsize::new(0));
    let registry = Registry::builder()
        .tool(half_hanging(entered.clone()))
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry)
        .approver(Arc::new(PreApproved))
        .audit(sink.clone())
        .build();
    // the session of an MCP caller's stateless requests: every request may be id 1
    let session = Arc::new(
        pipeline
            .session("mcp-caller")
            .call_ids_repeat()
            .build()
            .unwrap(),
    );
    let calls: Vec<_> = (0..32u64)
        .map(|n| {
            let (pipeline, session) = (pipeline.clone(), session.clone());
            tokio::spawn(async move {
                let call = ToolCall::new("1", "hang_odd", serde_json::json!({ "n": n }));
                pipeline.dispatch(call, &session).await
            })
        })
        .collect();
    // every handler started, so every intent is committed; then the even calls end
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while entered.load(Ordering::SeqCst) < 32 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of 32 handlers started",
            entered.load(Ordering::SeqCst)
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut hanging = Vec::new();
    for (n, call) in calls.into_iter().enumerate() {
        if n % 2 == 0 {
            let result = call.await.unwrap();
            assert!(!result.is_error, "{result:?}");
        } else {
            hanging.push(call);
        }
    }
    // the odd calls are cut off mid-handler, as a SIGKILL would: no record of their end
    for call in &hanging {
        call.abort();
    }
    sink.flush_checked().unwrap();

    let n_of = |q: &AuditQuery| -> Vec<(u64, Outcome)> {
        let mut v: Vec<_> = t
            .store
            .audit_records(q)
            .unwrap()
            .into_iter()
            .map(|s| (s.record.arguments["n"].as_u64().unwrap(), s.record.outcome))
            .collect();
        v.sort_unstable_by_key(|(n, _)| *n);
        v
    };
    let started = AuditQuery {
        outcome: Some(Outcome::Started),
        ..Default::default()
    };
    let odd: Vec<_> = (0..32)
        .filter(|n| n % 2 == 1)
        .map(|n| (n, Outcome::Started))
        .collect();
    assert_eq!(n_of(&started), odd);
    // each call once: the ended ones by their own record, the cut-off ones by their intent
    let each: Vec<_> = (0..32)
        .map(|n| {
            (
                n,
                if n % 2 == 0 {
                    Outcome::Ok
                } else {
                    Outcome::Started
                },
            )
        })
        .collect();
    assert_eq!(n_of(&AuditQuery::default()), each);
    // 32 intents and 16 ends, each record at its own time in the session
    let all = t.store.audit_records(&AuditQuery::default()).unwrap();
    let mut times: Vec<u64> = all.iter().map(|s| s.record.time_us).collect();
    times.sort_unstable();
    times.dedup();
    assert_eq!(times.len(), 32);
    match t.store.verify_audit().unwrap() {
        Verification::Intact {
            records,
            unfinished,
            ..
        } => assert_eq!((records, unfinished), (48, 16)),
        broken => panic!("{broken:?}"),
    }
}
