//! Identity under attack: `toolgate serve --http` with `[server.auth]` in front of the real
//! authorization server of `tests/clients/oauth_server.py`, sent what a hostile or broken
//! client sends (`tests/clients/oauth_client.py probe`). The helpers are
//! [`super::identity`]'s.
//!
//! Without `TOOLGATE_TEST_PYTHON` these tests are ignored (failed under CI).

use super::identity::{probe, script, workspace, AuthServer, Served, ROLES};
use serde_json::{json, Value};
use std::time::Duration;
use toolgate_test_support::clients::{python_script, run_ok};

/// `user` opens a session with a minted token and sends `plan`'s requests in it
/// (`oauth_client.py requests`).
fn requests(url: &str, issuer: &str, user: &str, plan: Value) -> Value {
    let mut cmd = python_script(script("oauth_client.py")).unwrap();
    cmd.args([
        "requests",
        "--url",
        url,
        "--issuer",
        issuer,
        "--user",
        user,
        "--requests",
    ])
    .arg(plan.to_string());
    let out = run_ok(cmd, Duration::from_secs(120));
    serde_json::from_slice(&out.stdout).unwrap()
}

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

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn a_rule_on_read_file_holds_for_resources_read_of_the_same_file() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    // ROLES: only the admins read secret/ (a deny rule naming read_file, unless admin)
    let ws = workspace(&auth.issuer, "", ROLES);
    let served = Served::start(ws.path(), &[]);
    let read = |user: &str| {
        requests(
            &served.url,
            &auth.issuer,
            user,
            json!([
                {"method": "resources/read", "params": {"uri": "file:///secret/x.txt"}},
                {"method": "tools/call", "params": {"name": "read_resource",
                                                    "arguments": {"uri": "file:///secret/x.txt"}}},
                {"method": "resources/read", "params": {"uri": "file:///notes.txt"}},
            ]),
        )
    };
    let bob = read("bob");
    let answers = bob["answers"].as_array().unwrap();
    let error = &answers[0]["message"]["error"];
    assert_eq!(error["code"], -32602, "{bob}");
    assert_eq!(
        error["data"]["toolgate/error"]["kind"], "permission_denied",
        "{bob}"
    );
    let call = &answers[1]["message"];
    assert!(
        call["result"]["isError"] == true || call["error"].is_object(),
        "{bob}"
    );
    assert!(!call.to_string().contains("classified"), "{bob}");
    assert_eq!(
        answers[2]["message"]["result"]["contents"][0]["text"], "hello\n",
        "{bob}"
    );
    let alice = read("alice");
    assert_eq!(
        alice["answers"][0]["message"]["result"]["contents"][0]["text"], "classified\n",
        "{alice}"
    );
    served.stop();
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn a_session_is_its_principals_whatever_the_scopes_and_no_one_elses() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", ROLES);
    let served = Served::start(ws.path(), &[]);
    let report = requests(
        &served.url,
        &auth.issuer,
        "alice",
        json!([
            // bob naming alice's session, with every method
            {"method": "tools/list", "as": {"sub": "bob"}},
            {"method": "-", "http": "GET", "as": {"sub": "bob"}},
            {"method": "-", "http": "DELETE", "as": {"sub": "bob"}},
            // alice with claims that changed: another caller, as the README says
            {"method": "tools/list", "as": {"sub": "alice", "set": {"groups": ["staff"]}}},
            // alice after a step-up (MCP "Scope Challenge Handling"): more scopes, same caller
            {"method": "tools/list", "as": {"sub": "alice", "scope": "mcp:tools mcp:admin"}},
            // without the required scope: still 403, whatever the session
            {"method": "tools/list", "as": {"sub": "alice", "scope": "mcp:admin"}},
            {"method": "tools/list"},
        ]),
    );
    let statuses: Vec<u64> = report["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [404, 404, 404, 404, 200, 403, 200]);
    served.stop();
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn scopes_as_a_string_or_a_list_and_claims_of_the_wrong_type() {
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
            // RFC 9068's space-separated string, a list (RFC 8693 allows either in practice),
            // Entra ID's scp as a string, and Okta's scp as a list
            {"aud": aud, "scope": "other mcp:tools"},
            {"aud": aud, "set": {"scope": ["other", "mcp:tools"]}},
            {"aud": aud, "drop": ["scope"], "set": {"scp": "mcp:tools other"}},
            {"aud": aud, "drop": ["scope"], "set": {"scp": ["mcp:tools"]}},
            // neither holds the scope: 403
            {"aud": aud, "set": {"scope": ["other"], "scp": "other"}},
            {"aud": aud, "set": {"scope": 7}},
            // a claim the checks need, of the wrong type: refused, never read as absent-but-ok
            {"aud": aud, "set": {"sub": 12345}},
            {"aud": aud, "set": {"exp": "9999999999"}},
            {"aud": aud, "set": {"exp": 1e300}},
            {"aud": aud, "set": {"nbf": "later"}},
            {"aud": aud, "set": {"aud": {"uri": aud}}},
            {"aud": aud, "set": {"iss": [auth.issuer.as_str()]}},
            // a JWS header naming other keys is not followed: only the JWKS's keys count
            {"aud": aud, "key": "embedded"},
            {"aud": aud, "key": "unknown", "kid": "atk", "header": {"jku": "http://127.0.0.1:1/jwks"}},
            {"aud": aud, "header": {"x5u": "http://127.0.0.1:1/x", "jku": "http://127.0.0.1:1/j"}},
        ]),
    );
    let statuses: Vec<u64> = answers(&report).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 403, 403, 401, 401, 401, 401, 401, 401, 401, 401, 200],
        "{report}"
    );
    served.stop();
}

/// What `toolgate serve --http` with `args` on `ws` says on stderr before it serves.
fn startup_notes(ws: &std::path::Path, args: &[&str]) -> String {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--workspace"])
        .arg(ws)
        .args(args)
        .env_remove("TOOLGATE_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut notes = String::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        notes.push_str(&line);
        notes.push('\n');
        if line.starts_with("toolgate: serving MCP at ") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    notes
}

#[test]
fn serving_roles_that_narrow_with_every_tool_for_everyone_else_is_warned_of() {
    // the README's roles: admins get default, staff explore, anyone else the server's profile
    let ws = workspace("http://127.0.0.1:1/", "", ROLES);
    let notes = startup_notes(ws.path(), &[]);
    assert!(
        notes.contains("WARNING: [server.auth.roles]") && notes.contains("--profile explore"),
        "{notes}"
    );
    for chosen in [["--profile", "explore"], ["--profile", "default"]] {
        let notes = startup_notes(ws.path(), &chosen);
        assert!(notes.contains("serving MCP at"), "{notes}");
        assert!(!notes.contains("WARNING"), "{chosen:?}: {notes}");
    }
    // without roles, every caller is the same to the policy: nothing to warn of
    let plain = workspace("http://127.0.0.1:1/", "", "");
    let notes = startup_notes(plain.path(), &[]);
    assert!(!notes.contains("WARNING"), "{notes}");
}
