//! Bad input gives a clear, located error, never a panic.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use toolgate_core::import::{
    import_definition, import_definitions, parse_definitions, Dialect, ImportError, ImportOptions,
    Location, MAX_INPUT_BYTES, MAX_SCHEMA_DEPTH,
};

/// The pointer and message of a definition error.
fn refused(def: Value, dialect: Dialect) -> (String, String) {
    match import_definition(&def, dialect) {
        Err(e @ ImportError::Definition { .. }) => {
            (e.pointer().unwrap().to_string(), e.to_string())
        }
        other => panic!("{def}: {other:?}"),
    }
}

fn assert_refused(def: Value, dialect: Dialect, pointer: &str, says: &str) {
    let (p, message) = refused(def.clone(), dialect);
    assert_eq!(p, pointer, "{def}: {message}");
    assert!(
        message.contains(says),
        "{def}: {message:?} does not say {says:?}"
    );
}

#[test]
fn text_that_is_not_json_is_a_syntax_error_with_its_position() {
    let err = import_definitions(
        "{\"name\": \"a\"}\n{\"name\" \"b\"}",
        Dialect::Auto,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        ImportError::Syntax {
            line: 2,
            column: 9,
            message: "expected `:`".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "not valid JSON at line 2, column 9: expected `:`"
    );
    assert!(matches!(
        parse_definitions("not json"),
        Err(ImportError::Syntax {
            line: 1,
            column: 2,
            ..
        })
    ));
}

#[test]
fn definitions_that_are_not_objects_are_refused() {
    for def in [
        json!(5),
        json!("get_weather"),
        json!(null),
        json!([{"name": "a"}]),
    ] {
        assert_refused(def, Dialect::Auto, "", "must be a JSON object");
    }
    assert_refused(
        json!({"description": "x"}),
        Dialect::Auto,
        "",
        "cannot tell the dialect",
    );
    assert_refused(
        json!({"type": "function", "function": 5}),
        Dialect::Auto,
        "/function",
        "must be a JSON object",
    );
}

#[test]
fn missing_or_mistyped_names_are_refused() {
    assert_refused(
        json!({"inputSchema": {"type": "object"}}),
        Dialect::Auto,
        "",
        "no \"name\"",
    );
    assert_refused(
        json!({"name": 5, "parameters": {}}),
        Dialect::Auto,
        "/name",
        "must be a string, found a number",
    );
    assert_refused(
        json!({"type": "function", "function": {"description": "x"}}),
        Dialect::Auto,
        "/function",
        "no \"name\"",
    );
    assert_refused(json!({"parameters": {}}), Dialect::Bfcl, "", "no \"name\"");
    // The wrong dialect for the shape: an OpenAI tool read as MCP has no name.
    assert_refused(
        json!({"type": "function", "function": {"name": "f"}}),
        Dialect::Mcp,
        "",
        "no \"name\"",
    );
}

#[test]
fn invalid_names_are_refused_not_renamed() {
    for name in ["get weather", "a/b", "é", "", &"x".repeat(129)] {
        assert_refused(
            json!({"name": name, "parameters": {}}),
            Dialect::Auto,
            "/name",
            "does not rename",
        );
    }
    assert_refused(
        json!({"type": "function", "function": {"name": "a b"}}),
        Dialect::Auto,
        "/function/name",
        "is invalid",
    );
    // Dots, dashes and underscores are allowed (MCP's rule), so BFCL's names are kept.
    for name in ["flight.book", "flight_book", "a-b.c_d"] {
        assert_eq!(
            &*import_definition(&json!({"name": name}), Dialect::Auto)
                .unwrap()
                .spec
                .name,
            name
        );
    }
}

#[test]
fn schemas_of_the_wrong_json_type_are_refused() {
    assert_refused(
        json!({"name": "t", "inputSchema": "object"}),
        Dialect::Auto,
        "/inputSchema",
        "found a string",
    );
    assert_refused(
        json!({"name": "t", "parameters": []}),
        Dialect::Auto,
        "/parameters",
        "found an array",
    );
    assert_refused(
        json!({"name": "t", "parameters": true}),
        Dialect::Auto,
        "/parameters",
        "found a boolean",
    );
    assert_refused(
        json!({"name": "t", "outputSchema": 5}),
        Dialect::Auto,
        "/outputSchema",
        "found a number",
    );
    assert_refused(
        json!({"name": "t", "response": "dict"}),
        Dialect::Bfcl,
        "/response",
        "found a string",
    );
    assert_refused(
        json!({"type": "function", "name": "t", "parameters": "x"}),
        Dialect::Auto,
        "/parameters",
        "found a string",
    );
    assert_refused(
        json!({"type": "web_search"}),
        Dialect::Auto,
        "/type",
        "only function tools",
    );
}

#[test]
fn roots_that_are_not_object_schemas_are_refused() {
    assert_refused(
        json!({"name": "t", "parameters": {"type": "string"}}),
        Dialect::Auto,
        "/parameters/type",
        "\"type\": \"object\"",
    );
    // `any` at the root leaves no type, and a root without a type is an object.
    let i = import_definition(
        &json!({"name": "t", "parameters": {"type": "any"}}),
        Dialect::Auto,
    )
    .unwrap();
    assert_eq!(i.spec.input_schema, json!({"type": "object"}));
    assert_refused(
        json!({"name": "t", "outputSchema": {"type": "array"}}),
        Dialect::Auto,
        "/outputSchema/type",
        "\"type\": \"object\"",
    );
}

#[test]
fn schemas_that_do_not_compile_are_refused_at_their_pointer() {
    let (pointer, message) = refused(
        json!({"name": "t", "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "pattern": "(unclosed"}}}}),
        Dialect::Auto,
    );
    assert!(
        pointer.starts_with("/inputSchema/properties/p"),
        "{pointer}: {message}"
    );
    assert!(message.contains("does not compile"), "{message}");
}

#[test]
fn deep_nesting_is_refused() {
    let mut schema = json!({"type": "string"});
    for _ in 0..(MAX_SCHEMA_DEPTH + 5) {
        schema = json!({"type": "array", "items": schema});
    }
    let (pointer, message) = refused(
        json!({"name": "t", "parameters": {"type": "dict", "properties": {"x": schema}}}),
        Dialect::Auto,
    );
    assert!(
        pointer.starts_with("/parameters/properties/x/items/items"),
        "{pointer}"
    );
    assert!(message.contains("nested more than"), "{message}");
    // Text nested beyond serde_json's limit is a syntax error, not a stack overflow.
    let text = format!(
        "{{\"name\": \"t\", \"parameters\": {}{}}}",
        "{\"items\": ".repeat(300),
        "}".repeat(300)
    );
    assert!(matches!(
        parse_definitions(&text),
        Err(ImportError::Syntax { .. })
    ));
}

#[test]
fn huge_input_is_refused_before_parsing() {
    let text = " ".repeat(MAX_INPUT_BYTES + 1);
    assert_eq!(
        parse_definitions(&text),
        Err(ImportError::TooLarge {
            bytes: MAX_INPUT_BYTES + 1,
            limit: MAX_INPUT_BYTES
        })
    );
}

#[test]
fn many_definitions_and_wide_schemas_import() {
    let properties: serde_json::Map<String, Value> = (0..2000)
        .map(|i| (format!("p{i}"), json!({"type": "float"})))
        .collect();
    let wide = json!({"name": "wide", "parameters": {"type": "dict", "properties": properties}});
    let mut lines = vec![wide.to_string()];
    lines.extend((0..3000).map(|i| {
        json!({"name": format!("t{i}"), "parameters": {"type": "dict", "properties": {}}})
            .to_string()
    }));
    let all =
        import_definitions(&lines.join("\n"), Dialect::Auto, &ImportOptions::default()).unwrap();
    assert_eq!(all.len(), 3001);
    assert_eq!(all[0].warnings.len(), 2002);
}

#[test]
fn errors_in_a_file_carry_line_index_and_name() {
    let text = "{\"name\": \"a\"}\n\n[{\"name\": \"b\"}, {\"name\": \"c d\"}]\n";
    let err = import_definitions(text, Dialect::Auto, &ImportOptions::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::Definition {
            location: Location { line: Some(3), index: Some(1) },
            name: Some("c d".into()),
            pointer: "/name".into(),
            message: "tool name \"c d\" is invalid: only A-Z, a-z, 0-9, '_', '-' and '.' are allowed; toolgate does not rename tools, so fix the name in the definition".into(),
        }
    );
    assert!(
        err.to_string()
            .starts_with("line 3, item 1: tool \"c d\": at \"/name\": "),
        "{err}"
    );

    let text = "{\"name\": \"a\"}\n{\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}}\n";
    let err = import_definitions(text, Dialect::Auto, &ImportOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2: tool \"a\": at \"/name\": defined twice (first at line 1)"
    );
}

/// Every value in the definition replaced, in turn, by each value of another JSON type.
#[test]
fn junk_anywhere_in_real_definitions_never_panics() {
    let junk = [
        json!(null),
        json!(-1),
        json!(1.5),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
        json!([{}]),
        json!({"type": 3}),
    ];
    let mut imported = 0;
    let mut refused = 0;
    for (_, def) in super::bfcl_raw().iter().step_by(23) {
        let mut pointers = Vec::new();
        collect_pointers(def, String::new(), &mut pointers);
        for pointer in &pointers {
            for j in &junk {
                let mut d = def.clone();
                *d.pointer_mut(pointer).unwrap() = j.clone();
                match import_definition(&d, Dialect::Auto) {
                    Ok(_) => imported += 1,
                    Err(e) => {
                        assert!(!e.to_string().is_empty());
                        refused += 1;
                    }
                }
            }
        }
    }
    assert!(imported > 1000 && refused > 50, "{imported} {refused}");
}

fn collect_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                collect_pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                collect_pointers(v, p, out);
            }
        }
        _ => {}
    }
}
