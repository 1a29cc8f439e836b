//! The `http_fetch` cases of `shared/cases/security.jsonl`, each as a test of its whole class:
//! private addresses (fetch-private-53), redirects (fetch-redirect-54), address encodings
//! (fetch-ip-octal-57), schemes (fetch-scheme-62) and the size cap (fetch-size-cap-63). DNS
//! rebinding (fetch-dns-rebind-60) needs a DNS server: `http_dns.rs`.
//!
//! `$CANARY` is a server on 127.0.0.1 that must get no request; `$PUB` is a server on
//! 127.0.0.2, which the configuration opens (`allow_private = ["127.0.0.2/32"]`), standing in
//! for a public site.

use super::http_support::{blocked, full, ok, opening, reason, Http};
use serde_json::json;
use toolgate_test_support::http::{HttpServer, Reply};

/// fetch-private-53: a private address is refused before any connection, in the guard, so
/// nothing (no auxiliary request either) reaches it.
#[tokio::test]
async fn private_addresses_are_refused_before_connecting() {
    let canary = HttpServer::start("127.0.0.1");
    let p = canary.port();
    let http = Http::new(opening(&["127.0.0.2"]));
    let urls = [
        format!("http://127.0.0.1:{p}/admin"),
        format!("http://localhost:{p}/admin"),
        format!("http://LocalHost.:{p}/"),
        format!("http://api.localhost:{p}/"),
        format!("http://[::1]:{p}/"),
        format!("http://0.0.0.0:{p}/"),
        format!("http://0:{p}/"),
        format!("http://[::]:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://127.0.0.3:{p}/"),
        // not loopback: refused by the guard; were it not, the test policy would deny the
        // call rather than let a packet leave the machine
        "http://169.254.169.254/latest/meta-data/".into(),
        "http://10.0.0.1/".into(),
        "http://172.16.0.1/".into(),
        "http://192.168.0.1/".into(),
        "http://100.64.0.1/".into(),
        "http://[fd00::1]/".into(),
        "http://[fe80::1]/".into(),
        "http://[fd00:ec2::254]/".into(),
        "http://100.100.100.200/".into(),
    ];
    for url in &urls {
        let r = http.fetch(url).await;
        assert_eq!(blocked(&r), "private_address", "{url}");
        let e = r.error.as_ref().unwrap();
        assert!(
            e.message.contains("send the URL of a public site instead"),
            "{url}: {}",
            e.message
        );
    }
    // a name the operator's static answers put on a blocked address is refused when it
    // resolves, before the connection
    let mut config = opening(&["127.0.0.2"]);
    config
        .hosts
        .insert("internal.test".into(), vec!["127.0.0.1".parse().unwrap()]);
    let named = Http::new(config);
    let r = named.fetch(&format!("http://internal.test:{p}/")).await;
    assert_eq!(blocked(&r), "private_address");
    assert!(r.error.unwrap().message.contains("resolves to 127.0.0.1"));
    assert_eq!(canary.hits(), 0, "{:?}", canary.requests());
    assert_eq!(canary.connections(), 0);
}

/// fetch-ip-octal-57: every spelling of an address the URL standard accepts is the address
/// the connector would reach, so it is refused as that address; and the operator's opened
/// address is reachable in every spelling too (the check and the connection read the URL
/// alike).
#[tokio::test]
async fn address_encodings_are_the_address_they_name() {
    let canary = HttpServer::start("127.0.0.1");
    let public = HttpServer::start("127.0.0.2");
    let (p, q) = (canary.port(), public.port());
    let http = Http::new(opening(&["127.0.0.2"]));
    for host in [
        "0177.0.0.1",
        "017700000001",
        "2130706433",
        "0x7f000001",
        "0x7f.1",
        "0X7F.0.0.1",
        "127.1",
        "127.0.1",
        "0177.1",
        "127.0.0.1.",
        "%31%32%37.0.0.1",
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "[::ffff:0:7f00:1]",
        "[::ffff:0:127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
        // Teredo: the opened server 127.0.0.2 does not open the client 127.0.0.1
        "[2001:0:7f00:2::80ff:fffe]",
    ] {
        let r = http.fetch(&format!("http://{host}:{p}/")).await;
        assert_eq!(blocked(&r), "private_address", "{host}");
    }
    for url in [
        format!("http:\\\\127.0.0.1:{p}\\"),
        format!("HTTP://127.0.0.1:{p}/"),
        format!("http://127.0.0.1:{p}\\@127.0.0.2:{q}/"),
    ] {
        assert_eq!(blocked(&http.fetch(&url).await), "private_address", "{url}");
    }
    assert_eq!(canary.hits(), 0);
    for host in ["0177.0.0.2", "2130706434", "0x7f.0.0.2", "127.0.0.2"] {
        let r = http.fetch(&format!("http://{host}:{q}/x")).await;
        assert_eq!(ok(&r)["body"], "hit", "{host}");
    }
    assert_eq!(public.hits(), 4);
}

