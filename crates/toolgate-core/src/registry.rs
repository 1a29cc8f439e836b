//! The registry: every tool (and every version of it), compiled schemas, and agent profiles.
//!
//! ```
//! # use toolgate_core::{Registry, Profile};
//! let registry = Registry::builder()
//!     // .tool(ReadFile) ...
//!     .profile(Profile::new("explore").read_only())
//!     .build()
//!     .unwrap();
//! assert!(registry.profile_names().any(|p| p == "explore"));
//! ```

use crate::dynamic::DynamicTool;
use crate::error::RegistrationError;
use crate::schema::CompiledSchema;
use crate::search::{SearchOptions, SearchTools, SEARCH_TOOLS};
use crate::session::SessionBuilder;
use crate::spec::{Risk, ToolSpec};
use crate::telemetry::ToolMetrics;
use crate::tool::Tool;
use crate::typed::{Typed, TypedTool};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The profile every registry has: every tool.
pub const DEFAULT_PROFILE: &str = "default";
/// The read-only profile every registry has unless it is redefined: the read-only tools that
/// stay inside the workspace (not `open_world`: no `http_fetch`, whose URLs can carry what it
/// read out of the workspace).
pub const EXPLORE_PROFILE: &str = "explore";
/// At most this many profiles (each is one bit of a tool's visibility mask).
pub const MAX_PROFILES: usize = 64;
/// A tool with this tag is callable but never listed ([`Registry::list`] leaves it out): a
/// gateway's blocked upstream tool, which must answer why it is blocked when called.
pub const UNLISTED_TAG: &str = "toolgate:unlisted";

/// Which tools a profile includes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Selector {
    /// Every tool.
    All,
    /// A tool by exact name.
    Name(String),
    /// Tools with a tag.
    Tag(String),
    /// Read-only tools.
    ReadOnly,
    /// Tools that are not destructive.
    NotDestructive,
    /// Tools that do not reach outside the workspace.
    ClosedWorld,
    /// Tools at or below a risk class.
    RiskAtMost(Risk),
}

impl Selector {
    /// Whether the selector picks `spec`.
    pub fn matches(&self, spec: &ToolSpec) -> bool {
        match self {
            Selector::All => true,
            Selector::Name(n) => *spec.name == **n,
            Selector::Tag(t) => spec.has_tag(t),
            Selector::ReadOnly => spec.effects.read_only,
            Selector::NotDestructive => !spec.effects.destructive || spec.effects.read_only,
            Selector::ClosedWorld => !spec.effects.open_world,
            Selector::RiskAtMost(r) => spec.risk <= *r,
        }
    }
}

/// An agent profile: a named tool set. A tool is in the profile when some `include` selector
/// picks it and every `require` selector picks it and no `exclude` selector does. A tool outside
/// the caller's profile is invisible: not listed, and a call to it is `unknown_tool`.
///
/// A tool of the profile can be **deferred**: picked by a `deferred` selector, or past the
/// first `max_listed` tools (in name order). A deferred tool is left out of
/// [`Registry::list`] (so of `tools/list` and of exports) and found through `search_tools`,
/// which a profile that defers tools always has; it can be called like any tool of the
/// profile, and the policy decides as for any call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The name.
    pub name: String,
    /// Selectors of which at least one must pick the tool.
    pub include: Vec<Selector>,
    /// Selectors that must all pick the tool.
    pub require: Vec<Selector>,
    /// Selectors of which none may pick the tool.
    pub exclude: Vec<Selector>,
    /// Selectors of tools the profile defers.
    pub deferred: Vec<Selector>,
    /// At most this many tools are listed (`search_tools` counted); the others, in name
    /// order, are deferred.
    pub max_listed: Option<usize>,
}

