//! Stage 5 with grants: scoped answers leave grants, grants answer later asks without asking,
//! once grants are spent once, expired and revoked grants stop applying, a deny is never
//! overridden, and rejections keep their meaning next to grants.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;
use toolgate_core::audit::now_us;
use toolgate_test_support::policy::DenyTool;
use toolgate_test_support::tools::destructive;
use toolgate_test_support::ScriptedApprover;

fn other_destructive() -> DynamicTool {
    let spec = ToolSpec::builder("wipe_disk")
        .description("Pretends to wipe a disk.")
        .effects(Effects::side_effecting())
        .risk(Risk::Write)
        .build()
        .unwrap();
    DynamicTool::new(spec, |_, _| async { Ok(ToolOutput::text("wiped")) })
}

struct Setup {
    p: Pipeline,
    audit: Arc<MemoryAuditSink>,
    grants: Arc<MemoryGrantStore>,
    approver: Arc<ScriptedApprover>,
    runs: Arc<AtomicU32>,
}

fn setup(answers: Vec<ApprovalAnswer>, policy: Arc<dyn Policy>) -> Setup {
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(runs.clone()))
        .tool(other_destructive())
        .build()
        .unwrap();
    let approver = Arc::new(ScriptedApprover::new(answers));
    let audit = Arc::new(MemoryAuditSink::default());
    let grants = Arc::new(MemoryGrantStore::new());
    let p = Pipeline::builder(reg)
        .policy(policy)
        .approver(approver.clone())
        .audit(audit.clone())
        .grants(grants.clone())
        // these calls repeat `delete_all {}` on purpose, each to be approved and run: no
        // derived idempotency keys, which would answer the repeats from the ledger
        .ledger_options(LedgerOptions {
            derived_key_window: std::time::Duration::ZERO,
            ..LedgerOptions::default()
        })
        .build();
    Setup {
        p,
        audit,
        grants,
        approver,
        runs,
    }
}

fn scoped(scope: GrantScope) -> ApprovalAnswer {
    ApprovalAnswer::ApprovedFor {
        grant: GrantRequest::new(scope),
    }
}

fn now() -> u64 {
    now_us(SystemTime::now())
}

/// (approval, grant, scope) of each call's audit record (intents left out).
fn provenance(audit: &MemoryAuditSink) -> Vec<(Option<Approval>, Option<i64>, Option<GrantScope>)> {
    audit
        .calls()
        .iter()
        .map(|r| (r.approval, r.grant, r.scope))
        .collect()
}

async fn call(p: &Pipeline, s: &Session, id: &str, tool: &str) -> ToolResult {
    p.dispatch(ToolCall::new(id, tool, json!({})), s).await
}

#[tokio::test]
async fn a_session_answer_covers_the_session_and_no_other() {
    let t = setup(
        vec![scoped(GrantScope::Session), ApprovalAnswer::Approved],
        Arc::new(DefaultPolicy),
    );
    let s1 = t.p.session("s1").build().unwrap();
    assert!(!call(&t.p, &s1, "a", "delete_all").await.is_error);
    assert!(!call(&t.p, &s1, "b", "delete_all").await.is_error);
    assert!(!call(&t.p, &s1, "c", "delete_all").await.is_error);
    assert_eq!(t.approver.asked().len(), 1, "asked once for the session");
    // another session is asked again
    let s2 = t.p.session("s2").build().unwrap();
    assert!(!call(&t.p, &s2, "a", "delete_all").await.is_error);
    assert_eq!(t.approver.asked().len(), 2);
    // the grant covers the tool it named, not every tool that asks
    let other = call(&t.p, &s1, "d", "wipe_disk").await;
    assert_eq!(err(&other).kind, ErrorKind::ApprovalRejected);
    assert_eq!(t.runs.load(Ordering::SeqCst), 4);
    let g = &t.grants.list(&GrantFilter::default()).unwrap()[0];
    assert_eq!(
        (g.id, g.scope, g.session.as_deref(), g.tool_pattern.as_str()),
        (1, GrantScope::Session, Some("s1"), "delete_all")
    );
    assert_eq!(g.granted_by.as_deref(), Some("approver"));
    assert_eq!(
        provenance(&t.audit),
        [
            (Some(Approval::Approved), Some(1), Some(GrantScope::Session)),
            (Some(Approval::Granted), Some(1), Some(GrantScope::Session)),
            (Some(Approval::Granted), Some(1), Some(GrantScope::Session)),
            (Some(Approval::Approved), None, Some(GrantScope::Once)),
            (Some(Approval::Rejected), None, None),
        ]
    );
    for r in t.audit.records() {
        assert_eq!(r.decision, Some(Decision::Ask));
        assert_eq!(r.rule.as_deref(), Some("default.destructive_asks"));
    }
}

