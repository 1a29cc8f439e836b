//! Warnings: what normalisation changed in an imported definition.

use serde::{Deserialize, Serialize};

/// One change made while importing a definition, or one thing in it that was not used.
///
/// Serialized as `{"pointer": "/parameters/properties/x/type", "message": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Warning {
    /// JSON pointer (RFC 6901) into the definition as given (not into the normalised schema):
    /// the keyword or value that was changed, dropped or ignored.
    pub pointer: String,
    /// What was changed and why, lower case, for example
    /// `type "float" is not a JSON Schema type; mapped to "number"`.
    pub message: String,
}

impl Warning {
    /// A warning at `pointer`.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Warning {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Warning {
    /// `"/pointer": message` (the pointer quoted, since it may be empty).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.pointer, self.message)
    }
}

/// Appends `/token` (escaped) to `pointer`.
pub(crate) fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", crate::schema::escape_pointer(token))
}
