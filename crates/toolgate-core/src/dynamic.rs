//! Dynamic tools: a JSON definition and a handler on JSON values.

use crate::context::ToolContext;
use crate::error::{RegistrationError, ToolError};
use crate::ledger::Reconciliation;
use crate::result::ToolOutput;
use crate::spec::ToolSpec;
use crate::tool::{Args, Resource, Tool};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// A handler on JSON arguments.
pub type DynamicHandler = Arc<
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync,
>;

/// A guard on JSON arguments (see [`Tool::guard`]).
pub type DynamicGuard =
    Arc<dyn Fn(&Value, &ToolContext) -> Result<Vec<Resource>, ToolError> + Send + Sync>;

/// A reconcile hook on JSON arguments (see [`Tool::reconcile`]): the idempotency key, the
/// arguments and the context.
pub type DynamicReconcile = Arc<
    dyn Fn(String, Value, ToolContext) -> BoxFuture<'static, Result<Reconciliation, ToolError>>
        + Send
        + Sync,
>;

/// A tool from a JSON definition: the spec (with its JSON schemas) and a handler that receives
/// the validated arguments as a JSON value.
pub struct DynamicTool {
    spec: ToolSpec,
    handler: DynamicHandler,
    guard: Option<DynamicGuard>,
    reconcile: Option<DynamicReconcile>,
}

impl DynamicTool {
    /// A tool from a spec and an async handler.
    pub fn new<F, Fut>(spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        DynamicTool {
            spec,
            handler: Arc::new(move |v, ctx| Box::pin(handler(v, ctx))),
            guard: None,
            reconcile: None,
        }
    }

    /// A tool from a JSON definition in MCP's shape (`name`, `title`, `description`,
    /// `inputSchema`, `outputSchema`), with effects and the other metadata from `base`.
    ///
    /// # Errors
    /// [`RegistrationError::Invalid`] when the definition lacks a name or is not an object;
    /// name errors as [`ToolSpec::builder`] reports them.
    pub fn from_definition<F, Fut>(
        definition: &Value,
        base: crate::spec::ToolSpecBuilder,
        handler: F,
    ) -> Result<Self, RegistrationError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let spec = crate::import::mcp::spec_from_mcp(definition, base)?;
        Ok(Self::new(spec, handler))
    }

    /// Adds a guard.
    pub fn with_guard<G>(mut self, guard: G) -> Self
    where
        G: Fn(&Value, &ToolContext) -> Result<Vec<Resource>, ToolError> + Send + Sync + 'static,
    {
        self.guard = Some(Arc::new(guard));
        self
    }

    /// Adds a reconcile hook (see [`Tool::reconcile`]): given the idempotency key, the
    /// arguments and the context, it asks the system the tool acts on whether that call's
    /// effect happened.
    pub fn with_reconcile<F, Fut>(mut self, reconcile: F) -> Self
    where
        F: Fn(String, Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Reconciliation, ToolError>> + Send + 'static,
    {
        self.reconcile = Some(Arc::new(move |k, v, ctx| Box::pin(reconcile(k, v, ctx))));
        self
    }
}

impl Tool for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        Ok(Args::new(arguments.clone()))
    }

    fn guard(&self, args: &Args, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        match (&self.guard, args.downcast_ref::<Value>()) {
            (Some(g), Some(v)) => g(v, ctx),
            _ => Ok(Vec::new()),
        }
    }

    fn call(&self, args: Args, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        match args.downcast::<Value>() {
            Ok(v) => (self.handler)(v, ctx),
            Err(_) => Box::pin(async {
                Err(ToolError::internal(
                    "decoded arguments of the wrong type reached a dynamic tool",
                ))
            }),
        }
    }

    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        args: &'a Args,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'a, Result<Reconciliation, ToolError>>> {
        let hook = self.reconcile.as_ref()?;
        let v = args.downcast_ref::<Value>()?;
        Some(hook(key.to_string(), v.clone(), ctx))
    }
}
