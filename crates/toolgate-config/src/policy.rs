//! [`ConfigPolicy`]: the configuration's rules as a [`Policy`].
//!
//! The sequence for one call:
//!
//! 1. **protected paths**: a write to toolgate's configuration file, or any access to its
//!    store, is denied (`protected.config`, `protected.store`), whatever the rules say;
//! 2. **rules**: each rule applies when its tool pattern matches the tool, its roles include the
//!    session's role and its condition holds. A rule without a resource pattern decides the
//!    call; a rule with one decides each resource of the call it matches (deny and ask rules
//!    match every spelling of a path, see [`toolgate_core::pattern::MatchMode`]);
//! 3. **combining**: the strongest decision wins (`deny > ask > allow`), and on a tie the
//!    earliest rule, which the verdict names (`rules[3]`, or the rule's `name`). An allow from
//!    resource rules covers the call only when it covers every resource the call touches; a
//!    call no rule covers gets the **risk default** by its metadata (`risk.destructive`,
//!    `risk.dangerous`, `risk.external`, `risk.default`).
//!
//! Walking tools ask [`Policy::decide_path`] about each path they reach: protected paths and
//! the deny and ask rules over paths hold there too (rules restricted to a tool, a role or a
//! condition are applied as if they matched, since a walk has no tool call to judge them by:
//! hiding too much is the safe side).
//!
//! The HTTP tools ask [`Policy::decide_url`] about each redirect's target: the rules of the
//! tool (its `host:` rules, and its rules without a resource) decide as they would for a call
//! naming that URL, then the risk default. A rule restricted to roles or a condition, which
//! need the session's call to judge, applies as if it held when it denies or asks, and not at
//! all when it allows (the safe side again).
//!
//! They also ask [`Policy::decide_address`] about each address a host name resolves to when
//! they connect: a deny or ask rule whose `host:` pattern is an address or network
//! (`host:203.0.113.7`, `host:10.0.0.0/8`) covers the names that resolve into it, so
//! `https://a-name-for-it.example/` is refused as `https://203.0.113.7/` would be (an ask
//! refuses too: the connection is made after the call was approved, with nobody to put it
//! to). Allow rules over addresses never widen what a name was allowed.

use crate::rules::{CompiledRule, Protected};
use std::borrow::Cow;
use std::net::IpAddr;
use std::path::Path;
use toolgate_core::pattern::program::Reading;
use toolgate_core::pattern::{PathPatternSet, ResourcePattern};
use toolgate_core::{
    Access, Decision, Policy, PolicyInput, ResolvedResource, Risk, ToolSpec, Verdict,
};

/// The session attribute that holds the session's role (set from `--role`).
pub const ROLE_ATTRIBUTE: &str = "role";

/// The risk defaults, as decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RiskDefaults {
    /// For destructive tools.
    pub destructive: Decision,
    /// For tools of risk `dangerous`.
    pub dangerous: Decision,
    /// For tools of risk `external`.
    pub external: Decision,
    /// For everything else.
    pub default: Decision,
}

impl Default for RiskDefaults {
    fn default() -> Self {
        RiskDefaults {
            destructive: Decision::Ask,
            dangerous: Decision::Ask,
            external: Decision::Allow,
            default: Decision::Allow,
        }
    }
}

/// The rule names of the risk defaults; a shell policy may replace them when its command
/// rules allow every command (see `toolgate_tools::shell::ShellPolicy::overridable`).
pub const RISK_RULES: [&str; 4] = [
    "risk.destructive",
    "risk.dangerous",
    "risk.external",
    "risk.default",
];

/// The configuration's policy; see the module docs. Built by [`crate::Config::policy`].
///
/// The path patterns of all rules and of the protected paths are matched together, once per
/// path of a call ([`PathPatternSet`]): rule `i` is slot `i`, the store and the configuration
/// the two slots after the rules.
#[derive(Debug, Clone)]
pub struct ConfigPolicy {
    rules: Vec<CompiledRule>,
    risk: RiskDefaults,
    protected: Protected,
    /// `None` when globset could not combine the patterns: each is then matched alone.
    paths: Option<PathPatternSet>,
    /// The rules that deny a whole tool (no resource pattern), which can hide it
    /// ([`Policy::visible`]).
    deny_tool: Vec<usize>,
}

