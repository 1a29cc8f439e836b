//! `http_fetch` against a real server on loopback: bodies as text by their type, decoding
//! within the cap (compression bombs included), headers both ways, HEAD, redirects followed,
//! and bad input.

use super::http_support::{full, ok, opening, reason, Http};
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use flate2::Compression;
use serde_json::json;
use std::io::Write;
use toolgate_core::ErrorKind;
use toolgate_test_support::http::{HttpServer, Reply};

fn server() -> (HttpServer, Http) {
    let s = HttpServer::start("127.0.0.2");
    let mut config = opening(&["127.0.0.2"]);
    config.max_bytes = 1 << 20;
    (s, Http::new(config))
}

fn encoded(encoding: &str, content_type: &str, body: Vec<u8>) -> Reply {
    Reply::Body {
        status: 200,
        headers: vec![
            ("Content-Type".into(), content_type.into()),
            ("Content-Encoding".into(), encoding.into()),
        ],
        body,
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = DeflateEncoder::new(Vec::new(), Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/data/http/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[tokio::test]
async fn bodies_come_back_as_text_by_their_type() {
    let (s, http) = server();
    let html = "<html><head><title>T</title><script>steal()</script></head><body>\
                <h1>Docs</h1><p>Use <code>serde</code>, see <a href=\"/x\">this</a>.</p></body></html>";
    s.route("/page", Reply::ok("text/html; charset=utf-8", html));
    s.route("/api", Reply::ok("application/json", r#"{"a": [1, 2]}"#));
    s.route(
        "/latin1",
        Reply::ok("text/plain; charset=iso-8859-1", b"caf\xe9".to_vec()),
    );
    s.route(
        "/untyped",
        Reply::Body {
            status: 200,
            headers: vec![],
            body: b"just words".to_vec(),
        },
    );
    s.route(
        "/missing",
        Reply::Body {
            status: 404,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: b"no such page".to_vec(),
        },
    );
    let page = http.fetch(&s.url("/page")).await;
    let p = ok(&page);
    assert_eq!(p["format"], "markdown");
    let body = p["body"].as_str().unwrap();
    assert!(
        body.contains("# Docs") && body.contains("[this](/x)"),
        "{body}"
    );
    assert!(!body.contains("steal"), "{body}");
    assert_eq!(p["status"], 200);
    assert_eq!(p["headers"]["content-type"], "text/html; charset=utf-8");
    assert_eq!(p["url"], s.url("/page"));

    let api = http.fetch(&s.url("/api")).await;
    assert_eq!(ok(&api)["format"], "json");
    assert_eq!(ok(&api)["body"], r#"{"a": [1, 2]}"#);
    assert_eq!(
        ok(&http.fetch(&s.url("/latin1")).await)["body"],
        "caf\u{e9}"
    );
    assert_eq!(ok(&http.fetch(&s.url("/untyped")).await)["format"], "text");
    let missing = http.fetch(&s.url("/missing")).await;
    assert_eq!(
        ok(&missing)["status"],
        404,
        "an error status is a normal result"
    );
    assert_eq!(ok(&missing)["body"], "no such page");
}

#[tokio::test]
async fn binary_content_is_refused_with_its_type_and_size() {
    let (s, http) = server();
    s.route(
        "/img",
        Reply::ok("image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 0, 1]),
    );
    s.route(
        "/blob",
        Reply::Body {
            status: 200,
            headers: vec![],
            body: vec![0, 1, 2, 255, 254],
        },
    );
    let r = http.fetch(&s.url("/img")).await;
    assert_eq!(reason(&r), "binary_content");
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::ToolFailed);
    assert!(e.message.contains("image/png (8 bytes)"), "{}", e.message);
    assert_eq!(reason(&http.fetch(&s.url("/blob")).await), "binary_content");
}

/// Every encoding decodes, and none decodes past the cap: a bomb is cut there.
#[tokio::test]
async fn compressed_bodies_decode_within_the_cap() {
    let (s, http) = server();
    let text = "compressed text\n".repeat(1000);
    let zeros = vec![b'0'; 16 << 20];
    for (path, reply) in [
        (
            "/gzip",
            encoded("gzip", "text/plain", gzip(text.as_bytes())),
        ),
        (
            "/x-gzip",
            encoded("x-gzip", "text/plain", gzip(text.as_bytes())),
        ),
        (
            "/zlib",
            encoded("deflate", "text/plain", zlib(text.as_bytes())),
        ),
        (
            "/raw",
            encoded("deflate", "text/plain", raw_deflate(text.as_bytes())),
        ),
        (
            "/identity",
            encoded("identity", "text/plain", text.as_bytes().to_vec()),
        ),
    ] {
        s.route(path, reply);
        let r = full(&http, &http.fetch(&s.url(path)).await);
        assert_eq!(r["body"], text, "{path}");
        assert_eq!(r["truncated"], false, "{path}");
    }
    s.route("/br", encoded("br", "text/html", data("page.html.br")));
    let r = full(&http, &http.fetch(&s.url("/br")).await);
    assert_eq!(r["body_bytes"], 196000);
    assert!(r["body"].as_str().unwrap().starts_with("toolgate toolgate"));

    for (path, reply) in [
        ("/bomb.gz", encoded("gzip", "text/plain", gzip(&zeros))),
        ("/bomb.zlib", encoded("deflate", "text/plain", zlib(&zeros))),
        (
            "/bomb.deflate",
            encoded("deflate", "text/plain", raw_deflate(&zeros)),
        ),
    ] {
        s.route(path, reply);
        let v = full(&http, &http.fetch(&s.url(path)).await);
        assert_eq!(
            (v["body_bytes"].as_u64(), &v["truncated"]),
            (Some(1 << 20), &json!(true)),
            "{path}"
        );
    }
    // brotli's bomb is 16 MiB of NUL bytes labelled text/plain: decoded to the cap, then
    // refused as the binary it is, the size read saying where decoding stopped
    s.route(
        "/bomb.br",
        encoded("br", "text/plain", data("zeros-16m.br")),
    );
    let r = http.fetch(&s.url("/bomb.br")).await;
    assert_eq!(reason(&r), "binary_content");
    let message = &r.error.as_ref().unwrap().message;
    assert!(
        message.contains(&format!("({} bytes)", 1 << 20)),
        "{message}"
    );
    // a bomb stops at a small cap too
    let r = http
        .call(
            "http_fetch",
            json!({"url": s.url("/bomb.gz"), "max_bytes": 32768}),
        )
        .await;
    // (its 16 KiB on the wire are within the cap; the 16 MiB it decodes to are not)
    assert_eq!(ok(&r)["body_bytes"], 32768);

    // corrupt and unknown encodings are errors, not garbage
    s.route(
        "/corrupt",
        encoded("gzip", "text/plain", b"\x1f\x8b\x08\x00garbage!".to_vec()),
    );
    assert_eq!(
        reason(&http.fetch(&s.url("/corrupt")).await),
        "bad_encoding"
    );
    s.route("/zstd", encoded("zstd", "text/plain", b"x".to_vec()));
    assert_eq!(
        reason(&http.fetch(&s.url("/zstd")).await),
        "unsupported_encoding"
    );
    s.route("/double", encoded("gzip, br", "text/plain", b"x".to_vec()));
    assert_eq!(
        reason(&http.fetch(&s.url("/double")).await),
        "unsupported_encoding"
    );
}

#[tokio::test]
async fn headers_go_out_by_the_allowlist_and_come_back_selected() {
    let (s, http) = server();
    s.route("/echo", Reply::Echo);
    s.route(
        "/cookies",
        Reply::Body {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/plain".into()),
                ("Set-Cookie".into(), "session=s3cr3t".into()),
                ("ETag".into(), "\"v1\"".into()),
            ],
            body: b"x".to_vec(),
        },
    );
    let r = http
        .call(
            "http_fetch",
            json!({"url": s.url("/echo"), "headers": {"Accept": "application/json", "Accept-Language": "fr"}}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    let seen = &s.requests()[0];
    assert_eq!(seen.header("accept"), Some("application/json"));
    assert_eq!(seen.header("accept-language"), Some("fr"));
    assert_eq!(seen.header("accept-encoding"), Some("gzip, deflate, br"));
    assert!(seen.header("user-agent").unwrap().starts_with("toolgate/"));
    assert_eq!(seen.header("idempotency-key"), None);

    let r = http.fetch(&s.url("/cookies")).await;
    let headers = &ok(&r)["headers"];
    assert_eq!(headers["etag"], "\"v1\"");
    assert!(headers.get("set-cookie").is_none(), "{headers}");

    // refused headers: located faults, before anything is sent
    let before = s.hits();
    let r = http
        .call(
            "http_fetch",
            json!({"url": s.url("/echo"), "headers": {"Authorization": "Bearer x", "Host": "evil", "Accept": "ok"}}),
        )
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    let pointers: Vec<&str> = e.faults.iter().map(|f| f.pointer.as_str()).collect();
    assert_eq!(pointers, ["/headers/Authorization", "/headers/Host"]);
    assert_eq!(s.hits(), before);
}

#[tokio::test]
async fn head_returns_status_and_headers_only() {
    let (s, http) = server();
    s.route(
        "/file",
        Reply::ok("application/octet-stream", vec![0u8; 1000]),
    );
    let r = http
        .call(
            "http_fetch",
            json!({"url": s.url("/file"), "method": "HEAD"}),
        )
        .await;
    let v = ok(&r);
    assert_eq!(
        (v["status"].as_u64(), v["format"].as_str()),
        (Some(200), Some("empty"))
    );
    assert_eq!(v["headers"]["content-length"], "1000");
    assert_eq!(s.requests()[0].method, "HEAD");
}

#[tokio::test]
async fn redirects_are_followed_within_the_limit() {
    let (s, _) = server();
    let mut config = opening(&["127.0.0.2"]);
    config.max_redirects = 3;
    let http = Http::new(config);
    s.route("/r1", Reply::redirect(301, "/r2"));
    s.route("/r2", Reply::redirect(308, s.url("/r3")));
    s.route("/r3", Reply::redirect(303, "r4?x=1"));
    s.route("/r4?x=1", Reply::ok("text/plain", "landed"));
    let r = http.fetch(&s.url("/r1")).await;
    let v = ok(&r);
    assert_eq!(v["body"], "landed");
    assert_eq!(v["url"], s.url("/r4?x=1"));
    assert_eq!(
        v["redirects"],
        json!([s.url("/r2"), s.url("/r3"), s.url("/r4?x=1")])
    );
    // one more is too many
    s.route("/r0", Reply::redirect(302, "/r1"));
    let r = http.fetch(&s.url("/r0")).await;
    assert_eq!(reason(&r), "too_many_redirects");
    // a loop ends the same way
    s.route("/loop", Reply::redirect(302, "/loop"));
    assert_eq!(
        reason(&http.fetch(&s.url("/loop")).await),
        "too_many_redirects"
    );
    // with max_redirects = 0 a redirect comes back as it is
    let mut config = opening(&["127.0.0.2"]);
    config.max_redirects = 0;
    let r = Http::new(config).fetch(&s.url("/r1")).await;
    assert_eq!(ok(&r)["status"], 301);
    assert_eq!(ok(&r)["headers"]["location"], "/r2");
    // a Location that is not a URL
    s.route("/bad", Reply::redirect(302, "http://[::1"));
    assert_eq!(reason(&http.fetch(&s.url("/bad")).await), "bad_redirect");
    // a Location too long for the HTTP stack (over 64 KiB): nothing is sent to it, and the
    // model is told so, without the URL echoed whole (before: "request_failed ... may or may
    // not have reached the server")
    let long = s.url(&format!("/{}", "a".repeat(70_000)));
    s.route("/long", Reply::redirect(302, &long));
    let r = http.fetch(&s.url("/long")).await;
    assert_eq!(reason(&r), "bad_redirect");
    let message = r.error.as_ref().unwrap().message.clone();
    assert!(
        message.contains("redirect 1") && message.contains("cannot be requested"),
        "{message}"
    );
    assert!(
        message.len() < 1000,
        "the URL is not echoed: {} bytes",
        message.len()
    );
}

/// Bad arguments fail before anything is sent, with what to send instead.
#[tokio::test]
async fn bad_arguments_fail_before_sending() {
    let (s, http) = server();
    for (args, kind) in [
        (json!({}), ErrorKind::InvalidArguments),
        (json!({"url": ""}), ErrorKind::InvalidArguments),
        (json!({"url": 5}), ErrorKind::InvalidArguments),
        (
            json!({"url": s.url("/"), "method": "POST"}),
            ErrorKind::InvalidArguments,
        ),
        (
            json!({"url": s.url("/"), "max_bytes": 0}),
            ErrorKind::InvalidArguments,
        ),
        (
            json!({"url": s.url("/"), "headers": {"Accept": 1}}),
            ErrorKind::InvalidArguments,
        ),
        (
            json!({"url": s.url("/"), "extra": true}),
            ErrorKind::InvalidArguments,
        ),
        (json!({"url": "not a url"}), ErrorKind::UnsafeInput),
        (
            json!({"url": "http://exa mple.com/"}),
            ErrorKind::UnsafeInput,
        ),
        (
            json!({"url": "http://[fe80::1%25eth0]/"}),
            ErrorKind::UnsafeInput,
        ),
        (
            json!({"url": format!("http://a:b@{}/", s.addr())}),
            ErrorKind::UnsafeInput,
        ),
    ] {
        let r = http.call("http_fetch", args.clone()).await;
        assert_eq!(
            r.error.as_ref().map(|e| e.kind),
            Some(kind),
            "{args}: {r:?}"
        );
        assert!(r.error.unwrap().is_recoverable());
    }
    assert_eq!(s.hits(), 0);
    // nothing listening: a transient connect failure naming the address
    let gone = s.url("/");
    drop(s);
    let r = http.fetch(&gone).await;
    assert_eq!(reason(&r), "connect_failed");
}

/// A body shorter than its `Content-Length` (the server closed mid-answer): `body_failed`,
/// saying how much came of how much, and that the call may be tried again.
#[tokio::test]
async fn a_body_cut_short_says_how_much_came() {
    let (s, http) = server();
    s.route(
        "/short",
        Reply::Raw(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789"
                .to_vec(),
        ),
    );
    let r = http.fetch(&s.url("/short")).await;
    assert_eq!(reason(&r), "body_failed");
    let e = r.error.as_ref().unwrap();
    assert!(e.transient, "{e:?}");
    assert!(
        e.message.contains("after 10 of the 100 bytes it announced")
            && e.message.contains("try again"),
        "{}",
        e.message
    );
}
