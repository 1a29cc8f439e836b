//! The [`Tool`] trait every registered tool implements, and the resources a call declares.
//!
//! Most tools are written as a [`crate::TypedTool`] (schemas derived from Rust types) or a
//! [`crate::DynamicTool`] (a JSON definition and a handler on JSON values); both become a
//! `Tool` at registration and go through the same pipeline.

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::ledger::Reconciliation;
use crate::result::ToolOutput;
use crate::spec::ToolSpec;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::any::Any;
use std::fmt;

/// Decoded arguments, type-erased between the decode stage and the handler. A typed tool puts
/// its `Args` struct in here; a dynamic tool its JSON value. `Sync`, since the stages borrow
/// them while an approver is asked, and a tool's reconcile hook across an `await`.
pub struct Args(Box<dyn Any + Send + Sync>);

impl Args {
    /// Wraps decoded arguments.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        Args(Box::new(value))
    }

    /// Borrows the arguments as `T`, or `None` when they are of another type.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }

    /// Takes the arguments as `T`.
    ///
    /// # Errors
    /// Gives the arguments back when they are of another type.
    pub fn downcast<T: Any>(self) -> Result<T, Args> {
        self.0.downcast().map(|b| *b).map_err(Args)
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Args(..)")
    }
}

/// Read or write access to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// The call reads it.
    Read,
    /// The call creates, modifies or deletes it.
    Write,
}

/// A resource a call will touch, as the tool declares it from the call's arguments. The guard
/// stage resolves paths inside the workspace (refusing any that lead out) and the authorize
/// stage decides over the resolved resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Resource {
    /// A path argument as the model sent it (relative to the workspace root, or absolute under
    /// it).
    Path {
        /// The path as sent.
        path: String,
        /// Read or write.
        access: Access,
    },
    /// A URL the call will fetch.
    Url {
        /// The URL as sent.
        url: String,
    },
    /// A command line the call will run.
    Command {
        /// The command as sent.
        command: String,
    },
    /// A command line the call may run, though it cannot be known to: text a command of the
    /// call hands to a program the rules cannot read, which may run it as a command line
    /// (`./mysh -c 'touch x'`: `mysh` may be a shell). Deny and ask rules over commands match
    /// it as they match a [`Resource::Command`], read by
    /// [`crate::pattern::program::read_possible`] (a first word in parentheses, `(unparsed)`,
    /// marks the words of a line that could not be read, searched from any word); it needs
    /// no allow rule or grant, and none covers it.
    PossibleCommand {
        /// The command line.
        command: String,
    },
    /// A recipient of a message the call will send (`recipient:` rules and grants).
    Recipient {
        /// The email address as sent (`local@domain`, without a display name).
        address: String,
    },
}

impl Resource {
    /// A path the call reads.
    pub fn read(path: impl Into<String>) -> Self {
        Resource::Path {
            path: path.into(),
            access: Access::Read,
        }
    }

    /// A path the call writes.
    pub fn write(path: impl Into<String>) -> Self {
        Resource::Path {
            path: path.into(),
            access: Access::Write,
        }
    }
}

/// A resource after the guard stage: paths are canonical and inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolvedResource {
    /// A canonical path inside the workspace.
    Path {
        /// The resolved path.
        path: crate::WsPath,
        /// Read or write.
        access: Access,
    },
    /// A URL.
    Url(String),
    /// A command line.
    Command(String),
    /// A command line the call may run ([`Resource::PossibleCommand`]): only the rules that
    /// restrict match it.
    PossibleCommand(String),
    /// A recipient's email address, its domain in lower-case ASCII
    /// ([`crate::pattern::normalize_address`]).
    Recipient(String),
}

impl ResolvedResource {
    /// Whether only the rules that restrict (deny, ask) match the resource, so no allow rule
    /// or grant is needed for it: a [`ResolvedResource::PossibleCommand`].
    pub fn only_restricted(&self) -> bool {
        matches!(self, ResolvedResource::PossibleCommand(_))
    }
}

