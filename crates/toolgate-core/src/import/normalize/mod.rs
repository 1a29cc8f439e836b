//! Normalisation of a foreign schema into JSON Schema 2020-12.
//!
//! Each schema object is rewritten in this order, and every change is recorded as a
//! [`Warning`] whose pointer is the keyword in the definition as given:
//!
//! 1. `type` ([`type_keyword`]): foreign names mapped ([`types`]); `any` and unknown names
//!    removed (no type constraint); OpenAPI's `nullable: true` folded into the type.
//! 2. every other keyword ([`keywords`]): subschemas normalised recursively; keywords of the
//!    wrong JSON type dropped (numeric strings such as `"5"` read as numbers); draft 4-7 forms
//!    rewritten (`dependencies`, boolean `exclusiveMinimum`); `$schema` set to 2020-12.
//! 3. arrays ([`arrays`]): `items: [...]` becomes `prefixItems` (and `additionalItems`
//!    `items`); a `tuple` with item types becomes `prefixItems` of fixed length.
//! 4. objects ([`objects`]): BFCL's `optional` and draft 3's boolean `required` folded into
//!    `required`; closed (`additionalProperties: false`) when they declare `properties` and
//!    say nothing about other properties; names that are required but cannot be present get
//!    an unconstrained property.
//! 5. values ([`values`]): `enum` values that do not fit the type, and a `default` that does
//!    not fit the type, `enum` or `const`, are dropped.
//!
//! Schemas nested more than [`MAX_SCHEMA_DEPTH`] deep are refused.

mod arrays;
mod keywords;
mod objects;
#[cfg(test)]
mod tests;
mod type_keyword;
pub(crate) mod types;
mod values;

use super::error::{kind, ImportError};
use super::warning::{child, Warning};
use serde_json::{Map, Value};
use types::{map_type_name, TypeName};

/// Schemas nested deeper than this (counting every subschema level) are refused.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The `$schema` URI of JSON Schema 2020-12.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Options of [`normalize_schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NormalizeOptions {
    /// Close every object schema that declares `properties` and says nothing about other
    /// properties (`additionalProperties`, `unevaluatedProperties`, or composition keywords
    /// such as `allOf` that may declare them elsewhere) with `additionalProperties: false`.
    /// On for input schemas (a model must not invent arguments), off for output schemas (a
    /// tool may return more than its definition describes).
    pub close_objects: bool,
}

impl NormalizeOptions {
    /// Options for an input schema: objects are closed.
    pub const INPUT: NormalizeOptions = NormalizeOptions {
        close_objects: true,
    };
    /// Options for an output schema: objects are left as they are.
    pub const OUTPUT: NormalizeOptions = NormalizeOptions {
        close_objects: false,
    };
}

impl Default for NormalizeOptions {
    /// [`NormalizeOptions::INPUT`].
    fn default() -> Self {
        Self::INPUT
    }
}

/// Normalises `schema`, written in JSON Schema (any draft) or in a function-calling dialect
/// (BFCL's `dict`, `float`, `tuple`, `any`, `optional`, Java and JavaScript type names), into
/// JSON Schema 2020-12, and appends a [`Warning`] for every change to `warnings`.
///
/// `pointer` is the location of `schema` inside its definition (for example `/parameters`);
/// warning pointers start with it. The result is not checked against the root rules of a
/// tool schema (`"type": "object"`); [`import_definition`](super::import_definition) does
/// that and compiles it. Nested values that are not schemas (`"properties": {"x": 5}`) become
/// `{}` (no constraint) with a warning; a type name written where a schema belongs
/// (`"properties": {"x": "string"}`) is read as `{"type": "string"}`.
///
/// # Errors
/// [`ImportError::Definition`] when `schema` is neither an object nor a boolean, or when
/// subschemas nest more than [`MAX_SCHEMA_DEPTH`] deep (the pointer names the first one too
/// deep).
pub fn normalize_schema(
    schema: &Value,
    pointer: &str,
    options: NormalizeOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Value, ImportError> {
    match schema {
        Value::Object(_) | Value::Bool(_) => {}
        other => {
            return Err(ImportError::definition(
                pointer,
                format!("a schema must be a JSON object, found {}", kind(other)),
            ))
        }
    }
    let mut conjunct_defs = std::collections::HashSet::new();
    conjunct_refs(schema, false, &mut conjunct_defs, 0);
    Walker {
        options,
        warnings,
        conjunct_defs,
    }
    .schema(schema, pointer, 0, Place::Root)
}

/// Where a schema sits: the root, a property (whose `optional` and boolean `required` its
/// parent reads), a conjunct (a schema that holds together with others on the same value: an
/// `allOf` branch, a definition a `$ref` names beside other keywords; never closed alone, so
/// properties declared beside it are not refused by it), or elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    Property,
    Conjunct,
    Other,
}

