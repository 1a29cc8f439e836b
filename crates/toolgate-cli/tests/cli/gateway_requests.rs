//! An upstream's requests to the client of its call (issue 15, `[[upstreams]] relay`):
//! server-everything (npm) twice behind `toolgate serve`, `ev` relaying sampling and
//! elicitation with a 5 s call timeout and `plain` relaying nothing, and sessions of the
//! official Python SDK (`tests/clients/gateway_requests_client.py`): one that declares both
//! capabilities gets the requests in its callbacks and its answers back in the tool results,
//! one that declares neither gets error results and nothing in anyone's callback, one whose
//! model never answers gets an error at the call's timeout and its callback cancelled. Then
//! the audit: each request a record of `toolgate.upstream.ev.sampling` / `.elicitation`
//! with its outcome. Over stdio, and over streamable HTTP with clients that open no
//! standalone GET stream: a relayed request reaches them on the SSE stream of the
//! `tools/call` it was made for, and so does its cancellation at the call's timeout. And a hostile upstream (the scripted server's `ask`): what
//! the relay refuses never reaches the client, what it cleans comes back under the upstream's
//! keys.

use super::gateway_clients::node_modules;
use super::mcp::HttpServe;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use toolgate_test_support::clients::{client_program, python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// The workspace of [`workspace`] when both real clients are there (Node for the upstream,
/// Python for the client); `None` otherwise (the test is then ignored by its attribute).
fn everything_workspace() -> Option<(tempfile::TempDir, PathBuf)> {
    let node = client_program("TOOLGATE_TEST_NODE")?;
    client_program("TOOLGATE_TEST_PYTHON")?;
    Some(workspace(&node))
}

/// A workspace whose `toolgate.toml` puts server-everything (run by `node`) behind the
/// gateway as `ev` (relaying both kinds, calls of 5 s) and `plain` (relaying nothing).
fn workspace(node: &Path) -> (tempfile::TempDir, PathBuf) {
    let everything =
        node_modules(node).join("@modelcontextprotocol/server-everything/dist/index.js");
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap();
    let config = format!(
        r#"[[rules]]
decision = "allow"
tool = "ev__*"

[[rules]]
decision = "allow"
tool = "plain__*"

[[upstreams]]
name = "ev"
command = {node:?}
args = [{everything:?}, "stdio"]
startup_timeout_ms = 30000
timeout_ms = 5000
relay = ["sampling", "elicitation"]

[[upstreams]]
name = "plain"
command = {node:?}
args = [{everything:?}, "stdio"]
startup_timeout_ms = 30000
"#,
        node = node.display().to_string(),
        everything = everything.display().to_string(),
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();
    (t, ws)
}

/// The Python client of the requests, with `args` saying which server to reach.
fn requests_client(args: &[&str]) -> Command {
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/gateway_requests_client.py"),
    )
    .expect("checked by the caller");
    cmd.args(args);
    cmd
}

#[test]
#[cfg_attr(
    any(toolgate_no_python, toolgate_no_node),
    ignore = "needs TOOLGATE_TEST_PYTHON and TOOLGATE_TEST_NODE (README: Prerequisites)"
)]
fn sampling_and_elicitation_reach_the_client_only_where_the_upstream_opts_in() {
    let Some((_t, ws)) = everything_workspace() else {
        return;
    };
    let argv = serde_json::json!([TOOLGATE, "serve", "--workspace", ws]).to_string();
    let out = run_ok(
        requests_client(&["--stdio", &argv]),
        Duration::from_secs(200),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: gateway requests"), "{stdout}");
    audited(&ws);
}

#[test]
#[cfg_attr(
    any(toolgate_no_python, toolgate_no_node),
    ignore = "needs TOOLGATE_TEST_PYTHON and TOOLGATE_TEST_NODE (README: Prerequisites)"
)]
fn over_streamable_http_a_relayed_request_rides_the_stream_of_its_call() {
    let Some((_t, ws)) = everything_workspace() else {
        return;
    };
    let mut serve = HttpServe::start(&ws, &[], &[], false);
    let url = format!("http://{}/mcp", serve.addr);
    // no standalone GET stream: only the POST of the call can carry its requests
    let out = run_ok(
        requests_client(&[
            "--url",
            &url,
            "--token",
            &serve.token,
            "--post-streams-only",
        ]),
        Duration::from_secs(200),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: gateway requests"), "{stdout}");
    let _ = serve.child.kill();
    let _ = serve.child.wait();
    audited(&ws);
}

/// Each request the client sessions made `ev` send is one audit record of its kind, with
/// its outcome, named after the call it was made for; `plain` was asked nothing.
fn audited(ws: &Path) {
    let records = super::mcp::audit(ws);
    let relayed =
        |tool: &str| -> Vec<&Value> { records.iter().filter(|r| r["tool"] == tool).collect() };
    let sampling = relayed("toolgate.upstream.ev.sampling");
    let outcomes: Vec<(&str, &str)> = sampling
        .iter()
        .map(|r| {
            (
                r["outcome"].as_str().unwrap_or(""),
                r["error_reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("ok", ""),
            ("recoverable_error", "relay_refused"),
            ("recoverable_error", "relay_timeout"),
            // the call the client gave up on
            ("recoverable_error", "relay_cancelled"),
        ],
        "{sampling:#?}"
    );
    assert!(
        sampling[1]["arguments"]["why"]
            .as_str()
            .is_some_and(|w| w.contains("did not declare the sampling capability")),
        "{:#?}",
        sampling[1]
    );
    for r in &sampling {
        assert!(
            r["session"].as_str().is_some_and(|s| !s.is_empty()),
            "{r:#?}"
        );
        assert!(
            r["call_id"]
                .as_str()
                .is_some_and(|c| c.ends_with("/sampling")),
            "named after the call it was made for: {r:#?}"
        );
    }
    let elicitation = relayed("toolgate.upstream.ev.elicitation");
    let outcomes: Vec<&str> = elicitation
        .iter()
        .map(|r| r["outcome"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(outcomes, ["ok", "recoverable_error"], "{elicitation:#?}");
    assert!(
        relayed("toolgate.upstream.plain.sampling").is_empty(),
        "nothing was asked of the upstream that relays nothing"
    );
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn a_hostile_upstreams_requests_are_refused_before_the_client_and_what_is_shown_is_cleaned() {
    let Some(python) = client_program("TOOLGATE_TEST_PYTHON") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap();
    let tools = serde_json::json!([{
        "name": "ask",
        "inputSchema": {"type": "object", "properties": {
            "method": {"type": "string"}, "params": {}, "n": {"type": "integer"}
        }}
    }]);
    std::fs::write(ws.join("tools.json"), tools.to_string()).unwrap();
    let config = format!(
        "[[rules]]\ndecision = \"allow\"\ntool = \"sc__*\"\n\n{}",
        super::gateway::entry(
            &python,
            "sc",
            "ok",
            &ws.join("tools.json").display().to_string(),
            "startup_timeout_ms = 20000\nrelay = [\"sampling\", \"elicitation\"]\n\
             [upstreams.notifications]\nrequests = { per_second = 100, burst = 100 }",
        )
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();
    let argv = serde_json::json!([TOOLGATE, "serve", "--workspace", ws]).to_string();
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/clients/gateway_hostile_requests_client.py"),
    )
    .expect("checked above");
    cmd.args(["--stdio", &argv]);
    let out = run_ok(cmd, Duration::from_secs(150));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: hostile requests"), "{stdout}");
    // each refusal audited with its reason; the relayed ones as relayed
    let records = super::mcp::audit(&ws);
    let outcomes: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| {
            r["tool"]
                .as_str()
                .is_some_and(|t| t.starts_with("toolgate.upstream.sc."))
        })
        .map(|r| {
            (
                r["tool"].as_str().unwrap_or(""),
                r["error_reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let elicitation = "toolgate.upstream.sc.elicitation";
    let sampling = "toolgate.upstream.sc.sampling";
    assert_eq!(
        outcomes,
        [
            (elicitation, "relay_refused"),
            (sampling, "relay_refused"),
            (sampling, "relay_refused"),
            // params of the wrong shape: refused (rmcp read them as a custom request)
            (sampling, "relay_refused"),
            (sampling, "relay_refused"),
            // unreadable JSON, wrong shapes; the unknown method is no relay's
            (sampling, "relay_refused"),
            (elicitation, "relay_refused"),
            (sampling, "relay_refused"),
            (elicitation, "relay_refused"),
            (elicitation, ""),
            (sampling, ""),
        ],
        "every refused request is audited: {records:#?}"
    );
}
