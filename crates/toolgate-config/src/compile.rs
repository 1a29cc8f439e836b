//! Loading a configuration: parse, check (every problem located), compile once.

use crate::approvals::GrantExpiry;
use crate::cedar::Condition;
use crate::locate::Located;
use crate::model::{
    AccessConfig, ConfigFile, DecisionConfig, EffectSelector, ProfileConfig, RiskClass,
};
use crate::policy::{ConfigPolicy, RiskDefaults, RISK_RULES};
use crate::problem::{Locator, Problem, Seg};
use crate::rules::{CompiledRule, Protected};
use crate::session::{attribute_json, SessionError, SessionSetup};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::pattern::{MatchMode, PathPattern, ResourcePattern, ToolPattern};
use toolgate_core::registry::{DEFAULT_PROFILE, EXPLORE_PROFILE};
use toolgate_core::{Access, Budgets, Decision, Policy, Profile, Risk, Selector, Tool, ToolSpec};
use toolgate_tools::shell::{CommandRules, ShellConfig, ShellPolicy};

/// The configuration's file name in a workspace root.
pub const CONFIG_FILE: &str = "toolgate.toml";

/// What run_shell's sandbox does about one path rule ([`Config::sandbox_rules`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxRule<'a> {
    /// The rule's name, or `rules[N]`.
    pub rule: &'a str,
    /// Its path pattern.
    pub pattern: &'a PathPattern,
    /// What the sandbox does.
    pub enforced: SandboxEnforces,
    /// The rule repeated for a path a link it names leads to (the pattern is that path).
    pub via_link: bool,
}

/// What run_shell's sandbox does about a path rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxEnforces {
    /// Each file or directory it matches when a run starts is covered by an empty read-only
    /// one: the command cannot read it (nor write it).
    Hidden,
    /// Each file or directory it matches when a run starts is bound read-only.
    ReadOnly,
    /// Nothing, for this reason.
    Nothing(&'static str),
}

/// A checked, compiled configuration. [`Config::default`] is toolgate's defaults (no file).
#[derive(Debug, Clone, Default)]
pub struct Config {
    file: Option<PathBuf>,
    pub(crate) raw: ConfigFile,
    /// `[server.auth.roles]`, compiled: role name and its condition over the claims.
    pub(crate) auth_roles: Vec<(String, Condition)>,
    profiles: Vec<Profile>,
    rules: Vec<CompiledRule>,
    protected: Protected,
    command_rules: CommandRules,
    /// Where the file read lies in the workspace (relative to the root), when it does.
    in_workspace: Option<PathBuf>,
    /// Where `[store] path` is in the file, for problems found after loading.
    store_at: Option<Problem>,
    /// Each `[http.credentials]` entry's variable, with the problem to report when it is
    /// unset.
    credential_vars: Vec<(String, Problem)>,
}

/// Finds and loads the configuration of the workspace at `root`: `explicit` (`--config`)
/// when given, else `<root>/toolgate.toml` when there is one, else the defaults (see
/// [`crate::locate()`] for what is refused). `tools` are the names of the tools the
/// configuration may name (profiles and rules naming another tool are refused); names, not
/// built tools, so a caller need not build every tool (their schemas derived) to load it.
///
/// # Errors
/// Every problem found, each located in the file; a file that cannot be read, or is not a
/// regular file in reach (see [`crate::locate()`]), is larger than
/// [`crate::MAX_CONFIG_BYTES`] or is not UTF-8 (see [`crate::source`]), is one problem at 1:1.
pub fn load(root: &Path, explicit: Option<&Path>, tools: &[&str]) -> Result<Config, Vec<Problem>> {
    let (file, in_workspace) = match crate::locate(root, explicit).map_err(|p| vec![p])? {
        Located::Absent => {
            let mut c = Config::default();
            c.protected = protected(root, None, &c.raw);
            return Ok(c);
        }
        Located::File {
            path, in_workspace, ..
        } => (path, in_workspace),
    };
    let source = crate::source::read(&file).map_err(|message| {
        vec![Problem {
            file: file.clone(),
            line: 1,
            column: 1,
            key: String::new(),
            message,
        }]
    })?;
    let mut c = load_str(root, &file, &source, tools)?;
    c.in_workspace = in_workspace;
    Ok(c)
}

/// Where `file` leads, relative to the canonical `root`, when it lies inside it.
fn in_workspace(root: &Path, file: &Path) -> Option<PathBuf> {
    let root = std::fs::canonicalize(root).ok()?;
    let target = std::fs::canonicalize(file).ok()?;
    target.strip_prefix(&root).ok().map(Path::to_path_buf)
}

