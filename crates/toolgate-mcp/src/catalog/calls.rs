//! [`Calls`]: tool calls a catalog makes while it serves one request, through the pipeline in
//! the request's toolgate session.

use crate::handler::Connection;
use rmcp::model::ErrorData;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use toolgate_core::{ToolCall, ToolResult};

/// Calls through the pipeline on behalf of one MCP request, in its session (the connection's,
/// or a stateless request's caller's): each is decided by the policy and recorded by the
/// audit like a `tools/call`. The first call's id is the request's JSON-RPC id, later ones add
/// `#2`, `#3`, ..., so none repeats an id of the session.
pub struct Calls<'a> {
    pub(crate) conn: &'a Connection,
    pub(crate) ctx: &'a RequestContext<RoleServer>,
    made: AtomicU32,
}

impl std::fmt::Debug for Calls<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls")
            .field("request", &self.ctx.id)
            .finish_non_exhaustive()
    }
}

impl<'a> Calls<'a> {
    pub(crate) fn new(conn: &'a Connection, ctx: &'a RequestContext<RoleServer>) -> Self {
        Calls {
            conn,
            ctx,
            made: AtomicU32::new(0),
        }
    }

    /// The id of the next call.
    pub(crate) fn next_id(&self) -> String {
        let id = crate::handler::request_id(self.ctx);
        match self.made.fetch_add(1, Ordering::Relaxed) {
            0 => id,
            n => format!("{id}#{}", n + 1),
        }
    }

    /// Calls `tool` with `arguments` and returns its result, an error result included.
    ///
    /// # Errors
    /// The JSON-RPC error the tool asked the request to fail with; `-32602` when the policy
    /// asks a question this request cannot carry (a 2026-07-28 list has no input-required
    /// form).
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<ToolResult, ErrorData> {
        let call = ToolCall::new(self.next_id(), tool, arguments);
        let (result, left) = Box::pin(self.conn.run(call, None, None, self.ctx.clone())).await;
        if let Some(e) = left.protocol_error {
            return Err(e);
        }
        if left.question.is_some() {
            return Err(ErrorData::invalid_params(
                format!(
                    "the policy asks before {tool} runs, and this request cannot carry the \
                     question; allow {tool} with a rule or a grant"
                ),
                Some(json!({ "tool": tool })),
            ));
        }
        Ok(result)
    }
}
