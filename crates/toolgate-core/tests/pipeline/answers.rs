//! What the model reads when an approval is not given, and what outlives a call: a rejection
//! says nothing changed and to ask the user (the rule stays in the details and the audit
//! record), nobody to ask says how the operator allows such calls, a session's own grants end
//! when it ends, and a session of independent requests takes repeated call ids.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::AtomicU32;
use std::time::SystemTime;
use toolgate_core::audit::now_us;
use toolgate_test_support::tools::destructive;
use toolgate_test_support::ScriptedApprover;

fn setup(answers: Vec<ApprovalAnswer>) -> (Pipeline, Arc<MemoryGrantStore>, Arc<MemoryAuditSink>) {
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(Arc::new(AtomicU32::new(0))))
        .build()
        .unwrap();
    let grants = Arc::new(MemoryGrantStore::new());
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(reg)
        .approver(Arc::new(ScriptedApprover::new(answers)))
        .grants(grants.clone())
        .audit(audit.clone())
        .build();
    (p, grants, audit)
}

async fn delete_all(p: &Pipeline, s: &Session, id: &str) -> ToolResult {
    p.dispatch(ToolCall::new(id, "delete_all", json!({})), s)
        .await
}

#[tokio::test]
async fn a_rejection_says_nothing_changed_and_keeps_the_rule_out_of_the_text() {
    let (p, _, audit) = setup(vec![
        ApprovalAnswer::Rejected {
            reason: "the user declined the call".into(),
        },
        ApprovalAnswer::NobodyToAsk {
            reason: "this MCP client cannot show approval questions".into(),
        },
    ]);
    let s = p.session("s").build().unwrap();
    let no = delete_all(&p, &s, "1").await;
    let e = err(&no);
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::ApprovalRejected, Some("not_approved"))
    );
    assert!(e.message.contains("nothing was changed"), "{}", e.message);
    assert!(
        e.message.contains("ask the user how to go on"),
        "{}",
        e.message
    );
    assert!(
        !e.message.contains("default.destructive_asks"),
        "{}",
        e.message
    );
    assert_eq!(
        e.details.as_deref(),
        Some(&json!({
            "rule": "default.destructive_asks",
            "asked": "the tool is destructive",
            "reason": "the user declined the call"
        }))
    );
    let nobody = delete_all(&p, &s, "2").await;
    let e = err(&nobody);
    assert_eq!(e.reason.as_deref(), Some("nobody_to_ask"));
    for says in [
        "nobody could be asked (this MCP client cannot show approval questions)",
        "needs the user's approval here (the tool is destructive)",
        "nothing was changed",
        "tool = \"delete_all\"",
        "toolgate approvals grant --tool delete_all",
    ] {
        assert!(e.message.contains(says), "{says}: {}", e.message);
    }
    assert!(!e.is_recoverable());
    // the audit record keeps the rule that asked
    for r in audit.records() {
        assert_eq!(r.rule.as_deref(), Some("default.destructive_asks"));
        assert_eq!(r.approval, Some(Approval::Rejected));
    }
    // the library's own default approver (nobody) answers the same way
    let reg = Registry::builder()
        .tool(destructive(Arc::new(AtomicU32::new(0))))
        .build()
        .unwrap();
    let p = Pipeline::builder(reg).build();
    let s = p.session("s").build().unwrap();
    assert_eq!(
        err(&delete_all(&p, &s, "1").await).reason.as_deref(),
        Some("nobody_to_ask")
    );
}

#[tokio::test]
async fn a_sessions_own_grants_end_with_it() {
    let scoped = |scope| ApprovalAnswer::ApprovedFor {
        grant: GrantRequest::new(scope),
    };
    let (p, grants, _) = setup(vec![
        scoped(GrantScope::Session),
        scoped(GrantScope::Session),
        scoped(GrantScope::Always),
    ]);
    let ending = p.session("ending").build().unwrap();
    let other = p.session("other").build().unwrap();
    let plain = p.session("plain").build().unwrap();
    assert!(!delete_all(&p, &ending, "1").await.is_error);
    assert!(!delete_all(&p, &other, "1").await.is_error);
    assert!(!delete_all(&p, &other, "2").await.is_error);
    assert_eq!(
        p.end_session(&plain),
        0,
        "no grant: nothing to end, no store call"
    );
    let now = now_us(SystemTime::now());
    let active = |s: &str| {
        grants
            .list(&GrantFilter {
                active_at: Some(now_us(SystemTime::now())),
                session: Some(s.into()),
            })
            .unwrap()
            .len()
    };
    assert_eq!((active("ending"), active("other")), (1, 1));
    assert_eq!(p.end_session(&ending), 1);
    assert_eq!(active("ending"), 0, "ended");
    assert_eq!(active("other"), 1, "another session's grant holds");
    let ended = &grants.list(&GrantFilter::default()).unwrap()[0];
    assert!(ended.expires_us.is_some_and(|e| e >= now), "{ended:?}");
    assert!(!ended.is_active(now_us(SystemTime::now())));
    // ending again finds nothing left
    assert_eq!(p.end_session(&ending), 0);
    // an always grant outlives every session
    let third = p.session("third").build().unwrap();
    assert!(!delete_all(&p, &third, "1").await.is_error);
    assert_eq!(p.end_session(&third), 0);
    assert_eq!(active("anyone"), 1, "the always grant");
}

#[tokio::test]
async fn a_session_of_independent_requests_takes_repeated_call_ids() {
    let (p, _) = echo_pipeline();
    let strict = p.session("strict").build().unwrap();
    let echo = |id: &str| ToolCall::new(id, "echo", json!({"text": "x"}));
    assert!(!p.dispatch(echo("1"), &strict).await.is_error);
    let again = p.dispatch(echo("1"), &strict).await;
    assert_eq!(err(&again).reason.as_deref(), Some("duplicate_call_id"));
    let caller = p.session("caller").call_ids_repeat().build().unwrap();
    for _ in 0..3 {
        assert!(!p.dispatch(echo("1"), &caller).await.is_error);
    }
    assert_eq!(caller.calls(), 3);
}
