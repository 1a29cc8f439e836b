//! The [`Gateway`]: every configured upstream supervised, its tools turned into registry
//! tools through naming, pinning and quarantine, and the pipeline's registry rebuilt when an
//! upstream's tools change.
//!
//! What happens to each tool an upstream lists, in order:
//!
//! 1. the entry's `tools` include and exclude patterns;
//! 2. its listed name ([`crate::naming`]); one that would shadow a tool of the base registry
//!    (a built-in) is left out and reported, and a name two upstreams' tools take (upstreams
//!    with `prefix = false`) is served by neither, so an upstream cannot take over another's
//!    tool by listing one of its name;
//! 3. its definition's hash and the quarantine's findings ([`crate::definition`],
//!    [`crate::quarantine`]), applied to its pin in the store: served when the pin is, else
//!    blocked ([`BlockedTool`]: never listed, refused when called);
//! 4. its effects from its annotations under the entry's trust ([`crate::effects`]), its
//!    resource arguments from the entry, its text cleaned like any output.

use crate::connect::StartContext;
use crate::definition::Definition;
use crate::tool::{BlockReason, BlockedTool, ResourceArgument, UpstreamTool};
use crate::upstream::Upstream;
use parking_lot::Mutex;
use rmcp::model::Tool as McpTool;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolgate_config::upstreams::ArgumentKind;
use toolgate_config::UpstreamConfig;
use toolgate_core::pattern::ToolPattern;
use toolgate_core::sanitize::clean_output;
use toolgate_core::{Access, Pipeline, Registry, RegistryBuilder, Tool, ToolSpec};
use toolgate_store::{Observed, PinState, Store};

/// Makes the base registry (the built-in tools and the profiles) that upstream tools are
/// added to, each time the registry is rebuilt.
pub type BaseRegistry = Arc<dyn Fn() -> RegistryBuilder + Send + Sync>;
/// Wraps each upstream tool before registration (the configuration's `[limits]`).
pub type WrapTool = Arc<dyn Fn(Arc<dyn Tool>) -> Arc<dyn Tool> + Send + Sync>;

/// What a gateway needs.
pub struct GatewayOptions {
    /// The upstreams, as configured (checked at load).
    pub upstreams: Vec<UpstreamConfig>,
    /// What joins an upstream's name and its tool's (`[gateway] separator`).
    pub separator: String,
    /// Where pins and health live.
    pub store: Store,
    /// How stdio servers start (the workspace root, the sandbox's settings).
    pub start: StartContext,
    /// Names upstream tools may not take (the base registry's tools).
    pub reserved: Vec<String>,
    /// Which addresses a URL an upstream tool is given (an argument declared `kind = "url"`)
    /// may name or resolve to: the HTTP tools' policy (`[http] allow_private`), so a fetch
    /// server behind the gateway is not sent to a private or metadata address
    /// ([`toolgate_core::egress`]).
    pub egress: toolgate_core::egress::EgressPolicy,
    /// Applied to each upstream tool before registration.
    pub wrap: Option<WrapTool>,
    /// Where an upstream's log messages sent while it serves a call go: the call's client
    /// ([`crate::logs`]); none passed on without it.
    pub client_log: Option<crate::logs::ClientLogHook>,
    /// How an upstream's requests (sampling, elicitation) sent while it serves a call reach
    /// the call's client, for the upstreams whose entry opts in ([`crate::relay`]); none
    /// relayed without it.
    pub client_requests: Option<crate::relay::ClientRequestHook>,
    /// The upstream resources one session may be subscribed to at once (`[gateway]
    /// max_subscriptions`, at least 1).
    pub max_subscriptions: u32,
}

/// The tools of the upstreams, kept up to date while it lives; dropping it stops every
/// upstream.
pub struct Gateway {
    inner: Arc<GatewayInner>,
}

