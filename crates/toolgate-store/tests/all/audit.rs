//! The audit writer and reading records back: round trip, redaction, group commit, queries,
//! stats, and the real pipeline writing through the sink.

use super::support::{failed, rec, record, TempStore};
use pretty_assertions::assert_eq;
use serde_json::json;
use sha2::Digest;
use std::sync::Arc;
use toolgate_core::redact::REDACTED;
use toolgate_core::{
    Approval, AuditSink, Decision, ErrorKind, Outcome, Pipeline, Registry, ToolCall,
};
use toolgate_store::{AuditQuery, SqliteAuditSink, Store, StoreOptions, Verification};
use toolgate_test_support::tools::Echo;

fn all(store: &Store) -> Vec<toolgate_core::AuditRecord> {
    store
        .audit_records(&AuditQuery::default())
        .unwrap()
        .into_iter()
        .map(|s| s.record)
        .collect()
}

#[test]
fn records_round_trip_with_every_field() {
    let t = TempStore::new();
    let mut full = rec(1);
    full.decision = Some(Decision::Ask);
    full.rule = Some("rules[2]".into());
    full.approval = Some(Approval::Corrected);
    full.truncated = Some("res_0123".into());
    full.outcome = Outcome::RecoverableError;
    full.error_kind = Some(ErrorKind::ApprovalCorrected);
    full.error_reason = Some("feedback".into());
    full.attempts = 3;
    full.arguments = json!({"z": [1, 2.5, null, true], "a": {"é": "ü\u{1F600}"}, "n": -7});
    let mut bare = rec(2);
    bare.version = None;
    bare.decision = None;
    bare.rule = None;
    bare.arguments = json!({});
    {
        let sink = SqliteAuditSink::new(&t.store).unwrap();
        sink.record(full.clone());
        sink.record(bare.clone());
        sink.flush_checked().unwrap();
    }
    assert_eq!(all(&t.store), vec![full, bare]);
    let stored = t.store.audit_records(&AuditQuery::default()).unwrap();
    assert_eq!(stored.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(stored[0].hash.len(), 64);
}

#[test]
fn secrets_in_arguments_are_redacted_before_they_are_stored() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    sink.record(record(
        1,
        "http_fetch",
        "s1",
        json!({
            "url": "https://example.com",
            "password": "hunter2",
            "headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Request": "plain"},
            "token": 12345,
            "client_secret": ["a", "b"],
            "body": "sk-abcdefghijklmnopqrstuvwx",
            "notes": ["ghp_0123456789abcdefghijABCDEFGHIJ", "Bearer eyJhbGciOi.x.y", "hello"]
        }),
    ));
    sink.flush_checked().unwrap();
    let r = &all(&t.store)[0];
    assert_eq!(
        r.arguments,
        json!({
            "url": "https://example.com",
            "password": REDACTED,
            "headers": {"Authorization": REDACTED, "X-Request": "plain"},
            "token": REDACTED,
            "client_secret": REDACTED,
            "body": REDACTED,
            "notes": [REDACTED, REDACTED, "hello"]
        })
    );
    // and the secret is nowhere in the file, WAL included
    drop(sink);
    let mut bytes = std::fs::read(t.path()).unwrap();
    if let Ok(wal) = std::fs::read(t.dir.path().join("toolgate.db-wal")) {
        bytes.extend(wal);
    }
    for secret in [
        "hunter2",
        "dXNlcjpwYXNz",
        "sk-abcdefghij",
        "ghp_0123",
        "eyJhbGciOi",
    ] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} reached the store file"
        );
    }
}

/// An idempotency key that is a token (the key's alphabet admits every shape the redactor
/// knows) is redacted in the audit, stored and hashed so, while the ledger keeps the key
/// itself for replays; an ordinary key is kept as sent.
#[test]
fn an_idempotency_key_that_is_a_secret_is_redacted_in_the_audit() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    let mut secret = rec(1);
    secret.idempotency_key = Some("ghp_CANARYH1abcdefghijklmnop0123456789".into());
    let mut plain = rec(2);
    plain.idempotency_key = Some("K-0001".into());
    sink.record(secret);
    sink.record(plain);
    sink.flush_checked().unwrap();
    let keys: Vec<_> = all(&t.store)
        .into_iter()
        .map(|r| r.idempotency_key.map(|k| k.to_string()))
        .collect();
    assert_eq!(keys, [Some(REDACTED.to_string()), Some("K-0001".into())]);
    assert!(t.store.verify_audit().unwrap().is_intact());
    drop(sink);
    let mut bytes = std::fs::read(t.path()).unwrap();
    if let Ok(wal) = std::fs::read(t.dir.path().join("toolgate.db-wal")) {
        bytes.extend(wal);
    }
    assert!(!bytes.windows(13).any(|w| w == b"ghp_CANARYH1a"));
}

