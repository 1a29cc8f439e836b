//! The conformance fixture as a real process, probed with raw 2026-07-28 requests: what a
//! tool can do through `toolgate_mcp::request` (ask for input with sealed state, fail the
//! request with a JSON-RPC error, log at the level the request asked for), and bad answers
//! from the client. The whole official suite runs against it in `.ci/conformance`.

use super::support::{messages, post_mcp, response, HttpChild, RawResponse};
use serde_json::{json, Value};
use std::process::Command;

const FIXTURE: &str = env!("CARGO_BIN_EXE_conformance-fixture");

fn start() -> HttpChild {
    let mut cmd = Command::new(FIXTURE);
    cmd.args(["--http", "127.0.0.1:0"]);
    HttpChild::spawn(cmd, "conformance-fixture: serving MCP at ")
}

/// A stateless 2026-07-28 `tools/call` of `tool`, with `meta` added to the request's `_meta`
/// and `extra` to its params; the response and the JSON-RPC messages it carried (SSE or
/// plain JSON), the response last.
fn call(server: &HttpChild, tool: &str, meta: Value, extra: Value) -> (RawResponse, Vec<Value>) {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"}
        }
    });
    for (k, v) in meta.as_object().unwrap() {
        params["_meta"][k] = v.clone();
    }
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let name = format!("Mcp-Name: {tool}");
    let r = post_mcp(
        &server.addr,
        &server.addr,
        &[
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            name.as_str(),
        ],
        &body,
    );
    let messages = messages(&r.body);
    (r, messages)
}

#[test]
fn sealed_state_round_trips_and_a_tampered_one_is_a_protocol_error() {
    let server = start();
    let tool = "test_input_required_result_request_state";
    let (_, m) = call(&server, tool, json!({}), json!({}));
    let first = &response(&m)["result"];
    assert_eq!(first["resultType"], "input_required", "{m:?}");
    assert_eq!(
        first["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    let state = first["requestState"].as_str().expect("a request state");
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});

    // tampered: JSON-RPC -32602, not a result
    let tampered = format!("{state}x");
    let (_, m) = call(
        &server,
        tool,
        json!({}),
        json!({"inputResponses": answer, "requestState": tampered}),
    );
    assert_eq!(response(&m)["error"]["code"], -32602, "{m:?}");

    // a state sealed for another tool does not open either
    let (_, m) = call(
        &server,
        "test_input_required_result_tampered_state",
        json!({}),
        json!({"inputResponses": answer, "requestState": state}),
    );
    assert_eq!(response(&m)["error"]["code"], -32602, "{m:?}");

    // the real state with the answer: complete
    let (_, m) = call(
        &server,
        tool,
        json!({}),
        json!({"inputResponses": answer, "requestState": state}),
    );
    let done = &response(&m)["result"];
    assert_ne!(done["resultType"], "input_required", "{m:?}");
    assert!(done["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("state-ok"));
}

#[test]
fn bad_answers_are_asked_again_never_a_crash() {
    let server = start();
    let tool = "test_input_required_result_elicitation";
    for bad in [
        json!({}),
        json!({"other": {"action": "accept", "content": {"name": "x"}}}),
        json!({"user_name": "not an object"}),
        json!({"user_name": 42}),
        json!({"user_name": null}),
    ] {
        let (r, m) = call(&server, tool, json!({}), json!({"inputResponses": bad}));
        let v = response(&m);
        assert!(
            v["result"]["resultType"] == "input_required" || v.get("error").is_some(),
            "{bad}: {} {m:?}",
            r.status
        );
    }
    // an answer that is an object but not an elicitation result: completes without a name
    let (_, m) = call(
        &server,
        tool,
        json!({}),
        json!({"inputResponses": {"user_name": {"action": "dance"}}}),
    );
    assert_eq!(
        response(&m)["result"]["content"][0]["text"],
        "Hello, stranger!"
    );
    // the server still answers
    let (_, m) = call(
        &server,
        tool,
        json!({}),
        json!({"inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}}),
    );
    assert_eq!(response(&m)["result"]["content"][0]["text"], "Hello, Ada!");
}

#[test]
fn a_tool_can_fail_the_request_with_a_missing_capability_error() {
    let server = start();
    let (r, m) = call(&server, "test_missing_capability", json!({}), json!({}));
    let error = &response(&m)["error"];
    assert_eq!(error["code"], -32021, "{m:?}");
    assert!(error["data"]["requiredCapabilities"]["sampling"].is_object());
    assert_eq!(r.status, 400);
    // with the capability declared, the tool asks through an input-required result
    let (_, m) = call(
        &server,
        "test_missing_capability",
        json!({"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}),
        json!({}),
    );
    assert_eq!(response(&m)["result"]["resultType"], "input_required");
}

#[test]
fn tools_log_only_at_the_level_the_request_asked_for() {
    let server = start();
    let logs = |m: &[Value]| {
        m.iter()
            .filter(|m| m["method"] == "notifications/message")
            .count()
    };
    let (_, m) = call(&server, "test_logging_tool", json!({}), json!({}));
    assert_eq!(logs(&m), 0, "{m:?}");
    let (_, m) = call(
        &server,
        "test_logging_tool",
        json!({"io.modelcontextprotocol/logLevel": "info"}),
        json!({}),
    );
    assert_eq!(logs(&m), 3, "{m:?}");
    let (_, m) = call(
        &server,
        "test_logging_tool",
        json!({"io.modelcontextprotocol/logLevel": "error"}),
        json!({}),
    );
    assert_eq!(logs(&m), 0, "{m:?}");
    // an unknown level is a bad request, not a crash
    let (r, m) = call(
        &server,
        "test_logging_tool",
        json!({"io.modelcontextprotocol/logLevel": "loudest"}),
        json!({}),
    );
    assert!(
        logs(&m) == 0 && (r.status >= 400 || response(&m).get("result").is_some()),
        "{} {m:?}",
        r.status
    );
}

#[test]
fn the_fixture_refuses_a_non_loopback_address() {
    let out = Command::new(FIXTURE)
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
}

#[test]
fn a_json_schema_2020_12_input_schema_is_enforced_as_written() {
    let server = start();
    let tool = "json_schema_2020_12_tool";
    let ok = json!({"contactMethod": "phone", "phone": "555", "address": {"city": "Oslo"}});
    let (_, m) = call(&server, tool, json!({}), json!({"arguments": ok}));
    assert_eq!(response(&m)["result"]["isError"], false, "{m:?}");
    for bad in [
        // if/then: contactMethod phone needs phone
        json!({"contactMethod": "phone", "email": "a@b"}),
        // allOf/anyOf: neither phone nor email
        json!({"name": "x"}),
        // $ref into $defs: city must be a string
        json!({"email": "a@b", "address": {"city": 3}}),
        // additionalProperties: false
        json!({"email": "a@b", "extra": true}),
    ] {
        let (_, m) = call(&server, tool, json!({}), json!({"arguments": bad}));
        let r = &response(&m)["result"];
        assert_eq!(r["isError"], true, "{bad}: {m:?}");
        assert_eq!(
            r["_meta"]["toolgate/error"]["kind"], "invalid_arguments",
            "{bad}: {m:?}"
        );
    }
}