/// Loads a configuration from its text `source`, as read from `file` (for locations); `tools`
/// as for [`load`].
///
/// # Errors
/// Every problem found, each located.
pub fn load_str(
    root: &Path,
    file: &Path,
    source: &str,
    tools: &[&str],
) -> Result<Config, Vec<Problem>> {
    let loc = Locator::new(file, source);
    let mut problems = Vec::new();
    let Some(root_table) = loc.root() else {
        // not TOML: the syntax error is the one problem that can be found
        let e = toml::from_str::<toml::Table>(source)
            .err()
            .map(|e| (e.span().unwrap_or(0..0), e.message().trim().to_string()))
            .unwrap_or((0..0, "the file is not TOML".into()));
        return Err(vec![loc.at_span(e.0, String::new(), e.1)]);
    };
    // every problem in one run: secrets, then each piece's shape, then the compiler's checks
    // of what did parse
    crate::secrets::check(&loc, root_table, &mut problems);
    let secrets: Vec<String> = problems.iter().map(|p| p.key.clone()).collect();
    let parsed = crate::parse::config_file(&loc, root_table, &secrets, &mut problems);
    let raw = parsed.file;
    let mut c = Compiler {
        root,
        loc: &loc,
        raw: &raw,
        tools,
        problems: Vec::new(),
        credential_vars: Vec::new(),
    };
    let profiles = c.profiles();
    c.roles();
    let rules = c.rules();
    c.other();
    crate::store_path::check(&loc, root, &raw, &mut c.problems);
    let auth_roles = c.auth();
    c.rates();
    crate::upstreams::check(root, &raw.gateway, &raw.upstreams, &mut |path, message| {
        c.problems.push(loc.at(&path, message));
    });
    // the compiler's problems under a piece that failed are about the default put there
    let under_failed = |key: &str| {
        parsed.failed.iter().any(|f| {
            key == f || key.starts_with(&format!("{f}.")) || key.starts_with(&format!("{f}["))
        })
    };
    problems.extend(c.problems.into_iter().filter(|p| !under_failed(&p.key)));
    if !problems.is_empty() {
        // an upstream named as the file names it, not by its place in the list
        for p in &mut problems {
            if let Some(named) = loc.named(&p.key) {
                p.key = named;
            }
        }
        problems.sort_by_key(|p| (p.line, p.column));
        return Err(problems);
    }
    let mut rules = rules;
    crate::links::add_aliases(root, &mut rules);
    let command_rules = command_rules(&rules);
    let store_at = raw
        .store
        .path
        .as_ref()
        .map(|_| loc.at(&[key("store"), key("path")], String::new()));
    let credential_vars = std::mem::take(&mut c.credential_vars);
    Ok(Config {
        store_at,
        file: Some(file.to_path_buf()),
        protected: protected(root, Some(file), &raw),
        raw,
        auth_roles,
        profiles,
        rules,
        command_rules,
        in_workspace: in_workspace(root, file),
        credential_vars,
    })
}

pub(crate) struct Compiler<'a> {
    root: &'a Path,
    loc: &'a Locator<'a>,
    pub(crate) raw: &'a ConfigFile,
    tools: &'a [&'a str],
    problems: Vec<Problem>,
    credential_vars: Vec<(String, Problem)>,
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

