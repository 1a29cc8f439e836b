//! [`Connection`]: rmcp's `ServerHandler` for one MCP session, written by hand over the
//! registry and the pipeline.
//!
//! `tools/call` in order:
//! 1. the call id is the JSON-RPC request id as a string (numbers in decimal), unique in the
//!    session as MCP requires of request ids; the arguments are the request's (`{}` if absent),
//!    with the idempotency key of `params.idempotencyKey` or `_meta` ([`crate::idempotency`])
//! 2. the call runs in the connection's toolgate session, or, for a stateless HTTP request
//!    (no `Mcp-Session-Id`), in its caller's ([`crate::caller`]), so budgets and result
//!    handles hold across a caller's requests
//! 3. the call is dispatched with the request's cancellation token: the session's id gate's
//!    [`ClientCancel`] (fired by `notifications/cancelled`) or, on a stateless HTTP request,
//!    rmcp's own (fired when its response stream closes: except for a side-effecting call,
//!    which runs to its end so the client's re-send is answered from the idempotency ledger);
//!    rmcp's token, which also fires when the session ends, cancels it too; inside the
//!    approval scope of this client
//!    ([`crate::approval`])
//! 4. with a `progressToken`, the tool's own progress reports, or "still running" progress
//!    every interval until it sends one ([`crate::progress`])
//! 5. an unknown tool is JSON-RPC `-32602`; a question for the client on 2026-07-28 is an
//!    input-required result; anything else is the call's result ([`crate::result`])
//!
//! A request for one of MCP's methods whose params rmcp could not read arrives as a custom
//! request and is answered `-32602` (`misread.rs`).

// logging/setLevel and notifications/message: deprecated by SEP-2577, still what 2025-11-25
// clients use.
#![allow(deprecated)]

use crate::approval::{in_call, CallClient, LeftBehind};
use crate::catalog::{ListChanged, Serves, Subscriber};
use crate::jsonrpc::ClientCancel;
use crate::server::Shared;
use futures::StreamExt;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, ErrorData, GetPromptRequestParams, GetPromptResponse, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, NumberOrString, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::ServerHandler;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolgate_core::{Session, ToolCall, ToolResult};

/// No `logging/setLevel` yet (no `logLevel` in a 2026-07-28 request's `_meta`): the server
/// sends no log messages.
pub(crate) const LEVEL_UNSET: u8 = u8::MAX;

