//! Identity under attack: `toolgate serve --http` with `[server.auth]` in front of the real
//! authorization server of `tests/clients/oauth_server.py`, sent what a hostile or broken
//! client sends (`tests/clients/oauth_client.py probe`). The helpers are
//! [`super::identity`]'s.
//!
//! Without `TOOLGATE_TEST_PYTHON` these tests are ignored (failed under CI).

use super::identity::{probe, workspace, AuthServer, Served};
use serde_json::{json, Value};

/// The status and `WWW-Authenticate` of each case of a probe report.
fn answers(report: &Value) -> Vec<(u64, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["status"].as_u64().unwrap(),
                c["www_authenticate"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn a_second_authorization_header_or_a_token_in_the_query_is_400_invalid_request() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", "");
    let served = Served::start(ws.path(), &[]);
    let aud = served.url.as_str();
    let report = probe(
        &served.url,
        &auth.issuer,
        json!([
            // a valid token, then another: which one would a proxy in front have checked?
            {"aud": aud, "extra": {"headers": [["authorization", "Bearer made-up"]]}},
            {"aud": aud, "extra": {"headers": [["authorization", "Bearer {token}"]]}},
            // RFC 6750 §2.3 is not supported, and MCP forbids it: the token is in URLs and logs
            {"aud": aud, "extra": {"query": "access_token={token}"}},
            {"aud": aud, "extra": {"query": "x=1&access_token={token}", "in_query_only": true}},
            // what is not a token parameter is not refused
            {"aud": aud, "extra": {"query": "access_token_hint=1"}},
        ]),
    );
    let got = answers(&report);
    let statuses: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [400, 400, 400, 400, 200], "{report}");
    for (i, (_, challenge)) in got.iter().enumerate().take(4) {
        assert!(
            challenge.contains("error=\"invalid_request\""),
            "case {i}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata=\""),
            "case {i}: {challenge}"
        );
    }
    let body = |i: usize| report["cases"][i]["body"].as_str().unwrap().to_string();
    assert!(body(0).contains("one Authorization header"), "{}", body(0));
    assert!(body(2).contains("not in the query"), "{}", body(2));
    served.stop();
}