impl Compiler<'_> {
    pub(crate) fn problem(&mut self, path: &[Seg], message: impl Into<String>) {
        self.problems.push(self.loc.at(path, message));
    }

    fn known_tool(&self, name: &str) -> bool {
        self.tools.contains(&name)
            || crate::upstreams::is_upstream_tool(&self.raw.gateway, &self.raw.upstreams, name)
    }

    fn tool_list(&self) -> String {
        self.tools.join(", ")
    }

    fn profile_names(&self) -> Vec<String> {
        let mut names = vec![DEFAULT_PROFILE.to_string(), EXPLORE_PROFILE.to_string()];
        names.extend(self.raw.profiles.keys().cloned());
        names.dedup();
        names
    }

    fn profiles(&mut self) -> Vec<Profile> {
        let mut out = Vec::new();
        let raw = self.raw;
        for (name, p) in &raw.profiles {
            let at = |k: &str, i: usize| vec![key("profiles"), key(name), key(k), Seg::Index(i)];
            if p.max_listed == Some(0) {
                self.problem(
                    &[key("profiles"), key(name), key("max_listed")],
                    "max_listed must be at least 1 (search_tools is always listed)",
                );
            }
            for (list, k) in [
                (&p.tools, "tools"),
                (&p.exclude, "exclude"),
                (&p.deferred, "deferred"),
            ] {
                for (i, t) in list.iter().enumerate() {
                    if !self.known_tool(t) {
                        let tools = self.tool_list();
                        self.problem(
                            &at(k, i),
                            format!("no tool is named {t:?}; the tools are: {tools}"),
                        );
                    }
                }
            }
            if name.trim().is_empty() {
                self.problem(&[key("profiles")], "a profile needs a name");
            }
            out.push(profile(name, p));
        }
        if out.len() + 2 > toolgate_core::registry::MAX_PROFILES {
            self.problem(
                &[key("profiles")],
                format!(
                    "at most {} profiles can be defined",
                    toolgate_core::registry::MAX_PROFILES - 2
                ),
            );
        }
        out
    }

    fn roles(&mut self) {
        let names = self.profile_names();
        let raw = self.raw;
        for (role, r) in &raw.roles {
            if r.profiles.is_empty() {
                self.problem(
                    &[key("roles"), key(role)],
                    "a role needs at least one profile it may use: profiles = [\"explore\"]",
                );
            }
            for (i, p) in r.profiles.iter().enumerate() {
                if !names.contains(p) {
                    self.problem(
                        &[key("roles"), key(role), key("profiles"), Seg::Index(i)],
                        format!(
                            "no profile is named {p:?}; the profiles are: {}",
                            names.join(", ")
                        ),
                    );
                }
            }
            if r.attributes.contains_key(crate::ROLE_ATTRIBUTE) {
                self.problem(
                    &[key("roles"), key(role), key("attributes"), key("role")],
                    "the attribute `role` is the role's name, set by toolgate",
                );
            }
        }
    }

    fn rules(&mut self) -> Vec<CompiledRule> {
        let mut out = Vec::new();
        let raw = self.raw;
        if raw.rules.len() > crate::MAX_RULES {
            self.problem(
                &[key("rules"), Seg::Index(crate::MAX_RULES)],
                format!(
                    "{} rules, more than the limit of {}: cover paths with globs \
                     (`path:dir/**`) rather than a rule each",
                    raw.rules.len(),
                    crate::MAX_RULES
                ),
            );
            return out;
        }
        for (i, r) in raw.rules.iter().enumerate() {
            let at = |k: &str| vec![key("rules"), Seg::Index(i), key(k)];
            let decision = decision(r.decision);
            let before = self.problems.len();
            if r.tool.is_none() && r.resource.is_none() {
                self.problem(
                    &[key("rules"), Seg::Index(i)],
                    "a rule needs `tool`, `resource` or both (for example resource = \"path:.env\")",
                );
            }
            let tool = r.tool.as_deref().and_then(|t| match ToolPattern::parse(t) {
                Ok(p) if p.is_exact() && !self.known_tool(p.as_str()) => {
                    let tools = self.tool_list();
                    self.problem(
                        &at("tool"),
                        format!("no tool is named {t:?}; the tools are: {tools}"),
                    );
                    None
                }
                Ok(p) => Some(p),
                Err(e) => {
                    self.problem(&at("tool"), e.to_string());
                    None
                }
            });
            let resource =
                r.resource.as_deref().and_then(|text| {
                    match ResourcePattern::parse_with(text, MatchMode::for_decision(decision)) {
                        Ok(p) => Some(p),
                        Err(e) => {
                            self.problem(&at("resource"), e.to_string());
                            None
                        }
                    }
                });
            if r.access.is_some() && !matches!(resource, Some(ResourcePattern::Path(_))) {
                self.problem(&at("access"), "`access` is for rules over paths (path:...)");
            }
            for (j, role) in r.roles.iter().enumerate() {
                if !raw.roles.contains_key(role) {
                    let defined: Vec<&str> = raw.roles.keys().map(String::as_str).collect();
                    self.problem(
                        &[key("rules"), Seg::Index(i), key("roles"), Seg::Index(j)],
                        format!(
                            "no role is named {role:?}; the roles are: {}",
                            if defined.is_empty() {
                                "(none)".to_string()
                            } else {
                                defined.join(", ")
                            }
                        ),
                    );
                }
            }
            let condition = if r.when.is_some() || r.unless.is_some() {
                match Condition::compile(r.when.as_deref(), r.unless.as_deref()) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        let k = if r.when.is_some() { "when" } else { "unless" };
                        self.problem(&at(k), e.to_string());
                        None
                    }
                }
            } else {
                None
            };
            if let Some(name) = &r.name {
                if name.trim().is_empty() || RISK_RULES.contains(&name.as_str()) {
                    self.problem(
                        &at("name"),
                        "a rule's name must not be empty nor a built-in one",
                    );
                }
            }
            if self.problems.len() > before {
                continue;
            }
            // interned: every verdict of the rule borrows them instead of copying
            let label = Cow::Borrowed(crate::rules::intern(match &r.name {
                Some(n) => n.clone(),
                None => format!("rules[{i}]"),
            }));
            let reason = Cow::Borrowed(crate::rules::intern(match &r.reason {
                Some(s) => s.clone(),
                None => describe(r.decision, r.tool.as_deref(), r.resource.as_deref()),
            }));
            out.push(CompiledRule {
                label,
                decision,
                tool,
                resource,
                access: r.access.map(|a| match a {
                    AccessConfig::Read => Access::Read,
                    AccessConfig::Write => Access::Write,
                }),
                roles: r.roles.clone(),
                condition,
                reason,
                via_link: false,
            });
        }
        out
    }

    fn other(&mut self) {
        let raw = self.raw;
        if raw.limits.timeout_ms == Some(0) {
            self.problem(
                &[key("limits"), key("timeout_ms")],
                "a timeout must be above 0 ms",
            );
        }
        if raw.limits.max_result_bytes == Some(0) {
            self.problem(
                &[key("limits"), key("max_result_bytes")],
                "a result size limit must be above 0 bytes",
            );
        }
        for (i, text) in raw.files.read_hard_links.iter().enumerate() {
            if let Err(e) = PathPattern::parse(text, MatchMode::Grant) {
                self.problem(
                    &[key("files"), key("read_hard_links"), Seg::Index(i)],
                    format!(
                        "{e}; write a path glob relative to the workspace, such as \
                         \"node_modules/.pnpm\" or \".venv/**\""
                    ),
                );
            }
        }
        self.approvals();
        self.server_limits();
        self.shell_limits();
        self.ledger();
        self.mail();
        self.credential_vars = crate::http::check(self.loc, &raw.http, &mut self.problems);
    }
}

