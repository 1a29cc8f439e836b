//! The real clients the tests run as child processes: the program from the environment
//! (`.ci/run` installs each and names it in a `TOOLGATE_TEST_*` variable), the Python client
//! scripts with the module they share (`python/client_support.py` of this crate), a run
//! with a time limit, and a hand-driven stdio session with `toolgate serve`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The program a client test needs, from the environment variable `var` (for example
/// `TOOLGATE_TEST_PYTHON`, `TOOLGATE_TEST_NODE`); `None`, and a note on stderr, when it is
/// unset or empty: the test is skipped.
///
/// # Panics
/// When `var` is unset or empty under CI (`CI` set): there a missing client fails the test.
pub fn client_program(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set: .ci/run installs the MCP clients and sets it")
        }
        _ => {
            eprintln!("skipped: {var} is not set (.ci/run sets it)");
            None
        }
    }
}

/// The folder of `client_support.py`, the module the Python clients import.
pub fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// `python -W ignore SCRIPT` with the Python of `TOOLGATE_TEST_PYTHON` (see
/// [`client_program`]) and [`python_dir`] first on `PYTHONPATH`, writing no bytecode; add the
/// script's arguments.
/// `None` when the test is skipped.
///
/// # Panics
/// As [`client_program`], and when `PYTHONPATH` cannot be joined (a path holding the
/// platform's separator).
pub fn python_script(script: impl AsRef<Path>) -> Option<Command> {
    let python = client_program("TOOLGATE_TEST_PYTHON")?;
    let mut path = vec![python_dir()];
    if let Some(inherited) = std::env::var_os("PYTHONPATH") {
        path.extend(std::env::split_paths(&inherited));
    }
    let path = std::env::join_paths(path).expect("PYTHONPATH entries without separators");
    let mut cmd = Command::new(python);
    // no __pycache__ beside client_support.py in the source tree
    cmd.env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-W", "ignore"])
        .arg(script.as_ref());
    Some(cmd)
}

/// Runs `cmd` to completion (stdin empty), killing it after `limit`; panics with its output
/// when it fails.
pub fn run_ok(cmd: Command, limit: Duration) -> Output {
    run_status(cmd, limit, true)
}

/// Runs `cmd` to completion (stdin empty), killing it after `limit`; panics with its output
/// when it timed out, or failed while `must_succeed`.
pub fn run_status(mut cmd: Command, limit: Duration, must_succeed: bool) -> Output {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout is piped")));
    let err = drain(Box::new(child.stderr.take().expect("stderr is piped")));
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    while child.try_wait().expect("waiting for the child").is_none() {
        if Instant::now() > deadline {
            timed_out = true;
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = Output {
        status: child.wait().expect("waiting for the child"),
        stdout: out.join().expect("the stdout reader"),
        stderr: err.join().expect("the stderr reader"),
    };
    if timed_out || (must_succeed && !output.status.success()) {
        panic!(
            "{what} {}\n--- stdout\n{}\n--- stderr\n{}",
            if timed_out { "timed out" } else { "failed" },
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output
}

/// Drives a `toolgate serve` child over stdio by hand, as an MCP client that keeps stdin open
/// would (newline-delimited JSON-RPC, protocol revision 2025-06-18): `initialize` as `client`,
/// `notifications/initialized`, then `tools/call read_file {"path": "a.txt"}`, whose answer
/// must contain `expect`. Returns the child's stdin (still open: the caller decides when the
/// client goes away) and its stdout after those two answers.
///
/// # Panics
/// When the child's stdin or stdout is not piped, a pipe fails, or an answer is not the one
/// expected (the line read is in the message).
pub fn stdio_read_file_session(
    child: &mut Child,
    client: &str,
    expect: &str,
) -> (ChildStdin, BufReader<ChildStdout>) {
    let mut stdin = child.stdin.take().expect("the child's stdin is piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("the child's stdout is piped"));
    let mut send = |msg: &str| {
        stdin.write_all(msg.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    });
    send(&initialize.to_string());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":1"#), "{line}");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#,
    );
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(
        line.contains(r#""id":2"#) && line.contains(expect),
        "{line}"
    );
    (stdin, stdout)
}
