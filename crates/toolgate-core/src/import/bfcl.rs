//! BFCL function definitions (Berkeley Function Calling Leaderboard): `name`, `description`,
//! `parameters` and, in the multi-turn tool docs, `response`, both in BFCL's schema dialect
//! (`dict`, `float`, `tuple`, `any`, Java and JavaScript type names, `optional`, defaults of
//! the wrong type) which [`normalize_schema`](super::normalize_schema) rewrites.
//!
//! `response` describes the output in the same dialect and becomes the `outputSchema`,
//! normalised but not closed: a tool may return more than its documentation lists, and the
//! finish stage checks structured output against it. BFCL says nothing about effects, so the
//! tool gets [`Effects::side_effecting`].

use super::error::ImportError;
use super::fields::{self, Fields};
use super::warning::{child, Warning};
use crate::spec::Effects;
use serde_json::{Map, Value};

/// Reads a BFCL function at `pointer`.
pub(crate) fn fields<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Fields<'a>, ImportError> {
    let name = fields::name(map, pointer)?;
    fields::ignore_unknown(
        map,
        &["name", "description", "parameters", "response"],
        pointer,
        "BFCL",
        warnings,
    );
    Ok(Fields {
        name,
        name_pointer: child(pointer, "name"),
        title: None,
        description: fields::text(map, "description", pointer, warnings),
        input: fields::schema(map, "parameters", pointer)?,
        missing_input: Some((
            child(pointer, "parameters"),
            "no parameters; the tool takes no arguments",
        )),
        output: fields::schema(map, "response", pointer)?,
        effects: Effects::side_effecting(),
        examples: None,
    })
}
