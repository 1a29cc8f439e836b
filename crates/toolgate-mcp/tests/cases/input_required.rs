//! On 2026-07-28 an approval question is a question, not an error: the first round of a call
//! the policy asks about answers with an input-required result, and nothing the client
//! receives with it (the result, the log messages it asked for) says the call failed.

use super::support::{messages, post_mcp, response, HttpChild, TestDir};
use serde_json::{json, Value};

#[test]
fn an_approval_question_is_not_reported_as_an_error() {
    let t = TestDir::new();
    let server = HttpChild::start(&t.ws(), &[]);
    let token = server
        .token
        .clone()
        .expect("a token is made for this start");
    let body = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {
            "name": "destructive_echo",
            "arguments": {"text": "hello"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
                "io.modelcontextprotocol/logLevel": "debug"
            }
        }
    });
    let auth = format!("Authorization: Bearer {token}");
    let r = post_mcp(
        &server.addr,
        &server.addr,
        &[
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: destructive_echo",
            auth.as_str(),
        ],
        &body,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let m = messages(&r.body);
    let result = &response(&m)["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert!(result.get("isError").is_none(), "{result}");
    assert!(
        result["inputRequests"]["toolgate_approval"].is_object(),
        "{result}"
    );
    let logs: Vec<&Value> = m
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(!logs.is_empty(), "the client asked for debug logs: {m:?}");
    for log in &logs {
        assert_eq!(log["params"]["level"], "debug", "{log}");
        assert_eq!(log["params"]["data"]["is_error"], false, "{log}");
        assert!(log["params"]["data"].get("error").is_none(), "{log}");
    }
    assert!(
        logs.iter()
            .any(|l| l["params"]["data"]["input_required"] == true),
        "{logs:?}"
    );
}