impl Profile {
    /// An empty profile (no tools) named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Profile {
            name: name.into(),
            include: Vec::new(),
            require: Vec::new(),
            exclude: Vec::new(),
            deferred: Vec::new(),
            max_listed: None,
        }
    }

    /// Defers the tools `s` picks.
    pub fn defer(mut self, s: Selector) -> Self {
        self.deferred.push(s);
        self
    }

    /// Lists at most `n` tools, deferring the rest (see [`Profile`]).
    pub fn max_listed(mut self, n: usize) -> Self {
        self.max_listed = Some(n);
        self
    }

    /// Whether the profile defers any tool.
    pub fn defers(&self) -> bool {
        !self.deferred.is_empty() || self.max_listed.is_some()
    }

    /// Whether the profile has `search_tools` (when it is registered): it defers tools, or
    /// its selectors pick a read-only tool tagged `meta`.
    fn includes_search(&self) -> bool {
        self.defers()
            || crate::search::base_spec()
                .build()
                .is_ok_and(|spec| self.includes(&spec))
    }

    /// Includes every tool.
    pub fn all(mut self) -> Self {
        self.include.push(Selector::All);
        self
    }

    /// Restricts to read-only tools (and includes all of them when nothing else is included).
    pub fn read_only(mut self) -> Self {
        self.require.push(Selector::ReadOnly);
        self
    }

    /// Includes tools by name.
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.include
            .extend(names.into_iter().map(|n| Selector::Name(n.into())));
        self
    }

    /// Includes tools with a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.include.push(Selector::Tag(tag.into()));
        self
    }

    /// Adds an include selector.
    pub fn include(mut self, s: Selector) -> Self {
        self.include.push(s);
        self
    }

    /// Adds a required selector.
    pub fn require(mut self, s: Selector) -> Self {
        self.require.push(s);
        self
    }

    /// Adds an exclude selector.
    pub fn exclude(mut self, s: Selector) -> Self {
        self.exclude.push(s);
        self
    }

    /// Whether the profile includes `spec`.
    pub fn includes(&self, spec: &ToolSpec) -> bool {
        let included = if self.include.is_empty() {
            !self.require.is_empty()
        } else {
            self.include.iter().any(|s| s.matches(spec))
        };
        included
            && self.require.iter().all(|s| s.matches(spec))
            && !self.exclude.iter().any(|s| s.matches(spec))
    }
}

/// Anything that can be registered: a [`TypedTool`], a [`DynamicTool`], or an
/// `Arc<dyn Tool>`.
pub trait IntoTool {
    /// The tool.
    ///
    /// # Errors
    /// The spec's build errors.
    fn into_tool(self) -> Result<Arc<dyn Tool>, RegistrationError>;
}

impl<T: TypedTool> IntoTool for T {
    fn into_tool(self) -> Result<Arc<dyn Tool>, RegistrationError> {
        Ok(Arc::new(Typed::new(self)?))
    }
}

impl IntoTool for DynamicTool {
    fn into_tool(self) -> Result<Arc<dyn Tool>, RegistrationError> {
        Ok(Arc::new(self))
    }
}

impl IntoTool for Arc<dyn Tool> {
    fn into_tool(self) -> Result<Arc<dyn Tool>, RegistrationError> {
        Ok(self)
    }
}

/// One registered tool version with its compiled schemas.
pub struct Entry {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// The tool's contract as served: its own, with the `outputSchema` widened to admit a
    /// result shortened to the byte limit ([`crate::truncate::widen_output_schema`]).
    spec: ToolSpec,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) profiles: u64,
    /// The profiles (by bit) that defer the tool.
    pub(crate) deferred: u64,
    /// The tool's metric handles, made at its first call.
    metrics: OnceLock<ToolMetrics>,
}

impl Entry {
    /// The contract, as served: the tool's own, its `outputSchema` widened with the optional
    /// `truncation` record of a result cut to the byte limit.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The compiled input schema.
    pub fn input_schema(&self) -> &CompiledSchema {
        &self.input
    }

    /// The compiled output schema, when the tool has one.
    pub fn output_schema(&self) -> Option<&CompiledSchema> {
        self.output.as_ref()
    }

    /// The tool's metric handles, resolved against the installed recorder at the first call.
    pub(crate) fn metrics(&self) -> &ToolMetrics {
        self.metrics
            .get_or_init(|| ToolMetrics::new(self.spec().name.clone()))
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.spec().name)
            .field("version", &self.spec().version)
            .finish_non_exhaustive()
    }
}

