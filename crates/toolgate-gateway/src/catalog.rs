//! What the upstreams serve besides tools, namespaced for a server's catalog: resources,
//! resource templates and prompts listed, completion forwarded, and the unlisted tool
//! ([`crate::served`]) that reads or gets each through the pipeline.
//!
//! Names and URIs, so nothing an upstream serves can pass for toolgate's own or another
//! upstream's:
//!
//! | what | listed as | for example |
//! |---|---|---|
//! | a resource URI, a template's `uriTemplate` | `<upstream>+<uri>` (a scheme of its own: upstream names hold no `+`, and toolgate's own are `file:`) | `ev+demo://resource/static/document/a.md` |
//! | a prompt's, a resource's, a template's name | `<upstream><separator><name>` (as tools) | `ev__simple-prompt` |
//!
//! An upstream with `prefix = false` keeps its own names and URIs; a URI no other catalog
//! claims goes to the first such upstream that serves resources.
//!
//! Text an upstream writes (names, titles, descriptions) is cleaned like every output; a
//! resource or template whose text the quarantine screen flags ([`crate::quarantine`]) is not
//! listed (logged), and a read of it (or of a URI the template covers) after that listing is
//! refused: `resource_quarantined`. A prompt is pinned in the store as its tools are
//! (`prompt:NAME`, its name, title, description and arguments as canonical JSON):
//! quarantined before its first
//! listing when the screen flags it, blocked when its definition changed, until the operator
//! approves it (`toolgate upstream list`, `diff`, `approve`); a blocked prompt is not listed and
//! is refused, saying why.

pub(crate) mod known;
pub(crate) mod screened;

use crate::definition::Definition;
use crate::gateway::GatewayInner;
use crate::upstream::Upstream;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, Prompt, Reference, Resource, ResourceTemplate,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use toolgate_config::UpstreamConfig;
use toolgate_core::sanitize::clean_output;

/// Why a catalog request could not be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A cursor this catalog did not hand out.
    #[error("invalid cursor: send a nextCursor from a previous {0}, or none")]
    InvalidCursor(&'static str),
    /// No upstream serves the prompt.
    #[error("prompt {0:?} not found: list the prompts with prompts/list")]
    UnknownPrompt(String),
    /// The prompt is quarantined, or changed since it was pinned.
    #[error("prompt {0:?} is not served: {1}")]
    Blocked(String, String),
    /// A required argument is missing.
    #[error("prompt {prompt:?} needs the argument {argument:?}; send it in arguments")]
    MissingArgument {
        /// The prompt, as listed.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// The upstream failed the request, or did not answer.
    #[error("{0}")]
    Upstream(String),
    /// The resource (as listed) cannot be subscribed to, and why.
    #[error("resource {0} cannot be subscribed to: {1}")]
    NotSubscribable(String, String),
    /// An unsubscribe from a session that is not subscribed to the resource (as listed).
    #[error("resource {0} is not subscribed to in this session: subscribe to it first")]
    NotSubscribed(String),
}

/// A list of the upstreams' that changed ([`UpstreamCatalog::list_changes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogChange {
    /// An upstream said its resources changed (`notifications/resources/list_changed`).
    Resources,
    /// The prompts the gateway serves changed: an upstream said its prompts changed and
    /// listing them again (through pinning and quarantine) served other prompts.
    Prompts,
}

/// The prefix of `config`'s resource URIs (`<name>+`, or none without `prefix`).
pub fn uri_prefix(config: &UpstreamConfig, _separator: &str) -> String {
    if config.prefix {
        format!("{}+", config.name)
    } else {
        String::new()
    }
}

/// The listed name of `config`'s prompt, resource or tool `name`.
pub fn listed(config: &UpstreamConfig, separator: &str, name: &str) -> String {
    if config.prefix {
        crate::naming::listed_name(&config.name, separator, name)
    } else {
        crate::naming::listed_name("", "", name)
    }
}

/// A prompt as the catalog knows it: its upstream, its own name, its arguments (name,
/// required), and why it is blocked (quarantined, or changed since it was pinned).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Known {
    upstream: usize,
    own: String,
    arguments: Vec<(String, bool)>,
    blocked: Option<String>,
}

/// The pin name of an upstream's prompt in the store (beside its tools' names): `prompt:NAME`.
pub fn prompt_pin(name: &str) -> String {
    format!("prompt:{name}")
}