pub(crate) struct GatewayInner {
    pub(crate) upstreams: Vec<Arc<Upstream>>,
    pub(crate) separator: String,
    pub(crate) store: Store,
    reserved: HashSet<String>,
    wrap: Option<WrapTool>,
    /// Each upstream's tools (served and blocked), by upstream name.
    tools: Mutex<BTreeMap<String, Vec<Arc<dyn Tool>>>>,
    /// What each upstream's tools were made from (listed name, hash, served), to keep them
    /// (and their breakers) when a restarted upstream lists the same tools.
    made_from: Mutex<BTreeMap<String, Vec<MadeFrom>>>,
    attached: Mutex<Option<(Pipeline, BaseRegistry)>>,
    rebuilding: Mutex<()>,
    shutdown: CancellationToken,
    /// Each upstream's last tool list, to apply again when the operator approves a pin.
    listed: Mutex<BTreeMap<String, Listed>>,
    /// Told by a blocked tool's call: read the pins again now.
    recheck: Arc<Notify>,
    /// The upstreams' prompts as last listed, by listed name ([`crate::catalog`]).
    pub(crate) prompts: Mutex<crate::catalog::known::KnownPrompts>,
    /// Where a change of the resources or prompts served is told.
    pub(crate) catalog_changes: tokio::sync::broadcast::Sender<crate::catalog::CatalogChange>,
    /// How many resources each session is subscribed to ([`crate::subscriptions`]).
    pub(crate) subscribed: crate::subscriptions::Held,
}

/// How often a gateway reads the store's approvals mark ([`Store::approvals_mark`]) to see
/// an approval made by another process (`toolgate upstream approve`) while it serves.
pub const PIN_POLL: Duration = Duration::from_secs(1);

/// An upstream and the tools it listed last.
type Listed = (Arc<Upstream>, Vec<McpTool>);

/// What one upstream tool was made from: its listed name, its definition's hash, whether it
/// is served.
type MadeFrom = (String, String, bool);

/// One upstream's health, as [`Gateway::status`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamStatus {
    /// The upstream's name.
    pub name: String,
    /// `starting`, `ready` or `down`.
    pub state: &'static str,
    /// The upstream's breaker: `closed`, `open` or `half_open`.
    pub breaker: &'static str,
    /// What happened last.
    pub detail: Option<String>,
    /// Restarts so far.
    pub restarts: u64,
    /// Calls that failed or timed out so far.
    pub failures: u64,
    /// Notifications it sent over its budgets so far, dropped ([`crate::flood`]).
    pub dropped: u64,
}

impl Gateway {
    /// Starts every upstream and waits until each has listed its tools or failed its first
    /// start (at most its `startup_timeout_ms`, plus a second). An upstream that failed
    /// keeps being started again with backoff; its tools appear when it comes up (after
    /// [`Gateway::attach`]).
    pub async fn start(options: GatewayOptions) -> Gateway {
        let shutdown = CancellationToken::new();
        let upstreams: Vec<Arc<Upstream>> = options
            .upstreams
            .into_iter()
            .map(|c| {
                let mut u = Upstream::new(
                    c,
                    options.store.clone(),
                    options.client_log.clone(),
                    options.client_requests.clone(),
                );
                u.egress = options.egress.clone();
                Arc::new(u)
            })
            .collect();
        let inner = Arc::new(GatewayInner {
            upstreams: upstreams.clone(),
            separator: options.separator,
            store: options.store,
            // the base registry's names, and those toolgate may add to it later: the search
            // tool (registered when a profile defers tools) and its own `toolgate.*` tools
            reserved: options
                .reserved
                .into_iter()
                .chain([toolgate_core::search::SEARCH_TOOLS.to_string()])
                .collect(),
            wrap: options.wrap,
            tools: Mutex::new(BTreeMap::new()),
            made_from: Mutex::new(BTreeMap::new()),
            attached: Mutex::new(None),
            rebuilding: Mutex::new(()),
            shutdown: shutdown.clone(),
            listed: Mutex::new(BTreeMap::new()),
            recheck: Arc::new(Notify::new()),
            prompts: Mutex::default(),
            catalog_changes: tokio::sync::broadcast::channel(16).0,
            subscribed: crate::subscriptions::Held::new(options.max_subscriptions),
        });
        tokio::spawn(watch_approvals(Arc::downgrade(&inner), shutdown.clone()));
        let start = Arc::new(options.start);
        let mut firsts = Vec::new();
        let mut longest = Duration::ZERO;
        for up in upstreams {
            let (tx, rx) = tokio::sync::oneshot::channel();
            longest = longest.max(up.config.startup_timeout() * 2);
            firsts.push(rx);
            tokio::spawn(up.supervise(Arc::downgrade(&inner), start.clone(), tx, shutdown.clone()));
        }
        let all = futures::future::join_all(firsts);
        let _ = tokio::time::timeout(longest + Duration::from_secs(1), all).await;
        Gateway { inner }
    }

