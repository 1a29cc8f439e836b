use super::*;
use crate::schema::CompiledSchema;
use pretty_assertions::assert_eq;
use serde_json::json;

/// Normalises an input schema at `/p`, checks that the result compiles when its root is an
/// object, and returns it with the warning pointers.
fn norm_with(schema: Value, options: NormalizeOptions) -> (Value, Vec<String>) {
    let mut warnings = Vec::new();
    let out = normalize_schema(&schema, "/p", options, &mut warnings).unwrap();
    if out.get("type") == Some(&json!("object")) {
        CompiledSchema::compile("t", "inputSchema", &out).unwrap();
    }
    (out, warnings.into_iter().map(|w| w.pointer).collect())
}

/// `v` sorted: warnings follow the schema's key order, which is the authored order when
/// serde_json's `preserve_order` is on (as cedar-policy turns it on) and sorted otherwise.
fn sorted<T: AsRef<str>>(v: impl IntoIterator<Item = T>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().map(|s| s.as_ref().to_owned()).collect();
    v.sort();
    v
}

fn norm(schema: Value) -> (Value, Vec<String>) {
    norm_with(schema, NormalizeOptions::INPUT)
}

fn messages(schema: Value) -> Vec<String> {
    let mut warnings = Vec::new();
    normalize_schema(&schema, "", NormalizeOptions::INPUT, &mut warnings).unwrap();
    warnings.into_iter().map(|w| w.to_string()).collect()
}

#[test]
fn bfcl_type_names_map_to_json_schema() {
    let (out, warned) = norm(json!({"type": "dict", "properties": {
        "a": {"type": "float"},
        "b": {"type": "String"},
        "c": {"type": "any", "description": "anything"},
        "d": {"type": ""},
        "e": {"type": "HashMap"},
        "f": {"type": "ArrayList", "items": {"type": "long"}},
        "g": {"type": "Boolean"},
        "h": {"type": "String[]"},
        "i": {"type": "integer"}
    }}));
    assert_eq!(
        out,
        json!({"type": "object", "additionalProperties": false, "properties": {
            "a": {"type": "number"},
            "b": {"type": "string"},
            "c": {"description": "anything"},
            "d": {},
            "e": {"type": "object"},
            "f": {"type": "array", "items": {"type": "integer"}},
            "g": {"type": "boolean"},
            "h": {"type": "array", "items": {"type": "string"}},
            "i": {"type": "integer"}
        }})
    );
    assert_eq!(
        warned,
        [
            "/p/type",
            "/p/properties/a/type",
            "/p/properties/b/type",
            "/p/properties/c/type",
            "/p/properties/d/type",
            "/p/properties/e/type",
            "/p/properties/f/type",
            "/p/properties/f/items/type",
            "/p/properties/g/type",
            "/p/properties/h/type",
            "/p",
        ]
    );
}

#[test]
fn warnings_say_what_changed() {
    assert_eq!(
        messages(json!({"type": "float"})),
        [r#""/type": type "float" is not a JSON Schema type; mapped to "number""#]
    );
    assert_eq!(
        messages(json!({"type": ""})),
        [r#""/type": unknown type name ""; dropped (no type constraint)"#]
    );
    assert_eq!(
        messages(json!({"type": "any"})),
        [r#""/type": type "any" means any value; dropped (no type constraint)"#]
    );
}

#[test]
fn type_lists_map_each_name_or_drop_the_whole_type() {
    assert_eq!(
        norm(json!({"type": ["float", "null"]})).0,
        json!({"type": ["number", "null"]})
    );
    assert_eq!(norm(json!({"type": ["string", "any"]})).0, json!({}));
    assert_eq!(
        norm(json!({"type": ["int", "integer"]})).0,
        json!({"type": "integer"})
    );
    assert_eq!(norm(json!({"type": []})).0, json!({}));
    assert_eq!(norm(json!({"type": 5})).0, json!({}));
    assert_eq!(
        norm(json!({"type": "string", "nullable": true})).0,
        json!({"type": ["string", "null"]})
    );
}

#[test]
fn tuples_become_prefix_items_when_item_types_are_given() {
    let (out, warned) = norm(json!({"type": "tuple", "items": {"type": "float"}}));
    assert_eq!(out, json!({"type": "array", "items": {"type": "number"}}));
    assert_eq!(warned, ["/p/type", "/p/items/type"]);

    let (out, warned) =
        norm(json!({"type": "tuple", "items": [{"type": "float"}, {"type": "string"}]}));
    assert_eq!(
        out,
        json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}],
               "items": false, "minItems": 2})
    );
    assert_eq!(
        warned,
        ["/p/type", "/p/items/0/type", "/p/items", "/p/type"]
    );

    let (out, _) = norm(json!({"type": "tuple"}));
    assert_eq!(out, json!({"type": "array"}));
}

