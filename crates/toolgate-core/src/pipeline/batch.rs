//! Batches: runs of concurrency-safe calls go concurrently, every other call alone, results in
//! call order.

use super::Pipeline;
use crate::call::ToolCall;
use crate::result::ToolResult;
use crate::session::Session;

pub(super) async fn dispatch_batch(
    p: &Pipeline,
    calls: Vec<ToolCall>,
    session: &Session,
) -> Vec<ToolResult> {
    let registry = p.registry();
    let safe = |c: &ToolCall| {
        registry
            .get_visible(&c.name, c.version.as_deref(), session.profile_bit)
            .is_some_and(|e| e.spec().effects.concurrency_safe)
    };
    let mut results = Vec::with_capacity(calls.len());
    let mut group: Vec<ToolCall> = Vec::new();
    for call in calls {
        if safe(&call) {
            group.push(call);
            continue;
        }
        flush(p, &mut group, session, &mut results).await;
        results.push(p.dispatch(call, session).await);
    }
    flush(p, &mut group, session, &mut results).await;
    results
}

async fn flush(
    p: &Pipeline,
    group: &mut Vec<ToolCall>,
    session: &Session,
    results: &mut Vec<ToolResult>,
) {
    match group.len() {
        0 => {}
        1 => results.push(p.dispatch(group.pop().expect("one call"), session).await),
        _ => {
            let calls = std::mem::take(group);
            results.extend(
                futures::future::join_all(calls.into_iter().map(|c| p.dispatch(c, session))).await,
            );
        }
    }
}
