//! Gemini's `Schema` (the OpenAPI 3.0 subset of `FunctionDeclaration.parameters`, Gemini API
//! v1beta): a tool's input schema rewritten into what it can express, every change a
//! [`Warning`].
//!
//! Gemini's schema has `type` (one of `STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`,
//! `OBJECT`, `NULL`, upper case), `format`, `title`, `description`, `nullable`, `enum`
//! (strings), `properties`, `required`, `items`, `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `default` and
//! `anyOf`. Per schema object:
//!
//! 1. a `$ref` to `#/$defs/NAME` (or draft 7's `#/definitions/NAME`) is replaced by the
//!    definition (inlined up to [`MAX_INLINE`] references deep; deeper, the schema is left
//!    without a type), the keywords beside the `$ref` kept and the `properties` and
//!    `required` of both united;
//! 2. `oneOf` becomes `anyOf`; an `allOf` of one schema is merged (as a definition is), a
//!    longer one dropped;
//! 3. a type list `[T, "null"]` becomes `T` with `nullable: true`; more types become an
//!    `anyOf` of one branch per type;
//! 4. `const` becomes a one-value `enum` when it is a string; an `enum` (or `const`) with
//!    values other than strings is dropped and told in the description;
//! 5. `exclusiveMinimum`/`exclusiveMaximum` become `minimum`/`maximum` (told in the
//!    description); `prefixItems` becomes `items` with an `anyOf` of the position schemas;
//! 6. everything else Gemini's schema does not have (`additionalProperties`,
//!    `patternProperties`, `multipleOf`, `uniqueItems`, `not`, `if`, formats Gemini does not
//!    list, ...) is dropped; a dropped constraint is told in the description.
//!
//! Gemini cannot express "no unknown properties"; toolgate still refuses them when the call
//! comes back, as it enforces the tool's own schema whatever the model was shown.

use super::conjunct::{definition_name, merge, root_definitions, Definitions};
use crate::import::Warning;
use crate::schema::escape_pointer;
use serde_json::{json, Map, Value};

/// References inlined one inside another, at most.
pub const MAX_INLINE: usize = 8;

/// Formats Gemini lists, by type.
fn format_supported(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("STRING", "enum" | "date-time")
            | ("NUMBER", "float" | "double")
            | ("INTEGER", "int32" | "int64")
    )
}

/// Constraints dropped and told in the description.
const TOLD: [&str; 19] = [
    "multipleOf",
    "uniqueItems",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "additionalProperties",
];
/// Keywords Gemini keeps as they are.
const KEPT: [&str; 12] = [
    "title",
    "description",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
];
/// Keywords that constrain nothing, dropped without a warning.
const SILENT: [&str; 6] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "$anchor",
];

/// `schema` as Gemini's schema; warning pointers are into `schema`.
pub fn gemini_schema(schema: &Value, warnings: &mut Vec<Warning>) -> Value {
    let defs = root_definitions(schema).unwrap_or_else(|name| {
        warnings.push(Warning::new(
            "/definitions",
            format!("{name:?} is defined in both $defs and definitions; the $defs one is inlined"),
        ));
        // `$defs` first: its entry is the one kept
        let mut both = Definitions::new();
        for key in ["definitions", "$defs"] {
            for (n, d) in schema
                .get(key)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                both.insert(n.clone(), (d.clone(), String::new()));
            }
        }
        Some(both)
    });
    Walker { defs, warnings }.node(schema, "", 0)
}

struct Walker<'a> {
    defs: Option<Definitions>,
    warnings: &'a mut Vec<Warning>,
}

fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape_pointer(token))
}

fn upper(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "string" => "STRING",
        "number" => "NUMBER",
        "integer" => "INTEGER",
        "boolean" => "BOOLEAN",
        "array" => "ARRAY",
        "object" => "OBJECT",
        "null" => "NULL",
        _ => return None,
    })
}

