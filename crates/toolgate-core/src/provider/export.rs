//! Tool definitions in each provider's shape.
//!
//! | provider | one tool | the request's `tools` ([`Export::request_tools`]) |
//! |---|---|---|
//! | MCP | `{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}` | `{"tools": [...]}` (a `tools/list` result) |
//! | OpenAI Chat Completions | `{"type": "function", "function": {"name", "description", "parameters", "strict"}}` | `[...]` |
//! | OpenAI Responses | `{"type": "function", "name", "description", "parameters", "strict"}` | `[...]` |
//! | Anthropic | `{"name", "description", "input_schema", "input_examples"}` | `[...]` |
//! | Gemini | `{"name", "description", "parameters"}` (see [`gemini_schema`](super::gemini_schema)) | `[{"functionDeclarations": [...]}]` |
//!
//! Names follow the provider's rule ([`NameMap`]). OpenAI's `strict` is sent when asked for
//! ([`ExportOptions::strict`]) and always on Responses, where it defaults to `true`: a tool
//! whose schema strict mode cannot express is sent with `"strict": false` and its schema as
//! it is, with a warning. Anthropic's `input_examples` are the tool's examples' arguments.
//! A Gemini tool without arguments has no `parameters` (Gemini refuses an object schema
//! without properties there).

use super::codec::Codec;
use super::gemini_schema::gemini_schema;
use super::names::NameMap;
use super::nulls::NullPaths;
use super::strict::strict_schema;
use super::Provider;
use crate::error::RegistrationError;
use crate::import::Warning;
use crate::registry::Registry;
use crate::spec::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// How tools are exported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// OpenAI's strict mode (Chat Completions and Responses): schemas rewritten for it and
    /// `"strict": true` (see [`strict`](super::strict)). Other providers ignore it.
    pub strict: bool,
}

impl ExportOptions {
    /// Strict mode on.
    pub fn strict() -> Self {
        ExportOptions { strict: true }
    }

    /// Sets [`ExportOptions::strict`].
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// One change an export made to a tool, or one thing of it the provider cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportWarning {
    /// The tool's registry name.
    pub tool: String,
    /// JSON pointer into the tool's input schema (`""` for the whole tool).
    pub pointer: String,
    /// What was changed and why.
    pub message: String,
}

impl std::fmt::Display for ExportWarning {
    /// `tool "/pointer": message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?}: {}", self.tool, self.pointer, self.message)
    }
}

/// Tools in one provider's shape, and what the way back in needs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Export {
    /// The provider.
    pub provider: Provider,
    /// One definition per tool, in the order given.
    pub tools: Vec<Value>,
    /// Every change, tool by tool.
    pub warnings: Vec<ExportWarning>,
    /// Reads this provider's calls to these tools and writes their results.
    pub codec: Codec,
}

impl Export {
    /// The value of the request's `tools` field (see the module documentation); for MCP, a
    /// `tools/list` result.
    pub fn request_tools(&self) -> Value {
        match self.provider {
            Provider::Mcp => json!({"tools": self.tools}),
            Provider::Gemini => json!([{"functionDeclarations": self.tools}]),
            _ => Value::Array(self.tools.clone()),
        }
    }
}

/// Exports `specs` (each name once) for `provider`. The codec knows these tools only; to
/// answer calls to tools a profile defers, use [`export_profile`].
pub fn export<'a, I>(specs: I, provider: Provider, options: ExportOptions) -> Export
where
    I: IntoIterator<Item = &'a ToolSpec>,
{
    let specs: Vec<&ToolSpec> = specs.into_iter().collect();
    export_with(&specs, &specs, provider, options)
}

/// Exports the tools `profile` lists (every tool for `None`; deferred tools are left out:
/// `search_tools` finds them) for `provider`; the codec also maps the names of the deferred
/// tools the profile can call.
///
/// # Errors
/// [`RegistrationError::InvalidProfile`] for an unknown profile.
pub fn export_profile(
    registry: &Registry,
    profile: Option<&str>,
    provider: Provider,
    options: ExportOptions,
) -> Result<Export, RegistrationError> {
    let listed = registry.list(profile)?;
    let visible = registry.list_visible(profile)?;
    Ok(export_with(&listed, &visible, provider, options))
}

