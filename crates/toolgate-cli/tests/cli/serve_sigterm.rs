//! `toolgate serve` over stdio ends on SIGTERM while the client still holds stdin open (the
//! stdio transport's blocking read of stdin must not keep the process alive).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn serve_over_stdio_ends_on_sigterm_with_stdin_open() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--no-audit", "--workspace"])
        .arg(t.path())
        .env_remove("TOOLGATE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = serve.id().to_string();
    // a watchdog, so a server that ignores SIGTERM fails the test instead of hanging it
    std::thread::spawn({
        let pid = pid.clone();
        move || {
            std::thread::sleep(Duration::from_secs(20));
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    });
    // MCP over stdio: initialize, initialized, one tools/call; stdin stays open
    let (stdin, _stdout) = toolgate_test_support::clients::stdio_read_file_session(
        &mut serve,
        "sigterm-test",
        "hello",
    );

    let started = Instant::now();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let status = serve.wait().unwrap();
    let took = started.elapsed();
    drop(stdin);
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}
