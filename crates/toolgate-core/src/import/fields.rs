//! What every dialect reads from a definition, and how it becomes a [`ToolSpec`].
//!
//! Each dialect module reads its own field names into [`Fields`]; [`assemble`] then checks
//! the name (never renamed), normalises the input schema (closed objects) and the output
//! schema (left open), checks that each root is an object schema, and compiles both with
//! [`CompiledSchema::compile`] so that an [`Imported`](super::Imported) spec always registers.

use super::error::{kind, ImportError};
use super::normalize::{normalize_schema, NormalizeOptions};
use super::warning::{child, Warning};
use super::ImportOptions;
use crate::error::RegistrationError;
use crate::schema::CompiledSchema;
use crate::spec::{validate_name, Effects, Risk, ToolSpec};
use serde_json::{json, Map, Value};

/// A schema inside a definition and its pointer there.
pub(crate) struct SchemaField<'a> {
    pub value: &'a Value,
    pub pointer: String,
}

/// The parts of a definition, whatever the dialect called them.
pub(crate) struct Fields<'a> {
    pub name: &'a str,
    pub name_pointer: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input: Option<SchemaField<'a>>,
    /// Warning to give when there is no input schema: the pointer where it was expected and
    /// the message. `None` when the dialect allows leaving it out.
    pub missing_input: Option<(String, &'static str)>,
    pub output: Option<SchemaField<'a>>,
    pub effects: Effects,
    /// Example arguments (Anthropic's `input_examples`) and their pointer.
    pub examples: Option<SchemaField<'a>>,
}

/// The definition as an object.
pub(crate) fn object<'a>(
    definition: &'a Value,
    pointer: &str,
) -> Result<&'a Map<String, Value>, ImportError> {
    definition.as_object().ok_or_else(|| {
        ImportError::definition(
            pointer,
            format!(
                "a tool definition must be a JSON object, found {}",
                kind(definition)
            ),
        )
    })
}

/// The string `name`.
///
/// # Errors
/// When it is missing or not a string.
pub(crate) fn name<'a>(map: &'a Map<String, Value>, pointer: &str) -> Result<&'a str, ImportError> {
    match map.get("name") {
        Some(Value::String(name)) => Ok(name),
        Some(other) => Err(ImportError::definition(
            child(pointer, "name"),
            format!("\"name\" must be a string, found {}", kind(other)),
        )),
        None => Err(ImportError::definition(
            pointer,
            "the definition has no \"name\"",
        )),
    }
}

/// An optional string field; another JSON type is ignored with a warning.
pub(crate) fn text(
    map: &Map<String, Value>,
    key: &str,
    pointer: &str,
    warnings: &mut Vec<Warning>,
) -> Option<String> {
    match map.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => {
            warnings.push(Warning::new(
                child(pointer, key),
                format!("{key} must be a string, found {}; ignored", kind(other)),
            ));
            None
        }
    }
}

/// An optional schema field. `null` counts as absent.
///
/// # Errors
/// When it is present and not a JSON object.
pub(crate) fn schema<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    pointer: &str,
) -> Result<Option<SchemaField<'a>>, ImportError> {
    let at = child(pointer, key);
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::Object(_)) => Ok(Some(SchemaField { value, pointer: at })),
        Some(other) => Err(ImportError::definition(
            at,
            format!(
                "{key:?} must be a JSON Schema object, found {}",
                kind(other)
            ),
        )),
    }
}

/// Warns about every key of `map` that is not in `known`.
pub(crate) fn ignore_unknown(
    map: &Map<String, Value>,
    known: &[&str],
    pointer: &str,
    dialect: &str,
    warnings: &mut Vec<Warning>,
) {
    for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
        warnings.push(Warning::new(
            child(pointer, key),
            format!("{key:?} is not part of {dialect} tool definitions; ignored"),
        ));
    }
}

/// The risk class that goes with `effects`: `external` for open-world tools, `read` for
/// read-only ones, `write` otherwise.
pub(crate) fn risk_of(effects: &Effects) -> Risk {
    if effects.open_world {
        Risk::External
    } else if effects.read_only {
        Risk::Read
    } else {
        Risk::Write
    }
}

