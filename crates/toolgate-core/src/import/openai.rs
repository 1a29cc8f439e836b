//! OpenAI function tools: Chat Completions'
//! `{"type": "function", "function": {"name", "description", "parameters", "strict"}}` and
//! the Responses API's flat `{"type": "function", "name", "description", "parameters",
//! "strict"}`.
//!
//! `parameters` may be left out (a function without arguments). `strict` changes nothing:
//! imported objects are closed either way, and strict mode's other rules (every property
//! required, optional ones nullable) are already in the schema when it was written for it.
//! OpenAI says nothing about effects, so the tool gets [`Effects::side_effecting`].

use super::error::ImportError;
use super::fields::{self, Fields};
use super::warning::{child, Warning};
use crate::spec::Effects;
use serde_json::{Map, Value};

/// Reads an OpenAI function tool at `pointer`.
pub(crate) fn fields<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Fields<'a>, ImportError> {
    match map.get("type") {
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            return Err(ImportError::definition(
                child(pointer, "type"),
                format!("only function tools can be imported; this one has type {other}"),
            ))
        }
        None => {
            return Err(ImportError::definition(
                pointer,
                "an OpenAI tool needs \"type\": \"function\"",
            ))
        }
    }
    let (function, at) = match map.get("function") {
        Some(function) => {
            fields::ignore_unknown(map, &["type", "function"], pointer, "OpenAI", warnings);
            let at = child(pointer, "function");
            (fields::object(function, &at)?, at)
        }
        None => (map, pointer.to_string()),
    };
    let known: &[&str] = if at == pointer {
        &["type", "name", "description", "parameters", "strict"]
    } else {
        &["name", "description", "parameters", "strict"]
    };
    fields::ignore_unknown(function, known, &at, "OpenAI", warnings);
    if let Some(strict) = function
        .get("strict")
        .filter(|s| !s.is_boolean() && !s.is_null())
    {
        warnings.push(Warning::new(
            child(&at, "strict"),
            format!("strict must be a boolean, found {strict}; ignored"),
        ));
    }
    Ok(Fields {
        name: fields::name(function, &at)?,
        name_pointer: child(&at, "name"),
        title: None,
        description: fields::text(function, "description", &at, warnings),
        input: fields::schema(function, "parameters", &at)?,
        missing_input: None,
        output: None,
        effects: Effects::side_effecting(),
        examples: None,
    })
}
