//! Every BFCL definition exported to each provider's shape and imported back validates the
//! same recorded calls and refuses the same mutated ones; strict-mode exports accept each
//! call in the form a strict-mode model sends it, and the way back in restores the call the
//! tool's own schema accepts.

use crate::import::{bfcl_calls, bfcl_imported, Call};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use toolgate_core::import::{import_definitions, CallValidator, Dialect, ImportOptions};
use toolgate_core::provider::{export, Export, ExportOptions, Provider};
use toolgate_core::schema::CompiledSchema;
use toolgate_core::{Arguments, ToolSpec};

fn specs() -> Vec<&'static ToolSpec> {
    bfcl_imported().iter().map(|i| &i.spec).collect()
}

fn original() -> CallValidator {
    CallValidator::from_imported(bfcl_imported()).unwrap()
}

/// A call and the mutations of it that the tool's schema refuses.
fn cases(calls: &[Call], schemas: &HashMap<&str, &Value>) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for c in calls {
        let args = c.arguments.as_object().unwrap();
        let schema = schemas[c.function_name.as_str()];
        out.push((
            c.source.clone(),
            c.function_name.clone(),
            c.arguments.clone(),
        ));
        let mut unknown = args.clone();
        unknown.insert("unknown_arg_name".into(), json!(1));
        out.push((
            format!("{} +unknown", c.source),
            c.function_name.clone(),
            Value::Object(unknown),
        ));
        for r in schema["required"].as_array().into_iter().flatten() {
            let mut missing = args.clone();
            missing.remove(r.as_str().unwrap());
            out.push((
                format!("{} -{r}", c.source),
                c.function_name.clone(),
                Value::Object(missing),
            ));
        }
        for (name, _) in args {
            if let Some(wrong) = wrong_value(&schema["properties"][name]) {
                let mut bad = args.clone();
                bad.insert(name.clone(), wrong);
                out.push((
                    format!("{} {name}=wrong", c.source),
                    c.function_name.clone(),
                    Value::Object(bad),
                ));
            }
        }
    }
    out
}

/// A value of a type the schema's `type` refuses, when it has one.
fn wrong_value(schema: &Value) -> Option<Value> {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    [json!({"x": 1}), json!("text"), json!(true), json!([1])]
        .into_iter()
        .find(|v| {
            !types.iter().any(|t| match *t {
                "string" => v.is_string(),
                "boolean" => v.is_boolean(),
                "array" => v.is_array(),
                "object" => v.is_object(),
                _ => false,
            })
        })
}

fn schemas() -> HashMap<&'static str, &'static Value> {
    bfcl_imported()
        .iter()
        .map(|i| (&*i.spec.name, &i.spec.input_schema))
        .collect()
}

