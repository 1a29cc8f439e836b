//! Objects: `required` assembled from every dialect's way of saying it, and closing.
//!
//! A property is required when the object's `required` lists it, or the property says
//! `optional: false` (BFCL) or `required: true` (draft 3). It is not required when the
//! property says `optional: true` (BFCL; it wins over `required`, so a contradictory
//! definition accepts calls that leave the property out) or `required: false`, or the object
//! lists it in `optional: [...]`.
//!
//! An object that declares `properties` is closed with `additionalProperties: false` (when
//! the options ask for it) unless it is a nested BFCL `dict` that requires none of the
//! properties it lists, or it says something about other properties itself:
//! `additionalProperties`, `unevaluatedProperties`, or a keyword that can declare properties
//! elsewhere (`allOf`, `anyOf`, `oneOf`, `$ref`, `$dynamicRef`, `if`, `dependentSchemas`,
//! `dependencies`), or it is a conjunct: an `allOf` branch, or a definition a `$ref` names
//! beside other keywords or in an `allOf` (closed alone, it would refuse the properties
//! declared beside it, and no call could be valid). A closed object that requires a name it does not declare could never be
//! satisfied; the name is added as a property with no constraint.
//!
//! **BFCL's nested dictionaries.** The root of a definition is always closed: a model must
//! not invent arguments. Below it, a BFCL `"type": "dict"` that lists properties but requires
//! none of them is read as a dictionary whose listed keys are examples (`updates` with
//! `title`, `status`, ...; `conditions` with `department`, `school`): it is left open, so a
//! key it does not list is accepted, and a listed key must still fit its schema. A nested
//! `dict` that requires some of its properties is a record, and is closed like any object.
//! JSON Schema's own `"type": "object"` is closed whatever it requires.

use super::{Place, Walker};
use crate::import::error::kind;
use crate::import::warning::child;
use serde_json::{Map, Value};

/// Keywords that let an object accept properties its own `properties` do not declare.
const OPENING: [&str; 9] = [
    "additionalProperties",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependentSchemas",
];

