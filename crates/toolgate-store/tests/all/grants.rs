//! Approval grants: stored, listed, expired, revoked, spent once; bad grants refused.

use super::support::TempStore;
use pretty_assertions::assert_eq;
use toolgate_store::{GrantFilter, GrantScope, NewGrant, StoreError};

const T0: u64 = 1_700_000_000_000_000;
const HOUR: u64 = 3_600_000_000;

fn grant(scope: GrantScope, session: Option<&str>, expires: Option<u64>) -> NewGrant {
    NewGrant {
        tool_pattern: "write_file".into(),
        resource_patterns: vec!["src/**".into()],
        scope,
        session: session.map(Into::into),
        created_us: T0,
        expires_us: expires,
        granted_by: Some("terminal".into()),
        note: None,
        principal: None,
    }
}

fn ids(g: &[toolgate_store::Grant]) -> Vec<i64> {
    g.iter().map(|g| g.id).collect()
}

/// A grant of several resource patterns reads back with each, in order; a row written with
/// one pattern (as every grant was before grants had several) reads back as that one, and a
/// NULL as none.
#[test]
fn resource_patterns_round_trip_one_per_line() {
    let t = TempStore::new();
    let patterns = vec![
        "command:python3 -m unittest".to_string(),
        "path:/src/a b.rs".to_string(),
        "host:example.com".to_string(),
    ];
    let g = t
        .store
        .insert_grant(&NewGrant {
            resource_patterns: patterns.clone(),
            ..grant(GrantScope::Always, None, None)
        })
        .unwrap();
    assert_eq!(
        t.store.grant(g.id).unwrap().unwrap().resource_patterns,
        patterns
    );
    let raw = t.raw();
    let stored: String = raw
        .query_row(
            "SELECT resource_pattern FROM grants WHERE id = ?1",
            [g.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, patterns.join("\n"));
    raw.execute(
        "INSERT INTO grants (tool_pattern, resource_pattern, scope, created_us) VALUES \
         ('write_file', 'path:src/**', 'always', 1), ('read_file', NULL, 'always', 1)",
        [],
    )
    .unwrap();
    let all = t.store.list_grants(&GrantFilter::default()).unwrap();
    assert_eq!(all[1].resource_patterns, ["path:src/**"]);
    assert!(all[2].resource_patterns.is_empty());
}

#[test]
fn grants_round_trip_and_list_by_session() {
    let t = TempStore::new();
    let s = &t.store;
    let a = s
        .insert_grant(&grant(GrantScope::Session, Some("s1"), None))
        .unwrap();
    let b = s
        .insert_grant(&grant(GrantScope::Always, None, None))
        .unwrap();
    let c = s
        .insert_grant(&grant(GrantScope::Once, Some("s2"), None))
        .unwrap();
    assert_eq!(a.tool_pattern, "write_file");
    assert_eq!(a.resource_patterns, ["src/**"]);
    assert_eq!(
        (a.scope, a.created_us, a.revoked_us),
        (GrantScope::Session, T0, None)
    );
    assert_eq!(s.grant(a.id).unwrap(), Some(a.clone()));
    assert_eq!(s.grant(9999).unwrap(), None);
    assert_eq!(
        ids(&s.active_grants("s1", T0 + 1).unwrap()),
        vec![a.id, b.id]
    );
    assert_eq!(
        ids(&s.active_grants("s2", T0 + 1).unwrap()),
        vec![b.id, c.id]
    );
    assert_eq!(ids(&s.active_grants("s3", T0 + 1).unwrap()), vec![b.id]);
    assert_eq!(
        ids(&s.list_grants(&GrantFilter::default()).unwrap()),
        vec![a.id, b.id, c.id]
    );
}

#[test]
fn a_grant_expires() {
    let t = TempStore::new();
    let s = &t.store;
    let g = s
        .insert_grant(&grant(GrantScope::Session, Some("s1"), Some(T0 + HOUR)))
        .unwrap();
    assert_eq!(
        ids(&s.active_grants("s1", T0 + HOUR - 1).unwrap()),
        vec![g.id]
    );
    assert!(s.active_grants("s1", T0 + HOUR).unwrap().is_empty());
    assert!(!g.is_active(T0 + HOUR) && g.is_active(T0 + HOUR - 1));
    // listed still, when inactive ones are asked for
    assert_eq!(
        ids(&s.list_grants(&GrantFilter::default()).unwrap()),
        vec![g.id]
    );
    // an expired once grant cannot be spent
    let once = s
        .insert_grant(&grant(GrantScope::Once, Some("s1"), Some(T0 + HOUR)))
        .unwrap();
    assert!(!s.use_once_grant(once.id, T0 + 2 * HOUR).unwrap());
}

#[test]
fn a_revoked_grant_stops_holding() {
    let t = TempStore::new();
    let s = &t.store;
    let g = s
        .insert_grant(&grant(GrantScope::Always, None, None))
        .unwrap();
    assert!(s.revoke_grant(g.id, T0 + 5).unwrap());
    assert!(!s.revoke_grant(g.id, T0 + 6).unwrap(), "revoked twice");
    assert!(!s.revoke_grant(12345, T0).unwrap(), "no such grant");
    assert!(s.active_grants("s1", T0 + 10).unwrap().is_empty());
    assert_eq!(s.grant(g.id).unwrap().unwrap().revoked_us, Some(T0 + 5));
}

#[test]
fn a_once_grant_is_spent_by_exactly_one_of_many_concurrent_callers() {
    let t = TempStore::new();
    let g = t
        .store
        .insert_grant(&grant(GrantScope::Once, Some("s1"), None))
        .unwrap();
    let spent: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let store = toolgate_store::Store::open(t.path()).unwrap();
                scope.spawn(move || store.use_once_grant(g.id, T0 + 1).unwrap())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap() as usize)
            .sum()
    });
    assert_eq!(spent, 1);
    assert!(t.store.active_grants("s1", T0 + 2).unwrap().is_empty());
    // a session grant is not a once grant
    let s = t
        .store
        .insert_grant(&grant(GrantScope::Session, Some("s1"), None))
        .unwrap();
    assert!(!t.store.use_once_grant(s.id, T0 + 3).unwrap());
}

