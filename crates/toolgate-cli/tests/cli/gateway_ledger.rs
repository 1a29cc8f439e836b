//! Upstream tools under the idempotency ledger, through the binary: an upstream tool that
//! may act (no claims, so destructive and not idempotent) runs once per key across
//! `toolgate call` processes; a call sent again is answered from the store's ledger and never
//! reaches the upstream again (the scripted server logs every `tools/call` it receives); a
//! connection lost mid-call leaves the key unsettled. (A call refused before its request
//! left frees its key: `gateway::misbehaving_upstreams_fail_their_calls_and_spare_the_others`.)

use super::gateway::{entry, envelope, number_schema, text, toolgate, workspace};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use toolgate_test_support::clients::client_program;

/// The `tools/call`s the scripted server received, in order.
fn received(ws: &Path) -> Vec<Value> {
    match std::fs::read_to_string(ws.join("calls.log")) {
        Ok(s) => s
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn call(ws: &Path, tool: &str, arguments: &str, key: &str) -> (Output, Value) {
    let out = toolgate(
        ws,
        &["call", tool, arguments, "--idempotency-key", key, "--yes"],
    );
    let e = envelope(&out);
    (out, e)
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_upstream_call_under_a_key_acts_once_and_replays() {
    let Some(python) = client_program("TOOLGATE_TEST_PYTHON") else {
        return;
    };
    let config = format!(
        "[[rules]]\ndecision = \"allow\"\ntool = \"up__*\"\n\n{}",
        entry(&python, "up", "crash", "plain.json", "").replace(
            "\"--mode\", \"crash\"]",
            "\"--mode\", \"crash\", \"--log\", \"calls.log\"]"
        )
    );
    let (_t, ws) = workspace(&config);
    let plain = json!([
        {"name": "add", "description": "Adds two numbers.", "inputSchema": number_schema()},
        {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}}
    ]);
    std::fs::write(ws.join("plain.json"), plain.to_string()).unwrap();

    // acts once: the second process gets the first one's result, marked as a replay, and the
    // upstream sees one call, with the key in its _meta
    let (out, first) = call(&ws, "up__add", r#"{"a":1,"b":2}"#, "K-1");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(first["content"][0]["text"], "3", "{first}");
    assert!(first.get("replayed").is_none(), "{first}");
    let (out, again) = call(&ws, "up__add", r#"{"a":1,"b":2}"#, "K-1");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(again["content"], first["content"], "{again}");
    let seen = received(&ws);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["key"], "K-1", "{seen:?}");

    // the key used for other arguments: a conflict, nothing sent
    let (_, conflict) = call(&ws, "up__add", r#"{"a":5,"b":2}"#, "K-1");
    assert_eq!(
        conflict["error"]["reason"], "idempotency_conflict",
        "{conflict}"
    );
    assert_eq!(received(&ws).len(), 1);

    // the upstream's own error is recorded and replayed, not sent again
    let (_, failed) = call(&ws, "up__fail", "{}", "K-2");
    assert_eq!(failed["error"]["reason"], "upstream_error", "{failed}");
    let (_, replayed) = call(&ws, "up__fail", "{}", "K-2");
    assert_eq!(replayed["replayed"], true, "{replayed}");
    assert_eq!(replayed["error"]["reason"], "upstream_error", "{replayed}");
    assert_eq!(received(&ws).len(), 2);

    // the connection lost after the request left (the server exits on a == 13): the effect
    // is unknown, so the key stays unsettled and a call sent again is not sent upstream
    let (_, lost) = call(&ws, "up__add", r#"{"a":13,"b":2}"#, "K-3");
    assert_eq!(
        (&lost["error"]["kind"], &lost["error"]["reason"]),
        (&json!("outcome_unknown"), &json!("upstream_failed")),
        "{lost}"
    );
    assert!(
        lost["error"]["message"]
            .as_str()
            .unwrap()
            .contains("toolgate ledger resolve"),
        "{lost}"
    );
    let (_, unsettled) = call(&ws, "up__add", r#"{"a":13,"b":2}"#, "K-3");
    assert_eq!(unsettled["error"]["reason"], "unsettled", "{unsettled}");
    assert_eq!(received(&ws).len(), 3);
    let listed = text(&toolgate(
        &ws,
        &["ledger", "list", "--state", "unknown", "--json"],
    ));
    assert!(listed.contains("\"K-3\""), "{listed}");
}
