//! run_shell as a tool: results, arguments fed bad values, timeouts, cancellation, limits,
//! huge output, and refusing to run without its sandbox.

use super::shell_support::*;
use serde_json::json;
use std::time::{Duration, Instant};
use toolgate_core::{CancellationToken, ErrorKind, ToolCall, TypedTool};
use toolgate_tools::shell::run_shell::{RunShellArgs, RunShellOutput};
use toolgate_tools::shell::{sandbox_report, RunShell, ShellConfig, MAX_TIMEOUT_MS};

fn args(command: &str) -> RunShellArgs {
    serde_json::from_value(json!({ "command": command })).unwrap()
}

#[tokio::test]
async fn results_carry_exit_code_streams_and_signal() {
    let s = Shell::new();
    let o = s.run("echo out; echo err >&2; exit 3").await;
    assert_eq!(
        (o.exit_code, o.signal, o.stdout.as_str(), o.stderr.as_str()),
        (Some(3), None, "out\n", "err\n")
    );
    assert!(o.sandboxed && o.sandbox_missing.is_empty());
    assert!(!o.stdout_truncated && !o.stderr_truncated && o.stdout_handle.is_none());
    // a child killed by a signal shows in the shell's exit code
    let o = s.run("sh -c 'kill -9 $$'; exit $?").await;
    assert_eq!((o.exit_code, o.signal), (Some(137), None));
    // bash syntax errors are the shell's answer, not a toolgate failure
    let o = s.run("echo 'unterminated").await;
    assert_eq!(o.exit_code, Some(2));
    assert!(o.stderr.contains("unexpected EOF"), "{}", o.stderr);
    // stdin is empty, so a command reading it ends
    let o = s.run("cat; echo done").await;
    assert_eq!(o.stdout, "done\n");
}

/// limits-timeout-28 (numeric_limits): the schema caps timeout_ms at 600000, so
/// 999999999999 (and 0, negatives, strings, fractions) is refused before anything runs; with
/// no timeout_ms the default applies; the pipeline's own timeout is longer than the maximum.
#[tokio::test]
async fn limits_timeout_28_timeouts_are_bounded_by_the_schema() {
    let s = Shell::new();
    for bad in [
        json!(999_999_999_999u64),
        json!(600_001),
        json!(0),
        json!(-1),
        json!("5000"),
        json!(1.5),
    ] {
        let r = s
            .call(json!({"command": "touch ran.txt", "timeout_ms": bad}))
            .await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{bad} accepted"));
        assert_eq!(e.kind, ErrorKind::InvalidArguments, "{bad}: {e}");
        assert!(e.faults.iter().any(|f| f.pointer == "/timeout_ms"), "{e:?}");
    }
    assert!(!exists(s.ws().join("ran.txt")));
    let spec = s
        .pipeline
        .registry()
        .get("run_shell", None)
        .unwrap()
        .spec()
        .clone();
    assert_eq!(
        spec.input_schema["properties"]["timeout_ms"]["maximum"],
        MAX_TIMEOUT_MS
    );
    assert!(spec.timeout > Duration::from_millis(MAX_TIMEOUT_MS));
    let o = s.run("echo default").await;
    assert_eq!(o.stdout, "default\n");
    let started = Instant::now();
    let r = s
        .call(json!({"command": "sleep 100000", "timeout_ms": 300}))
        .await;
    let e = r.error.as_ref().expect("timed out");
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::OutcomeUnknown, Some("timeout"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_timeout_reports_the_end_of_the_output() {
    let s = Shell::new();
    let r = s
        .call(json!({"command": "echo started; echo oops >&2; sleep 30", "timeout_ms": 400}))
        .await;
    let e = r.error.as_ref().unwrap();
    assert!(
        e.message.contains("started") && e.message.contains("oops"),
        "{e}"
    );
    assert!(e.is_recoverable());
}

#[tokio::test]
async fn bad_commands_and_working_directories_are_refused() {
    let s = Shell::new();
    s.setup("mkdir sub && echo x > file.txt");
    for (args, pointer) in [
        (json!({"command": ""}), "/command"),
        (json!({}), "/command"),
        (json!({"command": 5}), "/command"),
        (json!({"command": "true", "cwd": ""}), "/cwd"),
        (json!({"command": "true", "extra": 1}), "/extra"),
    ] {
        let r = s.call(args.clone()).await;
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{args} accepted"));
        assert_eq!(e.kind, ErrorKind::InvalidArguments, "{args}: {e}");
        assert!(
            e.faults.iter().any(|f| f.pointer == pointer),
            "{args}: {e:?}"
        );
    }
    let r = s.call(json!({"command": "   "})).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
    let r = s.call(json!({"command": "x".repeat(100_001)})).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
    for (cwd, kind, reason) in [
        ("..", ErrorKind::UnsafeInput, "path_outside_workspace"),
        (
            "../outside",
            ErrorKind::UnsafeInput,
            "path_outside_workspace",
        ),
        ("/etc", ErrorKind::UnsafeInput, "path_outside_workspace"),
        ("missing", ErrorKind::ToolFailed, "not_found"),
        ("file.txt", ErrorKind::ToolFailed, "not_a_directory"),
    ] {
        let r = s
            .call(json!({"command": "touch ran.txt", "cwd": cwd}))
            .await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{cwd} accepted"));
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (kind, Some(reason)),
            "{cwd}: {e}"
        );
    }
    assert!(!exists(s.ws().join("ran.txt")) && !exists(s.t.join("ran.txt")));
    let r = s.call(json!({"command": "pwd", "cwd": "sub"})).await;
    assert!(output(&r).stdout.trim_end().ends_with("/ws/sub"));
}

#[tokio::test]
async fn cancellation_kills_the_whole_run() {
    let s = Shell::new();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let r = s
        .pipeline
        .dispatch_with(
            ToolCall::new(
                "c1",
                "run_shell",
                json!({"command": "(sleep 2; touch late.txt) & sleep 30"}),
            ),
            &s.session,
            cancel,
        )
        .await;
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!exists(s.ws().join("late.txt")));
}

