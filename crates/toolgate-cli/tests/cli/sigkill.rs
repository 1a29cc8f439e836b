//! No side effect without its audit record: `toolgate serve --http` killed with SIGKILL while
//! 16 clients write files through it, again and again, and `toolgate call` killed at random
//! moments of a write. Afterwards every acknowledged call has its record, every file on disk
//! has at least the intent of the call that wrote it, and the chain verifies.

use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;
const KILLS: usize = 4;
/// Calls acknowledged in a round before its kill is armed (then the clients write on for
/// [`LOAD`]), so a slow or busy machine still kills under load.
const ROUND_CALLS: usize = 40;
/// How long the clients write after [`ROUND_CALLS`] before each kill.
const LOAD: Duration = Duration::from_millis(300);

/// The workspace: write_file allowed without asking, so a client without elicitation can
/// write.
fn workspace(t: &Path) -> std::path::PathBuf {
    let ws = t.join("ws");
    std::fs::create_dir_all(ws.join("load")).unwrap();
    std::fs::write(
        ws.join("toolgate.toml"),
        "[[rules]]\ndecision = \"allow\"\ntool = \"write_file\"\n",
    )
    .unwrap();
    ws
}

/// `toolgate serve --http 127.0.0.1:0 --no-token` on `ws`, and its address.
fn serve(ws: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-token",
            "--workspace",
        ])
        .arg(ws)
        .env_remove("TOOLGATE_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
            if let Some(url) = line.strip_prefix("toolgate: serving MCP at ") {
                let addr = url
                    .trim()
                    .trim_start_matches("http://")
                    .trim_end_matches("/mcp");
                std::thread::spawn(move || while rx.recv().is_ok() {});
                return (child, addr.to_owned());
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("toolgate serve did not print its address");
}

/// One stateless 2026-07-28 `tools/call` of write_file; `Some(true)` when the result says it
/// wrote, `Some(false)` for an error result, `None` when no answer came (the server died).
fn write_call(addr: &str, id: u64, path: &str) -> Option<bool> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "write_file",
        "arguments": {"path": path, "content": format!("written by {path}\n")},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "sigkill-test", "version": "0"}
        }
    }})
    .to_string();
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: write_file\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body.as_bytes()).ok()?;
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    // the JSON-RPC response: an SSE `data:` line or the body
    let answer = resp
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == id)?;
    Some(answer["result"]["isError"] == false && answer["result"].is_object())
}

/// Paths named in the arguments of the records `toolgate audit ARGS --json` prints.
fn recorded_paths(ws: &Path, args: &[&str], outcome: &str) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "--json", "--limit", "0", "--workspace"])
        .arg(ws)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["tool"] == "write_file" && r["outcome"] == outcome)
        .filter_map(|r| r["arguments"]["path"].as_str().map(str::to_owned))
        .collect()
}

