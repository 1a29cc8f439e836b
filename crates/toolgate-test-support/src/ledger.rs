//! The contract every idempotency ledger backend keeps ([`toolgate_core::Ledger`]), as one
//! function each backend's tests run: the memory ledger in toolgate-core, the SQLite one in
//! toolgate-store.

use serde_json::json;
use toolgate_core::ledger::{
    arguments_hash, ArgsHash, Claim, Claimed, Held, Ledger, LedgerFilter, LedgerState, Recorded,
    Settled, Settlement,
};
use toolgate_core::{ToolError, ToolOutput};

/// A claim on `key` for `send` with `hash` at `now_us` by `holder`, leased for 100 µs.
pub fn claim<'a>(key: &'a str, hash: &'a ArgsHash, holder: u64, now_us: u64) -> Claim<'a> {
    Claim {
        principal: None,
        key,
        derived: false,
        tool: "send",
        args_hash: hash,
        session: "s1",
        call_id: "c1",
        arguments: r#"{"to":"a@b"}"#,
        holder,
        now_us,
        lease_until_us: now_us + 100,
        expire_before_us: 0,
        reuse_before_us: None,
    }
}

fn held(key: &str, holder: u64) -> Held<'_> {
    Held {
        principal: None,
        key,
        holder,
    }
}

fn state_of(l: &dyn Ledger, key: &str, now_us: u64) -> Option<LedgerState> {
    l.list(
        &LedgerFilter {
            state: None,
            key: Some(key.into()),
        },
        now_us,
    )
    .unwrap()
    .first()
    .map(|e| e.state)
}