/// The accepted range of each `[server]` limit: name, least, most, unit.
const SERVER_LIMITS: [(&str, u64, u64, &str); 8] = [
    ("max_body_bytes", 1024, 1 << 30, "bytes"),
    ("max_connections", 1, 1 << 20, "connections"),
    ("max_connections_per_peer", 1, 1 << 20, "connections"),
    ("header_timeout_ms", 1, 86_400_000, "ms"),
    ("body_timeout_ms", 1, 86_400_000, "ms"),
    // above rmcp's SSE keep-alive (15 s), so a stream waiting for a long call is never idle
    ("idle_timeout_ms", 20_000, 86_400_000, "ms"),
    ("max_sessions", 1, 1 << 20, "sessions"),
    ("max_requests_in_flight", 1, 1 << 20, "requests"),
];

/// The accepted range of each `[shell]` limit: name, least, most, unit, and why the least.
const SHELL_LIMITS: [(&str, u64, u64, &str); 2] = [
    // a pipeline needs a few processes; the kernel's largest pid
    ("max_processes", 8, 1 << 22, "processes"),
    // bash and a small command; a pebibyte
    ("max_memory_bytes", 16 << 20, 1 << 50, "bytes"),
];

impl Compiler<'_> {
    /// `[shell]`'s limits: each within its range.
    fn shell_limits(&mut self) {
        let s = &self.raw.shell;
        for ((name, least, most, unit), value) in SHELL_LIMITS
            .into_iter()
            .zip([s.max_processes, s.max_memory_bytes])
        {
            if let Some(v) = value {
                if !(least..=most).contains(&v) {
                    self.problem(
                        &[key("shell"), key(name)],
                        format!("{v} is out of range: write {least} to {most} {unit}"),
                    );
                }
            }
        }
    }

    /// `[server]`'s limits: each within its range.
    fn server_limits(&mut self) {
        let s = &self.raw.server;
        let values = [
            s.max_body_bytes,
            s.max_connections,
            s.max_connections_per_peer,
            s.header_timeout_ms,
            s.body_timeout_ms,
            s.idle_timeout_ms,
            s.max_sessions,
            s.max_requests_in_flight,
        ];
        for ((name, least, most, unit), value) in SERVER_LIMITS.into_iter().zip(values) {
            if let Some(v) = value {
                if !(least..=most).contains(&v) {
                    self.problem(
                        &[key("server"), key(name)],
                        format!("{v} is out of range: write {least} to {most} {unit}"),
                    );
                }
            }
        }
    }

    /// `[approvals]`: each value a span or `never`, and the defaults written beside a cap
    /// within it.
    fn approvals(&mut self) {
        let a = &self.raw.approvals;
        let mut parsed = Vec::new();
        for (k, v) in [
            ("session_expires", &a.session_expires),
            ("always_expires", &a.always_expires),
            ("max_expires", &a.max_expires),
        ] {
            let Some(text) = v else { continue };
            match crate::approvals::parse_expiry(text) {
                Ok(d) => parsed.push((k, d)),
                Err(e) => self.problem(&[key("approvals"), key(k)], e),
            }
        }
        let Some(&(_, Some(max))) = parsed.iter().find(|(k, _)| *k == "max_expires") else {
            return;
        };
        for (k, d) in parsed {
            if k != "max_expires" && d.is_none_or(|d| d > max) {
                self.problem(
                    &[key("approvals"), key(k)],
                    format!(
                        "{} is longer than max_expires ({}): an answer may not ask for it",
                        crate::approvals::span_text(d),
                        crate::approvals::span_text(Some(max))
                    ),
                );
            }
        }
    }
}

impl Compiler<'_> {
    /// `[mail]`, when present ([`crate::mail`]).
    fn mail(&mut self) {
        if let Some(m) = &self.raw.mail {
            for (path, message) in crate::mail::check(m, self.root) {
                self.problem(&path, message);
            }
        }
    }

    /// `[ledger]`: each value a span; the retention at least a second, the window at most
    /// the retention.
    fn ledger(&mut self) {
        let l = &self.raw.ledger;
        let retention = l
            .retention
            .as_deref()
            .map(|t| (t, crate::ledger::parse_span(t)));
        let window = l
            .derived_key_window
            .as_deref()
            .map(|t| (t, crate::ledger::parse_span(t)));
        let mut kept = crate::ledger::DEFAULT_RETENTION;
        if let Some((_, r)) = &retention {
            match r {
                Ok(d) if d.as_secs() >= 1 => kept = *d,
                Ok(_) => self.problem(
                    &[key("ledger"), key("retention")],
                    "the retention must be at least 1s: a call sent again must find its entry",
                ),
                Err(e) => self.problem(&[key("ledger"), key("retention")], e.clone()),
            }
        }
        if let Some((_, w)) = &window {
            match w {
                Ok(d) if *d > kept => self.problem(
                    &[key("ledger"), key("derived_key_window")],
                    format!(
                        "{} is longer than the retention ({}): entries are gone before it ends",
                        crate::approvals::span_text(Some(*d)),
                        crate::approvals::span_text(Some(kept))
                    ),
                ),
                Ok(_) => {}
                Err(e) => self.problem(&[key("ledger"), key("derived_key_window")], e.clone()),
            }
        }
    }
}

fn decision(d: DecisionConfig) -> Decision {
    match d {
        DecisionConfig::Allow => Decision::Allow,
        DecisionConfig::Ask => Decision::Ask,
        DecisionConfig::Deny => Decision::Deny,
    }
}