/// The upstreams' resources, templates and prompts, for a server's catalog. Cheap to clone.
#[derive(Clone)]
pub struct UpstreamCatalog {
    inner: Arc<GatewayInner>,
}

impl std::fmt::Debug for UpstreamCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamCatalog")
            .field("upstreams", &self.inner.upstreams.len())
            .finish_non_exhaustive()
    }
}

/// The capabilities an upstream declared.
fn caps(u: &Upstream) -> Option<rmcp::model::ServerCapabilities> {
    let peer = u.peer.load_full()?;
    Some(peer.peer_info()?.capabilities.clone())
}

/// Whether the upstream declared what `declared` picks from its capabilities.
pub(crate) fn declares(
    u: &Upstream,
    declared: fn(&rmcp::model::ServerCapabilities) -> bool,
) -> bool {
    caps(u).is_some_and(|c| declared(&c))
}

/// `f` on the upstream's live connection within its timeout.
pub(crate) async fn ask<T, F, Fut>(u: &Upstream, what: &str, f: F) -> Result<T, CatalogError>
where
    F: FnOnce(rmcp::service::Peer<rmcp::service::RoleClient>) -> Fut,
    Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
{
    let Some(peer) = u.peer.load_full() else {
        return Err(CatalogError::Upstream(format!(
            "the upstream server {} is not running (it is being started again)",
            u.name()
        )));
    };
    match tokio::time::timeout(u.config.timeout(), f((*peer).clone())).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(CatalogError::Upstream(format!(
            "{what} of the upstream server {} failed: {e}",
            u.name()
        ))),
        Err(_) => Err(CatalogError::Upstream(format!(
            "{what} of the upstream server {} timed out",
            u.name()
        ))),
    }
}

fn clean(s: &mut String) {
    if let std::borrow::Cow::Owned(c) = clean_output(s) {
        *s = c;
    }
}

fn clean_opt(s: &mut Option<String>) {
    if let Some(s) = s {
        clean(s);
    }
}

/// The quarantine's findings for a listed description and title, when any.
fn screened(title: Option<&str>, description: Option<&str>, more: &Value) -> Option<String> {
    let size = title.map_or(0, str::len) + description.map_or(0, str::len) + more.to_string().len();
    let findings = crate::quarantine::scan(title, description, &[more], size);
    (!findings.is_empty()).then(|| findings.join("; "))
}

/// Why a listed resource or template `item` is quarantined ([`crate::quarantine::scan_item`]
/// over every field but its title and description, which are screened as such), or `None`.
fn screened_item<T: serde::Serialize>(
    title: Option<&str>,
    description: Option<&str>,
    item: &T,
) -> Option<String> {
    let mut fields = serde_json::to_value(item).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut fields {
        m.remove("title");
        m.remove("description");
    }
    let findings = crate::quarantine::scan_item(title, description, &fields);
    (!findings.is_empty()).then(|| findings.join("; "))
}

/// Leaves out a MIME type that is not a media type ([`crate::quarantine::is_media_type`]):
/// a client shows it as it is, so it may not carry text.
fn media_type_only(mime: &mut Option<String>) {
    if mime
        .as_deref()
        .is_some_and(|m| !crate::quarantine::is_media_type(m))
    {
        tracing::warn!(mime = ?mime, "an upstream MIME type that is not a media type is left out");
        *mime = None;
    }
}

impl UpstreamCatalog {
    pub(crate) fn new(inner: Arc<GatewayInner>) -> Self {
        UpstreamCatalog { inner }
    }

    fn separator(&self) -> &str {
        &self.inner.separator
    }

    fn upstreams(&self) -> &[Arc<Upstream>] {
        &self.inner.upstreams
    }

    /// Whether any upstream is configured (its resources, prompts and completion may be
    /// served once it is up).
    pub fn configured(&self) -> bool {
        !self.upstreams().is_empty()
    }

    /// Whether an upstream running now declares resource subscriptions (`subscribe`): the
    /// gateway offers them only then.
    pub fn subscribable(&self) -> bool {
        self.upstreams().iter().any(|u| {
            declares(u, |c| {
                c.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
            })
        })
    }

