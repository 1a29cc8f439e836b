//! What goes with a request and its redirects: the operator's credential (to the host the
//! call named only, never in a result or the audit), and the policy's verdict over each hop
//! to another host (followed only when allowed, the rule named in the audit record).

use super::http_support::{blocked, last_record, ok, opening, Http, LoopbackOnly};
use std::sync::Arc;
use toolgate_core::{Decision, Policy, PolicyInput, ToolSpec, Verdict};
use toolgate_test_support::http::{HttpServer, Reply};
use toolgate_tools::http::{Credential, HttpConfig, Secret};

const SECRET: &str = "tok-7f3a9c-do-not-leak";

fn with_credential(host: &str, addrs: &[&str]) -> HttpConfig {
    let mut c = opening(addrs);
    c.credentials.insert(
        host.into(),
        Credential {
            header: "X-Api-Key".into(),
            value_env: "TEST_API_KEY".into(),
            value: Some(Secret(SECRET.into())),
            // the test servers speak plain HTTP on 127.0.0.x
            plain_http: true,
        },
    );
    c
}

#[tokio::test]
async fn credentials_go_to_their_host_only() {
    let a = HttpServer::start("127.0.0.2");
    let b = HttpServer::start("127.0.0.3");
    let http = Http::new(with_credential("127.0.0.2", &["127.0.0.2", "127.0.0.3"]));
    a.route("/plain", Reply::ok("text/plain", "fine"));
    a.route("/same", Reply::redirect(302, "/plain"));
    a.route("/away", Reply::redirect(307, b.url("/landing")));
    b.route("/landing", Reply::ok("text/plain", "elsewhere"));
    b.route("/back", Reply::redirect(302, a.url("/plain")));

    let r = http.fetch(&a.url("/plain")).await;
    assert_eq!(ok(&r)["body"], "fine");
    assert_eq!(a.requests()[0].header("x-api-key"), Some(SECRET));
    // a redirect on the same host keeps it
    assert!(!http.fetch(&a.url("/same")).await.is_error);
    assert!(a.requests()[1..]
        .iter()
        .all(|q| q.header("x-api-key") == Some(SECRET)));
    // a redirect to another host goes without it
    let r = http.fetch(&a.url("/away")).await;
    assert_eq!(ok(&r)["body"], "elsewhere");
    assert_eq!(b.requests()[0].header("x-api-key"), None);
    // ssrf_redirect, as curl's CVE-2022-27776: a redirect to the same host on another port
    // (another server, another origin) goes without it
    let other_port = HttpServer::start("127.0.0.2");
    other_port.route("/landing", Reply::ok("text/plain", "another port"));
    a.route("/port", Reply::redirect(307, other_port.url("/landing")));
    let r = http.fetch(&a.url("/port")).await;
    assert_eq!(ok(&r)["body"], "another port");
    assert_eq!(other_port.requests()[0].header("x-api-key"), None);
    // a call naming another host does not get it, not even when redirected to the host of
    // the credential
    let r = http.fetch(&b.url("/back")).await;
    assert_eq!(ok(&r)["body"], "fine");
    assert_eq!(a.requests().last().unwrap().header("x-api-key"), None);
    assert_eq!(b.requests().last().unwrap().header("x-api-key"), None);

    // never in a result, never in the audit
    for rec in http.audit.records() {
        assert!(!serde_json::to_string(&rec).unwrap().contains(SECRET));
    }
    let shown = serde_json::to_string(&http.fetch(&a.url("/plain")).await).unwrap();
    assert!(!shown.contains(SECRET), "{shown}");
}

#[tokio::test]
async fn a_missing_credential_fails_the_call_rather_than_send_without_it() {
    let a = HttpServer::start("127.0.0.2");
    let mut config = opening(&["127.0.0.2"]);
    config.credentials.insert(
        "127.0.0.2".into(),
        Credential::from_env("Authorization", "TOOLGATE_TEST_SURELY_UNSET_VAR")
            .with_plain_http(true),
    );
    let r = Http::new(config).fetch(&a.url("/x")).await;
    let e = r.error.unwrap();
    assert_eq!(e.reason.as_deref(), Some("credential_missing"));
    assert!(
        e.message.contains("TOOLGATE_TEST_SURELY_UNSET_VAR"),
        "{}",
        e.message
    );
    assert_eq!(a.hits(), 0);
}

