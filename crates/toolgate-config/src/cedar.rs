//! Conditions on session attributes, evaluated by Cedar (`cedar-policy`): a rule's `when` and
//! `unless` are the bodies of a Cedar policy's `when { }` and `unless { }` clauses, compiled
//! once at load into `permit(principal, action, resource) when { .. } unless { .. };`. The
//! condition holds when that policy permits the call's request:
//!
//! | Cedar | value |
//! |---|---|
//! | `principal` | `Toolgate::Session::"<session id>"` |
//! | `action` | `Toolgate::Action::"call"` |
//! | `resource` | `Toolgate::Tool::"<tool name>"` |
//! | `context.tool`, `context.profile`, `context.role` | strings (`role` is `""` without one) |
//! | `context.attributes` | the session attributes (from the role and `--attr`) |
//! | `context.arguments` | the call's arguments (JSON nulls left out, other numbers than integers as strings) |
//! | `context.paths` | the canonical workspace-relative paths the call touches, a set of strings |
//!
//! A condition that fails to evaluate (an attribute the session lacks, a type mismatch) does
//! not hold, as Cedar skips a policy whose evaluation errs: write
//! `context.attributes has verified && context.attributes.verified` to test for presence.
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
    pub fn holds(&self, input: &PolicyInput<'_>) -> bool {
        let _ = input;
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
    /// Cedar's parse errors, with its message.
    pub fn compile(when: Option<&str>, unless: Option<&str>) -> Result<Condition, ConditionError> {
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
        let mut set = PolicySet::new();
        set.add(policy).map_err(|e| ConditionError(e.to_string()))?;
        let action = EntityUid::from_str(r#"Toolgate::Action::"call""#)
            .map_err(|e| ConditionError(e.to_string()))?;
        Ok(Condition {
            inner: Arc::new(Compiled {
                set,
                source,
                action,
            }),
        })
    }

    /// Whether the condition holds for the call (see the module docs).
    ///
    /// The context is built from Cedar values directly (not through Cedar's JSON parser, which
    /// cost about 25 µs of a call's 48 µs under 20 rules: `cargo bench -p toolgate-config
    /// --bench rules`).
    pub fn holds(&self, input: &PolicyInput<'_>) -> bool {
        let session = input.session;
        let role = session
            .attributes()
            .get(crate::policy::ROLE_ATTRIBUTE)
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(attributes) = cedar_record(session.attributes()) else {
            return false;
        };
        let Some(arguments) = cedar_value(input.arguments) else {
            return false;
        };
        let paths = RestrictedExpression::new_set(input.resources.iter().filter_map(|r| match r {
            ResolvedResource::Path { path, .. } => {
                Some(RestrictedExpression::new_string(path.display()))
            }
            _ => None,
        }));
        let context = Context::from_pairs([
            (
                "tool".to_string(),
                RestrictedExpression::new_string(input.tool.name.to_string()),
            ),
            (
                "profile".to_string(),
                RestrictedExpression::new_string(session.profile().to_string()),
            ),
            (
                "role".to_string(),
                RestrictedExpression::new_string(role.to_string()),
            ),
            ("attributes".to_string(), attributes),
            ("arguments".to_string(), arguments),
            ("paths".to_string(), paths),
        ]);
        let Ok(context) = context else {
            return false;
        };
        let uid = |ty: &str, id: &str| {
            EntityUid::from_type_name_and_id(
                cedar_policy::EntityTypeName::from_str(ty).expect("a fixed type name"),
                cedar_policy::EntityId::new(id),
            )
        };
        let Ok(request) = Request::new(
            uid("Toolgate::Session", session.id()),
            self.inner.action.clone(),
            uid("Toolgate::Tool", &input.tool.name),
            context,
            None,
        ) else {
            return false;
        };
        let response =
            Authorizer::new().is_authorized(&request, &self.inner.set, &Entities::empty());
        response.decision() == cedar_policy::Decision::Allow
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
/// `None` when two keys collide after renaming (`__x` next to `___x`): the condition then
/// does not hold, as for any context Cedar cannot build.
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
