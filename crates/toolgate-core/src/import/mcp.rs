//! MCP tool definitions (specification 2025-11-25, "Tools": `name`, `title`, `description`,
//! `inputSchema`, `outputSchema`, `annotations`).

use crate::error::RegistrationError;
use crate::spec::{ToolSpec, ToolSpecBuilder};
use serde_json::Value;

/// A spec from an MCP tool definition; effects and other metadata come from `base`, whose name
/// is replaced by the definition's.
///
/// # Errors
/// [`RegistrationError::Invalid`] when the definition is not an object, lacks a string `name`,
/// or has a non-object `inputSchema`; name errors from [`ToolSpecBuilder::build`].
pub fn spec_from_mcp(
    definition: &Value,
    base: ToolSpecBuilder,
) -> Result<ToolSpec, RegistrationError> {
    let invalid = |tool: &str, message: &str| RegistrationError::Invalid {
        tool: tool.to_string(),
        message: message.to_string(),
    };
    let obj = definition
        .as_object()
        .ok_or_else(|| invalid("?", "a tool definition must be a JSON object"))?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("?", "a tool definition needs a string \"name\""))?;
    let mut b = base.name(name);
    if let Some(t) = obj.get("title").and_then(Value::as_str) {
        b = b.title(t);
    }
    if let Some(d) = obj.get("description").and_then(Value::as_str) {
        b = b.description(d);
    }
    match obj.get("inputSchema") {
        Some(s @ Value::Object(_)) => b = b.input_schema(s.clone()),
        Some(_) => return Err(invalid(name, "\"inputSchema\" must be an object")),
        None => {}
    }
    match obj.get("outputSchema") {
        Some(s @ Value::Object(_)) => b = b.output_schema(s.clone()),
        Some(Value::Null) | None => {}
        Some(_) => return Err(invalid(name, "\"outputSchema\" must be an object")),
    }
    b.build()
}
