//! What a review found: time, size and content limits that must hold on every path.

use super::*;
use futures::future::BoxFuture;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use toolgate_test_support::tools::{Done, NoArgs, Panics};

/// Approves after a delay, as a person would.
struct SlowApprover(Duration);
impl Approver for SlowApprover {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            tokio::time::sleep(self.0).await;
            ApprovalAnswer::Approved
        })
    }
}

/// A destructive tool that takes `ms` and counts completed runs.
struct Steps {
    timeout: Duration,
    ms: u64,
    done: Arc<AtomicU32>,
}
impl TypedTool for Steps {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("steps")
            .effects(Effects::side_effecting())
            .timeout(self.timeout)
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Done, ToolError> {
        tokio::time::sleep(Duration::from_millis(self.ms)).await;
        self.done.fetch_add(1, Ordering::SeqCst);
        Ok(Done { done: true })
    }
}

#[tokio::test]
async fn time_waiting_for_approval_does_not_count_against_the_timeout() {
    let done = Arc::new(AtomicU32::new(0));
    let tool = Steps {
        timeout: Duration::from_millis(200),
        ms: 10,
        done: done.clone(),
    };
    let (p, _) = pipeline_with(
        Registry::builder().tool(tool).build().unwrap(),
        Arc::new(SlowApprover(Duration::from_millis(400))),
    );
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("c", "steps", json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(done.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_practically_unbounded_timeout_does_not_overflow() {
    let done = Arc::new(AtomicU32::new(0));
    let tool = Steps {
        timeout: Duration::MAX,
        ms: 1,
        done: done.clone(),
    };
    let (p, _) = pipeline_with(
        Registry::builder().tool(tool).build().unwrap(),
        Arc::new(PreApproved),
    );
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("c", "steps", json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
}

/// Keeps its call's cancellation token and never finishes.
struct Hangs(Arc<parking_lot::Mutex<Option<CancellationToken>>>);
impl TypedTool for Hangs {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("hangs")
            .effects(Effects::read_only())
            .timeout(Duration::from_millis(50))
    }
    async fn call(&self, _: NoArgs, ctx: ToolContext) -> Result<Done, ToolError> {
        *self.0.lock() = Some(ctx.cancellation().clone());
        futures::future::pending::<()>().await;
        unreachable!()
    }
}

#[tokio::test]
async fn a_timeout_cancels_the_calls_token_but_not_the_callers() {
    let slot = Arc::new(parking_lot::Mutex::new(None));
    let (p, _) = pipeline_with(
        Registry::builder()
            .tool(Hangs(slot.clone()))
            .build()
            .unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let shared = CancellationToken::new();
    let r = p
        .dispatch_with(ToolCall::new("c", "hangs", json!({})), &s, shared.clone())
        .await;
    assert_eq!(err(&r).kind, ErrorKind::Timeout);
    let token = slot.lock().clone().expect("the handler ran");
    assert!(
        token.is_cancelled(),
        "blocking work of the handler must see the timeout"
    );
    assert!(
        !shared.is_cancelled(),
        "the caller's token is shared by other calls"
    );
}

#[tokio::test]
async fn panic_text_stays_in_the_operators_log() {
    let (p, _) = pipeline_with(
        Registry::builder().tool(Panics).build().unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("p", "panics", json!({})), &s)
        .await;
    assert_eq!(err(&r).details, None);
    assert!(!serde_json::to_string(&r)
        .unwrap()
        .contains("secret stack detail"));
}

#[tokio::test]
async fn error_results_are_sanitized_and_bounded() {
    let (p, _) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let name = format!("evil\u{1b}]0;owned\u{7}{}", "x".repeat(100_000));
    let r = p.dispatch(ToolCall::new("n", name, json!({})), &s).await;
    let wire = serde_json::to_string(&r).unwrap();
    assert!(
        !r.text().contains('\u{1b}') && !r.text().contains('\u{7}'),
        "{}",
        &r.text()[..80]
    );
    assert!(wire.len() < 10_000, "{} bytes", wire.len());

    let many: serde_json::Map<String, serde_json::Value> =
        (0..12_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let r = p
        .dispatch(
            ToolCall::new("m", "echo", serde_json::Value::Object(many)),
            &s,
        )
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.faults.len() <= 50, "{}", e.faults.len());
    assert!(e.faults.last().unwrap().message.contains("more faults"));
    assert!(serde_json::to_string(&r).unwrap().len() < 20_000);
}

/// Hides `secrets/` from tools that walk.
struct HideSecrets;
impl Policy for HideSecrets {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        DefaultPolicy.decide(input)
    }
    fn decide_path(&self, rel: &std::path::Path, _: Access, _: &str) -> Decision {
        if rel.starts_with("secrets") {
            Decision::Deny
        } else {
            Decision::Allow
        }
    }
}

#[tokio::test]
async fn handlers_can_ask_the_policy_about_paths_they_reach() {
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let spec = ToolSpec::builder("probe")
        .effects(Effects::read_only())
        .build()
        .unwrap();
    let tool = DynamicTool::new(spec, move |_, ctx| {
        let seen = seen2.clone();
        async move {
            for p in ["src/a.rs", "secrets/key.pem", "secrets"] {
                seen.lock()
                    .push((p, ctx.permits(std::path::Path::new(p), Access::Read)));
            }
            Ok(ToolOutput::text("ok"))
        }
    });
    let p = Pipeline::builder(Registry::builder().tool(tool).build().unwrap())
        .policy(Arc::new(HideSecrets))
        .build();
    let s = p.session("s").build().unwrap();
    assert!(
        !p.dispatch(ToolCall::new("c", "probe", json!({})), &s)
            .await
            .is_error
    );
    assert_eq!(
        *seen.lock(),
        [
            ("src/a.rs", true),
            ("secrets/key.pem", false),
            ("secrets", false)
        ]
    );
    // without a policy (a hand-built context) everything is permitted
    assert!(ToolContext::builder()
        .build()
        .permits(std::path::Path::new("secrets/x"), Access::Read));
}