/// audit-secret-88 (secret_leak), the store's part: credentials inside longer strings (a
/// command line, a `.env` file's content, a URL) are cut out by the writer, in small records
/// the caller copies and in large ones it hands over, and reach neither the stored arguments
/// nor the file's bytes (WAL included).
#[test]
fn secrets_inside_argument_strings_never_reach_the_file() {
    let t = TempStore::new();
    let lines: &[(&str, &str, &str)] = &[
        // argument, a secret it holds, what stays of its neighbourhood
        (
            "curl -s -m 1 -H 'Authorization: Bearer ghp_CANARYTOKEN0123456789abcdefABCDEF' http://127.0.0.1:9/ ; echo done",
            "CANARYTOKEN",
            "Authorization: Bearer [REDACTED]",
        ),
        (
            "export OPENAI_API_KEY=sk-proj-CANARY1aaaaaaaaaaaaaaaa && python x.py",
            "CANARY1",
            "OPENAI_API_KEY=[REDACTED] &&",
        ),
        ("mysql --password=CANARY2pw -e 'select 1'", "CANARY2", "--password=[REDACTED] -e"),
        ("git clone https://bob:CANARY3pw@git.example.com/r", "CANARY3", "bob:[REDACTED]@git"),
        (
            "AWS_SECRET_ACCESS_KEY=CANARY4wJalrXUtnFEMI/K7MDENG\nSTRIPE=sk_live_CANARY5xxxxxxxxxxxx\n",
            "CANARY4",
            "AWS_SECRET_ACCESS_KEY=[REDACTED]",
        ),
        ("STRIPE=sk_live_CANARY5xxxxxxxxxxxx", "CANARY5", "STRIPE=[REDACTED]"),
    ];
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    for (i, (line, _, _)) in lines.iter().enumerate() {
        sink.record(record(
            i as u64 + 1,
            "run_shell",
            "s1",
            json!({"command": line}),
        ));
    }
    // a .env file's content given to write_file, past the size a caller copies
    let env = format!(
        "AWS_SECRET_ACCESS_KEY=CANARY6wJalrXUtnFEMI/K7MDENG\nPAYMENTS=sk_live_CANARY7xxxxxxxxxxxx\n{}",
        "# padding\n".repeat(3_000)
    );
    sink.record(record(
        99,
        "write_file",
        "s1",
        json!({"path": ".env", "content": env}),
    ));
    sink.flush_checked().unwrap();
    let stored = all(&t.store);
    for (r, (_, _, kept)) in stored.iter().zip(lines) {
        let command = r.arguments["command"].as_str().unwrap();
        assert!(command.contains(kept), "{command}");
    }
    let content = stored[lines.len()].arguments["content"].as_str().unwrap();
    assert!(
        content.starts_with("AWS_SECRET_ACCESS_KEY=[REDACTED]\nPAYMENTS=[REDACTED]\n"),
        "{content:.100}"
    );
    drop(sink);
    let mut bytes = std::fs::read(t.path()).unwrap();
    if let Ok(wal) = std::fs::read(t.dir.path().join("toolgate.db-wal")) {
        bytes.extend(wal);
    }
    for canary in [
        "CANARYTOKEN",
        "CANARY1",
        "CANARY2",
        "CANARY3",
        "CANARY4",
        "CANARY5",
        "CANARY6",
        "CANARY7",
    ] {
        assert!(
            !bytes.windows(canary.len()).any(|w| w == canary.as_bytes()),
            "{canary} reached the store file"
        );
    }
    assert!(t.store.verify_audit().unwrap().is_intact());
}