/// Compares versions: dot-separated numeric parts numerically (`1.10.0 > 1.9.0`), anything
/// else as text.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let mut pa = a.split('.');
    let mut pb = b.split('.');
    loop {
        match (pa.next(), pb.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let o = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => x.cmp(y),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// The registry: tools by name (every version, highest last), sorted names and profiles.
pub struct Registry {
    by_name: HashMap<Arc<str>, Vec<Arc<Entry>>>,
    names: Vec<Arc<str>>,
    profiles: Vec<Profile>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names)
            .field(
                "profiles",
                &self.profiles.iter().map(|p| &p.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Registry {
    /// A builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The entry for `name`: the pinned `version`, or the highest one. Ignores profiles.
    pub fn get(&self, name: &str, version: Option<&str>) -> Option<&Arc<Entry>> {
        let versions = self.by_name.get(name)?;
        match version {
            None => versions.last(),
            Some(v) => versions.iter().find(|e| &*e.spec().version == v),
        }
    }

    /// The entry for `name` as seen by a profile (by its bit): invisible tools are `None`.
    pub(crate) fn get_visible(
        &self,
        name: &str,
        version: Option<&str>,
        profile_bit: u64,
    ) -> Option<&Arc<Entry>> {
        let versions = self.by_name.get(name)?;
        match version {
            None => versions
                .iter()
                .rev()
                .find(|e| e.profiles & profile_bit != 0),
            Some(v) => versions
                .iter()
                .find(|e| &*e.spec().version == v && e.profiles & profile_bit != 0),
        }
    }

    /// The names of the tools a profile (by its bit) lists (it can see, and does not defer),
    /// sorted.
    pub(crate) fn visible_names(&self, profile_bit: u64) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .filter(move |n| {
                self.get_visible(n, None, profile_bit)
                    .is_some_and(|e| e.deferred & profile_bit == 0)
            })
            .map(|n| &**n)
    }

    /// Whether a profile (by its bit) defers any tool.
    pub(crate) fn defers(&self, profile_bit: u64) -> bool {
        self.profiles
            .iter()
            .enumerate()
            .any(|(i, p)| 1u64 << i == profile_bit && p.defers())
    }

    /// Every version registered for `name`, lowest first.
    pub fn versions(&self, name: &str) -> &[Arc<Entry>] {
        self.by_name.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The highest version of every tool, sorted by name; with a profile, only the tools it
    /// lists: those it includes (the highest version it includes) and does not defer. Tools
    /// tagged [`UNLISTED_TAG`] are left out.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidProfile`] for an unknown profile, naming the defined ones.
    pub fn list(&self, profile: Option<&str>) -> Result<Vec<&ToolSpec>, RegistrationError> {
        let bit = self.bit_of(profile)?;
        Ok(self
            .names
            .iter()
            .filter_map(|n| self.get_visible(n, None, bit))
            .filter(|e| profile.is_none() || e.deferred & bit == 0)
            .map(|e| e.spec())
            .filter(|s| !s.has_tag(UNLISTED_TAG))
            .collect())
    }

    /// As [`Registry::list`], deferred tools included: every tool the profile can call and
    /// may be shown ([`UNLISTED_TAG`] tools left out).
    ///
    /// # Errors
    /// [`RegistrationError::InvalidProfile`] for an unknown profile, naming the defined ones.
    pub fn list_visible(&self, profile: Option<&str>) -> Result<Vec<&ToolSpec>, RegistrationError> {
        let bit = self.bit_of(profile)?;
        Ok(self
            .names
            .iter()
            .filter_map(|n| self.get_visible(n, None, bit))
            .map(|e| e.spec())
            .filter(|s| !s.has_tag(UNLISTED_TAG))
            .collect())
    }

    /// The tools `profile` defers, sorted by name.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidProfile`] for an unknown profile, naming the defined ones.
    pub fn deferred(&self, profile: &str) -> Result<Vec<&ToolSpec>, RegistrationError> {
        let bit = self.bit_of(Some(profile))?;
        Ok(self
            .names
            .iter()
            .filter_map(|n| self.get_visible(n, None, bit))
            .filter(|e| e.deferred & bit != 0)
            .map(|e| e.spec())
            .filter(|s| !s.has_tag(UNLISTED_TAG))
            .collect())
    }

    fn bit_of(&self, profile: Option<&str>) -> Result<u64, RegistrationError> {
        Ok(match profile {
            None => u64::MAX,
            Some(p) => self
                .profile_bit(p)
                .ok_or_else(|| RegistrationError::InvalidProfile {
                    name: p.to_string(),
                    why: format!(
                        "no such profile; defined: {}",
                        self.profile_names().collect::<Vec<_>>().join(", ")
                    ),
                })?,
        })
    }

    /// The highest version of every tool that `selector` picks, sorted by name (filter by tag
    /// or effect).
    pub fn filter(&self, selector: &Selector) -> Vec<&ToolSpec> {
        self.names
            .iter()
            .filter_map(|n| self.get(n, None))
            .map(|e| e.spec())
            .filter(|s| selector.matches(s))
            .collect()
    }

    /// The number of distinct tool names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The profiles' names, in definition order.
    pub fn profile_names(&self) -> impl Iterator<Item = &str> {
        self.profiles.iter().map(|p| p.name.as_str())
    }

    /// A profile by name.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// A registry with this one's profiles and no tool (what sessions are checked against).
    pub(crate) fn profiles_only(&self) -> Registry {
        Registry {
            by_name: HashMap::new(),
            names: Vec::new(),
            profiles: self.profiles.clone(),
        }
    }

    /// Whether `other` defines the same profiles, in the same order (so a session's profile
    /// bit means the same in both).
    pub fn same_profiles(&self, other: &Registry) -> bool {
        self.profiles == other.profiles
    }

    pub(crate) fn profile_bit(&self, name: &str) -> Option<u64> {
        self.profiles
            .iter()
            .position(|p| p.name == name)
            .map(|i| 1u64 << i)
    }

    /// Starts a session over this registry.
    pub fn session(&self, id: impl Into<Arc<str>>) -> SessionBuilder<'_> {
        SessionBuilder {
            registry: self,
            id: id.into(),
            profile: DEFAULT_PROFILE.into(),
            workspace: None,
            budgets: Default::default(),
            attributes: Default::default(),
            unique_call_ids: true,
            caller: None,
            principal: None,
        }
    }
}

/// Builder for [`Registry`]. Errors are collected and reported by [`RegistryBuilder::build`].
#[derive(Default)]
#[must_use]
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn Tool>>,
    profiles: Vec<Profile>,
    errors: Vec<RegistrationError>,
    search: Option<SearchOptions>,
    defer_derived: bool,
}

impl RegistryBuilder {
    /// Registers a tool.
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        match tool.into_tool() {
            Ok(t) => self.tools.push(t),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers `search_tools` over every other tool, ranked with `options` (see
    /// [`crate::search`]). Without this call it is registered, with the default options,
    /// when a profile defers tools.
    pub fn search_tools(mut self, options: SearchOptions) -> Self {
        self.search = Some(options);
        self
    }

    /// Registers several tools.
    pub fn tools<I: IntoIterator<Item = Arc<dyn Tool>>>(mut self, tools: I) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Defines a profile (replacing a built-in one of the same name: `default`, `explore`).
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profiles.push(profile);
        self
    }

    /// With `true`, the schemas of tools whose schemas are derived from Rust types
    /// ([`Tool::schemas_derived`]) are compiled at each tool's first call instead of in
    /// [`RegistryBuilder::build`] (their roots are still checked there): a server that
    /// registers dozens of tools starts without compiling them all. Every other schema
    /// (written by hand, imported, sent by an upstream) is compiled, and a fault reported, at
    /// build either way. Off by default.
    pub fn defer_derived_schemas(mut self, on: bool) -> Self {
        self.defer_derived = on;
        self
    }

    /// Compiles every schema (but those [`RegistryBuilder::defer_derived_schemas`] defers),
    /// checks names and duplicates, and resolves profiles.
    ///
    /// # Errors
    /// The first registration error: [`RegistrationError::InvalidName`],
    /// [`RegistrationError::InvalidSchema`] (with the JSON pointer of the fault),
    /// [`RegistrationError::Duplicate`] or [`RegistrationError::InvalidProfile`].
    pub fn build(self) -> Result<Registry, RegistrationError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        let mut profiles: Vec<Profile> = Vec::new();
        for p in self.profiles {
            if profiles.iter().any(|q| q.name == p.name) {
                return Err(RegistrationError::InvalidProfile {
                    name: p.name,
                    why: "defined twice".into(),
                });
            }
            profiles.push(p);
        }
        if !profiles.iter().any(|p| p.name == DEFAULT_PROFILE) {
            profiles.insert(0, Profile::new(DEFAULT_PROFILE).all());
        }
        if !profiles.iter().any(|p| p.name == EXPLORE_PROFILE) {
            profiles.push(
                Profile::new(EXPLORE_PROFILE)
                    .read_only()
                    .require(Selector::ClosedWorld),
            );
        }
        if profiles.len() > MAX_PROFILES {
            return Err(RegistrationError::InvalidProfile {
                name: profiles[MAX_PROFILES].name.clone(),
                why: format!("at most {MAX_PROFILES} profiles can be defined"),
            });
        }
        let mut by_name: HashMap<Arc<str>, Vec<Entry>> = HashMap::new();
        let defer_derived = self.defer_derived;
        for tool in self.tools {
            let entry = entry(tool, &profiles, defer_derived)?;
            let spec = entry.spec();
            let versions = by_name.entry(spec.name.clone()).or_default();
            if versions.iter().any(|e| e.spec().version == spec.version) {
                return Err(RegistrationError::Duplicate {
                    name: spec.name.to_string(),
                    version: spec.version.to_string(),
                });
            }
            versions.push(entry);
        }
        for versions in by_name.values_mut() {
            versions.sort_by(|a, b| compare_versions(&a.spec().version, &b.spec().version));
        }
        let search = match self.search {
            Some(options) => Some(options),
            None if profiles.iter().any(Profile::defers) => Some(SearchOptions::default()),
            None => None,
        };
        if search.is_some() && by_name.contains_key(SEARCH_TOOLS) {
            return Err(RegistrationError::Invalid {
                tool: SEARCH_TOOLS.to_string(),
                message: "the name is toolgate's own search tool, registered because a profile \
                          defers tools; rename this tool"
                    .to_string(),
            });
        }
        let mut sorted: Vec<Arc<str>> = by_name.keys().cloned().collect();
        sorted.sort();
        defer(&mut by_name, &sorted, &profiles, search.is_some());
        if let Some(options) = search {
            let bits: HashMap<String, u64> = profiles
                .iter()
                .enumerate()
                .map(|(i, p)| (p.name.clone(), 1u64 << i))
                .collect();
            let indexed: Vec<(&ToolSpec, u64)> = sorted
                .iter()
                .filter_map(|n| {
                    let versions = &by_name[n];
                    let mask = versions.iter().fold(0, |m, e| m | e.profiles);
                    versions.last().map(|e| (e.spec(), mask))
                })
                // a blocked upstream tool is never shown, not even by a search
                .filter(|(spec, _)| !spec.has_tag(UNLISTED_TAG))
                .collect();
            let tool = SearchTools::new(indexed, bits, &options).into_tool()?;
            let mut search_entry = entry(tool, &profiles, defer_derived)?;
            for (i, p) in profiles.iter().enumerate() {
                if p.defers() {
                    search_entry.profiles |= 1 << i;
                }
            }
            by_name.insert(search_entry.spec().name.clone(), vec![search_entry]);
        }
        let by_name: HashMap<Arc<str>, Vec<Arc<Entry>>> = by_name
            .into_iter()
            .map(|(n, v)| (n, v.into_iter().map(Arc::new).collect()))
            .collect();
        let mut names: Vec<Arc<str>> = by_name.keys().cloned().collect();
        names.sort();
        Ok(Registry {
            by_name,
            names,
            profiles,
        })
    }
}

/// One tool's entry: schemas compiled (at its first call, when `defer_derived` and the
/// tool's schemas are derived), the profiles (by bit) that include it.
fn entry(
    tool: Arc<dyn Tool>,
    profiles: &[Profile],
    defer_derived: bool,
) -> Result<Entry, RegistrationError> {
    let mut spec = tool.spec().clone();
    crate::spec::validate_name(&spec.name)?;
    let defer = defer_derived && tool.schemas_derived();
    let schema = |which: &'static str, schema: &Value| {
        if defer {
            CompiledSchema::deferred(&spec.name, which, schema.clone())
        } else {
            CompiledSchema::compile(&spec.name, which, schema)
        }
    };
    let input = schema("inputSchema", &spec.input_schema)?;
    // widening adds one root property: a fault's pointer is the same as in the schema the
    // tool wrote
    let mut output_schema = spec.output_schema.take();
    let output = match &mut output_schema {
        Some(s) => {
            crate::truncate::widen_output_schema(s);
            Some(schema("outputSchema", s)?)
        }
        None => None,
    };
    spec.output_schema = output_schema;
    let mut mask = 0u64;
    for (i, p) in profiles.iter().enumerate() {
        if p.includes(&spec) {
            mask |= 1 << i;
        }
    }
    Ok(Entry {
        tool,
        spec,
        input,
        output,
        profiles: mask,
        deferred: 0,
        metrics: OnceLock::new(),
    })
}

/// Sets each entry's deferred bits: the profiles whose `deferred` selectors pick it, and
/// those that list at most `max_listed` tools and have listed that many by its name (in
/// `sorted` order; `search_tools`, when `search`, is always listed and counted first).
fn defer(
    by_name: &mut HashMap<Arc<str>, Vec<Entry>>,
    sorted: &[Arc<str>],
    profiles: &[Profile],
    search: bool,
) {
    for (i, p) in profiles.iter().enumerate() {
        let bit = 1u64 << i;
        let mut listed = usize::from(search && p.includes_search());
        for name in sorted {
            let versions = by_name.get_mut(name).expect("a sorted name");
            let Some(top) = versions.iter().rev().find(|e| e.profiles & bit != 0) else {
                continue;
            };
            let picked = p.deferred.iter().any(|s| s.matches(top.spec()));
            let past = p.max_listed.is_some_and(|max| listed >= max);
            if picked || past {
                versions.iter_mut().for_each(|e| e.deferred |= bit);
            } else {
                listed += 1;
            }
        }
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
