//! [`Limited`]: a tool whose timeout and result size are capped by the configuration.

use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Args, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// A tool under the configuration's `[limits]`: its spec's `timeout` and `max_result_bytes`
/// lowered to the limits (never raised); everything else is the inner tool's.
pub struct Limited {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
}

impl Limited {
    /// Wraps `inner` when a limit lowers one of its own; otherwise gives it back.
    pub fn wrap(
        inner: Arc<dyn Tool>,
        timeout: Option<Duration>,
        max_result_bytes: Option<usize>,
    ) -> Arc<dyn Tool> {
        let own = inner.spec();
        let lowers_timeout = timeout.is_some_and(|t| t < own.timeout);
        let lowers_bytes = max_result_bytes.is_some_and(|b| b < own.max_result_bytes);
        if !lowers_timeout && !lowers_bytes {
            return inner;
        }
        let mut spec = own.clone();
        if let Some(t) = timeout.filter(|_| lowers_timeout) {
            spec.timeout = t;
        }
        if let Some(b) = max_result_bytes.filter(|_| lowers_bytes) {
            spec.max_result_bytes = b;
        }
        Arc::new(Limited { inner, spec })
    }
}

impl Tool for Limited {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn decode(&self, arguments: &serde_json::Value) -> Result<Args, ToolError> {
        self.inner.decode(arguments)
    }
    fn guard(
        &self,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Vec<toolgate_core::Resource>, ToolError> {
        self.inner.guard(args, ctx)
    }
    fn preview(&self, args: &Args, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        self.inner.preview(args, ctx)
    }
    fn effect(
        &self,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Option<serde_json::Value>, ToolError> {
        self.inner.effect(args, ctx)
    }
    fn call(
        &self,
        args: Args,
        ctx: ToolContext,
    ) -> futures_boxed::BoxFuture<'_, Result<ToolOutput, ToolError>> {
        self.inner.call(args, ctx)
    }
    fn schemas_derived(&self) -> bool {
        // the limits change the timeout and the result cap, never a schema
        self.inner.schemas_derived()
    }
    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        args: &'a Args,
        ctx: ToolContext,
    ) -> Option<futures_boxed::BoxFuture<'a, Result<toolgate_core::Reconciliation, ToolError>>>
    {
        self.inner.reconcile(key, args, ctx)
    }
}

mod futures_boxed {
    /// The boxed future type of [`toolgate_core::Tool::call`].
    pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
}
