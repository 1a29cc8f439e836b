//! A session: one agent conversation's identity, profile, workspace, budgets and state.

use crate::budget::Budgets;
use crate::call::CallId;
use crate::context::BudgetLeft;
use crate::principal::Principal;
use crate::seen_ids::SeenIds;
use crate::workspace::Workspace;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub use crate::seen_ids::{MAX_SEEN_BYTES, MAX_SEEN_IDS};

/// One agent session. Build it with [`crate::Pipeline::session`], which checks the profile.
///
/// The session remembers the call ids it has seen (a reused id is refused: the most recent
/// [`MAX_SEEN_IDS`] ids, up to [`MAX_SEEN_BYTES`] of them, so its memory stays bounded) and
/// counts what the budget stage charges.
pub struct Session {
    pub(crate) id: Arc<str>,
    /// Who is calling, for what outlives one session: the session's id unless the host says
    /// otherwise ([`SessionBuilder::caller`]).
    pub(crate) caller: Arc<str>,
    /// The principal's name, `subject (issuer)`, when there is one: what idempotency keys
    /// are kept per ([`Session::principal_key`]).
    pub(crate) principal_key: Option<Arc<str>>,
    pub(crate) profile: Arc<str>,
    pub(crate) profile_bit: u64,
    pub(crate) workspace: Option<Workspace>,
    pub(crate) budgets: Budgets,
    pub(crate) attributes: HashMap<String, Value>,
    /// Whom the session acts for, when a front end verified it ([`crate::principal`]).
    pub(crate) principal: Option<Principal>,
    pub(crate) started: Instant,
    pub(crate) calls: AtomicU64,
    pub(crate) result_bytes: AtomicU64,
    pub(crate) per_tool: Mutex<HashMap<Arc<str>, u64>>,
    pub(crate) seen: Mutex<SeenIds>,
    /// Whether a repeated call id is refused (see [`SessionBuilder::call_ids_repeat`]).
    pub(crate) unique_call_ids: bool,
    /// Set once a grant of this session alone (`session` or `once`) was stored, so ending the
    /// session ([`crate::Pipeline::end_session`]) costs nothing when there is none.
    pub(crate) has_grants: std::sync::atomic::AtomicBool,
    pub(crate) memo: Mutex<Vec<(u64, bool)>>,
    /// The `time_us` of the session's last dispatched call ([`Session::dispatch_time_us`]).
    pub(crate) last_time_us: AtomicU64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("profile", &self.profile)
            .field("workspace", &self.workspace)
            .field("budgets", &self.budgets)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The agent profile.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The `time_us` of a call dispatched at `now` (microseconds since the Unix epoch):
    /// `now`, or one microsecond after the session's previous call when the clock has not
    /// moved past it, so no two calls of a session have the same time. With the session and
    /// the call id, it tells one call's records from another's even when call ids repeat
    /// ([`SessionBuilder::call_ids_repeat`]): an intent record and its call's own record
    /// share all three ([`crate::audit`]).
    pub(crate) fn dispatch_time_us(&self, now: std::time::SystemTime) -> u64 {
        let now = crate::audit::now_us(now);
        let prev = self
            .last_time_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
                Some(now.max(last.saturating_add(1)))
            })
            .unwrap_or_else(|last| last);
        now.max(prev.saturating_add(1))
    }

    /// Who is calling, as far as it outlives this session: the session's id by default, or
    /// what the host set with [`SessionBuilder::caller`] (a server whose every request is its
    /// own session names the credential the requests carry). Derived idempotency keys are
    /// derived from it ([`crate::ledger`]), so a client that sends a call again in another
    /// session of the same caller is answered from the ledger.
    pub fn caller(&self) -> &str {
        &self.caller
    }

    /// The principal's name, `subject (issuer)`, when the session has one
    /// ([`Session::principal`]). Idempotency keys are kept per principal: one principal's key
    /// never finds another's call.
    pub fn principal_key(&self) -> Option<&str> {
        self.principal_key.as_deref()
    }

    /// The workspace, when the session has one.
    pub fn workspace(&self) -> Option<&Workspace> {
        self.workspace.as_ref()
    }

    /// The budgets.
    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// Session attributes (for example who the user is), for policy conditions.
    pub fn attributes(&self) -> &HashMap<String, Value> {
        &self.attributes
    }

    /// Whom the session acts for: the verified caller of an HTTP server with an authorization
    /// server (`None` for the CLI, stdio and the static token).
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// `compute()`'s answer for `key`, computed at most once per session (and again only
    /// when two calls race to it first): for a policy's conditions that read nothing but what
    /// the session fixes when it is built (its id, profile and attributes), which then cost a
    /// lookup after the session's first call instead of an evaluation on every call.
    ///
    /// `key` must name the condition among every condition the process builds (a policy draws
    /// it from a process-wide counter); the answers of a session are few (one per such
    /// condition of the policies it is used with), kept in a small list under a lock held only
    /// for the lookup and the insertion, never while `compute` runs.
    pub fn memo_condition(&self, key: u64, compute: impl FnOnce() -> bool) -> bool {
        if let Some(&(_, v)) = self.memo.lock().iter().find(|(k, _)| *k == key) {
            return v;
        }
        let v = compute();
        let mut memo = self.memo.lock();
        if !memo.iter().any(|(k, _)| *k == key) {
            memo.push((key, v));
        }
        v
    }

    /// Calls charged so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Records `id` as used; `false` when it is among the ids this session remembers (always
    /// `true` for a session whose calls come from independent requests).
    pub(crate) fn claim(&self, id: &CallId) -> bool {
        !self.unique_call_ids || self.seen.lock().insert(id)
    }

    /// Budgets left now.
    pub(crate) fn left(&self) -> BudgetLeft {
        let b = &self.budgets;
        BudgetLeft {
            calls: b.max_calls.map(|m| m.saturating_sub(self.calls())),
            wall_time: b
                .max_wall_time
                .map(|m| m.saturating_sub(self.started.elapsed())),
            result_bytes: b
                .max_result_bytes
                .map(|m| m.saturating_sub(self.result_bytes.load(Ordering::Relaxed))),
        }
    }
}

