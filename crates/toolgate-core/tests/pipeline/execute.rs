//! Stage 7: timeout, cancellation, panics, retries only for idempotent tools.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolgate_test_support::tools::{Flaky, Panics, Sleep, WaitsForCancel};

fn registry_with(tool: impl IntoTool) -> Registry {
    Registry::builder().tool(tool).build().unwrap()
}

#[tokio::test]
async fn a_slow_idempotent_call_times_out_recoverably() {
    let reg = registry_with(Sleep {
        name: "sleep",
        effects: Effects::read_only(),
        timeout: Duration::from_millis(50),
    });
    let (p, audit) = pipeline_with(reg, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("t", "sleep", json!({"ms": 5_000})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::Timeout);
    assert!(r.is_recoverable());
    assert!(r.duration < Duration::from_secs(2), "{:?}", r.duration);
    assert_eq!(audit.records()[0].error_kind, Some(ErrorKind::Timeout));
}

#[tokio::test]
async fn a_slow_side_effecting_call_has_an_unknown_outcome() {
    let effects = Effects {
        destructive: false,
        ..Effects::side_effecting()
    };
    let reg = registry_with(Sleep {
        name: "send",
        effects,
        timeout: Duration::from_millis(50),
    });
    let (p, _) = pipeline_with(reg, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("t", "send", json!({"ms": 5_000})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::OutcomeUnknown);
    assert!(
        !err(&r).transient,
        "a side-effecting timeout must not invite a blind retry"
    );
}

#[tokio::test]
async fn cancellation_stops_the_call_and_reaches_the_handler() {
    let saw = Arc::new(AtomicU32::new(0));
    let (p, _) = pipeline_with(
        registry_with(WaitsForCancel {
            saw_cancel: saw.clone(),
        }),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        t2.cancel();
    });
    let r = p
        .dispatch_with(ToolCall::new("c", "wait_cancel", json!({})), &s, token)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::Cancelled);
    assert_eq!(r.call_id.as_str(), "c");
    // a token cancelled before dispatch stops the call before the handler runs
    let token = CancellationToken::new();
    token.cancel();
    let r = p
        .dispatch_with(ToolCall::new("d", "wait_cancel", json!({})), &s, token)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::Cancelled);
}

#[tokio::test]
async fn a_panicking_handler_becomes_an_internal_error_without_its_message() {
    let (p, audit) = pipeline_with(registry_with(Panics), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("p", "panics", json!({})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::Internal);
    assert_eq!(e.reason.as_deref(), Some("panic"));
    assert!(!r.text().contains("secret stack detail"), "{}", r.text());
    assert_eq!(audit.records().len(), 1);
    // the pipeline goes on
    let r = p
        .dispatch(ToolCall::new("q", "panics", json!({})), &s)
        .await;
    assert_eq!(r.call_id.as_str(), "q");
}

fn flaky(
    name: &'static str,
    effects: Effects,
    fail_times: u32,
    transient: bool,
) -> (Flaky, Arc<AtomicU32>) {
    let attempts = Arc::new(AtomicU32::new(0));
    (
        Flaky {
            name,
            effects,
            fail_times,
            transient,
            attempts: attempts.clone(),
        },
        attempts,
    )
}

#[tokio::test]
async fn transient_failures_of_idempotent_tools_are_retried() {
    let (tool, attempts) = flaky("flaky", Effects::read_only(), 2, true);
    let (p, audit) = pipeline_with(registry_with(tool), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("a", "flaky", json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert_eq!(audit.records()[0].attempts, 3);
}

#[tokio::test]
async fn retries_stop_at_the_attempt_limit() {
    let (tool, attempts) = flaky("flaky", Effects::read_only(), 10, true);
    let (p, _) = pipeline_with(registry_with(tool), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("a", "flaky", json!({})), &s).await;
    assert_eq!(err(&r).kind, ErrorKind::ToolFailed);
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn side_effecting_tools_and_permanent_errors_are_never_retried() {
    let effects = Effects {
        destructive: false,
        ..Effects::side_effecting()
    };
    let (tool, attempts) = flaky("send_mail", effects, 1, true);
    let (p, _) = pipeline_with(registry_with(tool), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("a", "send_mail", json!({})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::ToolFailed);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);

    let (tool, attempts) = flaky("flaky", Effects::read_only(), 1, false);
    let (p, _) = pipeline_with(registry_with(tool), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("a", "flaky", json!({})), &s).await;
    assert_eq!(err(&r).kind, ErrorKind::ToolFailed);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

/// A tool that reports three steps, one message with a terminal escape and one too long.
fn reporter() -> DynamicTool {
    let spec = ToolSpec::builder("reporter")
        .effects(Effects::read_only())
        .input_schema(json!({"type": "object", "additionalProperties": false}))
        .build()
        .unwrap();
    DynamicTool::new(spec, |_, ctx| async move {
        let heard = ctx.report_progress(1.0, Some(3.0), Some("one".into()));
        ctx.report_progress(2.0, Some(3.0), Some("\x1b[31mtwo\x1b[0m".into()));
        ctx.report_progress(3.0, Some(3.0), Some("x".repeat(100_000)));
        Ok(ToolOutput::text(if heard { "heard" } else { "unheard" }))
    })
}

#[tokio::test]
async fn progress_reaches_the_sink_made_safe_and_bounded() {
    let (p, _) = pipeline_with(registry_with(reporter()), Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let got = Arc::new(parking_lot::Mutex::new(Vec::<ProgressReport>::new()));
    let sink = got.clone();
    let r = p
        .dispatch_with_progress(
            ToolCall::new("c1", "reporter", json!({})),
            &s,
            CancellationToken::new(),
            Arc::new(move |r: ProgressReport| sink.lock().push(r)),
        )
        .await;
    assert_eq!(r.text(), "heard");
    let got = std::mem::take(&mut *got.lock());
    let steps: Vec<(f64, Option<f64>)> = got.iter().map(|r| (r.progress, r.total)).collect();
    assert_eq!(
        steps,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(got[0].message.as_deref(), Some("one"));
    assert_eq!(got[1].message.as_deref(), Some("\\x1b[31mtwo\\x1b[0m"));
    let long = got[2].message.as_deref().unwrap();
    assert!(long.len() <= toolgate_core::progress::MAX_MESSAGE_BYTES && long.ends_with('…'));
    // without a sink, reports go nowhere and the tool can tell
    let r = p
        .dispatch(ToolCall::new("c2", "reporter", json!({})), &s)
        .await;
    assert_eq!(r.text(), "unheard");
}