/// The id of the next connection, for its resource subscriptions ([`Subscriber`]).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The handler of one MCP session (a stdio connection, an HTTP session, or one stateless
/// HTTP request), with its own toolgate session, which ends (its session grants with it) when
/// the handler is dropped.
pub struct Connection {
    shared: Arc<Shared>,
    session: Session,
    /// Unique in the process: the session's resource subscriptions are kept under it.
    id: u64,
    log_level: AtomicU8,
    /// Cancelled when the connection is dropped (its session is over).
    ended: CancellationToken,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>, session: Session) -> Self {
        Connection {
            shared,
            session,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            log_level: AtomicU8::new(LEVEL_UNSET),
            ended: CancellationToken::new(),
        }
    }

    /// The toolgate session of this connection.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The caller's session when the request is a stateless HTTP one.
    fn caller_session(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<Arc<crate::caller::CallerSession>> {
        let parts = ctx.extensions.get::<http::request::Parts>()?;
        let key = crate::caller::CallerKey::of(parts)?;
        Some(
            self.shared
                .caller_session(key, parts.extensions.get::<crate::http::Caller>()),
        )
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// This session as a catalog's subscriber, its updates sent through `peer`.
    pub(crate) fn subscriber(&self, peer: rmcp::service::Peer<RoleServer>) -> Subscriber {
        Subscriber::new(self.id, peer)
    }

    async fn dispatch(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let id = request_id(&ctx);
        let key = crate::idempotency::key_of(&ctx.meta)?;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let mut call = ToolCall::new(id, request.name.into_owned(), arguments);
        if let Some(key) = key {
            call = call.with_idempotency_key(key);
        }
        // not boxed again here: `run` boxes the pipeline's future where it makes it, which is
        // what kept 2026-07-28 requests from overflowing a worker's 2 MiB stack in debug builds
        let (result, left) = self
            .run(call, request.request_state, request.input_responses, ctx)
            .await;
        if let Some(error) = crate::result::unknown_tool(&result) {
            return Err(error);
        }
        if let Some(error) = left.protocol_error {
            return Err(error);
        }
        if let Some(question) = left.question {
            return Ok(CallToolResponse::InputRequired(question));
        }
        Ok(CallToolResponse::Complete(
            crate::result::to_call_tool_result(result),
        ))
    }

    /// Runs `call` through the pipeline for the request of `ctx`, as `tools/call` does (and
    /// `resources/read`, `prompts/get` and a catalog's listing, [`crate::catalog`]): in the
    /// connection's session or its stateless caller's, with its cancellation, progress, log
    /// level and approval scope; returns the result and what the call left behind (a question
    /// for the client, a JSON-RPC error a tool asked for).
    pub(crate) async fn run(
        &self,
        call: ToolCall,
        request_state: Option<String>,
        input_responses: Option<rmcp::model::InputResponses>,
        ctx: RequestContext<RoleServer>,
    ) -> (ToolResult, LeftBehind) {
        let shared = &self.shared;
        let _running = shared.inflight.enter();
        let caller = self.caller_session(&ctx);
        let session = caller.as_ref().map_or(&self.session, |c| &c.session);
        let tool = call.name.clone();
        // the client's cancellation, where the id gate gives one; the session's end too
        let client_cancel = ctx.extensions.get::<ClientCancel>().map(|c| c.0.clone());
        let session_end = ctx.ct.clone();
        let cancel = match &client_cancel {
            Some(c) => c.clone(),
            // the response stream of a stateless request closes when the client's connection
            // drops; a side-effecting call runs on to its end and records its result, which
            // the client's re-send then gets from the ledger (a cut-off call would be unknown)
            None if caller.is_some() && self.side_effecting(&tool) => CancellationToken::new(),
            None => ctx.ct.clone(),
        };
        let progress = ctx
            .meta
            .get_progress_token()
            .map(|t| (t, Arc::new(AtomicBool::new(false))));
        let peer = ctx.peer.clone();
        // 2026-07-28: the level is the request's own (`_meta` logLevel); before, the
        // connection's (`logging/setLevel`).
        let log_level = if crate::mrtr::is_round_trip(&ctx) {
            ctx.meta.log_level().map_or(LEVEL_UNSET, |l| l as u8)
        } else {
            self.log_level.load(Ordering::Relaxed)
        };
        let client = CallClient {
            ctx,
            shared: shared.clone(),
            request_state,
            input_responses,
            question: Mutex::new(None),
            tool_reports_progress: progress.as_ref().map(|(_, own)| own.clone()),
            log_level,
            protocol_error: Mutex::new(None),
        };
        // The pipeline's future is boxed where it is made: the few words of the box, not the
        // pipeline's whole state, are what the layers around it (approvals, cancellation,
        // progress, rmcp's task per request) hold and move. Unboxed, every call copied that
        // state several times over and the task rmcp spawns for it was tens of KiB (a
        // profile of 2-byte reads over HTTP put 9% of the server's time in those copies).
        let (result, left) = match progress {
            None => {
                let dispatch = Box::pin(shared.pipeline.dispatch_with(call, session, cancel));
                cancelled_with(session_end, client_cancel, in_call(client, dispatch)).await
            }
            Some((token, own)) => {
                let (sink, reports) = crate::progress::channel();
                let dispatch = Box::pin(
                    shared
                        .pipeline
                        .dispatch_with_progress(call, session, cancel, sink),
                );
                let ticks = crate::progress::Ticks {
                    peer: &peer,
                    token,
                    every: shared.progress_interval,
                    tool: &tool,
                    silenced: own,
                    reports,
                };
                let run = Box::pin(ticks.around(in_call(client, dispatch)));
                cancelled_with(session_end, client_cancel, run).await
            }
        };
        log_call(&peer, log_level, &result, left.question.is_some()).await;
        (result, left)
    }
}

/// The JSON-RPC id of a request as a call id: a string as sent, a number in decimal.
pub(crate) fn request_id(ctx: &RequestContext<RoleServer>) -> String {
    match &ctx.id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

impl Drop for Connection {
    /// The session is over: its session grants and resource subscriptions end.
    fn drop(&mut self) {
        self.ended.cancel();
        self.shared.catalogs.session_ended(self.id);
        self.shared.pipeline.end_session(&self.session);
    }
}

/// Runs `call`; when `session_end` fires first, fires `cancel` (the token the call was
/// dispatched with) and lets the call end as cancelled.
async fn cancelled_with<F: Future>(
    session_end: CancellationToken,
    cancel: Option<CancellationToken>,
    call: F,
) -> F::Output {
    // pinned first, so the early return awaits it in place instead of holding a second copy
    tokio::pin!(call);
    let Some(cancel) = cancel else {
        return call.await;
    };
    tokio::select! {
        biased;
        out = &mut call => out,
        _ = session_end.cancelled() => {
            cancel.cancel();
            call.await
        }
    }
}

impl Connection {
    /// `-32601` for `method` when no catalog serves what `served` picks (the capability is
    /// not declared).
    fn served(&self, served: fn(&Serves) -> bool, method: &str) -> Result<(), ErrorData> {
        if served(&self.shared.serves) {
            return Ok(());
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("{method} is not served: this server declares no such capability"),
            None,
        ))
    }

    /// Whether `tool` is side-effecting: its calls run under the idempotency ledger.
    fn side_effecting(&self, tool: &str) -> bool {
        self.shared
            .pipeline
            .registry()
            .get(tool, None)
            .is_some_and(|e| !e.spec().effects.read_only && !e.spec().effects.idempotent)
    }
}

/// Once the client asked for log messages: a `debug` message per call, `warning` for failed
/// ones. A call that asked its client for input (the first round of a 2026-07-28 approval) has
/// not failed: it is logged at `debug` with `input_required`, never as an error.
async fn log_call(
    peer: &rmcp::service::Peer<RoleServer>,
    threshold: u8,
    result: &ToolResult,
    asked: bool,
) {
    let failed = result.is_error && !asked;
    let level = if failed {
        LoggingLevel::Warning
    } else {
        LoggingLevel::Debug
    };
    if threshold == LEVEL_UNSET || (level as u8) < threshold {
        return;
    }
    let mut data = json!({
        "tool": &*result.tool,
        "call_id": result.call_id,
        "is_error": failed,
        "duration_us": result.duration.as_micros() as u64,
    });
    if asked {
        data["input_required"] = true.into();
    } else if let Some(e) = &result.error {
        data["error"] = json!(e.kind);
    }
    let mut message = LoggingMessageNotificationParam::new(level, data);
    message.logger = Some("toolgate".into());
    if let Err(e) = peer.notify_logging_message(message).await {
        tracing::debug!(error = %e, "log message not sent");
    }
}

impl ServerHandler for Connection {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    /// The tools the session (the caller's, for a stateless request) could be allowed: those
    /// of its profile the policy does not deny it outright ([`toolgate_core::Policy::visible`]).
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let caller = self.caller_session(&ctx);
        let session = caller.as_ref().map_or(&self.session, |c| &c.session);
        let visible = self.shared.visible_tools(session);
        crate::tools::page(&visible, cursor, self.shared.page_size)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let listing = self.shared.listing();
        let i = *listing.by_name.get(name)?;
        Some(listing.tools[i].clone())
    }

    /// `initialize` (revisions before 2026-07-28): the server's info, with the resources'
    /// `subscribe` when a catalog answers `resources/subscribe`, and the resources' and
    /// prompts' `listChanged` when a catalog's lists change ([`Serves::list_changed`]). Neither
    /// is declared on 2026-07-28 (`server/discover`), where they would promise resource
    /// subscriptions and those lists' changes on `subscriptions/listen`, which only sends
    /// `notifications/tools/list_changed`.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        ctx.peer.set_peer_info(request.clone());
        let mut info = self.negotiate_initialize(&request)?;
        if info.protocol_version.has_initialize() {
            let serves = &self.shared.serves;
            if let Some(r) = info.capabilities.resources.as_mut() {
                r.subscribe = serves.subscribe.then_some(true);
                r.list_changed = serves.list_changed.then_some(true);
            }
            if let Some(p) = info.capabilities.prompts.as_mut() {
                p.list_changed = serves.list_changed.then_some(true);
            }
        }
        Ok(info)
    }

    async fn on_initialized(&self, ctx: rmcp::service::NotificationContext<RoleServer>) {
        // the registry changed (a gateway's upstream changed its tools), or a catalog's
        // resources or prompts: say so until the session ends
        let mut changes = self.shared.changes.clone();
        changes.borrow_and_update();
        let mut lists = self.shared.catalogs.list_changes();
        let peer = ctx.peer;
        let ended = self.ended.clone();
        tokio::spawn(async move {
            loop {
                let sent = tokio::select! {
                    () = ended.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        peer.notify_tool_list_changed().await.is_ok()
                    }
                    Some(list) = lists.next() => match list {
                        ListChanged::Resources => peer.notify_resource_list_changed().await.is_ok(),
                        ListChanged::Prompts => peer.notify_prompt_list_changed().await.is_ok(),
                    },
                };
                if !sent {
                    return;
                }
            }
        });
    }

    /// 2026-07-28 `subscriptions/listen` (SEP-2575): toolgate sends what it declares,
    /// `notifications/tools/list_changed` (the registry changed: a gateway's upstream changed
    /// its tools); rmcp narrows this to what the client asked for.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// One subscription stream: a tools list change is sent on it until the client cancels it
    /// or the connection ends.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.clone();
        changes.borrow_and_update();
        let wants_tools = context.accepted().tools_list_changed == Some(true);
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                () = self.ended.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if wants_tools && context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.dispatch(request, ctx).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(crate::misread::error(
            &request,
            crate::mrtr::is_round_trip(&ctx),
        ))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.served(|s| s.resources, "resources/list")?;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.serve_list_resources(cursor, &ctx).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.served(|s| s.resources, "resources/templates/list")?;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.serve_list_resource_templates(cursor, &ctx).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.served(|s| s.resources, "resources/read")?;
        self.serve_read_resource(request, ctx).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.served(|s| s.subscribe, "resources/subscribe")?;
        self.serve_subscribe(&request.uri, true, &ctx).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.served(|s| s.subscribe, "resources/unsubscribe")?;
        self.serve_subscribe(&request.uri, false, &ctx).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.served(|s| s.prompts, "prompts/list")?;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.serve_list_prompts(cursor, &ctx).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.served(|s| s.prompts, "prompts/get")?;
        self.serve_get_prompt(request, ctx).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.served(|s| s.completions, "completion/complete")?;
        self.serve_complete(request, ctx).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.store(request.level as u8, Ordering::Relaxed);
        Ok(())
    }
}