/// Keywords beside a `$ref` that say nothing about the value's properties.
const ANNOTATIONS: [&str; 6] = [
    "$ref",
    "description",
    "title",
    "$comment",
    "default",
    "examples",
];

/// Collects the names of the definitions (`#/$defs/NAME`, `#/definitions/NAME`) that a
/// `$ref` names as a conjunct: beside keywords other than annotations, or as an `allOf`
/// branch. Such a definition is not closed on its own: the object it describes has the
/// properties declared beside the reference too.
fn conjunct_refs(
    schema: &Value,
    in_all_of: bool,
    out: &mut std::collections::HashSet<String>,
    depth: usize,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    match schema {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                let beside = map.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()));
                if in_all_of || beside {
                    if let Some(name) = target
                        .strip_prefix("#/$defs/")
                        .or_else(|| target.strip_prefix("#/definitions/"))
                    {
                        out.insert(name.replace("~1", "/").replace("~0", "~"));
                    }
                }
            }
            for (k, v) in map {
                conjunct_refs(v, k == "allOf", out, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                conjunct_refs(item, in_all_of, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The `type` keyword after mapping.
#[derive(Debug, Default)]
struct Types {
    /// The JSON Schema types; `None` is no constraint.
    names: Option<Vec<&'static str>>,
    /// A Python tuple (fixed length).
    tuple: bool,
    /// Items implied by the type name (`String[]`).
    items: Option<Value>,
}

impl Types {
    fn admits(&self, value: &Value) -> bool {
        match &self.names {
            None => true,
            Some(names) => names.iter().any(|t| types::fits_type(value, t)),
        }
    }

    fn includes(&self, ty: &str) -> bool {
        self.names.as_ref().is_none_or(|n| n.contains(&ty))
    }
}

struct Walker<'w> {
    options: NormalizeOptions,
    warnings: &'w mut Vec<Warning>,
    /// Definitions a `$ref` names as a conjunct ([`conjunct_refs`]).
    conjunct_defs: std::collections::HashSet<String>,
}

impl Walker<'_> {
    fn warn(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning::new(pointer, message));
    }

    fn schema(
        &mut self,
        schema: &Value,
        pointer: &str,
        depth: usize,
        place: Place,
    ) -> Result<Value, ImportError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(ImportError::definition(
                pointer,
                format!("schemas are nested more than {MAX_SCHEMA_DEPTH} deep"),
            ));
        }
        match schema {
            Value::Bool(b) => Ok(Value::Bool(*b)),
            Value::Object(map) => self.object(map, pointer, depth, place, false),
            Value::String(name) if !matches!(map_type_name(name), TypeName::Unknown) => {
                self.warn(
                    pointer,
                    format!("a type name where a schema belongs; read as {{\"type\": {name:?}}}"),
                );
                let mut map = Map::new();
                map.insert("type".into(), schema.clone());
                self.object(&map, pointer, depth, place, true)
            }
            other => {
                self.warn(
                    pointer,
                    format!("a schema must be an object or a boolean, found {}; replaced by {{}} (no constraint)", kind(other)),
                );
                Ok(Value::Object(Map::new()))
            }
        }
    }

    /// Normalises one schema object. `shorthand` is set for a type name written as a schema,
    /// whose `type` has no pointer of its own.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        depth: usize,
        place: Place,
        shorthand: bool,
    ) -> Result<Value, ImportError> {
        let type_pointer = if shorthand {
            pointer.to_string()
        } else {
            child(pointer, "type")
        };
        let types = self.types(map, &type_pointer, pointer);
        let mut out = Map::new();
        match types.names.as_deref() {
            Some([one]) => {
                out.insert("type".into(), Value::String((*one).into()));
            }
            Some(many) => {
                out.insert(
                    "type".into(),
                    many.iter().map(|t| Value::String((*t).into())).collect(),
                );
            }
            None => {}
        }
        for (key, value) in map {
            let at = child(pointer, key);
            self.keyword(key, value, &at, map, depth, place, &mut out)?;
        }
        self.arrays(map, pointer, depth, &types, &mut out)?;
        self.objects(map, pointer, place, &mut out);
        self.values(map, pointer, &types, &mut out);
        self.misplaced(map, pointer, &types);
        Ok(Value::Object(out))
    }

    /// Warns about array keywords on a schema that cannot be an array (BFCL puts `minItems`
    /// on the items); they are left in place and have no effect.
    fn misplaced(&mut self, map: &Map<String, Value>, pointer: &str, types: &Types) {
        if types.includes("array") {
            return;
        }
        for key in [
            "minItems",
            "maxItems",
            "uniqueItems",
            "prefixItems",
            "contains",
        ] {
            if map.contains_key(key) {
                self.warn(
                    child(pointer, key),
                    format!("{key} applies to arrays but this schema's type excludes arrays; it has no effect"),
                );
            }
        }
    }
}
