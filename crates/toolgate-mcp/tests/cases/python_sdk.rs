//! The official Python SDK (`mcp` from PyPI) over stdio and streamable HTTP, on both protocol
//! revisions: every scenario of `clients/mcp_client.py` (list, search_code, read_file,
//! recoverable errors, unknown tool, progress, cancellation, approval by elicitation, scoped
//! approval).

use super::support::{clients_dir, python_script, run_ok, HttpChild, TestDir, SERVER};
use std::process::Command;
use std::time::Duration;

fn python_client(scenario_args: &[&str], ws: &std::path::Path) -> Option<Command> {
    let mut cmd = python_script(clients_dir().join("mcp_client.py"))?;
    cmd.args(["--scenario", "all", "--workspace"])
        .arg(ws)
        .args(scenario_args);
    Some(cmd)
}

fn over_stdio(mode: &str) {
    let t = TestDir::new();
    let argv = serde_json::json!([SERVER, "--workspace", t.ws()]).to_string();
    let Some(cmd) = python_client(&["--mode", mode, "--stdio", &argv], &t.ws()) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: all"), "{stdout}");
}

fn over_http(mode: &str) {
    let t = TestDir::new();
    let server = HttpChild::start(&t.ws(), &[]);
    let token = server
        .token
        .clone()
        .expect("a token is made for this start");
    let Some(cmd) = python_client(
        &["--mode", mode, "--url", &server.url, "--token", &token],
        &t.ws(),
    ) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: all"), "{stdout}");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn python_sdk_over_stdio_on_2025_11_25() {
    over_stdio("legacy");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn python_sdk_over_stdio_on_2026_07_28() {
    over_stdio("2026-07-28");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn python_sdk_over_http_on_2025_11_25() {
    over_http("legacy");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn python_sdk_over_http_discovers_2026_07_28() {
    over_http("auto");
}