    /// One page of the upstreams' resources after `cursor` (`N:CURSOR`: the upstream's index
    /// and its own cursor), namespaced.
    ///
    /// # Errors
    /// [`CatalogError::InvalidCursor`]; [`CatalogError::Upstream`] when the upstream failed
    /// the listing.
    pub async fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<Resource>, Option<String>), CatalogError> {
        let bad = || CatalogError::InvalidCursor("resources/list");
        let (mut at, mut inner) = match cursor {
            None => (0, None),
            Some(c) => {
                let (i, rest) = c.split_once(':').ok_or_else(bad)?;
                let i: usize = i.parse().map_err(|_| bad())?;
                if i >= self.upstreams().len() {
                    return Err(bad());
                }
                (i, (!rest.is_empty()).then(|| rest.to_string()))
            }
        };
        let n = self.upstreams().len();
        while at < n {
            let u = &self.upstreams()[at];
            if declares(u, |c| c.resources.is_some()) {
                let (name, cursor) = (u.name().to_string(), inner.clone());
                let page = ask(u, "resources/list", |p| async move {
                    crate::listing::page::<Resource>(&p, &name, cursor).await
                })
                .await?;
                let items = self.resources_of(u, page.items);
                let next = match page.next_cursor {
                    Some(c) => Some(format!("{at}:{c}")),
                    None if at + 1 < n => Some(format!("{}:", at + 1)),
                    None => None,
                };
                if !items.is_empty() || next.is_none() {
                    return Ok((items, next));
                }
            }
            at += 1;
            inner = None;
        }
        Ok((Vec::new(), None))
    }

    fn resources_of(&self, u: &Upstream, resources: Vec<Resource>) -> Vec<Resource> {
        let prefix = uri_prefix(&u.config, self.separator());
        resources
            .into_iter()
            .filter_map(|mut r| {
                let why = screened_item(r.title.as_deref(), r.description.as_deref(), &r);
                u.screened.lock().listed(&r.uri, why.is_some());
                if let Some(why) = why {
                    tracing::warn!(upstream = %u.name(), uri = %r.uri, findings = %why, "an upstream resource is quarantined: not listed; a read of it is refused");
                    return None;
                }
                media_type_only(&mut r.mime_type);
                r.uri = format!("{prefix}{}", r.uri);
                r.name = listed(&u.config, self.separator(), &r.name);
                clean_opt(&mut r.title);
                clean_opt(&mut r.description);
                Some(r)
            })
            .collect()
    }

    /// Every upstream's resource templates, namespaced. An upstream that fails the listing
    /// is left out (logged).
    pub async fn list_resource_templates(&self) -> Vec<ResourceTemplate> {
        let mut out = Vec::new();
        for u in self.upstreams() {
            if !declares(u, |c| c.resources.is_some()) {
                continue;
            }
            let name = u.name().to_string();
            let got = ask(u, "resources/templates/list", |p| async move {
                crate::listing::all::<ResourceTemplate>(&p, &name).await
            })
            .await;
            let templates = match got {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(upstream = %u.name(), error = %e, "listing the upstream's resource templates");
                    continue;
                }
            };
            let prefix = uri_prefix(&u.config, self.separator());
            let mut quarantined = Vec::new();
            for mut t in templates {
                if let Some(why) = screened_item(t.title.as_deref(), t.description.as_deref(), &t) {
                    tracing::warn!(upstream = %u.name(), template = %t.uri_template, findings = %why, "an upstream resource template is quarantined: not listed; a read of a URI it covers is refused");
                    quarantined.push(t.uri_template);
                    continue;
                }
                media_type_only(&mut t.mime_type);
                t.uri_template = format!("{prefix}{}", t.uri_template);
                t.name = listed(&u.config, self.separator(), &t.name);
                clean_opt(&mut t.title);
                clean_opt(&mut t.description);
                out.push(t);
            }
            u.screened.lock().templates(quarantined);
        }
        out
    }

    /// Every upstream's prompts, namespaced, the quarantined ones left out. An upstream that
    /// fails the listing is left out (logged).
    pub async fn list_prompts(&self) -> Vec<Prompt> {
        let mut out = Vec::new();
        for (i, u) in self.upstreams().iter().enumerate() {
            let listing = self.inner.prompts.lock().begin();
            let mut known = HashMap::new();
            for (name, k, p) in self.prompts_of(i, u).await {
                if k.blocked.is_none() {
                    out.push(p);
                }
                known.insert(name, k);
            }
            // a listing again after the upstream's change that started later holds
            self.inner.prompts.lock().apply(i, listing, known);
        }
        out
    }

    /// Lists upstream `i`'s prompts again (pinning and quarantine them as
    /// [`Self::list_prompts`] does) after it said they changed; tells
    /// [`CatalogChange::Prompts`] when what is served changed.
    pub(crate) async fn relist_prompts(&self, i: usize) {
        let Some(u) = self.upstreams().get(i) else {
            return;
        };
        let listing = self.inner.prompts.lock().begin();
        let fresh: HashMap<String, Known> = self
            .prompts_of(i, u)
            .await
            .into_iter()
            .map(|(name, k, _)| (name, k))
            .collect();
        // a client's listing that started after this one and ended first holds, and told
        // nothing: the change is told here all the same
        let changed = self.inner.prompts.lock().apply(i, listing, fresh);
        if changed != Some(false) {
            let _ = self.inner.catalog_changes.send(CatalogChange::Prompts);
        }
    }

    /// The changes of the lists this catalog serves, from now on.
    pub fn list_changes(&self) -> tokio::sync::broadcast::Receiver<CatalogChange> {
        self.inner.catalog_changes.subscribe()
    }

    /// Upstream `i`'s prompts: listed name, what the catalog keeps, the listed prompt.
    async fn prompts_of(&self, i: usize, u: &Upstream) -> Vec<(String, Known, Prompt)> {
        if !declares(u, |c| c.prompts.is_some()) {
            return Vec::new();
        }
        let name = u.name().to_string();
        let listed_prompts = ask(u, "prompts/list", |p| async move {
            crate::listing::all::<Prompt>(&p, &name).await
        })
        .await;
        let prompts = match listed_prompts {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(upstream = %u.name(), error = %e, "listing the upstream's prompts");
                return Vec::new();
            }
        };
        // each pinned as its tools are: quarantined before its first listing, blocked when it
        // changed, until the operator approves (`toolgate upstream approve NAME prompt:P`)
        let seen: Vec<(Definition, Option<String>)> = prompts
            .iter()
            .map(|p| {
                let args = serde_json::to_value(&p.arguments).unwrap_or(Value::Null);
                let definition = json!({
                    "name": p.name, "title": p.title, "description": p.description,
                    "arguments": args,
                });
                // its name too, as spelled and as words, as a tool's is
                let named = json!({"name": p.name, "arguments": args});
                let quarantine = screened(p.title.as_deref(), p.description.as_deref(), &named);
                (Definition::of_value(&definition), quarantine)
            })
            .collect();
        let names: Vec<String> = prompts.iter().map(|p| prompt_pin(&p.name)).collect();
        let (store, upstream) = (self.inner.store.clone(), u.name().to_string());
        let seen_for_store = seen.clone();
        let (config, separator) = (u.config.clone(), self.separator().to_string());
        let pins = tokio::task::spawn_blocking(move || {
            let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
            // as for tools: a new prompt under a pinned prompt's listed name is held
            let listed_of = |key: &str| {
                key.strip_prefix("prompt:")
                    .map(|own| listed(&config, &separator, own))
            };
            let pinned_names: HashMap<String, String> = store
                .pins(Some(&upstream))
                .unwrap_or_default()
                .into_iter()
                .filter(|p| p.pinned_hash.is_some())
                .filter_map(|p| Some((listed_of(&p.tool)?, p.tool)))
                .collect();
            names
                .iter()
                .zip(&seen_for_store)
                .map(|(name, (def, quarantine))| {
                    let taken = listed_of(name)
                        .and_then(|l| Some((pinned_names.get(&l)?, l)))
                        .filter(|(other, _)| *other != name)
                        .map(|(other, l)| {
                            format!(
                                "it would be listed as {l}, the name of the upstream's {other:?} \
                                 pinned before"
                            )
                        });
                    let quarantine = match (quarantine.as_deref(), taken.as_deref()) {
                        (Some(q), Some(t)) => Some(format!("{q}; {t}")),
                        (q, t) => q.or(t).map(str::to_string),
                    };
                    let observed = toolgate_store::Observed {
                        upstream: &upstream,
                        tool: name,
                        hash: &def.hash,
                        definition: &def.json,
                        quarantine: quarantine.as_deref(),
                    };
                    match store.observe_definition(&observed, now) {
                        Ok(pin) if pin.is_served() => None,
                        Ok(pin) if pin.state == toolgate_store::PinState::Quarantined => Some(format!(
                            "it is quarantined ({}); the operator reviews it with `toolgate upstream \
                             list` and `approve`",
                            pin.reason.unwrap_or_default()
                        )),
                        Ok(_) => Some(
                            "its definition changed since it was pinned; the operator reviews the \
                             change with `toolgate upstream diff` and `approve`"
                                .to_string(),
                        ),
                        Err(e) => Some(format!("its pin could not be checked ({e})")),
                    }
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_else(|e| vec![Some(format!("its pin could not be checked ({e})")); seen.len()]);
        prompts
            .into_iter()
            .zip(pins)
            .map(|(mut p, blocked)| {
                if let Some(why) = &blocked {
                    tracing::warn!(upstream = %u.name(), prompt = %p.name, why = %why, "an upstream prompt is not listed");
                }
                let own = p.name.clone();
                p.name = listed(&u.config, self.separator(), &own);
                clean_opt(&mut p.title);
                clean_opt(&mut p.description);
                for a in p.arguments.iter_mut().flatten() {
                    clean_opt(&mut a.title);
                    clean_opt(&mut a.description);
                }
                let arguments = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| (a.name.clone(), a.required == Some(true)))
                    .collect();
                let known = Known {
                    upstream: i,
                    own,
                    arguments,
                    blocked,
                };
                (p.name.clone(), known, p)
            })
            .collect()
    }

    /// The prompt listed as `name`, listing the prompts again when it is not known yet.
    async fn known(&self, name: &str) -> Option<Known> {
        if let Some(k) = self.inner.prompts.lock().get(name) {
            return Some(k.clone());
        }
        self.list_prompts().await;
        self.inner.prompts.lock().get(name).cloned()
    }

    /// The upstream that serves `uri` and its own URI for it (the namespace taken off).
    fn resolve(&self, uri: &str) -> Option<(&Arc<Upstream>, String)> {
        let serves = |u: &Upstream| declares(u, |c| c.resources.is_some());
        if let Some((name, own)) = uri.split_once('+') {
            if let Some(u) = self
                .upstreams()
                .iter()
                .find(|u| u.config.prefix && u.config.name == name && serves(u))
            {
                return Some((u, own.to_string()));
            }
        }
        let u = self
            .upstreams()
            .iter()
            .find(|u| !u.config.prefix && serves(u))?;
        Some((u, uri.to_string()))
    }

    /// The tool and arguments that read `uri`, when an upstream serves it.
    pub fn read_target(&self, uri: &str) -> Option<(String, Value)> {
        let (u, own) = self.resolve(uri)?;
        Some((
            crate::served::read_tool_name(u.name()),
            json!({ "uri": own }),
        ))
    }

    /// Subscribes the session `session` to the resource listed as `uri`, its
    /// `notifications/resources/updated` (at `uri`) to `sink`, forwarding the subscribe to
    /// the upstream when it is the first session ([`crate::subscriptions`]). The caller has
    /// had the policy decide a read of `uri` first ([`Self::read_target`]).
    ///
    /// # Errors
    /// [`CatalogError::NotSubscribable`] when no upstream serves `uri` or its upstream
    /// offers no subscriptions; [`CatalogError::Upstream`] when the upstream refused it or
    /// did not answer.
    pub async fn subscribe(
        &self,
        uri: &str,
        session: u64,
        sink: crate::subscriptions::UpdateSink,
    ) -> Result<(), CatalogError> {
        let Some((u, own)) = self.resolve(uri) else {
            return Err(CatalogError::NotSubscribable(
                uri.to_string(),
                "no upstream serves it; subscribe to a URI from resources/list".to_string(),
            ));
        };
        crate::subscriptions::subscribe(
            u,
            &self.inner.subscribed,
            &own,
            uri.to_string(),
            session,
            sink,
        )
        .await
    }

    /// Whether the session `session` may subscribe to `uri` now: it is subscribed to it
    /// already, or holds fewer subscriptions than `[gateway] max_subscriptions`. Asked
    /// before the read the policy decides, so a subscribe past the limit reaches no
    /// upstream; [`Self::subscribe`] checks again.
    ///
    /// # Errors
    /// [`CatalogError::NotSubscribable`] when it may not, saying why and what to do.
    pub fn may_subscribe(&self, uri: &str, session: u64) -> Result<(), CatalogError> {
        if let Some((u, own)) = self.resolve(uri) {
            if u.subscriptions.holds(&own, session) {
                return Ok(());
            }
        }
        self.inner.subscribed.check(session, uri)
    }

    /// Unsubscribes the session `session` from the resource listed as `uri`, forwarding the
    /// unsubscribe to the upstream when it was the last session.
    ///
    /// # Errors
    /// [`CatalogError::NotSubscribed`] when the session is not subscribed to it (nothing is
    /// forwarded).
    pub async fn unsubscribe(&self, uri: &str, session: u64) -> Result<(), CatalogError> {
        let Some((u, own)) = self.resolve(uri) else {
            return Err(CatalogError::NotSubscribed(uri.to_string()));
        };
        crate::subscriptions::unsubscribe(u, &self.inner.subscribed, &own, uri, session).await
    }

    /// The session `session` is over: it leaves every subscription (the upstreams are sent
    /// their unsubscribes in tasks of their own). Does not block.
    pub fn session_ended(&self, session: u64) {
        for u in self.upstreams() {
            crate::subscriptions::session_ended(u, session);
        }
        self.inner.subscribed.forget(session);
    }

    /// The tool and arguments that get the prompt listed as `name` with `arguments`, when an
    /// upstream serves it.
    ///
    /// # Errors
    /// [`CatalogError::UnknownPrompt`], [`CatalogError::Blocked`],
    /// [`CatalogError::MissingArgument`].
    pub async fn prompt_target(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<(String, Value), CatalogError> {
        let Some(k) = self.known(name).await else {
            return Err(CatalogError::UnknownPrompt(name.to_string()));
        };
        if let Some(why) = k.blocked {
            return Err(CatalogError::Blocked(name.to_string(), why));
        }
        for (a, required) in &k.arguments {
            if *required && !arguments.get(a).is_some_and(Value::is_string) {
                return Err(CatalogError::MissingArgument {
                    prompt: name.to_string(),
                    argument: a.clone(),
                });
            }
        }
        let u = &self.upstreams()[k.upstream];
        Ok((
            crate::served::prompt_tool_name(u.name()),
            json!({ "name": k.own, "arguments": arguments }),
        ))
    }

    /// Whether `reference` names a prompt or template of an upstream (so its completion is
    /// this catalog's to forward).
    pub async fn completes(&self, reference: &Reference) -> bool {
        match reference {
            Reference::Prompt(p) => self.known(&p.name).await.is_some(),
            Reference::Resource(r) => self.read_target(&r.uri).is_some(),
            _ => false,
        }
    }

    /// Forwards `request` to the upstream its reference names, the namespace taken off; the
    /// values come back cleaned.
    ///
    /// # Errors
    /// [`CatalogError::UnknownPrompt`] for a reference no upstream serves;
    /// [`CatalogError::Upstream`] when the upstream failed it.
    pub async fn complete(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompletionInfo, CatalogError> {
        let mut forwarded = request.clone();
        let upstream = match &mut forwarded.r#ref {
            Reference::Prompt(p) => {
                let k = self
                    .known(&p.name)
                    .await
                    .ok_or_else(|| CatalogError::UnknownPrompt(p.name.clone()))?;
                p.name = k.own;
                k.upstream
            }
            Reference::Resource(r) => {
                let (tool, args) = self
                    .read_target(&r.uri)
                    .ok_or_else(|| CatalogError::UnknownPrompt(r.uri.clone()))?;
                r.uri = args["uri"].as_str().unwrap_or_default().to_string();
                self.upstreams()
                    .iter()
                    .position(|u| crate::served::read_tool_name(u.name()) == tool)
                    .unwrap_or_default()
            }
            _ => return Err(CatalogError::UnknownPrompt("?".into())),
        };
        let u = &self.upstreams()[upstream];
        if !declares(u, |c| c.completions.is_some()) {
            return Ok(CompletionInfo::default());
        }
        forwarded.meta = None;
        let mut done = ask(u, "completion/complete", |p| async move {
            p.complete(forwarded).await
        })
        .await?
        .completion;
        for v in &mut done.values {
            clean(v);
        }
        Ok(done)
    }
}
