//! Conditions on session attributes, evaluated by Cedar (`cedar-policy`): a rule's `when` and
//! `unless` are the bodies of a Cedar policy's `when { }` and `unless { }` clauses, compiled
//! once at load into `permit(principal, action, resource) when { .. } unless { .. };`. The
//! condition holds when that policy permits the call's request:
//!
//! | Cedar | value |
//! |---|---|
//! | `principal` | `Toolgate::Principal::"<subject>"` for a session acting for a verified caller (an OAuth access token's `sub`; its issuer is `context.attributes.iss`), else `Toolgate::Session::"<session id>"` |
//! | `action` | `Toolgate::Action::"call"` |
//! | `resource` | `Toolgate::Tool::"<tool name>"` |
//! | `context.tool`, `context.profile`, `context.role` | strings (`role` is `""` without one) |
//! | `context.attributes` | the session attributes (from the role and `--attr`; over OAuth, the token claims `[server.auth] claims` names, and `iss`) |
//! | `context.arguments` | the call's arguments (JSON nulls left out, other numbers than integers as strings) |
//! | `context.paths` | the canonical workspace-relative paths the call touches, a set of strings |
//!
//! A condition that fails to evaluate (an attribute the session lacks, a type mismatch) does
//! not hold, as Cedar skips a policy whose evaluation errs: write
//! `context.attributes has verified && context.attributes.verified` to test for presence.
//!
//! A condition that reads nothing of the call (only `context.attributes`, `context.role`,
//! `context.profile` and `principal`, all fixed when the session is built) is evaluated once
//! per session and its answer kept on the session ([`toolgate_core::Session::memo_condition`]);
//! any other condition is evaluated on every call, over a context holding only the members it
//! reads. Which members a condition reads is found once at load, from the policy's JSON form
//! (Cedar's EST): a use of `context` other than `context.member` or `context has member`
//! counts as reading all of it.
//!
//! Conditions need toolgate built with the `cedar` feature; without it, a configuration with a
//! condition is refused with a located error (never loaded with the condition ignored).

#[cfg(feature = "cedar")]
use cedar_policy::{
    Authorizer, Context, Entities, EntityUid, Policy, PolicyId, PolicySet, Request,
    RestrictedExpression,
};
#[cfg(feature = "cedar")]
use serde_json::Value;
#[cfg(feature = "cedar")]
use std::str::FromStr;
#[cfg(feature = "cedar")]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "cedar")]
use std::sync::Arc;
use toolgate_core::PolicyInput;
#[cfg(feature = "cedar")]
use toolgate_core::ResolvedResource;

/// A compiled condition; without the `cedar` feature there is none (the type is empty).
#[cfg(not(feature = "cedar"))]
#[derive(Debug, Clone)]
pub enum Condition {}

#[cfg(not(feature = "cedar"))]
impl Condition {
    /// Refuses: this build has no Cedar.
    ///
    /// # Errors
    /// Always, saying how to get conditions.
    pub fn compile(when: Option<&str>, unless: Option<&str>) -> Result<Condition, ConditionError> {
        let _ = (when, unless);
        Err(ConditionError(
            "conditions need toolgate built with the `cedar` feature \
             (cargo build --features toolgate-config/cedar)"
                .to_string(),
        ))
    }

    /// Never called: no condition exists in this build.
    pub fn holds(&self, input: &PolicyInput<'_>, unevaluable: bool) -> bool {
        let _ = (input, unevaluable);
        match *self {}
    }

    /// Never called: no condition exists in this build.
    pub fn session_only(&self) -> bool {
        match *self {}
    }

    /// Never called: no condition exists in this build.
    pub fn holds_for(
        &self,
        principal: Option<&toolgate_core::Principal>,
        attributes: &std::collections::HashMap<String, serde_json::Value>,
    ) -> bool {
        let _ = (principal, attributes);
        match *self {}
    }
}

/// A compiled Cedar condition.
#[cfg(feature = "cedar")]
#[derive(Clone)]
pub struct Condition {
    inner: Arc<Compiled>,
}

#[cfg(feature = "cedar")]
struct Compiled {
    set: PolicySet,
    source: String,
    action: EntityUid,
    reads: Reads,
    /// The condition's key among all the process compiles, for the session memo.
    key: u64,
}

/// Keys for [`Compiled::key`].
#[cfg(feature = "cedar")]
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);