/// A registered tool: its contract and its handler, type-erased.
///
/// The pipeline calls, in order: [`Tool::decode`] (after the arguments passed `inputSchema`),
/// [`Tool::guard`] (semantic checks and the resources the call touches), [`Tool::preview`]
/// (only when the call is put to an approver), then, once the call is authorized and within
/// budget, [`Tool::call`]. A retry of an idempotent tool decodes again.
///
/// A call bound to fail is refused before a person is asked about it: the checks that need
/// no side effect run in `guard` (every call pays for them) or, when they cost I/O a hot
/// read-only tool should not pay on every call, in `preview` (paid only when someone is
/// asked). `call` makes the same checks again on what it acts on, since the world can change
/// in between (and while a person thinks).
pub trait Tool: Send + Sync + 'static {
    /// The contract.
    fn spec(&self) -> &ToolSpec;

    /// Decodes arguments that already satisfy `inputSchema`.
    ///
    /// # Errors
    /// `invalid_arguments` when they do not fit the handler's types.
    fn decode(&self, arguments: &Value) -> Result<Args, ToolError>;

    /// Semantic checks beyond the schema, and the resources the call will touch. The default
    /// declares none.
    ///
    /// # Errors
    /// `unsafe_input` (with a reason) or `invalid_arguments` for a call that must not run.
    fn guard(&self, args: &Args, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let _ = (args, ctx);
        Ok(Vec::new())
    }

    /// Runs only when the call is about to be put to an approver, after [`Tool::guard`]
    /// passed: looks (without side effects) at what the call would act on, and says what it
    /// would change, for the person asked (a unified diff for a file edit: bounded text,
    /// which the approver escapes), or `None` to show the arguments alone. The default
    /// gives `None`.
    ///
    /// # Errors
    /// Why the call would fail (the file does not exist, the text does not match): the call
    /// ends with this error and nobody is asked.
    fn preview(&self, args: &Args, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let _ = (args, ctx);
        Ok(None)
    }

    /// The effect a call of a side-effecting tool would have, in a canonical form, for the
    /// idempotency ledger ([`crate::ledger`]): when `Some`, the key a call without one derives
    /// and the hash every key's arguments are checked against are computed from this value
    /// instead of the arguments as sent. Two calls that would do the same thing (the same
    /// message, whatever handles name its draft and files) are then one call to the ledger,
    /// and two that would do different things never are; an explicit key sent with another
    /// effect is an `idempotency_conflict`, as with other arguments.
    ///
    /// Called after decode, before the ledger is asked, for a call of a tool that is neither
    /// read-only nor idempotent and runs under a key; it must not act (it may read what the
    /// handles it resolves stand for). The default gives `None`: the arguments as sent.
    ///
    /// # Errors
    /// Why the call cannot run (a handle unknown to the session, or stale): the call ends with
    /// this error and the ledger is not asked.
    fn effect(&self, args: &Args, ctx: &ToolContext) -> Result<Option<Value>, ToolError> {
        let _ = (args, ctx);
        Ok(None)
    }

    /// Runs the call. The pipeline applies the timeout, cancellation and retries around it.
    fn call(&self, args: Args, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;

    /// Whether the spec's `inputSchema` and `outputSchema` are derived from Rust types (as a
    /// [`crate::TypedTool`]'s are), so they compile: a registry built with
    /// [`crate::registry::RegistryBuilder::defer_derived_schemas`] then compiles them at the
    /// tool's first call. `false` (the default) for a schema written by hand, imported or
    /// sent by an upstream: compiled, and a fault reported, at registration.
    fn schemas_derived(&self) -> bool {
        false
    }

    /// The reconcile hook of a side-effecting tool: asks the system the tool acts on whether
    /// an earlier call with idempotency key `key` and these arguments had its effect. The
    /// pipeline calls it when a call finds its key's ledger entry unsettled (the earlier call
    /// timed out, panicked, or its process died before recording an end), under the tool's
    /// timeout: [`Reconciliation::Done`] settles the entry with that result (returned as a
    /// replay), [`Reconciliation::NotDone`] lets this call run, and
    /// [`Reconciliation::Unknown`] (or an error) leaves the entry for the operator
    /// (`toolgate ledger resolve`) and the call gets `outcome_unknown`.
    ///
    /// `None` (the default): the tool has no way to ask, so only the operator settles.
    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        args: &'a Args,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'a, Result<Reconciliation, ToolError>>> {
        let _ = (key, args, ctx);
        None
    }
}
