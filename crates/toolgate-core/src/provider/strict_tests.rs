use super::*;
use pretty_assertions::assert_eq;

fn strict(schema: Value) -> (Value, Vec<Warning>, NullPaths) {
    let mut warnings = Vec::new();
    let s = strict_schema(&schema, &mut warnings).unwrap();
    (s.schema, warnings, s.nulls)
}

#[test]
fn optional_properties_become_required_and_nullable() {
    let (schema, warnings, nulls) = strict(json!({
        "type": "object", "additionalProperties": false, "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "minimum": 1},
            "c": {"type": "string", "enum": ["x", "y"]},
            "d": {"type": "object", "properties": {"e": {"type": "boolean"}}},
        }
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object", "additionalProperties": false, "required": ["a", "b", "c", "d"],
            "properties": {
                "a": {"type": "string"},
                "b": {"type": ["integer", "null"], "minimum": 1},
                "c": {"type": ["string", "null"], "enum": ["x", "y", null]},
                "d": {"type": ["object", "null"], "additionalProperties": false, "required": ["e"],
                      "properties": {"e": {"type": ["boolean", "null"]}}},
            }
        })
    );
    let pointers: Vec<&str> = warnings.iter().map(|w| w.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/properties/b",
            "/properties/c",
            "/properties/d",
            "/properties/d/properties/e",
            "/properties/d"
        ]
    );
    let mut args = json!({"a": "x", "b": null, "c": null, "d": {"e": null}});
    nulls.strip(&mut args);
    assert_eq!(args, json!({"a": "x", "d": {}}));
}

#[test]
fn unsupported_keywords_are_removed_and_told() {
    let (schema, warnings, _) = strict(json!({
        "type": "object", "additionalProperties": false, "required": ["s", "t"],
        "properties": {
            "s": {"type": "string", "minLength": 2, "maxLength": 8, "format": "uri", "default": "ab"},
            "t": {"prefixItems": [{"type": "number"}, {"type": "number"}], "items": false, "type": "array"},
            "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        }
    }));
    assert_eq!(
        schema["properties"]["s"],
        json!({"type": "string",
        "description": "(default: \"ab\", format: \"uri\", maxLength: 8, minLength: 2)"})
    );
    assert_eq!(
        schema["properties"]["t"],
        json!({"type": "array", "items": {"type": "number"},
        "minItems": 2, "maxItems": 2})
    );
    assert_eq!(
        schema["properties"]["u"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
    assert!(warnings.iter().any(|w| w.pointer == "/properties/u/oneOf"));
    assert!(warnings
        .iter()
        .any(|w| w.pointer == "/properties/t/prefixItems"));
}

#[test]
fn what_strict_mode_cannot_say_is_refused_with_its_pointer() {
    for (schema, pointer) in [
        (
            json!({"type": "object", "properties": {"x": {}}}),
            "/properties/x",
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
            "/properties/m",
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            "/properties/m",
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
            "/properties/l",
        ),
    ] {
        let err = strict_schema(&schema, &mut Vec::new()).unwrap_err();
        assert_eq!(err.pointer, pointer, "{schema}");
    }
}

#[test]
fn definitions_are_made_strict_and_their_nulls_stripped_through_refs() {
    let (schema, _, nulls) = strict(json!({
        "type": "object", "additionalProperties": false, "required": ["p"],
        "properties": {"p": {"$ref": "#/$defs/Point"}, "q": {"$ref": "#/$defs/Point"}},
        "$defs": {"Point": {"type": "object", "additionalProperties": false, "required": ["x"],
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}}
    }));
    assert_eq!(
        schema["properties"]["q"],
        json!({"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]})
    );
    assert_eq!(schema["$defs"]["Point"]["required"], json!(["x", "y"]));
    let mut args = json!({"p": {"x": 1, "y": null}, "q": null});
    nulls.strip(&mut args);
    assert_eq!(args, json!({"p": {"x": 1}}));
}

#[test]
fn a_null_the_tool_accepts_is_kept() {
    let (_, _, nulls) =
        strict(json!({"type": "object", "properties": {"n": {"type": ["string", "null"]}}}));
    let mut args = json!({"n": null});
    nulls.strip(&mut args);
    assert_eq!(args, json!({"n": null}));
}

#[test]
fn a_ref_beside_other_keywords_is_inlined() {
    let (schema, _, _) = strict(json!({
        "type": "object", "additionalProperties": false, "required": ["p"],
        "properties": {"p": {"$ref": "#/$defs/P", "description": "the point"}},
        "$defs": {"P": {"type": "object", "additionalProperties": false, "required": ["x"],
            "properties": {"x": {"type": "number"}}}}
    }));
    assert_eq!(
        schema["properties"]["p"],
        json!({"type": "object", "description": "the point",
        "additionalProperties": false, "required": ["x"], "properties": {"x": {"type": "number"}}})
    );
}

#[test]
fn every_reference_sent_in_strict_mode_resolves_in_the_schema_sent() {
    // draft 7's definitions are sent as $defs, their references too
    let (schema, _, _) = strict(json!({"type": "object", "required": ["x"],
        "properties": {"x": {"$ref": "#/definitions/S"}},
        "definitions": {"S": {"type": "string", "pattern": "^a"}}}));
    assert_eq!(schema["properties"]["x"], json!({"$ref": "#/$defs/S"}));
    assert_eq!(
        schema["$defs"]["S"],
        json!({"type": "string", "pattern": "^a"})
    );
    assert!(schema.get("definitions").is_none(), "{schema}");
    // a reference by anchor, by $id or to a definition that is not there: not strict
    for (reference, defs) in [
        ("#foo", json!({"x": {"$anchor": "foo", "type": "integer"}})),
        (
            "https://example.com/root#/$defs/x",
            json!({"x": {"type": "integer"}}),
        ),
        ("#/$defs/missing", json!({"x": {"type": "integer"}})),
        ("#/properties/a", json!({})),
    ] {
        let e = strict_schema(
            &json!({"type": "object", "required": ["a"],
                    "properties": {"a": {"$ref": reference}}, "$defs": defs}),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.pointer, "/properties/a/$ref", "{reference}");
        assert!(e.message.contains("#/$defs/NAME"), "{}", e.message);
    }
    // a one-schema allOf of a $ref beside a description: the definition inlined, no $ref left
    // beside other keywords
    let (schema, _, _) = strict(json!({"type": "object", "required": ["p"],
        "properties": {"p": {"allOf": [{"$ref": "#/$defs/S"}], "description": "x"}},
        "$defs": {"S": {"type": "string", "enum": ["a", "b"]}}}));
    assert_eq!(
        schema["properties"]["p"],
        json!({"description": "x", "type": "string", "enum": ["a", "b"]})
    );
    // keys by pattern cannot be declared: not strict
    let e = strict_schema(
        &json!({"type": "object", "patternProperties": {"^s_": {"type": "string"}},
                "additionalProperties": false}),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(e.pointer, "/patternProperties");
}

#[test]
fn an_object_extended_beside_its_ref_is_strict_with_the_properties_of_both() {
    let (schema, _, _) = strict(json!({"type": "object", "$ref": "#/$defs/Base",
        "properties": {"extra": {"type": "string"}}, "required": ["extra"],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}},
                           "required": ["id"], "additionalProperties": false}}}));
    assert_eq!(schema["required"], json!(["extra", "id"]), "{schema}");
    assert_eq!(schema["properties"]["id"], json!({"type": "integer"}));
    assert_eq!(schema["additionalProperties"], json!(false));
}