#[test]
fn bad_grants_are_refused_with_the_reason() {
    let t = TempStore::new();
    let cases: Vec<(NewGrant, &str)> = vec![
        (
            NewGrant {
                tool_pattern: "  ".into(),
                ..grant(GrantScope::Always, None, None)
            },
            "tool_pattern is empty",
        ),
        (
            grant(GrantScope::Once, None, None),
            "a once grant needs a session",
        ),
        (
            grant(GrantScope::Session, None, None),
            "a session grant needs a session",
        ),
        (
            grant(GrantScope::Always, Some("s1"), None),
            "leave the session out",
        ),
        (
            grant(GrantScope::Session, Some(""), None),
            "session is empty",
        ),
        (
            grant(GrantScope::Always, None, Some(T0)),
            "expires_us is not after created_us",
        ),
        (
            NewGrant {
                resource_patterns: vec!["path:a".into(), String::new()],
                ..grant(GrantScope::Always, None, None)
            },
            "a resource pattern is empty",
        ),
        (
            NewGrant {
                resource_patterns: vec!["path:a\nb".into()],
                ..grant(GrantScope::Always, None, None)
            },
            "line break",
        ),
        (
            NewGrant {
                resource_patterns: (0..65).map(|i| format!("path:{i}")).collect(),
                ..grant(GrantScope::Always, None, None)
            },
            "more than 64",
        ),
        (
            NewGrant {
                tool_pattern: "x".repeat(5000),
                ..grant(GrantScope::Always, None, None)
            },
            "more than 4096",
        ),
        (
            NewGrant {
                note: Some("a\0b".into()),
                principal: None,
                ..grant(GrantScope::Always, None, None)
            },
            "note contains NUL",
        ),
    ];
    for (g, says) in cases {
        match t.store.insert_grant(&g) {
            Err(StoreError::InvalidGrant(why)) => assert!(why.contains(says), "{why} / {says}"),
            other => panic!("{says}: {other:?}"),
        }
    }
    assert!(t
        .store
        .list_grants(&GrantFilter::default())
        .unwrap()
        .is_empty());
}

