//! The operator's credential never reaches the model, not even when a server sends it back:
//! a body that echoes the request's headers (httpbin's `/headers`, a debugging endpoint, an
//! error page quoting "invalid key ..."), a redirect whose `Location` carries it (shown as the
//! final URL, in `redirects`, or in the error naming a blocked hop), a response header quoting
//! it. Each is replaced by a marker naming the credential's host, in the result and in every
//! error alike.

use super::http_support::{blocked, ok, opening, Http};
use serde_json::json;
use toolgate_test_support::http::{HttpServer, Reply};
use toolgate_tools::http::{Credential, HttpConfig, Secret};

const TOKEN: &str = "tok-91c2e7-reflected";
/// The header's value: a scheme and the token, as `Authorization` carries it.
const VALUE: &str = "Bearer tok-91c2e7-reflected";
/// `Basic` of `alice:pw-5be0d1-reflected`.
const BASIC_PASSWORD: &str = "pw-5be0d1-reflected";

fn config() -> HttpConfig {
    let mut c = opening(&["127.0.0.2", "127.0.0.3"]);
    c.credentials.insert(
        "127.0.0.2".into(),
        Credential {
            header: "Authorization".into(),
            value_env: "TEST_TOKEN".into(),
            value: Some(Secret(VALUE.into())),
            // the test servers speak plain HTTP on 127.0.0.x
            plain_http: true,
        },
    );
    c
}

/// Asserts no form of a secret is anywhere in `shown`.
fn assert_clean(shown: &str) {
    for secret in [TOKEN, BASIC_PASSWORD, "YWxpY2U6cHctNWJlMGQxLXJlZmxlY3RlZA"] {
        assert!(!shown.contains(secret), "{secret} leaked: {shown}");
    }
}

#[tokio::test]
async fn a_credential_a_server_sends_back_is_not_shown() {
    let a = HttpServer::start("127.0.0.2");
    let b = HttpServer::start("127.0.0.3");
    let http = Http::new(config());
    a.route("/echo", Reply::Echo);
    // the token alone, as an error page quotes it
    a.route(
        "/quote",
        Reply::ok("text/html", format!("<p>invalid key <b>{TOKEN}</b></p>")),
    );
    a.route(
        "/header",
        Reply::Body {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/plain".into()),
                (
                    "Link".into(),
                    format!("<https://x.test/?k={TOKEN}>; rel=next"),
                ),
                (
                    "WWW-Authenticate".into(),
                    format!("Bearer error=\"{VALUE}\""),
                ),
            ],
            body: b"fine".to_vec(),
        },
    );
    a.route(
        "/away",
        Reply::redirect(302, b.url(&format!("/landing?k={TOKEN}"))),
    );
    a.route(
        "/encoded",
        Reply::redirect(302, b.url("/landing?k=Bearer%20tok-91c2e7-reflected")),
    );
    a.route(
        "/blocked",
        Reply::redirect(302, format!("http://127.0.0.1:9/?k={TOKEN}")),
    );
    a.route(
        "/bad",
        Reply::Raw(
            format!(
                "HTTP/1.1 302 Found\r\nLocation: http://[{TOKEN}/\r\nContent-Length: 0\r\n\r\n"
            )
            .into_bytes(),
        ),
    );

    let r = http.fetch(&a.url("/echo")).await;
    let body = ok(&r)["body"].as_str().unwrap().to_string();
    assert_eq!(a.requests()[0].header("authorization"), Some(VALUE));
    assert!(
        body.contains("[toolgate: the credential for 127.0.0.2]"),
        "{body}"
    );
    let quote = http.fetch(&a.url("/quote")).await;
    assert!(
        ok(&quote)["body"]
            .as_str()
            .unwrap()
            .contains("[toolgate: the credential for 127.0.0.2]"),
        "{quote:#?}"
    );
    let mut shown = vec![r, quote, http.fetch(&a.url("/header")).await];
    for path in ["/away", "/encoded"] {
        let r = http.fetch(&a.url(path)).await;
        assert_eq!(ok(&r)["status"], 200, "{path}");
        shown.push(r);
    }
    let r = http.fetch(&a.url("/blocked")).await;
    assert_eq!(blocked(&r), "redirect_to_blocked");
    shown.push(r);
    let r = http.fetch(&a.url("/bad")).await;
    assert!(r.is_error, "{r:#?}");
    shown.push(r);
    for r in &shown {
        assert_clean(&serde_json::to_string(r).unwrap());
    }
    for rec in http.audit.records() {
        assert_clean(&serde_json::to_string(&rec).unwrap());
    }
}