/// Path slots a call's hits fit in without allocating (a call of one path under up to 254
/// rules, or four paths under up to 62).
const INLINE_WORDS: usize = 4;

impl ConfigPolicy {
    pub(crate) fn new(rules: Vec<CompiledRule>, risk: RiskDefaults, protected: Protected) -> Self {
        let slots = rules
            .iter()
            .map(|r| match &r.resource {
                Some(ResourcePattern::Path(p)) => Some(p),
                _ => None,
            })
            .chain([protected.store.as_ref(), protected.config.as_ref()]);
        let paths = match PathPatternSet::new(slots) {
            Ok(set) => Some(set),
            Err(e) => {
                tracing::warn!(error = %e, "path rules are matched one by one");
                None
            }
        };
        let deny_tool = rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.decision == Decision::Deny && r.resource.is_none())
            .map(|(i, _)| i)
            .collect();
        ConfigPolicy {
            rules,
            risk,
            protected,
            paths,
            deny_tool,
        }
    }

    /// Words of path hits per path.
    fn words(&self) -> usize {
        (self.rules.len() + 2).div_ceil(64)
    }

    /// The verdict by the tool's metadata alone.
    pub fn risk_verdict(&self, tool: &ToolSpec) -> Verdict {
        let e = tool.effects;
        let mut v = Verdict::allow("risk.default", "no rule decides this call");
        v.decision = self.risk.default;
        let mut raise = |decision: Decision, rule: &'static str, reason: &'static str| {
            if decision > v.decision {
                v = Verdict {
                    decision,
                    rule: Cow::Borrowed(rule),
                    reason: Cow::Borrowed(reason),
                    grantable: true,
                };
            }
        };
        if e.destructive && !e.read_only {
            raise(
                self.risk.destructive,
                "risk.destructive",
                "the tool is destructive",
            );
        }
        if tool.risk == Risk::Dangerous {
            raise(
                self.risk.dangerous,
                "risk.dangerous",
                "the tool's risk class is dangerous",
            );
        }
        if tool.risk == Risk::External {
            raise(
                self.risk.external,
                "risk.external",
                "the tool reaches outside the workspace",
            );
        }
        v
    }

    /// How many rules the policy holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The strongest of the rules seen so far: (decision, rule index); the earliest on a tie.
#[derive(Clone, Copy)]
struct Best(Option<(Decision, usize)>);

impl Best {
    fn offer(&mut self, decision: Decision, index: usize) {
        match self.0 {
            Some((d, _)) if d >= decision => {}
            _ => self.0 = Some((decision, index)),
        }
    }
}