/// Builder for a [`Session`].
#[must_use]
pub struct SessionBuilder<'r> {
    pub(crate) registry: &'r crate::Registry,
    pub(crate) id: Arc<str>,
    pub(crate) profile: String,
    pub(crate) workspace: Option<Workspace>,
    pub(crate) budgets: Budgets,
    pub(crate) attributes: HashMap<String, Value>,
    pub(crate) principal: Option<Principal>,
    pub(crate) unique_call_ids: bool,
    pub(crate) caller: Option<Arc<str>>,
}

impl SessionBuilder<'_> {
    /// Lets calls reuse call ids: for a session whose calls come from independent requests,
    /// each with ids of its own (the stateless requests of one MCP caller, where every
    /// request may be id 1). By default a call id used twice in a session is refused
    /// (`invalid_input` / `duplicate_call_id`), as MCP request ids are unique in a session.
    pub fn call_ids_repeat(mut self) -> Self {
        self.unique_call_ids = false;
        self
    }

    /// Sets the agent profile (default `default`, every tool).
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = profile.into();
        self
    }

    /// Sets the workspace.
    pub fn workspace(mut self, ws: Workspace) -> Self {
        self.workspace = Some(ws);
        self
    }

    /// Sets the budgets.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }

    /// Sets an attribute.
    pub fn attribute(mut self, key: impl Into<String>, value: Value) -> Self {
        self.attributes.insert(key.into(), value);
        self
    }

    /// Sets who is calling when it outlives the session (default: the session's id); see
    /// [`Session::caller`].
    pub fn caller(mut self, caller: impl Into<Arc<str>>) -> Self {
        self.caller = Some(caller.into());
        self
    }

    /// Sets whom the session acts for: a verified caller (see [`crate::principal`]).
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The session.
    ///
    /// # Errors
    /// [`crate::RegistrationError::InvalidProfile`] when the profile is not defined.
    pub fn build(self) -> Result<Session, crate::RegistrationError> {
        let bit = self.registry.profile_bit(&self.profile).ok_or_else(|| {
            crate::RegistrationError::InvalidProfile {
                name: self.profile.clone(),
                why: format!(
                    "no such profile; defined: {}",
                    self.registry.profile_names().collect::<Vec<_>>().join(", ")
                ),
            }
        })?;
        Ok(Session {
            caller: self.caller.unwrap_or_else(|| self.id.clone()),
            principal_key: self.principal.as_ref().map(|p| p.to_string().into()),
            id: self.id,
            profile: self.profile.into(),
            profile_bit: bit,
            workspace: self.workspace,
            budgets: self.budgets,
            attributes: self.attributes,
            principal: self.principal,
            started: Instant::now(),
            calls: AtomicU64::new(0),
            result_bytes: AtomicU64::new(0),
            per_tool: Mutex::new(HashMap::new()),
            seen: Mutex::new(SeenIds::default()),
            unique_call_ids: self.unique_call_ids,
            has_grants: std::sync::atomic::AtomicBool::new(false),
            memo: Mutex::new(Vec::new()),
            last_time_us: AtomicU64::new(0),
        })
    }
}
