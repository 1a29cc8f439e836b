//! The shape of a truncated structured result, declared in every output schema.
//!
//! At registration the registry widens each tool's `outputSchema` with an optional root
//! property [`TRUNCATION_PROPERTY`] holding a [`Truncation`] record, so a client that checks
//! structured content against the schema (every official MCP SDK does) accepts a result that
//! was shortened to the byte limit. Arrays that lose items and strings that lose their middle
//! still have their declared types, so nothing else needs widening. A schema that already
//! declares the property (a typed tool whose output carries an `Option<Truncation>` named
//! `truncation`) is left as it is.

use crate::result::Truncation;
use serde_json::Value;

/// The root property of structured content that holds the truncation record.
pub const TRUNCATION_PROPERTY: &str = "truncation";

/// The schema of the [`TRUNCATION_PROPERTY`] member: a [`Truncation`] record, described for
/// the model.
pub fn truncation_schema() -> Value {
    // made once: every output schema gets a copy at registration
    static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(make_truncation_schema);
    SCHEMA.clone()
}

fn make_truncation_schema() -> Value {
    let mut schema = crate::typed::schema_for::<Truncation>();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.insert(
            "description".into(),
            Value::String(
                "Present only when this result was cut to the tool's byte limit: `omitted` \
                 names each array, string or object that was shortened (by JSON pointer) and \
                 the byte offset in the full result where what it leaves out begins; \
                 read_result with `handle` and that offset reads on (the full result is the \
                 JSON text of this value before it was cut)."
                    .into(),
            ),
        );
    }
    schema
}

/// Adds the optional [`TRUNCATION_PROPERTY`] to the root of an output schema (JSON Schema
/// 2020-12, root `"type": "object"`). Returns whether the schema now declares it; `false`
/// when the root is not an object schema or declares the property itself (then it is left
/// unchanged).
pub fn widen_output_schema(schema: &mut Value) -> bool {
    let Some(root) = schema.as_object_mut() else {
        return false;
    };
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(properties) = properties.as_object_mut() else {
        return false;
    };
    if properties.contains_key(TRUNCATION_PROPERTY) {
        return false;
    }
    properties.insert(TRUNCATION_PROPERTY.into(), truncation_schema());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::CompiledSchema;
    use serde_json::json;

    #[test]
    fn a_closed_schema_admits_the_record_and_nothing_else() {
        let mut schema = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
            "required": ["items"],
            "additionalProperties": false
        });
        assert!(widen_output_schema(&mut schema));
        let s = CompiledSchema::compile("t", "outputSchema", &schema).unwrap();
        let record = json!({"original_bytes": 10, "shown_bytes": 5, "handle": "res_1",
            "omitted": [{"pointer": "/items", "unit": "items", "shown": 1, "total": 9,
                         "offset": 12}], "message": "cut"});
        assert!(s.is_valid(&json!({"items": [1], "truncation": record})));
        assert!(s.is_valid(&json!({"items": [1, 2]})));
        assert!(!s.is_valid(&json!({"items": [1], "truncation": {"handle": 1}})));
        assert!(!s.is_valid(&json!({"items": [1], "other": 1})));
        assert!(schema.to_string().find("uint").is_none(), "{schema}");
    }

    #[test]
    fn a_declared_property_is_left_alone() {
        let mut schema =
            json!({"type": "object", "properties": {"truncation": {"type": "string"}}});
        let before = schema.clone();
        assert!(!widen_output_schema(&mut schema));
        assert_eq!(schema, before);
        let mut open = json!({"type": "object"});
        assert!(widen_output_schema(&mut open));
        assert!(open["properties"]["truncation"].is_object());
    }
}