/// Imports an export's request `tools` back, keyed by registry name.
fn import_back(out: &Export) -> CallValidator {
    let text = serde_json::to_string(&out.request_tools()).unwrap();
    let back = import_definitions(&text, Dialect::Auto, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", out.provider));
    assert_eq!(back.len(), 678, "{}", out.provider);
    let expected = match out.provider {
        Provider::Mcp => Dialect::Mcp,
        Provider::OpenAiChat | Provider::OpenAiResponses => Dialect::OpenAi,
        Provider::Anthropic => Dialect::Anthropic,
        Provider::Gemini => Dialect::Gemini,
    };
    let specs: Vec<ToolSpec> = back
        .into_iter()
        .map(|i| {
            assert_eq!(i.dialect, expected);
            let name = out.codec.names().registry_name(&i.spec.name).to_string();
            let mut spec = i.spec;
            spec.name = name.into();
            spec
        })
        .collect();
    CallValidator::new(&specs).unwrap()
}

#[test]
fn every_definition_round_trips_through_every_provider() {
    let original = original();
    let calls = bfcl_calls();
    let schemas = schemas();
    let cases = cases(&calls, &schemas);
    assert!(cases.len() > 3000, "{}", cases.len());
    for provider in Provider::ALL {
        let out = export(specs(), provider, ExportOptions::default());
        assert_eq!(out.tools.len(), 678);
        let back = import_back(&out);
        let mut refused = 0;
        for (source, name, args) in &cases {
            let before = original.validate(name, args).is_empty();
            let after = back.validate(name, args).is_empty();
            assert_eq!(before, after, "{provider}: {source}: {args}");
            refused += usize::from(!before);
        }
        assert!(
            refused > 2000,
            "{provider}: only {refused} mutations refused"
        );
    }
}

/// `args` as a strict-mode model sends them: every property of every object present, `null`
/// where the call leaves it out.
fn as_strict_model_sends(args: &Value, schema: &Value) -> Value {
    match (args, schema) {
        (Value::Object(map), _) if schema.get("properties").is_some() => {
            let mut out = Map::new();
            for (name, sub) in schema["properties"].as_object().unwrap() {
                let value = match map.get(name) {
                    Some(v) => as_strict_model_sends(v, sub),
                    None => Value::Null,
                };
                out.insert(name.clone(), value);
            }
            Value::Object(out)
        }
        (Value::Array(items), _) if schema.get("items").is_some() => Value::Array(
            items
                .iter()
                .map(|i| as_strict_model_sends(i, &schema["items"]))
                .collect(),
        ),
        (v, _) => match schema.get("anyOf").and_then(Value::as_array) {
            Some(branches) => branches
                .iter()
                .find(|b| b.get("properties").is_some() && v.is_object())
                .map_or_else(|| v.clone(), |b| as_strict_model_sends(v, b)),
            None => v.clone(),
        },
    }
}

#[test]
fn strict_exports_take_what_strict_models_send_and_hand_back_what_tools_accept() {
    let original = original();
    let calls = bfcl_calls();
    let schemas = schemas();
    for provider in [Provider::OpenAiChat, Provider::OpenAiResponses] {
        let out = export(specs(), provider, ExportOptions::strict());
        let mut strict = HashMap::new();
        for tool in &out.tools {
            let f = if provider == Provider::OpenAiChat {
                &tool["function"]
            } else {
                tool
            };
            let name = out
                .codec
                .names()
                .registry_name(f["name"].as_str().unwrap())
                .to_string();
            if f["strict"] == json!(true) {
                let compiled =
                    CompiledSchema::compile(&name, "inputSchema", &f["parameters"]).unwrap();
                strict.insert(name, (compiled, f["parameters"].clone()));
            } else {
                assert!(
                    out.warnings
                        .iter()
                        .any(|w| w.tool == name && w.message.contains("strict: false")),
                    "{name} is not strict and no warning says why"
                );
            }
        }
        assert!(strict.len() > 600, "only {} of 678 strict", strict.len());
        let mut checked = 0;
        for (i, c) in calls.iter().enumerate() {
            let Some((compiled, schema)) = strict.get(&c.function_name) else {
                continue;
            };
            let sent = as_strict_model_sends(&c.arguments, schema);
            assert!(
                compiled.faults(&sent).is_empty(),
                "{}: {sent} against {schema}",
                c.source
            );
            // the strict schema refuses the mutations of what a strict model sends
            let map = sent.as_object().unwrap();
            let mut mutations = Vec::new();
            let mut unknown = map.clone();
            unknown.insert("unknown_arg_name".into(), json!(1));
            mutations.push(unknown);
            for name in map.keys() {
                let mut missing = map.clone();
                missing.remove(name);
                mutations.push(missing);
            }
            for name in c.arguments.as_object().unwrap().keys() {
                if let Some(wrong) =
                    wrong_value(&schemas[c.function_name.as_str()]["properties"][name])
                {
                    let mut bad = map.clone();
                    bad.insert(name.clone(), wrong);
                    mutations.push(bad);
                }
            }
            for m in mutations {
                let m = Value::Object(m);
                assert!(
                    !compiled.faults(&m).is_empty(),
                    "{}: strict accepts {m}",
                    c.source
                );
            }
            // the way back: the call read from the provider's message is the recorded one
            let name = out.codec.names().provider_name(&c.function_name);
            let message = match provider {
                Provider::OpenAiChat => json!({"role": "assistant", "tool_calls": [{
                    "id": format!("call_{i}"), "type": "function",
                    "function": {"name": name, "arguments": sent.to_string()}}]}),
                _ => json!({"output": [{"type": "function_call", "id": format!("fc_{i}"),
                    "call_id": format!("call_{i}"), "name": name,
                    "arguments": sent.to_string()}]}),
            };
            let batch = out.codec.read_calls(&message);
            assert_eq!(batch.calls()[0].call.id.as_str(), format!("call_{i}"));
            let call = &batch.calls()[0].call;
            assert_eq!(call.name, c.function_name);
            let Arguments::Value(back) = &call.arguments else {
                panic!("parsed")
            };
            assert!(
                original.validate(&c.function_name, back).is_empty(),
                "{}: {back}",
                c.source
            );
            checked += 1;
        }
        assert!(checked > 800, "{checked}");
    }
}

#[test]
fn names_with_dots_and_collisions_map_back_for_every_provider() {
    for provider in Provider::ALL {
        let out = export(specs(), provider, ExportOptions::default());
        let mut seen = std::collections::HashSet::new();
        for spec in specs() {
            let given = out.codec.names().provider_name(&spec.name);
            assert!(
                seen.insert(given.to_string()),
                "{provider}: {given} given twice"
            );
            assert_eq!(out.codec.names().registry_name(given), &*spec.name);
            if matches!(
                provider,
                Provider::OpenAiChat | Provider::OpenAiResponses | Provider::Anthropic
            ) {
                assert!(
                    given.len() <= 64
                        && given
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                    "{given}"
                );
            }
        }
    }
}