/// What a condition reads: the members of `context`, and whether `resource` (the tool)
/// appears (`principal`, the session, and `action` are fixed for a session).
#[cfg(feature = "cedar")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    tool: bool,
    profile: bool,
    role: bool,
    attributes: bool,
    arguments: bool,
    paths: bool,
    resource: bool,
}

#[cfg(feature = "cedar")]
impl Reads {
    /// Everything: what a condition is taken to read when its form cannot be analysed.
    const ALL: Reads = Reads {
        tool: true,
        profile: true,
        role: true,
        attributes: true,
        arguments: true,
        paths: true,
        resource: true,
    };

    /// What the policy `est` (Cedar's JSON form of one policy) reads.
    pub(crate) fn of(est: &Value) -> Reads {
        let mut reads = Reads::default();
        reads.walk(est);
        reads
    }

    /// Whether the answer is fixed for a session: nothing of the call is read.
    pub(crate) fn session_only(&self) -> bool {
        !(self.tool || self.arguments || self.paths || self.resource)
    }

    fn walk(&mut self, v: &Value) {
        match v {
            Value::Object(o) => {
                if o.len() == 1 {
                    if let Some(Value::String(var)) = o.get("Var") {
                        match var.as_str() {
                            "context" => *self = Reads::ALL,
                            // `principal` is the session, `action` is fixed
                            "resource" => self.resource = true,
                            _ => {}
                        }
                        return;
                    }
                    // `context.member` and `context has member` read one member
                    for op in [".", "has"] {
                        if let Some(Value::Object(access)) = o.get(op) {
                            if let (Some(Value::String(member)), Some(left)) =
                                (access.get("attr"), access.get("left"))
                            {
                                if access.len() == 2
                                    && *left == serde_json::json!({"Var": "context"})
                                {
                                    self.member(member);
                                    return;
                                }
                            }
                        }
                    }
                }
                for x in o.values() {
                    self.walk(x);
                }
            }
            Value::Array(a) => {
                for x in a {
                    self.walk(x);
                }
            }
            _ => {}
        }
    }

    fn member(&mut self, name: &str) {
        match name {
            "tool" => self.tool = true,
            "profile" => self.profile = true,
            "role" => self.role = true,
            "attributes" => self.attributes = true,
            "arguments" => self.arguments = true,
            "paths" => self.paths = true,
            // a member the context never has reads the same (absent) either way
            _ => {}
        }
    }
}

#[cfg(feature = "cedar")]
impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Condition")
            .field("cedar", &self.inner.source)
            .finish()
    }
}

/// A condition that did not compile: Cedar's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cedar: {0}")]
pub struct ConditionError(pub String);

