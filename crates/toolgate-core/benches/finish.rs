//! The finish stage on results of 1 KiB, 32 KiB and 1 MiB: a typed tool returns a listing of
//! that size (one structured value, as the built-ins do) and the whole pipeline dispatches it
//! (no audit), so the cost over `dispatch`'s echo is finish's: checking the value against the
//! output schema, cleaning its strings, and for the 1 MiB one (past the 64 KiB cap) shortening
//! it inside the value and keeping its text behind a handle.
//!
//! `cargo bench -p toolgate-core --bench finish`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use toolgate_core::{
    Effects, NullAuditSink, Pipeline, Registry, ToolCall, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool,
};
use toolgate_test_support::tools::NoArgs;

#[derive(Clone, Serialize, JsonSchema)]
struct Entry {
    /// A name.
    name: String,
    /// A size.
    size: u64,
}

#[derive(Clone, Serialize, JsonSchema)]
struct Listing {
    /// The entries.
    entries: Vec<Entry>,
}

/// Returns a listing of about `bytes` bytes of JSON.
struct Sized(Listing);

impl Sized {
    fn new(bytes: usize) -> Sized {
        // each entry is about 50 bytes of JSON
        let entries = (0..bytes / 50)
            .map(|i| Entry {
                name: format!("an_entry_named_{i:08}.txt"),
                size: i as u64,
            })
            .collect();
        Sized(Listing { entries })
    }
}

impl TypedTool for Sized {
    type Args = NoArgs;
    type Output = Listing;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("sized")
            .description("Returns a listing of a given size.")
            .effects(Effects::read_only())
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Listing, ToolError> {
        Ok(self.0.clone())
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("finish");
    for (name, bytes) in [("1KiB", 1 << 10), ("32KiB", 32 << 10), ("1MiB", 1 << 20)] {
        group.throughput(Throughput::Bytes(bytes as u64));
        let registry = Registry::builder().tool(Sized::new(bytes)).build().unwrap();
        let pipeline = Pipeline::builder(registry)
            .audit(std::sync::Arc::new(NullAuditSink))
            .build();
        // a new session every 1,000 calls, as in `dispatch`
        let session = std::cell::RefCell::new(pipeline.session("bench").build().unwrap());
        let mut n: u64 = 0;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    if n.is_multiple_of(1000) {
                        *session.borrow_mut() = pipeline.session("bench").build().unwrap();
                    }
                    ToolCall::new(format!("call-{n}"), "sized", json!({}))
                },
                |call| {
                    let r = rt.block_on(pipeline.dispatch(call, &session.borrow()));
                    assert!(!r.is_error, "{}", r.text());
                    r
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
