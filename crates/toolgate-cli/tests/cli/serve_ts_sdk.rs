//! The official TypeScript MCP SDK (`@modelcontextprotocol/sdk`, pinned in `.ci/run`) drives
//! `toolgate serve` over stdio and over streamable HTTP (`tests/clients/ts_client.mjs`): the
//! tool list, a result past the cap that the SDK validates against its outputSchema, an
//! error, approvals accepted and declined through elicitation, progress, and a cancelled call
//! whose command is stopped before its next step.
//!
//! The client comes from `.ci/run`: `TOOLGATE_TEST_NODE`, the Node 22 installed with the SDK
//! in the same `node_modules`. Without it `cargo test` lists the tests as ignored (the build
//! script's `toolgate_no_node`), except under CI (`CI` set), where they fail.

use super::serve_project::{audit, HttpServe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use toolgate_test_support::clients::{client_program, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// A workspace with `many/` (1,200 files with long names) and `outside.txt` beside it.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("many")).unwrap();
    for i in 0..1200 {
        std::fs::write(
            ws.join(format!("many/an_entry_with_a_fairly_long_name_{i:04}.txt")),
            "x",
        )
        .unwrap();
    }
    std::fs::write(t.path().join("outside.txt"), "CANARY-OUT\n").unwrap();
    (t, ws)
}

/// `node ts_client.mjs NODE_MODULES WS ...server` with the Node of `TOOLGATE_TEST_NODE`.
fn client(ws: &Path, server: &[&str]) -> Option<Command> {
    let node = client_program("TOOLGATE_TEST_NODE")?;
    // .../node_modules/node/bin/node: the SDK is installed beside it
    let modules = node
        .ancestors()
        .nth(3)
        .expect("TOOLGATE_TEST_NODE is node_modules/node/bin/node")
        .to_path_buf();
    let mut cmd = Command::new(node);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_client.mjs"))
        .arg(modules)
        .arg(ws)
        .args(server);
    Some(cmd)
}

/// The server's records: the cancelled run_shell is recorded as cancelled, the declined one
/// as rejected.
fn check_after(ws: &Path) {
    let records = audit(ws);
    let shell: Vec<&str> = records
        .iter()
        .filter(|r| r["tool"] == "run_shell")
        .map(|r| r["error_kind"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        shell,
        ["-", "approval_rejected", "cancelled"],
        "{records:#?}"
    );
}

#[test]
#[cfg_attr(
    toolgate_no_node,
    ignore = "needs TOOLGATE_TEST_NODE with the TypeScript SDK beside it (README: Prerequisites)"
)]
fn the_typescript_sdk_drives_toolgate_serve_over_stdio() {
    let (_t, ws) = workspace();
    let argv = serde_json::json!([TOOLGATE, "serve", "--profile", "default", "--workspace", ws])
        .to_string();
    let Some(cmd) = client(&ws, &["--stdio", &argv]) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(240));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: ts-sdk"));
    check_after(&ws);
}

#[test]
#[cfg_attr(
    toolgate_no_node,
    ignore = "needs TOOLGATE_TEST_NODE with the TypeScript SDK beside it (README: Prerequisites)"
)]
fn the_typescript_sdk_drives_toolgate_serve_over_http() {
    let (_t, ws) = workspace();
    let server = HttpServe::start(&ws);
    let Some(cmd) = client(&ws, &["--url", &server.url, "--token", &server.token]) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(240));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: ts-sdk"));
    server.stop();
    check_after(&ws);
}
