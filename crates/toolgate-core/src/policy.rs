//! Authorization decisions: [`Decision`], the [`Policy`] trait and the default policy.

use crate::session::Session;
use crate::spec::{Risk, ToolSpec};
use crate::tool::ResolvedResource;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// What a policy says about a call, ordered so that combining rules is `max`:
/// `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The call runs.
    Allow,
    /// The call runs only if the approver approves it.
    Ask,
    /// The call does not run.
    Deny,
}

/// A decision and the rule that made it (decision provenance, recorded in the audit log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// The name of the rule that made it, for example `default.destructive_asks`.
    pub rule: Cow<'static, str>,
    /// Why, in words for the operator and the approver.
    pub reason: Cow<'static, str>,
    /// For an ask: whether an approval grant over resources may answer it, and a scoped answer
    /// may leave one behind (default true). False when the policy cannot name what the call
    /// does (a shell line it cannot read with certainty): only a grant of the whole tool (no
    /// resource patterns: an operator's explicit choice) answers it, the approver is asked
    /// otherwise, and only this one call can be approved ([`Verdict::ask_each_time`]).
    #[serde(default = "grantable", skip_serializing_if = "is_grantable")]
    pub grantable: bool,
}

fn grantable() -> bool {
    true
}

fn is_grantable(g: &bool) -> bool {
    *g
}

impl Verdict {
    /// Allow by `rule`.
    pub fn allow(rule: impl Into<Cow<'static, str>>, reason: impl Into<Cow<'static, str>>) -> Self {
        Verdict {
            decision: Decision::Allow,
            rule: rule.into(),
            reason: reason.into(),
            grantable: true,
        }
    }
    /// Ask by `rule`.
    pub fn ask(rule: impl Into<Cow<'static, str>>, reason: impl Into<Cow<'static, str>>) -> Self {
        Verdict {
            decision: Decision::Ask,
            rule: rule.into(),
            reason: reason.into(),
            grantable: true,
        }
    }
    /// Deny by `rule`.
    pub fn deny(rule: impl Into<Cow<'static, str>>, reason: impl Into<Cow<'static, str>>) -> Self {
        Verdict {
            decision: Decision::Deny,
            rule: rule.into(),
            reason: reason.into(),
            grantable: true,
        }
    }

    /// Ask by `rule`, every time: no grant answers it and no answer grants more than this
    /// call (see [`Verdict::grantable`]).
    pub fn ask_each_time(
        rule: impl Into<Cow<'static, str>>,
        reason: impl Into<Cow<'static, str>>,
    ) -> Self {
        Verdict {
            grantable: false,
            ..Verdict::ask(rule, reason)
        }
    }
}

/// What a policy decides over.
#[derive(Debug)]
pub struct PolicyInput<'a> {
    /// The tool's contract.
    pub tool: &'a ToolSpec,
    /// The resources the call touches, resolved by the guard stage.
    pub resources: &'a [ResolvedResource],
    /// The call's arguments (sanitized, schema-valid).
    pub arguments: &'a Value,
    /// The session (profile, attributes).
    pub session: &'a Session,
}

/// Decides whether a call may run. Implementations must be cheap: the authorize stage calls
/// them on every call.
pub trait Policy: Send + Sync {
    /// The verdict for one call.
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict;

    /// The decision for one path a tool reaches on its own, such as a file found by walking a
    /// directory the call named (`rel` is relative to the workspace root, canonical, not
    /// followed through links). Tools leave out of their results every path that is not
    /// `Allow`, so a rule on a directory holds for tools that walk into it. Default: allow.
    fn decide_path(&self, rel: &std::path::Path, access: crate::Access, profile: &str) -> Decision {
        let _ = (rel, access, profile);
        Decision::Allow
    }

    /// The verdict for a call of `sender` (the sending tool's contract, `send_email`) that
    /// sends to `address` alone (its domain normalized, [`crate::pattern::normalize_address`]),
    /// for a tool that checks a recipient without sending: an address validator tells the
    /// model whether such a send would be allowed, put to a person or refused before it
    /// drafts one. Decided as the call would be, with rules restricted to roles or a
    /// condition taken on the safe side (a deny or ask as if it held, an allow not at all).
    /// Default: the tool's metadata decides, as [`Policy::decide`] does.
    fn decide_recipient(&self, sender: &ToolSpec, address: &str, profile: &str) -> Verdict {
        let _ = (address, profile);
        DefaultPolicy::by_metadata(sender)
    }

