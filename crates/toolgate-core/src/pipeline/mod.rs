//! The dispatch pipeline. Every call passes these stages, in this order, cheapest first:
//!
//! 1. [`resolve`]   the call id is new in the session; the tool is known and visible to the
//!    session's profile (`unknown_tool`, fatal)
//! 2. [`sanitize`]  the arguments parse as a JSON object; strings hold no NUL or control
//!    characters; the idempotency key, when sent, is well formed (`invalid_arguments`,
//!    `invalid_input`)
//! 3. [`decode`]    the arguments satisfy `inputSchema` and decode into the handler's types
//!    (`invalid_arguments`, every fault with its JSON pointer)
//!    (a side-effecting call's idempotency key is looked up here: a key that already has an
//!    answer gets it now, without the guard, the policy or the budget: [`once`])
//! 4. [`guard`]     semantic safety: the tool's own checks, and every path it touches resolved
//!    inside the workspace (`unsafe_input`)
//! 5. [`authorize`] the policy's verdict over the tool and its resources; `ask` is answered by
//!    an active grant, else by the approver (`permission_denied`, `approval_rejected`,
//!    `approval_corrected`)
//! 6. [`budget`]    rate limits and daily quotas ([`crate::rate`], `rate_limited`), then calls
//!    per session and per tool, wall time, result bytes (`budget_exhausted`)
//! 7. [`execute`]   timeout, cancellation, caught panics, retries for idempotent tools on
//!    transient errors (`timeout`, `outcome_unknown`, `cancelled`, `tool_failed`, `internal`);
//!    a side-effecting call runs once under its idempotency key ([`once`], [`crate::ledger`]):
//!    a replay, `idempotency_conflict`, `in_progress`, `outcome_unknown` (`unsettled`)
//! 8. [`finish`]    `outputSchema` checked, output sanitized, truncated to the byte limit with
//!    the full result behind a handle (`tool_failed` / `output_schema_mismatch`)
//! 9. [`record`]    one audit record, the tool's metrics ([`crate::telemetry`]) and the
//!    outcome on the call's tracing span, for every call, whatever happened
//!
//! A call of a tool that is not `read_only` also gets an intent record, committed between
//! budget and execute (`record::intent`): its handler runs only once the intent is durable,
//! and its result is returned only once its own record is (see [`crate::audit`]). A call under
//! the idempotency ledger commits its intent after its key's claim held ([`once`]): a call the
//! ledger answers (a replay, a conflict, `in_progress`) acts on nothing and writes none.
//!
//! Tracing: every call runs in an `info` span `tool_call` with `session`, `profile`,
//! `call_id` and `tool` (the registered name once resolved), and `outcome` and `error_kind`
//! recorded when it ends; authorize, execute and finish run in `debug` child spans of those
//! names. Without a subscriber that wants them they cost a relaxed load each.
//!
//! This file is the only one that knows the order. A stage that stops the call returns the
//! error; the driver turns it into the call's one result and records it.
//!
//! The registry can change while the pipeline serves (a gateway's upstream adds or changes a
//! tool): [`Pipeline::replace_registry`] swaps it whole, a call resolves against the registry
//! of the moment it starts and keeps the entry it resolved, and hosts that list tools
//! (an MCP server) watch [`Pipeline::registry_changes`] to list them again.

pub mod authorize;
mod batch;
pub mod budget;
pub mod decode;
pub mod execute;
pub mod finish;
pub mod guard;
pub mod once;
pub mod record;
pub mod resolve;
pub mod sanitize;

use crate::approval::{Approver, NobodyApprover};
use crate::audit::{AuditSink, NullAuditSink};
use crate::call::ToolCall;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::grant::GrantStore;
use crate::ledger::{Ledger, LedgerEvent, LedgerOptions, MemoryLedger};
use crate::policy::{DefaultPolicy, Policy};
use crate::progress::ProgressSink;
use crate::registry::{Entry, Registry};
use crate::result::ToolResult;
use crate::results::{MemoryResultStore, ResultStore};
use crate::session::{Session, SessionBuilder};
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use execute::RetryPolicy;

