//! What the idempotency ledger adds to a side-effecting call.
//!
//! `cargo bench -p toolgate-store --bench ledger` (a plain harness: the variants alternate in
//! one run, so the machine's other load falls on all of them alike)
//!
//! A side-effecting no-op tool (not read-only, not idempotent, not destructive, risk external:
//! the default policy allows it without asking) dispatched through every stage on a
//! current-thread runtime, no audit sink, a fresh call id each time:
//!
//! - `no_ledger`: no key and derived keys off (window zero): the call runs as before the
//!   ledger;
//! - `sqlite_ledger`: a fresh idempotency key per call, the ledger in a store file on disk
//!   (`synchronous=NORMAL`, WAL): the claim committed before the handler runs, the completion
//!   after (two write transactions);
//! - `sqlite_ledger_derived`: no key, derived keys on (hash of the arguments, key derived from
//!   the session), the SQLite ledger; a fresh argument per call so each call is a new key;
//! - `memory_ledger`: a fresh key per call, the ledger in memory;
//! - `sqlite_ledger_full`: as `sqlite_ledger` with `synchronous=FULL` (an fsync per commit).
//!
//! Rounds of 500 calls per variant, the variants in turn, 20 rounds; per-call times, their
//! median and 90th percentile per variant, and the load average before and after.

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_core::{
    DynamicTool, Effects, LedgerOptions, Pipeline, Registry, Risk, Session, ToolCall, ToolOutput,
    ToolSpec,
};
use toolgate_store::{Durability, Store, StoreOptions};

const ROUNDS: usize = 20;
const PER_ROUND: usize = 500;

fn registry() -> Registry {
    let spec = ToolSpec::builder("notify")
        .description("A side-effecting no-op.")
        .input_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "additionalProperties": false
        }))
        .effects(Effects {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: true,
            concurrency_safe: false,
        })
        .risk(Risk::External)
        .build()
        .unwrap();
    Registry::builder()
        .tool(DynamicTool::new(spec, |_, _| async {
            Ok(ToolOutput::text("ok"))
        }))
        .build()
        .unwrap()
}

struct Variant {
    name: &'static str,
    pipeline: Pipeline,
    session: Session,
    keyed: bool,
    samples: Vec<u64>,
}

fn variant(name: &'static str, builder: toolgate_core::PipelineBuilder, keyed: bool) -> Variant {
    let pipeline = builder.build();
    let session = pipeline.session("s").build().unwrap();
    Variant {
        name,
        pipeline,
        session,
        keyed,
        samples: Vec::with_capacity(ROUNDS * PER_ROUND),
    }
}

fn store(dir: &std::path::Path, name: &str, durability: Durability) -> Arc<Store> {
    let options = StoreOptions {
        durability,
        ..StoreOptions::default()
    };
    Arc::new(Store::open_with(dir.join(name), options).unwrap())
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

fn main() {
    // criterion-style flags (`--bench`) are accepted and ignored
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let off = LedgerOptions {
        derived_key_window: Duration::ZERO,
        ..LedgerOptions::default()
    };
    let mut variants = vec![
        variant(
            "no_ledger",
            Pipeline::builder(registry()).ledger_options(off),
            false,
        ),
        variant(
            "sqlite_ledger",
            Pipeline::builder(registry()).ledger(store(dir.path(), "a.db", Durability::Normal)),
            true,
        ),
        variant(
            "sqlite_ledger_derived",
            Pipeline::builder(registry()).ledger(store(dir.path(), "b.db", Durability::Normal)),
            false,
        ),
        variant("memory_ledger", Pipeline::builder(registry()), true),
        variant(
            "sqlite_ledger_full",
            Pipeline::builder(registry()).ledger(store(dir.path(), "c.db", Durability::Full)),
            true,
        ),
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let before = load();
    let mut n = 0u64;
    for round in 0..=ROUNDS {
        for v in &mut variants {
            for _ in 0..PER_ROUND {
                n += 1;
                // built outside the measured time, alike for every variant
                let mut call = ToolCall::new(format!("c{n}").as_str(), "notify", json!({"n": n}));
                if v.keyed {
                    call = call.with_idempotency_key(format!("k{n}"));
                }
                let start = Instant::now();
                let r = rt.block_on(v.pipeline.dispatch(call, &v.session));
                let took = start.elapsed();
                assert!(!r.is_error && !r.replayed, "{r:?}");
                // round 0 warms up
                if round > 0 {
                    v.samples.push(took.as_nanos() as u64);
                }
            }
        }
    }
    let after = load();
    println!("load average before: {}", before.trim());
    println!("load average after:  {}", after.trim());
    println!(
        "{:<24} {:>10} {:>10} {:>10}",
        "variant", "median µs", "p90 µs", "added µs"
    );
    let median = |s: &mut Vec<u64>| {
        s.sort_unstable();
        (s[s.len() / 2], s[s.len() * 9 / 10])
    };
    let (base, _) = median(&mut variants[0].samples.clone());
    for v in &mut variants {
        let (m, p90) = median(&mut v.samples);
        println!(
            "{:<24} {:>10.1} {:>10.1} {:>10.1}",
            v.name,
            m as f64 / 1e3,
            p90 as f64 / 1e3,
            (m as f64 - base as f64) / 1e3
        );
    }
}