impl Policy for ConfigPolicy {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        let n = input.resources.len();
        let words = self.words();
        // the path hits of every resource (bit i of resource j: rule i's pattern matches it)
        let mut inline = [0u64; INLINE_WORDS];
        let mut heap = Vec::new();
        let hits: Option<&[u64]> = match &self.paths {
            Some(set)
                if input
                    .resources
                    .iter()
                    .any(|r| matches!(r, ResolvedResource::Path { .. })) =>
            {
                let hits: &mut [u64] = if n * words <= INLINE_WORDS {
                    &mut inline[..n * words]
                } else {
                    heap.resize(n * words, 0);
                    &mut heap
                };
                for (j, r) in input.resources.iter().enumerate() {
                    if let ResolvedResource::Path { path, .. } = r {
                        set.matches_into(path.as_path(), &mut hits[j * words..(j + 1) * words]);
                    }
                }
                Some(hits)
            }
            _ => None,
        };
        let hit =
            |j: usize, i: usize| hits.is_some_and(|h| h[j * words + i / 64] >> (i % 64) & 1 == 1);
        let (store, config) = (self.rules.len(), self.rules.len() + 1);
        for (j, r) in input.resources.iter().enumerate() {
            if let ResolvedResource::Path { path, access } = r {
                let v = match hits {
                    Some(_) => self
                        .protected
                        .verdict_by(hit(j, store), *access, hit(j, config)),
                    None => self.protected.verdict(path.as_path(), *access),
                };
                if let Some(v) = v {
                    return v;
                }
            }
        }
        // whether rule i's resource pattern matches resource j
        let matches = |i: usize,
                       rule: &CompiledRule,
                       pattern: &ResourcePattern,
                       j: usize,
                       argv: &mut Option<(Vec<String>, Reading)>| {
            match (pattern, &input.resources[j], hits) {
                (ResourcePattern::Path(_), ResolvedResource::Path { access, .. }, Some(_)) => {
                    rule.access.is_none_or(|a| a == *access) && hit(j, i)
                }
                (_, r, _) => rule.matches_resource(pattern, r, argv),
            }
        };
        let role = input
            .session
            .attributes()
            .get(ROLE_ATTRIBUTE)
            .and_then(|v| v.as_str());
        let mut call = Best(None);
        let mut resource_best = Best(None);
        // which resources an allow rule covers (on the stack for up to 64 resources), and the
        // words of each command (split once for every command rule, allocated only then)
        let mut covered_inline = [false; 64];
        let mut covered_heap: Vec<bool> = Vec::new();
        let covered: &mut [bool] = if n <= covered_inline.len() {
            &mut covered_inline[..n]
        } else {
            covered_heap.resize(n, false);
            &mut covered_heap
        };
        // a command the call may run needs no allow
        for (c, r) in covered.iter_mut().zip(input.resources) {
            *c = r.only_restricted();
        }
        let mut allowed = false;
        let mut argvs: Vec<Option<(Vec<String>, Reading)>> = Vec::new();
        for (i, rule) in self.rules.iter().enumerate() {
            if !rule.applies_to(input.tool, role) {
                continue;
            }
            let Some(pattern) = &rule.resource else {
                if rule.condition_holds(input) {
                    call.offer(rule.decision, i);
                }
                continue;
            };
            let mut first = None;
            for (j, r) in input.resources.iter().enumerate() {
                if matches!(
                    r,
                    ResolvedResource::Command(_) | ResolvedResource::PossibleCommand(_)
                ) && argvs.len() < n
                {
                    argvs.resize(n, None);
                }
                let argv = argvs.get_mut(j);
                let mut none = None;
                if matches(i, rule, pattern, j, argv.unwrap_or(&mut none)) {
                    first = Some(j);
                    break;
                }
            }
            let Some(first) = first else { continue };
            if !rule.condition_holds(input) {
                continue;
            }
            resource_best.offer(rule.decision, i);
            if rule.decision == Decision::Allow {
                allowed = true;
                covered[first] = true;
                for (j, c) in covered.iter_mut().enumerate().skip(first + 1) {
                    if !*c {
                        let argv = argvs.get_mut(j);
                        let mut none = None;
                        *c = matches(i, rule, pattern, j, argv.unwrap_or(&mut none));
                    }
                }
            }
        }
        // an allow from resource rules covers the call only when it covers every resource
        let all_covered = n > 0 && allowed && covered.iter().all(|c| *c);
        let mut best = call;
        if let Some((d, i)) = resource_best.0 {
            if d > Decision::Allow || all_covered {
                best.offer(d, i);
            }
        }
        match best.0 {
            Some((_, i)) => self.rules[i].verdict(),
            None => self.risk_verdict(input.tool),
        }
    }

    /// Hidden from a session: a tool a rule without a resource pattern denies it, when the
    /// rule's condition (if any) reads only what the session fixes (principal, attributes,
    /// role, profile) and holds; a condition over the call's arguments or paths can let some
    /// call through, so its tool stays listed.
    fn visible(&self, tool: &ToolSpec, session: &toolgate_core::Session) -> bool {
        if self.deny_tool.is_empty() {
            return true;
        }
        let role = session
            .attributes()
            .get(ROLE_ATTRIBUTE)
            .and_then(|v| v.as_str());
        !self.deny_tool.iter().any(|&i| {
            let rule = &self.rules[i];
            rule.applies_to(tool, role)
                && match &rule.condition {
                    None => true,
                    Some(c) => {
                        // a deny rule: hidden too when its condition cannot be evaluated
                        c.session_only()
                            && c.holds(
                                &PolicyInput {
                                    tool,
                                    resources: &[],
                                    arguments: &serde_json::Value::Null,
                                    session,
                                },
                                true,
                            )
                    }
                }
        })
    }

    fn decide_url(&self, tool: &ToolSpec, url: &str, _profile: &str) -> Verdict {
        self.decide_reached(tool, &ResolvedResource::Url(url.to_string()))
    }

    fn names_addresses(&self, tool: &ToolSpec, _profile: &str) -> bool {
        self.address_rules(tool).next().is_some()
    }

    fn decide_address(
        &self,
        tool: &ToolSpec,
        _host: &str,
        address: IpAddr,
        _profile: &str,
    ) -> Option<Verdict> {
        let mut best = Best(None);
        for (i, rule) in self.address_rules(tool) {
            if let Some(ResourcePattern::Host(p)) = &rule.resource {
                if p.matches_address(address) {
                    best.offer(rule.decision, i);
                }
            }
        }
        best.0.map(|(_, i)| self.rules[i].verdict())
    }

    fn decide_path(&self, rel: &Path, access: Access, _profile: &str) -> Decision {
        let Some(set) = &self.paths else {
            return self.decide_path_one_by_one(rel, access);
        };
        let words = self.words();
        let mut inline = [0u64; INLINE_WORDS];
        let mut heap = Vec::new();
        let hits: &mut [u64] = if words <= INLINE_WORDS {
            &mut inline[..words]
        } else {
            heap.resize(words, 0);
            &mut heap
        };
        set.matches_into(rel, hits);
        let hit = |i: usize| hits[i / 64] >> (i % 64) & 1 == 1;
        let (store, config) = (self.rules.len(), self.rules.len() + 1);
        if let Some(v) = self.protected.verdict_by(hit(store), access, hit(config)) {
            return v.decision;
        }
        let mut d = Decision::Allow;
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.decision > d
                && matches!(rule.resource, Some(ResourcePattern::Path(_)))
                && rule.access.is_none_or(|a| a == access)
                && hit(i)
            {
                d = rule.decision;
            }
        }
        d
    }

    fn decide_recipient(&self, sender: &ToolSpec, address: &str, _profile: &str) -> Verdict {
        self.decide_reached(sender, &ResolvedResource::Recipient(address.to_string()))
    }
}