/// The dispatch pipeline. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct Pipeline {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// The registry calls resolve against; swapped whole by [`Pipeline::replace_registry`].
    pub(crate) registry: arc_swap::ArcSwap<Registry>,
    /// The profiles sessions are built against (every registry swapped in has the same).
    pub(crate) profiles: Registry,
    /// The registry's generation, bumped by every swap.
    pub(crate) changes: tokio::sync::watch::Sender<u64>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) grants: Option<Arc<dyn GrantStore>>,
    /// The longest a grant from an approver's answer may hold.
    pub(crate) grant_max_expiry: Option<std::time::Duration>,
    pub(crate) audit: Arc<dyn AuditSink>,
    pub(crate) results: Arc<dyn ResultStore>,
    pub(crate) ledger: Arc<dyn Ledger>,
    pub(crate) ledger_options: LedgerOptions,
    pub(crate) retry: RetryPolicy,
    /// Rate limits by principal and tool.
    pub(crate) rate: crate::rate::RateLimits,
    /// The daily quota of calls per principal and where it is counted.
    pub(crate) quota: Option<(Arc<dyn crate::rate::QuotaStore>, crate::rate::Quota)>,
    /// Metric handles for calls whose tool did not resolve.
    pub(crate) unknown_metrics: std::sync::OnceLock<crate::telemetry::ToolMetrics>,
}

/// Builder for [`Pipeline`].
#[must_use]
pub struct PipelineBuilder {
    registry: Arc<Registry>,
    policy: Arc<dyn Policy>,
    approver: Arc<dyn Approver>,
    grants: Option<Arc<dyn GrantStore>>,
    grant_max_expiry: Option<std::time::Duration>,
    audit: Arc<dyn AuditSink>,
    results: Arc<dyn ResultStore>,
    ledger: Arc<dyn Ledger>,
    ledger_options: LedgerOptions,
    retry: RetryPolicy,
    rate: crate::rate::RateLimits,
    quota: Option<(Arc<dyn crate::rate::QuotaStore>, crate::rate::Quota)>,
}

impl PipelineBuilder {
    /// Sets the policy (default: [`DefaultPolicy`], destructive and dangerous tools ask).
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }
    /// Sets the approver (default: [`NobodyApprover`], every request rejected).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }
    /// Sets where approval grants live (default: none, so every `ask` goes to the approver
    /// and scoped answers approve one call). With a store, a call the policy asks about is
    /// approved without asking when an active grant covers it, and an answer with a scope
    /// stores a grant; see [`crate::grant`].
    pub fn grants(mut self, grants: Arc<dyn GrantStore>) -> Self {
        self.grants = Some(grants);
        self
    }
    /// Sets the longest a grant stored from an approver's answer may hold (default: no cap).
    /// Whatever the approver answers (a custom one included), a grant asking for longer, or
    /// for no expiry (`session` and `always` alike), is stored with this expiry, counted in
    /// whole seconds (at least 1).
    pub fn grant_max_expiry(mut self, max: Option<std::time::Duration>) -> Self {
        self.grant_max_expiry = max;
        self
    }
    /// Sets the audit sink (default: none).
    pub fn audit(mut self, audit: Arc<dyn AuditSink>) -> Self {
        self.audit = audit;
        self
    }
    /// Sets the store for truncated results (default: 64 MiB in memory).
    pub fn results(mut self, results: Arc<dyn ResultStore>) -> Self {
        self.results = results;
        self
    }
    /// Sets where the idempotency ledger lives (default: a [`MemoryLedger`], this process's
    /// calls only); see [`crate::ledger`]. Every call of a tool that is neither read-only nor
    /// idempotent and has a key (sent, or derived) claims its key there before it runs.
    pub fn ledger(mut self, ledger: Arc<dyn Ledger>) -> Self {
        self.ledger = ledger;
        self
    }
    /// Sets the ledger's retention, derived-key window and lease grace (default
    /// [`LedgerOptions::default`]).
    pub fn ledger_options(mut self, options: LedgerOptions) -> Self {
        self.ledger_options = options;
        self
    }
    /// Sets the retry policy for idempotent tools.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
    /// Sets the rate limits (default: none), checked for every call the policy let through.
    pub fn rate_limits(mut self, limits: crate::rate::RateLimits) -> Self {
        self.rate = limits;
        self
    }
    /// Sets a daily quota of calls per principal, counted in `store` (default: none).
    pub fn quota(
        mut self,
        store: Arc<dyn crate::rate::QuotaStore>,
        quota: crate::rate::Quota,
    ) -> Self {
        self.quota = Some((store, quota));
        self
    }
    /// The pipeline.
    pub fn build(self) -> Pipeline {
        let profiles = self.registry.profiles_only();
        Pipeline {
            inner: Arc::new(Inner {
                registry: arc_swap::ArcSwap::new(self.registry),
                profiles,
                changes: tokio::sync::watch::Sender::new(0),
                policy: self.policy,
                approver: self.approver,
                grants: self.grants,
                grant_max_expiry: self.grant_max_expiry,
                audit: self.audit,
                results: self.results,
                ledger: self.ledger,
                ledger_options: self.ledger_options,
                retry: self.retry,
                rate: self.rate,
                quota: self.quota,
                unknown_metrics: std::sync::OnceLock::new(),
            }),
        }
    }
}

