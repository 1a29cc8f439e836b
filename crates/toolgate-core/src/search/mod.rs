//! Tool search: finding the right tool among thousands by what a request asks for, and the
//! `search_tools` tool that lets a model do it.
//!
//! A [`SearchIndex`] holds one document per tool with seven fields, each weighted
//! ([`SearchOptions`]): the name, the description (and title), the parameters' names, their
//! descriptions, their enum values, the tags and the examples. Text is cut into terms by
//! [`tokenize`] (identifiers split, stop words dropped, Snowball stems) and ranked with BM25F
//! ([`index`](self)), a request of several clauses scored clause by clause too.
//!
//! The weights were tuned on half of BFCL's tool-retrieval set and checked on the other half
//! (BENCHMARKS.md has the figures and the command).
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::search::{SearchIndex, SearchOptions};
//! use toolgate_core::ToolSpec;
//!
//! let specs = [
//!     ToolSpec::builder("weather.get").description("Current weather of a city.").build().unwrap(),
//!     ToolSpec::builder("send_mail").description("Sends an email.").build().unwrap(),
//! ];
//! let index = SearchIndex::build(specs.iter().map(|s| (s, u64::MAX)), &SearchOptions::default());
//! let hits = index.search("what's the weather like in Oslo?", 5, u64::MAX);
//! assert_eq!(hits[0].name.as_ref(), "weather.get");
//! ```

pub mod eval;
mod index;
pub mod tokenize;
mod tool;

pub(crate) use tool::base_spec;
pub use tool::{FoundTool, SearchArgs, SearchOutput, SearchTools, SEARCH_TOOLS};

use crate::spec::ToolSpec;
use index::{Document, Index};
use serde_json::Value;
use std::sync::Arc;

/// The fields of a tool's document, in the order of [`SearchOptions::weights`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The name (`weather.get` as `weather get`).
    Name,
    /// The description and the title.
    Description,
    /// The parameters' names, at every depth.
    ParameterNames,
    /// The parameters' descriptions.
    ParameterDescriptions,
    /// The string values of every `enum` and `const`.
    EnumValues,
    /// The tags.
    Tags,
    /// The examples' descriptions and the strings in their arguments.
    Examples,
}

impl Field {
    /// The number of fields.
    pub const COUNT: usize = 7;
}

/// How the index weighs what it finds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// The weight of each [`Field`], in its order.
    pub weights: [f32; Field::COUNT],
    /// BM25's length normalisation of each field (0 none, 1 full).
    pub b: [f32; Field::COUNT],
    /// BM25's term frequency saturation.
    pub k1: f32,
    /// Added to a tool's score (on the scale where 1.0 is the best whole-request match)
    /// when the request writes the tool's name as an identifier: the whole name,
    /// case-insensitive, between characters that are not letters, digits, `_`, `.` or `-`,
    /// and holding a `_`, a `.` or a capital after its first letter
    /// (`use 'get_current_time'`, `call getWeather`), so a plain word such as `derivative`
    /// that is also a tool's name gets nothing. 0 turns it off.
    pub name_mention: f32,
}

impl Default for SearchOptions {
    /// The weights tuned on BFCL's tool-retrieval set (BENCHMARKS.md): name 3, description
    /// 1, parameter names 1, parameter descriptions 0.6, enum values 0.3, tags 1, examples
    /// 0.5; `b` 0.5 for the short fields and 0.75 for prose; `k1` 1.2; a named tool 1.0.
    fn default() -> Self {
        SearchOptions {
            weights: [3.0, 1.0, 1.0, 0.6, 0.3, 1.0, 0.5],
            b: [0.5, 0.75, 0.5, 0.75, 0.5, 0.5, 0.75],
            k1: 1.2,
            name_mention: 1.0,
        }
    }
}

/// One tool found.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub name: Arc<str>,
    /// How well it matched: 1.0 for the best match of the whole request, more for a tool
    /// that also matches one clause of it well or that the request names.
    pub score: f32,
}

/// An index over tool definitions, each with the profiles (a bit each, as the registry
/// numbers them) that can see it.
#[derive(Debug)]
pub struct SearchIndex {
    index: Index,
    names: Vec<Arc<str>>,
    visible: Vec<u64>,
}

impl SearchIndex {
    /// Indexes `tools`: each spec with the profile bits that can see it (`u64::MAX` for all).
    pub fn build<'a, I>(tools: I, options: &SearchOptions) -> SearchIndex
    where
        I: IntoIterator<Item = (&'a ToolSpec, u64)>,
    {
        let mut names = Vec::new();
        let mut visible = Vec::new();
        let mut documents = Vec::new();
        for (spec, mask) in tools {
            names.push(spec.name.clone());
            visible.push(mask);
            documents.push(document(spec));
        }
        SearchIndex {
            index: Index::build(&documents, options),
            names,
            visible,
        }
    }

    /// The tools a caller with profile bit `profile` can see that match `query`, best first,
    /// at most `limit`. Empty when no term of the query is in any tool.
    pub fn search(&self, query: &str, limit: usize, profile: u64) -> Vec<Hit> {
        let visible = |d: usize| self.visible[d] & profile != 0;
        self.index
            .search(query, limit, &visible)
            .into_iter()
            .map(|(d, score)| Hit {
                name: self.names[d].clone(),
                score,
            })
            .collect()
    }

    /// The number of tools indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A spec's text, field by field.
fn document(spec: &ToolSpec) -> Document {
    let mut d = Document::default();
    d.fields[Field::Name as usize] = spec.name.to_string();
    let mut description = spec.description.clone();
    if let Some(title) = &spec.title {
        description.push('\n');
        description.push_str(title);
    }
    d.fields[Field::Description as usize] = description;
    schema_text(&spec.input_schema, &mut d, 0);
    d.fields[Field::Tags as usize] = spec.tags.join(" ");
    let examples = &mut d.fields[Field::Examples as usize];
    for e in &spec.examples {
        examples.push_str(&e.description);
        examples.push('\n');
        strings(&e.arguments, examples, 0);
    }
    d
}

/// Parameter names, descriptions and enum values of a schema, at every depth (to 32).
fn schema_text(schema: &Value, d: &mut Document, depth: usize) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if depth > 32 {
        return;
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            push(&mut d.fields[Field::ParameterNames as usize], name);
            if let Some(text) = sub.get("description").and_then(Value::as_str) {
                push(&mut d.fields[Field::ParameterDescriptions as usize], text);
            }
        }
    }
    for key in ["enum", "const"] {
        if let Some(v) = map.get(key) {
            strings(v, &mut d.fields[Field::EnumValues as usize], 0);
        }
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" | "$defs" | "patternProperties" => {
                for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                    schema_text(sub, d, depth + 1);
                }
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" => {
                schema_text(value, d, depth + 1)
            }
            "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
                for sub in value.as_array().into_iter().flatten() {
                    schema_text(sub, d, depth + 1);
                }
            }
            _ => {}
        }
    }
}

fn push(field: &mut String, text: &str) {
    field.push_str(text);
    field.push('\n');
}

/// Every string in a JSON value (to 32 deep), one a line.
fn strings(value: &Value, out: &mut String, depth: usize) {
    if depth > 32 {
        return;
    }
    match value {
        Value::String(s) => push(out, s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out, depth + 1)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out, depth + 1)),
        _ => {}
    }
}
