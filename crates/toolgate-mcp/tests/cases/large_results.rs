//! Results past the byte cap through the official Python SDK, over stdio on both revisions and
//! over streamable HTTP (`clients/large_client.py`, the test server with `--write-tools` for
//! run_shell): every built-in whose output can
//! pass the cap (list_dir of 1,200 entries, glob of 1,200 paths, search_code of 1,000 matches,
//! read_file of escaped controls, run_shell, edit_file's diff of escaped controls) returns structured content the SDK accepts, the
//! rest readable by read_result; run_shell keeps the end of its output and stops at its
//! timeout before its script's next step; a read_result page is a bounded message.

use super::support::{clients_dir, python_script, run_ok, HttpChild, TestDir, SERVER};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The workspace the client expects (see `large_client.py`).
fn prepare(ws: &Path) {
    let many = ws.join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..1200 {
        std::fs::write(
            many.join(format!("an_entry_with_a_fairly_long_name_{i:04}.txt")),
            "x",
        )
        .unwrap();
    }
    for d in 0..12 {
        let dir = ws.join(format!(
            "deep/a_directory_with_a_rather_long_name_{d:02}/and_another_long_directory_name_below"
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..100 {
            std::fs::write(dir.join(format!("file_{i:03}.txt")), "x").unwrap();
        }
    }
    let lines: String = (0..1000)
        .map(|i| format!("line {i:04}: a NEEDLE in a longer line of text, so that the search results pass the cap\n"))
        .collect();
    std::fs::write(ws.join("matches.txt"), lines).unwrap();
    let controls: String = (0..400)
        .map(|_| format!("{}\n", "\u{1}".repeat(100)))
        .collect();
    std::fs::write(ws.join("controls.txt"), controls).unwrap();
    let edit: String = (0..10)
        .map(|_| format!("{}x\n", "\u{2}".repeat(3000)))
        .collect();
    std::fs::write(ws.join("edit.txt"), edit).unwrap();
}

fn client(ws: &Path, server: &[&str]) -> Option<Command> {
    let mut cmd = python_script(clients_dir().join("large_client.py"))?;
    cmd.arg("--workspace").arg(ws).args(server);
    Some(cmd)
}

fn over_stdio(mode: &str) {
    let t = TestDir::new();
    prepare(&t.ws());
    let argv = serde_json::json!([SERVER, "--workspace", t.ws(), "--write-tools"]).to_string();
    let Some(cmd) = client(&t.ws(), &["--mode", mode, "--stdio", &argv]) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(300));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: large"));
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn large_results_reach_the_python_sdk_over_stdio_on_2025_11_25() {
    over_stdio("legacy");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn large_results_reach_the_python_sdk_over_stdio_on_2026_07_28() {
    over_stdio("2026-07-28");
}

fn over_http(mode: &str) {
    let t = TestDir::new();
    prepare(&t.ws());
    let server = HttpChild::start(&t.ws(), &["--write-tools"]);
    let token = server
        .token
        .clone()
        .expect("a token is made for this start");
    let Some(cmd) = client(
        &t.ws(),
        &["--mode", mode, "--url", &server.url, "--token", &token],
    ) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(300));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: large"));
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn large_results_reach_the_python_sdk_over_http_on_2025_11_25() {
    over_http("legacy");
}

/// Each 2026-07-28 request is stateless: the handles of one are read by the next, as the
/// caller's.
#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn large_results_reach_the_python_sdk_over_http_on_2026_07_28() {
    over_http("2026-07-28");
}