/// What the stages learn about a call, carried to the record stage.
pub(crate) struct CallState {
    pub(crate) entry: Option<Arc<Entry>>,
    pub(crate) arguments: serde_json::Value,
    pub(crate) verdict: Option<crate::policy::Verdict>,
    pub(crate) approval: Option<crate::audit::Approval>,
    pub(crate) grant: Option<i64>,
    pub(crate) scope: Option<crate::grant::GrantScope>,
    pub(crate) attempts: u32,
    pub(crate) result_bytes: usize,
    /// When the call was dispatched, unique in its session ([`Session::dispatch_time_us`]).
    pub(crate) time_us: u64,
    /// An intent record was committed before the handler ran: the call's own record must be
    /// committed before its result is returned.
    pub(crate) intent: bool,
    /// The idempotency key of a call under the ledger.
    pub(crate) key: Option<Arc<str>>,
    /// What the ledger did with the call.
    pub(crate) ledger: Option<LedgerEvent>,
    /// Whether the result is a recorded one.
    pub(crate) replayed: bool,
    /// The strongest verdict over what the tool reached on its own
    /// ([`ToolContext::decide_url`]), for `open_world` tools.
    pub(crate) reached: Option<Arc<parking_lot::Mutex<Option<crate::policy::Verdict>>>>,
}

impl Pipeline {
    /// A builder over `registry` with the defaults.
    pub fn builder(registry: impl Into<Arc<Registry>>) -> PipelineBuilder {
        PipelineBuilder {
            registry: registry.into(),
            policy: Arc::new(DefaultPolicy),
            approver: Arc::new(NobodyApprover),
            grants: None,
            grant_max_expiry: None,
            audit: Arc::new(NullAuditSink),
            results: Arc::new(MemoryResultStore::default()),
            ledger: Arc::new(MemoryLedger::default()),
            ledger_options: LedgerOptions::default(),
            retry: RetryPolicy::default(),
            rate: crate::rate::RateLimits::default(),
            quota: None,
        }
    }

    /// The registry as it is now (a snapshot: a later [`Pipeline::replace_registry`] does not
    /// change it).
    pub fn registry(&self) -> Arc<Registry> {
        self.inner.registry.load_full()
    }

