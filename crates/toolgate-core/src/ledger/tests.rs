//! The ledger's rules ([`decide`]), keys, hashes and the memory backend.

use super::*;
use crate::{ErrorKind, ToolError, ToolOutput};
use serde_json::json;

const HASH: ArgsHash = [7; 32];
const OTHER: ArgsHash = [8; 32];

fn claim<'a>(key: &'a str, hash: &'a ArgsHash, now_us: u64) -> Claim<'a> {
    Claim {
        principal: None,
        key,
        derived: false,
        tool: "send",
        args_hash: hash,
        session: "s1",
        call_id: "c1",
        arguments: "{}",
        holder: 1,
        now_us,
        lease_until_us: now_us + 100,
        expire_before_us: 0,
        reuse_before_us: None,
    }
}

fn stored(state: LedgerState, updated_us: u64) -> Stored<'static> {
    Stored {
        tool: "send",
        args_hash: &HASH,
        derived: false,
        state,
        lease_until_us: (state == LedgerState::InProgress).then_some(150),
        created_us: 10,
        updated_us,
        session: "s0",
        call_id: "c0",
    }
}

#[test]
fn decide_follows_its_rules_in_order() {
    let c = claim("k", &HASH, 100);
    assert_eq!(
        decide(&stored(LedgerState::Succeeded, 50), &c),
        Verdict::Replay
    );
    assert_eq!(
        decide(&stored(LedgerState::Failed, 50), &c),
        Verdict::Replay
    );
    assert!(matches!(
        decide(&stored(LedgerState::InProgress, 50), &c),
        Verdict::Refuse(Claimed::InProgress { until_us: 150, .. })
    ));
    assert!(matches!(
        decide(&stored(LedgerState::Unknown, 50), &c),
        Verdict::Refuse(Claimed::Unsettled { since_us: 10, .. })
    ));
    // past its lease, an in-progress entry is unsettled: its holder is gone
    let late = claim("k", &HASH, 151);
    assert!(matches!(
        decide(&stored(LedgerState::InProgress, 50), &late),
        Verdict::Refuse(Claimed::Unsettled { .. })
    ));
    // other arguments or another tool: a conflict, whatever the state
    let other = claim("k", &OTHER, 100);
    for state in [
        LedgerState::InProgress,
        LedgerState::Unknown,
        LedgerState::Succeeded,
    ] {
        assert_eq!(
            decide(&stored(state, 50), &other),
            Verdict::Refuse(Claimed::Conflict {
                tool: "send".into()
            })
        );
    }
    let mut tool = claim("k", &HASH, 100);
    tool.tool = "post";
    assert!(matches!(
        decide(&stored(LedgerState::Succeeded, 50), &tool),
        Verdict::Refuse(Claimed::Conflict { .. })
    ));
}

#[test]
fn expiry_and_the_derived_window_free_keys_but_never_a_live_claim() {
    let mut c = claim("k", &OTHER, 100);
    c.expire_before_us = 60;
    // past the retention a key is free, for any arguments
    assert_eq!(
        decide(&stored(LedgerState::Succeeded, 50), &c),
        Verdict::Take
    );
    // an unsettled entry never expires: it waits for the operator, however old
    let mut same = claim("k", &HASH, 100);
    same.expire_before_us = 60;
    assert!(matches!(
        decide(&stored(LedgerState::Unknown, 50), &same),
        Verdict::Refuse(Claimed::Unsettled { .. })
    ));
    let mut dead = stored(LedgerState::InProgress, 50);
    dead.lease_until_us = Some(70);
    assert!(matches!(
        decide(&dead, &same),
        Verdict::Refuse(Claimed::Unsettled { .. })
    ));
    assert!(matches!(
        decide(&stored(LedgerState::Unknown, 50), &c),
        Verdict::Refuse(Claimed::Conflict { .. })
    ));
    // a claim still within its lease is never taken
    assert!(matches!(
        decide(&stored(LedgerState::InProgress, 50), &c),
        Verdict::Refuse(Claimed::Conflict { .. })
    ));
    // a derived key's ended entry is reused after the window; a sent key's is not
    let mut d = claim("k", &HASH, 100);
    d.derived = true;
    d.reuse_before_us = Some(60);
    let mut derived = stored(LedgerState::Succeeded, 50);
    derived.derived = true;
    assert_eq!(decide(&derived, &d), Verdict::Take);
    assert_eq!(
        decide(&stored(LedgerState::Succeeded, 50), &d),
        Verdict::Replay
    );
    d.reuse_before_us = Some(40);
    assert_eq!(decide(&derived, &d), Verdict::Replay);
    // an unsettled derived entry is never reused by the window: never a silent re-run
    let mut lost = stored(LedgerState::Unknown, 50);
    lost.derived = true;
    d.reuse_before_us = Some(60);
    assert!(matches!(
        decide(&lost, &d),
        Verdict::Refuse(Claimed::Unsettled { .. })
    ));
}