/// Runs the contract on an empty `ledger`; panics at the first rule it breaks.
///
/// # Panics
/// When the backend breaks a rule (or fails).
pub fn check(l: &dyn Ledger) {
    let a = arguments_hash(&json!({"to": "a@b", "body": "hi"}));
    let b = arguments_hash(&json!({"body": "bye", "to": "a@b"}));

    // a lookup changes nothing: a free key stays free
    assert_eq!(l.lookup(&claim("k", &a, 1, 999)).unwrap(), None);
    assert_eq!(state_of(l, "k", 999), None);
    // claimed once; a second claim while it runs is in progress; only the holder ends it
    assert_eq!(l.claim(&claim("k", &a, 1, 1000)).unwrap(), Claimed::Held);
    assert!(matches!(
        l.lookup(&claim("k", &a, 2, 1001)).unwrap(),
        Some(Claimed::InProgress { .. })
    ));
    assert!(matches!(
        l.lookup(&claim("k", &b, 2, 1001)).unwrap(),
        Some(Claimed::Conflict { .. })
    ));
    match l.claim(&claim("k", &a, 2, 1001)).unwrap() {
        Claimed::InProgress {
            session,
            call_id,
            until_us,
        } => assert_eq!(
            (session.as_str(), call_id.as_str(), until_us),
            ("s1", "c1", 1100)
        ),
        other => panic!("a live claim: {other:?}"),
    }
    assert_eq!(
        l.claim(&claim("k", &b, 2, 1001)).unwrap(),
        Claimed::Conflict {
            tool: "send".into()
        },
        "other arguments conflict even while it runs"
    );
    assert!(!l
        .complete(&held("k", 2), LedgerState::Succeeded, "{}", 1002)
        .unwrap());
    assert!(!l.release(&held("k", 2)).unwrap());
    assert!(!l.abandon(&held("k", 2), 1002).unwrap());
    let out = ToolOutput {
        structured: Some(json!({"id": 7})),
        content: vec![toolgate_core::Content::text("sent")],
    };
    assert!(l
        .complete(
            &held("k", 1),
            LedgerState::Succeeded,
            &Recorded::output_json(&out),
            1010
        )
        .unwrap());
    assert!(
        !l.complete(&held("k", 1), LedgerState::Failed, "{}", 1011)
            .unwrap(),
        "ended once"
    );
    assert_eq!(
        l.claim(&claim("k", &a, 3, 1020)).unwrap(),
        Claimed::Done {
            state: LedgerState::Succeeded,
            result: Recorded::Output(out.clone())
        }
    );
    assert_eq!(
        l.lookup(&claim("k", &a, 3, 1020)).unwrap(),
        Some(Claimed::Done {
            state: LedgerState::Succeeded,
            result: Recorded::Output(out.clone())
        })
    );
    let mut other_tool = claim("k", &a, 3, 1020);
    other_tool.tool = "post";
    assert_eq!(
        l.claim(&other_tool).unwrap(),
        Claimed::Conflict {
            tool: "send".into()
        }
    );

    // a failure after acting is replayed as such
    assert_eq!(l.claim(&claim("f", &a, 1, 1000)).unwrap(), Claimed::Held);
    let e = ToolError::failed("the server said 500").with_reason("http_500");
    assert!(l
        .complete(
            &held("f", 1),
            LedgerState::Failed,
            &Recorded::error_json(&e),
            1001
        )
        .unwrap());
    assert_eq!(
        l.claim(&claim("f", &a, 2, 1002)).unwrap(),
        Claimed::Done {
            state: LedgerState::Failed,
            result: Recorded::Error(e)
        }
    );

    // released: the key is free again
    assert_eq!(l.claim(&claim("r", &a, 1, 1000)).unwrap(), Claimed::Held);
    assert!(l.release(&held("r", 1)).unwrap());
    assert_eq!(state_of(l, "r", 1001), None);
    assert_eq!(l.claim(&claim("r", &b, 2, 1001)).unwrap(), Claimed::Held);

    // abandoned, or left past its lease: unsettled, never taken silently
    assert_eq!(l.claim(&claim("u", &a, 1, 1000)).unwrap(), Claimed::Held);
    assert!(l.abandon(&held("u", 1), 1001).unwrap());
    assert_eq!(
        l.claim(&claim("u", &a, 2, 1002)).unwrap(),
        Claimed::Unsettled {
            session: "s1".into(),
            call_id: "c1".into(),
            since_us: 1000
        }
    );
    assert_eq!(
        l.claim(&claim("crash", &a, 1, 1000)).unwrap(),
        Claimed::Held
    );
    assert!(matches!(
        l.claim(&claim("crash", &a, 2, 1100)).unwrap(),
        Claimed::InProgress { .. }
    ));
    assert!(matches!(
        l.claim(&claim("crash", &a, 2, 1101)).unwrap(),
        Claimed::Unsettled { .. }
    ));
    assert_eq!(state_of(l, "crash", 1101), Some(LedgerState::Unknown));
    assert!(matches!(
        l.lookup(&claim("crash", &a, 3, 1101)).unwrap(),
        Some(Claimed::Unsettled { .. })
    ));
    assert_eq!(
        state_of(l, "crash", 1101),
        Some(LedgerState::Unknown),
        "a lookup takes nothing"
    );
    assert_eq!(state_of(l, "crash", 1050), Some(LedgerState::InProgress));
    let unknown: Vec<String> = l
        .list(
            &LedgerFilter {
                state: Some(LedgerState::Unknown),
                key: None,
            },
            1101,
        )
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(unknown, ["crash", "u"], "oldest first, then by key");

    // settled: only unsettled entries; done keeps a result, not done frees the key
    assert!(matches!(
        l.settle(None, "k", Settlement::NotDone, 1200).unwrap(),
        Settled::NotUnsettled(e) if e.state == LedgerState::Succeeded
    ));
    assert_eq!(
        l.settle(None, "missing", Settlement::NotDone, 1200)
            .unwrap(),
        Settled::Missing
    );
    let mut live = claim("live", &a, 1, 1200);
    live.lease_until_us = 5000;
    assert_eq!(l.claim(&live).unwrap(), Claimed::Held);
    assert!(matches!(
        l.settle(None, "live", Settlement::NotDone, 1201).unwrap(),
        Settled::NotUnsettled(e) if e.state == LedgerState::InProgress
    ));
    let settled = Recorded::settled_json("operator", 1200);
    match l
        .settle(
            None,
            "u",
            Settlement::Done {
                result: &settled,
                by: "operator",
            },
            1200,
        )
        .unwrap()
    {
        Settled::Settled(before) => {
            assert_eq!(before.state, LedgerState::Unknown);
            assert_eq!(before.arguments, r#"{"to":"a@b"}"#);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        l.claim(&claim("u", &a, 3, 1201)).unwrap(),
        Claimed::Done {
            state: LedgerState::Succeeded,
            result: Recorded::Settled {
                by: "operator".into(),
                at_us: 1200
            }
        }
    );
    let listed = l
        .list(
            &LedgerFilter {
                state: None,
                key: Some("u".into()),
            },
            1202,
        )
        .unwrap();
    assert_eq!(listed[0].settled_by.as_deref(), Some("operator"));
    assert!(matches!(
        l.settle(None, "crash", Settlement::NotDone, 1203).unwrap(),
        Settled::Settled(_)
    ));
    assert_eq!(
        l.claim(&claim("crash", &a, 4, 1204)).unwrap(),
        Claimed::Held
    );

    // take_over: an unsettled entry, same tool and arguments, once
    assert_eq!(l.claim(&claim("t", &a, 1, 1000)).unwrap(), Claimed::Held);
    assert!(!l.take_over(&claim("t", &a, 2, 1050)).unwrap(), "live");
    assert!(l.abandon(&held("t", 1), 1060).unwrap());
    assert!(
        !l.take_over(&claim("t", &b, 2, 1070)).unwrap(),
        "other arguments"
    );
    assert!(l.take_over(&claim("t", &a, 2, 1070)).unwrap());
    assert!(
        !l.take_over(&claim("t", &a, 3, 1071)).unwrap(),
        "taken already"
    );
    assert!(l
        .complete(
            &held("t", 2),
            LedgerState::Succeeded,
            &Recorded::output_json(&out),
            1080
        )
        .unwrap());

    // keys are kept per principal
    let mut alice = claim("k", &b, 1, 1300);
    alice.principal = Some("alice");
    assert_eq!(l.claim(&alice).unwrap(), Claimed::Held);
    assert!(matches!(
        l.claim(&alice).unwrap(),
        Claimed::InProgress { .. }
    ));
    let alice_held = Held {
        principal: Some("alice"),
        key: "k",
        holder: 1,
    };
    assert!(
        !l.release(&held("k", 1)).unwrap(),
        "the local key is not alice's"
    );
    assert!(l.release(&alice_held).unwrap());

    // expiry: past the retention a key is free for anything; derived keys after the window
    let mut late = claim("k", &b, 5, 90_000);
    late.expire_before_us = 50_000;
    assert_eq!(l.lookup(&late).unwrap(), None, "expired: free");
    assert_eq!(l.claim(&late).unwrap(), Claimed::Held);
    let mut d = claim("tg-1", &a, 1, 2000);
    d.derived = true;
    d.reuse_before_us = Some(0);
    assert_eq!(l.claim(&d).unwrap(), Claimed::Held);
    assert!(l
        .complete(
            &held("tg-1", 1),
            LedgerState::Succeeded,
            &Recorded::output_json(&out),
            2001
        )
        .unwrap());
    d.now_us = 2500;
    d.lease_until_us = 2600;
    d.reuse_before_us = Some(2000);
    assert!(
        matches!(l.claim(&d).unwrap(), Claimed::Done { .. }),
        "within the window"
    );
    d.reuse_before_us = Some(2002);
    d.holder = 2;
    assert_eq!(l.claim(&d).unwrap(), Claimed::Held, "past the window");

    // an unsettled entry never expires: past the retention it still answers unsettled (a new
    // call on its key could do its effect twice), abandoned or left by a dead process
    let mut u = claim("lost", &a, 7, 1000);
    assert_eq!(l.claim(&u).unwrap(), Claimed::Held);
    assert!(l.abandon(&held("lost", 7), 1001).unwrap());
    let mut dead = claim("dead", &a, 9, 1000);
    assert_eq!(l.claim(&dead).unwrap(), Claimed::Held);
    for (c, key) in [(&mut u, "lost"), (&mut dead, "dead")] {
        c.now_us = 90_000;
        c.lease_until_us = 90_100;
        c.expire_before_us = 50_000;
        c.holder = 8;
        assert!(
            matches!(l.claim(c).unwrap(), Claimed::Unsettled { .. }),
            "{key} past the retention"
        );
        assert_eq!(state_of(l, key, 90_000), Some(LedgerState::Unknown));
    }

    // prune forgets the ended entries the retention passed, never a live claim nor an
    // unsettled one
    let before = l.list(&LedgerFilter::default(), 3000).unwrap().len();
    let pruned = l.prune(1_500, 3000).unwrap();
    let after = l.list(&LedgerFilter::default(), 3000).unwrap();
    assert_eq!(before - pruned, after.len());
    assert!(after
        .iter()
        .all(|e| e.updated_us >= 1_500 || e.key == "live" || e.state == LedgerState::Unknown));
    assert!(after.iter().any(|e| e.key == "live"), "live until 5000");
    l.prune(u64::MAX, 90_000).unwrap();
    let left = l.list(&LedgerFilter::default(), 90_000).unwrap();
    assert!(left.iter().all(|e| !e.state.is_ended()), "{left:?}");
    for key in ["live", "lost", "dead"] {
        assert!(left.iter().any(|e| e.key == key), "{key} kept: {left:?}");
    }
}
