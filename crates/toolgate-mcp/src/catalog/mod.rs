//! What a server serves besides tools: resources, resource templates, prompts and completion
//! (specification 2025-11-25, "Resources", "Prompts", "Completion"), from [`Catalog`]s.
//!
//! A catalog lists; it never reads. Every `resources/read` and `prompts/get` is a call of a
//! tool of the pipeline's registry (an unlisted one, [`toolgate_core::registry::UNLISTED_TAG`])
//! that the catalog names for the URI or the prompt ([`Target`]), dispatched like a
//! `tools/call` in the request's toolgate session: the policy decides it (profiles, `path:`
//! rules, confinement, approvals, budgets), finish cleans and truncates its output (a text past
//! the byte limit is a preview naming its `read_result` handle) and the audit records it. A
//! catalog that lists through the pipeline too (the workspace's files) calls through
//! [`Calls`].
//!
//! | catalog | serves | file |
//! |---|---|---|
//! | [`WorkspaceCatalog`] | the workspace's files as `file:///` resources, the `file:///{path}` template, completion of its `path` | `workspace.rs` |
//! | the gateway's (toolgate-cli) | upstream resources, templates and prompts, namespaced | |
//! | the conformance fixture's | the suite's `test://` resources and `test_*` prompts | `bin/conformance-fixture/catalog.rs` |
//!
//! Several catalogs are served as one ([`Catalogs`]): lists are concatenated in catalog order
//! and paged with opaque cursors; a URI or prompt name goes to the first catalog that claims
//! it. A capability is declared only when some catalog serves it.
//!
//! A catalog that answers `resources/subscribe` is handed the session's [`Subscriber`] to
//! send that resource's updates to, and is told when the session ends
//! ([`Catalog::session_ended`]); one whose lists change says so on
//! [`Catalog::list_changes`], and every session is sent the list's `list_changed`.

mod calls;
pub(crate) mod convert;
mod serve;
mod subscriber;
mod workspace;

pub use calls::Calls;
pub use convert::{read_error, to_prompt_result, to_read_result};
pub use subscriber::Subscriber;
pub use workspace::WorkspaceCatalog;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, ErrorData, JsonObject, Prompt, Resource,
    ResourceTemplate,
};
use serde_json::Value;
use std::sync::Arc;

/// What a catalog serves, for the capabilities the server declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Serves {
    /// Resources (and resource templates).
    pub resources: bool,
    /// The legacy `resources/subscribe` and `resources/unsubscribe` (2025-11-25) are answered
    /// and updates sent. The `subscribe` capability is declared in the answer to `initialize`
    /// (revisions before 2026-07-28) only: on 2026-07-28 it would promise resource
    /// subscriptions on `subscriptions/listen` (SEP-2575), which toolgate does not serve.
    pub subscribe: bool,
    /// Prompts.
    pub prompts: bool,
    /// `completion/complete`.
    pub completions: bool,
    /// Its resources and prompts lists may change while served, said on
    /// [`Catalog::list_changes`] (`listChanged` declared for both in the answer to
    /// `initialize`, as `subscribe` is).
    pub list_changed: bool,
}

