//! [`McpServer`]: what every connection of one server shares (the pipeline, the tool listing
//! of its profile, the server information), and its builder.

use crate::caller::Callers;
use crate::error::Error;
use crate::handler::Connection;
use crate::inflight::InFlight;
use crate::mrtr::ApprovalStates;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, Tool, ToolsCapability};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::registry::DEFAULT_PROFILE;
use toolgate_core::{Budgets, Pipeline, Workspace};

/// The default page size of `tools/list`.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The default interval between "still running" progress notifications.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// How long an `always` approval given through the form holds by default, in hours.
pub const DEFAULT_ALWAYS_HOURS: u32 = 24;
/// How long an approval question waits for the client's answer by default.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the grants of answers given through the form hold, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GrantSecs {
    /// A `session` grant (`None`: until its session ends or it is revoked).
    pub(crate) session: Option<u64>,
    /// An `always` grant whose answer does not say.
    pub(crate) always: u64,
    /// The longest an answer may ask for.
    pub(crate) max: u64,
}

impl Default for GrantSecs {
    fn default() -> Self {
        GrantSecs {
            session: None,
            always: u64::from(DEFAULT_ALWAYS_HOURS) * 3600,
            max: MAX_GRANT_SECS,
        }
    }
}

/// The longest expiry of a grant given through the form: [`crate::approval::MAX_ALWAYS_HOURS`].
const MAX_GRANT_SECS: u64 = crate::approval::MAX_ALWAYS_HOURS as u64 * 3600;

/// An MCP server over one pipeline: cheap to clone, one per process. Each MCP session (a
/// stdio connection, an HTTP session with `Mcp-Session-Id`) gets its own toolgate
/// [`toolgate_core::Session`] under the server's profile, workspace and budgets; the
/// stateless HTTP requests of one caller share one ([`crate::caller`]).
#[derive(Clone)]
pub struct McpServer {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) pipeline: Pipeline,
    pub(crate) profile: String,
    pub(crate) workspace: Option<Workspace>,
    pub(crate) budgets: Budgets,
    /// The attributes every connection's session starts with.
    pub(crate) attributes: Vec<(String, serde_json::Value)>,
    /// The tools the profile sees, as listed for the registry's generation it was made
    /// from; made again when the pipeline's registry changes ([`Shared::listing`]).
    pub(crate) listing: arc_swap::ArcSwap<Listing>,
    /// The pipeline's registry generation.
    pub(crate) changes: tokio::sync::watch::Receiver<u64>,
    pub(crate) page_size: usize,
    pub(crate) info: ServerConfig,
    pub(crate) progress_interval: Duration,
    pub(crate) approval_timeout: Duration,
    pub(crate) grant_secs: GrantSecs,
    pub(crate) inflight: InFlight,
    pub(crate) approvals: ApprovalStates,
    /// The sessions of the callers of stateless requests.
    pub(crate) callers: Callers,
    /// The most requests in flight in one session ([`crate::jsonrpc::InFlightIds`]).
    pub(crate) max_in_flight: usize,
    /// The profile and attributes of a verified caller's sessions.
    pub(crate) identity_setup: Option<IdentitySetup>,
    /// The resources, templates, prompts and completion served besides tools.
    pub(crate) catalogs: crate::catalog::Catalogs,
    /// What the catalogs serve (the capabilities declared).
    pub(crate) serves: crate::catalog::Serves,
}

/// What a verified caller's sessions are built with: its profile and attributes, from its
/// identity (the CLI maps the token's claims to a role of the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionShape {
    /// The agent profile.
    pub profile: String,
    /// The session attributes, added to the server's.
    pub attributes: Vec<(String, serde_json::Value)>,
}

/// Maps a verified identity to its sessions' [`SessionShape`]; an error is logged and the
/// caller's requests get the server's profile and the claims alone.
pub type IdentitySetup =
    Arc<dyn Fn(&crate::http::auth::Identity) -> Result<SessionShape, String> + Send + Sync>;

/// The tools one session lists ([`Shared::visible_tools`]): the server's listing, or a list
/// of their own.
pub(crate) enum Visible {
    Listing(Arc<Listing>),
    Own(Vec<Tool>),
}

impl std::ops::Deref for Visible {
    type Target = [Tool];

    fn deref(&self) -> &[Tool] {
        match self {
            Visible::Listing(l) => &l.tools,
            Visible::Own(v) => v,
        }
    }
}

