//! The `toolgate` binary end to end: real processes on a real temporary tree.

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

#[path = "cli/approval_scope.rs"]
mod approval_scope;
#[path = "cli/approvals.rs"]
mod approvals;
#[path = "cli/audit_secrets.rs"]
mod audit_secrets;
#[path = "cli/config.rs"]
mod config;
#[path = "cli/config_limits.rs"]
mod config_limits;
#[path = "cli/dup_keys.rs"]
mod dup_keys;
#[path = "cli/edges.rs"]
mod edges;
#[path = "cli/formats.rs"]
mod formats;
#[path = "cli/gateway.rs"]
mod gateway;
#[path = "cli/gateway_catalog.rs"]
mod gateway_catalog;
#[path = "cli/gateway_clients.rs"]
mod gateway_clients;
#[path = "cli/gateway_flood.rs"]
mod gateway_flood;
#[path = "cli/gateway_ledger.rs"]
mod gateway_ledger;
#[path = "cli/gateway_relay.rs"]
mod gateway_relay;
#[path = "cli/gateway_requests.rs"]
mod gateway_requests;
#[path = "cli/gateway_tls.rs"]
mod gateway_tls;
#[path = "cli/http.rs"]
mod http;
#[path = "cli/identity.rs"]
mod identity;
#[path = "cli/identity_attack.rs"]
mod identity_attack;
#[path = "cli/ledger.rs"]
mod ledger;
#[path = "cli/leftovers.rs"]
mod leftovers;
#[path = "cli/mail.rs"]
mod mail;
#[path = "cli/mail_rows.rs"]
mod mail_rows;
#[path = "cli/mcp.rs"]
mod mcp;
#[path = "cli/policy_file.rs"]
mod policy_file;
#[path = "cli/project.rs"]
mod project;
#[path = "cli/resources.rs"]
mod resources;
#[path = "cli/serve_agent.rs"]
mod serve_agent;
#[path = "cli/serve_framing.rs"]
mod serve_framing;
#[path = "cli/serve_ledger.rs"]
mod serve_ledger;
#[path = "cli/serve_limits.rs"]
mod serve_limits;
#[path = "cli/serve_pipes.rs"]
mod serve_pipes;
#[path = "cli/serve_project.rs"]
mod serve_project;
#[path = "cli/serve_sigterm.rs"]
mod serve_sigterm;
#[path = "cli/serve_ts_sdk.rs"]
mod serve_ts_sdk;
#[path = "cli/shell_git_identity.rs"]
mod shell_git_identity;
#[path = "cli/shell_paths.rs"]
mod shell_paths;
#[path = "cli/shell_rules.rs"]
mod shell_rules;
#[path = "cli/sigkill.rs"]
mod sigkill;
#[path = "cli/stdio.rs"]
mod stdio;
#[path = "cli/store.rs"]
mod store;
#[path = "cli/usage.rs"]
mod usage;
#[path = "cli/views.rs"]
mod views;
#[path = "cli/write.rs"]
mod write;

