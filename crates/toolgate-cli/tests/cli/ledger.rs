//! The idempotency ledger through the binary: `call --idempotency-key` acting once, a real
//! SIGKILL of `toolgate call` and of `toolgate serve` in the middle of a side-effecting call
//! (run_shell appending to a file the test counts), the re-sends that follow, and the
//! operator's `ledger list` and `ledger resolve`, audited. `call` and `serve` share the store.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tools' timeout is lowered to 4 s, so a killed call's claim runs out 9 s after it was
/// made (the timeout and the 5 s grace), and the shell may run what the tests run.
const CONFIG: &str = r#"
[[rules]]
decision = "allow"
tool = "run_shell"

[[rules]]
decision = "allow"
resource = "command:echo"

[[rules]]
decision = "allow"
resource = "command:sleep"

[[rules]]
decision = "allow"
resource = "command:test"

[limits]
timeout_ms = 4000
"#;

fn lines_of(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

/// `toolgate call run_shell COMMAND --idempotency-key KEY --yes` in `ws`: exit code and
/// envelope.
fn shell(ws: &Path, command: &str, key: &str) -> (Option<i32>, Value) {
    let args = serde_json::json!({ "command": command }).to_string();
    let out = toolgate(
        &[
            "call",
            "run_shell",
            &args,
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "--idempotency-key",
            key,
        ],
        ws,
    );
    (out.status.code(), json(&out))
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Re-sends `command` with `key` until the answer is `outcome_unknown` (the killed call's
/// claim ran out); every answer before is `in_progress`, and nothing runs meanwhile.
fn resend_until_unsettled(ws: &Path, command: &str, key: &str, counted: &Path, count: usize) {
    let start = Instant::now();
    loop {
        let (code, v) = shell(ws, command, key);
        assert_eq!(code, Some(3), "{v}");
        assert_eq!(lines_of(counted), count, "a re-send acted");
        match v["error"]["kind"].as_str() {
            Some("in_progress") => {
                assert!(
                    v["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("wait for it to end"),
                    "{v}"
                );
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "still in progress"
                );
                std::thread::sleep(Duration::from_millis(500));
            }
            Some("outcome_unknown") => {
                assert_eq!(v["error"]["reason"], "unsettled", "{v}");
                return;
            }
            _ => panic!("{v}"),
        }
    }
}

fn audit(ws: &Path) -> Vec<Value> {
    let out = toolgate(&["audit", "--json", "-w", ws.to_str().unwrap()], ws);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_side_effecting_call_sent_again_with_its_key_acts_once() {
    let t = tree();
    let ws = t.path().join("ws");
    let once = "echo x >> count.txt";
    let (code, first) = shell(&ws, once, "K1");
    assert_eq!(code, Some(0), "{first}");
    assert!(first.get("replayed").is_none());
    let (code, again) = shell(&ws, once, "K1");
    assert_eq!(code, Some(0), "{again}");
    assert_eq!(again["replayed"], true);
    assert_eq!(again["structured_content"], first["structured_content"]);
    assert_eq!(lines_of(&ws.join("count.txt")), 1);
    // the key with another command: a conflict naming the key, nothing run
    let (code, other) = shell(&ws, "echo y >> count.txt", "K1");
    assert_eq!(code, Some(3));
    assert_eq!(other["error"]["reason"], "idempotency_conflict");
    assert!(other["error"]["message"]
        .as_str()
        .unwrap()
        .contains("\"K1\""));
    // a bad key is refused like any bad input, before anything runs
    for bad in ["has space", "", "ключ"] {
        let (code, v) = shell(&ws, "echo z >> count.txt", bad);
        assert_eq!(code, Some(3), "{bad:?}: {v}");
        assert_eq!(v["error"]["reason"], "invalid_idempotency_key", "{bad:?}");
    }
    assert_eq!(lines_of(&ws.join("count.txt")), 1);
    let ledger: Vec<(Value, Value)> = audit(&ws)
        .iter()
        .map(|r| (r["ledger"].clone(), r["idempotency_key"].clone()))
        .collect();
    assert_eq!(
        ledger[..3],
        [
            ("executed".into(), "K1".into()),
            ("replayed".into(), "K1".into()),
            (Value::Null, "K1".into()),
        ]
    );
    // the table shows the replay
    let table = toolgate(&["audit", "-w", ws.to_str().unwrap()], &ws);
    assert!(String::from_utf8_lossy(&table.stdout).contains("ok:replayed"));
}

#[test]
fn a_killed_call_is_never_run_again_until_the_operator_says_it_was_done() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    let command = "echo x >> count.txt; sleep 6";
    let counted = ws.join("count.txt");
    let args = serde_json::json!({ "command": command }).to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "call",
            "run_shell",
            &args,
            "--idempotency-key",
            "K-kill",
            "-w",
        ])
        .arg(&ws)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the effect", Duration::from_secs(10), || {
        lines_of(&counted) == 1
    });
    child.kill().unwrap();
    child.wait().unwrap();
    // any number of re-sends with the key: in progress until the claim runs out, then
    // unknown; the command never runs a second time
    resend_until_unsettled(&ws, command, "K-kill", &counted, 1);
    let w = ws.to_str().unwrap();
    let listed = toolgate(
        &["ledger", "list", "--state", "unknown", "--json", "-w", w],
        &ws,
    );
    let entry: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        (
            entry["key"].as_str(),
            entry["state"].as_str(),
            entry["tool"].as_str(),
            entry["call_id"].as_str()
        ),
        (
            Some("K-kill"),
            Some("unknown"),
            Some("run_shell"),
            Some("call-1")
        )
    );
    assert!(entry["arguments"].as_str().unwrap().contains("count.txt"));
    let table = toolgate(&["ledger", "list", "-w", w], &ws);
    assert!(String::from_utf8_lossy(&table.stdout).contains("K-kill"));
    // the operator checked: it was done
    let out = toolgate(&["ledger", "resolve", "nope", "--done", "-w", w], &ws);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no ledger entry with key \"nope\""));
    let out = toolgate(&["ledger", "resolve", "K-kill", "-w", w], &ws);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--done or --not-done is required"
    );
    let out = toolgate(
        &[
            "ledger",
            "resolve",
            "K-kill",
            "--done",
            "--note",
            "count.txt has its line",
            "-w",
            w,
        ],
        &ws,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, v) = shell(&ws, command, "K-kill");
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(v["error"]["reason"], "done_without_result");
    assert_eq!(v["replayed"], true);
    assert_eq!(lines_of(&counted), 1);
    let out = toolgate(&["ledger", "resolve", "K-kill", "--not-done", "-w", w], &ws);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to settle"));
    // the resolution is in the audit, and the chain holds
    let records = audit(&ws);
    let resolved = records
        .iter()
        .find(|r| r["ledger"] == "resolved_done")
        .expect("the resolution's record");
    assert_eq!(resolved["profile"], "operator");
    assert_eq!(resolved["idempotency_key"], "K-kill");
    assert_eq!(resolved["arguments"]["note"], "count.txt has its line");
    let verify = toolgate(&["audit", "verify", "-w", w], &ws);
    assert_eq!(verify.status.code(), Some(0));
}

