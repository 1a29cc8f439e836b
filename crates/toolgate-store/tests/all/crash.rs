//! A writer process killed with SIGKILL in the middle of a run leaves a readable, verifiable
//! log that holds at least every record it had flushed.
//!
//! The child is this test binary run again with `--exact all::crash::child_writer --ignored`
//! and `TOOLGATE_STORE_CRASH_DB` set: it writes records in a loop and prints the number
//! committed after each flush. The parent kills it with SIGKILL once it has flushed a few
//! thousand records, while it is still writing.

use super::support::rec;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_core::AuditSink;
use toolgate_store::{SqliteAuditSink, Store, Verification};

const DB_ENV: &str = "TOOLGATE_STORE_CRASH_DB";

/// The child: writes records forever (until killed), flushing every 500 and printing the
/// count flushed so far. Ignored unless run by `sigkill_mid_run_leaves_a_verifiable_log`.
#[test]
#[ignore = "the child process of sigkill_mid_run_leaves_a_verifiable_log"]
fn child_writer() {
    let Some(path) = std::env::var_os(DB_ENV) else {
        return;
    };
    let store = Store::open(path).unwrap();
    let sink = SqliteAuditSink::new(&store).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut i = 0u64;
    while Instant::now() < deadline {
        i += 1;
        sink.record(rec(i));
        if i.is_multiple_of(500) {
            sink.flush_checked().unwrap();
            println!("flushed {i}");
        }
    }
}

#[test]
fn sigkill_mid_run_leaves_a_verifiable_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "all::crash::child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DB_ENV, &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut flushed = 0u64;
    let deadline = Instant::now() + Duration::from_secs(30);
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("flushed ") {
            flushed = n.trim().parse().unwrap();
            if flushed >= 5_000 || Instant::now() > deadline {
                break;
            }
        }
    }
    assert!(flushed >= 500, "the child never flushed");
    // SIGKILL while it keeps writing
    child.kill().unwrap();
    let status = child.wait().unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    let store = Store::open_existing(&db).unwrap();
    let count = store.audit_count().unwrap();
    assert!(
        count >= flushed,
        "{count} records in the store, {flushed} were flushed before the kill"
    );
    match store.verify_audit().unwrap() {
        Verification::Intact { records, head, .. } => {
            assert_eq!(records, count);
            assert!(head.is_some());
        }
        broken => panic!("the log broke in the crash: {broken:?}"),
    }
    // and it takes more records after recovery
    let sink = SqliteAuditSink::new(&store).unwrap();
    sink.record(rec(0));
    sink.flush_checked().unwrap();
    assert!(store.verify_audit().unwrap().is_intact());
}
