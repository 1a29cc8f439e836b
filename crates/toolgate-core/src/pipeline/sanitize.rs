//! Stage 2, sanitize: the arguments become a JSON object whose strings are clean (see
//! [`crate::sanitize`] for what is refused and what is cleaned).

use crate::call::Arguments;
use crate::error::{ArgumentFault, ToolError};
use crate::spec::ToolSpec;
use serde_json::Value;

/// The parsed, cleaned arguments object. `null` and an empty raw string mean `{}`.
///
/// # Errors
/// `invalid_arguments` for JSON text that does not parse (a lone surrogate included) or for a
/// value that is not an object; `invalid_input` for refused characters.
pub fn sanitize(arguments: Arguments, spec: &ToolSpec) -> Result<Value, ToolError> {
    let mut value = match arguments {
        Arguments::Value(v) => v,
        Arguments::Raw(text) if text.trim().is_empty() => Value::Object(Default::default()),
        Arguments::Raw(text) => serde_json::from_str(&text).map_err(|e| {
            ToolError::invalid_arguments(
                format!("the arguments are not valid JSON ({e}); send a JSON object"),
                vec![ArgumentFault {
                    pointer: String::new(),
                    message: e.to_string(),
                }],
            )
            .with_reason("malformed_json")
        })?,
    };
    match value {
        Value::Object(_) => {}
        Value::Null => value = Value::Object(Default::default()),
        _ => {
            return Err(ToolError::invalid_arguments(
                "the arguments must be a JSON object of named arguments",
                vec![ArgumentFault {
                    pointer: String::new(),
                    message: "expected an object".into(),
                }],
            ))
        }
    }
    crate::sanitize::check_arguments(&mut value, &spec.verbatim_arguments)?;
    Ok(value)
}
