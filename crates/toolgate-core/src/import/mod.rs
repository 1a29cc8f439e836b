//! Importing tool definitions written for other runtimes (MCP tools, OpenAI functions, the
//! BFCL dialect) as toolgate specs, with their schemas normalised into JSON Schema 2020-12.
//!
//! A definition goes through these steps, in order:
//!
//! 1. [`parse_definitions`]: text (a JSON array, JSON lines, BFCL wrappers, an MCP
//!    `tools/list` result) into definitions with their location.
//! 2. dialect: given, or detected for each definition ([`Dialect::Auto`]).
//! 3. fields: the dialect's names for name, title, description, input and output schema and
//!    effects; effects are [`Effects::side_effecting`](crate::Effects::side_effecting) unless
//!    MCP annotations say more (see [`mcp`]).
//! 4. name: checked against MCP's rule (1 to 128 of `A-Za-z0-9_.-`, so BFCL's dotted names
//!    are kept); an invalid name is an error, never renamed.
//! 5. [`normalize_schema`]: foreign types mapped, `optional` folded into `required`, objects
//!    closed (input only), defaults that do not fit dropped; every change is a [`Warning`].
//! 6. root and compile: each schema's root must be `"type": "object"` and it must compile
//!    with [`CompiledSchema`](crate::schema::CompiledSchema), so an [`Imported`] spec always
//!    registers.
//!
//! [`CallValidator`] then checks recorded calls against the imported input schemas.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::import::{import_definition, Dialect};
//!
//! let def = json!({"name": "weather.get", "parameters": {"type": "dict",
//!     "properties": {"city": {"type": "String"}, "days": {"type": "integer", "optional": true}},
//!     "required": ["city"]}});
//! let imported = import_definition(&def, Dialect::Auto).unwrap();
//! assert_eq!(imported.dialect, Dialect::Bfcl);
//! assert_eq!(
//!     imported.spec.input_schema,
//!     json!({"type": "object", "additionalProperties": false, "required": ["city"],
//!            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}})
//! );
//! let pointers: Vec<&str> = imported.warnings.iter().map(|w| w.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/parameters/type", "/parameters/properties/city/type",
//!     "/parameters/properties/days/optional", "/parameters"]);
//! ```

mod anthropic;
mod bfcl;
mod detect;
mod error;
mod fields;
mod gemini;
pub mod mcp;
mod normalize;
mod openai;
mod parse;
mod validate;
mod warning;

pub use error::{ImportError, Location};
pub use normalize::{normalize_schema, NormalizeOptions, DRAFT_2020_12, MAX_SCHEMA_DEPTH};
pub use parse::{parse_definitions, ParsedDefinition, MAX_INPUT_BYTES};
pub use validate::CallValidator;
pub use warning::Warning;

use crate::spec::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// The dialect a definition is written in. Serialized in `snake_case` (`"open_ai"` is also
/// read as `"openai"` by [`std::str::FromStr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// An MCP tool: `{"name", "title", "description", "inputSchema", "outputSchema",
    /// "annotations"}` (specification 2025-11-25, "Tools").
    Mcp,
    /// An OpenAI function tool, Chat Completions
    /// (`{"type": "function", "function": {"name", "description", "parameters", "strict"}}`)
    /// or Responses (`{"type": "function", "name", "description", "parameters", "strict"}`).
    OpenAi,
    /// A BFCL function: `{"name", "description", "parameters", "response"}` in BFCL's schema
    /// dialect, possibly inside a `{"source", "function"}` wrapper.
    Bfcl,
    /// An Anthropic tool: `{"name", "description", "input_schema", "input_examples"}`.
    Anthropic,
    /// A Gemini function declaration: `{"name", "description", "parameters"}` (OpenAPI
    /// subset) or `parametersJsonSchema`, and the response schema.
    Gemini,
    /// Detected for each definition (in this order: Anthropic's `input_schema`; a top-level
    /// `type` is OpenAI; MCP's `inputSchema`/`outputSchema`/`annotations`; Gemini's
    /// `parametersJsonSchema`/`responseJsonSchema`/`behavior`, a declaration inside
    /// `functionDeclarations`, or `parameters` whose type is written in upper case
    /// (`"OBJECT"`); then BFCL's `parameters`/`response`; then a bare `name` as MCP).
    Auto,
}