/// The tools of the server's profile at one registry generation.
pub(crate) struct Listing {
    generation: u64,
    /// The highest version of every tool the profile sees, sorted by name.
    pub(crate) tools: Vec<Tool>,
    pub(crate) by_name: HashMap<Arc<str>, usize>,
}

impl Listing {
    fn of(pipeline: &Pipeline, profile: &str, generation: u64) -> Result<Listing, Error> {
        let registry = pipeline.registry();
        let tools: Vec<Tool> = registry
            .list(Some(profile))?
            .into_iter()
            .map(crate::tools::to_mcp_tool)
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (Arc::<str>::from(t.name.as_ref()), i))
            .collect();
        Ok(Listing {
            generation,
            tools,
            by_name,
        })
    }
}

impl Shared {
    /// The tools as listed now: made again when the pipeline's registry changed since.
    pub(crate) fn listing(&self) -> Arc<Listing> {
        let generation = *self.changes.borrow();
        let current = self.listing.load_full();
        if current.generation == generation {
            return current;
        }
        match Listing::of(&self.pipeline, &self.profile, generation) {
            Ok(l) => {
                let l = Arc::new(l);
                self.listing.store(l.clone());
                l
            }
            Err(e) => {
                tracing::error!(error = %e, "listing the changed registry; the previous list stays");
                current
            }
        }
    }

    /// A new toolgate session under the server's profile, workspace, budgets and attributes,
    /// its idempotency keys derived from `name` (default: its id); for a verified `caller`,
    /// acting for its principal, with the profile and attributes of its [`IdentitySetup`]
    /// (else its kept claims).
    pub(crate) fn new_session(
        &self,
        id: String,
        call_ids_repeat: bool,
        name: Option<String>,
        caller: Option<&crate::http::Caller>,
    ) -> toolgate_core::Session {
        let identity = caller.and_then(crate::http::Caller::identity);
        let shape = identity.map(|i| self.shape(i));
        let profile = shape
            .as_ref()
            .map_or(self.profile.as_str(), |s| s.profile.as_str());
        let mut builder = self
            .pipeline
            .session(id)
            .profile(profile)
            .budgets(self.budgets);
        if let (Some(identity), Some(shape)) = (identity, &shape) {
            builder = builder.principal(identity.principal.clone());
            for (k, v) in &shape.attributes {
                builder = builder.attribute(k.clone(), v.clone());
            }
        }
        if call_ids_repeat {
            builder = builder.call_ids_repeat();
        }
        if let Some(name) = name {
            builder = builder.caller(name);
        }
        for (k, v) in &self.attributes {
            builder = builder.attribute(k.clone(), v.clone());
        }
        if let Some(ws) = &self.workspace {
            builder = builder.workspace(ws.clone());
        }
        match builder.build() {
            Ok(session) => session,
            Err(e) => {
                // only an identity's profile can be unknown: the server's was checked
                tracing::error!(error = %e, "a caller's profile is not defined; using the server's");
                let mut fallback = self
                    .pipeline
                    .session(format!("mcp-{:032x}", rand::random::<u128>()))
                    .profile(self.profile.as_str())
                    .budgets(self.budgets);
                if let Some(identity) = identity {
                    fallback = fallback.principal(identity.principal.clone());
                }
                fallback
                    .build()
                    .expect("the server's profile was checked at build")
            }
        }
    }

    /// The tools `session` lists: those of its profile the policy does not deny it outright
    /// (the server's own listing of the moment when that is all of them).
    pub(crate) fn visible_tools(&self, session: &toolgate_core::Session) -> Visible {
        let listing = self.listing();
        let registry = self.pipeline.registry();
        let specs = registry.list(Some(session.profile())).unwrap_or_default();
        let visible: Vec<_> = specs
            .into_iter()
            .filter(|s| self.pipeline.visible(s, session))
            .collect();
        if session.profile() == self.profile && visible.len() == listing.tools.len() {
            return Visible::Listing(listing);
        }
        Visible::Own(visible.into_iter().map(crate::tools::to_mcp_tool).collect())
    }

    /// The shape of `identity`'s sessions.
    fn shape(&self, identity: &crate::http::auth::Identity) -> SessionShape {
        let plain = || SessionShape {
            profile: self.profile.clone(),
            attributes: identity
                .claims
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .chain([(
                    "iss".to_string(),
                    serde_json::Value::String(identity.principal.issuer.to_string()),
                )])
                .collect(),
        };
        match &self.identity_setup {
            None => plain(),
            Some(setup) => setup(identity).unwrap_or_else(|e| {
                tracing::error!(principal = %identity.principal, error = %e, "shaping a caller's session");
                plain()
            }),
        }
    }

