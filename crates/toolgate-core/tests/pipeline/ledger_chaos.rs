//! 1,000 side-effecting calls through the pipeline with the memory ledger, under injected
//! transient faults and timeouts, each sent again until settled: the counting server sees no
//! key twice (toolgate-store's tests run the same with the SQLite ledger).

use super::ledger::{options, setup_with};
use super::*;
use std::time::Duration;
use toolgate_test_support::chaos;
use toolgate_test_support::counting::Faults;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_faulty_calls_deliver_every_key_exactly_once() {
    let t = setup_with(
        |s| {
            s.faults = Faults::random(0x5eed_1ed9, chaos::mix());
            s.timeout = Duration::from_millis(500);
        },
        Arc::new(MemoryLedger::default()),
        options(),
    );
    let report = chaos::run(&t.p, 1000, 10).await;
    eprintln!("{report:?}");
    chaos::check(&t.server, 1000);
    // every kind of answer happened, and every unknown one was settled by the hook
    assert!(report.replays > 0 && report.in_progress > 0, "{report:?}");
    assert!(report.unknown > 0 && report.released > 0, "{report:?}");
}
