//! What the gateway passes between its clients and an upstream besides calls (issue 15 item
//! 9): resource subscriptions, the upstream's updates to the subscribed sessions only, and
//! its list changes, its log messages to the session of the call they came with, with two
//! sessions of the official Python SDK
//! (`tests/clients/gateway_relay_client.py`) on `toolgate serve --http` in front of the
//! scripted upstream (`tests/upstreams/scripted_server.py` with resources and prompts). Then
//! what reached the upstream: one subscribe per resource for all sessions, nothing for a
//! refused subscription or unsubscribe, the unsubscribe of the last session (also of one
//! that ended without unsubscribing), a subscribe again after a restart; every subscription
//! audited as a read.

use super::gateway::script;
use super::mcp::HttpServe;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use toolgate_test_support::clients::{client_program, python_script, run_ok};

fn entry(python: &Path, name: &str, ws: &Path) -> String {
    let arg = |f: &str| ws.join(f).display().to_string();
    format!(
        "[[upstreams]]\nname = {name:?}\ncommand = {:?}\nargs = [{:?}, \"--tools\", {:?}, \
         \"--prompts\", {:?}, \"--resources\", {:?}, \"--log\", {:?}]\n\
         startup_timeout_ms = 20000\n",
        python.display().to_string(),
        script().display().to_string(),
        arg("tools.json"),
        arg("prompts.json"),
        arg("resources.json"),
        arg(&format!("{name}.log")),
    )
}

/// The subscribe and unsubscribe requests the upstream `name` received, as `(method, uri)`.
fn forwarded(ws: &Path, name: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(ws.join(format!("{name}.log")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["method"].is_string())
        .map(|v| {
            (
                v["method"].as_str().unwrap().to_string(),
                v["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn subscriptions_list_changes_and_log_messages_pass_through_the_gateway_to_their_sessions_only() {
    let Some(python) = client_program("TOOLGATE_TEST_PYTHON") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let tools = json!([
        {"name": "touch", "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}, "n": {"type": "integer"}}}},
        {"name": "announce", "inputSchema": {"type": "object"}},
        {"name": "die", "inputSchema": {"type": "object"}},
        {"name": "chatty", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
    ]);
    std::fs::write(ws.join("tools.json"), tools.to_string()).unwrap();
    let prompts = json!([{"name": "summary", "description": "Summarizes a topic."}]);
    std::fs::write(ws.join("prompts.json"), prompts.to_string()).unwrap();
    let resources = json!([
        {"uri": "notes://a", "name": "a"},
        {"uri": "notes://b", "name": "b"},
        {"uri": "notes://c", "name": "c"}
    ]);
    std::fs::write(ws.join("resources.json"), resources.to_string()).unwrap();
    let config = format!(
        "[[rules]]\nname = \"scripted\"\ndecision = \"allow\"\ntool = \"sc__*\"\n\n\
         [[rules]]\nname = \"no-sc2-reads\"\ndecision = \"deny\"\n\
         tool = \"toolgate.upstream.sc2.read_resource\"\n\n{}\n{}",
        entry(&python, "sc", &ws),
        entry(&python, "sc2", &ws)
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();

    let mut serve = HttpServe::start(&ws, &[], &[], false);
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/gateway_relay_client.py"),
    )
    .expect("checked above");
    cmd.args([
        "--url",
        &format!("http://{}/mcp", serve.addr),
        "--token",
        &serve.token,
        "--prompts",
        ws.join("prompts.json").to_str().unwrap(),
    ]);
    let out = run_ok(cmd, Duration::from_secs(150));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: relay"), "{stdout}");

    // session B ended subscribed to notes://c: the upstream is told (in a task of its own)
    let sub = |u: &str| ("resources/subscribe".to_string(), u.to_string());
    let unsub = |u: &str| ("resources/unsubscribe".to_string(), u.to_string());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !forwarded(&ws, "sc").contains(&unsub("notes://c")) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    // one subscribe for two subscribes of one session; again after the restart; nothing for
    // the refused ones; the last unsubscribe forwarded
    assert_eq!(
        forwarded(&ws, "sc"),
        [
            sub("notes://a"),
            sub("notes://a"),
            unsub("notes://a"),
            sub("notes://c"),
            unsub("notes://c"),
        ],
        "what reached the upstream sc (it was started by these processes: {:?}; one restart, \
         by sc__die, is expected)",
        std::fs::read_to_string(ws.join("sc.log.starts")).unwrap_or_default()
    );
    assert_eq!(forwarded(&ws, "sc2"), [], "nothing reached sc2");
    let _ = serve.child.kill();
    let _ = serve.child.wait();

    // a subscription is a read the policy decides: audited as the upstream's read tool
    let records = super::mcp::audit(&ws);
    let reads = |tool: &str| {
        records
            .iter()
            .filter(|r| r["tool"] == tool)
            .cloned()
            .collect::<Vec<_>>()
    };
    let sc = reads("toolgate.upstream.sc.read_resource");
    // notes://a twice, notes://missing, notes://c
    assert_eq!(sc.len(), 4, "{sc:#?}");
    let sc2 = reads("toolgate.upstream.sc2.read_resource");
    assert_eq!(sc2.len(), 1, "{records:#?}");
    // the rule denies every call of it, so it is hidden from the session as a denied tool is
    assert_eq!(sc2[0]["error_kind"], "unknown_tool", "{sc2:#?}");
    assert_eq!(sc2[0]["attempts"], 0, "{sc2:#?}");
}