impl Walker<'_> {
    fn warn(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning::new(pointer, message));
    }

    fn node(&mut self, schema: &Value, at: &str, inlined: usize) -> Value {
        let Some(source) = schema.as_object() else {
            if schema == &Value::Bool(false) {
                self.warn(at, "a schema that accepts nothing; Gemini cannot say so, sent without a type (toolgate still refuses any value)");
            }
            return json!({});
        };
        let mut map = source.clone();
        if let Some(target) = map.remove("$ref") {
            self.inline(&mut map, &target, at, inlined);
        }
        let inlined = if source.contains_key("$ref") {
            inlined + 1
        } else {
            inlined
        };
        self.composition(&mut map, at);
        let types: Vec<String> = match map.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let nullable = types.iter().any(|t| t == "null") && types.len() > 1;
        let non_null: Vec<&str> = types
            .iter()
            .map(String::as_str)
            .filter(|t| *t != "null" || types.len() == 1)
            .collect();
        if non_null.len() > 1 {
            return self.split_types(&map, &non_null, nullable, at, inlined);
        }
        let ty = non_null.first().and_then(|t| upper(t));
        let mut out = Map::new();
        if let Some(ty) = ty {
            out.insert("type".into(), ty.into());
        } else if !map.contains_key("anyOf")
            && !map.contains_key("enum")
            && !map.contains_key("const")
        {
            self.warn(
                at,
                "a value of any type; Gemini's schema has no such type, sent without one",
            );
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        let mut notes: Vec<String> = Vec::new();
        for (key, value) in &map {
            let kat = child(at, key);
            match key.as_str() {
                "type" => {}
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if SILENT.contains(&k) => {}
                "format" => match (ty, value.as_str()) {
                    (Some(t), Some(f)) if format_supported(t, f) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => {
                        self.warn(&kat, format!("format {value} is not one Gemini lists for this type; dropped and told in the description"));
                        notes.push(format!("format: {value}"));
                    }
                },
                "enum" | "const" => {
                    let values: Vec<Value> = match value {
                        Value::Array(vs) if key == "enum" => vs.clone(),
                        other => vec![other.clone()],
                    };
                    if values.iter().all(Value::is_string) {
                        if key == "const" {
                            self.warn(
                                &kat,
                                "const is not in Gemini's schema; sent as an enum of one value",
                            );
                        }
                        out.insert("enum".into(), Value::Array(values));
                        out.entry("type").or_insert_with(|| "STRING".into());
                    } else {
                        self.warn(&kat, format!("{key} with values other than strings; Gemini's enum holds strings, dropped and told in the description"));
                        notes.push(format!("{key}: {}", short(value)));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    self.warn(&kat, format!("{key} is not in Gemini's schema; sent as {bound} (toolgate still refuses the bound itself) and told in the description"));
                    out.entry(bound).or_insert_with(|| value.clone());
                    notes.push(format!("{key}: {value}"));
                }
                "anyOf" => {
                    let branches: Vec<Value> = value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(i, b)| self.node(b, &child(&kat, &i.to_string()), inlined))
                        .collect();
                    out.insert("anyOf".into(), Value::Array(branches));
                }
                "properties" => {
                    let mut props = Map::new();
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        props.insert(name.clone(), self.node(sub, &child(&kat, name), inlined));
                    }
                    out.insert("properties".into(), Value::Object(props));
                }
                "required" => {
                    out.insert(key.clone(), value.clone());
                }
                // `items: false` closes a tuple; maxItems says it below
                "items" => {
                    if value.is_object() {
                        let items = self.node(value, &kat, inlined);
                        out.insert("items".into(), items);
                    }
                }
                "prefixItems" => {
                    let mut branches: Vec<Value> = Vec::new();
                    let all = value.as_array().map(Vec::as_slice).unwrap_or_default();
                    for (i, p) in all.iter().enumerate() {
                        let v = self.node(p, &child(&kat, &i.to_string()), inlined);
                        if !branches.contains(&v) {
                            branches.push(v);
                        }
                    }
                    self.warn(&kat, "prefixItems (a tuple) is not in Gemini's schema; sent as items of any of its position types (toolgate still checks each position)");
                    let items = match branches.len() {
                        1 => branches.pop().expect("one branch"),
                        _ => json!({"anyOf": branches}),
                    };
                    out.insert("items".into(), items);
                    out.entry("minItems").or_insert_with(|| all.len().into());
                    if map.get("items") == Some(&Value::Bool(false)) {
                        out.entry("maxItems").or_insert_with(|| all.len().into());
                    }
                }
                "additionalProperties" if value == &Value::Bool(false) => {
                    self.warn(&kat, "additionalProperties is not in Gemini's schema; dropped (toolgate still refuses unknown arguments)");
                }
                k if TOLD.contains(&k) => {
                    self.warn(
                        &kat,
                        format!(
                            "{k} is not in Gemini's schema; dropped and told in the description"
                        ),
                    );
                    notes.push(format!("{k}: {}", short(value)));
                }
                k => self.warn(&kat, format!("{k} is not in Gemini's schema; dropped")),
            }
        }
        // min/max counts in Gemini's schema are int64 strings or numbers; numbers are sent
        if !notes.is_empty() {
            // by keyword, whatever the map's order
            notes.sort();
            let note = format!("({})", notes.join(", "));
            let description = match out.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} {note}"),
                _ => note,
            };
            out.insert("description".into(), Value::String(description));
        }
        Value::Object(out)
    }

    /// Replaces `map` by the definition `target` names, the keywords beside the `$ref` kept.
    fn inline(&mut self, map: &mut Map<String, Value>, target: &Value, at: &str, inlined: usize) {
        let at = child(at, "$ref");
        let def = target
            .as_str()
            .and_then(definition_name)
            .and_then(|name| self.defs.as_ref()?.get(&name))
            .and_then(|(def, _)| def.as_object())
            .cloned();
        match def {
            Some(def) if inlined < MAX_INLINE => {
                self.warn(at, format!("$ref {target} is not in Gemini's schema; the definition is inlined"));
                merge(map, &def);
            }
            Some(_) => self.warn(at, format!("$ref {target} nests more than {MAX_INLINE} deep (a recursive definition); sent without a type")),
            None => self.warn(at, format!("$ref {target} names no definition of this schema; dropped")),
        }
    }

    fn composition(&mut self, map: &mut Map<String, Value>, at: &str) {
        if let Some(one_of) = map.remove("oneOf") {
            if map.contains_key("anyOf") {
                self.warn(child(at, "oneOf"), "oneOf is not in Gemini's schema; dropped beside the anyOf (toolgate still checks it)");
            } else {
                self.warn(child(at, "oneOf"), "oneOf is not in Gemini's schema; sent as anyOf (toolgate still checks that exactly one branch holds)");
                map.insert("anyOf".into(), one_of);
            }
        }
        if let Some(all_of) = map.remove("allOf") {
            let at = child(at, "allOf");
            match all_of.as_array().map(Vec::as_slice) {
                Some([Value::Object(only)]) => {
                    self.warn(
                        at,
                        "allOf is not in Gemini's schema; its one schema merged into this one",
                    );
                    merge(map, only);
                }
                _ => self.warn(
                    at,
                    "allOf is not in Gemini's schema; dropped (toolgate still checks it)",
                ),
            }
        }
    }

    fn split_types(
        &mut self,
        map: &Map<String, Value>,
        types: &[&str],
        nullable: bool,
        at: &str,
        inlined: usize,
    ) -> Value {
        self.warn(
            child(at, "type"),
            format!("a list of types {types:?}; Gemini takes one type, sent as anyOf with one branch per type"),
        );
        let branches: Vec<Value> = types
            .iter()
            .map(|ty| {
                let mut sub = map.clone();
                sub.remove("description");
                sub.remove("title");
                sub.insert("type".into(), Value::String((*ty).to_string()));
                self.node(&Value::Object(sub), at, inlined)
            })
            .collect();
        let mut out = Map::new();
        for k in ["description", "title"] {
            if let Some(v) = map.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        out.insert("anyOf".into(), Value::Array(branches));
        Value::Object(out)
    }
}

/// A value for a description note, cut at 60 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn gemini(schema: Value) -> Value {
        gemini_schema(&schema, &mut Vec::new())
    }

    #[test]
    fn an_object_extended_beside_its_ref_keeps_the_properties_of_both() {
        for defs in ["$defs", "definitions"] {
            let out = gemini(json!({"type": "object", "$ref": format!("#/{defs}/Base"),
                "properties": {"extra": {"type": "string"}},
                defs: {"Base": {"type": "object", "properties": {"id": {"type": "integer"}},
                                "required": ["id"]}}}));
            assert_eq!(
                out,
                json!({"type": "OBJECT", "required": ["id"], "properties": {
                    "extra": {"type": "STRING"}, "id": {"type": "INTEGER"}}}),
                "{defs}"
            );
        }
        // the same through a one-schema allOf: every required name is a property
        let out = gemini(json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "string"}},
            "allOf": [{"properties": {"b": {"type": "boolean"}}, "required": ["b"]}]}));
        assert_eq!(out["required"], json!(["a", "b"]));
        assert_eq!(out["properties"]["b"], json!({"type": "BOOLEAN"}));
    }
}
