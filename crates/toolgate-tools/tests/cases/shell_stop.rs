//! A run_shell timeout or cancellation stops the script itself before it can start another
//! step, whatever the script does with SIGTERM (the shell is PID 1 of its namespace, which
//! SIGTERM from outside does not reach), and the message says what was done.

use super::shell_support::*;
use serde_json::json;
use std::time::{Duration, Instant};
use toolgate_core::{CancellationToken, ErrorKind, ToolCall, ToolResult, TypedTool};
use toolgate_tools::shell::{RunShell, ShellConfig};

/// Every shape of script that could take a step after its timeout: a sequence, `&&`, a
/// subshell, a subshell ignoring SIGTERM, a trap that handles SIGTERM and goes on, a script
/// ignoring SIGTERM, a loop of short steps. None of their late files appears, the call
/// returns within the timeout and the grace, and a child that cleans up on SIGTERM does so.
#[tokio::test]
async fn a_timeout_stops_the_script_before_its_next_step() {
    let s = Shell::new();
    let pidns = toolgate_tools::shell::sandbox_report().pid_namespace;
    let scripts = [
        "sleep 5; touch seq.txt",
        "sleep 5 && touch and.txt",
        "(sleep 5; touch sub.txt)",
        "(trap '' TERM; sleep 1.3; touch subtrap.txt)",
        "trap 'echo caught' TERM; sleep 5; touch trap.txt",
        "trap '' TERM; sleep 5; touch ignore.txt",
        "trap '' TERM; sleep 1.2 & wait; touch ignore-wait.txt",
        "for i in $(seq 100); do echo $i >> count.txt; sleep 0.05; done",
        "sh -c 'trap \"echo cleaned > cleaned.txt; exit 0\" TERM; sleep 10 & wait'; touch after.txt",
    ];
    let started = Instant::now();
    let calls = scripts
        .iter()
        .map(|c| s.call(json!({"command": c, "timeout_ms": 1000})));
    let results: Vec<ToolResult> = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    let counted = std::fs::read_to_string(s.ws().join("count.txt")).unwrap();
    for (script, r) in scripts.iter().zip(&results) {
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{script}: ran on"));
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::OutcomeUnknown, Some("timeout")),
            "{script}: {e}"
        );
        assert!(
            e.message
                .contains("halted at once, so it started no further step"),
            "{script}: {e}"
        );
        if pidns {
            assert!(
                e.message.contains("no process of the command is left"),
                "{script}: {e}"
            );
        }
    }
    // the timeout, the grace (500 ms) and the slack of a loaded machine
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
    let ignoring = &results[3].error.as_ref().unwrap().message;
    assert!(
        ignoring.contains("SIGTERM") && ignoring.contains("killed at once"),
        "{ignoring}"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    for late in [
        "seq.txt",
        "and.txt",
        "sub.txt",
        "subtrap.txt",
        "trap.txt",
        "ignore.txt",
        "ignore-wait.txt",
        "after.txt",
    ] {
        assert!(
            !exists(s.ws().join(late)),
            "{late} was created after the timeout"
        );
    }
    assert_eq!(
        std::fs::read_to_string(s.ws().join("count.txt")).unwrap(),
        counted,
        "the loop went on after the call returned"
    );
    assert!(counted.lines().count() < 100);
    assert_eq!(
        std::fs::read_to_string(s.ws().join("cleaned.txt")).unwrap(),
        "cleaned\n",
        "a command that cleans up on SIGTERM gets to"
    );
}

/// A cancelled call is stopped before the script's next step too: through the pipeline (which
/// drops the handler, and with it kills the run at once) and in the handler itself (which
/// stops the run as at a timeout and says so).
#[tokio::test]
async fn a_cancel_stops_the_script_before_its_next_step() {
    let s = &Shell::new();
    let scripts = [
        "sleep 5; touch one.txt",
        "trap '' TERM; sleep 5; touch two.txt",
        "trap 'echo caught' TERM; sleep 5; touch three.txt",
    ];
    let cancel_soon = || {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            trigger.cancel();
        });
        cancel
    };
    let through_pipeline = scripts.iter().enumerate().map(|(i, command)| {
        let call = ToolCall::new(format!("c{i}"), "run_shell", json!({ "command": command }));
        let cancel = cancel_soon();
        async move {
            let started = Instant::now();
            let r = s.pipeline.dispatch_with(call, &s.session, cancel).await;
            (r.error.expect("cancelled"), started.elapsed())
        }
    });
    let in_handler = scripts.iter().map(|command| {
        let ctx = toolgate_core::ToolContext::builder()
            .workspace(s.session.workspace().unwrap().clone())
            .cancellation(cancel_soon())
            .build();
        let args =
            serde_json::from_value(json!({ "command": command.replace(".txt", "-direct.txt") }))
                .unwrap();
        async move {
            let started = Instant::now();
            let e = TypedTool::call(&RunShell::new(ShellConfig::default()), args, ctx)
                .await
                .expect_err("cancelled");
            assert!(e.message.contains("started no further step"), "{e}");
            (e, started.elapsed())
        }
    });
    let (piped, direct) = tokio::join!(
        futures::future::join_all(through_pipeline),
        futures::future::join_all(in_handler)
    );
    for (e, elapsed) in piped.into_iter().chain(direct) {
        assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    for late in ["one", "two", "three"] {
        for file in [format!("{late}.txt"), format!("{late}-direct.txt")] {
            assert!(
                !exists(s.ws().join(&file)),
                "{file} was created after the cancel"
            );
        }
    }
}

/// A run whose commands end at once on SIGTERM is not held for the whole grace.
#[tokio::test]
async fn the_grace_ends_when_the_commands_have_ended() {
    let s = Shell::new();
    let started = Instant::now();
    let r = s
        .call(json!({"command": "sleep 30; touch late.txt", "timeout_ms": 300}))
        .await;
    let e = r.error.as_ref().expect("timed out");
    assert_eq!(e.reason.as_deref(), Some("timeout"));
    assert!(!e.message.contains("whatever was left after"), "{e}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}
