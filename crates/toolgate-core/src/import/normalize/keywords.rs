//! Every keyword but `type` and those the later steps read (`items`, `additionalItems`,
//! `required`, `optional`, `enum`, `default`): subschemas normalised, values of the wrong JSON
//! type dropped (numeric strings read as numbers), draft 4-7 forms rewritten as 2020-12
//! (`$schema`, boolean `exclusiveMinimum`/`exclusiveMaximum`, `dependencies`), and unknown
//! keywords kept as they are (2020-12 ignores them).

use super::{Place, Walker, DRAFT_2020_12};
use crate::import::error::{kind, ImportError};
use crate::import::warning::child;
use serde_json::{Map, Number, Value};

impl Walker<'_> {
    /// Normalises one keyword into `out`, except those the later steps handle.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn keyword(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        map: &Map<String, Value>,
        depth: usize,
        place: Place,
        out: &mut Map<String, Value>,
    ) -> Result<(), ImportError> {
        match key {
            // Done by `types`, `arrays`, `objects` and `values`.
            "type" | "nullable" | "items" | "additionalItems" | "required" | "optional"
            | "enum" | "default" => {}
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                let child_place = if key == "properties" {
                    Place::Property
                } else {
                    Place::Other
                };
                let definitions = matches!(key, "$defs" | "definitions");
                if let Some(v) = self.schema_map(value, at, depth, child_place, definitions)? {
                    out.insert(key.into(), v);
                }
            }
            "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else"
            | "propertyNames"
            | "contentSchema" => {
                out.insert(key.into(), self.schema(value, at, depth + 1, Place::Other)?);
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Some(v) = self.schema_list(key, value, at, depth)? {
                    out.insert(key.into(), v);
                }
            }
            "description" | "title" | "$comment" | "format" | "pattern" | "$ref" | "$id"
            | "$anchor" | "$dynamicRef" | "$dynamicAnchor" | "contentEncoding"
            | "contentMediaType" => {
                if value.is_string() {
                    out.insert(key.into(), value.clone());
                } else {
                    self.warn(
                        at,
                        format!("{key} must be a string, found {}; dropped", kind(value)),
                    );
                }
            }
            "$schema" => self.dollar_schema(value, at, place, out),
            "minimum" | "maximum" if draft4_exclusive(map, key) => {}
            "minimum" | "maximum" | "multipleOf" => {
                if let Some(n) = self.number(key, value, at) {
                    if key == "multipleOf" && n.as_f64().is_none_or(|f| f <= 0.0) {
                        self.warn(at, "multipleOf must be greater than 0; dropped");
                    } else {
                        out.insert(key.into(), Value::Number(n));
                    }
                }
            }
            "exclusiveMinimum" | "exclusiveMaximum" => self.exclusive(key, value, at, map, out),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" | "minContains" | "maxContains" => {
                match self.number(key, value, at) {
                    Some(n)
                        if n.as_u64().is_some()
                            || n.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0) =>
                    {
                        out.insert(key.into(), Value::Number(n));
                    }
                    Some(_) => {
                        self.warn(at, format!("{key} must be a non-negative integer; dropped"))
                    }
                    None => {}
                }
            }
            "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => {
                if value.is_boolean() {
                    out.insert(key.into(), value.clone());
                } else {
                    self.warn(
                        at,
                        format!("{key} must be a boolean, found {}; dropped", kind(value)),
                    );
                }
            }
            "dependencies" => self.dependencies(value, at, depth, out)?,
            "dependentRequired" => {
                let ok = value.as_object().is_some_and(|m| {
                    m.values()
                        .all(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
                });
                if ok {
                    out.insert(key.into(), value.clone());
                } else {
                    self.warn(
                        at,
                        "dependentRequired must map names to arrays of names; dropped",
                    );
                }
            }
            _ => {
                out.insert(key.into(), value.clone());
            }
        }
        Ok(())
    }

    /// A map of name to subschema (`properties`, `$defs`, ...); `None` when it is not a map.
    /// With `definitions` (`$defs`, `definitions`), an entry a `$ref` names as a conjunct is
    /// walked as [`Place::Conjunct`].
    fn schema_map(
        &mut self,
        value: &Value,
        at: &str,
        depth: usize,
        place: Place,
        definitions: bool,
    ) -> Result<Option<Value>, ImportError> {
        let Some(entries) = value.as_object() else {
            self.warn(
                at,
                format!(
                    "must be an object of schemas, found {}; dropped",
                    kind(value)
                ),
            );
            return Ok(None);
        };
        let mut out = Map::new();
        for (name, sub) in entries {
            let place = if definitions && self.conjunct_defs.contains(name) {
                Place::Conjunct
            } else {
                place
            };
            out.insert(
                name.clone(),
                self.schema(sub, &child(at, name), depth + 1, place)?,
            );
        }
        Ok(Some(Value::Object(out)))
    }

    /// An array of subschemas (`allOf`, `prefixItems`, ...); `None` when it is not an array,
    /// or is an empty composition (which JSON Schema forbids).
    fn schema_list(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        depth: usize,
    ) -> Result<Option<Value>, ImportError> {
        let Some(items) = value.as_array() else {
            self.warn(
                at,
                format!(
                    "{key} must be an array of schemas, found {}; dropped",
                    kind(value)
                ),
            );
            return Ok(None);
        };
        if items.is_empty() && key != "prefixItems" {
            self.warn(at, format!("{key} must not be empty; dropped"));
            return Ok(None);
        }
        // an allOf branch holds together with its siblings and its parent on one value
        let place = if key == "allOf" {
            Place::Conjunct
        } else {
            Place::Other
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, sub) in items.iter().enumerate() {
            out.push(self.schema(sub, &child(at, &i.to_string()), depth + 1, place)?);
        }
        Ok(Some(Value::Array(out)))
    }

    fn dollar_schema(
        &mut self,
        value: &Value,
        at: &str,
        place: Place,
        out: &mut Map<String, Value>,
    ) {
        if place != Place::Root {
            self.warn(at, "$schema belongs at the root only; dropped");
            return;
        }
        let current = value
            .as_str()
            .is_some_and(|s| s.trim_end_matches('#') == DRAFT_2020_12);
        if !current {
            self.warn(at, format!("$schema {value} replaced by {DRAFT_2020_12:?}: the schema was rewritten as 2020-12"));
        }
        out.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    }

    /// A number, or a string holding one (with a warning); `None` (with a warning) otherwise.
    fn number(&mut self, key: &str, value: &Value, at: &str) -> Option<Number> {
        match value {
            Value::Number(n) => Some(n.clone()),
            Value::String(s) => match serde_json::from_str::<Number>(s.trim()) {
                Ok(n) => {
                    self.warn(
                        at,
                        format!("{key} is the string {s:?}; read as the number {n}"),
                    );
                    Some(n)
                }
                Err(_) => {
                    self.warn(
                        at,
                        format!("{key} must be a number, found the string {s:?}; dropped"),
                    );
                    None
                }
            },
            other => {
                self.warn(
                    at,
                    format!("{key} must be a number, found {}; dropped", kind(other)),
                );
                None
            }
        }
    }

    /// `exclusiveMinimum` / `exclusiveMaximum`: a number, or draft 4's boolean modifier of
    /// `minimum` / `maximum`.
    fn exclusive(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
    ) {
        let bound = if key == "exclusiveMinimum" {
            "minimum"
        } else {
            "maximum"
        };
        match value {
            Value::Bool(true) => match map.get(bound).filter(|b| b.is_number()) {
                Some(limit) => {
                    self.warn(at, format!("draft 4 boolean {key}; rewritten as {key}: {limit} in place of {bound}"));
                    out.insert(key.into(), limit.clone());
                }
                None => self.warn(
                    at,
                    format!("{key}: true without a numeric {bound}; dropped"),
                ),
            },
            Value::Bool(false) => self.warn(
                at,
                format!("draft 4 boolean {key}: false is the default; dropped"),
            ),
            _ => {
                if let Some(n) = self.number(key, value, at) {
                    out.insert(key.into(), Value::Number(n));
                }
            }
        }
    }

    /// Draft 7's `dependencies`: arrays become `dependentRequired`, schemas `dependentSchemas`.
    fn dependencies(
        &mut self,
        value: &Value,
        at: &str,
        depth: usize,
        out: &mut Map<String, Value>,
    ) -> Result<(), ImportError> {
        let Some(entries) = value.as_object() else {
            self.warn(
                at,
                format!(
                    "dependencies must be an object, found {}; dropped",
                    kind(value)
                ),
            );
            return Ok(());
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dep) in entries {
            let dep_at = child(at, name);
            match dep {
                Value::Array(names) if names.iter().all(Value::is_string) => {
                    required.insert(name.clone(), dep.clone());
                }
                Value::Object(_) | Value::Bool(_) => {
                    schemas.insert(
                        name.clone(),
                        self.schema(dep, &dep_at, depth + 1, Place::Other)?,
                    );
                }
                other => self.warn(
                    dep_at,
                    format!(
                        "a dependency must be an array of names or a schema, found {}; dropped",
                        kind(other)
                    ),
                ),
            }
        }
        self.warn(
            at,
            "dependencies (draft 7) rewritten as dependentRequired and dependentSchemas",
        );
        for (key, entries) in [
            ("dependentRequired", required),
            ("dependentSchemas", schemas),
        ] {
            if entries.is_empty() {
                continue;
            }
            match out.get_mut(key).and_then(Value::as_object_mut) {
                Some(existing) => {
                    for (k, v) in entries {
                        existing.entry(k).or_insert(v);
                    }
                }
                None => {
                    out.insert(key.into(), Value::Object(entries));
                }
            }
        }
        Ok(())
    }
}

/// Whether `bound` (`minimum` or `maximum`) is modified by draft 4's `exclusive...: true`,
/// which then takes its value.
fn draft4_exclusive(map: &Map<String, Value>, bound: &str) -> bool {
    let key = if bound == "minimum" {
        "exclusiveMinimum"
    } else {
        "exclusiveMaximum"
    };
    map.get(key) == Some(&Value::Bool(true)) && map.get(bound).is_some_and(Value::is_number)
}
