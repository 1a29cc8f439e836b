//! What committing the audit records of a call that may act costs, before its handler runs
//! (the intent) and before its result returns (its record), against leaving both to the
//! writer thread as read-only calls do: one run, the two modes alternated.
//!
//! `cargo run --release -p toolgate-store --example durable_cost -- [ROUNDS] [CALLS] [full]`
//!
//! Workloads, each through a real `Pipeline` with the `SqliteAuditSink` on a new store file in
//! the system's temporary directory (`synchronous=NORMAL`, or `FULL` with `full`):
//!
//! - `noop`: a side-effecting tool that does nothing (the worst case for the ratio: the
//!   commit is all there is);
//! - `write_file`: the real `write_file` writing 1 KiB (temporary file, `fsync`, rename,
//!   directory `fsync`: what a real side effect costs);
//!
//! each sequentially (one call at a time: the latency a call gains) and with 32 concurrent
//! writers (32 tasks on a 2-worker runtime, each its own session: what group commit leaves of
//! it under load). `sync` is the shipped behaviour; `async` wraps the same sink so that
//! `record_durable` only queues the record (the behaviour before, and still that of read-only
//! calls). Every round runs both modes back to back, the first alternating, on fresh stores;
//! the ratio is sync / async of the mean time per call, reported per round and as the median.
//! The load average is printed before and after: the machine is shared.

use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use toolgate_core::{
    AuditCommit, AuditRecord, AuditSink, DynamicTool, Effects, Pipeline, PreApproved, Registry,
    ToolCall, ToolOutput, ToolSpec, Workspace,
};
use toolgate_store::{Durability, SqliteAuditSink, Store, StoreOptions};

/// The sink with `record_durable` turned into `record`: nothing waits for a commit.
struct AsyncOnly(Arc<SqliteAuditSink>);

impl AuditSink for AsyncOnly {
    fn record(&self, record: AuditRecord) {
        self.0.record(record);
    }

    fn record_durable(&self, record: AuditRecord) -> AuditCommit {
        self.0.record(record);
        AuditCommit::ready(Ok(()))
    }

    fn flush(&self) {
        self.0.flush();
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Async,
    Sync,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Work {
    Noop,
    WriteFile,
}

const WRITERS: usize = 32;

fn noop_tool() -> DynamicTool {
    let spec = ToolSpec::builder("noop_write")
        .description("Acts on nothing; side-effecting by its metadata.")
        .effects(Effects::side_effecting())
        .build()
        .expect("a valid spec");
    DynamicTool::new(spec, |_, _| async { Ok(ToolOutput::text("done")) })
}

/// Mean time per call in µs, and the groups the writer committed.
fn measure(work: Work, mode: Mode, calls: usize, concurrent: bool, full: bool) -> (f64, u64) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("ws")).expect("the workspace");
    let store = Store::open_with(
        dir.path().join("bench.db"),
        StoreOptions {
            durability: if full {
                Durability::Full
            } else {
                Durability::Normal
            },
            ..StoreOptions::default()
        },
    )
    .expect("a store");
    let sink = Arc::new(SqliteAuditSink::new(&store).expect("the audit writer"));
    let audit: Arc<dyn AuditSink> = match mode {
        Mode::Sync => sink.clone(),
        Mode::Async => Arc::new(AsyncOnly(sink.clone())),
    };
    let registry = Registry::builder()
        .tool(noop_tool())
        .tools(toolgate_tools::write_tools().expect("the write tools"))
        .build()
        .expect("a registry");
    // no derived idempotency keys: the calls repeat their arguments (`{}`, sixteen files),
    // and a replay from the ledger would run neither the tool nor its durable records,
    // which are what this measures
    let pipeline = Pipeline::builder(registry)
        .approver(Arc::new(PreApproved))
        .audit(audit)
        .ledger_options(toolgate_core::ledger::LedgerOptions {
            derived_key_window: std::time::Duration::ZERO,
            ..Default::default()
        })
        .build();
    let ws = Workspace::open(dir.path().join("ws")).expect("the workspace");
    let content = "x".repeat(1023) + "\n";
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let writers = if concurrent { WRITERS } else { 1 };
    let per = calls / writers;
    let started = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..writers)
            .map(|w| {
                let pipeline = pipeline.clone();
                let ws = ws.clone();
                let content = content.clone();
                tokio::spawn(async move {
                    let session = pipeline
                        .session(format!("w{w}"))
                        .workspace(ws)
                        .build()
                        .expect("a session");
                    for i in 0..per {
                        let call = match work {
                            Work::Noop => ToolCall::new(format!("c{i}"), "noop_write", json!({})),
                            Work::WriteFile => ToolCall::new(
                                format!("c{i}"),
                                "write_file",
                                json!({"path": format!("w{w}/f{}.txt", i % 16), "content": content}),
                            ),
                        };
                        let r = pipeline.dispatch(call, &session).await;
                        assert!(!r.is_error, "{}", r.text());
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("a writer");
        }
    });
    let took = started.elapsed();
    sink.flush_checked().expect("every record committed");
    let groups = sink.stats().groups;
    (took.as_secs_f64() * 1e6 / (per * writers) as f64, groups)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if !n.is_multiple_of(2) {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(5);
    let calls: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3_200);
    let full = args.iter().any(|a| a == "full");
    println!(
        "durable_cost: {rounds} rounds, {calls} calls per measurement, synchronous={}, load average {}",
        if full { "FULL" } else { "NORMAL" },
        loadavg()
    );
    println!("| workload | writers | async µs/call | sync µs/call | sync / async (median, per round) | groups async / sync |");
    println!("|---|---|---|---|---|---|");
    let started = Instant::now();
    for work in [Work::Noop, Work::WriteFile] {
        for concurrent in [false, true] {
            // write_file costs milliseconds a call on a disk: fewer calls
            let calls = match work {
                Work::Noop => calls,
                Work::WriteFile => (calls / 8).max(WRITERS),
            };
            let (mut a, mut s, mut ratios, mut ga, mut gs) =
                (Vec::new(), Vec::new(), Vec::new(), 0, 0);
            for round in 0..rounds {
                let order = if round.is_multiple_of(2) {
                    [Mode::Async, Mode::Sync]
                } else {
                    [Mode::Sync, Mode::Async]
                };
                let mut got = [0.0; 2];
                for mode in order {
                    let (us, groups) = measure(work, mode, calls, concurrent, full);
                    match mode {
                        Mode::Async => {
                            got[0] = us;
                            ga += groups;
                        }
                        Mode::Sync => {
                            got[1] = us;
                            gs += groups;
                        }
                    }
                }
                a.push(got[0]);
                s.push(got[1]);
                ratios.push(got[1] / got[0]);
            }
            let per_round: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "| {work:?} | {} | {:.1} | {:.1} | {:.2} ({}) | {} / {} |",
                if concurrent { WRITERS } else { 1 },
                median(&mut a),
                median(&mut s),
                median(&mut ratios.clone()),
                per_round.join(", "),
                ga / rounds as u64,
                gs / rounds as u64,
            );
        }
    }
    println!(
        "took {:.0} s; load average after {}",
        started.elapsed().as_secs_f64(),
        loadavg()
    );
}