    /// Replaces the registry: calls that start from now on resolve against `registry`; calls
    /// already running keep the entry they resolved. Watchers of
    /// [`Pipeline::registry_changes`] see the generation go up.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidProfile`](crate::RegistrationError::InvalidProfile) when
    /// `registry` does not define the same profiles, in the same order, as the pipeline's
    /// first one (sessions already made hold their profile by position).
    pub fn replace_registry(&self, registry: Registry) -> Result<(), crate::RegistrationError> {
        if !registry.same_profiles(&self.inner.profiles) {
            return Err(crate::RegistrationError::InvalidProfile {
                name: registry.profile_names().collect::<Vec<_>>().join(", "),
                why: "a replacing registry must define the pipeline's profiles, in their order"
                    .into(),
            });
        }
        self.inner.registry.store(Arc::new(registry));
        self.inner.changes.send_modify(|g| *g += 1);
        Ok(())
    }

    /// Watches the registry's generation: it goes up each time
    /// [`Pipeline::replace_registry`] swaps the registry (an MCP server then sends
    /// `notifications/tools/list_changed`).
    pub fn registry_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Where approval grants live, when the pipeline has a grant store (approvers offer
    /// scoped answers only then).
    pub fn grants(&self) -> Option<&Arc<dyn GrantStore>> {
        self.inner.grants.as_ref()
    }

    /// The longest a grant from an approver's answer may hold
    /// ([`PipelineBuilder::grant_max_expiry`]).
    pub fn grant_max_expiry(&self) -> Option<std::time::Duration> {
        self.inner.grant_max_expiry
    }

    /// The audit sink.
    pub fn audit(&self) -> &Arc<dyn AuditSink> {
        &self.inner.audit
    }

    /// The result store.
    pub fn results(&self) -> &Arc<dyn ResultStore> {
        &self.inner.results
    }

    /// The idempotency ledger.
    pub fn ledger(&self) -> &Arc<dyn Ledger> {
        &self.inner.ledger
    }

    /// The ledger's retention, derived-key window and lease grace.
    pub fn ledger_options(&self) -> &LedgerOptions {
        &self.inner.ledger_options
    }

    /// Starts a session (profile `default` unless set).
    pub fn session(&self, id: impl Into<Arc<str>>) -> SessionBuilder<'_> {
        self.inner.profiles.session(id)
    }

    /// Whether `session` sees `tool` (in its profile, the caller checks that) under the
    /// policy: `false` when a rule denies it every call of the tool ([`Policy::visible`]).
    pub fn visible(&self, tool: &crate::ToolSpec, session: &Session) -> bool {
        self.inner.policy.visible(tool, session)
    }