#[tokio::test]
async fn an_always_answer_covers_every_session_until_revoked() {
    let t = setup(vec![scoped(GrantScope::Always)], Arc::new(DefaultPolicy));
    let s1 = t.p.session("s1").build().unwrap();
    let s2 = t.p.session("s2").build().unwrap();
    assert!(!call(&t.p, &s1, "a", "delete_all").await.is_error);
    assert!(!call(&t.p, &s2, "a", "delete_all").await.is_error);
    assert_eq!(t.approver.asked().len(), 1);
    let g = t.grants.list(&GrantFilter::default()).unwrap()[0].clone();
    assert_eq!((g.scope, g.session), (GrantScope::Always, None));
    assert!(t.grants.revoke(g.id, now()).unwrap());
    // revoked: asked again, and the script's end rejects
    let r = call(&t.p, &s2, "b", "delete_all").await;
    assert_eq!(err(&r).kind, ErrorKind::ApprovalRejected);
    assert_eq!(t.approver.asked().len(), 2);
}

#[tokio::test]
async fn an_expired_grant_stops_applying() {
    let t = setup(vec![], Arc::new(DefaultPolicy));
    let now = now();
    let grant = |created_us: u64, expires_us: u64| NewGrant {
        tool_pattern: "delete_all".into(),
        resource_patterns: Vec::new(),
        scope: GrantScope::Always,
        session: None,
        created_us,
        expires_us: Some(expires_us),
        granted_by: Some("operator".into()),
        note: None,
        principal: None,
    };
    // expired a second ago
    t.grants
        .insert(&grant(now - 60_000_000, now - 1_000_000))
        .unwrap();
    let s = t.p.session("s").build().unwrap();
    let r = call(&t.p, &s, "a", "delete_all").await;
    assert_eq!(err(&r).kind, ErrorKind::ApprovalRejected);
    // one that holds for another minute applies
    let live = t.grants.insert(&grant(now, now + 60_000_000)).unwrap();
    assert!(!call(&t.p, &s, "b", "delete_all").await.is_error);
    assert_eq!(
        provenance(&t.audit)[1],
        (
            Some(Approval::Granted),
            Some(live.id),
            Some(GrantScope::Always)
        )
    );
    // an answer with an expiry stores it
    let req = GrantRequest {
        expires_in_secs: Some(90),
        ..GrantRequest::new(GrantScope::Session)
    };
    let g = req
        .to_new_grant("delete_all", "s", None, now, None)
        .unwrap();
    assert_eq!(g.expires_us, Some(now + 90_000_000));
}