    /// Every upstream tool now: served ones, and blocked ones (unlisted), to register.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner.all_tools()
    }

    /// The registry of `base()`'s tools and every upstream tool now, built failing closed: an
    /// upstream tool the registry refuses is left out (logged), and when the registry still
    /// cannot be built, it holds the base tools alone.
    ///
    /// # Errors
    /// The base tools alone cannot be registered.
    pub fn registry(
        &self,
        base: &(dyn Fn() -> RegistryBuilder + Send + Sync),
    ) -> Result<Registry, toolgate_core::RegistrationError> {
        build_failing_closed(base, self.inner.all_tools())
    }

    /// From now on, a change of an upstream's tools rebuilds `pipeline`'s registry from
    /// `base` and every upstream tool, and swaps it in ([`Pipeline::replace_registry`]).
    /// Also rebuilds it once now, for the upstreams that came up since [`Gateway::start`].
    pub fn attach(&self, pipeline: Pipeline, base: BaseRegistry) {
        *self.inner.attached.lock() = Some((pipeline, base));
        self.inner.rebuild();
    }

    /// The upstreams' resources, resource templates and prompts, for a server's catalog
    /// ([`crate::catalog`]).
    pub fn catalog(&self) -> crate::catalog::UpstreamCatalog {
        crate::catalog::UpstreamCatalog::new(self.inner.clone())
    }

    /// Each upstream's health, in configuration order.
    pub fn status(&self) -> Vec<UpstreamStatus> {
        self.inner
            .upstreams
            .iter()
            .map(|u| {
                let h = u.health.lock();
                UpstreamStatus {
                    name: u.config.name.clone(),
                    state: h.state.as_str(),
                    breaker: u.breaker.state().as_str(),
                    detail: h.detail.clone(),
                    restarts: h.restarts,
                    failures: h.failures,
                    dropped: u.budgets.dropped(),
                }
            })
            .collect()
    }

    /// Stops every upstream (also done when the gateway is dropped).
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.inner.shutdown.cancel();
    }
}

impl GatewayInner {
    fn all_tools(&self) -> Vec<Arc<dyn Tool>> {
        let tools = self.tools.lock();
        // a name two upstreams take is neither's: serving the first (by upstream name) would
        // let an upstream that lists a tool of another's name later take its calls (tool
        // shadowing), whatever order they came in
        let mut holders: HashMap<&str, Vec<&str>> = HashMap::new();
        for (upstream, list) in tools.iter() {
            for t in list {
                holders
                    .entry(t.spec().name.as_ref())
                    .or_default()
                    .push(upstream);
            }
        }
        let mut out = Vec::new();
        for list in tools.values() {
            for t in list {
                match holders.get(t.spec().name.as_ref()) {
                    Some(h) if h.len() > 1 => {}
                    _ => out.push(t.clone()),
                }
            }
        }
        for (name, h) in holders.iter().filter(|(_, h)| h.len() > 1) {
            tracing::error!(tool = %name, upstreams = ?h, "upstream tools of several upstreams have one name; none of them is served (give each upstream prefix = true)");
        }
        out
    }