#[test]
fn draft_4_item_arrays_keep_their_meaning() {
    // BFCL's memory_kv response: `items` as a list inside an array.
    let (out, warned) =
        norm(json!({"type": "array", "items": [{"type": "float"}, {"type": "string"}]}));
    assert_eq!(
        out,
        json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]})
    );
    assert_eq!(warned, ["/p/items/0/type", "/p/items"]);
    let (out, warned) = norm(json!({"items": [{"type": "string"}], "additionalItems": false}));
    assert_eq!(
        out,
        json!({"prefixItems": [{"type": "string"}], "items": false})
    );
    assert_eq!(warned, ["/p/items", "/p/additionalItems"]);
    let (out, warned) = norm(json!({"items": {"type": "string"}, "additionalItems": false}));
    assert_eq!(out, json!({"items": {"type": "string"}}));
    assert_eq!(warned, ["/p/additionalItems"]);
    assert_eq!(norm(json!({"items": []})).0, json!({}));
}

#[test]
fn property_optional_flags_fold_into_required() {
    let (out, warned) = norm(json!({"type": "dict", "properties": {
        "a": {"type": "integer", "optional": true},
        "b": {"type": "string", "optional": "True"},
        "c": {"type": "string", "optional": "yes"},
        "d": {"type": "string", "optional": false},
        "e": {"type": "string", "optional": "maybe"},
        "f": {"type": "string", "required": true},
        "g": {"type": "integer", "optional": true}
    }, "required": ["g", "e"]}));
    assert_eq!(
        out,
        json!({"type": "object", "additionalProperties": false, "required": ["e", "d", "f"], "properties": {
            "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "string"},
            "d": {"type": "string"}, "e": {"type": "string"}, "f": {"type": "string"},
            "g": {"type": "integer"}
        }})
    );
    assert_eq!(
        warned,
        [
            "/p/type",
            "/p/properties/a/optional",
            "/p/properties/b/optional",
            "/p/properties/c/optional",
            "/p/properties/d/optional",
            "/p/properties/e/optional",
            "/p/properties/f/required",
            "/p/properties/g/optional",
            "/p",
        ]
    );
}

#[test]
fn object_optional_lists_fold_into_required() {
    // BFCL parallel_multiple_15: `"required": [...], "optional": ["rating"]`.
    let (out, warned) = norm(json!({"type": "dict", "properties": {
        "location": {"type": "string"}, "rating": {"type": "float"}
    }, "required": ["location", "rating"], "optional": ["rating", 3]}));
    assert_eq!(out["required"], json!(["location"]));
    assert_eq!(
        warned,
        [
            "/p/type",
            "/p/properties/rating/type",
            "/p/optional/0",
            "/p/optional/1",
            "/p"
        ]
    );
    // Not under properties, a flag has no meaning.
    let (out, warned) = norm(json!({"type": "dict", "optional": true, "required": true}));
    assert_eq!(out, json!({"type": "object"}));
    assert_eq!(warned, ["/p/type", "/p/required", "/p/optional"]);
}

