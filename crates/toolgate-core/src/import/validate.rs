//! Checking recorded calls against imported definitions, without running anything.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::import::{import_definitions, CallValidator, Dialect, ImportOptions};
//!
//! let text = r#"{"name": "add", "parameters": {"type": "dict",
//!     "properties": {"a": {"type": "float"}, "b": {"type": "float"}}, "required": ["a", "b"]}}"#;
//! let imported = import_definitions(text, Dialect::Auto, &ImportOptions::default()).unwrap();
//! let validator = CallValidator::from_imported(&imported).unwrap();
//! assert!(validator.validate("add", &json!({"a": 1, "b": 2.5})).is_empty());
//! let faults = validator.validate("add", &json!({"a": "1"}));
//! let pointers: Vec<&str> = faults.iter().map(|f| f.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/a", "/b"]);
//! ```

use super::Imported;
use crate::error::{ArgumentFault, RegistrationError};
use crate::schema::CompiledSchema;
use crate::spec::ToolSpec;
use serde_json::Value;
use std::collections::HashMap;

/// Every input schema of a set of tools, compiled once, to check calls by function name.
///
/// Validation follows JSON Schema 2020-12: an integer is a valid `number` (`5` for a `float`
/// parameter), a number without a fractional part is a valid `integer` (`5.0`), and no value
/// is coerced (`"5"` is not a number).
pub struct CallValidator {
    schemas: HashMap<String, CompiledSchema>,
}

impl std::fmt::Debug for CallValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallValidator")
            .field("functions", &self.schemas.len())
            .finish()
    }
}

impl CallValidator {
    /// A validator for `specs`.
    ///
    /// # Errors
    /// [`RegistrationError::Duplicate`] when two specs have one name (calls name a function,
    /// not a version); [`RegistrationError::InvalidSchema`] when an input schema does not
    /// compile (never for specs from [`import_definition`](super::import_definition)).
    pub fn new<'a, I>(specs: I) -> Result<Self, RegistrationError>
    where
        I: IntoIterator<Item = &'a ToolSpec>,
    {
        let mut schemas = HashMap::new();
        for spec in specs {
            if schemas.contains_key(&*spec.name) {
                return Err(RegistrationError::Duplicate {
                    name: spec.name.to_string(),
                    version: spec.version.to_string(),
                });
            }
            let compiled = CompiledSchema::compile(&spec.name, "inputSchema", &spec.input_schema)?;
            schemas.insert(spec.name.to_string(), compiled);
        }
        Ok(CallValidator { schemas })
    }

    /// A validator for imported definitions.
    ///
    /// # Errors
    /// As [`CallValidator::new`].
    pub fn from_imported(imported: &[Imported]) -> Result<Self, RegistrationError> {
        Self::new(imported.iter().map(|i| &i.spec))
    }

    /// Every fault of a call to `function_name` with `arguments`, each with the JSON pointer
    /// of the offending value in the arguments (`/unit`, `/area/width`, `/items/0`; a missing
    /// required argument at the pointer it would have), sorted by pointer. Empty when the call
    /// is valid.
    ///
    /// `arguments` is the arguments object, or a string holding it as JSON (as OpenAI records
    /// calls). An unknown function gives one fault at `""`, as does a string that is not JSON.
    pub fn validate(&self, function_name: &str, arguments: &Value) -> Vec<ArgumentFault> {
        let Some(schema) = self.schemas.get(function_name) else {
            return vec![ArgumentFault {
                pointer: String::new(),
                message: format!(
                    "unknown function {function_name:?}: no imported definition has this name"
                ),
            }];
        };
        let mut faults = match arguments {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(parsed) => schema.faults(&parsed),
                Err(e) => vec![ArgumentFault {
                    pointer: String::new(),
                    message: format!("the arguments are a string that is not JSON: {e}"),
                }],
            },
            _ => schema.faults(arguments),
        };
        faults.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        faults
    }

    /// Whether a function of this name is known.
    pub fn contains(&self, function_name: &str) -> bool {
        self.schemas.contains_key(function_name)
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.schemas.len()
    }

    /// Whether there are no functions.
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }
}
