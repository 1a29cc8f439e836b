//! The gateway's pins: first definitions pinned or quarantined, changes blocked until
//! approved, a reverted definition served again, approvals by tool and by upstream, health.

use super::support::TempStore;
use pretty_assertions::assert_eq;
use toolgate_store::{Observed, PinState, UpstreamHealth};

fn seen<'a>(tool: &'a str, hash: &'a str, quarantine: Option<&'a str>) -> Observed<'a> {
    Observed {
        upstream: "fs",
        tool,
        hash,
        definition: hash,
        quarantine,
    }
}

#[test]
fn the_first_clean_definition_is_pinned_and_a_change_blocks_until_approved() {
    let t = TempStore::new();
    let s = &t.store;
    let p = s.observe_definition(&seen("read", "h1", None), 10).unwrap();
    assert_eq!(
        (p.state, p.pinned_hash.as_deref(), p.is_served()),
        (PinState::Pinned, Some("h1"), true)
    );
    // the same definition again changes nothing
    let p = s.observe_definition(&seen("read", "h1", None), 20).unwrap();
    assert!(p.is_served());
    assert_eq!(p.first_seen_us, 10);

    let p = s.observe_definition(&seen("read", "h2", None), 30).unwrap();
    assert_eq!(p.state, PinState::Changed);
    assert!(!p.is_served());
    assert_eq!(p.pinned_hash.as_deref(), Some("h1"));
    assert_eq!(p.seen_hash, "h2");
    assert!(p.reason.unwrap().contains("changed since it was pinned"));

    // the upstream goes back to what was accepted: served again, no approval needed
    let p = s.observe_definition(&seen("read", "h1", None), 40).unwrap();
    assert!(p.is_served());

    s.observe_definition(&seen("read", "h3", Some("mentions ~/.ssh")), 50)
        .unwrap();
    let p = &s.pins(Some("fs")).unwrap()[0];
    assert_eq!(p.state, PinState::Changed);
    assert!(
        p.reason.as_deref().unwrap().ends_with("; mentions ~/.ssh"),
        "{p:?}"
    );

    let approved = s.approve_pins("fs", Some("read"), 60).unwrap();
    assert_eq!(approved.len(), 1);
    assert_eq!(
        (approved[0].pinned_hash.as_deref(), approved[0].approved_us),
        (Some("h3"), Some(60))
    );
    assert!(approved[0].is_served());
    // nothing left to approve
    assert!(s.approve_pins("fs", Some("read"), 70).unwrap().is_empty());
}

#[test]
fn a_poisoned_first_definition_is_quarantined_until_approved() {
    let t = TempStore::new();
    let s = &t.store;
    let p = s
        .observe_definition(&seen("add", "p1", Some("a hidden <IMPORTANT> block")), 1)
        .unwrap();
    assert_eq!(p.state, PinState::Quarantined);
    assert_eq!((p.pinned_hash.clone(), p.is_served()), (None, false));
    // a new definition while quarantined stays quarantined: nothing was ever accepted
    let p = s.observe_definition(&seen("add", "p2", None), 2).unwrap();
    assert_eq!(p.state, PinState::Quarantined);
    assert!(p.reason.unwrap().contains("while it was quarantined"));
    s.observe_definition(&seen("other", "o1", Some("bidi")), 3)
        .unwrap();
    // approving the upstream approves every blocked tool of it, what was seen last
    let approved = s.approve_pins("fs", None, 4).unwrap();
    let got: Vec<(&str, Option<&str>)> = approved
        .iter()
        .map(|p| (p.tool.as_str(), p.pinned_hash.as_deref()))
        .collect();
    assert_eq!(got, [("add", Some("p2")), ("other", Some("o1"))]);
    assert!(s.pins(None).unwrap().iter().all(|p| p.is_served()));
    assert!(s.pins(Some("nope")).unwrap().is_empty());
}

#[test]
fn pins_and_health_survive_reopening() {
    let t = TempStore::new();
    t.store
        .observe_definition(&seen("read", "h1", None), 1)
        .unwrap();
    let h = UpstreamHealth {
        upstream: "fs".into(),
        state: "open".into(),
        detail: Some("3 calls in a row failed".into()),
        restarts: 2,
        failures: 3,
        dropped: 40_000,
        updated_us: 5,
    };
    t.store.record_upstream_health(&h).unwrap();
    let again = toolgate_store::Store::open(t.path()).unwrap();
    assert_eq!(again.pins(None).unwrap().len(), 1);
    assert_eq!(again.upstream_health().unwrap(), [h]);
}

#[test]
fn a_version_5_store_keeps_its_health_with_nothing_dropped() {
    let t = TempStore::new();
    t.raw()
        .execute_batch(
            "ALTER TABLE upstream_health DROP COLUMN dropped;
             INSERT INTO upstream_health VALUES ('fs', 'ready', NULL, 1, 2, 3);
             PRAGMA user_version = 5;",
        )
        .unwrap();
    let again = toolgate_store::Store::open(t.path()).unwrap();
    let h = again.upstream_health().unwrap();
    assert_eq!(
        (
            h[0].upstream.as_str(),
            h[0].restarts,
            h[0].failures,
            h[0].dropped
        ),
        ("fs", 1, 2, 0)
    );
    let v: i64 = t
        .raw()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, toolgate_store::SCHEMA_VERSION);
}

#[test]
fn a_damaged_pin_row_is_a_corrupt_error() {
    let t = TempStore::new();
    t.store
        .observe_definition(&seen("read", "h1", None), 1)
        .unwrap();
    t.raw()
        .execute("UPDATE upstream_pins SET first_seen_us = -1", [])
        .unwrap();
    let e = t.store.pins(None).unwrap_err();
    assert!(e.to_string().contains("upstream_pins"), "{e}");
}

#[test]
fn the_approvals_mark_moves_with_each_approval_and_only_then() {
    let t = TempStore::new();
    let s = &t.store;
    assert_eq!(s.approvals_mark().unwrap(), (0, 0));
    s.observe_definition(&seen("read", "h1", None), 10).unwrap();
    s.observe_definition(&seen("write", "w1", Some("hidden block")), 10)
        .unwrap();
    // seeing definitions is not approving them
    assert_eq!(s.approvals_mark().unwrap(), (0, 0));
    s.approve_pins("fs", Some("write"), 20).unwrap();
    assert_eq!(s.approvals_mark().unwrap(), (20, 1));
    s.observe_definition(&seen("read", "h2", None), 30).unwrap();
    assert_eq!(s.approvals_mark().unwrap(), (20, 1));
    // another process approving through its own handle: the mark this one reads moves
    let other = toolgate_store::Store::open(t.path()).unwrap();
    other.approve_pins("fs", None, 40).unwrap();
    assert_eq!(s.approvals_mark().unwrap(), (40, 2));
}