impl Dialect {
    /// The name used on command lines: `mcp`, `openai`, `bfcl`, `anthropic`, `gemini`,
    /// `auto`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::Mcp => "mcp",
            Dialect::OpenAi => "openai",
            Dialect::Bfcl => "bfcl",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Auto => "auto",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dialect name that is not one of `mcp`, `openai`, `bfcl`, `anthropic`, `gemini`, `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect {0:?}: expected mcp, openai, openai-responses, bfcl, anthropic, gemini or auto")]
pub struct UnknownDialect(pub String);

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    /// Reads `mcp`, `openai` (or `open_ai`, `openai-responses`: both OpenAI shapes are
    /// one dialect), `bfcl`, `anthropic`, `gemini`, `auto`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "mcp" => Ok(Dialect::Mcp),
            "openai" | "open_ai" | "openai-responses" | "openai_responses" => Ok(Dialect::OpenAi),
            "bfcl" => Ok(Dialect::Bfcl),
            "anthropic" => Ok(Dialect::Anthropic),
            "gemini" => Ok(Dialect::Gemini),
            "auto" => Ok(Dialect::Auto),
            _ => Err(UnknownDialect(s.to_string())),
        }
    }
}

/// How definitions are imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Map MCP annotations onto effects as MCP defines them (for a server the host vouches
    /// for). Off by default: annotations can then only tighten the strictest effects.
    pub trust_annotations: bool,
    /// Close input object schemas that declare properties (see [`NormalizeOptions`]). On by
    /// default.
    pub close_objects: bool,
}

impl Default for ImportOptions {
    /// Untrusted annotations, closed objects.
    fn default() -> Self {
        ImportOptions {
            trust_annotations: false,
            close_objects: true,
        }
    }
}

impl ImportOptions {
    /// Sets [`ImportOptions::trust_annotations`].
    #[must_use]
    pub fn with_trusted_annotations(mut self, trusted: bool) -> Self {
        self.trust_annotations = trusted;
        self
    }

    /// Sets [`ImportOptions::close_objects`].
    #[must_use]
    pub fn with_closed_objects(mut self, close: bool) -> Self {
        self.close_objects = close;
        self
    }
}

/// One imported definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The spec: name as given, schemas normalised and known to compile, effects as the
    /// dialect allows (the strictest unless trusted MCP annotations say otherwise), and the
    /// builder's defaults for timeout, result cap and version.
    pub spec: ToolSpec,
    /// Every change normalisation made, and every part of the definition that was ignored,
    /// in the order met.
    pub warnings: Vec<Warning>,
    /// The `source` (or `id`) of the wrapper the definition came in, if any.
    pub source: Option<String>,
    /// The dialect it was read as (never [`Dialect::Auto`]).
    pub dialect: Dialect,
}

/// Imports one definition with the default [`ImportOptions`].
///
/// `definition` is a definition of `dialect` (or of any, for [`Dialect::Auto`]), or a BFCL
/// wrapper `{"source": ..., "function": {...}}` around one; warning and error pointers are
/// into `definition` as given (so under `/function` for a wrapper).
///
/// # Errors
/// [`ImportError::Definition`] with the pointer of the fault: the definition is not an
/// object; no dialect fits; the name is missing, not a string, or breaks MCP's rule; an
/// OpenAI tool is not of type `function`; a schema is not an object, its root is not
/// `"type": "object"`, it nests more than [`MAX_SCHEMA_DEPTH`] deep, or it does not compile.
pub fn import_definition(definition: &Value, dialect: Dialect) -> Result<Imported, ImportError> {
    import_definition_with(definition, dialect, &ImportOptions::default())
}

/// Imports one definition with `options` (see [`import_definition`]).
///
/// # Errors
/// As [`import_definition`].
pub fn import_definition_with(
    definition: &Value,
    dialect: Dialect,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let (definition, pointer, source) = match detect::unwrap(definition) {
        Some(wrapped) => (wrapped.function, "/function", wrapped.source),
        None => (definition, "", None),
    };
    let map = fields::object(definition, pointer)?;
    let name = map.get("name").and_then(Value::as_str).or_else(|| {
        map.get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
    });
    let named = |e: ImportError| match name {
        Some(name) => e.named(name),
        None => e,
    };
    let dialect = match dialect {
        Dialect::Auto => detect::detect(map).ok_or_else(|| {
            ImportError::definition(
                pointer,
                "cannot tell the dialect: expected an MCP tool (name, inputSchema), an OpenAI \
                 function tool (\"type\": \"function\") or a BFCL function (name, parameters)",
            )
        })?,
        given => given,
    };
    let mut warnings = Vec::new();
    let fields = match dialect {
        Dialect::Mcp => mcp::fields(map, pointer, options, &mut warnings),
        Dialect::OpenAi => openai::fields(map, pointer, &mut warnings),
        Dialect::Anthropic => anthropic::fields(map, pointer, &mut warnings),
        Dialect::Gemini => gemini::fields(map, pointer, &mut warnings),
        // `detect` never answers `Auto`.
        Dialect::Bfcl | Dialect::Auto => bfcl::fields(map, pointer, &mut warnings),
    }
    .map_err(named)?;
    let spec = fields::assemble(fields, options, &mut warnings).map_err(named)?;
    Ok(Imported {
        spec,
        warnings,
        source,
        dialect,
    })
}

/// Reads and imports every definition in `text` ([`parse_definitions`], then
/// [`import_definition_with`] for each), keeping each wrapper's source.
///
/// # Errors
/// The first error, located: [`ImportError::Syntax`], [`ImportError::TooLarge`], or an
/// [`ImportError::Definition`] with the line and index of the definition, including a name
/// defined twice.
pub fn import_definitions(
    text: &str,
    dialect: Dialect,
    options: &ImportOptions,
) -> Result<Vec<Imported>, ImportError> {
    let parsed = parse_definitions(text)?;
    let mut out = Vec::with_capacity(parsed.len());
    let mut seen: HashMap<String, crate::import::Location> = HashMap::new();
    for p in parsed {
        let dialect = match (dialect, p.dialect) {
            (Dialect::Auto, Some(hint)) => hint,
            (given, _) => given,
        };
        let mut imported = import_definition_with(&p.definition, dialect, options)
            .map_err(|e| e.at(p.location))?;
        if let Some(first) = seen.get(&*imported.spec.name) {
            return Err(ImportError::definition(
                "/name",
                format!("defined twice (first at {first})"),
            )
            .named(&imported.spec.name)
            .at(p.location));
        }
        seen.insert(imported.spec.name.to_string(), p.location);
        if p.source.is_some() {
            imported.source = p.source;
        }
        out.push(imported);
    }
    Ok(out)
}
