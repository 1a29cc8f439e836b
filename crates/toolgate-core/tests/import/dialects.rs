//! Each dialect's shape and quirks, detection, effects from MCP annotations, and the path
//! from an imported definition through the pipeline.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use toolgate_core::import::{
    import_definition, import_definition_with, import_definitions, CallValidator, Dialect,
    ImportOptions, Warning,
};
use toolgate_core::*;

fn pointers(warnings: &[Warning]) -> Vec<&str> {
    warnings.iter().map(|w| w.pointer.as_str()).collect()
}

const WEATHER_SCHEMA: &str = r#"{"type": "object", "properties": {
    "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city"]}"#;

fn weather_schema() -> Value {
    serde_json::from_str(WEATHER_SCHEMA).unwrap()
}

fn closed_weather_schema() -> Value {
    let mut s = weather_schema();
    s["additionalProperties"] = json!(false);
    s
}

#[test]
fn mcp_tools_keep_their_fields_and_get_closed_inputs_and_open_outputs() {
    let def = json!({
        "name": "weather.get",
        "title": "Weather",
        "description": "Current weather.",
        "inputSchema": weather_schema(),
        "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
        "annotations": {"openWorldHint": true},
        "_meta": {"x": 1},
        "icons": []
    });
    let i = import_definition(&def, Dialect::Auto).unwrap();
    assert_eq!(i.dialect, Dialect::Mcp);
    assert_eq!(i.source, None);
    let expected = ToolSpec::builder("weather.get")
        .title("Weather")
        .description("Current weather.")
        .input_schema(closed_weather_schema())
        .output_schema(json!({"type": "object", "properties": {"temp": {"type": "number"}}}))
        .effects(Effects {
            open_world: true,
            ..Effects::side_effecting()
        })
        .risk(Risk::External)
        .build()
        .unwrap();
    assert_eq!(i.spec, expected);
    assert_eq!(pointers(&i.warnings), ["/inputSchema"]);
}

#[test]
fn untrusted_annotations_only_tighten() {
    let effects = |annotations: Value| {
        let def =
            json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations});
        let i = import_definition(&def, Dialect::Mcp).unwrap();
        (
            i.spec.effects,
            i.spec.risk,
            pointers(&i.warnings)
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
        )
    };
    let strictest_open = Effects {
        open_world: true,
        ..Effects::side_effecting()
    };
    // Absent hints: destructive and open-world, as MCP says.
    assert_eq!(effects(json!({})), (strictest_open, Risk::External, vec![]));
    // Loosening hints are ignored, with a warning each.
    assert_eq!(
        effects(json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})),
        (
            strictest_open,
            Risk::External,
            vec![
                "/annotations/readOnlyHint".to_string(),
                "/annotations/destructiveHint".into(),
                "/annotations/idempotentHint".into()
            ]
        )
    );
    // An explicit closed world keeps the strictest defaults' closed world.
    assert_eq!(
        effects(json!({"openWorldHint": false})),
        (Effects::side_effecting(), Risk::Write, vec![])
    );
    // A hint of the wrong type is absent.
    assert_eq!(
        effects(json!({"openWorldHint": "no"})),
        (
            strictest_open,
            Risk::External,
            vec!["/annotations/openWorldHint".to_string()]
        )
    );
    // Annotations that are not an object are ignored.
    assert_eq!(
        effects(json!([1])),
        (
            strictest_open,
            Risk::External,
            vec!["/annotations".to_string()]
        )
    );
}

#[test]
fn trusted_annotations_map_as_mcp_defines_them() {
    let trusted = ImportOptions::default().with_trusted_annotations(true);
    let effects = |annotations: Value| {
        let def =
            json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": annotations});
        let spec = import_definition_with(&def, Dialect::Mcp, &trusted)
            .unwrap()
            .spec;
        (spec.effects, spec.risk)
    };
    assert_eq!(
        effects(json!({"readOnlyHint": true, "openWorldHint": false})),
        (Effects::read_only(), Risk::Read)
    );
    assert_eq!(
        effects(json!({"readOnlyHint": true})),
        (
            Effects {
                open_world: true,
                ..Effects::read_only()
            },
            Risk::External
        )
    );
    assert_eq!(
        effects(json!({"destructiveHint": false, "idempotentHint": true, "openWorldHint": false})),
        (
            Effects {
                destructive: false,
                idempotent: true,
                ..Effects::side_effecting()
            },
            Risk::Write
        )
    );
    // Absent hints take MCP's defaults: destructive, open world.
    assert_eq!(
        effects(json!({})),
        (
            Effects {
                open_world: true,
                ..Effects::side_effecting()
            },
            Risk::External
        )
    );
}