/// The pipeline's cap on grant expiry holds whatever the approver answers (here a scripted
/// one, standing for any custom approver): an `always` grant without expiry, a `session`
/// grant without expiry and one asking for ten years are all stored expiring within the cap;
/// a shorter expiry is kept; a `once` answer stores nothing.
#[tokio::test]
async fn the_pipeline_caps_the_expiry_of_every_grant_an_approver_asks_for() {
    let for_secs = |scope: GrantScope, secs: Option<u64>| ApprovalAnswer::ApprovedFor {
        grant: GrantRequest {
            expires_in_secs: secs,
            ..GrantRequest::new(scope)
        },
    };
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let grants = Arc::new(MemoryGrantStore::new());
    let approver = Arc::new(ScriptedApprover::new(vec![
        for_secs(GrantScope::Always, None),
        for_secs(GrantScope::Session, None),
        for_secs(GrantScope::Always, Some(10 * 365 * 24 * 3600)),
        for_secs(GrantScope::Always, Some(60)),
        for_secs(GrantScope::Once, Some(10 * 365 * 24 * 3600)),
    ]));
    let p = Pipeline::builder(reg)
        .approver(approver.clone())
        .grants(grants.clone())
        .grant_max_expiry(Some(std::time::Duration::from_secs(3600)))
        .build();
    assert_eq!(
        p.grant_max_expiry(),
        Some(std::time::Duration::from_secs(3600))
    );
    for i in 0..5 {
        // a new session each time, and each grant revoked once stored, so every call asks
        let s = p.session(format!("s{i}")).build().unwrap();
        let r = call(&p, &s, "a", "delete_all").await;
        assert!(!r.is_error, "{}", r.text());
        for g in grants.list(&GrantFilter::default()).unwrap() {
            grants.revoke(g.id, now()).unwrap();
        }
    }
    assert_eq!(approver.asked().len(), 5);
    let stored = grants.list(&GrantFilter::default()).unwrap();
    let spans: Vec<(GrantScope, Option<u64>)> = stored
        .iter()
        .map(|g| {
            (
                g.scope,
                g.expires_us.map(|e| (e - g.created_us) / 1_000_000),
            )
        })
        .collect();
    assert_eq!(
        spans,
        vec![
            (GrantScope::Always, Some(3600)),
            (GrantScope::Session, Some(3600)),
            (GrantScope::Always, Some(3600)),
            (GrantScope::Always, Some(60)),
        ]
    );
}

#[tokio::test]
async fn a_once_grant_is_spent_by_exactly_one_of_concurrent_calls() {
    let t = setup(vec![], Arc::new(DefaultPolicy));
    let s = t.p.session("s").build().unwrap();
    let g = t
        .grants
        .insert(&NewGrant {
            tool_pattern: "delete_all".into(),
            resource_patterns: Vec::new(),
            scope: GrantScope::Once,
            session: Some("s".into()),
            created_us: now(),
            expires_us: None,
            granted_by: Some("operator".into()),
            note: None,
            principal: None,
        })
        .unwrap();
    let results = futures::future::join_all((0..8).map(|i| {
        call(
            &t.p,
            &s,
            Box::leak(format!("c{i}").into_boxed_str()),
            "delete_all",
        )
    }))
    .await;
    let ok = results.iter().filter(|r| !r.is_error).count();
    assert_eq!(ok, 1, "{results:?}");
    assert_eq!(t.runs.load(Ordering::SeqCst), 1);
    assert_eq!(t.approver.asked().len(), 7);
    let spent = t.grants.list(&GrantFilter::default()).unwrap()[0].clone();
    assert!(spent.used_us.is_some());
    let granted: Vec<_> = provenance(&t.audit)
        .into_iter()
        .filter(|p| p.0 == Some(Approval::Granted))
        .collect();
    assert_eq!(
        granted,
        [(Some(Approval::Granted), Some(g.id), Some(GrantScope::Once))]
    );
}

const DENY_WIPE: DenyTool = DenyTool {
    tool: "wipe_disk",
    rule: "test.no_wiping",
    reason: "wiping is forbidden",
};

#[tokio::test]
async fn a_grant_never_overrides_a_deny() {
    let t = setup(vec![], Arc::new(DENY_WIPE));
    for tool in ["wipe_disk", "*"] {
        let _ = t.grants.insert(&NewGrant {
            tool_pattern: tool.into(),
            resource_patterns: Vec::new(),
            scope: GrantScope::Always,
            session: None,
            created_us: now(),
            expires_us: None,
            granted_by: None,
            note: None,
            principal: None,
        });
    }
    let s = t.p.session("s").build().unwrap();
    let r = call(&t.p, &s, "a", "wipe_disk").await;
    assert_eq!(err(&r).kind, ErrorKind::PermissionDenied);
    assert!(t.approver.asked().is_empty());
    let rec = &t.audit.records()[0];
    assert_eq!(
        (rec.decision, rec.approval, rec.grant),
        (Some(Decision::Deny), None, None)
    );
}

