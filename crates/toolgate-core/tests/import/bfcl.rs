//! The BFCL data set (`tests/data/bfcl`): all 678 definitions import, compile and register together; all
//! 899 recorded calls validate; mutated calls are refused at the exact pointer.

use super::{bfcl_calls, bfcl_imported, bfcl_raw, Call};
use pretty_assertions::assert_eq;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use toolgate_core::import::{CallValidator, Dialect};
use toolgate_core::*;

fn validator() -> CallValidator {
    CallValidator::from_imported(bfcl_imported()).unwrap()
}

/// The normalised input schemas by function name.
fn schemas() -> HashMap<&'static str, &'static Value> {
    bfcl_imported()
        .iter()
        .map(|i| (&*i.spec.name, &i.spec.input_schema))
        .collect()
}

#[test]
fn every_definition_imports_and_compiles() {
    let imported = bfcl_imported();
    let raw = bfcl_raw();
    assert_eq!(imported.len(), 678);
    for (i, (source, definition)) in imported.iter().zip(raw) {
        assert_eq!(i.source.as_deref(), Some(source.as_str()));
        assert_eq!(i.dialect, Dialect::Bfcl);
        assert_eq!(&*i.spec.name, definition["name"].as_str().unwrap());
        assert_eq!(i.spec.input_schema["type"], "object", "{source}");
        assert_eq!(i.spec.effects, Effects::side_effecting());
        assert_eq!(
            i.spec.output_schema.is_some(),
            definition.get("response").is_some()
        );
        // Every warning points at something in the definition as written.
        for w in &i.warnings {
            assert!(
                definition.pointer(&w.pointer).is_some(),
                "{source}: {w} points nowhere"
            );
        }
        // At least the root `"type": "dict"` was rewritten.
        assert!(
            i.warnings.iter().any(|w| w.pointer == "/parameters/type"),
            "{source}"
        );
    }
    let with_output = imported
        .iter()
        .filter(|i| i.spec.output_schema.is_some())
        .count();
    assert_eq!(with_output, 152);
}

#[test]
fn every_definition_registers_in_one_registry() {
    let mut builder = Registry::builder();
    for i in bfcl_imported() {
        builder = builder.tool(DynamicTool::new(i.spec.clone(), |args, _ctx| async move {
            Ok(ToolOutput::structured(json!({ "echo": args })))
        }));
    }
    let registry = builder.build().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(registry.len(), 678);
    // Dotted names are kept as they are.
    assert!(registry.get("math.hypot", None).is_some());
}

#[test]
fn every_recorded_call_is_valid() {
    let v = validator();
    let calls = bfcl_calls();
    assert_eq!(calls.len(), 899);
    for c in &calls {
        let faults = v.validate(&c.function_name, &c.arguments);
        assert!(
            faults.is_empty(),
            "{} {}: {faults:?}",
            c.source,
            c.function_name
        );
    }
}

/// The sorted, de-duplicated pointers of the faults of a call.
fn fault_pointers(v: &CallValidator, name: &str, arguments: &Value) -> Vec<String> {
    let mut pointers: Vec<String> = v
        .validate(name, arguments)
        .into_iter()
        .map(|f| f.pointer)
        .collect();
    pointers.sort();
    pointers.dedup();
    pointers
}

fn args(c: &Call) -> &Map<String, Value> {
    c.arguments.as_object().unwrap()
}

#[test]
fn a_missing_required_argument_is_reported_at_its_name() {
    let (v, schemas) = (validator(), schemas());
    let mut checked = 0;
    for c in bfcl_calls() {
        let required = schemas[c.function_name.as_str()]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for name in required.iter().filter_map(Value::as_str) {
            let mut a = args(&c).clone();
            if a.remove(name).is_none() {
                continue;
            }
            let faults = v.validate(&c.function_name, &Value::Object(a));
            assert_eq!(faults.len(), 1, "{}: {faults:?}", c.source);
            assert_eq!(faults[0].pointer, format!("/{name}"));
            assert!(
                faults[0].message.contains("missing required"),
                "{}",
                faults[0].message
            );
            checked += 1;
        }
    }
    assert!(checked > 1500, "{checked}");
}

#[test]
fn an_unknown_argument_is_reported_at_its_name() {
    let (v, schemas) = (validator(), schemas());
    let (mut nested, mut open) = (0, 0);
    for c in bfcl_calls() {
        let mut a = args(&c).clone();
        a.insert("unknown_arg_name".into(), json!(1));
        assert_eq!(
            fault_pointers(&v, &c.function_name, &Value::Object(a)),
            ["/unknown_arg_name"],
            "{}",
            c.source
        );
        // Nested records (a dict that requires some of its properties) are closed too; a
        // nested dict that requires none takes other keys (its listed ones are examples).
        let properties = &schemas[c.function_name.as_str()]["properties"];
        for (name, value) in args(&c) {
            if value.is_object() && properties[name].get("properties").is_some() {
                let mut a = args(&c).clone();
                a[name]["unknown_arg_name"] = json!(1);
                let record = properties[name]["required"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty());
                let expected: Vec<String> = if record {
                    nested += 1;
                    vec![format!("/{name}/unknown_arg_name")]
                } else {
                    open += 1;
                    Vec::new()
                };
                assert_eq!(
                    fault_pointers(&v, &c.function_name, &Value::Object(a)),
                    expected,
                    "{}",
                    c.source
                );
            }
        }
    }
    assert!(open >= 10, "{nested} closed, {open} open");
}

