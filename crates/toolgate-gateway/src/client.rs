//! The client side of one upstream connection (rmcp's [`ClientHandler`]): progress an
//! upstream reports for a call goes to that call's caller, and
//! `notifications/tools/list_changed` asks the upstream's supervisor to list its tools again.

use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, NumberOrString, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;
use toolgate_core::ToolContext;

/// Where the progress of calls in flight goes, by the progress token sent upstream.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    next: AtomicI64,
    routes: Mutex<HashMap<i64, ToolContext>>,
}

impl ProgressRoutes {
    /// A new token routed to `ctx` until the returned guard is dropped.
    pub(crate) fn route(self: &Arc<Self>, ctx: ToolContext) -> (i64, RouteGuard) {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.routes.lock().insert(token, ctx);
        (
            token,
            RouteGuard {
                routes: self.clone(),
                token,
            },
        )
    }
}

/// Removes a progress route when the call ends.
pub(crate) struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    token: i64,
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
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let NumberOrString::Number(token) = params.progress_token.0 else {
            return;
        };
        let ctx = self.progress.routes.lock().get(&token).cloned();
        if let Some(ctx) = ctx {
            ctx.report_progress(params.progress, params.total, params.message);
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        let mut implementation = Implementation::default();
        implementation.name = "toolgate-gateway".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        ClientConfig::new(ClientCapabilities::default(), implementation)
    }
}