/// A `Basic` credential is sent back decoded as often as encoded: its `user:password` and the
/// password alone are not shown either.
#[tokio::test]
async fn a_basic_credential_is_not_shown_in_any_form() {
    let a = HttpServer::start("127.0.0.2");
    let mut c = opening(&["127.0.0.2"]);
    c.credentials.insert(
        "127.0.0.2".into(),
        Credential {
            header: "Authorization".into(),
            value_env: "TEST_BASIC".into(),
            value: Some(Secret("Basic YWxpY2U6cHctNWJlMGQxLXJlZmxlY3RlZA==".into())),
            // the test servers speak plain HTTP on 127.0.0.x
            plain_http: true,
        },
    );
    let http = Http::new(c);
    a.route(
        "/who",
        Reply::ok(
            "application/json",
            json!({
                "user": "alice",
                "password": BASIC_PASSWORD,
                "pair": format!("alice:{BASIC_PASSWORD}"),
                "raw": "YWxpY2U6cHctNWJlMGQxLXJlZmxlY3RlZA=="
            })
            .to_string(),
        ),
    );
    let r = http.fetch(&a.url("/who")).await;
    let body = ok(&r)["body"].as_str().unwrap().to_string();
    assert!(body.contains("\"user\":\"alice\""), "{body}");
    assert_clean(&serde_json::to_string(&r).unwrap());
}

/// A body cut at the call's byte cap inside the credential (an echo past the cap) shows none
/// of it: the cut end is replaced like a whole form.
#[tokio::test]
async fn a_credential_cut_by_the_byte_cap_is_not_shown_in_part() {
    let a = HttpServer::start("127.0.0.2");
    let http = Http::new(config());
    // no Content-Length (read to the connection's end): a length over the cap would be
    // refused unread
    let page = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n{}{VALUE} and more",
        "x".repeat(100)
    );
    a.route("/long", Reply::Raw(page.into_bytes()));
    // the cap falls 12 bytes into the value: "Bearer tok-9"
    let r = http
        .call(
            "http_fetch",
            json!({"url": a.url("/long"), "max_bytes": 112}),
        )
        .await;
    let v = ok(&r);
    assert_eq!(v["truncated"], true, "{v}");
    let body = v["body"].as_str().unwrap();
    assert!(
        body.ends_with("[toolgate: the credential for 127.0.0.2]"),
        "{body}"
    );
    assert!(!body.contains("tok-9"), "{body}");
}

/// The three echoes a tester got past the scrubber: the credential percent-encoded where no
/// encoding was needed (`tok%2D...`, `%74ok-...`), carried in a redirect's host (which the URL
/// parser lower-cases before the error naming it is made), and in a body labelled UTF-32
/// (read as UTF-8, every character came back between NUL escapes).
#[tokio::test]
async fn over_encoded_case_folded_and_utf32_echoes_are_not_shown() {
    let a = HttpServer::start("127.0.0.2");
    let http = Http::new(config());
    let marker = "[toolgate: the credential for 127.0.0.2]";
    let plain = |body: &str| Reply::ok("text/plain", body.to_string());
    a.route("/pct", plain("t=tok%2D91c2e7%2Dreflected&n=1"));
    a.route("/pct-one", plain("t=%74ok-91c2e7-reflected"));
    a.route(
        "/pct-all",
        plain(&format!(
            "t={}",
            TOKEN
                .bytes()
                .map(|b| format!("%{b:02x}"))
                .collect::<String>()
        )),
    );
    a.route(
        "/host",
        Reply::redirect(302, "http://TOK-91C2E7-REFLECTED.localhost:9/".to_string()),
    );
    let utf32 = |big_endian: bool| {
        let text = format!("{{\"echo\": \"{VALUE}\"}}");
        let mark: &[u8] = if big_endian {
            &[0, 0, 0xfe, 0xff]
        } else {
            &[0xff, 0xfe, 0, 0]
        };
        let units = text.chars().flat_map(|c| {
            let c = c as u32;
            if big_endian {
                c.to_be_bytes()
            } else {
                c.to_le_bytes()
            }
        });
        Reply::ok(
            "application/json; charset=utf-32",
            mark.iter().copied().chain(units).collect::<Vec<u8>>(),
        )
    };
    a.route("/utf32le", utf32(false));
    a.route("/utf32be", utf32(true));

    let mut shown = Vec::new();
    for (path, want) in [
        ("/pct", format!("t={marker}&n=1")),
        ("/pct-one", format!("t={marker}")),
        ("/pct-all", format!("t={marker}")),
        ("/utf32le", format!("{{\"echo\": \"{marker}\"}}")),
        ("/utf32be", format!("{{\"echo\": \"{marker}\"}}")),
    ] {
        let r = http.fetch(&a.url(path)).await;
        assert_eq!(ok(&r)["body"], want.as_str(), "{path}");
        shown.push(r);
    }
    let r = http.fetch(&a.url("/host")).await;
    assert_eq!(blocked(&r), "redirect_to_blocked");
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains(&format!("{marker}.localhost")), "{text}");
    shown.push(r);
    for r in &shown {
        let text = serde_json::to_string(r).unwrap();
        assert_clean(&text);
        assert_clean(&text.to_ascii_lowercase());
    }
    for rec in http.audit.records() {
        assert_clean(&serde_json::to_string(&rec).unwrap());
    }
}