fn describe(d: DecisionConfig, tool: Option<&str>, resource: Option<&str>) -> String {
    let verb = match d {
        DecisionConfig::Allow => "allows",
        DecisionConfig::Ask => "asks about",
        DecisionConfig::Deny => "denies",
    };
    match (tool, resource) {
        (Some(t), Some(r)) => format!("the configuration {verb} {t} on {r}"),
        (Some(t), None) => format!("the configuration {verb} {t}"),
        (None, Some(r)) => format!("the configuration {verb} {r}"),
        (None, None) => format!("the configuration {verb} this call"),
    }
}

fn profile(name: &str, p: &ProfileConfig) -> Profile {
    let mut out = Profile::new(name);
    let effect = |e: &EffectSelector| match e {
        EffectSelector::ReadOnly => Selector::ReadOnly,
        EffectSelector::NotDestructive => Selector::NotDestructive,
        EffectSelector::ClosedWorld => Selector::ClosedWorld,
    };
    for t in &p.tools {
        out = out.include(Selector::Name(t.clone()));
    }
    for t in &p.tags {
        out = out.include(Selector::Tag(t.clone()));
    }
    for e in &p.effects {
        out = out.include(effect(e));
    }
    if p.tools.is_empty() && p.tags.is_empty() && p.effects.is_empty() {
        out = out.include(Selector::All);
    }
    for e in &p.require {
        out = out.require(effect(e));
    }
    if let Some(r) = p.max_risk {
        out = out.require(Selector::RiskAtMost(match r {
            RiskClass::Read => Risk::Read,
            RiskClass::Write => Risk::Write,
            RiskClass::External => Risk::External,
            RiskClass::Dangerous => Risk::Dangerous,
        }));
    }
    for t in &p.exclude {
        out = out.exclude(Selector::Name(t.clone()));
    }
    for t in &p.deferred {
        out = out.defer(Selector::Name(t.clone()));
    }
    if let Some(n) = p.max_listed {
        out = out.max_listed(n);
    }
    out
}

/// The unconditional `command:` rules for every role, as the shell's command rules.
fn command_rules(rules: &[CompiledRule]) -> CommandRules {
    let mut out = CommandRules::new();
    for r in rules {
        let Some(ResourcePattern::Command(p, _)) = &r.resource else {
            continue;
        };
        let for_shell = r.tool.as_ref().is_none_or(|t| t.matches("run_shell"));
        if for_shell && r.roles.is_empty() && r.condition.is_none() {
            if let Ok(rules) = out.clone().rule(r.decision, p.as_str()) {
                out = rules;
            }
        }
    }
    out
}

/// Keeps `file` (toolgate's own, in the workspace at `root` or outside it) out of run_shell's
/// reach in `c` (see [`Config::shell_config_storing`]).
fn keep_out(c: &mut ShellConfig, root: &Path, file: &Path) {
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let resolved = match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or_else(|_| abs.clone()),
        _ => abs.clone(),
    };
    match resolved.strip_prefix(&canonical_root) {
        Ok(rel) => {
            if let Some(p) = Protected::pattern(rel) {
                c.hidden.push(p);
            }
        }
        Err(_) => {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut p = resolved.as_os_str().to_owned();
                p.push(suffix);
                c.deny_read.push(PathBuf::from(p));
            }
        }
    }
}

/// toolgate's own files in the workspace at `root`: the configuration file (when inside it)
/// and the store.
fn protected(root: &Path, file: Option<&Path>, raw: &ConfigFile) -> Protected {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let rel = |p: &Path| -> Option<PathBuf> {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(p)
        };
        // the file's directory canonical (the file itself may not exist yet)
        let dir = abs.parent()?;
        let name = abs.file_name()?;
        let dir = std::fs::canonicalize(dir).ok()?;
        dir.join(name)
            .strip_prefix(&root)
            .ok()
            .map(Path::to_path_buf)
    };
    let config = match file {
        Some(f) => rel(f),
        None => Some(PathBuf::from(CONFIG_FILE)),
    };
    let store = match &raw.store.path {
        None => Some(PathBuf::from(".toolgate")),
        Some(p) => {
            let p = Path::new(p);
            if p.is_absolute() {
                rel(p)
            } else {
                rel(&root.join(p))
            }
        }
    };
    Protected {
        config: config.as_deref().and_then(Protected::pattern),
        store: store.as_deref().and_then(Protected::pattern),
    }
}

impl Config {
    /// The file it was loaded from (`None` for the defaults).
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The file as parsed.
    pub fn raw(&self) -> &ConfigFile {
        &self.raw
    }

    /// The profiles to register (besides the built-in `default` and `explore`, which a
    /// profile of the same name replaces).
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The policy without the shell's command rules.
    pub fn config_policy(&self) -> ConfigPolicy {
        let r = &self.raw.risk;
        ConfigPolicy::new(
            self.rules.clone(),
            RiskDefaults {
                destructive: decision(r.destructive),
                dangerous: decision(r.dangerous),
                external: decision(r.external),
                default: decision(r.default),
            },
            self.protected.clone(),
        )
    }