    /// Takes `upstream`'s tool list (at its start, or after it said the list changed).
    pub(crate) fn apply_tools(&self, upstream: &Arc<Upstream>, listed: Vec<McpTool>) {
        self.listed.lock().insert(
            upstream.config.name.clone(),
            (upstream.clone(), listed.clone()),
        );
        self.apply_listed(upstream, listed);
    }

    /// Applies every upstream's last tool list again: the pins are read anew, so a tool the
    /// operator approved since is served (and one whose pin was otherwise changed, blocked).
    fn reapply(&self) {
        let all: Vec<(Arc<Upstream>, Vec<McpTool>)> =
            self.listed.lock().values().cloned().collect();
        for (upstream, listed) in all {
            self.apply_listed(&upstream, listed);
        }
    }

    fn apply_listed(&self, upstream: &Arc<Upstream>, listed: Vec<McpTool>) {
        let config = &upstream.config;
        let include: Vec<ToolPattern> = config
            .tools
            .include
            .iter()
            .filter_map(|p| ToolPattern::parse(p).ok())
            .collect();
        let exclude: Vec<ToolPattern> = config
            .tools
            .exclude
            .iter()
            .filter_map(|p| ToolPattern::parse(p).ok())
            .collect();
        let mut names = HashSet::new();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut made_from = Vec::new();
        let (mut served, mut blocked) = (0u32, 0u32);
        // the unlisted tools that read its resources and get its prompts, first: their names
        // are taken before any of its tools'
        for tool in self.served_tools(upstream) {
            names.insert(tool.spec().name.to_string());
            made_from.push((tool.spec().name.to_string(), String::new(), true));
            tools.push(match &self.wrap {
                Some(w) => w(tool),
                None => tool,
            });
        }
        // the built-in tools an upstream tool's definition may not name (tool shadowing),
        // but for names the upstream's own tools have: a sibling named there is its own
        let builtins: Vec<&str> = self
            .reserved
            .iter()
            .map(String::as_str)
            .filter(|b| !listed.iter().any(|t| t.name.as_ref() == *b))
            .collect();
        // the listed name each pinned tool of the upstream had: a name is the operator's
        // (rules, grants and the model use it), so a new tool under a pinned tool's name (a
        // name cleaned or cut to the same text: `add?` and `add_-906783`) is held for review
        let pinned_names: HashMap<String, String> = match self.store.pins(Some(&config.name)) {
            Ok(pins) => pins
                .into_iter()
                .filter(|p| p.pinned_hash.is_some() && !p.tool.starts_with("prompt:"))
                .map(|p| {
                    (
                        crate::catalog::listed(config, &self.separator, &p.tool),
                        p.tool,
                    )
                })
                .collect(),
            Err(e) => {
                tracing::error!(upstream = %config.name, error = %e, "the pins could not be read");
                HashMap::new()
            }
        };
        for t in listed {
            let own = t.name.to_string();
            if (!include.is_empty() && !include.iter().any(|p| p.matches(&own)))
                || exclude.iter().any(|p| p.matches(&own))
            {
                continue;
            }
            let listed_name = crate::catalog::listed(config, &self.separator, &own);
            // in any case: `RUN_SHELL` or `Toolgate.x` passes for toolgate's own with a model
            // (listed names are ASCII, MCP's name rule)
            let reserved_prefix = listed_name
                .get(..RESERVED_PREFIX.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(RESERVED_PREFIX));
            if reserved_prefix
                || self
                    .reserved
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(&listed_name))
            {
                tracing::error!(upstream = %config.name, tool = %own, name = %listed_name, "the upstream tool would shadow a built-in tool of that name; it is not served");
                continue;
            }
            if !names.insert(listed_name.clone()) {
                tracing::error!(upstream = %config.name, tool = %own, name = %listed_name, "two tools of the upstream map to one name; the second is not served");
                continue;
            }
            let def = Definition::of(&t);
            let input = Value::Object((*t.input_schema).clone());
            let output = t
                .output_schema
                .as_ref()
                .map(|o| Value::Object((**o).clone()));
            let mut findings = crate::quarantine::scan_tool(&t, def.json.len(), &builtins);
            if let Some(other) = pinned_names.get(&listed_name).filter(|o| **o != own) {
                findings.push(format!(
                    "it would be listed as {listed_name}, the name of the upstream's tool \
                     {other:?} pinned before (rules, grants and the model know that name)"
                ));
            }
            let quarantine = (!findings.is_empty()).then(|| findings.join("; "));
            let seen = Observed {
                upstream: &config.name,
                tool: &own,
                hash: &def.hash,
                definition: &def.json,
                quarantine: quarantine.as_deref(),
            };
            let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
            let state = match self.store.observe_definition(&seen, now) {
                Ok(pin) if pin.is_served() => None,
                Ok(pin) => Some(match pin.state {
                    PinState::Quarantined => BlockReason::Quarantined,
                    _ => BlockReason::Changed,
                }),
                Err(e) => {
                    tracing::error!(upstream = %config.name, tool = %own, error = %e, "the pin could not be checked; the tool is blocked");
                    Some(BlockReason::Changed)
                }
            };
            made_from.push((listed_name.clone(), def.hash.clone(), state.is_none()));
            let tool: Option<Arc<dyn Tool>> = match state {
                Some(reason) => {
                    if let Some(pin_reason) = &quarantine {
                        tracing::warn!(upstream = %config.name, tool = %own, findings = %pin_reason, "an upstream tool is quarantined");
                    }
                    blocked += 1;
                    BlockedTool::new(
                        &listed_name,
                        &config.name,
                        &own,
                        reason,
                        self.recheck.clone(),
                    )
                    .map(|b| Arc::new(b) as Arc<dyn Tool>)
                }
                None => match served_tool(upstream, &t, &listed_name, input, output) {
                    Ok(tool) => {
                        served += 1;
                        Some(match &self.wrap {
                            Some(w) => w(tool),
                            None => tool,
                        })
                    }
                    Err(e) => {
                        tracing::error!(upstream = %config.name, tool = %own, error = %e, "the upstream tool's definition cannot be registered; it is not served");
                        None
                    }
                },
            };
            tools.extend(tool);
        }
        tracing::info!(upstream = %config.name, served, blocked, "upstream tools listed");
        metrics::gauge!("toolgate_upstream_tools", "upstream" => config.name.clone(), "state" => "served")
            .set(f64::from(served));
        metrics::gauge!("toolgate_upstream_tools", "upstream" => config.name.clone(), "state" => "blocked")
            .set(f64::from(blocked));
        let same = self
            .made_from
            .lock()
            .insert(config.name.clone(), made_from.clone())
            == Some(made_from);
        if same && self.tools.lock().contains_key(&config.name) {
            // a restarted upstream with the same tools: keep them, and their breakers
            return;
        }
        self.tools.lock().insert(config.name.clone(), tools);
        self.rebuild();
    }

    /// The unlisted tools of `upstream`'s resources and prompts, for what its connection
    /// declared ([`crate::served`]).
    fn served_tools(&self, upstream: &Arc<Upstream>) -> Vec<Arc<dyn Tool>> {
        let caps = upstream
            .peer
            .load_full()
            .and_then(|p| p.peer_info().map(|i| i.capabilities.clone()));
        let Some(caps) = caps else {
            return Vec::new();
        };
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        if caps.resources.is_some() {
            match crate::served::ReadUpstreamResource::new(upstream.clone(), &self.separator) {
                Ok(t) => out.push(Arc::new(t)),
                Err(e) => {
                    tracing::error!(upstream = %upstream.config.name, error = %e, "the upstream's resources cannot be served")
                }
            }
        }
        if caps.prompts.is_some() {
            match crate::served::GetUpstreamPrompt::new(upstream.clone()) {
                Ok(t) => out.push(Arc::new(t)),
                Err(e) => {
                    tracing::error!(upstream = %upstream.config.name, error = %e, "the upstream's prompts cannot be served")
                }
            }
        }
        out
    }

    /// The audit sink of the pipeline the gateway is attached to, if it is.
    pub(crate) fn audit_sink(&self) -> Option<Arc<dyn toolgate_core::audit::AuditSink>> {
        self.attached
            .lock()
            .as_ref()
            .map(|(pipeline, _)| pipeline.audit().clone())
    }

    /// Builds the pipeline's registry again from the base tools and every upstream's tools
    /// now ([`build_failing_closed`]): the previous registry never stays, since it may serve
    /// a definition that is blocked now.
    fn rebuild(&self) {
        let _one_at_a_time = self.rebuilding.lock();
        let Some((pipeline, base)) = self.attached.lock().clone() else {
            return;
        };
        let built = build_failing_closed(&*base, self.all_tools());
        match built.map(|r| pipeline.replace_registry(r)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => {
                tracing::error!(error = %e, "the registry could not be built again; the previous one stays");
            }
        }
    }
}

