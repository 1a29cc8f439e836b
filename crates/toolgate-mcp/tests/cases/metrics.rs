//! `GET /metrics` on a real server after real calls: the Python SDK's approval scenario
//! (elicitation accepted, declined, answered with feedback) and raw JSON-RPC calls (a success,
//! an unsafe path, a denied tool, an unknown tool), then a scrape on 127.0.0.1 behind the same
//! guard as `/mcp`.

use super::support::{
    clients_dir, initialize, post_mcp, python_script, raw_http, run_ok, HttpChild, RawResponse,
    TestDir,
};
use serde_json::json;
use std::time::Duration;

fn get(addr: &str, path: &str, host: &str, extra: &[&str]) -> RawResponse {
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n");
    for h in extra {
        head.push_str(h);
        head.push_str("\r\n");
    }
    raw_http(addr, &head, b"")
}

/// The value of the sample `series` (name and labels exactly as rendered), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn metrics_count_real_calls_and_are_guarded_like_mcp() {
    let t = TestDir::new();
    let server = HttpChild::start(&t.ws(), &[]);
    let token = server.token.clone().expect("a token is made at start");
    let auth = format!("Authorization: Bearer {token}");
    let addr = server.addr.clone();

    // A real MCP client: three calls that ask for approval, one approved.
    let python = python_script(clients_dir().join("mcp_client.py"));
    let ran_python = python.is_some();
    if let Some(mut cmd) = python {
        cmd.args(["--scenario", "approve", "--mode", "legacy", "--workspace"])
            .arg(t.ws())
            .args(["--url", &server.url, "--token", &token]);
        let out = run_ok(cmd, Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("passed: approve"), "{stdout}");
    }

    // Raw JSON-RPC over HTTP in a session.
    let init = post_mcp(&addr, &addr, &[&auth], &initialize());
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("Mcp-Session-Id: {}", init.header("mcp-session-id").unwrap());
    let calls = [
        ("read_file", json!({"path": "src/lib.txt"}), "a needle"),
        (
            "read_file",
            json!({"path": "../outside.txt"}),
            "unsafe_input",
        ),
        ("read_file", json!({"path": "src/lib.txt"}), "a needle"),
        ("forbidden_echo", json!({"text": "x"}), "permission_denied"),
        ("no_such_tool", json!({}), "-32602"),
    ];
    for (i, (name, args, expect)) in calls.iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": name, "arguments": args}});
        let r = post_mcp(
            &addr,
            &addr,
            &[&auth, &session, "MCP-Protocol-Version: 2025-11-25"],
            &body,
        );
        assert_eq!(r.status, 200, "{r:?}");
        assert!(r.body.contains(expect), "{name}: {}", r.body);
    }

    // The guard: no token, a wrong token, a foreign Host, a foreign Origin.
    let r = get(&addr, "/metrics", &addr, &[]);
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert!(!r.body.contains("toolgate_tool"), "{}", r.body);
    let r = get(
        &addr,
        "/metrics",
        &addr,
        &["Authorization: Bearer not-the-token"],
    );
    assert_eq!(r.status, 401, "{r:?}");
    let r = get(&addr, "/metrics", "evil.example", &[&auth]);
    assert_eq!(r.status, 403, "{r:?}");
    let r = get(
        &addr,
        "/metrics",
        &addr,
        &[&auth, "Origin: http://evil.example"],
    );
    assert_eq!(r.status, 403, "{r:?}");
    let r = raw_http(
        &addr,
        &format!("POST /metrics HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n"),
        b"",
    );
    assert_eq!(r.status, 405, "{r:?}");

    // The scrape.
    let r = get(&addr, "/metrics", &addr, &[&auth]);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = &r.body;
    let at = |series: &str| sample(text, series).unwrap_or_else(|| panic!("{series}:\n{text}"));
    assert_eq!(at("toolgate_tool_calls_total{tool=\"read_file\"}"), 3.0);
    assert_eq!(
        at("toolgate_tool_call_duration_seconds_count{tool=\"read_file\"}"),
        3.0
    );
    assert_eq!(
        at("toolgate_tool_call_duration_seconds_bucket{tool=\"read_file\",le=\"+Inf\"}"),
        3.0
    );
    assert_eq!(
        at("toolgate_tool_call_duration_seconds_bucket{tool=\"read_file\",le=\"300\"}"),
        3.0
    );
    assert!(at("toolgate_tool_call_duration_seconds_sum{tool=\"read_file\"}") > 0.0);
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"read_file\",kind=\"unsafe_input\"}"),
        1.0
    );
    assert_eq!(
        at("toolgate_tool_denials_total{tool=\"forbidden_echo\"}"),
        1.0
    );
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"forbidden_echo\",kind=\"permission_denied\"}"),
        1.0
    );
    assert_eq!(at("toolgate_tool_denials_total{tool=\"read_file\"}"), 0.0);
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"(unknown)\",kind=\"unknown_tool\"}"),
        1.0
    );
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(text.contains("# TYPE toolgate_tool_call_duration_seconds histogram"));
    assert!(text.contains("# HELP toolgate_tool_calls_total Tool calls dispatched"));
    if ran_python {
        assert_eq!(
            at("toolgate_tool_approvals_asked_total{tool=\"destructive_echo\"}"),
            3.0
        );
        assert_eq!(
            at("toolgate_tool_approvals_granted_total{tool=\"destructive_echo\"}"),
            1.0
        );
        assert_eq!(
            at("toolgate_tool_errors_total{tool=\"destructive_echo\",kind=\"approval_rejected\"}"),
            1.0
        );
        assert_eq!(
            at("toolgate_tool_errors_total{tool=\"destructive_echo\",kind=\"approval_corrected\"}"),
            1.0
        );
    }
}

#[test]
fn without_a_token_metrics_is_open_on_loopback_only_as_mcp_is() {
    let t = TestDir::new();
    let server = HttpChild::start(&t.ws(), &["--no-token"]);
    let addr = server.addr.clone();
    let r = get(&addr, "/metrics", &addr, &[]);
    assert_eq!(r.status, 200, "{r:?}");
    let r = get(&addr, "/metrics", "evil.example", &[]);
    assert_eq!(r.status, 403, "{r:?}");
    let r = get(&addr, "/nothing-here", &addr, &[]);
    assert_eq!(r.status, 404, "{r:?}");
}
