//! Driving a pipeline through a list of calls.

use serde_json::Value;
use toolgate_core::{Pipeline, ToolCall, ToolResult};

/// Dispatches `calls` (tool name, arguments) one after another in a new session `session` of
/// `pipeline`, with the call ids `c0`, `c1`, ...; returns their results in order.
///
/// # Panics
/// When the session cannot be built (an empty or overlong id).
pub async fn dispatch_in_order(
    pipeline: &Pipeline,
    session: &str,
    calls: &[(&str, Value)],
) -> Vec<ToolResult> {
    let s = pipeline
        .session(session)
        .build()
        .expect("a valid session id");
    let mut results = Vec::with_capacity(calls.len());
    for (i, (name, args)) in calls.iter().enumerate() {
        let call = ToolCall::new(format!("c{i}"), *name, args.clone());
        results.push(pipeline.dispatch(call, &s).await);
    }
    results
}