impl Walker<'_> {
    pub(super) fn objects(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        place: Place,
        out: &mut Map<String, Value>,
    ) {
        let mut required = self.required_list(map, pointer, place);
        self.property_flags(map, pointer, &mut required);
        self.optional_list(map, pointer, place, &mut required);

        let closable = place != Place::Conjunct
            && !OPENING.iter().any(|k| map.contains_key(*k))
            && !map.get("dependencies").is_some_and(|d| {
                d.as_object()
                    .is_some_and(|m| m.values().any(|v| !v.is_array()))
            });
        let example_keys = place != Place::Root
            && required.as_ref().is_none_or(Vec::is_empty)
            && map
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.eq_ignore_ascii_case("dict"));
        if self.options.close_objects && out.contains_key("properties") && closable && example_keys
        {
            self.warn(
                pointer,
                "a nested dict that requires none of its listed properties is left open: they read as examples, so other keys are accepted (each listed one must fit its schema)",
            );
        } else if self.options.close_objects && out.contains_key("properties") && closable {
            out.insert("additionalProperties".into(), Value::Bool(false));
            self.warn(
                pointer,
                "object closed with additionalProperties: false (it declares properties and does not allow others)",
            );
        }
        if let Some(names) = &required {
            self.require_declared(names, pointer, out);
            out.insert(
                "required".into(),
                names.iter().cloned().map(Value::String).collect(),
            );
        }
    }

    /// The object's own `required` list; `None` when it has none.
    fn required_list(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        place: Place,
    ) -> Option<Vec<String>> {
        let at = child(pointer, "required");
        match map.get("required")? {
            Value::Array(entries) => {
                let mut names: Vec<String> = Vec::with_capacity(entries.len());
                for (i, entry) in entries.iter().enumerate() {
                    match entry {
                        Value::String(name) if names.contains(name) => {
                            self.warn(
                                child(&at, &i.to_string()),
                                format!("{name:?} listed twice; the repeat dropped"),
                            );
                        }
                        Value::String(name) => names.push(name.clone()),
                        other => self.warn(
                            child(&at, &i.to_string()),
                            format!("required lists names, found {}; dropped", kind(other)),
                        ),
                    }
                }
                Some(names)
            }
            Value::String(name) => {
                self.warn(
                    at,
                    format!("required must be an array of names; read as [{name:?}]"),
                );
                Some(vec![name.clone()])
            }
            // Draft 3's per-property flag, read by the parent.
            Value::Bool(_) if place == Place::Property => None,
            other => {
                self.warn(
                    at,
                    format!(
                        "required must be an array of names, found {}; dropped",
                        kind(other)
                    ),
                );
                None
            }
        }
    }

    /// Per-property `optional` (BFCL) and boolean `required` (draft 3).
    fn property_flags(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        required: &mut Option<Vec<String>>,
    ) {
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            return;
        };
        let properties_at = child(pointer, "properties");
        for (name, property) in properties {
            let Some(property) = property.as_object() else {
                continue;
            };
            let at = child(&properties_at, name);
            if let Some(flag) = property.get("optional") {
                let flag_at = child(&at, "optional");
                match truthiness(flag) {
                    Some(optional) => self.set_required(
                        required,
                        name,
                        !optional,
                        flag_at,
                        &format!("optional: {flag}"),
                    ),
                    None => self.warn(
                        flag_at,
                        format!(
                            "optional {flag} is not understood (expected true or false); dropped"
                        ),
                    ),
                }
            }
            if let Some(Value::Bool(flag)) = property.get("required") {
                self.set_required(
                    required,
                    name,
                    *flag,
                    child(&at, "required"),
                    &format!("draft 3 required: {flag}"),
                );
            }
        }
    }

    /// Makes `name` required or not, warning at `at` about the flag `what`.
    fn set_required(
        &mut self,
        required: &mut Option<Vec<String>>,
        name: &str,
        want: bool,
        at: String,
        what: &str,
    ) {
        let listed = required
            .as_ref()
            .is_some_and(|names| names.iter().any(|n| n == name));
        let effect = match (want, listed) {
            (true, true) => "already required",
            (true, false) => {
                required.get_or_insert_with(Vec::new).push(name.to_string());
                "added to required"
            }
            (false, true) => {
                if let Some(names) = required.as_mut() {
                    names.retain(|n| n != name);
                }
                "removed from required, which listed it too"
            }
            (false, false) => "not required",
        };
        self.warn(
            at,
            format!("{what} is not JSON Schema; folded into required: {name:?} {effect}"),
        );
    }

    /// An object-level `optional: [names]` (BFCL).
    fn optional_list(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        place: Place,
        required: &mut Option<Vec<String>>,
    ) {
        let at = child(pointer, "optional");
        match map.get("optional") {
            None => {}
            Some(Value::Array(names)) => {
                for (i, entry) in names.iter().enumerate() {
                    let entry_at = child(&at, &i.to_string());
                    match entry.as_str() {
                        Some(name) => {
                            self.set_required(required, name, false, entry_at, "an optional list")
                        }
                        None => self.warn(
                            entry_at,
                            format!("optional lists names, found {}; dropped", kind(entry)),
                        ),
                    }
                }
            }
            // A per-property flag, read by the parent.
            Some(_) if place == Place::Property => {}
            Some(other) => self.warn(
                at,
                format!("optional {other} has no meaning outside properties; dropped"),
            ),
        }
    }

    /// Adds an unconstrained property for every required name a closed object lacks.
    fn require_declared(&mut self, names: &[String], pointer: &str, out: &mut Map<String, Value>) {
        if out.get("additionalProperties") != Some(&Value::Bool(false))
            || out.contains_key("patternProperties")
        {
            return;
        }
        let Some(Value::Object(properties)) = out.get_mut("properties") else {
            return;
        };
        let mut added = Vec::new();
        for name in names {
            if !properties.contains_key(name) {
                properties.insert(name.clone(), Value::Object(Map::new()));
                added.push(name);
            }
        }
        for name in added {
            self.warn(
                child(pointer, "required"),
                format!("{name:?} is required but not declared in a closed object; added as a property with no constraint"),
            );
        }
    }
}

/// `true`, `"true"`, `"yes"`, `1` and the like; `None` when not a truth value.
fn truthiness(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_u64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" => Some(true),
            "false" | "no" | "n" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}