/// A list of a catalog that changed: every session is sent its `list_changed` notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListChanged {
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/prompts/list_changed`.
    Prompts,
}

/// The tool call that serves one `resources/read` or `prompts/get`: the tool's name in the
/// registry and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The tool's name.
    pub tool: String,
    /// Its arguments (an object).
    pub arguments: Value,
}

/// One page of a list and the cursor of the next.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// The catalog's own cursor for the next page, when there is one.
    pub next: Option<String>,
}

impl<T> Page<T> {
    /// No items, no next page.
    pub fn empty() -> Self {
        Page {
            items: Vec::new(),
            next: None,
        }
    }
}

/// A source of resources, resource templates and prompts, and their completion.
///
/// Every method has a default that serves nothing, so a catalog implements what it serves.
/// Errors are JSON-RPC errors for the client: `-32602` for what the request got wrong (an
/// unknown prompt, a cursor this catalog did not hand out), saying what to send instead.
pub trait Catalog: Send + Sync + 'static {
    /// What it serves.
    fn serves(&self) -> Serves;

    /// One page of its resources after `cursor` (one of its own `next`), as the session of
    /// `calls` may see them.
    fn list_resources<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Page<Resource>, ErrorData>> {
        let _ = (calls, cursor);
        Box::pin(std::future::ready(Ok(Page::empty())))
    }

    /// Its resource templates.
    fn list_resource_templates<'a>(
        &'a self,
        calls: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, ErrorData>> {
        let _ = calls;
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// Its prompts.
    fn list_prompts<'a>(
        &'a self,
        calls: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<Prompt>, ErrorData>> {
        let _ = calls;
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// The call that reads `uri`, when this catalog serves it.
    fn read(&self, uri: &str) -> Option<Target> {
        let _ = uri;
        None
    }

    /// The call that gets the prompt `name` with `arguments`, when this catalog serves it;
    /// `Err` for arguments the prompt cannot take (a required one missing).
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a JsonObject,
    ) -> BoxFuture<'a, Option<Result<Target, ErrorData>>> {
        let _ = (name, arguments);
        Box::pin(std::future::ready(None))
    }

    /// Completion values for `request`, when its reference (a prompt, a resource template) is
    /// this catalog's.
    fn complete<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        request: &'a CompleteRequestParams,
    ) -> Option<BoxFuture<'a, Result<CompletionInfo, ErrorData>>> {
        let _ = (calls, request);
        None
    }

    /// Subscribes `subscriber` to (`on`) or unsubscribes it from `uri`, when this catalog
    /// serves it: from then on until it unsubscribes or its session ends, the catalog sends
    /// it `notifications/resources/updated` for `uri` ([`Subscriber::updated`]). `calls` is
    /// the request's, for the policy to decide a subscription as a read.
    ///
    /// Errors are the client's: `-32602` for a resource it may not subscribe to (saying why)
    /// or an unsubscribe without a subscribe.
    fn subscribe<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        subscriber: &'a Subscriber,
        uri: &'a str,
        on: bool,
    ) -> Option<BoxFuture<'a, Result<(), ErrorData>>> {
        let _ = (calls, subscriber, uri, on);
        None
    }

    /// The session `subscriber` (a [`Subscriber::id`]) is over: its subscriptions end.
    /// Called from the session's drop: must not block.
    fn session_ended(&self, subscriber: u64) {
        let _ = subscriber;
    }

    /// Where the catalog says a list of it changed, for one session, when its lists can
    /// change ([`Serves::list_changed`]); the stream ends when the catalog is gone.
    fn list_changes(&self) -> Option<BoxStream<'static, ListChanged>> {
        None
    }
}

/// Several catalogs served as one, in order.
#[derive(Clone, Default)]
pub struct Catalogs(pub(crate) Vec<Arc<dyn Catalog>>);

impl std::fmt::Debug for Catalogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogs")
            .field("count", &self.0.len())
            .field("serves", &self.serves())
            .finish()
    }
}

impl Catalogs {
    /// What any of them serves.
    pub fn serves(&self) -> Serves {
        self.0.iter().fold(Serves::default(), |a, c| {
            let s = c.serves();
            Serves {
                resources: a.resources || s.resources,
                subscribe: a.subscribe || s.subscribe,
                prompts: a.prompts || s.prompts,
                completions: a.completions || s.completions,
                list_changed: a.list_changed || s.list_changed,
            }
        })
    }

    /// Every catalog's list changes, for one session (never ending when there are none).
    pub(crate) fn list_changes(
        &self,
    ) -> futures::stream::SelectAll<BoxStream<'static, ListChanged>> {
        let mut all = futures::stream::select_all(self.0.iter().filter_map(|c| c.list_changes()));
        all.push(Box::pin(futures::stream::pending()));
        all
    }

    /// The session `subscriber` is over.
    pub(crate) fn session_ended(&self, subscriber: u64) {
        for c in &self.0 {
            c.session_ended(subscriber);
        }
    }

    /// Adds `catalog` after the others.
    pub fn push(&mut self, catalog: Arc<dyn Catalog>) {
        self.0.push(catalog);
    }
}
