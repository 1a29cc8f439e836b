//! `read_result` through the pipeline and directly.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::results::{MemoryResultStore, Page, ResultStore};
use toolgate_core::{ErrorKind, ToolCall, ToolContext, TypedTool};
use toolgate_tools::results::read_result::ReadResultArgs;
use toolgate_tools::ReadResult;

/// A search whose result passes the 64 KiB cap, so the pipeline keeps it behind a handle.
async fn truncated(f: &Fixture) -> (String, usize) {
    let text: String = (0..3000)
        .map(|i| format!("match {i:04} {}\n", "é".repeat(20)))
        .collect();
    f.write("many.txt", &text);
    let r = f
        .call(
            "search_code",
            json!({"pattern": "match", "max_matches": 5000}),
        )
        .await;
    let t = r
        .truncation
        .clone()
        .unwrap_or_else(|| panic!("expected a truncated result: {}", r.text()));
    assert!(t.original_bytes > 64 * 1024);
    assert!(r.text().contains(&t.handle));
    (t.handle, t.original_bytes)
}

#[tokio::test]
async fn pages_through_a_truncated_result() {
    let f = Fixture::new();
    let (handle, total) = truncated(&f).await;
    let mut offset = 0;
    let mut all = String::new();
    let mut pages = 0;
    loop {
        let r = f
            .call(
                "read_result",
                json!({"handle": handle, "offset": offset, "limit": 50000}),
            )
            .await;
        assert!(r.truncation.is_none());
        let page: Page = out(&r);
        assert_eq!((page.offset, page.total_bytes), (offset, total));
        all.push_str(&page.text);
        pages += 1;
        match page.next_offset {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert!(pages > 1);
    assert_eq!(all.len(), total);
    let full: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(full["total_matches"], 3000);
    // the default page is 16 KiB once escaped as JSON (the stored result is JSON: its quotes
    // count twice)
    let page: Page = out(&f.call("read_result", json!({"handle": handle})).await);
    let escaped = serde_json::to_string(&page.text).unwrap().len() - 2;
    assert!(escaped <= 16 * 1024 && escaped > 16 * 1024 - 8, "{escaped}");
    assert!(page.text.len() < escaped);
}

#[tokio::test]
async fn unknown_foreign_and_past_the_end() {
    let f = Fixture::new();
    let (handle, total) = truncated(&f).await;
    assert_not_found(
        &f.call(
            "read_result",
            json!({"handle": "res_00000000000000000000000000000000"}),
        )
        .await,
    );
    // another session of the same pipeline cannot read this session's handle
    let other = f.pipeline.session("s2").build().unwrap();
    let r = f
        .pipeline
        .dispatch(
            ToolCall::new("c1", "read_result", json!({"handle": handle})),
            &other,
        )
        .await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_found"));
    let r = f
        .call(
            "read_result",
            json!({"handle": handle, "offset": total + 1}),
        )
        .await;
    assert_bad_args(&r, &["/offset"]);
    for (args, pointers) in [
        (json!({}), vec!["/handle"]),
        (json!({"handle": ""}), vec!["/handle"]),
        (json!({"handle": handle, "limit": 0}), vec!["/limit"]),
        (json!({"handle": handle, "limit": 262145}), vec!["/limit"]),
        (json!({"handle": handle, "limit": u64::MAX}), vec!["/limit"]),
        (json!({"handle": handle, "offset": 1.5}), vec!["/offset"]),
        (json!({"handle": handle, "offset": -5}), vec!["/offset"]),
        (json!({"handle": handle, "page": 2}), vec!["/page"]),
    ] {
        assert_bad_args(&f.call("read_result", args).await, &pointers);
    }
}

#[tokio::test]
async fn direct_calls_read_the_context_store() {
    let store = Arc::new(MemoryResultStore::default());
    let handle = store.put("sess", "aé€😀b".into()).unwrap();
    let ctx = || {
        ToolContext::builder()
            .session_id("sess")
            .results(store.clone())
            .build()
    };
    let args = |offset, limit| ReadResultArgs {
        handle: handle.clone(),
        offset,
        limit,
    };
    let page = ReadResult.call(args(0, 3), ctx()).await.unwrap();
    assert_eq!(
        page,
        Page {
            text: "aé".into(),
            offset: 0,
            next_offset: Some(3),
            total_bytes: 11
        }
    );
    // a limit of 0 given directly still makes progress; a huge one is clamped
    let page = ReadResult.call(args(3, 0), ctx()).await.unwrap();
    assert_eq!(page.text, "€");
    let page = ReadResult.call(args(0, usize::MAX), ctx()).await.unwrap();
    assert_eq!((page.text.as_str(), page.next_offset), ("aé€😀b", None));
    let other = ToolContext::builder()
        .session_id("other")
        .results(store.clone())
        .build();
    let e = ReadResult.call(args(0, 10), other).await.unwrap_err();
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::ToolFailed, Some("not_found"))
    );
}
