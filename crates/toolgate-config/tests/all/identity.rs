//! Identity in the configuration (issue 16): `[server.auth]`, `[[limits.rate]]` and
//! `[limits.quota]` refused with a located problem when wrong; the limits on calls and on
//! requests kept apart; a caller's session from its token's claims; and a rule's condition
//! that Cedar cannot evaluate never letting a call through.

use super::load::{one, problems};
use super::support::{load, Setup};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::{ErrorKind, Principal};
use toolgate_test_support::TempWorkspace;

const AUTH: &str = "[server.auth]\nissuer = \"https://as.example.com\"\n";

#[test]
fn bad_server_auth_settings_are_located() {
    one("[server.auth]\nissuer = \"\"\n", "2:", "issuer is required");
    one(
        "[server.auth]\nissuer = \"http://as.example.com\"\n",
        "2:",
        "must be an https URL",
    );
    one(
        &format!("{AUTH}resource = \"https://mcp.example.com/mcp#x\"\n"),
        "3:",
        "must not have a fragment",
    );
    one(
        &format!("{AUTH}required_scopes = [\"mcp tools\"]\n"),
        "3:",
        "is not a scope",
    );
    one(
        &format!("{AUTH}jwks_uri = \"ftp://as.example.com/jwks\"\n"),
        "3:",
        "must be an https URL",
    );
    one(
        &format!("{AUTH}introspection_endpoint = \"https://as.example.com/introspect\"\n"),
        "3:",
        "client_id_env and client_secret_env",
    );
    for alg in ["none", "HS256"] {
        one(
            &format!("{AUTH}algorithms = [\"{alg}\"]\n"),
            "3:",
            "none and HMAC never are",
        );
    }
    one(
        &format!("{AUTH}leeway_secs = 3600\n"),
        "3:",
        "at most 300 seconds",
    );
    one(
        &format!("{AUTH}claims = [\"role\"]\n"),
        "3:",
        "set by toolgate",
    );
    one(
        &format!("{AUTH}[server.auth.roles]\nadmin = 'true'\n"),
        "4:",
        "no role is named \"admin\"",
    );
    let p = problems(&format!(
        "{AUTH}[server.auth.roles]\nadmin = 'context.attributes.groups.contains('\n\
         [roles.admin]\nprofiles = [\"default\"]\n"
    ));
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].starts_with("4:"), "{p:#?}");
}

#[test]
fn bad_rate_limits_and_quotas_are_located() {
    one(
        "[[limits.rate]]\nper_second = 1\nper_minute = 1\n",
        "1:",
        "write one of per_second and per_minute",
    );
    one(
        "[[limits.rate]]\nburst = 2\n",
        "1:",
        "write one of per_second",
    );
    one("[[limits.rate]]\nper_second = 0\n", "2:", "at least 1 call");
    one(
        "[[limits.rate]]\nper_minute = 5\nburst = 0\n",
        "3:",
        "at least 1 call",
    );
    one("[[limits.rate]]\nper_minute = 5\ntool = \"[\"\n", "3:", "");
    one(
        "[[limits.rate]]\nper_minute = 5\nper = \"caller\"\n",
        "3:",
        "",
    );
    one(
        "[[limits.rate]]\ncounts = \"requests\"\nper = \"tool\"\nper_minute = 5\n",
        "3:",
        "requests are counted per caller",
    );
    one(
        "[[limits.rate]]\ncounts = \"requests\"\ntool = \"glob\"\nper_minute = 5\n",
        "3:",
        "remove tool",
    );
    one(
        "[[limits.rate]]\ncounts = \"bytes\"\nper_minute = 5\n",
        "2:",
        "",
    );
    one(
        "[limits.quota]\ncalls_per_day = 0\n",
        "2:",
        "at least 1 call",
    );
}