/// fetch-scheme-62: only http and https; nothing local is read, whatever the case.
#[tokio::test]
async fn schemes_other_than_http_are_refused() {
    let canary = HttpServer::start("127.0.0.1");
    let p = canary.port();
    let hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let http = Http::new(opening(&[]));
    for url in [
        "file:///etc/hostname".to_string(),
        "FiLe:///etc/hostname".into(),
        "file://localhost/etc/hostname".into(),
        format!("gopher://127.0.0.1:{p}/_GET%20/"),
        format!("ftp://127.0.0.1:{p}/"),
        "data:text/plain,hello".into(),
        "DATA:text/plain;base64,aGVsbG8=".into(),
        format!("dict://127.0.0.1:{p}/info"),
        format!("ws://127.0.0.1:{p}/"),
        "javascript:alert(1)".into(),
    ] {
        let r = http.fetch(&url).await;
        assert_eq!(blocked(&r), "scheme_not_allowed", "{url}");
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            hostname.trim().is_empty() || !text.contains(hostname.trim()),
            "{url}: {text}"
        );
    }
    assert_eq!(canary.hits(), 0);
}

/// fetch-redirect-54: every hop is checked before it is connected to, whatever the status,
/// the spelling of its target, or how many hops came before; the error names the hop.
#[tokio::test]
async fn redirects_to_blocked_targets_are_not_followed() {
    let canary = HttpServer::start("127.0.0.1");
    let public = HttpServer::start("127.0.0.2");
    let (p, q) = (canary.port(), public.port());
    let mut config = opening(&["127.0.0.2"]);
    config
        .hosts
        .insert("internal.test".into(), vec!["127.0.0.1".parse().unwrap()]);
    let http = Http::new(config);
    let targets = [
        (301, format!("http://127.0.0.1:{p}/"), "private_address"),
        (302, format!("http://127.0.0.1:{p}/"), "private_address"),
        (303, format!("http://localhost:{p}/"), "private_address"),
        (
            307,
            format!("http://[::ffff:127.0.0.1]:{p}/"),
            "private_address",
        ),
        (308, format!("http://0177.0.0.1:{p}/"), "private_address"),
        (302, format!("//127.0.0.1:{p}/x"), "private_address"),
        (302, format!("http://internal.test:{p}/"), "private_address"),
        (302, "file:///etc/passwd".to_string(), "scheme_not_allowed"),
        (302, "gopher://127.0.0.1/".to_string(), "scheme_not_allowed"),
        (
            302,
            format!("http://user:pw@127.0.0.2:{q}/"),
            "credentials_in_url",
        ),
        (
            302,
            "http://169.254.169.254/latest/".to_string(),
            "private_address",
        ),
    ];
    for (i, (status, location, cause)) in targets.iter().enumerate() {
        public.route(
            &format!("/start{i}"),
            Reply::redirect(*status, location.clone()),
        );
        let r = http.fetch(&format!("http://127.0.0.2:{q}/start{i}")).await;
        assert_eq!(blocked(&r), "redirect_to_blocked", "{location}");
        let e = r.error.as_ref().unwrap();
        let d = e.details.as_deref().unwrap();
        assert_eq!(d["cause"], *cause, "{location}: {d}");
        assert_eq!(d["hop"], 1);
        assert!(e.message.contains("redirect 1"), "{}", e.message);
        assert!(e.message.contains("fetch another URL"), "{}", e.message);
    }
    // after hops that were fine
    public.route("/a", Reply::redirect(302, "/b"));
    public.route(
        "/b",
        Reply::redirect(307, format!("http://127.0.0.2:{q}/c")),
    );
    public.route(
        "/c",
        Reply::redirect(302, format!("http://127.0.0.1:{p}/admin")),
    );
    let r = http.fetch(&format!("http://127.0.0.2:{q}/a")).await;
    assert_eq!(blocked(&r), "redirect_to_blocked");
    let e = r.error.unwrap();
    assert_eq!(e.details.as_deref().unwrap()["hop"], 3);
    assert!(
        e.message.contains(&format!("http://127.0.0.1:{p}/admin")),
        "{}",
        e.message
    );
    assert_eq!(canary.hits(), 0, "{:?}", canary.requests());
    assert_eq!(canary.connections(), 0);
}