/// Arguments past the size a caller copies (16 KiB: a file's content, a long list) are handed
/// to the writer whole and written by it: stored redacted and bounded (a 120 kB content keeps
/// its first 2 KiB and last 1 KiB around its length and SHA-256), in order among small
/// records, with one unbroken chain; and a record whose counts overflow SQLite's INTEGER is
/// stored saturated, its hash over what is stored.
#[test]
fn large_arguments_are_written_by_the_writer_redacted_and_chained() {
    let t = TempStore::new();
    let content = "line of a file\n".repeat(8_000);
    let many: Vec<String> = (0..3_000).map(|i| format!("w{i}")).collect();
    let large = json!({"path": "big.txt", "content": content, "password": "hunter2",
        "key": "sk-abcdefghijklmnopqrstuvwx"});
    let long_list = json!({"words": many, "token": "t0k"});
    let mut huge_counts = rec(4);
    huge_counts.result_bytes = usize::MAX;
    huge_counts.duration_us = u64::MAX;
    {
        let sink = SqliteAuditSink::new(&t.store).unwrap();
        sink.record(rec(1));
        sink.record(record(2, "write_file", "s1", large.clone()));
        sink.record(record(3, "write_file", "s1", long_list.clone()));
        sink.record(huge_counts);
        sink.record(rec(5));
        sink.flush_checked().unwrap();
    }
    let stored = all(&t.store);
    assert_eq!(stored.len(), 5);
    assert_eq!(stored[0], rec(1));
    assert_eq!(stored[4], rec(5));
    let hash: String = sha2::Sha256::digest(content.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let kept = format!(
        "{}…[toolgate: 120000 bytes, sha256 {hash}, 116928 left out]…{}",
        &content[..2048],
        &content[content.len() - 1024..]
    );
    assert_eq!(
        stored[1].arguments,
        json!({"path": "big.txt", "content": kept, "password": REDACTED, "key": REDACTED})
    );
    assert_eq!(
        stored[2].arguments,
        json!({"words": many, "token": REDACTED})
    );
    assert_eq!(stored[3].result_bytes, i64::MAX as usize);
    assert_eq!(stored[3].duration_us, i64::MAX as u64);
    assert!(t.store.verify_audit().unwrap().is_intact());
}

#[test]
fn a_burst_is_written_in_few_groups_and_flush_waits_for_it() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    for i in 1..=20_000 {
        sink.record(rec(i));
    }
    sink.flush_checked().unwrap();
    let stats = sink.stats();
    assert_eq!(
        (stats.taken, stats.committed, stats.lost),
        (20_000, 20_000, 0)
    );
    assert!(
        stats.groups < 20_000 / 4,
        "group commit wrote {} groups for 20,000 records",
        stats.groups
    );
    // flush returned, so every record is visible to another connection
    assert_eq!(
        Store::open(t.path()).unwrap().audit_count().unwrap(),
        20_000
    );
    assert_eq!(
        t.store.verify_audit().unwrap(),
        Verification::Intact {
            records: 20_000,
            head: Some(
                t.store
                    .audit_records(&AuditQuery {
                        limit: Some(1),
                        ..Default::default()
                    })
                    .unwrap()[0]
                    .hash
                    .clone()
            ),
            unfinished: 0
        }
    );
}

#[test]
fn a_tiny_queue_makes_record_wait_but_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_with(
        dir.path().join("t.db"),
        StoreOptions {
            audit_queue: 4,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let sink = SqliteAuditSink::new(&store).unwrap();
    for i in 1..=2_000 {
        sink.record(rec(i));
    }
    drop(sink); // drop drains the queue and joins the writer
    assert_eq!(store.audit_count().unwrap(), 2_000);
    assert!(store.verify_audit().unwrap().is_intact());
}

#[test]
fn two_writers_on_one_file_keep_one_chain() {
    let t = TempStore::new();
    let other = Store::open(t.path()).unwrap();
    let a = SqliteAuditSink::new(&t.store).unwrap();
    let b = SqliteAuditSink::new(&other).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| (0..3_000).for_each(|i| a.record(rec(i))));
        s.spawn(|| (0..3_000).for_each(|i| b.record(record(i, "glob", "s2", json!({})))));
    });
    a.flush_checked().unwrap();
    b.flush_checked().unwrap();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        Verification::Intact {
            records: 6_000,
            head: Some(
                t.store
                    .audit_records(&AuditQuery {
                        limit: Some(1),
                        ..Default::default()
                    })
                    .unwrap()[0]
                    .hash
                    .clone()
            ),
            unfinished: 0
        }
    );
}

