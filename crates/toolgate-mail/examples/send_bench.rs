//! Sends per second through the whole pipeline with the SQLite ledger of toolgate-store,
//! to a local SMTP server (the BENCHMARKS.md figure of issue 14).
//!
//! ```sh
//! python3 -m aiosmtpd -n -l 127.0.0.1:8025 >/dev/null &
//! cargo run --release -p toolgate-mail --example send_bench -- 8025 500
//! ```
//!
//! Each call has its own idempotency key (a claim, one SMTP session, a completion), then
//! every key is sent again (each a replay from the ledger, nothing sent). Prints both rates
//! and the median and 99th percentile latency of each.

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_core::{Pipeline, PreApproved, Registry, ToolCall};
use toolgate_mail::{MailConfig, Tls};

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().and_then(|a| a.parse().ok()).unwrap_or(8025);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    let store = toolgate_store::Store::open(dir.path().join("toolgate.db")).unwrap();
    let tools = toolgate_mail::tools(
        MailConfig::new("127.0.0.1", "bench@example.com")
            .port(port)
            .tls(Tls::None),
    )
    .unwrap();
    let p = Pipeline::builder(Registry::builder().tools(tools).build().unwrap())
        .approver(Arc::new(PreApproved))
        .ledger(Arc::new(store))
        .build();
    let s = p
        .session("bench")
        .workspace(toolgate_core::Workspace::open(dir.path()).unwrap())
        .build()
        .unwrap();
    for round in ["send", "replay"] {
        let mut lat = Vec::with_capacity(n);
        let start = Instant::now();
        for i in 0..n {
            let args =
                json!({"to": ["ann@example.com"], "subject": format!("Bench {i}"), "body": "x"});
            let t = Instant::now();
            let r = p
                .dispatch(
                    ToolCall::new(format!("{round}-{i}"), "send_email", args)
                        .with_idempotency_key(format!("bench-{i}")),
                    &s,
                )
                .await;
            lat.push(t.elapsed());
            assert!(!r.is_error, "{r:?}");
            assert_eq!(r.replayed, round == "replay");
        }
        let total = start.elapsed();
        println!(
            "{round}: {n} calls in {:.2} s = {:.0} calls/s; median {:?}, p99 {:?}",
            total.as_secs_f64(),
            n as f64 / total.as_secs_f64(),
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        );
    }
}
