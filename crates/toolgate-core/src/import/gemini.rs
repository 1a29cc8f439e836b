//! Gemini function declarations: `{"name", "description", "parameters", "response"}` with
//! schemas in Gemini's OpenAPI 3.0 subset (`"type": "OBJECT"`, `nullable`, `format`), or
//! `parametersJsonSchema` / `responseJsonSchema` in JSON Schema, and `behavior`.
//!
//! The OpenAPI forms are normalised like any foreign dialect (upper-case type names mapped,
//! `nullable: true` folded into the type). When both `parameters` and `parametersJsonSchema`
//! are given (Gemini takes only one), the JSON Schema is read and `parameters` ignored with a
//! warning; the same for the response. The response schema becomes the `outputSchema`, not
//! closed. `behavior` (blocking or not) is how Gemini waits for the call, not part of the
//! tool: ignored without a warning. Gemini says nothing about effects, so the tool gets
//! [`Effects::side_effecting`].

use super::error::ImportError;
use super::fields::{self, Fields};
use super::warning::{child, Warning};
use crate::spec::Effects;
use serde_json::{Map, Value};

const KNOWN: [&str; 7] = [
    "name",
    "description",
    "parameters",
    "parametersJsonSchema",
    "response",
    "responseJsonSchema",
    "behavior",
];

/// Reads a Gemini function declaration at `pointer`.
pub(crate) fn fields<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Fields<'a>, ImportError> {
    let name = fields::name(map, pointer)?;
    fields::ignore_unknown(map, &KNOWN, pointer, "Gemini", warnings);
    let input = one_of(map, "parametersJsonSchema", "parameters", pointer, warnings)?;
    let output = one_of(map, "responseJsonSchema", "response", pointer, warnings)?;
    Ok(Fields {
        name,
        name_pointer: child(pointer, "name"),
        title: None,
        description: fields::text(map, "description", pointer, warnings),
        input,
        missing_input: None,
        output,
        effects: Effects::side_effecting(),
        examples: None,
    })
}

/// The JSON Schema field, else the OpenAPI one; a warning when both are given.
fn one_of<'a>(
    map: &'a Map<String, Value>,
    json_schema: &str,
    openapi: &str,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Option<fields::SchemaField<'a>>, ImportError> {
    let first = fields::schema(map, json_schema, pointer)?;
    let second = fields::schema(map, openapi, pointer)?;
    match (first, second) {
        (Some(j), Some(o)) => {
            warnings.push(Warning::new(
                o.pointer,
                format!("{openapi} beside {json_schema} (Gemini takes one); {json_schema} read, {openapi} ignored"),
            ));
            Ok(Some(j))
        }
        (j, o) => Ok(j.or(o)),
    }
}