#[test]
fn limits_on_calls_and_on_requests_are_kept_apart() {
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        "[[limits.rate]]\nname = \"calls\"\nper_minute = 1\n\n\
         [[limits.rate]]\nname = \"requests\"\ncounts = \"requests\"\nper_minute = 2\n",
    )
    .unwrap();
    let alice = Principal::new("https://as.example.com", "alice");
    let requests = c.request_rate_limits();
    assert!(requests.check_request(Some(&alice)).is_ok());
    assert!(requests.check_request(Some(&alice)).is_ok());
    let e = requests.check_request(Some(&alice)).unwrap_err();
    assert_eq!(&*e.limit, "requests");
    let calls = c.rate_limits();
    let tool: std::sync::Arc<str> = "glob".into();
    assert!(calls.check(Some(&alice), &tool, None).is_ok());
    let e = calls.check(Some(&alice), &tool, None).unwrap_err();
    assert!(e.message.contains("rate limit calls"), "{}", e.message);
    // none of either kind: both empty
    let ws = TempWorkspace::new();
    let c = load(&ws, "").unwrap();
    assert!(c.rate_limits().is_empty() && c.request_rate_limits().is_empty());
}

#[cfg(feature = "cedar")]
#[test]
fn a_callers_session_comes_from_its_claims() {
    let ws = TempWorkspace::new();
    let c = load(
        &ws,
        &format!(
            "{AUTH}claims = [\"groups\"]\n[server.auth.roles]\n\
             admin = 'context.attributes.groups.contains(\"admins\")'\n\
             [roles.admin]\nprofiles = [\"default\"]\n"
        ),
    )
    .unwrap();
    let alice = Principal::new("https://as.example.com", "alice");
    let claims = |v: serde_json::Value| v.as_object().unwrap().clone();
    let s = c
        .session_for(
            &alice,
            &claims(json!({"groups": ["admins"], "email": "a@x"})),
            "explore",
        )
        .unwrap();
    assert_eq!(s.profile, "default");
    assert_eq!(
        serde_json::to_value(&s.attributes).unwrap(),
        json!({"groups": ["admins"], "iss": "https://as.example.com", "role": "admin"})
    );
    // no claim the role reads (Cedar cannot evaluate it): no role, the fallback profile
    let s = c
        .session_for(&alice, &claims(json!({})), "explore")
        .unwrap();
    assert_eq!(s.profile, "explore");
    assert_eq!(
        serde_json::to_value(&s.attributes).unwrap(),
        json!({"iss": "https://as.example.com"})
    );
}

#[cfg(feature = "cedar")]
/// A condition Cedar cannot evaluate (a string compared as a number, an attribute the session
/// lacks) holds for a deny rule and not for an allow rule: a failure never lets a call
/// through.
#[tokio::test]
async fn a_condition_that_cannot_be_evaluated_never_lets_a_call_through() {
    let deny = r#"
[[rules]]
decision = "allow"
tool = "read_file"

[[rules]]
name = "low-level"
decision = "deny"
tool = "read_file"
resource = "path:**"
when = 'context.attributes.level < 3'
"#;
    for attrs in [&["level=high"][..], &[]] {
        let ws = TempWorkspace::new();
        ws.sh("mkdir -p ws && echo hi > ws/a.txt");
        let s = Setup::new(ws, deny, None, attrs);
        let r = s.call("read_file", json!({"path": "a.txt"})).await;
        let e = r.error.as_ref().expect("denied");
        assert_eq!(
            e.kind,
            ErrorKind::PermissionDenied,
            "{attrs:?}: {}",
            r.text()
        );
        assert_eq!(e.reason.as_deref(), Some("low-level"));
    }
    // without a resource, the rule denies the whole tool: hidden, an unknown tool
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws && echo hi > ws/a.txt");
    let s = Setup::new(ws, &deny.replace("resource = \"path:**\"\n", ""), None, &[]);
    let r = s.call("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(
        r.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::UnknownTool),
        "{}",
        r.text()
    );
    // evaluable, the deny rule does not hold
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws && echo hi > ws/a.txt");
    let s = Setup::new(ws, deny, None, &["level=5"]);
    let r = s.call("read_file", json!({"path": "a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    // an allow rule whose condition cannot be evaluated allows nothing: the write is asked
    // (and the test's approver rejects it)
    let allow = r#"
[[rules]]
decision = "allow"
tool = "write_file"
when = 'context.attributes.level < 3'
"#;
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws");
    let s = Setup::new(ws, allow, None, &["level=high"]);
    let r = s
        .call("write_file", json!({"path": "b.txt", "content": "x"}))
        .await;
    assert_eq!(
        r.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::ApprovalRejected),
        "{}",
        r.text()
    );
    assert_eq!(s.approver.asked().len(), 1);
}
