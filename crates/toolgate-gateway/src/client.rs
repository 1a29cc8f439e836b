//! The client side of one upstream connection (rmcp's [`ClientHandler`]): progress an
//! upstream reports for a call goes to that call's caller;
//! `notifications/tools/list_changed` and `notifications/prompts/list_changed` ask the
//! upstream's supervisor to list its tools or prompts again (through pinning and
//! quarantine); `notifications/resources/list_changed` is passed on to every session and
//! `notifications/resources/updated` to the sessions subscribed to that resource
//! ([`crate::subscriptions`]); `notifications/message` to the client of the call in flight
//! ([`crate::logs`]). Progress, log messages, resource updates and
//! `resources/list_changed` are metered first ([`crate::flood`]): what is over the
//! upstream's budget is dropped.

// logging: deprecated by SEP-2577, still what 2025-11-25 servers and clients use.
#![allow(deprecated)]

use crate::catalog::CatalogChange;
use crate::flood::Budgets;
use crate::logs::LogRoutes;
use crate::subscriptions::Subscriptions;
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{broadcast, Notify};
use toolgate_config::upstreams::NotificationKind;
use toolgate_core::ToolContext;

/// Where the progress of calls in flight goes, by the progress token of their request.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    routes: Mutex<HashMap<ProgressToken, ToolContext>>,
}

impl ProgressRoutes {
    /// Routes `token`'s progress to `ctx` until the returned guard is dropped.
    pub(crate) fn route(self: &Arc<Self>, token: ProgressToken, ctx: ToolContext) -> RouteGuard {
        self.routes.lock().insert(token.clone(), ctx);
        RouteGuard {
            routes: self.clone(),
            token,
        }
    }
}

/// Removes a progress route when the call ends.
pub(crate) struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.routes.lock().remove(&self.token);
    }
}

/// The handler of one upstream connection.
pub(crate) struct Handler {
    pub(crate) progress: Arc<ProgressRoutes>,
    pub(crate) list_changed: Arc<Notify>,
    pub(crate) prompts_changed: Arc<Notify>,
    pub(crate) subscriptions: Arc<Subscriptions>,
    pub(crate) catalog_changes: broadcast::Sender<CatalogChange>,
    pub(crate) logs: Arc<LogRoutes>,
    /// What the upstream may send unasked.
    pub(crate) budgets: Arc<Budgets>,
    /// The upstream's name, for the log and its log messages' logger.
    pub(crate) upstream: String,
}

impl Handler {
    /// Whether a notification of `kind` is within the upstream's budget ([`crate::flood`]).
    fn admit(&self, kind: NotificationKind) -> bool {
        self.budgets.of(kind).admit()
    }
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // a dropped progress notification leaves the call's result as it is; the client's
        // last progress may be an earlier one
        if !self.admit(NotificationKind::Progress) {
            return;
        }
        let ctx = self
            .progress
            .routes
            .lock()
            .get(&params.progress_token)
            .cloned();
        if let Some(ctx) = ctx {
            ctx.report_progress(params.progress, params.total, params.message);
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if !self.admit(NotificationKind::Log) {
            return;
        }
        if !self.logs.deliver(&self.upstream, params) {
            tracing::debug!(upstream = %self.upstream, "a log message of the upstream with no one session's call in flight: dropped");
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.prompts_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if !self.admit(NotificationKind::ResourcesListChanged) {
            return;
        }
        // no one listening is no error
        let _ = self.catalog_changes.send(CatalogChange::Resources);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if !self.admit(NotificationKind::ResourceUpdated) {
            return;
        }
        if self.subscriptions.updated(&params.uri) == 0 {
            tracing::debug!(upstream = %self.upstream, "an update of a resource no session is subscribed to: dropped");
        }
    }

    fn get_info(&self) -> ClientConfig {
        let mut implementation = Implementation::default();
        implementation.name = "toolgate-gateway".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        ClientConfig::new(ClientCapabilities::default(), implementation)
    }
}