    /// The session of a stateless request's caller, made at its first request.
    pub(crate) fn caller_session(
        &self,
        key: crate::caller::CallerKey,
        caller: Option<&crate::http::Caller>,
    ) -> Arc<crate::caller::CallerSession> {
        // the caller's name outlives its session (evicted, or the server restarted), so the
        // idempotency keys derived for its calls do too
        self.callers.session(key, &self.pipeline, || {
            self.new_session(
                format!("mcp-caller-{:032x}", rand::random::<u128>()),
                true,
                Some(key.name()),
                caller,
            )
        })
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("profile", &self.shared.profile)
            .field("workspace", &self.shared.workspace)
            .field("tools", &self.shared.listing().tools.len())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A builder over `pipeline`. For approval through the client, build the pipeline with
    /// [`crate::pipeline_builder`] (its approver is a [`crate::ClientApprover`]).
    pub fn builder(pipeline: Pipeline) -> McpServerBuilder {
        McpServerBuilder {
            pipeline,
            profile: DEFAULT_PROFILE.to_string(),
            workspace: None,
            budgets: Budgets::default(),
            attributes: Vec::new(),
            page_size: DEFAULT_PAGE_SIZE,
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            grant_secs: GrantSecs::default(),
            name: "toolgate".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            instructions: None,
            max_in_flight: crate::jsonrpc::DEFAULT_MAX_IN_FLIGHT,
            identity_setup: None,
            catalogs: crate::catalog::Catalogs::default(),
        }
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        &self.shared.pipeline
    }

    /// The agent profile every connection runs under.
    pub fn profile(&self) -> &str {
        &self.shared.profile
    }

    /// The tools as listed now, sorted by name.
    pub fn tools(&self) -> Vec<Tool> {
        self.shared.listing().tools.clone()
    }

    /// Tool calls running now, over every connection.
    pub fn calls_in_flight(&self) -> usize {
        self.shared.inflight.count()
    }

    /// Waits until no tool call is running, or `grace` has passed; `true` when none is left.
    pub async fn drain(&self, grace: Duration) -> bool {
        self.shared.inflight.wait_idle(grace).await
    }

    /// A new connection: the rmcp handler of one MCP session, with a toolgate session of
    /// its own (a random id, the server's profile, workspace and budgets), which ends when the
    /// connection is dropped. A stateless HTTP request's connection runs its calls in its
    /// caller's session instead ([`crate::caller`]).
    pub fn connection(&self) -> Connection {
        let id = format!("mcp-{:032x}", rand::random::<u128>());
        // over HTTP, built while serving the request that opens the session: its caller's
        let caller = crate::http::caller_of_request();
        let session = self.shared.new_session(id, false, None, caller.as_ref());
        Connection::new(self.shared.clone(), session)
    }
}

/// Builder for [`McpServer`].
#[must_use]
pub struct McpServerBuilder {
    pipeline: Pipeline,
    profile: String,
    workspace: Option<Workspace>,
    budgets: Budgets,
    attributes: Vec<(String, serde_json::Value)>,
    page_size: usize,
    progress_interval: Duration,
    approval_timeout: Duration,
    grant_secs: GrantSecs,
    name: String,
    version: String,
    instructions: Option<String>,
    max_in_flight: usize,
    identity_setup: Option<IdentitySetup>,
    catalogs: crate::catalog::Catalogs,
}

impl McpServerBuilder {
    /// Serves `catalog`'s resources, resource templates, prompts and completion besides the
    /// tools, after those of the catalogs added before ([`crate::catalog`]); the server
    /// declares the capabilities of what they serve.
    pub fn catalog(mut self, catalog: Arc<dyn crate::catalog::Catalog>) -> Self {
        self.catalogs.push(catalog);
        self
    }