fn toolgate(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("running toolgate")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("ws/src")).unwrap();
    std::fs::create_dir_all(t.path().join("outside")).unwrap();
    std::fs::write(t.path().join("outside/secret.txt"), "CANARY-OUT\n").unwrap();
    std::fs::write(
        t.path().join("ws/src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(t.path().join("ws/src/lib.rs"), "pub fn helper() {}\n").unwrap();
    t
}

#[test]
fn call_search_code_returns_structured_matches() {
    let t = tree();
    let ws = t.path().join("ws");
    let out = toolgate(
        &[
            "call",
            "search_code",
            r#"{"pattern":"fn main"}"#,
            "--workspace",
            ws.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["call_id"], "call-1");
    assert_eq!(v["is_error"], false);
    let m = &v["structured_content"]["matches"][0];
    assert_eq!(
        (m["path"].as_str(), m["line"].as_u64(), m["column"].as_u64()),
        (Some("src/main.rs"), Some(1), Some(1))
    );
    assert_eq!(m["text"], "fn main() {");
    // the call left one audit record in the workspace's store
    let audit = toolgate(
        &["audit", "--json", "--workspace", ws.to_str().unwrap()],
        t.path(),
    );
    let text = String::from_utf8(audit.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let rec: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(rec["tool"], "search_code");
    assert_eq!(rec["outcome"], "ok");
}

#[test]
fn exit_codes_distinguish_recoverable_and_fatal_errors() {
    let t = tree();
    let ws = t.path().join("ws");
    let ws = ws.to_str().unwrap();
    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"../outside/secret.txt"}"#,
            "-w",
            ws,
            "--no-audit",
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "unsafe_input");
    assert_eq!(v["error"]["reason"], "path_outside_workspace");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("CANARY-OUT"));

    let out = toolgate(
        &[
            "call",
            "no_such_tool",
            "{}",
            "-w",
            ws,
            "--no-audit",
            "--id",
            "x-9",
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(4));
    let v = json(&out);
    assert_eq!(
        (v["error"]["kind"].as_str(), v["call_id"].as_str()),
        (Some("unknown_tool"), Some("x-9"))
    );

    let out = toolgate(
        &["call", "read_file", "{not json", "-w", ws, "--no-audit"],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json(&out)["error"]["kind"], "invalid_arguments");

    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"src/main.rs"}"#,
            "-w",
            ws,
            "--no-audit",
            "--profile",
            "nope",
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));

    let out = toolgate(
        &[
            "call",
            "read_file",
            "{}",
            "-w",
            "/definitely/not/here",
            "--no-audit",
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn tools_lists_sorted_definitions_for_a_profile() {
    let t = tree();
    let out = toolgate(
        &["tools", "--format", "json", "--profile", "explore"],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "glob",
            "list_dir",
            "read_file",
            "read_result",
            "search_code"
        ]
    );
    for d in v.as_array().unwrap() {
        assert_eq!(d["inputSchema"]["type"], "object");
        assert_eq!(
            d["inputSchema"]["additionalProperties"], false,
            "{}",
            d["name"]
        );
        assert!(d["outputSchema"].is_object());
    }
    let text = toolgate(&["tools"], t.path());
    let listed = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(listed.lines().count() >= 6, "{listed}");
    assert!(listed.lines().any(|l| l.contains("run_shell")), "{listed}");
    assert_eq!(
        toolgate(&["tools", "--profile", "nope"], t.path())
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn validate_checks_recorded_calls() {
    let t = tree();
    let defs = t.path().join("defs.json");
    std::fs::write(
        &defs,
        r#"[{"name":"get_weather","description":"d","parameters":{"type":"dict","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}]"#,
    )
    .unwrap();
    let calls = t.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        concat!(
            r#"{"source":"ok","function_name":"get_weather","arguments":{"city":"Oslo"}}"#, "\n",
            r#"{"source":"enum","function_name":"get_weather","arguments":{"city":"Oslo","unit":"k"}}"#, "\n",
            r#"{"source":"extra","function_name":"get_weather","arguments":{"city":"Oslo","when":"now"}}"#, "\n",
            "\n",
            "garbage\n",
        ),
    )
    .unwrap();
    let out = toolgate(
        &[
            "validate",
            "--definitions",
            defs.to_str().unwrap(),
            "--calls",
            calls.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(
        lines[0],
        serde_json::json!({"source": "ok", "valid": true, "errors": []})
    );
    assert_eq!(lines[1]["errors"][0]["pointer"], "/unit");
    assert_eq!(lines[2]["errors"][0]["pointer"], "/when");
    assert_eq!(
        (lines[3]["source"].as_str(), lines[3]["valid"].as_bool()),
        (Some("line 5"), Some(false))
    );
    assert_eq!(lines[4]["summary"]["invalid"], 3);
    let missing = toolgate(
        &[
            "validate",
            "--definitions",
            "/nope.json",
            "--calls",
            calls.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn every_command_has_help() {
    let t = tree();
    for args in [
        &["--help"][..],
        &["tools", "--help"],
        &["call", "--help"],
        &["validate", "--help"],
        &["audit", "--help"],
        &["audit", "verify", "--help"],
        &["stats", "--help"],
        &["ledger", "--help"],
        &["ledger", "list", "--help"],
        &["ledger", "resolve", "--help"],
    ] {
        let out = toolgate(args, t.path());
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{args:?}"
        );
    }
    assert_eq!(toolgate(&["call"], t.path()).status.code(), Some(2));
}

#[test]
fn a_reader_that_goes_away_ends_the_process_without_a_panic() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let t = tree();
    let ws = t.path().join("ws");
    // 5,000 matches print far more than a pipe buffer holds
    std::fs::write(ws.join("src/many.rs"), "x\n".repeat(5000)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "call",
            "search_code",
            r#"{"pattern":"x","max_matches":5000}"#,
            "--no-audit",
        ])
        .arg("--workspace")
        .arg(&ws)
        .current_dir(t.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // read one byte, then close the pipe while the command is still printing
    let mut stdout = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    stdout.read_exact(&mut one).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        status.success() || status.signal() == Some(13),
        "{status:?}"
    );
}

#[test]
fn toolgate_never_writes_its_state_through_a_planted_link() {
    let t = tree();
    let ws = t.path().join("ws");
    let refused = || {
        let out = toolgate(
            &["call", "list_dir", "{}", "-w", ws.to_str().unwrap()],
            t.path(),
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::create_dir_all(t.path().join("victim")).unwrap();
    // .toolgate is a link out of the workspace
    std::os::unix::fs::symlink("../victim", ws.join(".toolgate")).unwrap();
    refused();
    assert_eq!(
        std::fs::read_dir(t.path().join("victim")).unwrap().count(),
        0
    );
    // the store file is a link out of the workspace
    std::fs::remove_file(ws.join(".toolgate")).unwrap();
    std::fs::create_dir(ws.join(".toolgate")).unwrap();
    let db = ws.join(".toolgate/toolgate.db");
    std::os::unix::fs::symlink("../../outside/secret.txt", db).unwrap();
    refused();
    let canary = std::fs::read_to_string(t.path().join("outside/secret.txt")).unwrap();
    assert_eq!(canary, "CANARY-OUT\n");
}