/// fetch-size-cap-63: a body that never ends is read up to the cap and cut there (the result
/// says so, with the byte counts), the server's writing stops when the client goes; a
/// `Content-Length` above the cap is refused before the body is read.
#[tokio::test]
async fn bodies_stop_at_the_cap() {
    let public = HttpServer::start("127.0.0.2");
    let q = public.port();
    public.route(
        "/stream",
        Reply::Endless {
            chunk: b"0123456789abcdef".repeat(1024),
            headers: vec![("Content-Type".into(), "text/plain".into())],
        },
    );
    let mut config = opening(&["127.0.0.2"]);
    config.max_bytes = 256 << 10;
    let http = Http::new(config);
    let r = http.fetch(&format!("http://127.0.0.2:{q}/stream")).await;
    assert!(r.truncation.is_some(), "the result is behind a handle too");
    let s = full(&http, &r);
    assert_eq!(s["truncated"], true);
    assert_eq!(s["body_bytes"], 256 << 10);
    // a smaller cap the call asks for
    let r = http
        .call(
            "http_fetch",
            json!({"url": format!("http://127.0.0.2:{q}/stream"), "max_bytes": 1000}),
        )
        .await;
    assert_eq!(ok(&r)["body_bytes"], 1000);
    // the server stops writing once the client is gone: far less than its 1 GiB
    let mut written = public.bytes_written();
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = public.bytes_written();
        if now == written {
            break;
        }
        written = now;
    }
    assert!(written < 64 << 20, "the server wrote {written} bytes");

    // a Content-Length over the cap: refused with both counts, before reading the body
    public.route(
        "/big",
        Reply::Raw(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\nxx",
                1u64 << 40
            )
            .into_bytes(),
        ),
    );
    let r = http.fetch(&format!("http://127.0.0.2:{q}/big")).await;
    assert_eq!(reason(&r), "limit_exceeded");
    let e = r.error.unwrap();
    assert_eq!(
        *e.details.unwrap(),
        json!({"content_length": 1u64 << 40, "max_bytes": 256 << 10})
    );
    assert!(e.message.contains("Range"), "{}", e.message);
    // a call may not ask for more than the operator's cap
    let r = http
        .call(
            "http_fetch",
            json!({"url": format!("http://127.0.0.2:{q}/x"), "max_bytes": 1 << 30}),
        )
        .await;
    assert_eq!(reason(&r), "limit_exceeded");
    assert_eq!(
        public.hits(),
        3,
        "the last call was refused before it was sent"
    );
}

/// resource_limits for the HTTP tools beyond fetch-size-cap-63: a body that trickles forever
/// (never reaching the cap) ends at the call's timeout as a recoverable `timeout`, and the
/// server sees the client go; a response head of too many or too large headers fails the
/// call cleanly instead of being buffered whole.
#[tokio::test]
async fn slow_bodies_end_at_the_timeout_and_huge_heads_fail_cleanly() {
    let public = HttpServer::start("127.0.0.2");
    let q = public.port();
    public.route(
        "/slow",
        Reply::Slow {
            chunk: b"x".to_vec(),
            every: std::time::Duration::from_millis(50),
        },
    );
    let mut config = opening(&["127.0.0.2"]);
    config.timeout = std::time::Duration::from_secs(2);
    let http = Http::new(config);
    let started = std::time::Instant::now();
    let r = http.fetch(&format!("http://127.0.0.2:{q}/slow")).await;
    let e = r.error.as_ref().unwrap_or_else(|| panic!("{r:#?}"));
    assert_eq!(e.kind, toolgate_core::ErrorKind::Timeout, "{e:#?}");
    assert!(e.is_recoverable(), "{e:#?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // the trickle stops once the client is gone (the test yields to the runtime while it
    // waits, so the client's connection task can close the socket)
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let gone = public.bytes_written();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(public.bytes_written(), gone, "the server still writes");

    let many: String = (0..500).map(|i| format!("X-H{i}: v\r\n")).collect();
    let big = format!("X-Big: {}\r\n", "v".repeat(2 << 20));
    for (path, headers) in [("/many", many), ("/big-head", big)] {
        public.route(
            path,
            Reply::Raw(
                format!("HTTP/1.1 200 OK\r\n{headers}Content-Length: 2\r\n\r\nok").into_bytes(),
            ),
        );
        let r = http.fetch(&format!("http://127.0.0.2:{q}{path}")).await;
        assert_eq!(reason(&r), "request_failed", "{path}: {r:#?}");
        assert!(r.error.as_ref().unwrap().is_recoverable(), "{path}");
    }
}