#[test]
fn defaults_that_do_not_fit_are_dropped() {
    let (out, warned) = norm(json!({"type": "dict", "properties": {
        "flag": {"type": "boolean", "default": "false"},
        "list": {"type": "array", "items": {"type": "string"}, "default": "None"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"], "default": ["a"]}},
        "rate": {"type": "float", "default": 2},
        "mode": {"type": "string", "enum": ["x", "y"], "default": "z"},
        "name": {"type": "string", "default": null},
        "ok": {"type": "integer", "default": 3.0},
        "fixed": {"const": 1, "default": 2},
        "free": {"type": "any", "default": "None"}
    }}));
    assert_eq!(
        out["properties"],
        json!({
            "flag": {"type": "boolean"},
            "list": {"type": "array", "items": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "rate": {"type": "number", "default": 2},
            "mode": {"type": "string", "enum": ["x", "y"]},
            "name": {"type": "string"},
            "ok": {"type": "integer", "default": 3.0},
            "fixed": {"const": 1},
            "free": {"default": "None"}
        })
    );
    let dropped: Vec<&String> = warned.iter().filter(|p| p.ends_with("/default")).collect();
    assert_eq!(
        sorted(dropped),
        sorted([
            "/p/properties/fixed/default",
            "/p/properties/flag/default",
            "/p/properties/list/default",
            "/p/properties/mode/default",
            "/p/properties/name/default",
            "/p/properties/tags/items/default",
        ])
    );
    assert_eq!(
        messages(json!({"type": "boolean", "default": "false"})),
        [r#""/default": default "false" does not fit type "boolean"; dropped"#]
    );
}

#[test]
fn enum_values_must_fit_the_type() {
    let (out, warned) = norm(json!({"type": "integer", "enum": [1, "2", 3.0]}));
    assert_eq!(out, json!({"type": "integer", "enum": [1, 3.0]}));
    assert_eq!(warned, ["/p/enum/1"]);
    let (out, warned) = norm(json!({"type": "integer", "enum": ["1"]}));
    assert_eq!(out, json!({"type": "integer"}));
    assert_eq!(warned, ["/p/enum/0", "/p/enum"]);
    assert_eq!(norm(json!({"enum": []})).0, json!({}));
    assert_eq!(norm(json!({"enum": "a"})).0, json!({}));
    assert_eq!(norm(json!({"enum": ["a", 1]})).0, json!({"enum": ["a", 1]}));
}

#[test]
fn objects_with_properties_are_closed_unless_they_say_otherwise() {
    let closed = |s: Value| norm(s).0.get("additionalProperties").cloned();
    assert_eq!(
        closed(json!({"type": "object", "properties": {}})),
        Some(json!(false))
    );
    assert_eq!(closed(json!({"type": "object"})), None);
    assert_eq!(
        closed(json!({"type": "dict", "description": "free-form"})),
        None
    );
    assert_eq!(
        closed(
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "float"}})
        ),
        Some(json!({"type": "number"}))
    );
    assert_eq!(
        closed(json!({"type": "object", "properties": {}, "additionalProperties": true})),
        Some(json!(true))
    );
    assert_eq!(
        closed(json!({"type": "object", "properties": {}, "allOf": [{"properties": {"x": true}}]})),
        None
    );
    assert_eq!(
        closed(
            json!({"type": "object", "properties": {}, "$ref": "#/$defs/x", "$defs": {"x": true}})
        ),
        None
    );
    let (out, _) = norm_with(
        json!({"type": "object", "properties": {"a": {}}}),
        NormalizeOptions::OUTPUT,
    );
    assert_eq!(out, json!({"type": "object", "properties": {"a": {}}}));
    // Nested objects and objects in items are closed too.
    let (out, _) = norm(
        json!({"type": "array", "items": {"type": "object", "properties": {"x": {"type": "object", "properties": {}}}}}),
    );
    assert_eq!(
        out,
        json!({"type": "array", "items": {"type": "object", "additionalProperties": false,
            "properties": {"x": {"type": "object", "properties": {}, "additionalProperties": false}}}})
    );
    // Below the root, a BFCL `dict` that requires none of what it lists is left open (the
    // listed keys are examples); one that requires some is a record, closed.
    let (out, _) = norm(json!({"type": "array", "items": {"type": "dict",
        "properties": {"x": {"type": "dict", "properties": {"y": {}}, "required": ["y"]}}}}));
    assert_eq!(
        out,
        json!({"type": "array", "items": {"type": "object",
            "properties": {"x": {"type": "object", "properties": {"y": {}}, "required": ["y"],
                "additionalProperties": false}}}})
    );
}

