//! The built-ins as a set: names, effects, schemas the model reads.

use serde_json::Value;
use toolgate_core::{Registry, Risk};
use toolgate_tools::{read_only_tools, register_read_only, READ_ONLY_TOOLS};

#[test]
fn every_built_in_is_read_only_and_documented() {
    let registry = register_read_only(Registry::builder()).build().unwrap();
    let mut names: Vec<&str> = READ_ONLY_TOOLS.to_vec();
    names.sort();
    let listed: Vec<&str> = registry
        .list(None)
        .unwrap()
        .iter()
        .map(|s| &*s.name)
        .collect();
    assert_eq!(listed, names);
    // the explore profile (read-only tools) sees all of them
    assert_eq!(
        registry.list(Some("explore")).unwrap().len(),
        READ_ONLY_TOOLS.len()
    );
    for spec in registry.list(None).unwrap() {
        let name = &*spec.name;
        assert!(
            spec.effects.read_only && !spec.effects.destructive && !spec.effects.open_world,
            "{name}"
        );
        assert!(
            spec.effects.idempotent && spec.effects.concurrency_safe,
            "{name}"
        );
        assert_eq!(spec.risk, Risk::Read, "{name}");
        assert!(!spec.tags.is_empty(), "{name}");
        assert!(
            spec.description.len() > 200,
            "{name}: describe when to use it, when not, what it returns"
        );
        assert!(!spec.examples.is_empty(), "{name}");
        let input = &spec.input_schema;
        assert_eq!(input["additionalProperties"], Value::Bool(false), "{name}");
        for (prop, schema) in input["properties"].as_object().unwrap() {
            let description = schema["description"].as_str().unwrap_or_default();
            assert!(
                description.len() > 20,
                "{name}.{prop} needs a description for the model"
            );
        }
        let output = spec.output_schema.as_ref().unwrap();
        assert_eq!(output["type"], "object", "{name}");
        for (prop, schema) in output["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{name} output {prop}");
        }
        // every example satisfies the input schema the validator enforces
        let validator =
            toolgate_core::schema::CompiledSchema::compile(name, "inputSchema", input).unwrap();
        for example in &spec.examples {
            assert!(
                validator.is_valid(&example.arguments),
                "{name}: {}",
                example.arguments
            );
        }
    }
}

#[test]
fn the_tool_list_matches_the_registered_names() {
    let tools = read_only_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.spec().name).collect();
    assert_eq!(names, READ_ONLY_TOOLS);
}

/// Every built-in's schemas, as served (output schemas widened), use standard JSON Schema only:
/// no `format` schemars invents for integers and floats (`uint64`, `uint32`, `uint`, `int32`,
/// `double`, ...), unsigned integers bounded by `minimum: 0`; every output schema admits the
/// truncation record.
#[test]
fn every_built_in_schema_is_standard_json_schema() {
    let registry = toolgate_tools::register_shell(
        toolgate_tools::register_write_tools(register_read_only(Registry::builder())),
        toolgate_tools::shell::ShellConfig::default(),
    )
    .build()
    .unwrap();
    const STANDARD_FORMATS: [&str; 19] = [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];
    fn walk(v: &Value, at: &str, found: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(f) = o.get("format").and_then(Value::as_str) {
                    if !STANDARD_FORMATS.contains(&f) {
                        found.push(format!("{at}: format {f}"));
                    }
                }
                if o.get("type") == Some(&Value::from("integer")) && o.get("minimum").is_none() {
                    found.push(format!("{at}: an integer without minimum"));
                }
                for (k, v) in o {
                    walk(v, &format!("{at}/{k}"), found);
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }
    let specs = registry.list(None).unwrap();
    assert_eq!(specs.len(), 8);
    let mut found = Vec::new();
    for spec in specs {
        walk(
            &spec.input_schema,
            &format!("{}.inputSchema", spec.name),
            &mut found,
        );
        let output = spec.output_schema.as_ref().unwrap();
        walk(output, &format!("{}.outputSchema", spec.name), &mut found);
        assert!(
            output["properties"]["truncation"]["properties"]["handle"].is_object(),
            "{}",
            spec.name
        );
    }
    assert!(found.is_empty(), "{found:#?}");
}
