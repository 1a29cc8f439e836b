//! What the provider schemas share when they take apart what a provider cannot express: the
//! root's definitions (`$defs` and draft 7's `definitions`), the name a `$ref` gives one, and
//! merging a schema that holds together with another on one value (a one-schema `allOf`, an
//! inlined definition) into it.

use crate::schema::escape_pointer;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Definitions by name: each schema and its pointer in the tool's input schema.
pub(crate) type Definitions = BTreeMap<String, (Value, String)>;

/// The root's definitions by name, each with its pointer: `$defs` and draft 7's
/// `definitions` (pydantic 1 writes these). `Err` names a definition both define.
pub(crate) fn root_definitions(schema: &Value) -> Result<Option<Definitions>, String> {
    let mut out: Option<Definitions> = None;
    for key in ["$defs", "definitions"] {
        let defs = schema.get(key).and_then(Value::as_object);
        for (name, def) in defs.into_iter().flatten() {
            let at = format!("/{key}/{}", escape_pointer(name));
            let all = out.get_or_insert_with(Definitions::new);
            if all.insert(name.clone(), (def.clone(), at)).is_some() {
                return Err(name.clone());
            }
        }
    }
    Ok(out)
}

/// The name of the root definition `reference` names (`#/$defs/NAME` or
/// `#/definitions/NAME`, `~1` and `~0` unescaped, RFC 6901 §4), or `None` for any other
/// reference.
pub(crate) fn definition_name(reference: &str) -> Option<String> {
    let name = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))?;
    (!name.contains('/')).then(|| name.replace("~1", "/").replace("~0", "~"))
}

/// Merges `part`, a schema that must hold on the same value as `map`, into `map`: `map`'s
/// keywords win, except that `properties` are united (a name in both keeps `map`'s schema)
/// and `required` lists joined, so an object extended beside a `$ref` or in an `allOf` keeps
/// the properties and the required names of both.
pub(crate) fn merge(map: &mut Map<String, Value>, part: &Map<String, Value>) {
    for (k, v) in part {
        match (k.as_str(), map.get_mut(k), v) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name.clone()).or_insert_with(|| schema.clone());
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(name) {
                        mine.push(name.clone());
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, _) => {
                map.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merging_keeps_both_objects_properties_and_required_names() {
        let Value::Object(mut map) = json!({"type": "object", "description": "mine",
            "properties": {"extra": {"type": "string"}, "id": {"type": "string"}},
            "required": ["extra"]})
        else {
            unreachable!()
        };
        let Value::Object(part) = json!({"type": "object", "description": "theirs",
            "properties": {"id": {"type": "integer"}, "n": {"type": "number"}},
            "required": ["id", "extra"], "minProperties": 1})
        else {
            unreachable!()
        };
        merge(&mut map, &part);
        assert_eq!(
            Value::Object(map),
            json!({"type": "object", "description": "mine", "minProperties": 1,
                "properties": {"extra": {"type": "string"}, "id": {"type": "string"},
                               "n": {"type": "number"}},
                "required": ["extra", "id"]})
        );
        assert_eq!(definition_name("#/$defs/a~1b"), Some("a/b".into()));
        assert_eq!(definition_name("#/definitions/S"), Some("S".into()));
        assert_eq!(definition_name("#/$defs/a/properties/b"), None);
        assert_eq!(definition_name("#foo"), None);
    }
}