#[tokio::test]
async fn rejections_keep_their_meaning_beside_grants() {
    let t = setup(
        vec![
            scoped(GrantScope::Session),
            ApprovalAnswer::Corrected {
                feedback: "wipe only the scratch disk".into(),
            },
            ApprovalAnswer::Rejected {
                reason: "no".into(),
            },
        ],
        Arc::new(DefaultPolicy),
    );
    let s = t.p.session("s").build().unwrap();
    assert!(!call(&t.p, &s, "a", "delete_all").await.is_error);
    // a session grant for delete_all does not answer for wipe_disk: the approver corrects
    let corrected = call(&t.p, &s, "b", "wipe_disk").await;
    assert_eq!(err(&corrected).kind, ErrorKind::ApprovalCorrected);
    assert!(corrected.is_recoverable());
    assert!(corrected.text().contains("wipe only the scratch disk"));
    // delete_all is still granted
    assert!(!call(&t.p, &s, "c", "delete_all").await.is_error);
    // and a rejection halts
    let rejected = call(&t.p, &s, "d", "wipe_disk").await;
    assert_eq!(err(&rejected).kind, ErrorKind::ApprovalRejected);
    assert!(!rejected.is_recoverable());
    assert_eq!(
        provenance(&t.audit),
        [
            (Some(Approval::Approved), Some(1), Some(GrantScope::Session)),
            (Some(Approval::Corrected), None, None),
            (Some(Approval::Granted), Some(1), Some(GrantScope::Session)),
            (Some(Approval::Rejected), None, None),
        ]
    );
}

#[tokio::test]
async fn without_a_grant_store_a_scoped_answer_approves_one_call() {
    let approver = Arc::new(ScriptedApprover::new([
        scoped(GrantScope::Session),
        scoped(GrantScope::Always),
    ]));
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let (p, audit) = pipeline_with(reg, approver.clone());
    let s = p.session("s").build().unwrap();
    assert!(!call(&p, &s, "a", "delete_all").await.is_error);
    assert!(!call(&p, &s, "b", "delete_all").await.is_error);
    assert_eq!(approver.asked().len(), 2);
    assert_eq!(
        provenance(&audit),
        [
            (Some(Approval::Approved), None, Some(GrantScope::Once)),
            (Some(Approval::Approved), None, Some(GrantScope::Once)),
        ]
    );
}

#[test]
fn answers_round_trip_as_json() {
    let a = ApprovalAnswer::ApprovedFor {
        grant: GrantRequest {
            scope: GrantScope::Always,
            tool: Some("write_file".into()),
            resources: Vec::new(),
            expires_in_secs: Some(3600),
        },
    };
    let v = serde_json::to_value(&a).unwrap();
    assert_eq!(
        v,
        json!({"answer": "approved_for", "grant": {"scope": "always", "tool": "write_file", "expires_in_secs": 3600}})
    );
    assert_eq!(serde_json::from_value::<ApprovalAnswer>(v).unwrap(), a);
    assert!(serde_json::from_value::<ApprovalAnswer>(
        json!({"answer": "approved_for", "grant": {"scope": "forever"}})
    )
    .is_err());
}

/// Asks every call it sees, and cannot name what the call does.
struct AsksEachTime;

impl Policy for AsksEachTime {
    fn decide(&self, _input: &PolicyInput<'_>) -> Verdict {
        Verdict::ask_each_time(
            "test.uncertain",
            "what it runs cannot be read with certainty",
        )
    }
}

