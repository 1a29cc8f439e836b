//! JSON Schema compilation (once, at registration) and validation with JSON pointers.
//!
//! Schemas are JSON Schema 2020-12 unless they name another draft in `$schema` (MCP
//! specification 2025-11-25, "Tools": the default dialect is 2020-12). Remote `$ref`s are never
//! fetched.

use crate::error::{ArgumentFault, RegistrationError};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// A schema compiled once; validating against it allocates nothing when the value is valid.
pub struct CompiledSchema {
    validator: Validator,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles `schema` for tool `tool`; `which` is `inputSchema` or `outputSchema`. The root
    /// must be an object schema with `"type": "object"`, as MCP requires of both.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidSchema`] with the JSON pointer of the fault inside the
    /// schema (for example `/properties/path/type` for an unknown type name).
    pub fn compile(
        tool: &str,
        which: &'static str,
        schema: &Value,
    ) -> Result<Self, RegistrationError> {
        let invalid = |pointer: &str, message: String| RegistrationError::InvalidSchema {
            tool: tool.to_string(),
            which,
            pointer: pointer.to_string(),
            message,
        };
        let Some(root) = schema.as_object() else {
            return Err(invalid("", "the schema must be a JSON object".into()));
        };
        match root.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            _ => {
                return Err(invalid(
                    "/type",
                    "the root of a tool schema must have \"type\": \"object\"".into(),
                ))
            }
        }
        let validator = jsonschema::options()
            .build(schema)
            .map_err(|e| invalid(e.instance_path().as_str(), e.to_string()))?;
        Ok(CompiledSchema { validator })
    }

    /// Whether `value` satisfies the schema. Allocates nothing.
    #[inline]
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Every fault of `value` against the schema, each with the JSON pointer of the offending
    /// value. Empty when valid. An unexpected property is reported at its own pointer
    /// (`/max_depth`), a missing required one at the pointer it would have.
    pub fn faults(&self, value: &Value) -> Vec<ArgumentFault> {
        let mut out = Vec::new();
        for error in self.validator.iter_errors(value) {
            push_faults(&error, &mut out);
        }
        out
    }

    /// Validates, returning the faults when invalid.
    ///
    /// # Errors
    /// The list of faults (never empty).
    pub fn validate(&self, value: &Value) -> Result<(), Vec<ArgumentFault>> {
        if self.is_valid(value) {
            Ok(())
        } else {
            Err(self.faults(value))
        }
    }
}

fn push_faults(error: &ValidationError<'_>, out: &mut Vec<ArgumentFault>) {
    let base = error.instance_path().as_str();
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for name in unexpected {
                out.push(ArgumentFault {
                    pointer: format!("{base}/{}", escape_pointer(name)),
                    message: format!(
                        "unknown argument {name:?}: the schema does not allow it; remove it"
                    ),
                });
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            out.push(ArgumentFault {
                pointer: format!("{base}/{}", escape_pointer(name)),
                message: format!("missing required argument {name:?}"),
            });
        }
        _ => out.push(ArgumentFault {
            pointer: base.to_string(),
            message: error.to_string(),
        }),
    }
}

/// Escapes one reference token of a JSON pointer (RFC 6901 section 3: `~` as `~0`, `/` as `~1`).
pub fn escape_pointer(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "n": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
        .unwrap()
    }

    #[test]
    fn faults_carry_pointers() {
        let s = schema();
        assert!(s.is_valid(&json!({"path": "x"})));
        let faults = s.faults(&json!({"max_depth": 3, "mode": "c", "n": "1"}));
        let mut pointers: Vec<_> = faults.iter().map(|f| f.pointer.as_str()).collect();
        pointers.sort();
        assert_eq!(pointers, ["/max_depth", "/mode", "/n", "/path"]);
    }

    #[test]
    fn bad_schema_names_the_pointer() {
        let err = CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({"type": "object", "properties": {"p": {"type": "strin"}}}),
        )
        .unwrap_err();
        match err {
            RegistrationError::InvalidSchema { pointer, tool, .. } => {
                assert_eq!(tool, "t");
                assert!(pointer.starts_with("/properties/p"), "{pointer}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn root_must_be_object() {
        for bad in [json!(true), json!({"type": "string"}), json!({})] {
            assert!(CompiledSchema::compile("t", "inputSchema", &bad).is_err());
        }
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(escape_pointer("a/b~c"), "a~1b~0c");
        assert_eq!(escape_pointer("plain"), "plain");
    }
}