/// Drives `toolgate serve` over stdio by hand: `initialize`, `initialized`, then one
/// `tools/call` of run_shell with `idempotencyKey` beside its arguments (SEP-3182).
fn serve_and_call(ws: &Path, command: &str, key: &str) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "-w"])
        .arg(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ledger-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_shell", "arguments": {"command": command}, "idempotencyKey": key}}),
    ];
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    // kept open: the client does not go away, the server is killed
    std::mem::forget(stdin);
    child
}

#[test]
fn a_killed_server_leaves_the_call_unknown_and_not_done_lets_it_run_once() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    // the effect happens only once `go` exists: the killed call's command ends without it
    let command = "echo s > started.txt; sleep 1; test -e go && echo x >> count.txt";
    let counted = ws.join("count.txt");
    let mut server = serve_and_call(&ws, command, "K-serve");
    wait_for("the call to start", Duration::from_secs(15), || {
        ws.join("started.txt").exists()
    });
    server.kill().unwrap();
    server.wait().unwrap();
    // the orphaned command ends (without acting) while the claim is still held
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(lines_of(&counted), 0);
    // `toolgate call` shares the server's ledger: never a silent re-run
    resend_until_unsettled(&ws, command, "K-serve", &counted, 0);
    let w = ws.to_str().unwrap();
    let out = toolgate(
        &["ledger", "resolve", "K-serve", "--not-done", "-w", w],
        &ws,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("the key is free"));
    std::fs::write(ws.join("go"), "").unwrap();
    let (code, v) = shell(&ws, command, "K-serve");
    assert_eq!(code, Some(0), "{v}");
    assert!(v.get("replayed").is_none());
    assert_eq!(lines_of(&counted), 1);
    let (code, v) = shell(&ws, command, "K-serve");
    assert_eq!((code, v["replayed"].as_bool()), (Some(0), Some(true)));
    assert_eq!(lines_of(&counted), 1);
    let events: Vec<Value> = audit(&ws).iter().map(|r| r["ledger"].clone()).collect();
    assert!(events.contains(&"resolved_not_done".into()), "{events:?}");
}

