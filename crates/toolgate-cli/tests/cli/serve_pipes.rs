//! Broken pipes never kill `toolgate serve`: a client that stops reading stdout ends its
//! session (a clean shutdown, every audit record written), and a closed stderr costs log
//! lines, not the server, over HTTP and over stdio.

use super::mcp::{self, call, HttpServe, StdioServe};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every file written has an audit record of the write that made it, with outcome `ok`.
fn every_write_recorded(ws: &std::path::Path, files: &[String]) {
    let records = mcp::audit(ws);
    for f in files {
        assert!(
            records.iter().any(|r| r["tool"] == "write_file"
                && r["outcome"] == "ok"
                && r["arguments"]["path"] == f.as_str()),
            "{f} was written but no audit record says so: {:#?}",
            records
                .iter()
                .filter(|r| r["arguments"]["path"] == f.as_str())
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_client_that_stops_reading_stdout_ends_the_session_not_the_process() {
    let t = mcp::workspace();
    let ws = mcp::ws(&t);
    let mut child = Command::new(mcp::TOOLGATE)
        .args(["serve", "--workspace"])
        .arg(&ws)
        .env("TOOLGATE_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: &Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut line = String::new();
    send(&mcp::initialize(0, json!({})));
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("protocolVersion"), "{line}");
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for i in 0..10 {
        send(&call(
            i,
            "write_file",
            json!({"path": format!("f{i:02}.txt"), "content": "x"}),
        ));
        line.clear();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("bytes_written"), "{line}");
    }
    // the client stops reading (stdin stays open): the next answers cannot be written
    drop(stdout);
    for i in 10..40 {
        send(&call(
            i,
            "write_file",
            json!({"path": format!("f{i:02}.txt"), "content": "x"}),
        ));
    }
    let status = mcp::wait_exit(&mut child, Duration::from_secs(30));
    drop(stdin);
    let log = log.join().unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {log}");
    assert!(status.success(), "{status:?}: {log}");
    assert!(log.contains("stopped reading"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    let files = mcp::written(&ws);
    assert!(files.len() >= 10, "{files:?}");
    every_write_recorded(&ws, &files);
}

#[test]
fn a_closed_stderr_costs_log_lines_not_the_server_over_http() {
    let t = mcp::workspace();
    let ws = mcp::ws(&t);
    let mut server = HttpServe::start(&ws, &[], &[("TOOLGATE_LOG", "debug")], true);
    server.close_stderr();
    let session = server.session(json!({}));
    let h: Vec<&str> = session.iter().map(String::as_str).collect();
    for i in 0..20 {
        let write = call(
            i,
            "write_file",
            json!({"path": format!("f{i:02}.txt"), "content": "x"}),
        );
        let r = server.post(write.to_string().as_bytes(), &h);
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(
            r.json()["result"]["structuredContent"]["bytes_written"],
            1,
            "{r:?}"
        );
        // a failed call logs a warning too
        let missing = call(100 + i, "read_file", json!({"path": "missing.txt"}));
        let r = server.post(missing.to_string().as_bytes(), &h);
        assert_eq!(r.status, 200, "{r:?}");
        assert!(r.body.contains("\"isError\":true"), "{r:?}");
    }
    // refused requests log too
    for _ in 0..20 {
        let r = server.post(b"{not json", &h);
        assert_eq!(r.status, 400, "{r:?}");
    }
    assert_eq!(server.child.try_wait().unwrap(), None, "the server died");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    every_write_recorded(&ws, &mcp::written(&ws));
    assert_eq!(mcp::written(&ws).len(), 20);
}

#[test]
fn a_closed_stderr_costs_log_lines_not_the_server_over_stdio() {
    let t = mcp::workspace();
    let ws = mcp::ws(&t);
    let mut child = Command::new(mcp::TOOLGATE)
        .args(["serve", "--workspace"])
        .arg(&ws)
        .env("TOOLGATE_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // closed before the server writes a line
    drop(child.stderr.take());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdin
        .write_all(format!("{}\n", mcp::initialize(0, json!({}))).as_bytes())
        .unwrap();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("protocolVersion"), "{line}");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    for i in 0..20 {
        let write = call(
            i,
            "write_file",
            json!({"path": format!("f{i:02}.txt"), "content": "x"}),
        );
        stdin
            .write_all(format!("{write}\nnot json\n").as_bytes())
            .unwrap();
        for _ in 0..2 {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            assert!(!line.is_empty(), "the server died");
        }
    }
    drop(stdin);
    let status = mcp::wait_exit(&mut child, Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    every_write_recorded(&ws, &mcp::written(&ws));
    assert_eq!(mcp::written(&ws).len(), 20);
}

#[test]
fn stdio_serve_answers_until_the_client_leaves_with_stdin_open_or_closed() {
    // the plain path still works: answers, then a clean exit when stdin closes
    let t = mcp::workspace();
    let mut s = StdioServe::start(&mcp::ws(&t), &[], &[]);
    s.handshake(json!({}));
    s.send(&call(1, "read_file", json!({"path": "ok.txt"})));
    let a = s.recv();
    assert_eq!(a["id"], 1);
    assert!(a["result"]["content"].to_string().contains("ok"), "{a}");
    assert!(s.finish().success());
}