/// The most builds [`build_failing_closed`] tries, leaving out one refused tool each time.
const MAX_REBUILD_TRIES: usize = 16;

/// A registry of `base()`'s tools and the upstream `tools`, failing closed: an upstream tool
/// the registry refuses (a name toolgate adds later, a schema it cannot compile) is left out,
/// logged, and the build tried again without it; when it still cannot be built, the base
/// tools alone. So an upstream can neither stop toolgate from starting nor freeze the tools
/// it serves.
///
/// # Errors
/// The base tools alone cannot be registered.
pub(crate) fn build_failing_closed(
    base: &(dyn Fn() -> RegistryBuilder + Send + Sync),
    mut tools: Vec<Arc<dyn Tool>>,
) -> Result<Registry, toolgate_core::RegistrationError> {
    for _ in 0..MAX_REBUILD_TRIES {
        match base().tools(tools.clone()).build() {
            Ok(r) => return Ok(r),
            Err(e) => {
                let before = tools.len();
                if let Some(name) = e.tool() {
                    tools.retain(|t| t.spec().name.as_ref() != name);
                }
                tracing::error!(error = %e, "an upstream tool cannot be registered: it is not served");
                if tools.len() == before {
                    break;
                }
            }
        }
    }
    tracing::error!("the registry with the upstreams' tools could not be built; no upstream tool is served until it can be");
    base().build()
}