/// Allows 127.0.0.2, denies 127.0.0.3, asks about 127.0.0.4 (hops and calls alike), on top
/// of [`LoopbackOnly`].
struct ByHost;

impl ByHost {
    fn verdict(url: &str) -> Verdict {
        if url.contains("//127.0.0.3") {
            Verdict::deny("test.deny_three", "not that host")
        } else if url.contains("//127.0.0.4") {
            Verdict::ask("test.ask_four", "a person decides")
        } else {
            LoopbackOnly::verdict(url)
        }
    }
}

impl Policy for ByHost {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        match input.resources.first() {
            Some(toolgate_core::ResolvedResource::Url(u)) => ByHost::verdict(u),
            _ => LoopbackOnly.decide(input),
        }
    }
    fn decide_url(&self, _tool: &ToolSpec, url: &str, _profile: &str) -> Verdict {
        ByHost::verdict(url)
    }
}

#[tokio::test]
async fn a_hop_to_another_host_is_followed_only_when_the_policy_allows_it() {
    let a = HttpServer::start("127.0.0.2");
    let denied = HttpServer::start("127.0.0.3");
    let asked = HttpServer::start("127.0.0.4");
    let http = Http::with_policy(
        opening(&["127.0.0.2", "127.0.0.3", "127.0.0.4"]),
        Arc::new(ByHost),
    );
    a.route("/to-denied", Reply::redirect(302, denied.url("/")));
    a.route("/to-asked", Reply::redirect(302, asked.url("/")));

    let r = http.fetch(&a.url("/to-denied")).await;
    assert_eq!(blocked(&r), "redirect_to_blocked");
    let e = r.error.unwrap();
    let d = e.details.unwrap();
    assert_eq!(
        (d["cause"].as_str(), d["rule"].as_str()),
        (Some("policy"), Some("test.deny_three"))
    );
    assert!(
        !e.message.contains("test.deny_three"),
        "the rule stays out of the model's text"
    );
    assert_eq!(
        last_record(&http),
        (Some(Decision::Deny), Some("test.deny_three".into()))
    );

    let r = http.fetch(&a.url("/to-asked")).await;
    assert_eq!(blocked(&r), "redirect_to_blocked");
    let e = r.error.unwrap();
    assert!(
        e.message
            .contains("call the tool again with that URL itself"),
        "{}",
        e.message
    );
    assert_eq!(
        last_record(&http),
        (Some(Decision::Ask), Some("test.ask_four".into()))
    );
    assert_eq!((denied.hits(), asked.hits()), (0, 0));

    // the first URL is decided by the authorize stage: a denied host is a denied call
    let r = http.fetch(&denied.url("/")).await;
    assert_eq!(
        r.error.unwrap().kind,
        toolgate_core::ErrorKind::PermissionDenied
    );
    assert_eq!(denied.hits(), 0);
}

/// A credential without `plain_http` goes only over https: a call naming `http://` on its
/// host is refused before anything is sent, with the https URL to send instead (the
/// operator's token would otherwise cross the network in plain text, or reach whatever
/// answers on another port of the host).
#[tokio::test]
async fn a_credential_is_not_sent_over_plain_http_unless_the_operator_says_so() {
    let a = HttpServer::start("127.0.0.2");
    a.route("/x", Reply::ok("text/plain", "fine"));
    let mut c = with_credential("127.0.0.2", &["127.0.0.2"]);
    for cred in c.credentials.values_mut() {
        cred.plain_http = false;
    }
    let http = Http::new(c);
    let r = http.fetch(&a.url("/x")).await;
    let e = r.error.as_ref().expect("refused");
    assert_eq!(e.reason.as_deref(), Some("credential_needs_https"), "{e:?}");
    assert!(
        e.message.contains("nothing was sent")
            && e.message.contains("send https://127.0.0.2/x instead"),
        "{}",
        e.message
    );
    assert!(!e.message.contains(SECRET));
    assert_eq!(a.hits(), 0, "nothing reached the server");
    // a host without a credential is fetched over http as before
    let b = HttpServer::start("127.0.0.3");
    b.route("/y", Reply::ok("text/plain", "plain"));
    let http = Http::new(with_credential("127.0.0.2", &["127.0.0.3"]));
    assert_eq!(ok(&http.fetch(&b.url("/y")).await)["body"], "plain");
}
