//! stale-edit-90 (toctou_race): edit_file on a file another process keeps appending to never
//! loses an appended line: each edit commits on top of the latest content or fails with
//! `file_changed` (the model reads again and retries), and a line appended to the old file
//! around the commit is carried into the new one (where it can land one line late: order at
//! the very moment of the swap is not kept).

use super::write_support::*;
use serde_json::json;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use toolgate_core::ErrorKind;

#[tokio::test]
async fn stale_edit_90_no_appended_line_is_lost() {
    let w = Ws::new();
    w.write("log.txt", "HEADER 0\n");
    let path = w.ws().join("log.txt");
    let stop = Arc::new(AtomicBool::new(false));
    // as `echo "line N" >> log.txt` every 2 ms: open, append, close
    let appender = std::thread::spawn({
        let stop = stop.clone();
        let path = path.clone();
        move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                f.write_all(format!("line {n}\n").as_bytes()).unwrap();
                drop(f);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            n
        }
    });
    let (mut committed, mut refused) = (0, 0);
    let mut k = 0;
    while committed < 60 {
        let r = w
            .call(
                "edit_file",
                json!({"path": "log.txt", "old_string": format!("HEADER {k}\n"),
                       "new_string": format!("HEADER {}\n", k + 1)}),
            )
            .await;
        match &r.error {
            None => {
                committed += 1;
                k += 1;
            }
            Some(e) => {
                assert_eq!(
                    (e.kind, e.reason.as_deref()),
                    (ErrorKind::ToolFailed, Some("file_changed")),
                    "{e}"
                );
                refused += 1;
                assert!(refused < 10_000, "the edit never got through");
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let written = appender.join().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("HEADER 60"), "every edit is in");
    let seen: Vec<u64> = lines
        .map(|l| l.strip_prefix("line ").unwrap().parse().unwrap())
        .collect();
    let expected: Vec<u64> = (1..=written).collect();
    let mut sorted = seen.clone();
    sorted.sort();
    let missing: Vec<u64> = expected
        .iter()
        .filter(|n| !sorted.contains(n))
        .copied()
        .collect();
    let dup = sorted.windows(2).filter(|w| w[0] == w[1]).count();
    assert!(
        missing.is_empty() && dup == 0 && sorted.len() == expected.len(),
        "lines were lost: {missing:?}, {dup} doubled ({refused} edits refused)"
    );
    assert!(temp_files(&w.ws()).is_empty());
}