    /// Whether `session` could be allowed a call of `tool` at all: `false` when a rule denies
    /// every call of it in this session (whatever the arguments), which hides the tool from the
    /// session's `tools/list` and answers a call of it as an unknown tool. Called by the
    /// resolve stage on every call: must be cheap. Default: every tool of the profile.
    fn visible(&self, tool: &ToolSpec, session: &Session) -> bool {
        let _ = (tool, session);
        true
    }

    /// The verdict for a URL a tool reaches on its own during a call of `tool` in a session of
    /// `profile`: a redirect's target, which the call did not name, so the authorize stage
    /// never saw it ([`crate::ToolContext::decide_url`] asks, and the record stage keeps the
    /// strongest such verdict in the call's audit record). `url` is absolute and was checked
    /// by the egress policy ([`crate::egress`]).
    ///
    /// The default asks (a policy that does not implement this does not say, and a tool does
    /// not follow a redirect the policy asks about): a policy with rules over hosts decides
    /// by them, as it would for a call naming `url`.
    fn decide_url(&self, tool: &ToolSpec, url: &str, profile: &str) -> Verdict {
        let _ = (tool, url, profile);
        Verdict::ask(
            "policy.url_not_decided",
            "the policy does not decide URLs a tool reaches on its own",
        )
    }

    /// Whether a rule of this policy that could deny or ask about a call of `tool` in a
    /// session of `profile` names an IP address or network (`host:203.0.113.7`,
    /// `host:10.0.0.0/8`), so that the addresses a host name resolves to must be decided
    /// too ([`Policy::decide_address`]). A tool that connects by name asks this once per
    /// call; when it is `false` no address is decided (and an HTTP client may reuse a pooled
    /// connection another call opened). Must be cheap. Default: `false`.
    fn names_addresses(&self, tool: &ToolSpec, profile: &str) -> bool {
        let _ = (tool, profile);
        false
    }

    /// The verdict for `address`, one of the addresses the host name `host` resolved to when
    /// a call of `tool` in a session of `profile` connects to it: the strongest deny or ask
    /// rule over `host:` patterns that matches the address, as it would for a URL naming the
    /// address itself, or `None` when none does. Allow rules are not consulted (the call was
    /// allowed by its name; an allow over an address never widens a name's verdict). The
    /// tool connects only when every address gives `None`; the connection then goes to
    /// those addresses only. Default: `None`.
    fn decide_address(
        &self,
        tool: &ToolSpec,
        host: &str,
        address: std::net::IpAddr,
        profile: &str,
    ) -> Option<Verdict> {
        let _ = (tool, host, address, profile);
        None
    }
}

/// The default policy: destructive tools ask, dangerous risk asks, everything else (already
/// visible to the caller's profile) is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultPolicy;

impl DefaultPolicy {
    /// The verdict for any call of `tool`: the default policy looks at nothing else.
    fn by_metadata(tool: &ToolSpec) -> Verdict {
        let effects = tool.effects;
        if effects.destructive && !effects.read_only {
            Verdict::ask("default.destructive_asks", "the tool is destructive")
        } else if tool.risk == Risk::Dangerous {
            Verdict::ask(
                "default.dangerous_asks",
                "the tool's risk class is dangerous",
            )
        } else {
            Verdict::allow("default.allow", "the profile allows the tool")
        }
    }
}

impl Policy for DefaultPolicy {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        DefaultPolicy::by_metadata(input.tool)
    }

    /// As for a call naming `url`: the tool's metadata decides.
    fn decide_url(&self, tool: &ToolSpec, _url: &str, _profile: &str) -> Verdict {
        DefaultPolicy::by_metadata(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_combine_by_max() {
        assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
        assert_eq!(
            [Decision::Allow, Decision::Deny, Decision::Ask]
                .into_iter()
                .max(),
            Some(Decision::Deny)
        );
    }
}