    /// Ends `session`: the grants stored for it alone (`session` and `once` answers) stop
    /// applying and are listed as expired ([`GrantStore::end_session`]). Call it when the
    /// conversation is over (an MCP connection closed, a one-off command finished); a session
    /// that stored no grant costs nothing. Returns how many grants ended; a store error is
    /// logged, and the grants then end only by their expiry (the session's id is not used
    /// again).
    pub fn end_session(&self, session: &Session) -> usize {
        let Some(grants) = &self.inner.grants else {
            return 0;
        };
        if !session
            .has_grants
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return 0;
        }
        let now = crate::audit::now_us(SystemTime::now());
        match grants.end_session(&session.id, now) {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(error = %e, session = %session.id, "ending the session's grants");
                0
            }
        }
    }

    /// Dispatches one call through every stage and returns its one result.
    pub async fn dispatch(&self, call: ToolCall, session: &Session) -> ToolResult {
        self.traced(call, session, CancellationToken::new(), None)
            .await
    }

    /// Dispatches one call; cancelling `cancel` stops it (the result is `cancelled`). The call
    /// runs under a child of `cancel`, which the pipeline cancels itself when the call times
    /// out, so `cancel` can be shared by many calls.
    pub async fn dispatch_with(
        &self,
        call: ToolCall,
        session: &Session,
        cancel: CancellationToken,
    ) -> ToolResult {
        self.traced(call, session, cancel.child_token(), None).await
    }

    /// Dispatches one call as [`dispatch_with`](Self::dispatch_with) does, with the handler's
    /// progress reports ([`ToolContext::report_progress`]) going to `progress` while it runs
    /// (see [`crate::progress`]).
    pub async fn dispatch_with_progress(
        &self,
        call: ToolCall,
        session: &Session,
        cancel: CancellationToken,
        progress: Arc<dyn ProgressSink>,
    ) -> ToolResult {
        self.traced(call, session, cancel.child_token(), Some(progress))
            .await
    }

    async fn traced(
        &self,
        call: ToolCall,
        session: &Session,
        cancel: CancellationToken,
        progress: Option<Arc<dyn ProgressSink>>,
    ) -> ToolResult {
        let span = tracing::info_span!(
            "tool_call",
            session = %session.id,
            profile = %session.profile,
            call_id = %call.id,
            tool = tracing::field::Empty,
            outcome = tracing::field::Empty,
            error_kind = tracing::field::Empty,
        );
        self.run(call, session, Control { cancel, progress }, span.clone())
            .instrument(span)
            .await
    }

    /// Dispatches calls, concurrently where every call of a run is `concurrency_safe` and one
    /// at a time otherwise; results come back in the order of `calls`.
    pub async fn dispatch_batch(&self, calls: Vec<ToolCall>, session: &Session) -> Vec<ToolResult> {
        batch::dispatch_batch(self, calls, session).await
    }

    async fn run(
        &self,
        call: ToolCall,
        session: &Session,
        control: Control,
        span: tracing::Span,
    ) -> ToolResult {
        let started = Instant::now();
        let time_us = session.dispatch_time_us(SystemTime::now());
        let ToolCall {
            id,
            name,
            arguments,
            version,
            idempotency_key,
        } = call;
        let mut st = CallState {
            entry: None,
            arguments: serde_json::Value::Null,
            verdict: None,
            approval: None,
            grant: None,
            scope: None,
            attempts: 0,
            result_bytes: 0,
            time_us,
            intent: false,
            key: None,
            ledger: None,
            replayed: false,
            reached: None,
        };
        let outcome = self
            .stages(
                &id,
                &name,
                version.as_deref(),
                arguments,
                idempotency_key.as_deref(),
                session,
                control,
                &mut st,
                started,
                &span,
            )
            .await;
        let tool_name: Arc<str> = match &st.entry {
            Some(e) => e.spec().name.clone(),
            // an unresolved name is the model's text: bounded and made safe like any output
            None => {
                let clean: Arc<str> = finish::clean_name(&name).into();
                span.record("tool", &*clean);
                clean
            }
        };
        let mut result = match outcome {
            Ok(mut r) => {
                r.call_id = id;
                r.tool = tool_name;
                r.duration = started.elapsed();
                r
            }
            Err(e) => {
                ToolResult::from_error(id, tool_name, finish::clean_error(e), started.elapsed())
            }
        };
        result.replayed = st.replayed;
        record::record(&self.inner, session, st, &result, &span).await;
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn stages(
        &self,
        id: &crate::CallId,
        name: &str,
        version: Option<&str>,
        arguments: crate::Arguments,
        key: Option<&str>,
        session: &Session,
        control: Control,
        st: &mut CallState,
        started: Instant,
        span: &tracing::Span,
    ) -> Result<ToolResult, ToolError> {
        let inner = &self.inner;
        let entry = resolve::resolve(
            &inner.registry.load(),
            &*inner.policy,
            session,
            id,
            name,
            version,
        )?;
        st.entry = Some(entry.clone());
        let spec = entry.spec();
        span.record("tool", &*spec.name);
        st.arguments = sanitize::sanitize(arguments, spec)?;
        if let Some(k) = key {
            crate::ledger::check_key(k)?;
        }
        let args = decode::decode(&entry, &st.arguments)?;
        let mut ctx = self.context(&entry, session, id, control, started);
        let plan = once::plan(inner, &entry, session, key, &st.arguments, &args, &ctx)?;
        st.key = match &plan {
            Some(p) => Some(p.key.clone()),
            None => key.map(Arc::from),
        };
        ctx.idempotency_key = st.key.clone();
        st.reached = ctx.reached.clone();
        if let Some(plan) = &plan {
            // a key that already has an answer gets it before the guard judges a world the
            // first call may have changed, and before anyone is asked again: nothing will act.
            // The ledger's futures are boxed (here and below): inline, they made every call's
            // future larger, and an unoptimized build polling it on a 2 MiB worker stack left
            // Cedar less than the 100 KiB it demands, so a `when` condition failed to evaluate
            let found = Box::pin(
                once::lookup(inner, &entry, &args, &ctx, session, plan, st)
                    .instrument(tracing::debug_span!("execute")),
            )
            .await?;
            if let Some(output) = found {
                authorize::replay_allowed(inner, &entry, &args, &ctx, session, st)?;
                let _finish = tracing::debug_span!("finish").entered();
                return finish::finish(
                    &entry,
                    output,
                    session,
                    &*inner.results,
                    &mut st.result_bytes,
                );
            }
        }
        let resources = guard::guard(&entry, &args, &ctx)?;
        authorize::authorize(inner, &entry, &args, &ctx, &resources, session, id, st)
            .instrument(tracing::debug_span!("authorize"))
            .await?;
        // the handler acts on the paths the policy judged, or on none
        if resources
            .iter()
            .any(|r| matches!(r, crate::tool::ResolvedResource::Path { .. }))
        {
            ctx.judged = Some(Arc::new(resources));
        }
        budget::limit(inner, session, spec)?;
        budget::charge(session, spec)?;
        let output = match &plan {
            None => {
                if !spec.effects.read_only {
                    record::intent(inner, session, id, st, started).await?;
                }
                execute::execute(
                    &entry,
                    args,
                    &st.arguments,
                    ctx,
                    &inner.retry,
                    &mut st.attempts,
                )
                .instrument(tracing::debug_span!("execute"))
                .await?
            }
            // the intent record is committed once the call holds its key ([`once`])
            Some(plan) => {
                Box::pin(
                    once::execute(inner, &entry, args, ctx, session, plan, st, started)
                        .instrument(tracing::debug_span!("execute")),
                )
                .await?
            }
        };
        let _finish = tracing::debug_span!("finish").entered();
        finish::finish(
            &entry,
            output,
            session,
            &*inner.results,
            &mut st.result_bytes,
        )
    }

    fn context(
        &self,
        entry: &Entry,
        session: &Session,
        id: &crate::CallId,
        control: Control,
        started: Instant,
    ) -> ToolContext {
        let spec = entry.spec();
        // only a tool that reaches outside the workspace asks about what it reaches
        let (tool, reached) = if spec.effects.open_world {
            (Some(entry.tool.clone()), Some(Default::default()))
        } else {
            (None, None)
        };
        let workspace = session.workspace.as_ref().map(|w| {
            if spec.effects.read_only {
                w.read_only()
            } else {
                w.clone()
            }
        });
        ToolContext {
            workspace,
            profile: session.profile.clone(),
            session_id: session.id.clone(),
            call_id: id.clone(),
            cancel: control.cancel,
            deadline: deadline_after(started, spec.timeout),
            budget: session.left(),
            results: self.inner.results.clone(),
            policy: Some(self.inner.policy.clone()),
            progress: control.progress,
            // set once the ledger's plan is made, which may ask the tool (with this context)
            idempotency_key: None,
            tool,
            reached,
            judged: None,
        }
    }
}

/// What the caller of one dispatch controls while the call runs.
struct Control {
    cancel: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
}

/// `start + timeout`, or about a century later when that overflows (a tool may declare a
/// practically unbounded timeout).
pub(crate) fn deadline_after(start: Instant, timeout: std::time::Duration) -> Instant {
    start
        .checked_add(timeout)
        .or_else(|| start.checked_add(std::time::Duration::from_secs(100 * 365 * 86_400)))
        .unwrap_or(start)
}