#[tokio::test]
async fn the_handler_stops_at_its_context_deadline_and_on_cancellation() {
    let s = Shell::new();
    let tool = RunShell::new(ShellConfig::default());
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(s.session.workspace().unwrap().clone())
        .deadline(Instant::now() + Duration::from_secs(3))
        .build();
    let started = Instant::now();
    let e = tool.call(args("sleep 60"), ctx).await.unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("timeout"));
    assert!(started.elapsed() < Duration::from_secs(4));
    let token = CancellationToken::new();
    token.cancel();
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(s.session.workspace().unwrap().clone())
        .cancellation(token)
        .build();
    let e = tool.call(args("sleep 60"), ctx).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
}

#[tokio::test]
async fn resource_limits_and_privileges_apply() {
    let mut config = ShellConfig::default();
    config.limits.file_size_bytes = Some(1 << 20);
    config.limits.cpu_seconds = Some(2);
    config.limits.open_files = Some(256);
    let s = Shell::with(ShellSetup {
        config,
        ..ShellSetup::default()
    });
    let o = s
        .run("ulimit -f; ulimit -t; ulimit -n; ulimit -c; ulimit -v")
        .await;
    // bash shows the file size and address space limits in KiB
    assert_eq!(o.stdout, "1024\n2\n256\n0\n16777216\n");
    let o = s
        .run("head -c 2000000 /dev/zero > big.bin; echo $?; stat -c %s big.bin")
        .await;
    assert_eq!(o.stdout, "153\n1048576\n", "SIGXFSZ at the file size limit");
    let started = Instant::now();
    let o = s.run("while :; do :; done").await;
    // SIGXCPU at the limit, or SIGKILL when the shell (PID 1 of its namespace) ignores it
    assert!(matches!(o.signal, Some(9) | Some(24)), "{o:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let o = s
        .run("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status | awk '{print $2}' | sort -u")
        .await;
    assert_eq!(o.stdout, "0000000000000000\n", "no capability at all");
    let o = s.run("grep NoNewPrivs /proc/self/status").await;
    assert!(o.stdout.contains('1'));
}

/// output-huge-70 (output_truncation): 50 MB of output keeps the head and the tail with a
/// marker, the text stays within the caps, the cut is on a character boundary, the rest is
/// behind a handle that read_result pages through, and the whole result fits the tool's cap.
#[tokio::test]
async fn output_huge_70_huge_output_is_capped_with_head_tail_and_handle() {
    let s = Shell::new();
    let r = s
        .call(json!({"command": "echo FIRST; yes 'line of output' | head -c 50000000; echo; echo LAST; printf 'é%.0s' $(seq 30000) >&2"}))
        .await;
    let spec = s
        .pipeline
        .registry()
        .get("run_shell", None)
        .unwrap()
        .spec()
        .clone();
    assert!(
        r.text().len() <= spec.max_result_bytes,
        "{}",
        r.text().len()
    );
    let o: RunShellOutput = output(&r);
    assert_eq!(o.exit_code, Some(0));
    assert_eq!(o.stdout_bytes, 6 + 50_000_000 + 1 + 5);
    assert!(o.stdout_truncated && o.stderr_truncated);
    assert!(o.stdout.len() <= 24 << 10 && o.stderr.len() <= 12 << 10);
    assert!(o.stdout.starts_with("FIRST\nline of output\n"));
    assert!(o.stdout.ends_with("LAST\n"));
    assert!(o.stdout.contains("bytes of output left out here"));
    assert!(!o.stderr.contains('\u{FFFD}') && o.stderr.starts_with('é'));
    let handle = o.stdout_handle.expect("a handle");
    let page = s
        .pipeline
        .dispatch(
            ToolCall::new("p1", "read_result", json!({"handle": handle})),
            &s.session,
        )
        .await;
    assert!(!page.is_error, "{}", page.text());
    let text = page.structured_content.unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.starts_with("FIRST\nline of output\n"));
}

