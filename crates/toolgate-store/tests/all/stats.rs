//! `Store::tool_stats` and the live metrics agree: the same calls, recorded by the SQLite sink
//! and counted by a real Prometheus recorder, give the same figures under the same names.

use super::support::TempStore;
use metrics_exporter_prometheus::PrometheusBuilder;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::telemetry::{self, UNKNOWN_TOOL};
use toolgate_core::{ApprovalAnswer, GrantRequest, GrantScope, MemoryGrantStore, Pipeline};
use toolgate_store::{AuditQuery, SqliteAuditSink, ToolStats};
use toolgate_test_support::approver::ScriptedApprover;
use toolgate_test_support::pipeline::dispatch_in_order;
use toolgate_test_support::policy::DenyTool;
use toolgate_test_support::tools::every_outcome;

/// The value of the sample `name{tool="TOOL"[,kind="KIND"]}`, 0 when absent.
fn sample(text: &str, name: &str, tool: &str, kind: Option<&str>) -> u64 {
    let series = match kind {
        Some(k) => format!("{name}{{tool=\"{tool}\",kind=\"{k}\"}} "),
        None => format!("{name}{{tool=\"{tool}\"}} "),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(series.as_str()))
        .map(|v| v.parse::<f64>().unwrap() as u64)
        .unwrap_or(0)
}

#[test]
fn stats_from_the_store_match_the_prometheus_exposition() {
    let t = TempStore::new();
    let sink = Arc::new(SqliteAuditSink::new(&t.store).unwrap());
    let registry = every_outcome().build().unwrap();
    let p = Pipeline::builder(registry)
        .policy(Arc::new(DenyTool::FORBIDDEN))
        .approver(Arc::new(ScriptedApprover::new([
            ApprovalAnswer::Approved,
            ApprovalAnswer::Corrected {
                feedback: "less".into(),
            },
            ApprovalAnswer::ApprovedFor {
                grant: GrantRequest::new(GrantScope::Session),
            },
        ])))
        .grants(Arc::new(MemoryGrantStore::default()))
        .audit(sink.clone())
        .build();
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let calls = [
        ("echo", json!({"text": "a"})),
        ("echo", json!({"text": 1})),
        ("echo", json!({"text": "b", "extra": true})),
        ("big_output", json!({})),
        ("big_output", json!({})),
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        // the session grant answers these two without asking
        ("delete_all", json!({})),
        ("delete_all", json!({})),
        ("forbidden", json!({})),
        ("made_up", json!({})),
        ("also_made_up", json!({})),
    ];
    metrics::with_local_recorder(&recorder, || {
        rt.block_on(dispatch_in_order(&p, "s", &calls))
    });
    sink.flush_checked().unwrap();
    let stats = t.store.tool_stats(&AuditQuery::default()).unwrap();
    let text = handle.render();
    let tools: Vec<&str> = stats.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        tools,
        [
            UNKNOWN_TOOL,
            "big_output",
            "delete_all",
            "echo",
            "forbidden"
        ]
    );
    for s in &stats {
        let tool = s.tool.as_str();
        let live = ToolStats {
            tool: s.tool.clone(),
            calls: sample(&text, telemetry::CALLS, tool, None),
            errors: s
                .errors
                .keys()
                .map(|k| (k.clone(), sample(&text, telemetry::ERRORS, tool, Some(k))))
                .collect(),
            denials: sample(&text, telemetry::DENIALS, tool, None),
            approvals_asked: sample(&text, telemetry::APPROVALS_ASKED, tool, None),
            approvals_granted: sample(&text, telemetry::APPROVALS_GRANTED, tool, None),
            truncations: sample(&text, telemetry::TRUNCATIONS, tool, None),
            latency: s.latency,
        };
        assert_eq!(&live, s, "{text}");
        let errors_live: u64 = text
            .lines()
            .filter(|l| l.starts_with(&format!("{}{{tool=\"{tool}\",", telemetry::ERRORS)))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64)
            .sum();
        assert_eq!(errors_live, s.errors.values().sum::<u64>(), "{tool}");
        let count = format!("{}_count{{tool=\"{tool}\"}} ", telemetry::DURATION);
        assert!(
            text.contains(&format!("{count}{}", s.calls)),
            "{tool}: {text}"
        );
    }
    let by = |tool: &str| stats.iter().find(|s| s.tool == tool).unwrap();
    // the figures themselves, so the comparison above is not of two zeros
    assert_eq!(by(UNKNOWN_TOOL).calls, 2);
    assert_eq!(by(UNKNOWN_TOOL).errors["unknown_tool"], 2);
    assert_eq!(by("echo").errors["invalid_arguments"], 2);
    assert_eq!(by("big_output").truncations, 2);
    let d = by("delete_all");
    assert_eq!((d.calls, d.approvals_asked, d.approvals_granted), (5, 3, 2));
    assert_eq!(d.errors["approval_corrected"], 1);
    assert_eq!(by("forbidden").denials, 1);
    // the records themselves keep the names as called
    let unknown = t
        .store
        .tool_stats(&AuditQuery {
            tool: Some("made_up".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].tool, UNKNOWN_TOOL);
}