/// An ask that cannot be granted (a shell line read without certainty) is never answered by
/// a grant over resources, even one covering every resource the call declares; a scoped
/// answer to it approves the call only and stores nothing; only a grant of the whole tool, an
/// explicit choice of everything, answers it.
#[tokio::test]
async fn an_ask_that_cannot_be_granted_is_answered_only_by_a_whole_tool_grant() {
    let dir = tempfile::tempdir().unwrap();
    let reads = Echo {
        reads_path: true,
        ..Echo::named("reads", "Reads its text as a path.")
    };
    let approver = Arc::new(ScriptedApprover::new(vec![
        scoped(GrantScope::Session),
        ApprovalAnswer::Approved,
    ]));
    let audit = Arc::new(MemoryAuditSink::default());
    let grants = Arc::new(MemoryGrantStore::new());
    let p = Pipeline::builder(Registry::builder().tool(reads).build().unwrap())
        .policy(Arc::new(AsksEachTime))
        .approver(approver.clone())
        .audit(audit.clone())
        .grants(grants.clone())
        .build();
    let s = p
        .session("s1")
        .workspace(Workspace::open(dir.path()).unwrap())
        .build()
        .unwrap();
    let grant = |resource_patterns: Vec<String>| NewGrant {
        tool_pattern: "reads".into(),
        resource_patterns,
        scope: GrantScope::Always,
        session: None,
        created_us: now(),
        expires_us: None,
        granted_by: Some("operator".into()),
        note: None,
        principal: None,
    };
    grants
        .insert(&grant(vec!["path:a.txt".into(), "path:**".into()]))
        .unwrap();
    let call = |id: &str| ToolCall::new(id, "reads", json!({"text": "a.txt"}));
    // the grant covers a.txt, and still the approver is asked; its session answer stores
    // nothing
    assert!(!p.dispatch(call("c1"), &s).await.is_error);
    assert!(!p.dispatch(call("c2"), &s).await.is_error);
    assert_eq!(approver.asked().len(), 2);
    assert_eq!(grants.list(&GrantFilter::default()).unwrap().len(), 1);
    // a grant of the whole tool answers it
    let whole = grants.insert(&grant(Vec::new())).unwrap();
    assert!(!p.dispatch(call("c3"), &s).await.is_error);
    assert_eq!(approver.asked().len(), 2);
    assert_eq!(
        provenance(&audit),
        [
            (Some(Approval::Approved), None, Some(GrantScope::Once)),
            (Some(Approval::Approved), None, Some(GrantScope::Once)),
            (
                Some(Approval::Granted),
                Some(whole.id),
                Some(GrantScope::Always)
            ),
        ]
    );
}

/// A grant an approval leaves for a principal's session is that principal's: another
/// principal (or a session without one) is asked again, whatever the grant's scope; the grant
/// records whom it is bound to; the audit record names the principal of each call.
#[tokio::test]
async fn a_grant_is_bound_to_the_principal_that_asked() {
    let s = setup(
        vec![
            scoped(GrantScope::Always),
            ApprovalAnswer::Rejected {
                reason: "no".into(),
            },
            ApprovalAnswer::Rejected {
                reason: "no".into(),
            },
        ],
        Arc::new(DefaultPolicy),
    );
    let alice = toolgate_core::Principal::new("https://as.example", "alice");
    let bob = toolgate_core::Principal::new("https://as.example", "bob");
    let a = s.p.session("a").principal(alice.clone()).build().unwrap();
    let a2 = s.p.session("a2").principal(alice.clone()).build().unwrap();
    let b = s.p.session("b").principal(bob.clone()).build().unwrap();
    let local = s.p.session("local").build().unwrap();
    assert!(!call(&s.p, &a, "1", "delete_all").await.is_error);
    // alice again, in another session: her always grant answers
    assert!(!call(&s.p, &a2, "2", "delete_all").await.is_error);
    // bob and the local caller are asked (and rejected)
    assert!(call(&s.p, &b, "3", "delete_all").await.is_error);
    assert!(call(&s.p, &local, "4", "delete_all").await.is_error);
    assert_eq!(s.approver.asked().len(), 3);
    assert_eq!(s.runs.load(Ordering::SeqCst), 2);
    let grants = s.grants.list(&GrantFilter::default()).unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].principal, Some(alice.clone()));
    // the calls' records (not the intents written before a side effect)
    let principals: Vec<_> = s
        .audit
        .records()
        .into_iter()
        .filter(|r| r.outcome != Outcome::Started)
        .map(|r| r.principal)
        .collect();
    assert_eq!(
        principals,
        [Some(alice.clone()), Some(alice), Some(bob), None]
    );
}
