//! A long-running program under run_shell's sandbox (the gateway's stdio servers): it talks
//! over its pipes, writes only in the workspace, sees only the environment it is given,
//! reaches no network, and dies with its handle.

use super::shell_support::*;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolgate_tools::shell::{sandbox_report, SandboxedProcess, ShellConfig};

/// A line-at-a-time shell loop: each line read is run with `sh -c`, its output and then
/// `--END--` written back.
const LOOP: &str = "while IFS= read -r line; do sh -c \"$line\" 2>&1; echo --END--; done";

async fn ask(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    stdin: &mut tokio::process::ChildStdin,
    command: &str,
) -> String {
    stdin
        .write_all(format!("{command}\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the program answers")
            .unwrap()
            .expect("the program is running");
        if line == "--END--" {
            return out;
        }
        out.push_str(&line);
        out.push('\n');
    }
}

#[tokio::test]
async fn a_sandboxed_program_is_confined_and_dies_with_its_handle() {
    let s = Shell::new();
    let mut config = ShellConfig::default();
    std::env::set_var("TOOLGATE_TEST_PASSED_ON", "given");
    std::env::set_var("TOOLGATE_TEST_NOT_PASSED", "secret");
    config.inherit_env.push("TOOLGATE_TEST_PASSED_ON".into());
    // a run's git identity is not given to a server
    config.git_identity = toolgate_tools::shell::GitIdentity::Fixed(
        toolgate_tools::shell::Identity::new("Ada Operator", "ada@example.invalid").unwrap(),
    );
    let report = sandbox_report();
    let mut p = match SandboxedProcess::spawn(
        &config,
        &report,
        &s.ws(),
        Path::new("/bin/sh"),
        &["-c".to_string(), LOOP.to_string()],
    )
    .await
    {
        Ok(p) => p,
        Err(e) if e.reason.as_deref() == Some("sandbox_unavailable") => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert!(p.missing().is_empty(), "{:?}", p.missing());
    let mut stdin = p.child.stdin.take().unwrap();
    let mut lines = BufReader::new(p.child.stdout.take().unwrap()).lines();
    let pwd = ask(&mut lines, &mut stdin, "pwd").await;
    assert_eq!(pwd.trim(), s.ws().display().to_string());
    let env = ask(&mut lines, &mut stdin, "env").await;
    assert!(env.contains("TOOLGATE_TEST_PASSED_ON=given"), "{env}");
    assert!(!env.contains("secret"), "{env}");
    assert!(
        !env.contains("GIT_AUTHOR") && !env.contains("Ada Operator"),
        "{env}"
    );
    let w = ask(&mut lines, &mut stdin, "echo x > inside.txt && echo ok").await;
    assert_eq!(w.trim(), "ok");
    assert!(s.ws().join("inside.txt").exists());
    let outside = s.t.join("outside/escape.txt");
    ask(
        &mut lines,
        &mut stdin,
        &format!("echo x > {}", outside.display()),
    )
    .await;
    assert!(!outside.exists());
    let net = ask(&mut lines, &mut stdin, "cat /proc/net/dev").await;
    // a private network namespace: its own loopback and nothing else
    assert!(net.contains("lo:"), "{net}");
    assert_eq!(net.matches(':').count(), 1, "{net}");
    let pid = p.child.id().unwrap();
    drop(stdin);
    drop(lines);
    drop(p);
    // killed on drop: the process is gone within a moment
    let gone = async {
        while Path::new(&format!("/proc/{pid}")).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the process dies with its handle");
}

#[tokio::test]
async fn a_program_that_does_not_exist_is_a_clear_error() {
    let s = Shell::new();
    let report = sandbox_report();
    let e = SandboxedProcess::spawn(
        &ShellConfig::default(),
        &report,
        &s.ws(),
        Path::new("/nonexistent/server"),
        &[],
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            e.reason.as_deref(),
            Some("program_not_found" | "sandbox_unavailable")
        ),
        "{e:?}"
    );
}
