//! What a handler gets: [`ToolContext`].

use crate::call::CallId;
use crate::error::ToolError;
use crate::policy::Verdict;
use crate::progress::{ProgressReport, ProgressSink};
use crate::results::{MemoryResultStore, ResultStore};
use crate::tool::Tool;
use crate::workspace::{Workspace, WsPath};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Budgets left to a session when a call starts. `None` means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetLeft {
    /// Calls left in the session, this one excluded.
    pub calls: Option<u64>,
    /// Wall time left in the session.
    pub wall_time: Option<Duration>,
    /// Result bytes left in the session.
    pub result_bytes: Option<u64>,
}

/// The context of one call, handed to the handler by value (it is cheap to clone).
///
/// It carries the workspace (read-only for tools marked `read_only`), the agent profile, the
/// session and call ids, the cancellation token, the deadline and the budgets left. Build one by
/// hand with [`ToolContext::builder`] to unit-test a handler without the pipeline.
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) workspace: Option<Workspace>,
    pub(crate) profile: Arc<str>,
    pub(crate) session_id: Arc<str>,
    pub(crate) call_id: CallId,
    pub(crate) cancel: CancellationToken,
    pub(crate) deadline: Instant,
    pub(crate) budget: BudgetLeft,
    pub(crate) results: Arc<dyn ResultStore>,
    pub(crate) policy: Option<Arc<dyn crate::Policy>>,
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    pub(crate) idempotency_key: Option<Arc<str>>,
    /// The tool being called, for the policy's verdicts over what it reaches on its own
    /// (set by the pipeline for `open_world` tools).
    pub(crate) tool: Option<Arc<dyn Tool>>,
    /// The strongest of those verdicts, read by the record stage.
    pub(crate) reached: Option<Arc<Mutex<Option<Verdict>>>>,
    /// The resources the guard resolved and the policy judged (set by the pipeline before
    /// the handler runs), for [`ToolContext::check_judged`].
    pub(crate) judged: Option<Arc<Vec<crate::tool::ResolvedResource>>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("profile", &self.profile)
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
            .field("deadline", &self.deadline)
            .field("budget", &self.budget)
            .field("idempotency_key", &self.idempotency_key)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for calling a handler directly (tests, embedding): profile `default`, session
    /// `test`, call id `call-1`, no workspace, a fresh token, a 30 s deadline, unlimited
    /// budgets and an in-memory result store.
    pub fn builder() -> ToolContextBuilder {
        ToolContextBuilder {
            ctx: ToolContext {
                workspace: None,
                profile: "default".into(),
                session_id: "test".into(),
                call_id: "call-1".into(),
                cancel: CancellationToken::new(),
                deadline: Instant::now() + Duration::from_secs(30),
                budget: BudgetLeft::default(),
                results: Arc::new(MemoryResultStore::default()),
                policy: None,
                progress: None,
                idempotency_key: None,
                tool: None,
                reached: None,
                judged: None,
            },
        }
    }

    /// The workspace, when the session has one.
    pub fn workspace(&self) -> Option<&Workspace> {
        self.workspace.as_ref()
    }

    /// The workspace, or an error for the model when the session has none.
    ///
    /// # Errors
    /// `unsafe_input` with reason `no_workspace`.
    pub fn require_workspace(&self) -> Result<&Workspace, ToolError> {
        self.workspace.as_ref().ok_or_else(|| {
            ToolError::unsafe_input(
                "no_workspace",
                "this session has no workspace, so file tools cannot run",
            )
        })
    }

    /// Resolves a path argument inside the workspace (see [`Workspace::resolve`]).
    ///
    /// # Errors
    /// `unsafe_input` (`path_outside_workspace`, `no_workspace`, `symlink_loop`) or
    /// `invalid_input` for NUL.
    pub fn resolve(&self, path: &str) -> Result<WsPath, ToolError> {
        Ok(self.require_workspace()?.resolve(path)?)
    }

    /// Checks that `path`, as the handler resolved it where it acts, is a path the policy
    /// judged for this call with `access`: the guard stage resolved the same argument before
    /// the policy decided, and a link swapped in since (`pub/a.txt` made a link to
    /// `secrets/key.txt` while the call ran) would have the handler act on a path nobody
    /// judged. Always `Ok` for a handler called outside the pipeline.
    ///
    /// # Errors
    /// `tool_failed` / `file_changed` (recoverable), naming the path as judged (not where it
    /// leads now, which the policy may keep from the caller): nothing was done.
    pub fn check_judged(&self, path: &WsPath, access: crate::Access) -> Result<(), ToolError> {
        let Some(judged) = &self.judged else {
            return Ok(());
        };
        let mut named = judged.iter().filter_map(|r| match r {
            crate::tool::ResolvedResource::Path { path, access: a } if *a == access => Some(path),
            _ => None,
        });
        if named.clone().any(|p| p == path) {
            return Ok(());
        }
        // where it leads now is not named: the policy may keep that path from the caller
        let before = named
            .next()
            .map_or_else(|| "the path".to_string(), |p| format!("{:?}", p.display()));
        Err(ToolError::failed(format!(
            "{before} changed while the call ran (a link was made or moved there after the \
             call was checked), so nothing was done; send the call again"
        ))
        .with_reason("file_changed"))
    }

    /// The agent profile the call runs under.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The call id.
    pub fn call_id(&self) -> &CallId {
        &self.call_id
    }

    /// The call's cancellation token; long handlers should check it or select on
    /// `cancelled()`.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// When the call's timeout expires.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Time left before the deadline (zero when past it).
    pub fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Budgets left when the call started.
    pub fn budget(&self) -> BudgetLeft {
        self.budget
    }

    /// The call's idempotency key: the caller's own, or for a side-effecting call without
    /// one the key derived from its caller, tool and arguments (see [`crate::ledger`]);
    /// `None` when the call has neither. A tool that acts on another system hands it on (an
    /// `Idempotency-Key` header, an SMTP `Message-ID`), so that system can refuse a second
    /// delivery that the ledger alone cannot prevent: the ledger knows a call started, not
    /// whether the world changed before a crash.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// Whether the policy lets this call reach `rel` (relative to the workspace root, found by
    /// the tool itself, for example while walking a directory): only paths the policy allows
    /// outright; see [`crate::Policy::decide_path`]. Always true without a policy.
    pub fn permits(&self, rel: &std::path::Path, access: crate::Access) -> bool {
        match &self.policy {
            None => true,
            Some(p) => p.decide_path(rel, access, &self.profile) == crate::Decision::Allow,
        }
    }

    /// Whether the policy denies this call `access` to `rel` (relative to the workspace
    /// root) outright, so a tool tells nothing about what is there before the policy answers
    /// (see [`crate::Policy::decide_path`]). Always false without a policy.
    pub fn denies(&self, rel: &std::path::Path, access: crate::Access) -> bool {
        match &self.policy {
            None => false,
            Some(p) => p.decide_path(rel, access, &self.profile) == crate::Decision::Deny,
        }
    }

    /// The decision for a call of `sender` (the sending tool's contract) that sends to
    /// `address` alone ([`crate::Policy::decide_recipient`]); `Allow` without a policy.
    pub fn recipient_decision(&self, sender: &crate::ToolSpec, address: &str) -> crate::Decision {
        match &self.policy {
            None => crate::Decision::Allow,
            Some(p) => p.decide_recipient(sender, address, &self.profile).decision,
        }
    }

    /// The policy's verdict for `url`, a URL this call reaches on its own (a redirect's
    /// target, which the call did not name): [`crate::Policy::decide_url`] for this call's
    /// tool and profile. The tool follows it only on `Allow`. The strongest verdict of a call
    /// goes into its audit record (decision and rule) when it is stronger than the call's own,
    /// so a redirect the policy denies names its rule there.
    ///
    /// Without a policy (a hand-made context) every URL is allowed; a context that does not
    /// know its tool (the pipeline sets it for `open_world` tools) gets `Ask`.
    pub fn decide_url(&self, url: &str) -> Verdict {
        let verdict = match (&self.policy, &self.tool) {
            (None, _) => return Verdict::allow("context.no_policy", "the context has no policy"),
            (Some(p), Some(t)) => p.decide_url(t.spec(), url, &self.profile),
            (Some(_), None) => Verdict::ask(
                "context.no_tool",
                "the context does not name its tool, so the policy cannot decide",
            ),
        };
        self.reach(&verdict);
        verdict
    }

    /// Whether the addresses a host name resolves to must be decided for this call
    /// ([`crate::Policy::names_addresses`]): `false` without a policy or without a tool.
    pub fn names_addresses(&self) -> bool {
        match (&self.policy, &self.tool) {
            (Some(p), Some(t)) => p.names_addresses(t.spec(), &self.profile),
            _ => false,
        }
    }

    /// The policy's verdict for `address`, an address `host` resolved to when this call
    /// connects to it ([`crate::Policy::decide_address`]): a deny or ask rule naming the
    /// address, or `None` (connect). A verdict is kept for the call's audit record as
    /// [`ToolContext::decide_url`]'s are. `None` without a policy; a context that does not
    /// know its tool gets `Ask`.
    pub fn decide_address(&self, host: &str, address: std::net::IpAddr) -> Option<Verdict> {
        let verdict = match (&self.policy, &self.tool) {
            (None, _) => return None,
            (Some(p), Some(t)) => p.decide_address(t.spec(), host, address, &self.profile)?,
            (Some(_), None) => Verdict::ask(
                "context.no_tool",
                "the context does not name its tool, so the policy cannot decide",
            ),
        };
        self.reach(&verdict);
        Some(verdict)
    }

    /// Keeps `verdict` for the audit record when it is the strongest this call reached.
    fn reach(&self, verdict: &Verdict) {
        if let Some(slot) = &self.reached {
            let mut strongest = slot.lock();
            if strongest
                .as_ref()
                .is_none_or(|s| verdict.decision > s.decision)
            {
                *strongest = Some(verdict.clone());
            }
        }
    }

    /// The store that keeps full results behind truncation handles.
    pub fn results(&self) -> &Arc<dyn ResultStore> {
        &self.results
    }

    /// Whether the caller listens to this call's progress; a tool can skip preparing reports
    /// nobody receives.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Reports the call's progress to the caller, when it listens (see [`crate::progress`]):
    /// `progress` must grow from one report to the next; `total` is the value it reaches at
    /// the end, when known. The message is made safe (controls escaped) and cut to
    /// [`crate::progress::MAX_MESSAGE_BYTES`]. Never blocks; returns whether anyone listens.
    pub fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> bool {
        let Some(sink) = &self.progress else {
            return false;
        };
        sink.report(ProgressReport {
            progress,
            total,
            message: message.map(crate::progress::clean_message),
        });
        true
    }
}