#[test]
fn sent_keys_are_checked_with_messages_that_say_what_to_send() {
    for ok in [
        "a",
        "550e8400-e29b-41d4-a716-446655440000",
        "order:42/retry=1+x@host.example_~",
        &"k".repeat(MAX_KEY_BYTES),
    ] {
        assert!(check_key(ok).is_ok(), "{ok}");
    }
    for (bad, says) in [
        ("", "is empty"),
        (
            &"k".repeat(MAX_KEY_BYTES + 1) as &str,
            "256 bytes, more than 255",
        ),
        ("a b", "' ' (U+0020) at byte 1"),
        ("a\nb", "'\\n' (U+000A) at byte 1"),
        ("a\u{0}b", "U+0000"),
        ("ключ", "U+043A) at byte 0"),
        ("a\"b", "U+0022"),
        ("a\u{202e}b", "U+202E"),
    ] {
        let e = check_key(bad).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert_eq!(e.reason.as_deref(), Some("invalid_idempotency_key"));
        assert!(e.message.contains(says), "{bad:?}: {}", e.message);
        assert!(e.message.contains("a UUID is a good key"), "{}", e.message);
    }
}

#[test]
fn derived_keys_depend_on_caller_tool_and_arguments_only() {
    let h = arguments_hash(&json!({"to": "a@b", "body": "hi"}));
    let k = derive_key("s1", "send", &h);
    assert!(k.starts_with(DERIVED_PREFIX) && k.len() == 35, "{k}");
    assert!(check_key(&k).is_ok());
    assert_eq!(k, derive_key("s1", "send", &h));
    assert_ne!(k, derive_key("s2", "send", &h));
    assert_ne!(k, derive_key("s1", "post", &h));
    assert_ne!(
        k,
        derive_key("s1", "send", &arguments_hash(&json!({"to": "a@b"})))
    );
    // the separators keep ("ab", "c") and ("a", "bc") apart
    assert_ne!(derive_key("ab", "c", &h), derive_key("a", "bc", &h));
}

