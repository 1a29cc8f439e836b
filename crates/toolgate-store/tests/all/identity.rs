//! Identity in the store (issue 16): the principal of an audit record (hashed, stored, queried
//! by), the principal a grant is bound to, and daily quotas that outlive the process.

use super::support::{rec, TempStore};
use pretty_assertions::assert_eq;
use toolgate_core::grant::{GrantFilter, GrantScope, GrantStore, NewGrant};
use toolgate_core::{AuditSink, Principal};
use toolgate_store::{AuditQuery, SqliteAuditSink, Store, Verification};

/// Takes a current store back to version 3: no principal in the audit or the grants, no
/// quota table.
pub const VERSION_3: &str = "
    ALTER TABLE audit DROP COLUMN principal;
    ALTER TABLE audit DROP COLUMN principal_issuer;
    ALTER TABLE grants DROP COLUMN principal;
    ALTER TABLE grants DROP COLUMN principal_issuer;
    DROP TABLE quota;
    PRAGMA user_version = 3;";

fn alice() -> Principal {
    Principal::new("https://as.example", "alice")
}

#[test]
fn the_audit_record_names_its_principal_and_is_found_by_it() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    let mut a = rec(1);
    a.principal = Some(alice());
    let mut b = rec(2);
    b.principal = Some(Principal::new("https://as.example", "bob"));
    let local = rec(3);
    for r in [a.clone(), b, local] {
        sink.record(r);
    }
    sink.flush();
    let found: Vec<_> = t
        .store
        .audit_records(&AuditQuery {
            principal: Some("alice".into()),
            ..AuditQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| s.record)
        .collect();
    assert_eq!(found, vec![a]);
    // the principal is covered by the chain: editing it is found
    assert!(matches!(
        t.store.verify_audit().unwrap(),
        Verification::Intact { .. }
    ));
    t.raw()
        .execute(
            "UPDATE audit SET principal = 'mallory' WHERE principal = 'alice'",
            [],
        )
        .unwrap();
    assert!(matches!(
        t.store.verify_audit().unwrap(),
        Verification::Broken { .. }
    ));
}

#[test]
fn a_grant_keeps_the_principal_it_is_bound_to() {
    let t = TempStore::new();
    let g = t
        .store
        .insert(&NewGrant {
            tool_pattern: "write_file".into(),
            resource_patterns: Vec::new(),
            scope: GrantScope::Always,
            session: None,
            created_us: 1,
            expires_us: None,
            granted_by: Some("mcp-client".into()),
            note: None,
            principal: Some(alice()),
        })
        .unwrap();
    assert_eq!(g.principal, Some(alice()));
    let listed = t.store.list(&GrantFilter::default()).unwrap();
    assert_eq!(listed, vec![g.clone()]);
    // bound to alice: bob's session does not find it, alice's does
    let bob = Principal::new("https://as.example", "bob");
    let found = |p: Option<&Principal>| {
        toolgate_core::grant::find_covering(&t.store, "s", p, "write_file", &[], 2).unwrap()
    };
    assert_eq!(found(Some(&alice())).map(|g| g.id), Some(g.id));
    assert_eq!(found(Some(&bob)), None);
    assert_eq!(found(None), None);
}

#[test]
fn a_daily_quota_counts_per_principal_and_survives_reopening() {
    let t = TempStore::new();
    let bob = Principal::new("https://as.example", "bob");
    assert_eq!(t.store.take_quota(Some(&alice()), 100, 2).unwrap(), Some(1));
    assert_eq!(t.store.take_quota(Some(&alice()), 100, 2).unwrap(), Some(2));
    assert_eq!(t.store.take_quota(Some(&alice()), 100, 2).unwrap(), None);
    // bob, the local caller and alice's next day have their own counts
    assert_eq!(t.store.take_quota(Some(&bob), 100, 2).unwrap(), Some(1));
    assert_eq!(t.store.take_quota(None, 100, 2).unwrap(), Some(1));
    assert_eq!(t.store.take_quota(Some(&alice()), 101, 2).unwrap(), Some(1));
    let path = t.path();
    drop(t.store);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.quota_used(Some(&alice()), 100).unwrap(), 2);
    assert_eq!(reopened.take_quota(Some(&alice()), 100, 2).unwrap(), None);
    // the same subject from another issuer is another principal
    let other = Principal::new("https://other.example", "alice");
    assert_eq!(reopened.take_quota(Some(&other), 100, 2).unwrap(), Some(1));
}

/// A version 3 store (before identity) is migrated on open: its records keep verifying and
/// read as local calls, its grants are bound to no principal, and quotas start counting.
#[test]
fn a_version_3_store_gets_the_principal_and_keeps_its_chain() {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    for i in 0..3 {
        sink.record(rec(i));
    }
    sink.flush_checked().unwrap();
    drop(sink);
    t.store
        .insert(&NewGrant {
            tool_pattern: "write_file".into(),
            resource_patterns: Vec::new(),
            scope: GrantScope::Always,
            session: None,
            created_us: 1,
            expires_us: None,
            granted_by: None,
            note: None,
            principal: None,
        })
        .unwrap();
    t.raw().execute_batch(VERSION_3).unwrap();
    let reopened = Store::open(t.path()).unwrap();
    let v: i64 = t
        .raw()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, toolgate_store::SCHEMA_VERSION);
    assert!(reopened.verify_audit().unwrap().is_intact());
    let records = reopened.audit_records(&AuditQuery::default()).unwrap();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|s| s.record.principal.is_none()));
    let grants = reopened.list(&GrantFilter::default()).unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].principal, None);
    assert_eq!(
        reopened.take_quota(Some(&alice()), 100, 1).unwrap(),
        Some(1)
    );
    // a record made after the migration names its principal and the chain still holds
    let sink = SqliteAuditSink::new(&reopened).unwrap();
    let mut a = rec(3);
    a.principal = Some(alice());
    sink.record(a);
    sink.flush_checked().unwrap();
    assert!(reopened.verify_audit().unwrap().is_intact());
}
