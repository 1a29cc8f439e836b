//! The SQLite audit writer's throughput, and the core dispatch benchmark with it on.
//!
//! `cargo bench -p toolgate-store --bench audit`
//!
//! - `audit_writer/{normal,full}`: 10,000 records handed to a [`SqliteAuditSink`] and flushed
//!   (committed) per iteration; criterion reports records per second. `normal` and `full` are
//!   the two [`Durability`] settings.
//! - `dispatch/echo_{no,jsonl,sqlite}_audit`: the same call as
//!   `crates/toolgate-core/benches/dispatch.rs` (`echo {"text": "hello"}` through every stage
//!   on a current-thread runtime, a fresh call id each time, a new session every 1,000 calls)
//!   with no audit sink, the JSONL sink and the SQLite sink. It lives here so that core does not
//!   depend on the store. `echo_sqlite_audit` is sustained: the caller runs as fast as it can,
//!   so once the queue is full it goes at the writer's pace. `echo_sqlite_audit_caller`
//!   measures the caller's path alone: every 1,000 calls the setup (not timed) waits for the
//!   writer to commit what is queued, so `record` never finds the queue full.
//! - `audit_step/*`: the writer's CPU steps for one record alone: the arguments' canonical JSON
//!   with secrets redacted, the record's canonical JSON, the chain hash.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{
    AuditRecord, AuditSink, Decision, JsonlAuditSink, NullAuditSink, Outcome, Pipeline, Registry,
    ToolCall,
};
use toolgate_store::{Durability, SqliteAuditSink, Store, StoreOptions};
use toolgate_test_support::tools::Echo;

const GROUP: u64 = 10_000;

fn record(i: u64) -> AuditRecord {
    AuditRecord {
        time_us: 1_700_000_000_000_000 + i,
        session: "bench".into(),
        profile: "default".into(),
        principal: None,
        tool: "read_file".into(),
        version: Some("1.0.0".into()),
        call_id: format!("call-{i}").into(),
        decision: Some(Decision::Allow),
        rule: Some("default.allow".into()),
        approval: None,
        grant: None,
        scope: None,
        arguments: json!({"path": "src/main.rs", "offset": 1, "limit": 200}),
        result_bytes: 4_096,
        truncated: None,
        outcome: Outcome::Ok,
        error_kind: None,
        error_reason: None,
        attempts: 1,
        idempotency_key: None,
        ledger: None,
        duration_us: 85,
    }
}

fn writer(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("audit_writer");
    group.throughput(Throughput::Elements(GROUP));
    group.sample_size(20);
    for (name, durability) in [("normal", Durability::Normal), ("full", Durability::Full)] {
        let store = Store::open_with(
            dir.path().join(format!("{name}.db")),
            StoreOptions {
                durability,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let sink = SqliteAuditSink::new(&store).unwrap();
        let mut n = 0;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    (0..GROUP)
                        .map(|_| {
                            n += 1;
                            record(n)
                        })
                        .collect::<Vec<_>>()
                },
                |records| {
                    for r in records {
                        sink.record(r);
                    }
                    sink.flush_checked().unwrap();
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(1));
    for name in [
        "echo_sqlite_audit",
        "echo_sqlite_audit_caller",
        "echo_jsonl_audit",
        "echo_no_audit",
    ] {
        let mut sqlite: Option<Arc<SqliteAuditSink>> = None;
        let audit: Arc<dyn AuditSink> = match name {
            "echo_sqlite_audit" | "echo_sqlite_audit_caller" => {
                let store = Store::open(dir.path().join(format!("{name}.db"))).unwrap();
                let sink = Arc::new(SqliteAuditSink::new(&store).unwrap());
                if name == "echo_sqlite_audit_caller" {
                    sqlite = Some(sink.clone());
                }
                sink
            }
            "echo_jsonl_audit" => {
                Arc::new(JsonlAuditSink::open(dir.path().join("dispatch.jsonl")).unwrap())
            }
            _ => Arc::new(NullAuditSink),
        };
        let registry = Registry::builder().tool(Echo::default()).build().unwrap();
        let pipeline = Pipeline::builder(registry).audit(audit).build();
        let session = std::cell::RefCell::new(pipeline.session("bench").build().unwrap());
        let mut n: u64 = 0;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    if n.is_multiple_of(1000) {
                        *session.borrow_mut() = pipeline.session("bench").build().unwrap();
                        if let Some(sink) = &sqlite {
                            sink.flush_checked().unwrap();
                        }
                    }
                    ToolCall::new(format!("call-{n}"), "echo", json!({"text": "hello"}))
                },
                |call| {
                    let r = rt.block_on(pipeline.dispatch(call, &session.borrow()));
                    debug_assert!(!r.is_error);
                    r
                },
                BatchSize::SmallInput,
            )
        });
        pipeline.audit().flush();
    }
    group.finish();
}

/// The writer's steps for one record, each alone (the rest of `audit_writer`'s time per record
/// is SQLite: binding, inserting, committing).
fn steps(c: &mut Criterion) {
    use toolgate_store::audit::canonical::{canonical_json, chain_hash, write_value_redacted};
    let mut group = c.benchmark_group("audit_step");
    group.throughput(Throughput::Elements(1));
    let r = record(1);
    let mut out = Vec::with_capacity(1024);
    group.bench_function("redacted_arguments", |b| {
        b.iter(|| {
            out.clear();
            write_value_redacted(&mut out, std::hint::black_box(&r.arguments));
            out.len()
        })
    });
    group.bench_function("canonical_json", |b| {
        b.iter(|| {
            out.clear();
            canonical_json(std::hint::black_box(&r), &mut out);
            out.len()
        })
    });
    out.clear();
    canonical_json(&r, &mut out);
    let prev = [7u8; 32];
    group.bench_function("chain_hash", |b| {
        b.iter(|| chain_hash(std::hint::black_box(&prev), std::hint::black_box(&out)))
    });
    group.finish();
}

criterion_group!(benches, steps, writer, dispatch);
criterion_main!(benches);
