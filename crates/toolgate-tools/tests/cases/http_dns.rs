//! Names, resolved by a real DNS server on 127.0.0.1 (dnslib, `TOOLGATE_TEST_PYTHON`):
//! fetch-dns-rebind-60 and its class. A name is resolved once per connection, every answer is
//! checked, and the connection goes to the checked address: a name that answers an opened
//! address first and a blocked one after has no "after"; a name with a blocked answer among
//! others is refused whole.

use super::http_support::{blocked, ok, opening, Http, LoopbackOnly};
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::egress::EgressPolicy;
use toolgate_core::{Policy, PolicyInput, ToolSpec, Verdict};
use toolgate_test_support::dns::DnsServer;
use toolgate_test_support::http::{HttpServer, Reply};
use toolgate_tools::http::resolve::ResolveError;
use toolgate_tools::http::GuardedResolver;

/// A server on 127.0.0.2 and a canary on 127.0.0.1 on the same port, so a rebound name
/// would reach the canary with the URL unchanged.
fn pair() -> (HttpServer, HttpServer) {
    for _ in 0..50 {
        let public = HttpServer::start("127.0.0.2");
        let at = SocketAddr::new("127.0.0.1".parse().unwrap(), public.port());
        if std::net::TcpListener::bind(at).is_ok() {
            return (public, HttpServer::start_at(at));
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

#[tokio::test]
async fn a_rebinding_name_reaches_only_the_address_that_was_checked() {
    let Some(dns) = DnsServer::start(&json!({
        "rebind.test": [["127.0.0.2"], ["127.0.0.1"]],
        "multi.test": [["127.0.0.2", "127.0.0.1"]],
        "multi-first.test": [["127.0.0.1", "127.0.0.2"]],
        "pub.test": [["127.0.0.2"]],
    })) else {
        return;
    };
    let (public, canary) = pair();
    let port = public.port();
    let mut config = opening(&["127.0.0.2"]);
    config.nameservers = vec![dns.addr()];
    let http = Http::new(config);

    // resolved once: 127.0.0.2, checked, connected to, with the name in Host
    let r = http.fetch(&format!("http://rebind.test:{port}/page")).await;
    assert_eq!(ok(&r)["body"], "hit");
    assert_eq!(dns.queries("rebind.test"), 1);
    let seen = public.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("host"),
        Some(format!("rebind.test:{port}").as_str())
    );

    // later calls: the pooled connection to the checked address, or a new lookup whose
    // blocked answer is refused; never the canary
    for _ in 0..3 {
        let r = http
            .fetch(&format!("http://rebind.test:{port}/again"))
            .await;
        if r.is_error {
            assert_eq!(blocked(&r), "private_address");
        } else {
            assert_eq!(ok(&r)["body"], "hit");
        }
    }

    // one blocked answer among several blocks the name, whatever the order
    for name in ["multi.test", "multi-first.test"] {
        let r = http.fetch(&format!("http://{name}:{port}/")).await;
        assert_eq!(blocked(&r), "private_address", "{name}");
        assert!(
            r.error.unwrap().message.contains("resolves to 127.0.0.1"),
            "{name}"
        );
    }
    // a name that does not exist is a dns failure, not a block
    let r = http.fetch(&format!("http://nowhere.test:{port}/")).await;
    assert_eq!(r.error.unwrap().reason.as_deref(), Some("dns_failed"));
    assert_eq!(
        ok(&http.fetch(&format!("http://pub.test:{port}/")).await)["status"],
        200
    );
    assert_eq!(canary.hits(), 0, "{:?}", canary.requests());
    assert_eq!(canary.connections(), 0);
}

/// The resolver checks every answer of every source (static answers included) without
/// connecting anywhere, so sets with addresses off this machine can be checked too.
#[tokio::test]
async fn the_guarded_resolver_checks_every_answer() {
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    let hosts = [
        ("public.test", vec![ip("93.184.216.34")]),
        ("mixed.test", vec![ip("93.184.216.34"), ip("10.0.0.1")]),
        ("metadata.test", vec![ip("169.254.169.254")]),
        ("mapped.test", vec![ip("::ffff:192.168.1.1")]),
        ("nat64.test", vec![ip("64:ff9b::a9fe:a9fe")]),
        ("opened.test", vec![ip("127.0.0.2"), ip("127.0.0.2")]),
        ("empty.test", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let egress = EgressPolicy::new().allow_private(["127.0.0.2/32".parse().unwrap()]);
    let resolver = GuardedResolver::new(egress, hosts, &[], Duration::from_secs(2)).unwrap();
    assert_eq!(
        resolver.resolve("public.test").await.unwrap(),
        [ip("93.184.216.34")]
    );
    assert_eq!(
        resolver.resolve("OPENED.test.").await.unwrap(),
        [ip("127.0.0.2")],
        "names compare as hosts do; answers are deduplicated"
    );
    for (name, cause) in [
        ("mixed.test", "private_address"),
        ("metadata.test", "private_address"),
        ("mapped.test", "private_address"),
        ("nat64.test", "private_address"),
        ("empty.test", "no_address"),
    ] {
        match resolver.resolve(name).await {
            Err(ResolveError::Blocked(b)) => assert_eq!(b.reason(), cause, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// [`LoopbackOnly`], and for `http_request` only: 127.0.0.1 denied as an address a name
/// resolves to.
struct NoLoopbackOneForRequests;

impl Policy for NoLoopbackOneForRequests {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        LoopbackOnly.decide(input)
    }
    fn decide_url(&self, _tool: &ToolSpec, url: &str, _profile: &str) -> Verdict {
        LoopbackOnly::verdict(url)
    }
    fn names_addresses(&self, tool: &ToolSpec, _profile: &str) -> bool {
        &*tool.name == "http_request"
    }
    fn decide_address(
        &self,
        tool: &ToolSpec,
        _host: &str,
        address: IpAddr,
        _profile: &str,
    ) -> Option<Verdict> {
        (&*tool.name == "http_request" && address == IpAddr::V4(Ipv4Addr::LOCALHOST))
            .then(|| Verdict::deny("test.no_one", "not 127.0.0.1"))
    }
}

/// A call whose policy decides addresses gets a connection of its own: a pooled connection
/// that another call (whose policy let the address through) opened to the same name is not
/// handed to it, and its answers are decided though the name was resolved before.
#[tokio::test]
async fn a_call_deciding_addresses_never_reuses_another_calls_connection() {
    let one = HttpServer::start("127.0.0.1");
    let two = HttpServer::start("127.0.0.2");
    let mut config = opening(&["127.0.0.1", "127.0.0.2"]);
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    config
        .hosts
        .insert("alias.test".into(), vec![ip("127.0.0.1")]);
    config
        .hosts
        .insert("two.test".into(), vec![ip("127.0.0.2")]);
    let http = Http::with_policy(config, Arc::new(NoLoopbackOneForRequests));
    let (p1, p2) = (one.port(), two.port());
    one.route("/", Reply::ok("text/plain", "one"));
    two.route("/", Reply::ok("text/plain", "two"));

    // http_fetch's policy names no address: fetched, its connection pooled
    let r = http.fetch(&format!("http://alias.test:{p1}/")).await;
    assert_eq!(ok(&r)["status"], 200);
    assert_eq!((one.hits(), one.connections()), (1, 1));

    // http_request's does: refused, though a pooled connection to the name is idle
    for _ in 0..2 {
        let r = http
            .call(
                "http_request",
                json!({"url": format!("http://alias.test:{p1}/"), "method": "GET"}),
            )
            .await;
        assert_eq!(blocked(&r), "address_blocked");
        let e = r.error.unwrap();
        assert!(
            e.message
                .starts_with("address_blocked: the host \"alias.test\" resolves to 127.0.0.1"),
            "{}",
            e.message
        );
        assert_eq!(e.details.unwrap()["rule"], "test.no_one");
    }
    assert_eq!((one.hits(), one.connections()), (1, 1));

    // and elsewhere reaches its server, a new connection each time (two URLs: the same
    // arguments again would be the ledger's replay)
    two.route("/again", Reply::ok("text/plain", "two"));
    for (n, path) in [(1, "/"), (2, "/again")] {
        let r = http
            .call(
                "http_request",
                json!({"url": format!("http://two.test:{p2}{path}"), "method": "GET"}),
            )
            .await;
        assert_eq!(ok(&r)["status"], 200);
        assert_eq!((two.hits(), two.connections()), (n, n as u64));
    }
}
