//! The "done when" through `toolgate serve`: the official Python MCP SDK, as the
//! agent, fixes a crate and runs its tests over stdio and over streamable HTTP, answering
//! approval questions through elicitation (`tests/clients/project_client.py`).
//!
//! The client comes from `.ci/run`: `TOOLGATE_TEST_PYTHON`, a venv with `mcp`. Without it the
//! tests are skipped with a note, except under CI (`CI` set), where they fail.

use super::project::{write_crate, LIB_RS};
use super::toolgate;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_test_support::clients::{python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// The client script `name` with `args`.
pub(super) fn client(name: &str, args: &[&str]) -> Option<Command> {
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/clients")
            .join(name),
    )?;
    cmd.args(args);
    Some(cmd)
}

/// `toolgate serve --http 127.0.0.1:0` in `ws`, with its URL and token read from stderr;
/// killed when dropped.
pub(super) struct HttpServe {
    child: Child,
    pub(super) url: String,
    pub(super) token: String,
}

impl HttpServe {
    pub(super) fn start(ws: &Path) -> HttpServe {
        let mut child = Command::new(TOOLGATE)
            .args([
                "serve",
                "--profile",
                "default",
                "--http",
                "127.0.0.1:0",
                "--workspace",
            ])
            .arg(ws)
            .env_remove("TOOLGATE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolgate serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let (mut url, mut token) = (None, None);
        while token.is_none() {
            let Some(Ok(line)) = lines.next() else { break };
            if let Some(u) = line.strip_prefix("toolgate: serving MCP at ") {
                url = Some(u.trim().to_string());
            } else if let Some(t) = line.strip_prefix("toolgate: token: ") {
                token = Some(t.trim().to_string());
            }
        }
        // keep reading so the server never blocks on a full pipe
        std::thread::spawn(move || lines.for_each(drop));
        HttpServe {
            child,
            url: url.expect("toolgate serve printed its address"),
            token: token.expect("toolgate serve printed its token"),
        }
    }
}

impl HttpServe {
    /// SIGTERM, as a user stopping it would: calls in flight finish, records are committed.
    pub(super) fn stop(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("running kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "toolgate serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A temporary directory with the crate in `ws/` (and nothing else).
fn project() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    write_crate(&ws);
    (t, ws)
}

/// The audit records of the workspace's store, oldest first.
pub(super) fn audit(ws: &Path) -> Vec<Value> {
    let out = toolgate(
        &[
            "audit",
            "--json",
            "--limit",
            "0",
            "--workspace",
            ws.to_str().unwrap(),
        ],
        ws,
    );
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What the session left behind: the fixed file, and one audit record per call with the
/// approvals and refusals the client gave. With `round_trips` (2026-07-28 over HTTP), a call
/// that asks is two requests, and the first, which only carries the question back, is
/// recorded as waiting for input (outcome `input_required`, approval `pending`, no error):
/// those records are left out of the summary.
fn check_after(ws: &Path, round_trips: bool) {
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        LIB_RS.replace("a - b", "a + b")
    );
    let records = audit(ws);
    let declined = |r: &&Value| r["error_kind"] == "approval_rejected";
    assert!(
        records
            .iter()
            .filter(declined)
            .any(|r| r["tool"] == "run_shell" && r["arguments"]["command"] == "rm -rf src"),
        "{records:#?}"
    );
    let asked = |r: &&Value| r["outcome"] == "input_required";
    for r in records.iter().filter(asked) {
        assert_eq!(
            (&r["approval"], &r["error_kind"]),
            (&Value::from("pending"), &Value::Null),
            "{r:#}"
        );
    }
    assert_eq!(
        records.iter().any(|r| asked(&r)),
        round_trips,
        "{records:#?}"
    );
    let left_out =
        |r: &&Value| asked(r) || (declined(r) && r["arguments"]["command"] == "rm -rf src");
    let decided: Vec<&Value> = records.iter().filter(|r| !left_out(r)).collect();
    let summary: Vec<(&str, &str)> = decided
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap(),
                r["error_kind"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("read_file", "-"),
            ("run_shell", "-"),
            ("edit_file", "tool_failed"),
            ("edit_file", "unsafe_input"),
            ("edit_file", "-"),
            ("run_shell", "-"),
            ("run_shell", "-"),
            ("write_file", "approval_corrected"),
        ],
        "{records:#?}"
    );
    // the edit bound to fail and the refused path stopped before the policy: nobody was asked
    let stopped_first =
        |r: &&&Value| r["error_kind"] == "unsafe_input" || r["error_kind"] == "tool_failed";
    for r in decided.iter().filter(stopped_first) {
        assert_eq!(
            (&r["decision"], &r["approval"]),
            (&Value::Null, &Value::Null),
            "{r:#}"
        );
    }
    for r in decided
        .iter()
        .filter(|r| r["tool"] != "read_file" && !stopped_first(r))
    {
        assert_eq!(r["decision"], "ask", "{r:#}");
    }
    let out = toolgate(
        &["audit", "verify", "--workspace", ws.to_str().unwrap()],
        ws,
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_mcp_agent_fixes_a_crate_over_stdio() {
    let (_t, ws) = project();
    let argv = serde_json::json!([TOOLGATE, "serve", "--profile", "default", "--workspace", ws])
        .to_string();
    let Some(cmd) = client(
        "project_client.py",
        &[
            "--mode",
            "legacy",
            "--workspace",
            ws.to_str().unwrap(),
            "--stdio",
            &argv,
        ],
    ) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(300));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: project"));
    // the stdio server has ended with its client, its records committed
    check_after(&ws, false);
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_mcp_agent_fixes_a_crate_over_http_on_2026_07_28() {
    let (_t, ws) = project();
    let server = HttpServe::start(&ws);
    let Some(cmd) = client(
        "project_client.py",
        &[
            "--mode",
            "auto",
            "--workspace",
            ws.to_str().unwrap(),
            "--url",
            &server.url,
            "--token",
            &server.token,
        ],
    ) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(300));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: project"));
    server.stop();
    check_after(&ws, true);
}
