//! The client side of one upstream connection (rmcp's [`ClientHandler`]): progress an
//! upstream reports for a call goes to that call's caller;
//! `notifications/tools/list_changed` and `notifications/prompts/list_changed` ask the
//! upstream's supervisor to list its tools or prompts again (through pinning and
//! quarantine); `notifications/resources/list_changed` is passed on to every session and
//! `notifications/resources/updated` to the sessions subscribed to that resource
//! ([`crate::subscriptions`]); `notifications/message` to the client of the call in flight
//! ([`crate::logs`]); `sampling/createMessage` and `elicitation/create` to that client too,
//! where the upstream's entry opts in ([`crate::relay`]: only then is the capability
//! declared); a request it cannot read as one of those, or of another method, is answered
//! saying what was wrong (`relay/unreadable.rs`), and a stdio upstream's output goes
//! through [`crate::stdout_lines`] first, so even one whose JSON rmcp cannot read is answered.
//! Progress, log messages, resource updates and
//! `resources/list_changed` are metered first ([`crate::flood`]): what is over the
//! upstream's budget is dropped.

// logging: deprecated by SEP-2577, still what 2025-11-25 servers and clients use.
#![allow(deprecated)]

use crate::catalog::CatalogChange;
use crate::flood::Budgets;
use crate::logs::LogRoutes;
use crate::relay::Relay;
use crate::subscriptions::Subscriptions;
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, ElicitationCapability,
    ErrorData, FormElicitationCapability, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::ClientHandler;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{broadcast, Notify};
use toolgate_config::upstreams::{NotificationKind, RelayKind};
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
    /// Its requests to the client of its call in flight.
    pub(crate) relay: Relay,
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

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.relay.create_message(params, context.ct).await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.relay.create_elicitation(params, context.ct).await
    }

    /// A request rmcp could not read as one the gateway serves: answered saying what was
    /// wrong ([`Relay::unreadable`]).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        Err(self.relay.unreadable(request))
    }

    fn get_info(&self) -> ClientConfig {
        let mut implementation = Implementation::default();
        implementation.name = "toolgate-gateway".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        ClientConfig::new(capabilities(&self.relay.kinds), implementation)
    }
}

/// What the gateway declares to an upstream whose entry relays `kinds`: `sampling` (no tools,
/// no context) and form-mode `elicitation` for those listed, nothing else.
fn capabilities(kinds: &[RelayKind]) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    if kinds.contains(&RelayKind::Sampling) {
        caps.sampling = Some(SamplingCapability::default());
    }
    if kinds.contains(&RelayKind::Elicitation) {
        caps.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
    }
    caps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_entry_relays_is_declared() {
        let none = capabilities(&[]);
        assert_eq!(none, ClientCapabilities::default());
        let sampling = capabilities(&[RelayKind::Sampling]);
        assert!(sampling.sampling.is_some() && sampling.elicitation.is_none());
        let both = capabilities(&[RelayKind::Elicitation, RelayKind::Sampling]);
        let elicitation = both.elicitation.expect("elicitation declared");
        assert!(elicitation.form.is_some(), "form mode");
        assert!(elicitation.url.is_none(), "URL mode is never relayed");
        assert!(both
            .sampling
            .is_some_and(|s| s.tools.is_none() && s.context.is_none()));
    }
}
