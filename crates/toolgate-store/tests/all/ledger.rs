//! The idempotency ledger: claim, complete, replay, conflict, release; bad keys refused.

use super::support::TempStore;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_store::{Claim, LedgerStatus, StoreError};

#[test]
fn a_key_is_claimed_once_then_replays_its_result() {
    let t = TempStore::new();
    let s = &t.store;
    let args = json!({"path": "a.txt", "content": "x"});
    assert_eq!(
        s.claim_idempotency("k1", "write_file", &args, 10).unwrap(),
        Claim::New
    );
    assert_eq!(
        s.claim_idempotency("k1", "write_file", &args, 11).unwrap(),
        Claim::InProgress { claimed_us: 10 }
    );
    s.complete_idempotency("k1", LedgerStatus::Succeeded, &json!({"bytes": 1}), 12)
        .unwrap();
    // the same arguments with keys in another order are the same call
    let reordered: serde_json::Value =
        serde_json::from_str(r#"{"content":"x","path":"a.txt"}"#).unwrap();
    assert_eq!(
        s.claim_idempotency("k1", "write_file", &reordered, 13)
            .unwrap(),
        Claim::Done {
            status: LedgerStatus::Succeeded,
            result: json!({"bytes": 1})
        }
    );
    // completing twice is refused
    assert!(matches!(
        s.complete_idempotency("k1", LedgerStatus::Failed, &json!(null), 14),
        Err(StoreError::Ledger { .. })
    ));
}

#[test]
fn a_key_reused_for_other_arguments_or_another_tool_conflicts() {
    let t = TempStore::new();
    let s = &t.store;
    s.claim_idempotency("k", "write_file", &json!({"path": "a"}), 1)
        .unwrap();
    assert_eq!(
        s.claim_idempotency("k", "write_file", &json!({"path": "b"}), 2)
            .unwrap(),
        Claim::Conflict {
            tool: "write_file".into()
        }
    );
    assert_eq!(
        s.claim_idempotency("k", "edit_file", &json!({"path": "a"}), 2)
            .unwrap(),
        Claim::Conflict {
            tool: "write_file".into()
        }
    );
}

#[test]
fn a_released_key_can_be_claimed_again_and_failures_replay() {
    let t = TempStore::new();
    let s = &t.store;
    let args = json!({});
    s.claim_idempotency("k", "run_shell", &args, 1).unwrap();
    assert!(s.release_idempotency("k").unwrap());
    assert!(!s.release_idempotency("k").unwrap());
    assert_eq!(
        s.claim_idempotency("k", "run_shell", &args, 2).unwrap(),
        Claim::New
    );
    s.complete_idempotency("k", LedgerStatus::Failed, &json!({"exit": 1}), 3)
        .unwrap();
    assert!(
        !s.release_idempotency("k").unwrap(),
        "a completed key stays"
    );
    assert_eq!(
        s.claim_idempotency("k", "run_shell", &args, 4).unwrap(),
        Claim::Done {
            status: LedgerStatus::Failed,
            result: json!({"exit": 1})
        }
    );
    assert_eq!(s.prune_idempotency(2).unwrap(), 0);
    assert_eq!(s.prune_idempotency(3).unwrap(), 1);
    assert_eq!(
        s.claim_idempotency("k", "run_shell", &args, 5).unwrap(),
        Claim::New
    );
}

#[test]
fn bad_keys_and_calls_are_refused() {
    let t = TempStore::new();
    let s = &t.store;
    for (key, says) in [
        ("", "the key is empty"),
        ("a\0b", "contains NUL"),
        (&"k".repeat(600) as &str, "more than 512"),
    ] {
        match s.claim_idempotency(key, "t", &json!({}), 1) {
            Err(StoreError::Ledger { why, .. }) => assert!(why.contains(says), "{why}"),
            other => panic!("{says}: {other:?}"),
        }
    }
    assert!(matches!(
        s.complete_idempotency("never", LedgerStatus::Succeeded, &json!(1), 1),
        Err(StoreError::Ledger { .. })
    ));
    s.claim_idempotency("k", "t", &json!({}), 1).unwrap();
    assert!(matches!(
        s.complete_idempotency("k", LedgerStatus::InProgress, &json!(1), 2),
        Err(StoreError::Ledger { .. })
    ));
    // a damaged result is an error naming the row
    s.complete_idempotency("k", LedgerStatus::Succeeded, &json!(1), 2)
        .unwrap();
    t.raw()
        .execute("UPDATE idempotency SET result = '{bad' WHERE key = 'k'", [])
        .unwrap();
    let e = s.claim_idempotency("k", "t", &json!({}), 3).unwrap_err();
    assert!(e.to_string().contains("table idempotency"), "{e}");
}
