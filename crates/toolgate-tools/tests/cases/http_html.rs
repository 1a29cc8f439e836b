//! `http_fetch` of hostile HTML from a real server on loopback: pages made to crash or stall
//! the conversion to Markdown (nesting deeper than any stack, elements the tree construction
//! multiplies, long runs of like siblings) come back as Markdown in bounded time and size,
//! cut with a note where they pass the parser's budget, and the process lives on.

use super::http_support::{full, opening, Http};
use std::time::{Duration, Instant};
use toolgate_test_support::http::{HttpServer, Reply};

const NOTE: &str = "[toolgate: the rest of this page is left out:";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_convert_in_bounded_time_and_size() {
    let s = HttpServer::start("127.0.0.2");
    let http = Http::new(opening(&["127.0.0.2"]));
    let kib64 = 64 << 10;
    let formatting: String = (0..kib64 / 16).map(|i| format!("<b id={i}><p>x")).collect();
    // (path, page, cut at the budget, text the Markdown keeps)
    let pages = [
        (
            "/divs",
            format!("<body>{}end", "<div>".repeat(kib64 / 5)),
            true,
            "",
        ),
        (
            "/lists",
            format!("<body>{}end", "<ul><li>".repeat(kib64 / 8)),
            true,
            "",
        ),
        (
            "/spans",
            format!("<body>{}end", "<span>".repeat(kib64 / 6)),
            false,
            "end",
        ),
        ("/formatting", formatting, true, "x"),
        (
            "/run",
            format!("<p>{}</p>", "<b>x</b>".repeat(kib64 / 8)),
            false,
            "**xxxx",
        ),
        (
            "/deep",
            format!("<body>{}end", "<div>".repeat(300)),
            false,
            "end",
        ),
    ];
    for (path, page, _, _) in &pages {
        s.route(path, Reply::ok("text/html; charset=utf-8", page.clone()));
    }
    for (path, page, cut, keeps) in pages {
        let started = Instant::now();
        let r = http.fetch(&s.url(path)).await;
        let v = full(&http, &r);
        assert_eq!(v["format"], "markdown", "{path}");
        assert_eq!(v["body_bytes"], page.len() as u64, "{path}");
        let md = v["body"].as_str().unwrap();
        assert_eq!(
            md.contains(NOTE),
            cut,
            "{path}: {}",
            &md[md.len().saturating_sub(300)..]
        );
        assert!(md.contains(keeps), "{path}");
        assert!(md.len() < 16 * page.len(), "{path}: {} bytes", md.len());
        // minutes and gigabytes unbounded (or the process aborted); seconds in a debug build
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{path}: {:?}",
            started.elapsed()
        );
    }
}