#[test]
fn mcp_title_falls_back_to_the_annotation_title_and_unknown_keys_are_reported() {
    let def = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"title": "T"}, "extra": 1});
    let i = import_definition(&def, Dialect::Auto).unwrap();
    assert_eq!(i.spec.title.as_deref(), Some("T"));
    assert_eq!(pointers(&i.warnings), ["/extra"]);
    // An MCP tool without inputSchema takes no arguments.
    let i = import_definition(&json!({"name": "t"}), Dialect::Auto).unwrap();
    assert_eq!(
        i.spec.input_schema,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(pointers(&i.warnings), [""]);
}

#[test]
fn openai_chat_and_responses_forms_give_the_same_spec() {
    let chat = json!({"type": "function", "function": {
        "name": "get_weather", "description": "Current weather.", "parameters": weather_schema(), "strict": true}});
    let flat = json!({"type": "function", "name": "get_weather", "description": "Current weather.",
        "parameters": weather_schema(), "strict": true});
    let a = import_definition(&chat, Dialect::Auto).unwrap();
    let b = import_definition(&flat, Dialect::OpenAi).unwrap();
    assert_eq!((a.dialect, b.dialect), (Dialect::OpenAi, Dialect::OpenAi));
    assert_eq!(a.spec, b.spec);
    assert_eq!(a.spec.input_schema, closed_weather_schema());
    assert_eq!(a.spec.effects, Effects::side_effecting());
    assert_eq!(a.spec.risk, Risk::Write);
    assert_eq!(pointers(&a.warnings), ["/function/parameters"]);
    assert_eq!(pointers(&b.warnings), ["/parameters"]);
}

