//! toolgate-core: the tool contract, the registry and the dispatch pipeline.
//!
//! A model emits a tool call (`{id, name, arguments}`); the [`Pipeline`] decides whether it may
//! run, runs it under limits, and hands back exactly one [`ToolResult`] for that id. The stages,
//! in order (see [`pipeline`]): resolve, sanitize, decode, guard, authorize, budget, execute,
//! finish, record.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use toolgate_core::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct AddArgs { a: i64, b: i64 }
//! #[derive(Serialize, JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! struct Add;
//! impl TypedTool for Add {
//!     type Args = AddArgs;
//!     type Output = Sum;
//!     fn spec(&self) -> ToolSpecBuilder {
//!         ToolSpec::builder("add").description("Adds two integers.").effects(Effects::read_only())
//!     }
//!     async fn call(&self, a: AddArgs, _: ToolContext) -> Result<Sum, ToolError> {
//!         Ok(Sum { sum: a.a + a.b })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let pipeline = Pipeline::builder(Registry::builder().tool(Add).build().unwrap()).build();
//! let session = pipeline.session("s1").build().unwrap();
//! let result = pipeline
//!     .dispatch(ToolCall::new("call-1", "add", serde_json::json!({"a": 2, "b": 3})), &session)
//!     .await;
//! assert_eq!(result.call_id.as_str(), "call-1");
//! assert_eq!(result.structured_content, Some(serde_json::json!({"sum": 5})));
//! # });
//! ```

#![deny(missing_docs)]

pub mod approval;
pub mod audit;
pub mod budget;
pub mod call;
pub mod context;
pub mod dynamic;
pub mod egress;
pub mod error;
pub mod escape;
pub mod grant;
pub mod import;
pub mod json;
pub mod ledger;
pub mod pattern;
pub mod pipeline;
pub mod policy;
pub mod principal;
pub mod progress;
pub mod provider;
pub mod rate;
pub mod redact;
pub mod registry;
pub mod result;
pub mod results;
pub mod sanitize;
pub mod schema;
pub mod search;
mod seen_ids;
pub mod session;
pub mod spec;
pub mod suggest;
pub mod telemetry;
pub mod tool;
pub mod truncate;
pub mod typed;
pub mod workspace;

pub use approval::{
    show_preview, ApprovalAnswer, ApprovalRequest, Approver, NobodyApprover, PreApproved,
};
pub use audit::{
    Approval, AuditCommit, AuditError, AuditRecord, AuditSink, JsonlAuditSink, MemoryAuditSink,
    NullAuditSink, Outcome,
};
pub use budget::Budgets;
pub use call::{Arguments, CallId, ToolCall};
pub use context::{BudgetLeft, ToolContext};
pub use dynamic::DynamicTool;
pub use error::{ArgumentFault, ErrorKind, RegistrationError, ToolError};
pub use grant::{
    Grant, GrantError, GrantFilter, GrantRequest, GrantScope, GrantStore, MemoryGrantStore,
    NewGrant,
};
pub use ledger::{Ledger, LedgerEvent, LedgerOptions, MemoryLedger, Reconciliation};
pub use pipeline::{Pipeline, PipelineBuilder, RetryPolicy};
pub use policy::{Decision, DefaultPolicy, Policy, PolicyInput, Verdict};
pub use principal::Principal;
pub use progress::{ProgressReport, ProgressSink};
pub use registry::{Entry, IntoTool, Profile, Registry, RegistryBuilder, Selector};
pub use result::{
    Content, Omission, OmissionUnit, ResourceContents, ResourceLink, ToolOutput, ToolResult,
    Truncation,
};
pub use results::{MemoryResultStore, ResultStore};
pub use session::{Session, SessionBuilder};
pub use spec::{Effects, Example, Risk, ToolSpec, ToolSpecBuilder};
/// The cancellation token a call's context carries (from `tokio-util`).
pub use tokio_util::sync::CancellationToken;
pub use tool::{Access, Args, ResolvedResource, Resource, Tool};
pub use typed::{Typed, TypedTool};
pub use workspace::{PathError, Workspace, WsPath};