/// Builder for a hand-made [`ToolContext`].
#[must_use]
pub struct ToolContextBuilder {
    ctx: ToolContext,
}

impl ToolContextBuilder {
    /// Sets the workspace.
    pub fn workspace(mut self, ws: Workspace) -> Self {
        self.ctx.workspace = Some(ws);
        self
    }
    /// Sets the profile.
    pub fn profile(mut self, profile: &str) -> Self {
        self.ctx.profile = profile.into();
        self
    }
    /// Sets the session id.
    pub fn session_id(mut self, id: &str) -> Self {
        self.ctx.session_id = id.into();
        self
    }
    /// Sets the call id.
    pub fn call_id(mut self, id: impl Into<CallId>) -> Self {
        self.ctx.call_id = id.into();
        self
    }
    /// Sets the cancellation token.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.ctx.cancel = token;
        self
    }
    /// Sets the deadline.
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.ctx.deadline = deadline;
        self
    }
    /// Sets the budgets left.
    pub fn budget(mut self, budget: BudgetLeft) -> Self {
        self.ctx.budget = budget;
        self
    }
    /// Sets the policy consulted by [`ToolContext::permits`] and
    /// [`ToolContext::decide_url`].
    pub fn policy(mut self, policy: Arc<dyn crate::Policy>) -> Self {
        self.ctx.policy = Some(policy);
        self
    }
    /// Sets the tool being called, which [`ToolContext::decide_url`] asks the policy about.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.ctx.tool = Some(tool);
        self
    }
    /// Sets where progress reports go ([`ToolContext::report_progress`]).
    pub fn progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.ctx.progress = Some(sink);
        self
    }
    /// Sets the result store.
    pub fn results(mut self, results: Arc<dyn ResultStore>) -> Self {
        self.ctx.results = results;
        self
    }
    /// Sets the idempotency key ([`ToolContext::idempotency_key`]).
    pub fn idempotency_key(mut self, key: impl Into<Arc<str>>) -> Self {
        self.ctx.idempotency_key = Some(key.into());
        self
    }
    /// The context.
    pub fn build(self) -> ToolContext {
        self.ctx
    }
}
