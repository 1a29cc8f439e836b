//! N calls through a real pipeline with the SQLite audit sink, then count and verify the rows.
//!
//! `cargo run --release -p toolgate-store --example audit_load -- 1000000 [DB]`
//!
//! Dispatches `echo {"text": ...}` N times (a fresh call id each, a new session every 1,000
//! calls, every 10th call with a secret in its arguments) on a current-thread runtime, flushes
//! the sink, then counts the rows of the `audit` table and walks the hash chain. Prints one line
//! per phase and exits 1 unless the store holds exactly N records and the chain is intact.
//! The store is a new file in a temporary directory unless DB names one (it must not exist).

use serde_json::json;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use toolgate_core::{Pipeline, Registry, ToolCall};
use toolgate_store::{SqliteAuditSink, Store, Verification};
use toolgate_test_support::tools::Echo;

/// User and system CPU seconds of this process's thread whose name starts with `prefix`, from
/// `/proc/self/task/*/stat` (Linux; `None` elsewhere).
fn thread_cpu(prefix: &str) -> Option<f64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
        // fields after the parenthesised name: state is field 3, utime 14, stime 15
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 =
            fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
        return Some(ticks / 100.0);
    }
    None
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let n: u64 = match args.next().map(|a| a.replace('_', "").parse()) {
        Some(Ok(n)) => n,
        None => 1_000_000,
        Some(Err(e)) => {
            eprintln!("usage: audit_load [N] [DB]: N must be a count ({e})");
            return ExitCode::from(2);
        }
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let path = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("audit_load.db"));
    if path.exists() {
        eprintln!("{} exists; name a new file", path.display());
        return ExitCode::from(2);
    }
    let store = match Store::open(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let sink = Arc::new(SqliteAuditSink::new(&store).expect("the audit writer"));
    let pipeline = Pipeline::builder(
        Registry::builder()
            .tool(Echo::default())
            .build()
            .expect("registry"),
    )
    .audit(sink.clone())
    .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let started = Instant::now();
    let errors = rt.block_on(async {
        let mut errors = 0u64;
        let mut session = pipeline.session("load-0").build().expect("session");
        for i in 0..n {
            if i > 0 && i.is_multiple_of(1000) {
                session = pipeline
                    .session(format!("load-{}", i / 1000))
                    .build()
                    .expect("session");
            }
            let text = if i.is_multiple_of(10) {
                "Bearer abcdefghijklmnopqrstuvwxyz"
            } else {
                "hello"
            };
            let r = pipeline
                .dispatch(
                    ToolCall::new(format!("call-{i}"), "echo", json!({ "text": text })),
                    &session,
                )
                .await;
            errors += u64::from(r.is_error);
        }
        errors
    });
    let dispatched = started.elapsed();
    let flush = sink.flush_checked();
    let flushed = started.elapsed();
    let stats = sink.stats();
    println!(
        "dispatched {n} calls in {:.2} s ({:.0} calls/s, {errors} errors); all committed after {:.2} s ({:.0} records/s end to end, {} groups, {} waits for queue room)",
        dispatched.as_secs_f64(),
        n as f64 / dispatched.as_secs_f64(),
        flushed.as_secs_f64(),
        n as f64 / flushed.as_secs_f64(),
        stats.groups,
        stats.queue_full_waits,
    );
    // CPU time per thread (Linux), which the machine's other load does not inflate
    if let (Some(writer), Some(caller)) = (thread_cpu("toolgate-audit-"), thread_cpu("audit_load"))
    {
        println!(
            "cpu: caller thread {:.2} s ({:.2} µs per call), writer thread {:.2} s ({:.2} µs per record)",
            caller,
            caller * 1e6 / n as f64,
            writer,
            writer * 1e6 / n as f64,
        );
    }
    if let Err(e) = flush {
        eprintln!("{e}");
        return ExitCode::from(1);
    }
    let t = Instant::now();
    let count = store.audit_count().expect("count");
    println!(
        "rows in the audit table: {count} (counted in {:.2} s)",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let verdict = store.verify_audit().expect("verify");
    println!(
        "verify: {} in {:.2} s",
        serde_json::to_string(&verdict).unwrap_or_default(),
        t.elapsed().as_secs_f64()
    );
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("store file: {:.1} MiB", size as f64 / (1u64 << 20) as f64);
    let ok = count == n
        && matches!(verdict, Verification::Intact { records, .. } if records == n)
        && errors == 0;
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: expected {n} records in an intact chain and no errors");
        ExitCode::from(1)
    }
}