impl ConfigPolicy {
    /// The deny and ask rules over address or network `host:` patterns that apply to calls of
    /// `tool`, with their indexes (rules restricted to roles or a condition included: applied
    /// as if they held, as for redirects).
    fn address_rules<'a>(
        &'a self,
        tool: &'a ToolSpec,
    ) -> impl Iterator<Item = (usize, &'a CompiledRule)> + 'a {
        self.rules.iter().enumerate().filter(move |(_, rule)| {
            rule.decision != Decision::Allow
                && matches!(&rule.resource, Some(ResourcePattern::Host(p)) if p.is_address())
                && rule.names_tool(tool)
        })
    }

    /// [`Policy::decide_url`] and [`Policy::decide_recipient`]: the verdict for a call of
    /// `tool` that touches `resource` alone (a URL it reaches, a recipient it would send to).
    /// Rules restricted to roles or a condition are taken on the safe side: a deny or ask as
    /// if it held, an allow not at all.
    fn decide_reached(&self, tool: &ToolSpec, resource: &ResolvedResource) -> Verdict {
        let mut best = Best(None);
        for (i, rule) in self.rules.iter().enumerate() {
            if !rule.names_tool(tool) {
                continue;
            }
            let judged_by_session = !rule.roles.is_empty() || rule.condition.is_some();
            if judged_by_session && rule.decision == Decision::Allow {
                continue;
            }
            let applies = match (&rule.resource, resource) {
                (None, _) => true,
                (Some(p @ ResourcePattern::Host(_)), ResolvedResource::Url(_))
                | (Some(p @ ResourcePattern::Recipient(_)), ResolvedResource::Recipient(_)) => {
                    rule.matches_resource(p, resource, &mut None)
                }
                _ => false,
            };
            if applies {
                best.offer(rule.decision, i);
            }
        }
        match best.0 {
            Some((_, i)) => self.rules[i].verdict(),
            None => self.risk_verdict(tool),
        }
    }

    /// [`Policy::decide_path`] matching each pattern alone (when the set could not be built).
    fn decide_path_one_by_one(&self, rel: &Path, access: Access) -> Decision {
        if let Some(v) = self.protected.verdict(rel, access) {
            return v.decision;
        }
        let mut d = Decision::Allow;
        for rule in &self.rules {
            if rule.decision <= d {
                continue;
            }
            if let Some(ResourcePattern::Path(p)) = &rule.resource {
                if rule.access.is_none_or(|a| a == access) && p.matches(rel) {
                    d = rule.decision;
                }
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{Pipeline, Registry, Workspace};

    /// A send to one recipient is decided as the call would be: the rules over `recipient:`
    /// and over the sending tool, then its risk (a destructive tool asks); a rule restricted
    /// to a role or a condition counts when it denies or asks, never when it allows.
    #[test]
    fn a_recipient_is_decided_as_a_send_to_it_would_be() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"
[roles.intern]
profiles = ["default"]
[roles.admin]
profiles = ["default"]

[[rules]]
name = "no-rival"
decision = "deny"
resource = "recipient:*@rival.com"
[[rules]]
name = "company"
decision = "allow"
tool = "send_email"
resource = "recipient:*@company.com"
[[rules]]
name = "ceo-asks"
decision = "ask"
roles = ["intern"]
resource = "recipient:ceo@company.com"
[[rules]]
name = "partners-for-admins"
decision = "allow"
roles = ["admin"]
resource = "recipient:*@partner.com"
[[rules]]
name = "other-tool"
decision = "allow"
tool = "notify"
resource = "recipient:*@ops.com"
"#;
        let config = crate::load_str(
            dir.path(),
            &dir.path().join("toolgate.toml"),
            text,
            &["send_email", "notify"],
        )
        .unwrap();
        let policy = config.config_policy();
        let send = ToolSpec::builder("send_email")
            .description("d")
            .effects(toolgate_core::Effects {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
                concurrency_safe: false,
            })
            .build()
            .unwrap();
        let decided = |a: &str| {
            let v = policy.decide_recipient(&send, a, "default");
            (v.decision, v.rule.to_string())
        };
        let d = |d: Decision, r: &str| (d, r.to_string());
        assert_eq!(decided("boss@company.com"), d(Decision::Allow, "company"));
        assert_eq!(decided("x@rival.com"), d(Decision::Deny, "no-rival"));
        assert_eq!(decided("ceo@company.com"), d(Decision::Ask, "ceo-asks"));
        // no rule covers these: the tool is destructive, so a send asks
        for a in [
            "x@sub.rival.com",
            "x@company.com.rival.com",
            "x@partner.com",
            "x@ops.com",
        ] {
            assert_eq!(decided(a), d(Decision::Ask, "risk.destructive"), "{a}");
        }
    }

    /// The addresses a name resolves to are decided by the deny and ask rules whose `host:`
    /// pattern is an address or network, restricted to the tool as written; allow rules, name
    /// patterns and `*` never decide an address (they decided the name).
    #[test]
    fn the_addresses_of_a_name_are_decided_by_address_rules_only() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"
[[rules]]
name = "no-metadata"
decision = "deny"
resource = "host:169.254.0.0/16"
[[rules]]
name = "ask-lab"
decision = "ask"
tool = "http_request"
resource = "host:203.0.113.0/24"
[[rules]]
decision = "allow"
resource = "host:198.51.100.7"
[[rules]]
decision = "ask"
resource = "host:*"
[[rules]]
decision = "deny"
resource = "host:*.internal.example"
[[rules]]
name = "lab-v6"
decision = "deny"
resource = "host:2001:db8::/32"
"#;
        let config = crate::load_str(
            dir.path(),
            &dir.path().join("toolgate.toml"),
            text,
            &["http_fetch", "http_request", "read_file"],
        )
        .unwrap();
        let policy = config.config_policy();
        let spec = |name: &str| ToolSpec::builder(name).description("d").build().unwrap();
        let (fetch, request) = (spec("http_fetch"), spec("http_request"));
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        assert!(policy.names_addresses(&fetch, "default"));
        let rule = |tool: &ToolSpec, a: &str| {
            policy
                .decide_address(tool, "name.example", ip(a), "default")
                .map(|v| (v.decision, v.rule.to_string()))
        };
        let deny = |r: &str| Some((Decision::Deny, r.to_string()));
        assert_eq!(rule(&fetch, "169.254.169.254"), deny("no-metadata"));
        // the IPv6 forms that carry an IPv4 address are that address
        assert_eq!(rule(&fetch, "::ffff:169.254.169.254"), deny("no-metadata"));
        assert_eq!(rule(&fetch, "64:ff9b::a9fe:a9fe"), deny("no-metadata"));
        assert_eq!(rule(&fetch, "2001:db8::1"), deny("lab-v6"));
        // restricted to http_request
        assert_eq!(rule(&fetch, "203.0.113.9"), None);
        assert_eq!(
            rule(&request, "203.0.113.9"),
            Some((Decision::Ask, "ask-lab".to_string()))
        );
        // an allow over an address, `*` and name patterns decide no address
        assert_eq!(rule(&fetch, "198.51.100.7"), None);
        assert_eq!(rule(&fetch, "93.184.216.34"), None);

        // a policy whose only host rules are names or allows names no address
        let names_only = crate::load_str(
            dir.path(),
            &dir.path().join("toolgate.toml"),
            "[[rules]]\ndecision = \"deny\"\nresource = \"host:*.internal.example\"\n\
             [[rules]]\ndecision = \"allow\"\nresource = \"host:10.0.0.0/8\"\n\
             [[rules]]\ndecision = \"deny\"\ntool = \"http_request\"\n\
             resource = \"host:10.1.0.0/16\"\n",
            &["http_fetch", "http_request"],
        )
        .unwrap()
        .config_policy();
        assert!(!names_only.names_addresses(&fetch, "default"));
        assert!(names_only.names_addresses(&request, "default"));
    }

    /// Without the combined path set (when globset cannot build it) each pattern is matched
    /// alone: both ways decide every call and every walked path alike, protected paths
    /// included.
    #[test]
    fn matching_one_by_one_decides_as_the_combined_set() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["src/a", "Secrets", "deploy", "docs"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let text = r#"
[[rules]]
decision = "deny"
resource = "path:.env"
[[rules]]
decision = "deny"
resource = "path:secrets"
access = "read"
[[rules]]
decision = "ask"
resource = "path:deploy/**"
[[rules]]
decision = "allow"
resource = "path:src/**"
[[rules]]
decision = "allow"
resource = "path:docs/*.md"
[store]
path = ".toolgate/toolgate.db"
"#;
        let tools = toolgate_tools::read_only_tools().unwrap();
        let specs: Vec<&ToolSpec> = tools.iter().map(|t| t.spec()).collect();
        let names: Vec<&str> = specs.iter().map(|s| &*s.name).collect();
        let config =
            crate::load_str(dir.path(), &dir.path().join("toolgate.toml"), text, &names).unwrap();
        let combined = config.config_policy();
        assert!(combined.paths.is_some());
        let mut alone = combined.clone();
        alone.paths = None;
        let ws = Workspace::open(dir.path()).unwrap();
        let pipeline = Pipeline::builder(Registry::builder().build().unwrap()).build();
        let session = pipeline.session("s").build().unwrap();
        let spec = specs[0];
        let paths = [
            ".env",
            "src/.ENV",
            "secrets/k",
            "SECRETS/k",
            "deploy/x",
            "src/a/b.rs",
            "docs/a.md",
            "docs/a.txt",
            "toolgate.toml",
            ".toolgate/toolgate.db-wal",
            "other",
        ];
        let mut decided = 0;
        for p in paths {
            for access in [Access::Read, Access::Write] {
                let rel = Path::new(p);
                assert_eq!(
                    combined.decide_path(rel, access, "default"),
                    alone.decide_path(rel, access, "default"),
                    "{p} {access:?}"
                );
                for other in ["src/a/c.rs", "docs/b.md", "deploy/y"] {
                    let resources = [
                        ResolvedResource::Path {
                            path: ws.resolve(p).unwrap(),
                            access,
                        },
                        ResolvedResource::Path {
                            path: ws.resolve(other).unwrap(),
                            access: Access::Read,
                        },
                    ];
                    let input = PolicyInput {
                        tool: spec,
                        resources: &resources,
                        arguments: &serde_json::Value::Null,
                        session: &session,
                    };
                    let (a, b) = (combined.decide(&input), alone.decide(&input));
                    assert_eq!(
                        (a.decision, &a.rule),
                        (b.decision, &b.rule),
                        "{p} + {other}"
                    );
                    decided += 1;
                }
            }
        }
        assert_eq!(decided, paths.len() * 2 * 3);
    }
}
