//! http_fetch of a 64 KiB page from a local server against reqwest alone on the same page, in
//! the same run: what the egress checks, the guarded client, the streamed and counted body and
//! the conversion to text cost per call.
//!
//! `cargo bench -p toolgate-tools --bench http`
//!
//! The server is the tests' HTTP/1.1 server on 127.0.0.2 (keep-alive, one thread per
//! connection), opened by `allow_private = ["127.0.0.2/32"]`. Two pages of 65,536 bytes: JSON
//! (returned as it is) and HTML (converted to Markdown). For each:
//!
//! - `reqwest`: a plain `reqwest::Client` (no proxy) sends GET and reads the body as text;
//! - `http_fetch`: the http_fetch handler (no pipeline): the URL checked, the request through
//!   the guarded client, the body streamed within the cap and counted, turned into text;
//! - `http_fetch_pipeline`: the same call through the whole pipeline (default policy, memory
//!   audit, the result's envelope and its cap).
//!
//! Target: `http_fetch` at least 0.8x the calls per second of `reqwest` on the JSON page.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use std::time::Duration;
use toolgate_core::{Pipeline, Registry, ToolCall, ToolContext, TypedTool};
use toolgate_test_support::http::{HttpServer, Reply};
use toolgate_tools::http::http_fetch::HttpFetchArgs;
use toolgate_tools::http::{HttpConfig, HttpFetch};

const PAGE_BYTES: usize = 64 << 10;

/// A JSON document of exactly [`PAGE_BYTES`] bytes.
fn json_page() -> Vec<u8> {
    let mut items = Vec::new();
    let mut len = 2;
    let mut i = 0;
    while len < PAGE_BYTES - 200 {
        let item = format!(r#"{{"id":{i},"name":"item {i}","tags":["a","b"],"done":false}}"#);
        len += item.len() + 1;
        items.push(item);
        i += 1;
    }
    let mut text = format!("[{}]", items.join(","));
    // pad with spaces inside the array to the exact size
    let pad = PAGE_BYTES - text.len();
    text.insert_str(text.len() - 1, &" ".repeat(pad));
    assert_eq!(text.len(), PAGE_BYTES);
    text.into_bytes()
}

/// An HTML page of exactly [`PAGE_BYTES`] bytes: headings, paragraphs, links, lists, code.
fn html_page() -> Vec<u8> {
    let mut body = String::new();
    let mut i = 0;
    let tail = "</body></html>";
    while body.len() < PAGE_BYTES - 600 {
        body.push_str(&format!(
            "<h2>Section {i}</h2><p>Some <b>text</b> with a <a href=\"/page/{i}\">link</a> and \
             <code>code()</code>.</p><ul><li>one</li><li>two</li></ul>\n"
        ));
        i += 1;
    }
    let head = "<!doctype html><html><head><title>Bench</title></head><body>";
    let mut text = format!("{head}{body}");
    let pad = PAGE_BYTES - text.len() - tail.len();
    text.push_str(&format!("<p>{}</p>", "x".repeat(pad - 7)));
    text.push_str(tail);
    assert_eq!(text.len(), PAGE_BYTES);
    text.into_bytes()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = HttpServer::start("127.0.0.2");
    server.route("/page.json", Reply::ok("application/json", json_page()));
    server.route(
        "/page.html",
        Reply::ok("text/html; charset=utf-8", html_page()),
    );

    let mut config = HttpConfig::default();
    config.allow_private = vec!["127.0.0.2/32".parse().unwrap()];
    let fetch = HttpFetch::new(config.clone());
    // the plain client's TLS provider (unused over http://, but reqwest wants one)
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let reqwest = reqwest::Client::builder().no_proxy().build().unwrap();
    let registry = toolgate_tools::register_http(Registry::builder(), config)
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry).build();
    let session = pipeline.session("bench").build().unwrap();
    let mut calls = 0u64;

    for (name, path, format) in [
        ("json", "/page.json", "json"),
        ("html", "/page.html", "markdown"),
    ] {
        let url = server.url(path);
        let mut group = c.benchmark_group(format!("http_fetch_64k_{name}"));
        group.throughput(Throughput::Elements(1));
        group.measurement_time(Duration::from_secs(10));
        group.bench_function("reqwest", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let r = reqwest.get(&url).send().await.unwrap();
                    assert_eq!(r.status(), 200);
                    let text = r.text().await.unwrap();
                    assert_eq!(text.len(), PAGE_BYTES);
                })
            })
        });
        group.bench_function("http_fetch", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let args: HttpFetchArgs =
                        serde_json::from_value(json!({ "url": url })).unwrap();
                    let ctx = ToolContext::builder().build();
                    let out = fetch.call(args, ctx).await.unwrap();
                    assert_eq!((out.status, out.body_bytes), (200, PAGE_BYTES as u64));
                    assert_eq!(serde_json::to_value(out.format).unwrap(), format);
                })
            })
        });
        group.bench_function("http_fetch_pipeline", |b| {
            b.iter(|| {
                calls += 1;
                let call = ToolCall::new(format!("c{calls}"), "http_fetch", json!({ "url": url }));
                rt.block_on(async {
                    let r = pipeline.dispatch(call, &session).await;
                    assert!(!r.is_error, "{}", r.text());
                })
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
