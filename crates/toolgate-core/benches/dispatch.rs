//! A small typed call through every stage of the pipeline, with the JSONL audit sink on.
//!
//! `cargo bench -p toolgate-core --bench dispatch`
//!
//! One current-thread runtime (one core for the caller; the audit writer thread runs beside
//! it). Each iteration dispatches `echo {"text": "hello"}` with a fresh call id; every 1,000
//! calls a new session starts.
//!
//! The variants run in this order: JSONL audit, no audit, then no audit with a Prometheus
//! recorder installed (global, with an upkeep thread draining the histogram every 5 s as the
//! HTTP server does), so the first two measure the metrics with no recorder (no-op handles)
//! and the last what counting costs.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{JsonlAuditSink, NullAuditSink, Pipeline, Registry, ToolCall};
use toolgate_test_support::tools::Echo;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(1));
    for (name, jsonl, prometheus) in [
        ("echo_jsonl_audit", true, false),
        ("echo_no_audit", false, false),
        ("echo_no_audit_prometheus", false, true),
    ] {
        if prometheus {
            install_prometheus();
        }
        let audit: Arc<dyn toolgate_core::AuditSink> = if jsonl {
            Arc::new(JsonlAuditSink::open(dir.path().join(format!("{name}.jsonl"))).unwrap())
        } else {
            Arc::new(NullAuditSink)
        };
        let registry = Registry::builder().tool(Echo::default()).build().unwrap();
        let pipeline = Pipeline::builder(registry).audit(audit).build();
        // a session of 1,000 calls, then a new one: the seen-id set stays the size of a long
        // agent session rather than growing for the whole run
        let session = std::cell::RefCell::new(pipeline.session("bench").build().unwrap());
        let mut n: u64 = 0;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    if n.is_multiple_of(1000) {
                        *session.borrow_mut() = pipeline.session("bench").build().unwrap();
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

/// A global Prometheus recorder with toolgate's buckets, drained every 5 s.
fn install_prometheus() {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
        .set_buckets_for_metric(
            metrics_exporter_prometheus::Matcher::Full(toolgate_core::telemetry::DURATION.into()),
            toolgate_core::telemetry::DURATION_BUCKETS,
        )
        .unwrap()
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).unwrap();
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_secs(5));
        handle.run_upkeep();
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
