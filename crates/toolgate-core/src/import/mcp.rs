//! MCP tool definitions (specification 2025-11-25, "Tools": `name`, `title`, `description`,
//! `inputSchema`, `outputSchema`, `annotations`).
//!
//! Annotations are hints from the server. Untrusted (the default), they can only tighten: the
//! tool starts from [`Effects::side_effecting`] (not read-only, destructive, not idempotent,
//! not concurrency-safe, closed-world) and an absent or `true` `openWorldHint` makes it
//! open-world (MCP's default for an absent hint is `true`); hints that would loosen
//! (`readOnlyHint: true`, `destructiveHint: false`, `idempotentHint: true`) are ignored with a
//! warning. Trusted ([`ImportOptions::trust_annotations`]), they are mapped as MCP defines
//! them, with MCP's defaults for absent hints: `readOnlyHint` false, `destructiveHint` true,
//! `idempotentHint` false, `openWorldHint` true; a read-only tool is also idempotent and
//! concurrency-safe.

use super::error::kind;
use super::fields::{self, Fields};
use super::warning::{child, Warning};
use super::ImportOptions;
use crate::error::RegistrationError;
use crate::import::error::ImportError;
use crate::spec::{Effects, ToolSpec, ToolSpecBuilder};
use serde_json::{Map, Value};

const KNOWN: [&str; 9] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "_meta",
    "icons",
    "execution",
];

/// Reads an MCP tool definition at `pointer`.
pub(crate) fn fields<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    options: &ImportOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Fields<'a>, ImportError> {
    let name = fields::name(map, pointer)?;
    fields::ignore_unknown(map, &KNOWN, pointer, "MCP", warnings);
    let annotations_at = child(pointer, "annotations");
    let annotations = match map.get("annotations") {
        None | Some(Value::Null) => None,
        Some(Value::Object(a)) => Some(a),
        Some(other) => {
            warnings.push(Warning::new(
                &annotations_at,
                format!(
                    "annotations must be an object, found {}; ignored",
                    kind(other)
                ),
            ));
            None
        }
    };
    let mut title = fields::text(map, "title", pointer, warnings);
    if title.is_none() {
        title = annotations.and_then(|a| fields::text(a, "title", &annotations_at, warnings));
    }
    Ok(Fields {
        name,
        name_pointer: child(pointer, "name"),
        title,
        description: fields::text(map, "description", pointer, warnings),
        input: fields::schema(map, "inputSchema", pointer)?,
        missing_input: Some((
            pointer.to_string(),
            "no inputSchema (MCP requires one); the tool takes no arguments",
        )),
        output: fields::schema(map, "outputSchema", pointer)?,
        effects: effects(
            annotations,
            &annotations_at,
            options.trust_annotations,
            warnings,
        ),
        examples: None,
    })
}

/// The effects the annotations allow (see the module documentation).
pub(crate) fn effects(
    annotations: Option<&Map<String, Value>>,
    pointer: &str,
    trusted: bool,
    warnings: &mut Vec<Warning>,
) -> Effects {
    let mut hint = |key: &str| -> Option<bool> {
        match annotations?.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            other => {
                warnings.push(Warning::new(
                    child(pointer, key),
                    format!(
                        "{key} must be a boolean, found {}; treated as absent",
                        kind(other)
                    ),
                ));
                None
            }
        }
    };
    let read_only = hint("readOnlyHint");
    let destructive = hint("destructiveHint");
    let idempotent = hint("idempotentHint");
    let open_world = hint("openWorldHint");
    if trusted {
        let read_only = read_only.unwrap_or(false);
        return Effects {
            read_only,
            destructive: !read_only && destructive.unwrap_or(true),
            idempotent: read_only || idempotent.unwrap_or(false),
            open_world: open_world.unwrap_or(true),
            concurrency_safe: read_only,
        };
    }
    for (key, value, loosens) in [
        ("readOnlyHint", read_only, Some(true)),
        ("destructiveHint", destructive, Some(false)),
        ("idempotentHint", idempotent, Some(true)),
    ] {
        if value == loosens {
            warnings.push(Warning::new(
                child(pointer, key),
                format!("{key}: {} is not trusted and would loosen policy; ignored (the tool keeps the strictest effects)", loosens == Some(true)),
            ));
        }
    }
    Effects {
        open_world: open_world != Some(false),
        ..Effects::side_effecting()
    }
}

/// A spec from an MCP tool definition the host wrote itself; effects and other metadata
/// come from `base`, whose name is replaced by the definition's. The schemas are taken as
/// they are (not normalised); they are compiled when the tool is registered. For definitions
/// from elsewhere use [`import_definition`](super::import_definition).
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