#[test]
fn openai_quirks() {
    // No parameters: no arguments, and no warning (OpenAI allows leaving them out).
    let i = import_definition(
        &json!({"type": "function", "function": {"name": "now"}}),
        Dialect::Auto,
    )
    .unwrap();
    assert_eq!(
        i.spec.input_schema,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert!(i.warnings.is_empty());
    // Nullable optional fields in strict mode stay nullable.
    let def = json!({"type": "function", "name": "f", "strict": "yes", "parameters": {"type": "object",
        "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"], "additionalProperties": false}});
    let i = import_definition(&def, Dialect::Auto).unwrap();
    assert_eq!(
        i.spec.input_schema["properties"]["a"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(pointers(&i.warnings), ["/strict"]);
    // Extra keys on either level are reported.
    let def = json!({"type": "function", "id": 1, "function": {"name": "f", "x": 2}});
    assert_eq!(
        pointers(&import_definition(&def, Dialect::Auto).unwrap().warnings),
        ["/id", "/function/x"]
    );
}

#[test]
fn bfcl_wrappers_keep_their_source_and_pointers_go_through_them() {
    let def = json!({"source": "BFCL_v4_multiple.json#multiple_5", "function": {
        "name": "weather.historical", "description": "d", "parameters": {"type": "dict", "properties": {
            "coordinates": {"type": "tuple", "items": {"type": "float"}},
            "date": {"type": "string", "format": "date"}}, "required": ["coordinates", "date"]}}});
    let i = import_definition(&def, Dialect::Auto).unwrap();
    assert_eq!(i.dialect, Dialect::Bfcl);
    assert_eq!(
        i.source.as_deref(),
        Some("BFCL_v4_multiple.json#multiple_5")
    );
    assert_eq!(
        i.spec.input_schema,
        json!({"type": "object", "additionalProperties": false, "required": ["coordinates", "date"],
            "properties": {"coordinates": {"type": "array", "items": {"type": "number"}},
                           "date": {"type": "string", "format": "date"}}})
    );
    for w in &i.warnings {
        assert!(def.pointer(&w.pointer).is_some(), "{w}");
        assert!(w.pointer.starts_with("/function/parameters"), "{w}");
    }
}

#[test]
fn bfcl_responses_become_open_output_schemas() {
    let def = json!({"name": "ls", "description": "d", "parameters": {"type": "dict", "properties": {}, "required": []},
        "response": {"type": "dict", "properties": {"entries": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "dict", "properties": {"n": {"type": "integer"}}}}}});
    let i = import_definition(&def, Dialect::Bfcl).unwrap();
    assert_eq!(
        i.spec.input_schema,
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    assert_eq!(
        i.spec.output_schema,
        Some(
            json!({"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "properties": {"n": {"type": "integer"}}}}})
        )
    );
    assert_eq!(
        pointers(&i.warnings),
        [
            "/parameters/type",
            "/parameters",
            "/response/type",
            "/response/properties/meta/type"
        ]
    );
}

#[test]
fn closing_can_be_turned_off() {
    let open = ImportOptions::default().with_closed_objects(false);
    let def = json!({"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "string"}}}});
    let i = import_definition_with(&def, Dialect::Auto, &open).unwrap();
    assert_eq!(
        i.spec.input_schema,
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
}

#[test]
fn the_root_type_is_made_object() {
    let i = import_definition(
        &json!({"name": "f", "inputSchema": {"properties": {}}}),
        Dialect::Auto,
    )
    .unwrap();
    assert_eq!(i.spec.input_schema["type"], "object");
    assert_eq!(pointers(&i.warnings), ["/inputSchema", "/inputSchema"]);
    let i = import_definition(
        &json!({"name": "f", "inputSchema": {"type": ["object", "null"]}}),
        Dialect::Auto,
    )
    .unwrap();
    assert_eq!(i.spec.input_schema, json!({"type": "object"}));
    assert_eq!(pointers(&i.warnings), ["/inputSchema/type"]);
}

#[test]
fn mixed_dialects_import_from_one_file() {
    let text = [
        json!({"name": "a", "inputSchema": {"type": "object"}}).to_string(),
        json!({"type": "function", "function": {"name": "b"}}).to_string(),
        json!({"source": "s#1", "function": {"name": "c", "parameters": {"type": "dict", "properties": {}}}}).to_string(),
        json!({"tools": [{"name": "d"}, {"name": "e", "inputSchema": {"type": "object"}}]}).to_string(),
    ]
    .join("\n");
    let all = import_definitions(&text, Dialect::Auto, &ImportOptions::default()).unwrap();
    let got: Vec<(&str, Dialect, Option<&str>)> = all
        .iter()
        .map(|i| (&*i.spec.name, i.dialect, i.source.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Dialect::Mcp, None),
            ("b", Dialect::OpenAi, None),
            ("c", Dialect::Bfcl, Some("s#1")),
            ("d", Dialect::Mcp, None),
            ("e", Dialect::Mcp, None),
        ]
    );
}

#[test]
fn dialect_names_parse() {
    for (s, d) in [
        ("mcp", Dialect::Mcp),
        ("OpenAI", Dialect::OpenAi),
        ("bfcl", Dialect::Bfcl),
        ("anthropic", Dialect::Anthropic),
        ("Gemini", Dialect::Gemini),
        ("openai-responses", Dialect::OpenAi),
        ("auto", Dialect::Auto),
    ] {
        assert_eq!(s.parse::<Dialect>().unwrap(), d);
        assert_eq!(d.as_str().parse::<Dialect>().unwrap(), d);
    }
    assert!("cohere"
        .parse::<Dialect>()
        .unwrap_err()
        .to_string()
        .contains("cohere"));
}

#[test]
fn the_validator_refuses_duplicate_names() {
    let a = import_definition(&json!({"name": "a"}), Dialect::Mcp).unwrap();
    assert!(CallValidator::from_imported(&[a.clone(), a.clone()]).is_err());
    let v = CallValidator::from_imported(&[a]).unwrap();
    assert_eq!(
        (v.len(), v.contains("a"), v.contains("b")),
        (1, true, false)
    );
}

#[tokio::test]
async fn imported_tools_run_through_the_pipeline_with_pointed_faults() {
    let def = json!({"name": "weather.get", "parameters": {"type": "dict", "properties": {
        "city": {"type": "String"}, "days": {"type": "integer", "optional": true, "default": "3"}},
        "required": ["city", "days"]}});
    let spec = import_definition(&def, Dialect::Auto).unwrap().spec;
    let registry = Registry::builder()
        .tool(DynamicTool::new(spec, |args, _ctx| async move {
            Ok(ToolOutput::structured(args))
        }))
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry).build();
    let session = pipeline.session("s").build().unwrap();
    let r = pipeline
        .dispatch(
            ToolCall::new("c1", "weather.get", json!({"days": "3", "town": "x"})),
            &session,
        )
        .await;
    let error = r.error.as_ref().unwrap();
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    let mut faults: Vec<&str> = error.faults.iter().map(|f| f.pointer.as_str()).collect();
    faults.sort();
    assert_eq!(faults, ["/city", "/days", "/town"]);
    assert_eq!(r.call_id.as_str(), "c1");
}
