//! `http_request`: bodies as text or JSON, the call's idempotency key as `Idempotency-Key`,
//! once per key through the pipeline's ledger (a failure before sending frees the key, one
//! after is the key's answer), methods across redirects, bad arguments refused before
//! anything is sent, and the default policy asking.

use super::http_support::{blocked, ok, opening, reason, Http};
use serde_json::{json, Value};
use toolgate_core::{ErrorKind, Pipeline, Registry, ToolCall};
use toolgate_test_support::http::{HttpServer, Reply};
use toolgate_tools::http::http_request::MAX_REQUEST_BODY;

fn server() -> (HttpServer, Http) {
    let s = HttpServer::start("127.0.0.2");
    let http = Http::new(opening(&["127.0.0.2"]));
    (s, http)
}

/// The server's echo of the request the call sent (the body of an `Echo` answer).
fn echoed(r: &toolgate_core::ToolResult) -> Value {
    serde_json::from_str(ok(r)["body"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_call_acts_once_per_key_and_the_server_gets_the_key() {
    let (s, http) = server();
    s.route("/x", Reply::Count);
    let args = json!({"url": s.url("/x"), "method": "POST", "body": "hi"});

    let first = http.call_keyed("http_request", args.clone(), "K1").await;
    let r = ok(&first);
    assert_eq!(r["status"], 200);
    assert_eq!(r["idempotency_key"], "K1");
    let answer: Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
    assert_eq!(answer, json!({"count": 1, "key": "K1", "body": "hi"}));
    assert!(!first.replayed);

    // the same call again: the first answer, the server not reached
    let again = http.call_keyed("http_request", args, "K1").await;
    assert!(again.replayed, "{again:#?}");
    assert_eq!(ok(&again)["body"], r["body"]);
    assert_eq!(s.count("K1"), 1);

    // the same key for another body: a conflict, nothing sent
    let other = json!({"url": s.url("/x"), "method": "POST", "body": "other"});
    let conflict = http.call_keyed("http_request", other, "K1").await;
    assert_eq!(reason(&conflict), "idempotency_conflict");
    assert_eq!(s.count("K1"), 1);
    assert_eq!(s.hits(), 1);
}

#[tokio::test]
async fn a_failure_before_sending_frees_the_key_and_one_after_is_its_answer() {
    let (s, _) = server();
    s.route("/x", Reply::Count);
    s.route("/away", Reply::redirect(302, "http://127.0.0.1:9/x"));
    // a credential whose variable is unset: refused before anything is sent
    let mut config = opening(&["127.0.0.2"]);
    config.credentials.insert(
        "127.0.0.2".into(),
        toolgate_tools::http::Credential::from_env("X-Api-Key", "TOOLGATE_TEST_REQ_UNSET_KEY")
            .with_plain_http(true),
    );
    let http = Http::new(config);
    let args = json!({"url": s.url("/x"), "method": "POST", "json": {"a": 1}});
    for _ in 0..2 {
        let r = http.call_keyed("http_request", args.clone(), "K2").await;
        assert_eq!(reason(&r), "credential_missing");
        // not a replay: the key was freed and the call ran again
        assert!(!r.replayed, "{r:#?}");
    }
    assert_eq!(s.hits(), 0);

    // a redirect to a blocked address, after the request was delivered: the key's answer
    let (s, http) = server();
    s.route("/away", Reply::redirect(307, "http://127.0.0.1:9/x"));
    let args = json!({"url": s.url("/away"), "method": "DELETE"});
    let first = http.call_keyed("http_request", args.clone(), "K3").await;
    assert_eq!(blocked(&first), "redirect_to_blocked");
    let again = http.call_keyed("http_request", args, "K3").await;
    assert!(again.replayed, "{again:#?}");
    assert_eq!(blocked(&again), "redirect_to_blocked");
    assert_eq!(s.hits(), 1);
}

#[tokio::test]
async fn bodies_go_as_text_or_json_with_their_type() {
    let (s, http) = server();
    s.route("/echo", Reply::Echo);
    let url = s.url("/echo");
    let cases = [
        (
            json!({"url": url, "method": "POST", "json": {"name": "r", "n": [1, 2]}}),
            "POST",
            "application/json",
            r#"{"name":"r","n":[1,2]}"#,
        ),
        (
            json!({"url": url, "method": "PUT", "body": "héllo"}),
            "PUT",
            "text/plain; charset=utf-8",
            "héllo",
        ),
        (
            json!({"url": url, "method": "PATCH", "body": "a=1",
                   "headers": {"Content-Type": "application/x-www-form-urlencoded"}}),
            "PATCH",
            "application/x-www-form-urlencoded",
            "a=1",
        ),
        (json!({"url": url, "method": "DELETE"}), "DELETE", "", ""),
        (json!({"url": url, "method": "OPTIONS"}), "OPTIONS", "", ""),
    ];
    for (i, (args, method, content_type, body)) in cases.into_iter().enumerate() {
        let r = http
            .call_keyed("http_request", args, &format!("B{i}"))
            .await;
        let e = echoed(&r);
        assert_eq!(e["method"], method, "{e}");
        if content_type == "application/json" {
            // serde_json's map order depends on the build's features: compare values
            let sent: Value = serde_json::from_str(e["body"].as_str().unwrap()).unwrap();
            assert_eq!(sent, serde_json::from_str::<Value>(body).unwrap(), "{e}");
        } else {
            assert_eq!(e["body"], body, "{e}");
        }
        assert_eq!(
            e["headers"]["content-type"].as_str().unwrap_or(""),
            content_type,
            "{e}"
        );
        assert_eq!(e["headers"]["idempotency-key"], format!("B{i}"), "{e}");
    }
    // without a key from the caller, the ledger's derived key goes out
    let r = http
        .call(
            "http_request",
            json!({"url": url, "method": "POST", "body": "x"}),
        )
        .await;
    let e = echoed(&r);
    let key = e["headers"]["idempotency-key"].as_str().unwrap();
    assert!(key.starts_with("tg-"), "{e}");
    assert_eq!(ok(&r)["idempotency_key"], key);
}

#[tokio::test]
async fn redirects_keep_or_drop_the_body_by_their_status() {
    let (s, http) = server();
    s.route("/echo", Reply::Echo);
    for (i, (status, method, body)) in [
        (303, "GET", ""),
        (302, "GET", ""),
        (301, "GET", ""),
        (307, "POST", "payload"),
        (308, "POST", "payload"),
    ]
    .into_iter()
    .enumerate()
    {
        let path = format!("/r{status}");
        s.route(&path, Reply::redirect(status, "/echo"));
        let args = json!({"url": s.url(&path), "method": "POST", "body": "payload"});
        let r = http
            .call_keyed("http_request", args, &format!("R{i}"))
            .await;
        let e = echoed(&r);
        assert_eq!(
            (e["method"].as_str(), e["body"].as_str()),
            (Some(method), Some(body))
        );
        if body.is_empty() {
            assert!(e["headers"].get("content-type").is_none(), "{e}");
        }
        assert_eq!(ok(&r)["redirects"], json!([s.url("/echo")]));
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_before_anything_is_sent() {
    let (s, http) = server();
    let url = s.url("/x");
    let big = "x".repeat(MAX_REQUEST_BODY + 1);
    let cases: Vec<(Value, ErrorKind, &str)> = vec![
        (
            json!({"url": url, "method": "POST", "body": "a", "json": {}}),
            ErrorKind::InvalidArguments,
            "/json",
        ),
        (
            json!({"url": url, "method": "GET", "body": "a"}),
            ErrorKind::InvalidArguments,
            "carries no body",
        ),
        (
            json!({"url": url, "method": "HEAD", "json": 1}),
            ErrorKind::InvalidArguments,
            "carries no body",
        ),
        (
            json!({"url": url, "method": "POST", "body": big}),
            ErrorKind::UnsafeInput,
            "limit_exceeded",
        ),
        (
            json!({"url": url, "method": "TRACE"}),
            ErrorKind::InvalidArguments,
            "/method",
        ),
        (json!({"url": url}), ErrorKind::InvalidArguments, "method"),
        (
            json!({"url": url, "method": "POST", "headers": {"Authorization": "Bearer x"}}),
            ErrorKind::InvalidArguments,
            "/headers/Authorization",
        ),
        (
            json!({"url": url, "method": "POST", "headers": {"Idempotency-Key": "mine"}}),
            ErrorKind::InvalidArguments,
            "/headers/Idempotency-Key",
        ),
        (
            json!({"url": url, "method": "POST", "max_bytes": 1u64 << 40}),
            ErrorKind::UnsafeInput,
            "limit_exceeded",
        ),
        (
            json!({"url": "ftp://127.0.0.2/x", "method": "POST"}),
            ErrorKind::UnsafeInput,
            "scheme_not_allowed",
        ),
        (
            json!({"url": "http://127.0.0.1:9/x", "method": "POST"}),
            ErrorKind::UnsafeInput,
            "private_address",
        ),
    ];
    for (args, kind, says) in cases {
        let r = http.call("http_request", args.clone()).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{args}: {r:#?}"));
        assert_eq!(e.kind, kind, "{args}: {e:#?}");
        let shown = serde_json::to_string(e).unwrap();
        assert!(shown.contains(says), "{args}: expected {says:?} in {shown}");
    }
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn the_default_policy_asks_before_a_request() {
    let s = HttpServer::start("127.0.0.2");
    let registry = toolgate_tools::register_http(Registry::builder(), opening(&["127.0.0.2"]))
        .build()
        .unwrap();
    let spec = registry.get("http_request", None).unwrap().spec().clone();
    assert!(spec.effects.destructive && !spec.effects.idempotent && spec.effects.open_world);
    // no approver: nobody to ask, nothing sent
    let pipeline = Pipeline::builder(registry).build();
    let session = pipeline.session("s").build().unwrap();
    let call = ToolCall::new(
        "c1",
        "http_request",
        json!({"url": s.url("/x"), "method": "POST", "body": "hi"}),
    );
    let r = pipeline.dispatch(call, &session).await;
    let e = r.error.as_ref().expect("refused");
    assert_eq!(e.kind, ErrorKind::ApprovalRejected, "{e:#?}");
    // http_fetch of the same host runs without asking
    let call = ToolCall::new("c2", "http_fetch", json!({"url": s.url("/x")}));
    let r = pipeline.dispatch(call, &session).await;
    assert!(!r.is_error, "{r:#?}");
    assert_eq!(s.hits(), 1);
}