    /// Sets the agent profile every connection runs under (default `default`).
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = profile.into();
        self
    }
    /// Sets the workspace the tools are confined to.
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }
    /// Sets the budgets of each connection's session.
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = budgets;
        self
    }
    /// Sets a session attribute every connection's session starts with (for the policy's
    /// conditions).
    pub fn attribute(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.attributes.push((key.into(), value));
        self
    }
    /// Sets how many tools one `tools/list` page holds (default 100, at least 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
    /// Sets the interval of "still running" progress notifications (default 1 s).
    pub fn progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }
    /// Sets how long an approval question waits for the client (default 300 s).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = timeout;
        self
    }
    /// Sets the hours an `always` approval given through the form holds when the answer does
    /// not say (default 24; clamped to 1 to [`crate::approval::MAX_ALWAYS_HOURS`]).
    pub fn always_expires_hours(mut self, hours: u32) -> Self {
        let hours = hours.clamp(1, crate::approval::MAX_ALWAYS_HOURS);
        self.grant_secs.always = (u64::from(hours) * 3600).min(self.grant_secs.max);
        self
    }
    /// Sets how long the grants of answers given through the form hold (the configuration's
    /// `[approvals]` and the command line's flags, resolved): `session` for a `session`
    /// grant (`None`: until its session ends), `always` for an `always` grant whose answer
    /// does not say, and `max`, the longest an answer's `expires_hours` may ask for. An
    /// `always` grant given through the form always expires: `None` (never) and every span
    /// are held to `max`, and `max` to [`crate::approval::MAX_ALWAYS_HOURS`]; spans count
    /// in whole seconds, at least one.
    pub fn grant_expiry(
        mut self,
        session: Option<Duration>,
        always: Option<Duration>,
        max: Option<Duration>,
    ) -> Self {
        let secs = |d: Duration| d.as_secs().clamp(1, MAX_GRANT_SECS);
        let max = max.map_or(MAX_GRANT_SECS, secs);
        self.grant_secs = GrantSecs {
            session: session.map(|d| secs(d).min(max)),
            always: always.map_or(max, |d| secs(d).min(max)),
            max,
        };
        self
    }
    /// Sets the server name and version sent in `initialize` and `server/discover`
    /// (default `toolgate` and this crate's version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }
    /// Sets the instructions sent to the client in `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the most requests one session may have in flight (default
    /// [`crate::jsonrpc::DEFAULT_MAX_IN_FLIGHT`], at least 1); one more is answered with a
    /// JSON-RPC error (`-32000`) and not run.
    pub fn max_requests_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self
    }

    /// Sets how a verified caller's sessions are shaped (profile, attributes) from its
    /// identity (default: the server's profile, and the token's kept claims and `iss` as
    /// attributes).
    pub fn identity_setup(mut self, setup: IdentitySetup) -> Self {
        self.identity_setup = Some(setup);
        self
    }

    /// The server.
    ///
    /// # Errors
    /// [`Error::Registration`] when the profile is not defined.
    pub fn build(self) -> Result<McpServer, Error> {
        let changes = self.pipeline.registry_changes();
        let generation = *changes.borrow();
        let listing = Listing::of(&self.pipeline, &self.profile, generation)?;
        // Check the profile the way every connection will use it.
        self.pipeline
            .session("check")
            .profile(self.profile.as_str())
            .build()?;
        let mut capabilities = ServerCapabilities::default();
        // The pipeline's registry can be swapped while serving (a gateway's upstream changed
        // its tools): every session is sent notifications/tools/list_changed then.
        let mut tools_cap = ToolsCapability::default();
        tools_cap.list_changed = Some(true);
        capabilities.tools = Some(tools_cap);
        #[allow(deprecated)]
        {
            capabilities.logging = Some(Default::default());
        }
        let serves = self.catalogs.serves();
        // `subscribe` and the resources' and prompts' `listChanged` are declared in the answer
        // to `initialize` only (`Connection::initialize`): on 2026-07-28 they would promise
        // them on `subscriptions/listen` (SEP-2575), which sends tools list changes only
        if serves.resources {
            capabilities.resources = Some(rmcp::model::ResourcesCapability::default());
        }
        if serves.prompts {
            capabilities.prompts = Some(Default::default());
        }
        if serves.completions {
            capabilities.completions = Some(Default::default());
        }
        let mut info = ServerConfig::new(capabilities);
        let mut implementation = Implementation::default();
        implementation.name = self.name;
        implementation.version = self.version;
        implementation.title = Some("toolgate".to_string());
        info.server_info = implementation;
        info.instructions = self.instructions;
        Ok(McpServer {
            shared: Arc::new(Shared {
                pipeline: self.pipeline,
                profile: self.profile,
                workspace: self.workspace,
                budgets: self.budgets,
                attributes: self.attributes,
                listing: arc_swap::ArcSwap::from_pointee(listing),
                changes,
                page_size: self.page_size,
                info,
                progress_interval: self.progress_interval,
                approval_timeout: self.approval_timeout,
                grant_secs: self.grant_secs,
                inflight: InFlight::default(),
                approvals: ApprovalStates::new(),
                callers: Callers::default(),
                max_in_flight: self.max_in_flight,
                identity_setup: self.identity_setup,
                catalogs: self.catalogs,
                serves,
            }),
        })
    }
}