/// Listed names upstream tools may not take: toolgate's own unlisted tools (an upstream's
/// resource reader, `toolgate.upstream.<name>.read_resource`) live under it.
const RESERVED_PREFIX: &str = "toolgate.";

/// Reads the store's approvals mark every [`PIN_POLL`], and at once when a blocked tool is
/// called; when it moved (the operator approved something, in any process sharing the store),
/// applies every upstream's last tool list again, which swaps the pipeline's registry when a
/// tool is served now (clients get `notifications/tools/list_changed`). Ends with the
/// gateway.
async fn watch_approvals(gateway: Weak<GatewayInner>, shutdown: CancellationToken) {
    let mark = |g: &GatewayInner| match g.store.approvals_mark() {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!(error = %e, "reading the upstream pins' approvals");
            None
        }
    };
    let (recheck, mut last) = match gateway.upgrade() {
        Some(g) => (g.recheck.clone(), mark(&g)),
        None => return,
    };
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(PIN_POLL) => {}
            () = recheck.notified() => {}
        }
        let Some(g) = gateway.upgrade() else { return };
        let now = mark(&g);
        if now.is_some() && now != last {
            last = now;
            let g2 = g.clone();
            // the store is SQLite: read it off the runtime's workers
            let _ = tokio::task::spawn_blocking(move || g2.reapply()).await;
        }
    }
}