fn export_with(
    listed: &[&ToolSpec],
    visible: &[&ToolSpec],
    provider: Provider,
    options: ExportOptions,
) -> Export {
    let names = NameMap::new(provider, visible.iter().map(|s| s.name.clone()));
    let strict =
        options.strict && matches!(provider, Provider::OpenAiChat | Provider::OpenAiResponses);
    let mut warnings = Vec::new();
    let mut nulls: HashMap<std::sync::Arc<str>, NullPaths> = HashMap::new();
    let mut tools = Vec::with_capacity(listed.len());
    let listed_names: std::collections::HashSet<&str> = listed.iter().map(|s| &*s.name).collect();
    for spec in visible {
        let listed_here = listed_names.contains(&*spec.name);
        let mut own: Vec<Warning> = Vec::new();
        let given = names.provider_name(&spec.name).to_string();
        if given != *spec.name {
            own.push(Warning::new(
                "",
                format!("named {given:?} for {provider} (its rule for names is stricter than MCP's); calls to {given:?} map back"),
            ));
        }
        let tool = match provider {
            Provider::Mcp => mcp(spec),
            Provider::OpenAiChat | Provider::OpenAiResponses => {
                let (parameters, is_strict) = if strict {
                    match strict_schema(&spec.input_schema, &mut own) {
                        Ok(s) => {
                            if !s.nulls.is_empty() {
                                nulls.insert(spec.name.clone(), s.nulls);
                            }
                            (s.schema, true)
                        }
                        Err(e) => {
                            own.push(Warning::new(
                                &e.pointer,
                                format!("{}; the tool is sent with strict: false and its schema as it is", e.message),
                            ));
                            (spec.input_schema.clone(), false)
                        }
                    }
                } else {
                    (spec.input_schema.clone(), false)
                };
                openai(
                    spec,
                    &given,
                    parameters,
                    provider,
                    strict.then_some(is_strict),
                )
            }
            Provider::Anthropic => anthropic(spec, &given),
            Provider::Gemini => gemini(spec, &given, &mut own),
        };
        if listed_here {
            tools.push(tool);
            warnings.extend(own.into_iter().map(|w| ExportWarning {
                tool: spec.name.to_string(),
                pointer: w.pointer,
                message: w.message,
            }));
        }
    }
    Export {
        provider,
        tools,
        warnings,
        codec: Codec::new(provider, names, nulls),
    }
}

fn description(spec: &ToolSpec) -> Option<Value> {
    (!spec.description.is_empty()).then(|| Value::String(spec.description.clone()))
}

fn mcp(spec: &ToolSpec) -> Value {
    let e = &spec.effects;
    let mut annotations = Map::new();
    if let Some(t) = &spec.title {
        annotations.insert("title".into(), t.clone().into());
    }
    annotations.insert("readOnlyHint".into(), e.read_only.into());
    annotations.insert(
        "destructiveHint".into(),
        (e.destructive && !e.read_only).into(),
    );
    annotations.insert(
        "idempotentHint".into(),
        (e.idempotent || e.read_only).into(),
    );
    annotations.insert("openWorldHint".into(), e.open_world.into());
    let mut out = Map::new();
    out.insert("name".into(), spec.name.to_string().into());
    if let Some(t) = &spec.title {
        out.insert("title".into(), t.clone().into());
    }
    out.insert("description".into(), spec.description.clone().into());
    out.insert("inputSchema".into(), spec.input_schema.clone());
    if let Some(o) = &spec.output_schema {
        out.insert("outputSchema".into(), o.clone());
    }
    out.insert("annotations".into(), Value::Object(annotations));
    Value::Object(out)
}

fn openai(
    spec: &ToolSpec,
    name: &str,
    parameters: Value,
    provider: Provider,
    strict: Option<bool>,
) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), name.into());
    if let Some(d) = description(spec) {
        function.insert("description".into(), d);
    }
    function.insert("parameters".into(), parameters);
    match (provider, strict) {
        (_, Some(s)) => {
            function.insert("strict".into(), s.into());
        }
        // the Responses API's default is true: say false for a schema not made for it
        (Provider::OpenAiResponses, None) => {
            function.insert("strict".into(), false.into());
        }
        _ => {}
    }
    if provider == Provider::OpenAiResponses {
        let mut out = Map::new();
        out.insert("type".into(), "function".into());
        out.extend(function);
        Value::Object(out)
    } else {
        json!({"type": "function", "function": function})
    }
}

fn anthropic(spec: &ToolSpec, name: &str) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), name.into());
    if let Some(d) = description(spec) {
        out.insert("description".into(), d);
    }
    out.insert("input_schema".into(), spec.input_schema.clone());
    if !spec.examples.is_empty() {
        out.insert(
            "input_examples".into(),
            spec.examples.iter().map(|e| e.arguments.clone()).collect(),
        );
    }
    Value::Object(out)
}

fn gemini(spec: &ToolSpec, name: &str, warnings: &mut Vec<Warning>) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), name.into());
    if let Some(d) = description(spec) {
        out.insert("description".into(), d);
    }
    let takes_arguments = spec
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
        || spec.input_schema.get("additionalProperties") != Some(&Value::Bool(false));
    if takes_arguments {
        out.insert(
            "parameters".into(),
            gemini_schema(&spec.input_schema, warnings),
        );
    }
    Value::Object(out)
}