/// Without the sandbox's pieces run_shell refuses (sandbox_unavailable) and runs nothing,
/// unless the configuration opts out; then every result says it ran unsandboxed.
#[tokio::test]
async fn a_missing_sandbox_refuses_unless_the_configuration_opts_out() {
    let s = Shell::new();
    let mut report = sandbox_report();
    report.landlock_abi = 0;
    report.network_namespace = false;
    let tool = RunShell::new(ShellConfig::default()).with_sandbox_report(report.clone());
    let e = tool.call(args("touch ran.txt"), s.ctx()).await.unwrap_err();
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::ToolFailed, Some("sandbox_unavailable"))
    );
    assert!(
        e.message.contains("Landlock") && e.message.contains("network"),
        "{e}"
    );
    assert!(!exists(s.ws().join("ran.txt")));
    // network allowed: the missing network namespace no longer matters, Landlock still does
    let mut config = ShellConfig::default();
    config.allow_network = true;
    let tool = RunShell::new(config).with_sandbox_report(report.clone());
    let e = tool.call(args("touch ran.txt"), s.ctx()).await.unwrap_err();
    assert!(!e.message.contains("network"), "{e}");
    let mut config = ShellConfig::default();
    config.allow_unsandboxed = true;
    let tool = RunShell::new(config).with_sandbox_report(report);
    let o = tool
        .call(args("touch ran.txt; echo ok"), s.ctx())
        .await
        .unwrap();
    assert_eq!(o.stdout, "ok\n");
    assert!(!o.sandboxed && o.sandbox_missing.len() == 2, "{o:?}");
}

#[tokio::test]
async fn a_missing_shell_is_named() {
    let s = Shell::new();
    let mut config = ShellConfig::default();
    config.bash = "/nonexistent/bash".into();
    let e = RunShell::new(config)
        .call(args("true"), s.ctx())
        .await
        .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("shell_not_found"));
}

/// The Rust toolchain is found although `HOME` is private, and builds a small crate offline
/// without network (the "done when": an agent runs a project's tests). The tests run
/// under cargo, so cargo is on `PATH`.
#[tokio::test]
async fn cargo_builds_and_tests_a_small_crate_offline() {
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let s = Shell::new();
    s.setup(
        "mkdir -p src && printf '[package]\\nname = \"small\"\\nversion = \"0.1.0\"\\nedition = \"2021\"\\n' > Cargo.toml \
         && printf '#[test]\\nfn adds() { assert_eq!(2 + 2, 4); }\\n' > src/lib.rs",
    );
    let r = s
        .call(json!({"command": "cargo test --offline -q 2>&1", "timeout_ms": 300000}))
        .await;
    let o = output(&r);
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(o.stdout.contains("1 passed"), "{}", o.stdout);
}

/// run_shell derives no idempotency key: the same command sent twice runs twice (the tests
/// again, after an edit); with a key the caller sends, a re-send is answered from the ledger.
#[tokio::test]
async fn the_same_command_runs_again_unless_its_key_is_sent_again() {
    let s = Shell::new();
    s.run("echo x >> count.txt").await;
    s.run("echo x >> count.txt").await;
    assert_eq!(
        std::fs::read_to_string(s.ws().join("count.txt")).unwrap(),
        "x\nx\n"
    );
    let call = |id: &str| {
        ToolCall::new(
            id,
            "run_shell",
            json!({"command": "echo y >> keyed.txt; wc -l < keyed.txt"}),
        )
        .with_idempotency_key("K-0001")
    };
    let first = s.pipeline.dispatch(call("k1"), &s.session).await;
    let again = s.pipeline.dispatch(call("k2"), &s.session).await;
    assert!(!first.replayed && again.replayed, "{again:?}");
    assert_eq!(again.structured_content, first.structured_content);
    assert_eq!(
        std::fs::read_to_string(s.ws().join("keyed.txt")).unwrap(),
        "y\n"
    );
}