#[test]
fn required_names_a_closed_object_lacks_are_declared() {
    let (out, warned) =
        norm(json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b", "a"]}));
    assert_eq!(
        out,
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"],
               "additionalProperties": false})
    );
    assert_eq!(warned, ["/p/required/2", "/p", "/p/required"]);
    // An open object (BFCL parallel_29's `population`) keeps them as they are.
    let (out, warned) = norm(json!({"type": "dict", "required": ["adults", "children"]}));
    assert_eq!(
        out,
        json!({"type": "object", "required": ["adults", "children"]})
    );
    assert_eq!(warned, ["/p/type"]);
}

#[test]
fn older_drafts_are_rewritten() {
    let (out, warned) = norm(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false},
            "m": {"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
        }
    }));
    assert_eq!(
        out,
        json!({
            "$schema": DRAFT_2020_12,
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 9},
                "m": {"type": "object", "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}
            }
        })
    );
    assert_eq!(
        sorted(warned),
        sorted([
            "/p/$schema",
            "/p/properties/m/dependencies",
            "/p/properties/n/exclusiveMaximum",
            "/p/properties/n/exclusiveMinimum",
            "/p",
        ])
    );
    let (out, _) = norm(json!({"$schema": DRAFT_2020_12, "properties": {"a": {"$schema": "x"}}}));
    assert_eq!(
        out,
        json!({"$schema": DRAFT_2020_12, "properties": {"a": {}}, "additionalProperties": false})
    );
}

#[test]
fn malformed_parts_become_no_constraint_with_a_warning() {
    let (out, warned) = norm(json!({"type": "object", "properties": {
        "a": 5,
        "b": "string",
        "c": {"type": "integer", "minimum": "5", "maximum": "x", "minLength": -1, "multipleOf": 0},
        "d": {"description": 7, "pattern": 3, "uniqueItems": "yes"},
        "e": {"type": "object", "properties": [1, 2]},
        "f": {"anyOf": [], "allOf": "x"},
        "g": {"type": "object", "required": "x"},
        "h": {"type": "object", "required": [1, "y"]}
    }}));
    assert_eq!(
        out["properties"],
        json!({
            "a": {},
            "b": {"type": "string"},
            "c": {"type": "integer", "minimum": 5},
            "d": {},
            "e": {"type": "object"},
            "f": {},
            "g": {"type": "object", "required": ["x"]},
            "h": {"type": "object", "required": ["y"]}
        })
    );
    assert_eq!(
        sorted(warned),
        sorted([
            "/p/properties/a",
            "/p/properties/b",
            "/p/properties/c/maximum",
            "/p/properties/c/minLength",
            "/p/properties/c/minimum",
            "/p/properties/c/multipleOf",
            "/p/properties/d/description",
            "/p/properties/d/pattern",
            "/p/properties/d/uniqueItems",
            "/p/properties/e/properties",
            "/p/properties/f/allOf",
            "/p/properties/f/anyOf",
            "/p/properties/g/required",
            "/p/properties/h/required/0",
            "/p",
        ])
    );
}