#[test]
fn a_damaged_grant_row_is_an_error_not_a_panic() {
    let t = TempStore::new();
    let g = t
        .store
        .insert_grant(&grant(GrantScope::Always, None, None))
        .unwrap();
    t.raw()
        .execute("UPDATE grants SET expires_us = -1 WHERE id = ?1", [g.id])
        .unwrap();
    let e = t.store.grant(g.id).unwrap_err();
    assert!(e.to_string().contains("table grants"), "{e}");
}

/// The store as a pipeline's grant store: a session answer is stored, the next call of the
/// session is approved by it without asking, and the SQLite audit log names the grant and
/// the scope of each approval, in records the hash chain covers.
#[test]
fn the_store_answers_for_a_pipeline_and_the_audit_names_the_grant() {
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;
    use toolgate_core::{Approval, ApprovalAnswer, GrantRequest, Pipeline, Registry, ToolCall};
    use toolgate_store::{AuditQuery, SqliteAuditSink};
    use toolgate_test_support::ScriptedApprover;

    let t = TempStore::new();
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(toolgate_test_support::tools::destructive(runs))
        .build()
        .unwrap();
    let approver = Arc::new(ScriptedApprover::new([ApprovalAnswer::ApprovedFor {
        grant: GrantRequest::new(GrantScope::Session),
    }]));
    let sink = Arc::new(SqliteAuditSink::new(&t.store).unwrap());
    let p = Pipeline::builder(reg)
        .approver(approver.clone())
        .grants(Arc::new(t.store.clone()))
        .audit(sink.clone())
        .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s1 = p.session("s1").build().unwrap();
    let s2 = p.session("s2").build().unwrap();
    rt.block_on(async {
        for id in ["a", "b"] {
            let r = p
                .dispatch(ToolCall::new(id, "delete_all", serde_json::json!({})), &s1)
                .await;
            assert!(!r.is_error, "{r:?}");
        }
        let other = p
            .dispatch(ToolCall::new("c", "delete_all", serde_json::json!({})), &s2)
            .await;
        assert!(
            other.is_error,
            "another session is asked, and the script rejects"
        );
    });
    assert_eq!(approver.asked().len(), 2);
    sink.flush_checked().unwrap();
    let g = &t.store.list_grants(&GrantFilter::default()).unwrap()[0];
    assert_eq!(
        (g.scope, g.session.as_deref(), g.tool_pattern.as_str()),
        (GrantScope::Session, Some("s1"), "delete_all")
    );
    let recs: Vec<_> = t
        .store
        .audit_records(&AuditQuery::default())
        .unwrap()
        .into_iter()
        .map(|r| (r.record.approval, r.record.grant, r.record.scope))
        .collect();
    assert_eq!(
        recs,
        [
            (
                Some(Approval::Approved),
                Some(g.id),
                Some(GrantScope::Session)
            ),
            (
                Some(Approval::Granted),
                Some(g.id),
                Some(GrantScope::Session)
            ),
            (Some(Approval::Rejected), None, None),
        ]
    );
    assert!(t.store.verify_audit().unwrap().is_intact());
    // an edited grant id breaks the chain
    t.raw()
        .execute(
            "UPDATE audit SET grant_id = 999 WHERE grant_id IS NOT NULL",
            [],
        )
        .unwrap();
    assert!(!t.store.verify_audit().unwrap().is_intact());
}

/// A store made by the first schema (no grant columns in `audit`) is migrated on open; its
/// old records keep verifying.
#[test]
fn a_version_1_store_gets_the_grant_columns() {
    let t = TempStore::new();
    t.store
        .insert_grant(&grant(GrantScope::Always, None, None))
        .unwrap();
    let raw = t.raw();
    raw.execute_batch(super::identity::VERSION_3).unwrap();
    raw.execute_batch(super::ledger::VERSION_2_LEDGER).unwrap();
    raw.execute_batch(
        "ALTER TABLE audit DROP COLUMN grant_id; ALTER TABLE audit DROP COLUMN scope; \
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(raw);
    let reopened = toolgate_store::Store::open(t.path()).unwrap();
    let v: i64 = t
        .raw()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, toolgate_store::SCHEMA_VERSION);
    assert_eq!(
        reopened.list_grants(&GrantFilter::default()).unwrap().len(),
        1
    );
    assert!(reopened.verify_audit().unwrap().is_intact());
}
