//! Errors, split by who reads them.
//!
//! - [`ToolError`] is for the model: it becomes the error of a [`crate::ToolResult`] and says
//!   what was wrong and what to send instead. Every stage of the pipeline and every handler
//!   reports failures as a `ToolError` of one [`ErrorKind`].
//! - [`RegistrationError`] is for the host: it is returned while building a registry or a
//!   pipeline and never reaches a model.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// The error taxonomy: one kind for every stage of the pipeline (ARCHITECTURE.md, "Error
/// taxonomy"). Serialized in `snake_case`, for example `"unsafe_input"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// resolve: the tool is not registered, or not visible to the caller's profile.
    UnknownTool,
    /// sanitize: a string argument holds something refused (NUL, control characters), or the
    /// arguments are not a JSON object; also a call id used twice in a session.
    InvalidInput,
    /// decode: the arguments are not JSON, or do not satisfy the tool's `inputSchema`.
    InvalidArguments,
    /// guard: semantically unsafe input; the reason says which check (`path_outside_workspace`,
    /// `protected_path`, `url_blocked`, `limit_exceeded`, ...).
    UnsafeInput,
    /// authorize: the profile or a policy rule denies the call.
    PermissionDenied,
    /// authorize: the call needed approval and the approver rejected it (or nobody could answer).
    ApprovalRejected,
    /// authorize: the approver rejected the call with feedback for the model.
    ApprovalCorrected,
    /// The call asked its client for input (an approval question, or what a tool asked for
    /// on an MCP 2026-07-28 request: an input-required result, SEP-2322) and did not run or
    /// finish; the client sends the call again with the answers. Neither a rejection nor a
    /// failure: audited with the outcome `input_required` and no error kind.
    InputRequired,
    /// budget: a rate limit or the daily quota has no call left for now; the details'
    /// `retry_after_ms` says when the call may be sent again.
    RateLimited,
    /// budget: a session or tool budget is used up.
    BudgetExhausted,
    /// execute: another call with the same idempotency key is still running; the model waits
    /// and asks again with the same key, and then gets that call's result.
    InProgress,
    /// execute: the call ran past its timeout (the tool is idempotent, so it may be sent again).
    Timeout,
    /// execute: the call was cancelled by the caller.
    Cancelled,
    /// execute: whether a side-effecting call's effect happened is unknown: it timed out, or an
    /// earlier call with its idempotency key ended without recording its outcome (a crash, a
    /// SIGKILL) and nothing has settled it yet.
    OutcomeUnknown,
    /// execute or finish: the handler failed, or its output did not satisfy its `outputSchema`.
    ToolFailed,
    /// a fault of toolgate itself or of the host (a panicking handler, an unavailable store).
    Internal,
}

impl ErrorKind {
    /// Every kind, in pipeline order.
    pub const ALL: [ErrorKind; 16] = [
        ErrorKind::UnknownTool,
        ErrorKind::InvalidInput,
        ErrorKind::InvalidArguments,
        ErrorKind::UnsafeInput,
        ErrorKind::PermissionDenied,
        ErrorKind::ApprovalRejected,
        ErrorKind::ApprovalCorrected,
        ErrorKind::InputRequired,
        ErrorKind::RateLimited,
        ErrorKind::BudgetExhausted,
        ErrorKind::InProgress,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::OutcomeUnknown,
        ErrorKind::ToolFailed,
        ErrorKind::Internal,
    ];

