//! Spilled results: bound to their session, found by a later process, expired and pruned.

use super::support::TempStore;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Pipeline, Registry, ResultStore, ToolCall};
use toolgate_store::{SqliteResultStore, Store};

const T0: u64 = 1_700_000_000_000_000;

#[test]
fn a_result_belongs_to_its_session() {
    let t = TempStore::new();
    let r = SqliteResultStore::new(t.store.clone());
    let text = "é".repeat(100_000);
    let h = r.put("s1", text.clone()).unwrap();
    assert!(h.starts_with("res_") && h.len() == 36, "{h}");
    assert_eq!(r.get("s1", &h).unwrap().as_deref(), Some(text.as_str()));
    assert_eq!(r.get("s2", &h).unwrap(), None);
    assert_eq!(
        r.get("s1", "res_00000000000000000000000000000000").unwrap(),
        None
    );
    assert_eq!(r.get("s1", "'; DROP TABLE results; --").unwrap(), None);
    // another handle on the same file (another process) finds it once it is committed
    r.flush().unwrap();
    let other = SqliteResultStore::new(Store::open(t.path()).unwrap());
    assert_eq!(other.get("s1", &h).unwrap().as_deref(), Some(text.as_str()));
}

/// `put` queues the text for the writer thread: the handle reads at once (from memory until
/// its row is committed), `flush` commits everything queued, and dropping the store drains the
/// queue, so no handle given out is lost.
#[test]
fn spilled_results_read_at_once_and_are_committed_by_flush_and_drop() {
    let t = TempStore::new();
    let r = SqliteResultStore::new(t.store.clone());
    let texts: Vec<String> = (0..200)
        .map(|i| format!("result {i} ").repeat(1000))
        .collect();
    let handles: Vec<String> = texts
        .iter()
        .map(|text| {
            let h = r.put("s1", text.clone()).unwrap();
            // read back before any flush: memory or table, never missing
            assert_eq!(r.get("s1", &h).unwrap().as_deref(), Some(text.as_str()));
            assert_eq!(r.get("s2", &h).unwrap(), None, "bound to its session");
            h
        })
        .collect();
    r.flush().unwrap();
    assert_eq!(t.store.result_count().unwrap(), 200);
    let other = SqliteResultStore::new(Store::open(t.path()).unwrap());
    for (h, text) in handles.iter().zip(&texts) {
        assert_eq!(other.get("s1", h).unwrap().as_deref(), Some(text.as_str()));
    }
    // queued and dropped without a flush: the drop writes them
    let last: Vec<String> = (0..50)
        .map(|i| r.put("s1", format!("late {i}")).unwrap())
        .collect();
    drop(r);
    assert_eq!(t.store.result_count().unwrap(), 250);
    assert_eq!(
        other.get("s1", &last[49]).unwrap().as_deref(),
        Some("late 49")
    );
}

/// A spill the store cannot write (its table gone behind its back) still reads in this
/// process, and the next flush says it was not written.
#[test]
fn a_spill_that_cannot_be_written_stays_readable_and_flush_says_so() {
    let t = TempStore::new();
    let r = SqliteResultStore::new(t.store.clone());
    let first = r.put("s1", "kept".into()).unwrap();
    r.flush().unwrap();
    t.raw().execute_batch("DROP TABLE results").unwrap();
    let h = r.put("s1", "not written".into()).unwrap();
    let e = r.flush().unwrap_err();
    assert_eq!(e.kind, toolgate_core::ErrorKind::Internal);
    assert!(
        e.message
            .contains("1 truncated results could not be written"),
        "{}",
        e.message
    );
    assert_eq!(r.get("s1", &h).unwrap().as_deref(), Some("not written"));
    assert_eq!(r.get("s2", &h).unwrap(), None);
    // the error is reported once; a flush with nothing new to write succeeds
    r.flush().unwrap();
    // the row written before the table went is gone with it: an error, not a wrong answer
    assert!(r.get("s1", &first).is_err());
}

#[test]
fn results_expire_after_the_retention_and_are_pruned() {
    let t = TempStore::new();
    let r = SqliteResultStore::with_retention(t.store.clone(), Duration::from_secs(60));
    let old = r.put_at("s1", "old", T0).unwrap();
    let new = r.put_at("s1", "new", T0 + 30_000_000).unwrap();
    let at = |s: u64| T0 + s * 1_000_000;
    assert_eq!(
        r.get_at("s1", &old, at(59)).unwrap().as_deref(),
        Some("old")
    );
    assert_eq!(r.get_at("s1", &old, at(60)).unwrap(), None, "expired");
    assert_eq!(
        r.get_at("s1", &new, at(60)).unwrap().as_deref(),
        Some("new")
    );
    assert_eq!(t.store.result_count().unwrap(), 2);
    assert_eq!(t.store.prune_results(at(60)).unwrap(), 1);
    assert_eq!(t.store.result_count().unwrap(), 1);
    assert_eq!(t.store.prune_results(at(90)).unwrap(), 1);
    assert_eq!(t.store.result_count().unwrap(), 0);
}

#[test]
fn put_prunes_expired_results_as_it_goes() {
    let t = TempStore::new();
    let r = SqliteResultStore::with_retention(t.store.clone(), Duration::from_secs(1));
    for i in 0..64 {
        r.put_at("s", "x", T0 + i).unwrap();
    }
    // the 64th put ran a prune at its own time: nothing had expired yet
    assert_eq!(t.store.result_count().unwrap(), 64);
    for i in 0..64 {
        r.put_at("s", "y", T0 + 10_000_000 + i).unwrap();
    }
    assert_eq!(
        t.store.result_count().unwrap(),
        64,
        "the first 64 were pruned"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn read_result_pages_through_a_result_stored_by_an_earlier_pipeline() {
    let t = TempStore::new();
    let registry = || {
        Registry::builder()
            .tool(toolgate_test_support::tools::big_output(200_000, 4_096))
            .tool(toolgate_tools::results::ReadResult)
            .build()
            .unwrap()
    };
    // the first "process": a truncated call
    let handle = {
        let p = Pipeline::builder(registry())
            .results(Arc::new(SqliteResultStore::new(t.store.clone())))
            .build();
        let s = p.session("sess").build().unwrap();
        let r = p
            .dispatch(ToolCall::new("c1", "big_output", json!({})), &s)
            .await;
        r.truncation.expect("truncated").handle
    };
    // the second: a new store handle and pipeline, the same session id
    let p = Pipeline::builder(registry())
        .results(Arc::new(SqliteResultStore::new(
            Store::open(t.path()).unwrap(),
        )))
        .build();
    let s = p.session("sess").build().unwrap();
    let mut offset = 0u64;
    let mut total = 0usize;
    for i in 0..100 {
        let r = p
            .dispatch(
                ToolCall::new(
                    format!("r{i}"),
                    "read_result",
                    json!({"handle": handle, "offset": offset, "limit": 65536}),
                ),
                &s,
            )
            .await;
        let page = r.structured_content.expect("a page");
        total += page["text"].as_str().unwrap().len();
        match page["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(total, 200_000);
    // another session cannot read it
    let other = p.session("intruder").build().unwrap();
    let r = p
        .dispatch(
            ToolCall::new("x", "read_result", json!({"handle": handle})),
            &other,
        )
        .await;
    assert!(r.is_error);
}