/// Builds the spec.
///
/// # Errors
/// An invalid name (pointer to the name), a schema that is not an object schema, nests too
/// deeply or does not compile (pointer into the schema).
pub(crate) fn assemble(
    fields: Fields<'_>,
    options: &ImportOptions,
    warnings: &mut Vec<Warning>,
) -> Result<ToolSpec, ImportError> {
    let name = fields.name;
    validate_name(name).map_err(|e| {
        ImportError::definition(
            &fields.name_pointer,
            format!("{e}; toolgate does not rename tools, so fix the name in the definition"),
        )
    })?;
    let input_options = NormalizeOptions {
        close_objects: options.close_objects,
    };
    let input = match &fields.input {
        Some(field) => root_schema(field, input_options, warnings)?,
        None => {
            if let Some((pointer, message)) = &fields.missing_input {
                warnings.push(Warning::new(pointer, *message));
            }
            if options.close_objects {
                json!({"type": "object", "properties": {}, "additionalProperties": false})
            } else {
                json!({"type": "object", "properties": {}})
            }
        }
    };
    compile(name, "inputSchema", &input, fields.input.as_ref())?;
    let output = match &fields.output {
        Some(field) => {
            let schema = root_schema(field, NormalizeOptions::OUTPUT, warnings)?;
            compile(name, "outputSchema", &schema, Some(field))?;
            Some(schema)
        }
        None => None,
    };
    let mut builder = ToolSpec::builder(name)
        .description(fields.description.unwrap_or_default())
        .input_schema(input.clone())
        .effects(fields.effects)
        .risk(risk_of(&fields.effects));
    if let Some(title) = fields.title {
        builder = builder.title(title);
    }
    if let Some(output) = output {
        builder = builder.output_schema(output);
    }
    if let Some(examples) = &fields.examples {
        builder = self::examples(builder, name, examples, &input, warnings);
    }
    builder
        .build()
        .map_err(|e| ImportError::definition(&fields.name_pointer, e.to_string()))
}

/// Adds each example that is an arguments object valid against `input`; warns about the others.
fn examples(
    mut builder: crate::spec::ToolSpecBuilder,
    name: &str,
    field: &SchemaField<'_>,
    input: &Value,
    warnings: &mut Vec<Warning>,
) -> crate::spec::ToolSpecBuilder {
    let Some(list) = field.value.as_array() else {
        warnings.push(Warning::new(
            &field.pointer,
            format!(
                "examples must be an array of arguments objects, found {}; ignored",
                kind(field.value)
            ),
        ));
        return builder;
    };
    let compiled = CompiledSchema::compile(name, "inputSchema", input).ok();
    for (i, example) in list.iter().enumerate() {
        let at = child(&field.pointer, &i.to_string());
        let faults = compiled
            .as_ref()
            .map(|c| c.faults(example))
            .unwrap_or_default();
        if !example.is_object() {
            warnings.push(Warning::new(
                at,
                format!(
                    "an example must be an arguments object, found {}; dropped",
                    kind(example)
                ),
            ));
        } else if let Some(first) = faults.first() {
            warnings.push(Warning::new(
                at,
                format!(
                    "the example does not fit the input schema ({}: {}); dropped",
                    first.pointer, first.message
                ),
            ));
        } else {
            builder = builder.example(format!("example {}", i + 1), example.clone());
        }
    }
    builder
}

/// A normalised schema whose root is `"type": "object"`.
fn root_schema(
    field: &SchemaField<'_>,
    options: NormalizeOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Value, ImportError> {
    let mut schema = normalize_schema(field.value, &field.pointer, options, warnings)?;
    let Some(root) = schema.as_object_mut() else {
        return Err(ImportError::definition(
            &field.pointer,
            "a tool schema must be a JSON object",
        ));
    };
    let type_at = child(&field.pointer, "type");
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            warnings.push(Warning::new(
                &field.pointer,
                "the root has no type; set to \"object\" (arguments are an object)",
            ));
            root.insert("type".into(), "object".into());
        }
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            warnings.push(Warning::new(
                type_at,
                format!(
                    "the root type {} narrowed to \"object\" (arguments are an object)",
                    Value::Array(types.clone())
                ),
            ));
            root.insert("type".into(), "object".into());
        }
        Some(other) => {
            return Err(ImportError::definition(
                type_at,
                format!("the root of a tool schema must have \"type\": \"object\", found {other}"),
            ))
        }
    }
    Ok(schema)
}

/// Compiles `schema` as `which`; a fault is reported at its pointer inside the definition.
fn compile(
    name: &str,
    which: &'static str,
    schema: &Value,
    field: Option<&SchemaField<'_>>,
) -> Result<(), ImportError> {
    let base = field.map_or("", |f| f.pointer.as_str());
    match CompiledSchema::compile(name, which, schema) {
        Ok(_) => Ok(()),
        Err(RegistrationError::InvalidSchema {
            pointer, message, ..
        }) => Err(ImportError::definition(
            format!("{base}{pointer}"),
            format!("the normalised {which} does not compile: {message}"),
        )),
        Err(other) => Err(ImportError::definition(base, other.to_string())),
    }
}
