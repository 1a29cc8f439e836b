//! The pipeline end to end: each stage's failure modes, the call-id round trip, truncation,
//! retries, timeouts, cancellation, panics, output-schema violations, batches and the audit
//! record.

mod answers;
mod authorize_budget;
mod execute;
mod finish_record;
mod grants;
mod hardening;
mod intent;
mod ledger;
mod ledger_chaos;
mod ledger_effect;
mod ledger_intent;
mod metrics;
mod reached;
mod resolve_decode;
mod swap;
mod tool_text;
mod truncation;

use std::sync::Arc;
use toolgate_core::*;
use toolgate_test_support::tools::Echo;

/// A pipeline over `registry` with a memory audit sink and `approver`.
pub fn pipeline_with(
    registry: Registry,
    approver: Arc<dyn Approver>,
) -> (Pipeline, Arc<MemoryAuditSink>) {
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(registry)
        .approver(approver)
        .audit(audit.clone())
        .retry(RetryPolicy {
            max_attempts: 3,
            base_delay: std::time::Duration::from_millis(1),
            max_delay: std::time::Duration::from_millis(5),
        })
        .build();
    (p, audit)
}

/// A pipeline with only `echo`.
pub fn echo_pipeline() -> (Pipeline, Arc<MemoryAuditSink>) {
    pipeline_with(
        Registry::builder().tool(Echo::default()).build().unwrap(),
        Arc::new(NobodyApprover),
    )
}

/// The error of a result, which must be an error.
pub fn err(r: &ToolResult) -> &ToolError {
    assert!(r.is_error, "expected an error, got {r:?}");
    r.error.as_ref().expect("is_error without error")
}