#[test]
fn queries_filter_by_tool_session_outcome_time_and_limit() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    sink.record(rec(1)); // read_file s1 ok
    sink.record(record(2, "glob", "s2", json!({}))); // glob s2 ok
    sink.record(failed(3, ErrorKind::ToolFailed, "not_found")); // read_file s1 recoverable
    sink.record(record(4, "glob", "s1", json!({}))); // glob s1 ok
    sink.flush_checked().unwrap();
    let seqs = |q: AuditQuery| -> Vec<u64> {
        t.store
            .audit_records(&q)
            .unwrap()
            .into_iter()
            .map(|s| s.seq)
            .collect()
    };
    assert_eq!(seqs(AuditQuery::default()), vec![1, 2, 3, 4]);
    assert_eq!(
        seqs(AuditQuery {
            tool: Some("glob".into()),
            ..Default::default()
        }),
        vec![2, 4]
    );
    assert_eq!(
        seqs(AuditQuery {
            session: Some("s1".into()),
            tool: Some("read_file".into()),
            ..Default::default()
        }),
        vec![1, 3]
    );
    assert_eq!(
        seqs(AuditQuery {
            outcome: Some(Outcome::RecoverableError),
            ..Default::default()
        }),
        vec![3]
    );
    assert_eq!(
        seqs(AuditQuery {
            since_us: Some(rec(3).time_us),
            ..Default::default()
        }),
        vec![3, 4]
    );
    assert_eq!(
        seqs(AuditQuery {
            until_us: Some(rec(2).time_us),
            ..Default::default()
        }),
        vec![1]
    );
    assert_eq!(
        seqs(AuditQuery {
            limit: Some(2),
            ..Default::default()
        }),
        vec![3, 4]
    );
    assert_eq!(
        seqs(AuditQuery {
            tool: Some("nope' OR 1=1 --".into()),
            ..Default::default()
        }),
        Vec::<u64>::new()
    );
}

#[test]
fn stats_count_errors_denials_approvals_truncations_and_latency() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    for i in 1..=100 {
        let mut r = rec(i);
        r.duration_us = i; // 1..=100 µs
        sink.record(r);
    }
    sink.record(failed(101, ErrorKind::ToolFailed, "not_found"));
    sink.record(failed(102, ErrorKind::ToolFailed, "binary_file"));
    let mut denied = failed(103, ErrorKind::PermissionDenied, "rule");
    denied.decision = Some(Decision::Deny);
    sink.record(denied);
    let mut asked = rec(104);
    asked.decision = Some(Decision::Ask);
    asked.approval = Some(Approval::Approved);
    asked.truncated = Some("res_1".into());
    sink.record(asked);
    let mut rejected = failed(105, ErrorKind::ApprovalRejected, "nobody");
    rejected.decision = Some(Decision::Ask);
    rejected.approval = Some(Approval::Rejected);
    sink.record(rejected);
    sink.record(record(106, "glob", "s1", json!({})));
    sink.flush_checked().unwrap();
    let stats = t.store.tool_stats(&AuditQuery::default()).unwrap();
    assert_eq!(
        stats
            .iter()
            .map(|s| (s.tool.as_str(), s.calls))
            .collect::<Vec<_>>(),
        vec![("glob", 1), ("read_file", 105)]
    );
    let rf = &stats[1];
    assert_eq!(
        rf.errors,
        [
            ("approval_rejected".to_string(), 1),
            ("permission_denied".to_string(), 1),
            ("tool_failed".to_string(), 2)
        ]
        .into()
    );
    assert_eq!(
        (
            rf.denials,
            rf.approvals_asked,
            rf.approvals_granted,
            rf.truncations
        ),
        (1, 2, 1, 1)
    );
    // 100 durations 1..=100, then 5 of 201..=205 (rec(i).duration_us = 100 + i)
    assert_eq!(rf.latency.p50_us, 53);
    assert_eq!(rf.latency.max_us, 205);
    let s1 = t
        .store
        .tool_stats(&AuditQuery {
            tool: Some("glob".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(s1.len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn the_pipeline_writes_one_record_per_call_through_the_sink() {
    let t = TempStore::new();
    let sink = Arc::new(SqliteAuditSink::new(&t.store).unwrap());
    let pipeline = Pipeline::builder(Registry::builder().tool(Echo::default()).build().unwrap())
        .audit(sink.clone())
        .build();
    let session = pipeline.session("sess-a").build().unwrap();
    for i in 0..500 {
        let text = if i % 2 == 0 {
            "hello"
        } else {
            "Bearer abcdefghijklmnop"
        };
        let r = pipeline
            .dispatch(
                ToolCall::new(format!("c{i}"), "echo", json!({ "text": text })),
                &session,
            )
            .await;
        assert!(!r.is_error);
    }
    pipeline
        .dispatch(ToolCall::new("bad", "nope", json!({})), &session)
        .await;
    pipeline.audit().flush();
    let records = all(&t.store);
    assert_eq!(records.len(), 501);
    assert_eq!(records[1].arguments, json!({"text": REDACTED}));
    assert_eq!(records[0].call_id.as_str(), "c0");
    assert_eq!(&*records[0].session, "sess-a");
    assert_eq!(records[500].error_kind, Some(ErrorKind::UnknownTool));
    assert!(t.store.verify_audit().unwrap().is_intact());
}