#[test]
fn array_keywords_on_items_are_flagged_not_moved() {
    // BFCL irrelevance_128 puts minItems and maxItems on the integer items.
    let (out, warned) = norm(
        json!({"type": "array", "items": {"type": "integer", "minItems": 5, "maxItems": 100}}),
    );
    assert_eq!(
        out,
        json!({"type": "array", "items": {"type": "integer", "minItems": 5, "maxItems": 100}})
    );
    assert_eq!(warned, ["/p/items/minItems", "/p/items/maxItems"]);
}

#[test]
fn unknown_keywords_and_formats_are_kept() {
    let s = json!({"type": "string", "format": "date", "examples": ["2024-01-01"], "x-extra": {"a": 1}});
    assert_eq!(norm(s.clone()), (s, vec![]));
}

#[test]
fn pointers_escape_property_names() {
    let (_, warned) =
        norm(json!({"properties": {"MA(5)": {"type": "float"}, "a/b~c": {"type": "float"}}}));
    assert_eq!(
        warned,
        [
            "/p/properties/MA(5)/type",
            "/p/properties/a~1b~0c/type",
            "/p"
        ]
    );
}

#[test]
fn roots_of_the_wrong_type_and_deep_nesting_are_errors() {
    let mut w = Vec::new();
    let err = normalize_schema(
        &json!("dict"),
        "/parameters",
        NormalizeOptions::INPUT,
        &mut w,
    )
    .unwrap_err();
    assert_eq!(err.pointer(), Some("/parameters"));
    assert!(err.to_string().contains("found a string"), "{err}");

    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let err = normalize_schema(&deep, "", NormalizeOptions::INPUT, &mut w).unwrap_err();
    let expected = "/properties/x".repeat(MAX_SCHEMA_DEPTH + 1);
    assert_eq!(err.pointer(), Some(expected.as_str()));

    let mut ok = json!({"type": "string"});
    for _ in 0..MAX_SCHEMA_DEPTH {
        ok = json!({"items": ok});
    }
    assert!(normalize_schema(&ok, "", NormalizeOptions::INPUT, &mut w).is_ok());
}

#[test]
fn boolean_schemas_are_kept() {
    assert_eq!(norm(json!(true)).0, json!(true));
    assert_eq!(
        norm(json!({"properties": {"a": false}})).0,
        json!({"properties": {"a": false}, "additionalProperties": false})
    );
}

#[test]
fn conjuncts_are_not_closed_alone_so_a_valid_call_stays_valid() {
    let valid = |schema: &Value, call: Value| {
        CompiledSchema::compile("t", "inputSchema", schema)
            .unwrap()
            .validate(&call)
            .is_ok()
    };
    // the branches of an allOf hold together: closing each would refuse the other's names
    let (out, _) = norm(json!({"type": "object", "allOf": [
        {"properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}}
    ]}));
    assert!(valid(&out, json!({"a": "x", "b": 1})), "{out}");
    assert!(valid(&out, json!({"a": "x"})), "{out}");
    assert!(!valid(&out, json!({"b": 1})), "a is still required: {out}");
    // a definition extended beside its $ref, in either spelling of definitions
    for defs in ["$defs", "definitions"] {
        let (out, _) = norm(json!({"type": "object", "$ref": format!("#/{defs}/Base"),
            "properties": {"extra": {"type": "string"}},
            defs: {"Base": {"type": "object", "properties": {"id": {"type": "integer"}},
                            "required": ["id"]}}}));
        assert!(valid(&out, json!({"id": 1, "extra": "x"})), "{out}");
        assert!(!valid(&out, json!({"id": "one"})), "{out}");
    }
    // a definition referenced alone is still closed: a model must not invent its keys
    let (out, _) = norm(
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/P"}},
        "required": ["x"],
        "$defs": {"P": {"type": "object", "properties": {"n": {"type": "integer"}}}}}),
    );
    assert_eq!(
        out["$defs"]["P"]["additionalProperties"],
        json!(false),
        "{out}"
    );
    assert!(!valid(&out, json!({"x": {"n": 1, "invented": 2}})));
}
