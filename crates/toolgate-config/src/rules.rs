//! One compiled rule ([`CompiledRule`]) and the protected paths ([`Protected`]).

use std::borrow::Cow;
use std::path::Path;
use toolgate_core::pattern::program::{self, Reading};
use toolgate_core::pattern::{split_command, MatchMode, PathPattern, ResourcePattern, ToolPattern};
use toolgate_core::{Access, Decision, PolicyInput, ResolvedResource, ToolSpec, Verdict};

/// A rule of the configuration, compiled once at load.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    /// `rules[N]`, or the rule's name.
    pub label: Cow<'static, str>,
    pub decision: Decision,
    pub tool: Option<ToolPattern>,
    pub resource: Option<ResourcePattern>,
    pub access: Option<Access>,
    pub roles: Vec<String>,
    pub condition: Option<crate::cedar::Condition>,
    pub reason: Cow<'static, str>,
    /// Repeats the rule before it for a path a link that rule names leads to
    /// ([`crate::links`]).
    pub via_link: bool,
}

impl CompiledRule {
    /// Whether the rule's tool pattern names `tool`, or the tool whose rules it comes under
    /// ([`ToolSpec::rules_as`]); true for a rule without a tool pattern.
    pub fn names_tool(&self, tool: &ToolSpec) -> bool {
        self.tool.as_ref().is_none_or(|t| {
            t.matches(&tool.name) || tool.rules_as.as_deref().is_some_and(|of| t.matches(of))
        })
    }

    /// Whether the rule is about `tool` ([`CompiledRule::names_tool`]) in a session of
    /// `role`.
    pub fn applies_to(&self, tool: &ToolSpec, role: Option<&str>) -> bool {
        self.names_tool(tool)
            && (self.roles.is_empty() || role.is_some_and(|r| self.roles.iter().any(|x| x == r)))
    }

    /// Whether the rule's resource pattern matches `r`; `argv` caches the words of a command
    /// and the command grammar's reading of them.
    pub fn matches_resource(
        &self,
        pattern: &ResourcePattern,
        r: &ResolvedResource,
        argv: &mut Option<(Vec<String>, Reading)>,
    ) -> bool {
        match (pattern, r) {
            (ResourcePattern::Path(p), ResolvedResource::Path { path, access }) => {
                self.access.is_none_or(|a| a == *access) && p.matches(path.as_path())
            }
            (ResourcePattern::Command(c, mode), ResolvedResource::Command(line)) => {
                let (words, reading) = argv.get_or_insert_with(|| {
                    let words = split_command(line);
                    let reading = program::read(&words);
                    (words, reading)
                });
                c.matches_read(words, reading, *mode == MatchMode::Restrict)
            }
            // a command the call may run: deny and ask rules only
            (
                ResourcePattern::Command(c, MatchMode::Restrict),
                ResolvedResource::PossibleCommand(line),
            ) => {
                let (words, reading) = argv.get_or_insert_with(|| {
                    let words = split_command(line);
                    let reading = program::read_possible(&words);
                    (words, reading)
                });
                c.matches_read(words, reading, true)
            }
            _ => pattern.matches(r),
        }
    }

    /// Whether the rule's condition holds (true without one). A condition that cannot be
    /// evaluated holds for a deny or ask rule and not for an allow rule: fail closed.
    pub fn condition_holds(&self, input: &PolicyInput<'_>) -> bool {
        self.condition
            .as_ref()
            .is_none_or(|c| c.holds(input, self.decision != Decision::Allow))
    }

    /// The rule's verdict.
    pub fn verdict(&self) -> Verdict {
        Verdict {
            decision: self.decision,
            rule: self.label.clone(),
            reason: self.reason.clone(),
            grantable: true,
        }
    }
}

/// `text` for the rest of the process: each distinct text is kept once (configurations loaded
/// again, as tests and `toolgate check` do, add nothing), so a rule's verdicts carry its label
/// and reason as `Cow::Borrowed` and the call path never copies them.
pub(crate) fn intern(text: String) -> &'static str {
    static TEXTS: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut texts = TEXTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(t) = texts.get(text.as_str()) {
        return t;
    }
    let t: &'static str = Box::leak(text.into_boxed_str());
    texts.insert(t);
    t
}

/// toolgate's own files inside the workspace: the configuration (no writes) and the store (no
/// access at all), matched like deny rules (every spelling, everything below).
#[derive(Debug, Clone, Default)]
pub(crate) struct Protected {
    pub config: Option<PathPattern>,
    pub store: Option<PathPattern>,
}

impl Protected {
    /// A pattern for the workspace-relative file `rel` and the files beside it whose names
    /// extend it (`toolgate.db-wal`), anchored at the root.
    pub fn pattern(rel: &Path) -> Option<PathPattern> {
        let text = rel.to_str()?;
        PathPattern::parse(&format!("/{}*", globset_escape(text)), MatchMode::Restrict).ok()
    }

    /// The deny for `rel`, when it is protected for `access`.
    pub fn verdict(&self, rel: &Path, access: Access) -> Option<Verdict> {
        self.verdict_by(
            self.store.as_ref().is_some_and(|p| p.matches(rel)),
            access,
            // only writes to the configuration are denied: a read needs no match
            access == Access::Write && self.config.as_ref().is_some_and(|p| p.matches(rel)),
        )
    }

    /// The deny for a path the store's pattern matches (`in_store`) or the configuration's
    /// (`is_config`), accessed for `access`.
    pub fn verdict_by(&self, in_store: bool, access: Access, is_config: bool) -> Option<Verdict> {
        if in_store {
            return Some(Verdict::deny(
                "protected.store",
                "toolgate's store (audit log, results, grants) is not for tools to read or write",
            ));
        }
        if access == Access::Write && is_config {
            return Some(Verdict::deny(
                "protected.config",
                "toolgate's configuration sets the policy the agent runs under; tools do not write it",
            ));
        }
        None
    }
}

/// `text` with glob metacharacters escaped.
pub(crate) fn globset_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