    /// The policy for the pipeline: the [`ConfigPolicy`] under the shell's command rules
    /// (each simple command of a `run_shell` line decided by the unconditional `command:`
    /// rules; when they allow every command, they replace the risk defaults for the call).
    pub fn policy(&self) -> Arc<dyn Policy> {
        let mut shell =
            ShellPolicy::new(Arc::new(self.config_policy()), self.command_rules.clone());
        for r in RISK_RULES {
            shell = shell.overridable(r);
        }
        Arc::new(shell)
    }

    /// The shell's command rules.
    pub fn command_rules(&self) -> &CommandRules {
        &self.command_rules
    }

    /// Session budgets.
    pub fn budgets(&self) -> Budgets {
        let b = &self.raw.budgets;
        Budgets {
            max_calls: b.max_calls,
            max_calls_per_tool: b.max_calls_per_tool,
            max_wall_time: b.max_wall_time_ms.map(Duration::from_millis),
            max_result_bytes: b.max_result_bytes,
        }
    }

    /// `tool` under the configuration's per-call limits.
    pub fn limit(&self, tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
        let l = &self.raw.limits;
        crate::Limited::wrap(
            tool,
            l.timeout_ms.map(Duration::from_millis),
            l.max_result_bytes
                .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
        )
    }

    /// The store's file, when the configuration sets one (relative paths are under `root`).
    pub fn store_path(&self, root: &Path) -> Option<PathBuf> {
        self.raw.store.path.as_ref().map(|p| root.join(p))
    }

    /// A problem located at `[store] path` saying `message` (found after loading, such as a
    /// store file that does not open); `None` when the file sets no store path.
    pub fn store_problem(&self, message: impl Into<String>) -> Option<Problem> {
        self.store_at.clone().map(|mut p| {
            p.message = message.into();
            p
        })
    }

    /// The environment variable `[server] token_env` names, when the file sets one.
    pub fn token_env_configured(&self) -> Option<&str> {
        self.raw.server.token_env.as_deref()
    }

    /// `[files] read_hard_links`, compiled: where a file with several hard links is read
    /// (each glob checked when the file was loaded).
    pub fn hard_link_reads(&self) -> Vec<PathPattern> {
        self.raw
            .files
            .read_hard_links
            .iter()
            .filter_map(|t| PathPattern::parse(t, MatchMode::Grant).ok())
            .collect()
    }

    /// `run_shell`'s configuration: the defaults with the file's network, unix socket,
    /// sandbox and per-run limit settings,
    /// and what its sandbox enforces of the policy ([`Config::sandbox_rules`]): this
    /// configuration file among the paths the command may not change (read-only, the directory
    /// entry included) when it lies inside the workspace, the store and the paths deny rules
    /// keep from reading hidden, those they keep from writing read-only.
    pub fn shell_config(&self) -> ShellConfig {
        let mut c = ShellConfig::default();
        c.allow_network = self.raw.shell.network;
        c.allow_unsandboxed = self.raw.shell.allow_unsandboxed;
        c.allow_unix_sockets = self.raw.shell.unix_sockets;
        if let Some(n) = self.raw.shell.max_processes {
            c.limits.run_processes = Some(n);
        }
        if let Some(n) = self.raw.shell.max_memory_bytes {
            c.limits.run_memory_bytes = Some(n);
        }
        c.git_identity = self.raw.shell.git_identity.to_shell();
        if let Some(rel) = self.in_workspace.as_deref().and_then(Path::to_str) {
            if !c.protected.iter().any(|p| p == rel) {
                c.protected.push(rel.to_string());
            }
        }
        if let Some(store) = &self.protected.store {
            c.hidden.push(store.clone());
        }
        for r in self.sandbox_rules() {
            match r.enforced {
                SandboxEnforces::Hidden => c.hidden.push(r.pattern.clone()),
                SandboxEnforces::ReadOnly => c.read_only.push(r.pattern.clone()),
                SandboxEnforces::Nothing(_) => {}
            }
        }
        c
    }

    /// [`Config::shell_config`] for calls that record to `files` (the store, given with
    /// `--store` or by the configuration, and a JSON-lines audit log) in the workspace at
    /// `root`: run_shell also keeps each out of reach. Inside the workspace one is hidden like
    /// `.toolgate`; outside it, the file and its `-wal`, `-shm` and `-journal` companions are
    /// left out of what Landlock lets the command read (those that exist when the first run
    /// starts).
    pub fn shell_config_storing(&self, root: &Path, files: &[&Path]) -> ShellConfig {
        let mut c = self.shell_config();
        for file in files {
            keep_out(&mut c, root, file);
        }
        c
    }