#[cfg(feature = "cedar")]
impl Condition {
    /// Compiles `when` and `unless` (either may be absent, not both).
    ///
    /// # Errors
    /// A condition past the limits of [`crate::cedar_shape`]; Cedar's parse errors, with its
    /// message.
    pub fn compile(when: Option<&str>, unless: Option<&str>) -> Result<Condition, ConditionError> {
        // before Cedar parses it: a condition too deep for its recursion would abort
        for text in [when, unless].into_iter().flatten() {
            crate::cedar_shape::check(text).map_err(ConditionError)?;
        }
        let mut source = String::from("permit(principal, action, resource)");
        if let Some(w) = when {
            source.push_str(&format!("\nwhen {{ {w} }}"));
        }
        if let Some(u) = unless {
            source.push_str(&format!("\nunless {{ {u} }}"));
        }
        source.push(';');
        // Policy::parse takes exactly one policy: a condition cannot close the clause and
        // add a policy of its own
        let policy = Policy::parse(Some(PolicyId::new("condition")), &source)
            .map_err(|e| ConditionError(cedar_message(&e)))?;
        let reads = policy.to_json().map_or(Reads::ALL, |est| Reads::of(&est));
        let mut set = PolicySet::new();
        set.add(policy).map_err(|e| ConditionError(e.to_string()))?;
        let action = EntityUid::from_str(r#"Toolgate::Action::"call""#)
            .map_err(|e| ConditionError(e.to_string()))?;
        Ok(Condition {
            inner: Arc::new(Compiled {
                set,
                source,
                action,
                reads,
                key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
            }),
        })
    }

    /// What the condition reads (found at compile time).
    #[cfg(test)]
    pub(crate) fn reads(&self) -> Reads {
        self.inner.reads
    }

    /// Whether the condition reads nothing of the call (only what the session fixes: its
    /// principal, attributes, role and profile), so its answer is the session's.
    pub fn session_only(&self) -> bool {
        self.inner.reads.session_only()
    }

    /// Whether the condition holds for a caller with `principal` and `attributes`, before
    /// any session or call exists (a role's condition over the token's claims): `context`
    /// holds `attributes` alone, `resource` is no tool (`Toolgate::Tool::""`).
    pub fn holds_for(
        &self,
        principal: Option<&toolgate_core::Principal>,
        attributes: &std::collections::HashMap<String, Value>,
    ) -> bool {
        let Some(record) = cedar_record(attributes) else {
            return false;
        };
        let Ok(context) = Context::from_pairs([("attributes".to_string(), record)]) else {
            return false;
        };
        self.authorized(principal_uid(principal, ""), "", context)
            .unwrap_or(false)
    }

    /// Whether the condition holds for the call (see the module docs): once per session for
    /// a condition that reads nothing of the call, else on every call. A condition Cedar
    /// cannot evaluate (an evaluation error, its recursion guard finding too little stack
    /// left, a context it refuses) answers `unevaluable`, logged: `true` for a deny or ask
    /// rule, `false` for an allow rule, so that a failure never lets a call through.
    pub fn holds(&self, input: &PolicyInput<'_>, unevaluable: bool) -> bool {
        let answer = || {
            self.evaluate(input).unwrap_or_else(|| {
                tracing::error!(
                    tool = %input.tool.name,
                    answer = unevaluable,
                    "a rule's condition could not be evaluated; it is taken to hold for a deny \
                     or ask rule and not for an allow rule"
                );
                unevaluable
            })
        };
        if self.inner.reads.session_only() {
            input.session.memo_condition(self.inner.key, answer)
        } else {
            answer()
        }
    }

    /// Cedar's answer for the call, over a context of the members the condition reads.
    ///
    /// The context is built from Cedar values directly (not through Cedar's JSON parser, which
    /// cost about 25 µs of a call's 48 µs under 20 rules: `cargo bench -p toolgate-config
    /// --bench rules`).
    fn evaluate(&self, input: &PolicyInput<'_>) -> Option<bool> {
        let reads = &self.inner.reads;
        let session = input.session;
        let mut pairs: Vec<(String, RestrictedExpression)> = Vec::with_capacity(6);
        if reads.tool {
            pairs.push((
                "tool".to_string(),
                RestrictedExpression::new_string(input.tool.name.to_string()),
            ));
        }
        if reads.profile {
            pairs.push((
                "profile".to_string(),
                RestrictedExpression::new_string(session.profile().to_string()),
            ));
        }
        if reads.role {
            let role = session
                .attributes()
                .get(crate::policy::ROLE_ATTRIBUTE)
                .and_then(Value::as_str)
                .unwrap_or("");
            pairs.push((
                "role".to_string(),
                RestrictedExpression::new_string(role.to_string()),
            ));
        }
        if reads.attributes {
            let attributes = cedar_record(session.attributes())?;
            pairs.push(("attributes".to_string(), attributes));
        }
        if reads.arguments {
            let arguments = cedar_value(input.arguments)?;
            pairs.push(("arguments".to_string(), arguments));
        }
        if reads.paths {
            let paths =
                RestrictedExpression::new_set(input.resources.iter().filter_map(|r| match r {
                    ResolvedResource::Path { path, .. } => {
                        Some(RestrictedExpression::new_string(path.display()))
                    }
                    _ => None,
                }));
            pairs.push(("paths".to_string(), paths));
        }
        let context = Context::from_pairs(pairs).ok()?;
        self.authorized(
            principal_uid(session.principal(), session.id()),
            &input.tool.name,
            context,
        )
    }

    /// Cedar's answer for `principal` calling `tool` in `context`; `None` when the request
    /// cannot be made or the condition could not be evaluated (an error in the response).
    fn authorized(&self, principal: EntityUid, tool: &str, context: Context) -> Option<bool> {
        let request = Request::new(
            principal,
            self.inner.action.clone(),
            uid("Toolgate::Tool", tool),
            context,
            None,
        )
        .ok()?;
        let response =
            Authorizer::new().is_authorized(&request, &self.inner.set, &Entities::empty());
        if let Some(e) = response.diagnostics().errors().next() {
            tracing::debug!(error = %e, "Cedar could not evaluate a condition");
            return None;
        }
        Some(response.decision() == cedar_policy::Decision::Allow)
    }
}

#[cfg(feature = "cedar")]
fn uid(ty: &str, id: &str) -> EntityUid {
    EntityUid::from_type_name_and_id(
        cedar_policy::EntityTypeName::from_str(ty).expect("a fixed type name"),
        cedar_policy::EntityId::new(id),
    )
}

/// `Toolgate::Principal::"<subject>"` for a session with a principal, else
/// `Toolgate::Session::"<session id>"`.
#[cfg(feature = "cedar")]
fn principal_uid(principal: Option<&toolgate_core::Principal>, session: &str) -> EntityUid {
    match principal {
        Some(p) => uid("Toolgate::Principal", &p.subject),
        None => uid("Toolgate::Session", session),
    }
}

/// Cedar's error message with each of its causes.
#[cfg(feature = "cedar")]
fn cedar_message(e: &cedar_policy::ParseErrors) -> String {
    let mut parts: Vec<String> = Vec::new();
    for err in e.iter() {
        parts.push(err.to_string());
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join("; ")
    }
}

#[cfg(feature = "cedar")]
/// `v` as a Cedar value for the context (`None` for a JSON null, which is left out): strings,
/// booleans and 64-bit integers as themselves, other numbers as strings, arrays as sets,
/// objects as records ([`cedar_record`]).
fn cedar_value(v: &Value) -> Option<RestrictedExpression> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => RestrictedExpression::new_long(i),
            None => RestrictedExpression::new_string(n.to_string()),
        },
        Value::Array(a) => RestrictedExpression::new_set(a.iter().filter_map(cedar_value)),
        Value::Object(o) => cedar_record(o)?,
    })
}