#[test]
fn the_arguments_hash_is_canonical() {
    let a: serde_json::Value =
        serde_json::from_str(r#"{"b": [1, {"y": 2, "x": "é"}], "a": null}"#).unwrap();
    let b: serde_json::Value =
        serde_json::from_str(r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#).unwrap();
    assert_eq!(arguments_hash(&a), arguments_hash(&b));
    let c: serde_json::Value =
        serde_json::from_str(r#"{"a":null,"b":[{"x":"é","y":2},1]}"#).unwrap();
    assert_ne!(arguments_hash(&a), arguments_hash(&c));
    assert_ne!(
        arguments_hash(&json!({"n": 1})),
        arguments_hash(&json!({"n": "1"}))
    );
}

#[test]
fn recorded_results_round_trip() {
    let output = ToolOutput {
        structured: Some(json!({"sent": true})),
        content: vec![crate::Content::text("sent")],
    };
    let back = Recorded::from_json("k", &Recorded::output_json(&output)).unwrap();
    assert_eq!(back, Recorded::Output(output));
    let e = ToolError::failed("smtp said 554").with_reason("rejected");
    let back = Recorded::from_json("k", &Recorded::error_json(&e)).unwrap();
    assert_eq!(back, Recorded::Error(e));
    let back = Recorded::from_json("k", &Recorded::settled_json("operator", 5)).unwrap();
    assert_eq!(
        back,
        Recorded::Settled {
            by: "operator".into(),
            at_us: 5
        }
    );
    for bad in ["", "{", "null", r#"{"output": 1}"#, r#"{"nope": {}}"#] {
        match Recorded::from_json("k9", bad) {
            Err(LedgerError::Corrupt { key, .. }) => assert_eq!(key, "k9"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

fn held(key: &str, holder: u64) -> Held<'_> {
    Held {
        principal: None,
        key,
        holder,
    }
}

#[test]
fn the_memory_ledger_claims_ends_and_settles() {
    let l = MemoryLedger::default();
    let c = claim("k", &HASH, 100);
    assert_eq!(l.claim(&c).unwrap(), Claimed::Held);
    assert!(matches!(l.claim(&c).unwrap(), Claimed::InProgress { .. }));
    // only the holder ends its claim
    assert!(!l
        .complete(&held("k", 2), LedgerState::Succeeded, "{}", 110)
        .unwrap());
    let out = Recorded::output_json(&ToolOutput::text("ok"));
    assert!(l
        .complete(&held("k", 1), LedgerState::Succeeded, &out, 110)
        .unwrap());
    assert_eq!(
        l.claim(&claim("k", &HASH, 120)).unwrap(),
        Claimed::Done {
            state: LedgerState::Succeeded,
            result: Recorded::Output(ToolOutput::text("ok"))
        }
    );
    // released keys are free; abandoned ones unsettled until settled
    assert_eq!(l.claim(&claim("r", &HASH, 100)).unwrap(), Claimed::Held);
    assert!(l.release(&held("r", 1)).unwrap());
    assert_eq!(l.claim(&claim("r", &HASH, 101)).unwrap(), Claimed::Held);
    assert!(l.abandon(&held("r", 1), 102).unwrap());
    assert!(matches!(
        l.claim(&claim("r", &HASH, 103)).unwrap(),
        Claimed::Unsettled { .. }
    ));
    let unknown = l
        .list(
            &LedgerFilter {
                state: Some(LedgerState::Unknown),
                key: None,
            },
            104,
        )
        .unwrap();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].key, "r");
    // a done entry is not unsettled: settle leaves it
    assert!(matches!(
        l.settle(None, "k", Settlement::NotDone, 105).unwrap(),
        Settled::NotUnsettled(_)
    ));
    assert_eq!(
        l.settle(None, "nope", Settlement::NotDone, 105).unwrap(),
        Settled::Missing
    );
    let settled = Recorded::settled_json("operator", 106);
    assert!(matches!(
        l.settle(
            None,
            "r",
            Settlement::Done {
                result: &settled,
                by: "operator"
            },
            106
        )
        .unwrap(),
        Settled::Settled(_)
    ));
    assert!(matches!(
        l.claim(&claim("r", &HASH, 107)).unwrap(),
        Claimed::Done {
            result: Recorded::Settled { .. },
            ..
        }
    ));
    let listed = l.list(&LedgerFilter::default(), 108).unwrap();
    assert_eq!(listed[1].settled_by.as_deref(), Some("operator"));
    // take_over only takes an unsettled entry
    assert!(!l.take_over(&claim("k", &HASH, 109)).unwrap());
    assert_eq!(l.claim(&claim("t", &HASH, 100)).unwrap(), Claimed::Held);
    assert!(!l.take_over(&claim("t", &HASH, 101)).unwrap(), "live");
    assert!(
        l.take_over(&claim("t", &HASH, 201)).unwrap(),
        "past its lease"
    );
    assert!(
        !l.take_over(&claim("t", &HASH, 202)).unwrap(),
        "taken already"
    );
    // keys are kept per principal
    let mut p = claim("k", &OTHER, 300);
    p.principal = Some("alice");
    assert_eq!(l.claim(&p).unwrap(), Claimed::Held);
    // pruning forgets the ended entries the retention has passed ("k", "r"), never a live
    // claim ("t" taken over at 201, alice's) nor an unsettled one ("t" once its lease ran
    // out at 301: kept until it is settled)
    assert_eq!(l.prune(250, 300).unwrap(), 2);
    assert_eq!(l.list(&LedgerFilter::default(), 300).unwrap().len(), 2);
    assert_eq!(l.prune(250, 302).unwrap(), 0, "t is unsettled");
    assert_eq!(l.prune(u64::MAX, 302).unwrap(), 0, "however old");
    l.settle(None, "t", Settlement::NotDone, 303).unwrap();
    assert_eq!(
        l.prune(u64::MAX, 304).unwrap(),
        0,
        "settled not done: removed already"
    );
}

#[test]
fn the_memory_ledger_stays_within_its_bytes() {
    let l = MemoryLedger::new(4096);
    let big = Recorded::output_json(&ToolOutput::text("x".repeat(1500)));
    for i in 0..10u64 {
        let key = format!("k{i}");
        assert_eq!(
            l.claim(&claim(&key, &HASH, 100 + i)).unwrap(),
            Claimed::Held
        );
        assert!(l
            .complete(&held(&key, 1), LedgerState::Succeeded, &big, 100 + i)
            .unwrap());
    }
    // an unsettled entry is kept however full the ledger is
    assert_eq!(l.claim(&claim("lost", &HASH, 200)).unwrap(), Claimed::Held);
    assert!(l.abandon(&held("lost", 1), 201).unwrap());
    let left = l.list(&LedgerFilter::default(), 300).unwrap();
    assert!(left.len() <= 3, "{}", left.len());
    assert!(left.iter().any(|e| e.key == "k9"), "the newest is kept");
    assert!(left.iter().any(|e| e.key == "lost"));
}