fn verify(ws: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "verify", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

/// The files the load left, by path relative to the workspace.
fn files(ws: &Path) -> BTreeSet<String> {
    std::fs::read_dir(ws.join("load"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt"))
        .map(|n| format!("load/{n}"))
        .collect()
}

#[test]
fn serve_killed_under_write_load_leaves_no_acknowledged_call_or_file_without_a_record() {
    let t = tempfile::tempdir().unwrap();
    let ws = workspace(t.path());
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut unanswered = 0;
    for round in 0..KILLS {
        let (mut server, addr) = serve(&ws);
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (addr, stop, acknowledged) = (addr.clone(), stop.clone(), acknowledged.clone());
                std::thread::spawn(move || {
                    let mut unanswered = 0;
                    for n in 0u64.. {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let path = format!("load/r{round}-c{c}-{n}.txt");
                        match write_call(&addr, n, &path) {
                            Some(true) => acknowledged.lock().unwrap().push(path),
                            Some(false) => panic!("{path}: an error result"),
                            None => {
                                // the server is down until the next round
                                unanswered += 1;
                                std::thread::sleep(Duration::from_millis(5));
                            }
                        }
                    }
                    unanswered
                })
            })
            .collect();
        let before = acknowledged.lock().unwrap().len();
        let deadline = Instant::now() + Duration::from_secs(60);
        while acknowledged.lock().unwrap().len() < before + ROUND_CALLS {
            assert!(Instant::now() < deadline, "round {round}: no load");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(LOAD);
        server.kill().unwrap(); // SIGKILL, mid-write
        let _ = server.wait();
        stop.store(true, Ordering::SeqCst);
        for c in clients {
            unanswered += c.join().unwrap();
        }
    }
    let acknowledged: BTreeSet<String> = acknowledged.lock().unwrap().drain(..).collect();
    assert!(
        acknowledged.len() >= ROUND_CALLS * KILLS,
        "too little load to show anything: {} calls",
        acknowledged.len()
    );
    let completed = recorded_paths(&ws, &[], "ok");
    let unfinished = recorded_paths(&ws, &["--outcome", "started"], "started");
    let missing: Vec<_> = acknowledged.difference(&completed).collect();
    assert!(
        missing.is_empty(),
        "acknowledged without a record: {missing:?}"
    );
    // every file on disk was written by a call with a record: its own, or its intent
    let on_disk = files(&ws);
    let unrecorded: Vec<_> = on_disk
        .iter()
        .filter(|p| !completed.contains(*p) && !unfinished.contains(*p))
        .collect();
    assert!(
        unrecorded.is_empty(),
        "files without a record: {unrecorded:?}"
    );
    // an unfinished intent is a call in flight at a kill, which its client never heard of
    assert!(unfinished.len() <= CLIENTS * KILLS, "{unfinished:?}");
    assert!(unfinished.is_disjoint(&acknowledged));
    let verdict = verify(&ws);
    assert!(verdict.starts_with("audit log intact"), "{verdict}");
    eprintln!(
        "{} acknowledged, {} on disk, {} unfinished, {unanswered} unanswered",
        acknowledged.len(),
        on_disk.len(),
        unfinished.len()
    );
}

#[test]
fn toolgate_call_killed_at_any_moment_of_a_write_leaves_no_file_without_a_record() {
    let t = tempfile::tempdir().unwrap();
    let ws = workspace(t.path());
    // kills spread over the life of a call: before the store opens, around the intent, the
    // write and rename, the record, and after the exit
    let mut outcomes = HashMap::new();
    for (i, delay_ms) in (0..24u64).map(|i| (i, 5 + i * 25)).collect::<Vec<_>>() {
        let path = format!("load/call-{i}.txt");
        let args = json!({"path": path, "content": format!("call {i}\n")}).to_string();
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["call", "write_file", &args, "--yes", "--id"])
            .arg(format!("call-{i}"))
            .arg("--workspace")
            .arg(&ws)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        // a printed envelope is an acknowledgement
        let printed = serde_json::from_slice::<Value>(&out.stdout)
            .map(|v| v["is_error"] == false)
            .unwrap_or(false);
        outcomes.insert(path, printed);
    }
    let completed = recorded_paths(&ws, &[], "ok");
    let unfinished = recorded_paths(&ws, &["--outcome", "started"], "started");
    for (path, printed) in &outcomes {
        if *printed {
            assert!(completed.contains(path), "{path}: printed without a record");
        }
    }
    for path in files(&ws) {
        assert!(
            completed.contains(&path) || unfinished.contains(&path),
            "{path}: on disk without a record"
        );
    }
    let verdict = verify(&ws);
    assert!(verdict.starts_with("audit log intact"), "{verdict}");
}

/// The processes whose command line is exactly `argv`.
fn processes(argv: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted))
        .collect()
}

/// A run_shell command in the background and in the foreground, and `toolgate call` killed
/// with SIGKILL while it runs: nothing of the run is left (its PID 1 gets SIGKILL when the
/// thread it was forked from dies, and the rest of its PID namespace dies with it; without
/// a PID namespace the next start kills what its cgroup holds).
#[test]
fn a_run_does_not_outlive_a_toolgate_killed_by_sigkill() {
    let t = super::tree();
    let ws = t.path().join("ws");
    // a duration no other process uses: the run's processes are found by their command line
    let marker = format!("313.{}", std::process::id());
    let command = format!("sleep {marker} & sleep {marker}");
    let args = json!({ "command": command }).to_string();
    let mut call = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "run_shell", &args, "--yes", "-w"])
        .arg(&ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleep = ["sleep", marker.as_str()];
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes(&sleep).len() < 2 {
        if Instant::now() > deadline || call.try_wait().unwrap().is_some() {
            let _ = call.kill();
            let out = call.wait_with_output().unwrap();
            panic!(
                "the run's two sleeps never showed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    call.kill().unwrap();
    call.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes(&sleep).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes(&sleep);
    for pid in &left {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "the run outlived toolgate: {left:?}");
}