#[cfg(feature = "cedar")]
/// An object as a Cedar record: null members left out, and keys that Cedar's JSON form reads
/// as escapes (`__entity`, `__extn`) renamed with a leading `_`, as they always were (so a
/// condition reads `context.arguments.___entity` whichever way the context is built).
/// The renaming is one-to-one (a renamed key starts with `___`, which no key left as it was
/// does), so two members never collide; `None` only if Cedar refuses the record anyway, and
/// the condition then does not hold, as for any context Cedar cannot build.
fn cedar_record<'a>(
    members: impl IntoIterator<Item = (&'a String, &'a Value)>,
) -> Option<RestrictedExpression> {
    RestrictedExpression::new_record(members.into_iter().filter_map(|(k, x)| {
        let k = if k.starts_with("__") {
            format!("_{k}")
        } else {
            k.clone()
        };
        Some((k, cedar_value(x)?))
    }))
    .ok()
}

#[cfg(all(test, feature = "cedar"))]
mod tests {
    use super::*;

    fn reads(when: &str) -> Reads {
        Condition::compile(Some(when), None).unwrap().reads()
    }

    /// Only `context.member`, `context has member`, `principal` and `action` leave a condition
    /// fixed for a session when the members are the session's; every other use of `context`
    /// reads all of it, and `resource` is the call's tool.
    #[test]
    fn which_conditions_are_fixed_for_a_session() {
        for when in [
            "context.attributes has verified && context.attributes.verified",
            r#"context.role == "admin" || context has profile"#,
            r#"context["attributes"]["team"] == "support""#,
            r#"principal == Toolgate::Session::"s1" && action == Toolgate::Action::"call""#,
            "context.nothing_we_set == 1",
            r#"{ "context": 1 }.context == 1"#,
            "true",
        ] {
            let r = reads(when);
            assert!(r.session_only(), "{when}: {r:?}");
            assert!(!r.arguments && !r.paths && !r.tool, "{when}: {r:?}");
        }
        for when in [
            r#"context.tool == "x""#,
            "context has arguments",
            r#"context.paths.contains("a")"#,
            r#"resource == Toolgate::Tool::"read_file""#,
            r#"resource.name like "*x""#,
            "context == {}",
            "[context].contains(context)",
            r#"(if context.attributes.a then context else {}) has tool"#,
            "context.attributes.a && context.arguments.n > 1",
        ] {
            let r = reads(when);
            assert!(!r.session_only(), "{when}: {r:?}");
        }
        assert_eq!(reads("context == {}"), Reads::ALL);
        let r = reads("context.attributes.a && context.arguments.n > 1");
        assert!(r.attributes && r.arguments && !r.paths && !r.tool && !r.role);
    }
}
