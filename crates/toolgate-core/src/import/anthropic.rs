//! Anthropic tools (Messages API, client tools): `{"name", "description", "input_schema",
//! "input_examples"}`, with an optional `"type": "custom"`.
//!
//! `input_examples` become the tool's examples (each must be an arguments object the
//! normalised input schema accepts; others are dropped with a warning). `cache_control`,
//! `strict`, `defer_loading` and `allowed_callers` are request options, not part of the
//! tool: ignored without a warning. Anthropic's server tools (`"type": "web_search_..."`,
//! `"bash_..."`, ...) run at Anthropic and are refused. Anthropic says nothing about effects,
//! so the tool gets [`Effects::side_effecting`].

use super::error::ImportError;
use super::fields::{self, Fields};
use super::warning::{child, Warning};
use crate::spec::Effects;
use serde_json::{Map, Value};

const KNOWN: [&str; 9] = [
    "type",
    "name",
    "description",
    "input_schema",
    "input_examples",
    "cache_control",
    "strict",
    "defer_loading",
    "allowed_callers",
];

/// Reads an Anthropic tool at `pointer`.
pub(crate) fn fields<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Fields<'a>, ImportError> {
    match map.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "custom" => {}
        Some(other) => {
            return Err(ImportError::definition(
                child(pointer, "type"),
                format!("a tool of type {other} is one of Anthropic's server tools, which run at Anthropic; only client tools (\"type\": \"custom\" or none) can be imported"),
            ))
        }
    }
    let name = fields::name(map, pointer)?;
    fields::ignore_unknown(map, &KNOWN, pointer, "Anthropic", warnings);
    Ok(Fields {
        name,
        name_pointer: child(pointer, "name"),
        title: None,
        description: fields::text(map, "description", pointer, warnings),
        input: fields::schema(map, "input_schema", pointer)?,
        missing_input: Some((
            pointer.to_string(),
            "no input_schema (Anthropic requires one); the tool takes no arguments",
        )),
        output: None,
        effects: Effects::side_effecting(),
        examples: map.get("input_examples").map(|value| fields::SchemaField {
            value,
            pointer: child(pointer, "input_examples"),
        }),
    })
}
