//! Stages 5-6: authorize (default policy, approver answers, a custom policy) and budget.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use toolgate_test_support::tools::{destructive, Sleep};
use toolgate_test_support::ScriptedApprover;

fn destructive_pipeline(
    approver: Arc<dyn Approver>,
) -> (Pipeline, Arc<MemoryAuditSink>, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let (p, audit) = pipeline_with(reg, approver);
    (p, audit, runs)
}

#[tokio::test]
async fn destructive_tools_ask_and_nobody_answering_denies() {
    let (p, audit, runs) = destructive_pipeline(Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c", "delete_all", json!({})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::ApprovalRejected);
    assert!(!e.is_recoverable());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let rec = &audit.records()[0];
    assert_eq!(rec.decision, Some(Decision::Ask));
    assert_eq!(rec.rule.as_deref(), Some("default.destructive_asks"));
    assert_eq!(rec.approval, Some(Approval::Rejected));
    // read-only tools are not asked about
    assert!(
        !p.dispatch(ToolCall::new("d", "echo", json!({"text": "x"})), &s)
            .await
            .is_error
    );
}

#[tokio::test]
async fn approver_answers_decide() {
    let approver = Arc::new(ScriptedApprover::new([
        ApprovalAnswer::Approved,
        ApprovalAnswer::Corrected {
            feedback: "delete only the build folder".into(),
        },
        ApprovalAnswer::Rejected {
            reason: "no".into(),
        },
    ]));
    let (p, audit, runs) = destructive_pipeline(approver.clone());
    let s = p.session("s").build().unwrap();
    let ok = p
        .dispatch(ToolCall::new("a", "delete_all", json!({})), &s)
        .await;
    assert!(!ok.is_error, "{ok:?}");
    let corrected = p
        .dispatch(ToolCall::new("b", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&corrected).kind, ErrorKind::ApprovalCorrected);
    assert!(corrected.is_recoverable());
    assert!(corrected.text().contains("delete only the build folder"));
    let rejected = p
        .dispatch(ToolCall::new("c", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&rejected).kind, ErrorKind::ApprovalRejected);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let asked = approver.asked();
    assert_eq!(asked.len(), 3);
    assert_eq!(
        (asked[0].tool.as_str(), asked[0].call_id.as_str()),
        ("delete_all", "a")
    );
    let approvals: Vec<_> = audit.calls().iter().map(|r| r.approval).collect();
    assert_eq!(
        approvals,
        [
            Some(Approval::Approved),
            Some(Approval::Corrected),
            Some(Approval::Rejected)
        ]
    );
}

/// An approver that sent its question to the client (MCP 2026-07-28 input-required) has not
/// answered: the call does not run and is recorded as waiting for input, with no error kind,
/// not as a rejection; the retry's answer is recorded as its own call.
#[tokio::test]
async fn a_pending_question_is_recorded_as_input_required() {
    let approver = Arc::new(ScriptedApprover::new([
        ApprovalAnswer::Pending {
            reason: "asked of the client".into(),
        },
        ApprovalAnswer::Approved,
    ]));
    let (p, audit, runs) = destructive_pipeline(approver);
    let s = p.session("s").build().unwrap();
    let first = p
        .dispatch(ToolCall::new("a", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&first).kind, ErrorKind::InputRequired);
    assert!(first.is_recoverable());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let retry = p
        .dispatch(ToolCall::new("b", "delete_all", json!({})), &s)
        .await;
    assert!(!retry.is_error, "{retry:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let recs = audit.calls();
    let summary: Vec<_> = recs
        .iter()
        .map(|r| (r.approval, r.outcome, r.error_kind, r.error_reason.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (Some(Approval::Pending), Outcome::InputRequired, None, None),
            (Some(Approval::Approved), Outcome::Ok, None, None),
        ]
    );
    assert_eq!(recs[0].decision, Some(Decision::Ask));
    // one question, counted once: with its answer
    assert!(!Approval::Pending.was_asked() && !Approval::Pending.approved());
}

struct DenyEcho;
impl Policy for DenyEcho {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        if &*input.tool.name == "echo" && input.arguments["text"] == "forbidden" {
            Verdict::deny("test.no_forbidden_echo", "echoing that is forbidden")
        } else {
            DefaultPolicy.decide(input)
        }
    }
}

#[tokio::test]
async fn a_policy_deny_is_fatal_and_names_its_rule() {
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(Registry::builder().tool(Echo::default()).build().unwrap())
        .policy(Arc::new(DenyEcho))
        .audit(audit.clone())
        .build();
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c", "echo", json!({"text": "forbidden"})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::PermissionDenied);
    assert_eq!(e.reason.as_deref(), Some("test.no_forbidden_echo"));
    assert_eq!(audit.records()[0].decision, Some(Decision::Deny));
    assert!(
        !p.dispatch(ToolCall::new("d", "echo", json!({"text": "fine"})), &s)
            .await
            .is_error
    );
}

#[tokio::test]
async fn call_budgets_are_enforced() {
    let (p, _) = echo_pipeline();
    let s = p
        .session("s")
        .budgets(Budgets {
            max_calls: Some(2),
            ..Default::default()
        })
        .build()
        .unwrap();
    for i in 0..2 {
        assert!(
            !p.dispatch(
                ToolCall::new(format!("c{i}"), "echo", json!({"text": "x"})),
                &s
            )
            .await
            .is_error
        );
    }
    let r = p
        .dispatch(ToolCall::new("c2", "echo", json!({"text": "x"})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::BudgetExhausted);
    assert_eq!(err(&r).reason.as_deref(), Some("max_calls"));
    assert!(!r.is_recoverable());
    // a call refused earlier (bad arguments) is not charged
    let (p, _) = echo_pipeline();
    let s = p
        .session("s")
        .budgets(Budgets {
            max_calls: Some(1),
            ..Default::default()
        })
        .build()
        .unwrap();
    assert!(
        p.dispatch(ToolCall::new("bad", "echo", json!({})), &s)
            .await
            .is_error
    );
    assert!(
        !p.dispatch(ToolCall::new("ok", "echo", json!({"text": "x"})), &s)
            .await
            .is_error
    );
}

#[tokio::test]
async fn per_tool_wall_time_and_byte_budgets() {
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(Sleep {
            name: "sleep",
            effects: Effects::read_only(),
            timeout: Duration::from_secs(5),
        })
        .build()
        .unwrap();
    let (p, _) = pipeline_with(reg, Arc::new(NobodyApprover));
    let s = p
        .session("s")
        .budgets(Budgets {
            max_calls_per_tool: Some(1),
            ..Default::default()
        })
        .build()
        .unwrap();
    assert!(
        !p.dispatch(ToolCall::new("a", "echo", json!({"text": "x"})), &s)
            .await
            .is_error
    );
    let r = p
        .dispatch(ToolCall::new("b", "echo", json!({"text": "x"})), &s)
        .await;
    assert_eq!(err(&r).reason.as_deref(), Some("max_calls_per_tool"));
    assert!(
        !p.dispatch(ToolCall::new("c", "sleep", json!({"ms": 0})), &s)
            .await
            .is_error
    );

    let s = p
        .session("w")
        .budgets(Budgets {
            max_wall_time: Some(Duration::from_millis(30)),
            ..Default::default()
        })
        .build()
        .unwrap();
    assert!(
        !p.dispatch(ToolCall::new("a", "sleep", json!({"ms": 40})), &s)
            .await
            .is_error
    );
    let r = p
        .dispatch(ToolCall::new("b", "echo", json!({"text": "x"})), &s)
        .await;
    assert_eq!(err(&r).reason.as_deref(), Some("max_wall_time"));

    let s = p
        .session("b")
        .budgets(Budgets {
            max_result_bytes: Some(10),
            ..Default::default()
        })
        .build()
        .unwrap();
    assert!(
        !p.dispatch(
            ToolCall::new("a", "echo", json!({"text": "0123456789"})),
            &s
        )
        .await
        .is_error
    );
    let r = p
        .dispatch(ToolCall::new("b", "echo", json!({"text": "x"})), &s)
        .await;
    assert_eq!(err(&r).reason.as_deref(), Some("max_result_bytes"));
}