    /// What run_shell's sandbox does about each rule over paths (`toolgate check` shows it):
    /// a deny rule that keeps the path from reading (any access, or `access = "read"`) hides
    /// what it matches, one over writes binds it read-only; a rule for other tools, an ask
    /// rule and an allow rule are not the sandbox's to enforce. A rule limited to roles or
    /// with a condition is enforced for every run (the sandbox cannot tell calls apart; hiding
    /// too much is the safe side).
    pub fn sandbox_rules(&self) -> Vec<SandboxRule<'_>> {
        let mut out = Vec::new();
        for r in &self.rules {
            let Some(ResourcePattern::Path(pattern)) = &r.resource else {
                continue;
            };
            let for_shell = r.tool.as_ref().is_none_or(|t| t.matches("run_shell"));
            let enforced = match (r.decision, for_shell, r.access) {
                (_, false, _) => SandboxEnforces::Nothing("the rule is for other tools"),
                (Decision::Allow, ..) => {
                    SandboxEnforces::Nothing("an allow rule restricts nothing")
                }
                (Decision::Ask, ..) => SandboxEnforces::Nothing(
                    "the sandbox cannot ask: an approved run_shell reaches these paths",
                ),
                (Decision::Deny, true, Some(Access::Write)) => SandboxEnforces::ReadOnly,
                (Decision::Deny, true, _) => SandboxEnforces::Hidden,
            };
            out.push(SandboxRule {
                via_link: r.via_link,
                rule: &r.label,
                pattern,
                enforced,
            });
        }
        out
    }

    /// Where the configuration file read lies in the workspace (relative to its root, links
    /// followed), when it does.
    pub fn file_in_workspace(&self) -> Option<&Path> {
        self.in_workspace.as_deref()
    }

    /// `[mail]`, when present: what `toolgate serve` and `toolgate call` build the mail tools
    /// from (checked at load: see `Compiler::mail`).
    pub fn mail(&self) -> Option<&crate::model::MailSettings> {
        self.raw.mail.as_ref()
    }

    /// The contacts files of `[mail]`, each relative to the workspace `root` or absolute.
    pub fn mail_contacts(&self, root: &Path) -> Vec<PathBuf> {
        self.mail()
            .and_then(|m| m.contacts.as_ref())
            .map(|c| c.paths().into_iter().map(|p| root.join(p)).collect())
            .unwrap_or_default()
    }

    /// The CA file of `[mail]`, relative to the workspace `root` or absolute.
    pub fn mail_ca_file(&self, root: &Path) -> Option<PathBuf> {
        self.mail()
            .and_then(|m| m.ca_file.as_ref())
            .map(|p| root.join(p))
    }

    /// The HTTP tools' configuration: `[http]` over the defaults, each credential's value
    /// read from its environment variable now.
    pub fn http_config(&self) -> toolgate_tools::http::HttpConfig {
        crate::http::build(&self.raw.http)
    }

    /// A located problem for each `[http.credentials]` entry whose environment variable is
    /// unset or empty here (what `toolgate check` reports; calls to that host fail with
    /// `credential_missing` until it is set).
    pub fn missing_credentials(&self) -> Vec<Problem> {
        self.credential_vars
            .iter()
            .filter(|(var, _)| std::env::var_os(var).is_none_or(|v| v.is_empty()))
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// How long approval grants hold: the `[approvals]` table over the built-in defaults
    /// ([`GrantExpiry::default`]), defaults cut to `max_expires`. Values were checked at
    /// load.
    pub fn grant_expiry(&self) -> GrantExpiry {
        let a = &self.raw.approvals;
        let get = |v: &Option<String>| {
            v.as_deref()
                .and_then(|t| crate::approvals::parse_expiry(t).ok())
        };
        let built_in = GrantExpiry::default();
        GrantExpiry {
            session: get(&a.session_expires).unwrap_or(built_in.session),
            always: get(&a.always_expires).unwrap_or(built_in.always),
            max: get(&a.max_expires).unwrap_or(built_in.max),
        }
        .within_cap()
    }

    /// The idempotency ledger's retention and derived-key window: the `[ledger]` table over
    /// [`toolgate_core::LedgerOptions::default`]. Values were checked at load.
    pub fn ledger_options(&self) -> toolgate_core::LedgerOptions {
        let l = &self.raw.ledger;
        let get = |v: &Option<String>| v.as_deref().and_then(|t| crate::ledger::parse_span(t).ok());
        let built_in = toolgate_core::LedgerOptions::default();
        toolgate_core::LedgerOptions {
            retention: get(&l.retention).unwrap_or(built_in.retention),
            derived_key_window: get(&l.derived_key_window).unwrap_or(built_in.derived_key_window),
            ..built_in
        }
    }

    /// The upstream MCP servers (`[[upstreams]]`), checked at load.
    pub fn upstreams(&self) -> &[crate::UpstreamConfig] {
        &self.raw.upstreams
    }

    /// What joins an upstream's name and its tool's name (`[gateway] separator`, default
    /// `__`).
    pub fn gateway_separator(&self) -> &str {
        self.raw
            .gateway
            .separator
            .as_deref()
            .unwrap_or(crate::upstreams::DEFAULT_SEPARATOR)
    }

    /// The upstream resources one session may be subscribed to at once (`[gateway]
    /// max_subscriptions`, default 100).
    pub fn gateway_max_subscriptions(&self) -> u32 {
        self.raw.gateway.max_subscriptions()
    }

    /// The environment variable holding the server's token (default `TOOLGATE_TOKEN`).
    pub fn token_env(&self) -> &str {
        self.raw
            .server
            .token_env
            .as_deref()
            .unwrap_or("TOOLGATE_TOKEN")
    }

    /// The setup of a session with `role` (`--role`), `profile` (`--profile`) and `attrs`
    /// (`--attr`, parsed with [`crate::parse_attr`]). Without a role, the profile is
    /// `profile` or `default` and the attributes are `attrs`.
    ///
    /// # Errors
    /// [`SessionError::UnknownRole`], [`SessionError::ProfileNotAllowed`], or
    /// [`SessionError::BadAttribute`] for an `--attr` that would change one of the role's.
    pub fn session(
        &self,
        role: Option<&str>,
        profile: Option<&str>,
        attrs: Vec<(String, serde_json::Value)>,
    ) -> Result<SessionSetup, SessionError> {
        let mut attributes = BTreeMap::new();
        let Some(role) = role else {
            attributes.extend(attrs);
            return Ok(SessionSetup {
                profile: profile.unwrap_or(DEFAULT_PROFILE).to_string(),
                attributes,
            });
        };
        let r = self
            .raw
            .roles
            .get(role)
            .ok_or_else(|| SessionError::UnknownRole {
                role: role.to_string(),
                defined: if self.raw.roles.is_empty() {
                    "(none)".into()
                } else {
                    self.raw
                        .roles
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })?;
        let profile = match profile {
            None => r
                .profiles
                .first()
                .cloned()
                .unwrap_or_else(|| DEFAULT_PROFILE.into()),
            Some(p) if r.profiles.iter().any(|x| x == p) => p.to_string(),
            Some(p) => {
                return Err(SessionError::ProfileNotAllowed {
                    role: role.to_string(),
                    profile: p.to_string(),
                    allowed: r.profiles.join(", "),
                })
            }
        };
        for (k, v) in &r.attributes {
            attributes.insert(k.clone(), attribute_json(v));
        }
        for (k, v) in attrs {
            if attributes.contains_key(&k) {
                return Err(SessionError::BadAttribute {
                    given: format!("{k}={v}"),
                    why: format!("role {role:?} sets {k:?} in the configuration"),
                });
            }
            attributes.insert(k, v);
        }
        attributes.insert(
            crate::ROLE_ATTRIBUTE.to_string(),
            serde_json::Value::String(role.to_string()),
        );
        Ok(SessionSetup {
            profile,
            attributes,
        })
    }

    /// A summary of the effective profiles and rules, one line each, for `toolgate check`.
    pub fn summary(&self, tools: &[&ToolSpec]) -> Vec<String> {
        let mut out = Vec::new();
        let mut profiles: Vec<Profile> = Vec::new();
        if !self.profiles.iter().any(|p| p.name == DEFAULT_PROFILE) {
            profiles.push(Profile::new(DEFAULT_PROFILE).all());
        }
        if !self.profiles.iter().any(|p| p.name == EXPLORE_PROFILE) {
            profiles.push(
                Profile::new(EXPLORE_PROFILE)
                    .read_only()
                    .require(Selector::ClosedWorld),
            );
        }
        profiles.extend(self.profiles.iter().cloned());
        for p in &profiles {
            let names: Vec<&str> = tools
                .iter()
                .filter(|t| p.includes(t))
                .map(|t| &*t.name)
                .collect();
            out.push(format!("profile {}: {}", p.name, names.join(", ")));
        }
        for (name, r) in &self.raw.roles {
            out.push(format!("role {name}: profiles {}", r.profiles.join(", ")));
        }
        for r in &self.rules {
            let decision = format!("{:?}", r.decision).to_lowercase();
            let mut line = format!("rule {}: {decision}: {}", r.label, r.reason);
            if let (true, Some(ResourcePattern::Path(p))) = (r.via_link, &r.resource) {
                line.push_str(&format!(
                    " (also path:{}, where a link the rule names leads)",
                    p.as_str()
                ));
            }
            if !r.roles.is_empty() {
                line.push_str(&format!(" (roles: {})", r.roles.join(", ")));
            }
            if r.condition.is_some() {
                line.push_str(" (with a Cedar condition)");
            }
            out.push(line);
        }
        let http = self.http_config();
        let mut line = format!(
            "http: max_redirects {}, timeout {} ms, connect timeout {} ms, max_bytes {}",
            http.max_redirects,
            http.timeout.as_millis(),
            http.connect_timeout.as_millis(),
            http.max_bytes
        );
        if !http.allow_private.is_empty() {
            let nets: Vec<String> = http.allow_private.iter().map(ToString::to_string).collect();
            line.push_str(&format!(", allow_private {}", nets.join(" ")));
        }
        if !http.nameservers.is_empty() {
            let ns: Vec<String> = http.nameservers.iter().map(ToString::to_string).collect();
            line.push_str(&format!(", nameservers {}", ns.join(" ")));
        }
        if !http.credentials.is_empty() {
            let hosts: Vec<&str> = http.credentials.keys().map(String::as_str).collect();
            line.push_str(&format!(", credentials for {}", hosts.join(" ")));
        }
        out.push(line);
        out.push(if self.raw.files.read_hard_links.is_empty() {
            "files: files with several hard links refused to the read tools ([files] \
             read_hard_links gives where to read them)"
                .to_string()
        } else {
            format!(
                "files: files with several hard links read beneath {}",
                self.raw.files.read_hard_links.join(", ")
            )
        });
        let risk = &self.raw.risk;
        out.push(
            format!(
                "risk defaults: destructive {:?}, dangerous {:?}, external {:?}, otherwise {:?}",
                risk.destructive, risk.dangerous, risk.external, risk.default
            )
            .to_lowercase(),
        );
        out
    }
}