#[test]
fn nested_records_are_closed_and_nested_example_dicts_open() {
    let v = validator();
    let point = json!({"latitude": 1.0, "longitude": 2.0});
    let call = |a: Value| fault_pointers(&v, "map_coordinates.distance_calculate", &a);
    assert!(call(json!({"pointA": point, "pointB": point})).is_empty());
    let mut extra = point.clone();
    extra["altitude"] = json!(3);
    assert_eq!(
        call(json!({"pointA": extra, "pointB": point})),
        ["/pointA/altitude"]
    );
    // createAuthToken's `options` lists issuer, role, algorithm and requires none
    let s = &schemas()["createAuthToken"]["properties"]["options"];
    assert!(s.get("additionalProperties").is_none(), "{s}");
    assert_eq!(
        schemas()["createAuthToken"]["additionalProperties"],
        json!(false)
    );
}

/// Whether `value` fits the type (string or list) of a normalised schema.
fn fits(schema: &Value, value: &Value) -> bool {
    let fits_one = |t: &Value| match t.as_str().unwrap() {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        other => panic!("{other}"),
    };
    match &schema["type"] {
        Value::Array(types) => types.iter().any(fits_one),
        t @ Value::String(_) => fits_one(t),
        _ => true,
    }
}

/// A value of another type than `schema` allows; `None` when it allows any type.
fn wrong_value(schema: &Value) -> Option<Value> {
    schema.get("type")?;
    [json!("wrong-type"), json!(1.5), json!(true)]
        .into_iter()
        .find(|candidate| !fits(schema, candidate))
}

/// Replaces the value at `pointer` in `arguments` with a value of the wrong type and checks
/// that every fault is at `pointer`. Returns whether a check was made.
fn check_wrong_type(v: &CallValidator, c: &Call, pointer: &str, schema: &Value) -> bool {
    let Some(wrong) = wrong_value(schema) else {
        return false;
    };
    let mut a = c.arguments.clone();
    *a.pointer_mut(pointer).unwrap() = wrong;
    assert_eq!(
        fault_pointers(v, &c.function_name, &a),
        [pointer],
        "{} {}",
        c.source,
        c.function_name
    );
    true
}

#[test]
fn a_value_of_the_wrong_type_is_reported_at_its_pointer() {
    let (v, schemas) = (validator(), schemas());
    let (mut top, mut inner) = (0, 0);
    for c in bfcl_calls() {
        let properties = &schemas[c.function_name.as_str()]["properties"];
        for (name, value) in args(&c) {
            let schema = &properties[name];
            let at = format!("/{name}");
            top += usize::from(check_wrong_type(&v, &c, &at, schema));
            match value {
                Value::Object(fields) => {
                    for sub in fields.keys() {
                        if let Some(sub_schema) = schema["properties"].get(sub) {
                            let sub_at =
                                format!("{at}/{}", sub.replace('~', "~0").replace('/', "~1"));
                            inner += usize::from(check_wrong_type(&v, &c, &sub_at, sub_schema));
                        }
                    }
                }
                Value::Array(items) if !items.is_empty() => {
                    let item_schema = schema["prefixItems"].get(0).unwrap_or(&schema["items"]);
                    inner += usize::from(check_wrong_type(&v, &c, &format!("{at}/0"), item_schema));
                }
                _ => {}
            }
        }
    }
    assert!(top > 2000 && inner > 100, "{top} {inner}");
}

#[test]
fn a_value_outside_its_enum_is_reported_at_its_pointer() {
    let (v, schemas) = (validator(), schemas());
    let mut checked = 0;
    for c in bfcl_calls() {
        let properties = &schemas[c.function_name.as_str()]["properties"];
        for (name, value) in args(&c) {
            let schema = &properties[name];
            let (at, enumerated) = match (schema.get("enum"), value) {
                (Some(_), _) => (format!("/{name}"), schema),
                (None, Value::Array(items))
                    if !items.is_empty() && schema["items"].get("enum").is_some() =>
                {
                    (format!("/{name}/0"), &schema["items"])
                }
                _ => continue,
            };
            assert!(fits(enumerated, &json!("not-in-enum")), "{enumerated}");
            let mut a = c.arguments.clone();
            *a.pointer_mut(&at).unwrap() = json!("not-in-enum");
            let faults = v.validate(&c.function_name, &a);
            assert_eq!(faults.len(), 1, "{}: {faults:?}", c.source);
            assert_eq!(faults[0].pointer, at);
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked}");
}

#[test]
fn integers_for_float_parameters_are_valid_and_strings_are_not() {
    let v = validator();
    // math.hypot: x, y, z are integers; calculate_area_under_curve's interval is floats.
    assert!(v
        .validate(
            "calculate_area_under_curve",
            &json!({"function": "x**2", "interval": [1, 3]})
        )
        .is_empty());
    let pointers = fault_pointers(
        &v,
        "calculate_area_under_curve",
        &json!({"function": "x", "interval": ["1", 3.0]}),
    );
    assert_eq!(pointers, ["/interval/0"]);
    assert!(v
        .validate("math.hypot", &json!({"x": 4.0, "y": 5}))
        .is_empty());
    assert_eq!(
        fault_pointers(&v, "math.hypot", &json!({"x": 4.5, "y": 5})),
        ["/x"]
    );
}

#[test]
fn unknown_functions_and_bad_argument_text_are_one_fault_at_the_root() {
    let v = validator();
    let faults = v.validate("no.such.function", &json!({}));
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].pointer, "");
    assert!(
        faults[0].message.contains("unknown function"),
        "{}",
        faults[0].message
    );
    assert!(v
        .validate("math.hypot", &json!("{\"x\": 1, \"y\": 2}"))
        .is_empty());
    assert_eq!(fault_pointers(&v, "math.hypot", &json!("{\"x\": 1,")), [""]);
    assert_eq!(fault_pointers(&v, "math.hypot", &json!([1, 2])), [""]);
}