/// The served tool for an upstream's definition.
fn served_tool(
    upstream: &Arc<Upstream>,
    t: &McpTool,
    listed: &str,
    mut input: Value,
    output: Option<Value>,
) -> Result<Arc<dyn Tool>, toolgate_core::RegistrationError> {
    let config = &upstream.config;
    let (effects, risk) = crate::effects::effects(t.annotations.as_ref(), config);
    if let Value::Object(m) = &mut input {
        m.entry("type")
            .or_insert_with(|| Value::String("object".into()));
    }
    let mut b = ToolSpec::builder(listed)
        .description(clean_output(t.description.as_deref().unwrap_or("")).into_owned())
        .input_schema(input)
        .effects(effects)
        .risk(risk)
        .timeout(config.timeout())
        .tag("upstream")
        .tag(format!("upstream:{}", config.name));
    if let Some(title) = &t.title {
        b = b.title(clean_output(title).into_owned());
    }
    if let Some(o) = output {
        b = b.output_schema(o);
    }
    let spec = b.build()?;
    let resources = config
        .arguments
        .iter()
        .filter(|a| ToolPattern::parse(&a.tool).is_ok_and(|p| p.matches(&t.name)))
        .map(|a| ResourceArgument {
            name: a.argument.clone(),
            kind: a.kind,
            access: match (a.kind, a.access) {
                (ArgumentKind::Path, Some(toolgate_config::model::AccessConfig::Read)) => {
                    Access::Read
                }
                (ArgumentKind::Path, Some(toolgate_config::model::AccessConfig::Write)) => {
                    Access::Write
                }
                _ if effects.read_only => Access::Read,
                _ => Access::Write,
            },
        })
        .collect();
    let tool: Arc<dyn Tool> = Arc::new(UpstreamTool::new(
        spec,
        upstream.clone(),
        t.name.to_string().into(),
        resources,
    ));
    // its schemas must compile, or the whole registry would not build
    Registry::builder().tool(tool.clone()).build()?;
    Ok(tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Arc<dyn Tool> {
        Arc::new(BlockedTool::new(name, "up", name, BlockReason::Changed, Arc::default()).unwrap())
    }

    #[test]
    fn a_tool_the_registry_refuses_is_left_out_not_the_registry_kept() {
        let base = || Registry::builder().tools([tool("read_file")]);
        let r =
            build_failing_closed(&base, vec![tool("mul"), tool("read_file"), tool("add")]).unwrap();
        assert!(r.get("mul", None).is_some() && r.get("add", None).is_some());
        assert_eq!(r.versions("read_file").len(), 1);

        // more refused tools than the tries: the base tools alone
        let many: Vec<Arc<dyn Tool>> = std::iter::repeat_with(|| tool("read_file"))
            .take(MAX_REBUILD_TRIES + 2)
            .chain([tool("mul")])
            .collect();
        let r = build_failing_closed(&base, many).unwrap();
        assert!(r.get("mul", None).is_some(), "left out one name at a time");
        let clash: Vec<Arc<dyn Tool>> = (0..MAX_REBUILD_TRIES + 2)
            .map(|i| tool(&format!("t{i}")))
            .flat_map(|t| [t.clone(), t])
            .collect();
        let r = build_failing_closed(&base, clash).unwrap();
        assert_eq!(r.len(), 1, "only the base tool");

        // the base tools themselves cannot be registered: the error
        let bad_base = || Registry::builder().tools([tool("x"), tool("x")]);
        assert!(build_failing_closed(&bad_base, vec![tool("mul")]).is_err());
    }
}
