//! The record stage's metrics, rendered by a real Prometheus recorder: calls, the latency
//! histogram, errors by kind, denials, approvals asked and granted, truncations, and calls to
//! names that did not resolve under one `(unknown)` label.

use super::*;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::telemetry;
use toolgate_test_support::approver::ScriptedApprover;
use toolgate_test_support::pipeline::dispatch_in_order;
use toolgate_test_support::policy::DenyTool;
use toolgate_test_support::tools::every_outcome;

/// The value of the sample `series` (name and labels exactly as rendered), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn every_call_is_counted_per_tool_in_the_prometheus_exposition() {
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(telemetry::DURATION.into()),
            telemetry::DURATION_BUCKETS,
        )
        .unwrap()
        .build_recorder();
    let handle = recorder.handle();
    let registry = every_outcome().build().unwrap();
    let approver = Arc::new(ScriptedApprover::new([
        ApprovalAnswer::Approved,
        ApprovalAnswer::Rejected {
            reason: "no".into(),
        },
        ApprovalAnswer::Corrected {
            feedback: "do less".into(),
        },
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest::new(GrantScope::Session),
        },
    ]));
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(registry)
        .policy(Arc::new(DenyTool::FORBIDDEN))
        .approver(approver)
        .grants(Arc::new(MemoryGrantStore::default()))
        .audit(audit.clone())
        .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let calls = [
        ("echo", json!({"text": "a"})),
        ("echo", json!({"text": "b"})),
        ("echo", json!({"text": 3})),
        ("big_output", json!({})),
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        // approved for the session, then run on the standing grant without asking
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        ("forbidden", json!({})),
        ("no_such_tool", json!({})),
        ("invented\u{1b}[31m", json!({})),
    ];
    ::metrics::with_local_recorder(&recorder, || {
        telemetry::describe();
        rt.block_on(dispatch_in_order(&p, "s", &calls));
    });
    let text = handle.render();
    let at = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("{series}:\n{text}"));
    for (tool, n) in [
        ("echo", 3.0),
        ("big_output", 1.0),
        ("delete_all", 5.0),
        ("forbidden", 1.0),
        ("(unknown)", 2.0),
    ] {
        assert_eq!(
            at(&format!("toolgate_tool_calls_total{{tool=\"{tool}\"}}")),
            n
        );
        assert_eq!(
            at(&format!(
                "toolgate_tool_call_duration_seconds_count{{tool=\"{tool}\"}}"
            )),
            n
        );
        assert_eq!(
            at(&format!(
                "toolgate_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}}"
            )),
            n
        );
    }
    // every bucket of the histogram is there, cumulative
    let mut last = 0.0;
    for le in telemetry::DURATION_BUCKETS {
        let v = at(&format!(
            "toolgate_tool_call_duration_seconds_bucket{{tool=\"echo\",le=\"{le}\"}}"
        ));
        assert!(v >= last, "le={le}: {v} < {last}");
        last = v;
    }
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"echo\",kind=\"invalid_arguments\"}"),
        1.0
    );
    assert_eq!(
        at("toolgate_tool_truncations_total{tool=\"big_output\"}"),
        1.0
    );
    assert_eq!(at("toolgate_tool_truncations_total{tool=\"echo\"}"), 0.0);
    assert_eq!(
        at("toolgate_tool_approvals_asked_total{tool=\"delete_all\"}"),
        4.0
    );
    assert_eq!(
        at("toolgate_tool_approvals_granted_total{tool=\"delete_all\"}"),
        2.0
    );
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"delete_all\",kind=\"approval_rejected\"}"),
        1.0
    );
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"delete_all\",kind=\"approval_corrected\"}"),
        1.0
    );
    assert_eq!(at("toolgate_tool_denials_total{tool=\"forbidden\"}"), 1.0);
    assert_eq!(at("toolgate_tool_denials_total{tool=\"echo\"}"), 0.0);
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"forbidden\",kind=\"permission_denied\"}"),
        1.0
    );
    assert_eq!(
        at("toolgate_tool_errors_total{tool=\"(unknown)\",kind=\"unknown_tool\"}"),
        2.0
    );
    // an invented name makes no series of its own; kinds a tool never had are not listed
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(!text.contains("invented"), "{text}");
    assert!(
        !text.contains("tool=\"echo\",kind=\"tool_failed\""),
        "{text}"
    );
    assert!(text.contains("# TYPE toolgate_tool_call_duration_seconds histogram"));
    assert!(text.contains("# HELP toolgate_tool_denials_total Tool calls the policy denied"));
    // the audit log says the same
    let records = audit.calls();
    assert_eq!(records.len(), calls.len());
    assert_eq!(
        records
            .iter()
            .filter(|r| r.approval.is_some_and(Approval::approved))
            .count(),
        2
    );
    assert_eq!(
        records
            .iter()
            .filter(|r| r.approval == Some(Approval::Granted))
            .count(),
        1
    );
}

#[test]
fn without_a_recorder_calls_run_and_nothing_is_recorded() {
    let (p, audit) = echo_pipeline();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s = p.session("s").build().unwrap();
    let r = rt.block_on(p.dispatch(ToolCall::new("c", "echo", json!({"text": "x"})), &s));
    assert!(!r.is_error);
    // a recorder installed later sees nothing of a tool already called without one
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    ::metrics::with_local_recorder(&recorder, || {
        rt.block_on(p.dispatch(ToolCall::new("d", "echo", json!({"text": "y"})), &s))
    });
    assert!(!handle.render().contains("tool=\"echo\""));
    assert_eq!(audit.records().len(), 2);
}