    /// The wire name, for example `"unsafe_input"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::UnsafeInput => "unsafe_input",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::ApprovalRejected => "approval_rejected",
            ErrorKind::ApprovalCorrected => "approval_corrected",
            ErrorKind::InputRequired => "input_required",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::BudgetExhausted => "budget_exhausted",
            ErrorKind::InProgress => "in_progress",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::OutcomeUnknown => "outcome_unknown",
            ErrorKind::ToolFailed => "tool_failed",
            ErrorKind::Internal => "internal",
        }
    }

    /// Whether the model can act on an error of this kind and the session goes on (`true`), or
    /// the caller's loop should stop or escalate (`false`, fatal).
    pub const fn is_recoverable(self) -> bool {
        match self {
            ErrorKind::InvalidInput
            | ErrorKind::InvalidArguments
            | ErrorKind::UnsafeInput
            | ErrorKind::ApprovalCorrected
            | ErrorKind::InputRequired
            | ErrorKind::InProgress
            | ErrorKind::RateLimited
            | ErrorKind::Timeout
            | ErrorKind::OutcomeUnknown
            | ErrorKind::ToolFailed => true,
            ErrorKind::UnknownTool
            | ErrorKind::PermissionDenied
            | ErrorKind::ApprovalRejected
            | ErrorKind::BudgetExhausted
            | ErrorKind::Cancelled
            | ErrorKind::Internal => false,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One fault in the arguments of a call, located by a JSON pointer (RFC 6901) into the
/// arguments object (`""` is the whole object, `"/path"` the `path` argument).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgumentFault {
    /// JSON pointer of the offending value inside the arguments.
    pub pointer: String,
    /// What is wrong with it, for the model.
    pub message: String,
}

/// An error for the model: the error part of a tool result.
///
/// Build one with the constructor of its kind, for example
/// `ToolError::unsafe_input("path_outside_workspace", "path ../x is outside the workspace")`.
/// Messages say what was wrong and what to send instead; they never carry stack traces or
/// secrets (details for the operator go in [`ToolError::details`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// The kind, which decides recoverable or fatal.
    pub kind: ErrorKind,
    /// A finer reason inside the kind, for example `path_outside_workspace` or `not_found`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Cow<'static, str>>,
    /// The message for the model: what was wrong and what to send instead.
    pub message: String,
    /// Faults located in the arguments (decode and sanitize stages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<ArgumentFault>,
    /// Structured details for the operator (never shown as the message). Boxed so an error
    /// stays small on the `Result` paths of every stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
    /// Set by a handler when the failure is transient (a retry of an idempotent tool may
    /// succeed). Only the execute stage reads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    /// Set by the handler of a side-effecting tool when it failed before acting (nothing was
    /// sent, written or started): the idempotency ledger then releases the call's key, so the
    /// same call may run again, instead of recording the failure as the key's result. Only the
    /// execute stage reads it; it is not part of the result a model or client sees.
    #[serde(skip)]
    pub no_effect: bool,
}

impl ToolError {
    /// An error of `kind` with a message for the model.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            reason: None,
            message: message.into(),
            faults: Vec::new(),
            details: None,
            transient: false,
            no_effect: false,
        }
    }

    /// `tool_failed`: the handler could not do what was asked.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ToolFailed, message)
    }

    /// `tool_failed` with reason `not_found`: the named thing does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::failed(message).with_reason("not_found")
    }

    /// `unsafe_input` with a reason such as `path_outside_workspace` or `limit_exceeded`.
    pub fn unsafe_input(reason: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsafeInput, message).with_reason(reason)
    }

    /// `invalid_input`: the input was refused by the sanitize stage.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// `invalid_arguments` listing every fault found.
    pub fn invalid_arguments(message: impl Into<String>, faults: Vec<ArgumentFault>) -> Self {
        let mut e = Self::new(ErrorKind::InvalidArguments, message);
        e.faults = faults;
        e
    }

    /// `internal`: a fault of toolgate or the host, not of the call.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets operator details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// Marks the error transient: an idempotent tool may be retried.
    pub fn transient(mut self) -> Self {
        self.transient = true;
        self
    }

    /// Marks the error as one that happened before the tool acted (the `no_effect` field): a
    /// side-effecting call that failed this way may run again with the same idempotency key.
    pub fn no_effect(mut self) -> Self {
        self.no_effect = true;
        self
    }

    /// Whether the session goes on after this error (see [`ErrorKind::is_recoverable`]).
    pub fn is_recoverable(&self) -> bool {
        self.kind.is_recoverable()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(reason) = &self.reason {
            write!(f, " ({reason})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ToolError {}

/// An error for the host while registering tools or building a registry or pipeline.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The name breaks MCP's rule: 1 to 128 characters of `A-Za-z0-9_.-`.
    #[error("tool name {name:?} is invalid: {why}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A schema does not compile; `pointer` locates the fault inside that schema.
    #[error("tool {tool}: {which} is invalid at {pointer:?}: {message}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// JSON pointer of the fault inside the schema.
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// The same name and version are registered twice.
    #[error("tool {name} version {version} is registered twice")]
    Duplicate {
        /// The tool.
        name: String,
        /// The version.
        version: String,
    },
    /// A profile is defined twice, or too many profiles are defined.
    #[error("profile {name}: {why}")]
    InvalidProfile {
        /// The profile.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// Another problem with a definition.
    #[error("tool {tool}: {message}")]
    Invalid {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
}

impl RegistrationError {
    /// The tool the error is about, when it is about one (not a profile).
    pub fn tool(&self) -> Option<&str> {
        match self {
            RegistrationError::InvalidName { name, .. }
            | RegistrationError::Duplicate { name, .. } => Some(name),
            RegistrationError::InvalidSchema { tool, .. }
            | RegistrationError::Invalid { tool, .. } => Some(tool),
            RegistrationError::InvalidProfile { .. } => None,
        }
    }
}
