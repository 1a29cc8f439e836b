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
