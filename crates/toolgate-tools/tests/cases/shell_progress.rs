//! run_shell's output streamed as progress while the command runs: in order, while it runs
//! (not only at the end), coalesced to a few reports a second, without terminal escapes, and
//! capped in total however much the command prints.

use super::shell_support::*;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolgate_core::{CancellationToken, ProgressReport, ToolCall, ToolResult};
use toolgate_tools::shell::StreamLimits;

/// The reports of one call, with when each arrived.
type Received = Arc<Mutex<Vec<(Instant, ProgressReport)>>>;

async fn call_with_progress(
    s: &Shell,
    command: &str,
) -> (ToolResult, Vec<(Instant, ProgressReport)>, Instant) {
    let got: Received = Arc::default();
    let sink = got.clone();
    let r = s
        .pipeline
        .dispatch_with_progress(
            ToolCall::new(
                format!("p-{command:.8}"),
                "run_shell",
                json!({ "command": command }),
            ),
            &s.session,
            CancellationToken::new(),
            Arc::new(move |r: ProgressReport| sink.lock().unwrap().push((Instant::now(), r))),
        )
        .await;
    let ended = Instant::now();
    let got = std::mem::take(&mut *got.lock().unwrap());
    (r, got, ended)
}

#[tokio::test]
async fn output_lines_arrive_while_the_command_runs() {
    let s = Shell::new();
    let started = Instant::now();
    let (r, got, ended) = call_with_progress(
        &s,
        "for i in 1 2 3 4 5; do echo line-$i; printf '\\033[1;32mgreen\\033[0m\\r\\n'; sleep 0.3; done; echo warn >&2",
    )
    .await;
    let o = output(&r);
    assert_eq!(o.exit_code, Some(0));
    let text: Vec<&str> = got
        .iter()
        .flat_map(|(_, r)| r.message.as_deref().unwrap_or("").lines())
        .collect();
    let mut want: Vec<&str> = Vec::new();
    for line in ["line-1", "line-2", "line-3", "line-4", "line-5"] {
        want.extend([line, "green"]);
    }
    want.push("[stderr] warn");
    assert_eq!(text, want, "{got:?}");
    // streamed, not gathered at the end: the first lines came long before the result
    let first = got[0].0;
    assert!(
        ended - first >= Duration::from_millis(700),
        "{:?} {:?}",
        first - started,
        ended - first
    );
    // coalesced: at most one report per 250 ms interval, plus the last
    let elapsed = ended - started;
    assert!(
        got.len() as u128 <= elapsed.as_millis() / 250 + 2,
        "{} reports in {elapsed:?}",
        got.len()
    );
    // progress is the bytes read so far: it grows, and ends at the output's size
    let progress: Vec<f64> = got.iter().map(|(_, r)| r.progress).collect();
    assert!(progress.windows(2).all(|w| w[1] > w[0]), "{progress:?}");
    assert_eq!(
        *progress.last().unwrap(),
        (o.stdout_bytes + o.stderr_bytes) as f64
    );
    assert!(got.iter().all(|(_, r)| r.total.is_none()));
}

#[tokio::test]
async fn huge_output_streams_a_bounded_amount() {
    let mut setup = ShellSetup::default();
    setup.config.progress = StreamLimits {
        interval: Duration::from_millis(20),
        ..StreamLimits::default()
    };
    let s = Shell::with(setup);
    let limits = StreamLimits::default();
    let (r, got, _) = call_with_progress(
        &s,
        "for i in $(seq 1 40); do head -c 300000 /dev/urandom | base64 -w 200; sleep 0.02; done",
    )
    .await;
    let o = output(&r);
    assert!(o.stdout_bytes > 10_000_000, "{}", o.stdout_bytes);
    let total: usize = got
        .iter()
        .map(|(_, r)| r.message.as_deref().unwrap_or("").len())
        .sum();
    assert!(
        total <= limits.max_total_bytes + 200,
        "{total} bytes streamed"
    );
    let last = got.last().unwrap().1.message.clone().unwrap();
    assert!(
        last.starts_with("[output streaming stopped after"),
        "{last}"
    );
    for (_, r) in &got {
        assert!(r.message.as_deref().unwrap().len() <= limits.max_message_bytes + 32);
    }
}

#[tokio::test]
async fn without_a_listener_nothing_is_streamed_and_the_result_is_the_same() {
    let s = Shell::new();
    let o = s.run("printf 'a\\nb\\n'").await;
    assert_eq!(o.stdout, "a\nb\n");
    let (r, got, _) = call_with_progress(&s, "printf 'a\\nb\\n'").await;
    assert_eq!(output(&r).stdout, "a\nb\n");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].1.message.as_deref(), Some("a\nb"));
}
