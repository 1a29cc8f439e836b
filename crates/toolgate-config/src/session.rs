//! A session's setup from the configuration: its role, profile and attributes.
//!
//! Session attributes come from two places, in this order:
//! 1. the role's `attributes` table in `toolgate.toml` (set by the operator; a session cannot
//!    change them);
//! 2. `--attr key=value` on `toolgate call` and `toolgate serve` (for what the host knows about
//!    this session, such as `owner_verified=true`); a value `true`/`false` is a boolean, an
//!    integer is a number, anything else a string.
//!
//! The role itself is the attribute `role` ([`crate::ROLE_ATTRIBUTE`]), set from `--role`
//! only.

use crate::model::AttributeValue;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a session starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSetup {
    /// The agent profile.
    pub profile: String,
    /// The session attributes (the role's, then `--attr`), `role` included when there is one.
    pub attributes: BTreeMap<String, Value>,
}

/// Why a session cannot start as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// `--role` names no role of the configuration.
    #[error("role {role:?} is not defined in the configuration; defined roles: {defined}")]
    UnknownRole {
        /// The role asked for.
        role: String,
        /// The defined roles, comma-separated.
        defined: String,
    },
    /// The role may not use the profile.
    #[error("role {role:?} may not use profile {profile:?}; it may use: {allowed}")]
    ProfileNotAllowed {
        /// The role.
        role: String,
        /// The profile asked for.
        profile: String,
        /// The profiles the role may use, comma-separated.
        allowed: String,
    },
    /// An `--attr` that is not `key=value`, or that sets `role` or one of the role's.
    #[error("--attr {given:?}: {why}")]
    BadAttribute {
        /// The argument as given.
        given: String,
        /// What is wrong.
        why: String,
    },
}

/// Parses one `--attr key=value`.
///
/// # Errors
/// [`SessionError::BadAttribute`] without `=`, with an empty key or one that is not made of
/// letters, digits, `_` and `-`, or for the reserved key `role`.
pub fn parse_attr(given: &str) -> Result<(String, Value), SessionError> {
    let bad = |why: &str| SessionError::BadAttribute {
        given: given.to_string(),
        why: why.to_string(),
    };
    let (k, v) = given
        .split_once('=')
        .ok_or_else(|| bad("write key=value, as owner_verified=true"))?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(bad("a key is letters, digits, _ and -"));
    }
    if k == crate::ROLE_ATTRIBUTE {
        return Err(bad("the role is given with --role"));
    }
    let value = match v {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => match v.parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(v.to_string()),
        },
    };
    Ok((k.to_string(), value))
}

pub(crate) fn attribute_json(v: &AttributeValue) -> Value {
    match v {
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::Int(i) => Value::from(*i),
        AttributeValue::String(s) => Value::String(s.clone()),
    }
}