#[test]
fn ledger_commands_refuse_bad_input() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    // no store yet
    let out = toolgate(&["ledger", "list", "-w", w], &ws);
    assert_eq!(out.status.code(), Some(1));
    shell(&ws, "echo x", "K");
    let out = toolgate(&["ledger", "list", "--state", "maybe", "-w", w], &ws);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in_progress, unknown, succeeded or failed")
    );
    let out = toolgate(
        &["ledger", "resolve", "K", "--done", "--not-done", "-w", w],
        &ws,
    );
    assert_eq!(out.status.code(), Some(2));
    let note = "n".repeat(5000);
    let out = toolgate(
        &["ledger", "resolve", "K", "--done", "--note", &note, "-w", w],
        &ws,
    );
    assert_eq!(out.status.code(), Some(1));
    let out = toolgate(
        &[
            "ledger",
            "resolve",
            "K",
            "--done",
            "--principal",
            "bob",
            "-w",
            w,
        ],
        &ws,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("principal \"bob\""));
    for args in [&["ledger", "--help"][..], &["ledger", "resolve", "--help"]] {
        assert_eq!(toolgate(args, &ws).status.code(), Some(0));
    }
}

/// Security case retry-idempotency-71 (its class: a side-effecting call sent again after the
/// client gave up on it): over stdio, a client sends run_shell `sleep 1; echo x >>
/// count.txt` with idempotency key K-0001, gives up after 200 ms (stops waiting, cancels
/// nothing) and sends it again with the same key. count.txt gets exactly one line: the
/// re-send while the first runs is `in_progress` naming the first call; once it ended, a
/// re-send gets the first call's result. toolgate never runs it again on its own.
#[test]
fn retry_idempotency_71_a_call_sent_again_after_giving_up_acts_once() {
    use std::io::{BufRead, BufReader};
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    let command = "sleep 1; echo x >> count.txt";
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "-w"])
        .arg(&ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = server.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let answer = |id: u64| loop {
        let v = rx.recv_timeout(Duration::from_secs(20)).expect("an answer");
        if v["id"] == id {
            return v;
        }
    };
    let call = |id: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "run_shell", "arguments": {"command": command},
            "_meta": {"io.toolgate/idempotency-key": "K-0001"}}})
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "case-71", "version": "1"}}}),
    );
    answer(1);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(call(2));
    std::thread::sleep(Duration::from_millis(200));
    // gave up on 2: the same call again
    send(call(3));
    let busy = answer(3);
    let result = &busy["result"];
    assert_eq!(result["isError"], true, "{busy}");
    assert_eq!(
        result["_meta"]["toolgate/error"]["kind"], "in_progress",
        "{busy}"
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"2\"") && text.contains("K-0001"), "{text}");
    let first = answer(2);
    assert_eq!(first["result"]["isError"], false, "{first}");
    send(call(4));
    let again = answer(4);
    assert_eq!(
        again["result"]["_meta"]["toolgate/replayed"], true,
        "{again}"
    );
    assert_eq!(
        again["result"]["structuredContent"],
        first["result"]["structuredContent"]
    );
    assert_eq!(lines_of(&ws.join("count.txt")), 1);
    // the client goes away: the server ends, its audit records committed
    drop(stdin);
    wait_for("the server to end", Duration::from_secs(20), || {
        server.try_wait().unwrap().is_some()
    });
    // one run, one attempt: never retried on its own
    let executed: Vec<Value> = audit(&ws)
        .into_iter()
        .filter(|r| r["ledger"] == "executed")
        .collect();
    assert_eq!(executed.len(), 1);
    assert_eq!(executed[0]["attempts"], 1);
}

/// retry-idempotency-71 (idempotency), a retry after a timeout: the first call is stopped at
/// its timeout (`outcome_unknown`, reason `timeout`) after a partial effect; a re-send with
/// its key does not run it again (`unsettled`, whatever the order of the arguments' keys), and
/// the key with another `timeout_ms` is a conflict, not a new run.
#[test]
fn retry_idempotency_71_a_resend_after_a_timeout_never_runs_again() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    let call = |args: &str| {
        let out = toolgate(
            &[
                "call",
                "run_shell",
                args,
                "-w",
                w,
                "--yes",
                "--idempotency-key",
                "T-71",
            ],
            &ws,
        );
        json(&out)
    };
    let command = "echo x >> count.txt; sleep 5; echo y >> count.txt";
    let first = call(&serde_json::json!({"command": command, "timeout_ms": 500}).to_string());
    assert_eq!(
        (&first["error"]["kind"], &first["error"]["reason"]),
        (&"outcome_unknown".into(), &"timeout".into()),
        "{first}"
    );
    for args in [
        serde_json::json!({"command": command, "timeout_ms": 500}).to_string(),
        format!("{{ \"timeout_ms\": 500, \"command\": {command:?} }}"),
    ] {
        let again = call(&args);
        assert_eq!(
            (&again["error"]["kind"], &again["error"]["reason"]),
            (&"outcome_unknown".into(), &"unsettled".into()),
            "{again}"
        );
    }
    let other = call(&serde_json::json!({"command": command, "timeout_ms": 900}).to_string());
    assert_eq!(other["error"]["reason"], "idempotency_conflict", "{other}");
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(
        lines_of(&ws.join("count.txt")),
        1,
        "ran once, stopped, never again"
    );
    let executed = audit(&ws)
        .into_iter()
        .filter(|r| r["ledger"] == "executed")
        .count();
    assert_eq!(executed, 1);
}
