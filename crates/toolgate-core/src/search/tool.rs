//! `search_tools`: the tool a model calls to find tools its profile can call but that are not
//! listed up front (deferred), or to find the right one among many.
//!
//! Arguments: `query` (what the tool should do, 1 to 2000 characters), `limit` (1 to 20,
//! default 5). Output: `{"tools": [{"name", "summary", "definition"}]}`, best first, where
//! `summary` is the description's first sentence and `definition` the tool's MCP definition
//! (`name`, `title`, `description`, `inputSchema`, `outputSchema`). Only tools the caller's
//! profile can see are searched (deferred ones included); a tool found is called by its name
//! like any other, and the policy decides as for any call. Read-only, idempotent and
//! concurrency-safe.

use super::{SearchIndex, SearchOptions};
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::spec::{Effects, Risk, ToolSpec, ToolSpecBuilder};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The tool's name.
pub const SEARCH_TOOLS: &str = "search_tools";

/// The arguments of `search_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What the tool you need should do, in plain words, for example "convert an amount
    /// between currencies" or "send an email to a customer".
    #[schemars(length(min = 1, max = 2000))]
    pub query: String,
    /// How many tools to return, best first (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// What `search_tools` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// The tools found, best first; empty when nothing matched (try other words).
    pub tools: Vec<FoundTool>,
}

/// One tool found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundTool {
    /// Its name: call it by this name.
    pub name: String,
    /// The first sentence of its description.
    pub summary: String,
    /// Its full definition: `name`, `title`, `description`, `inputSchema`, `outputSchema`.
    pub definition: Value,
}

/// The `search_tools` tool over an index of the registry's tools.
pub struct SearchTools {
    index: SearchIndex,
    definitions: HashMap<Arc<str>, (String, Value)>,
    profiles: HashMap<String, u64>,
}

impl std::fmt::Debug for SearchTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchTools")
            .field("tools", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl SearchTools {
    /// Indexes `tools` (each spec with the profile bits that can see it) and names the
    /// profiles' bits (`profiles`: name to bit).
    pub fn new<'a, I>(tools: I, profiles: HashMap<String, u64>, options: &SearchOptions) -> Self
    where
        I: IntoIterator<Item = (&'a ToolSpec, u64)> + Clone,
    {
        let definitions = tools
            .clone()
            .into_iter()
            .map(|(spec, _)| {
                (
                    spec.name.clone(),
                    (summary(&spec.description), definition(spec)),
                )
            })
            .collect();
        SearchTools {
            index: SearchIndex::build(tools, options),
            definitions,
            profiles,
        }
    }

    /// The index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }
}

impl TypedTool for SearchTools {
    type Args = SearchArgs;
    type Output = SearchOutput;

    fn spec(&self) -> ToolSpecBuilder {
        base_spec()
    }

    async fn call(&self, args: SearchArgs, ctx: ToolContext) -> Result<SearchOutput, ToolError> {
        self.run(args, ctx)
    }
}

/// The spec of `search_tools`, without schemas.
pub(crate) fn base_spec() -> ToolSpecBuilder {
    ToolSpec::builder(SEARCH_TOOLS)
        .title("Search tools")
        .description(
            "Finds the tools you can call by what they do: searches every tool's name, \
                 description, parameters, tags and examples, including tools not listed up \
                 front. Returns the best matches, best first, each with its name, a one-line \
                 summary and its full definition; call a tool it returns by that name. Use it \
                 when no listed tool fits the task; describe the task in plain words.",
        )
        .effects(Effects::read_only())
        .risk(Risk::Read)
        .tag("meta")
}

impl SearchTools {
    fn run(&self, args: SearchArgs, ctx: ToolContext) -> Result<SearchOutput, ToolError> {
        let bit = self.profiles.get(ctx.profile()).copied().unwrap_or(0);
        let limit = args.limit.unwrap_or(5).clamp(1, 20) as usize;
        let tools = self
            .index
            .search(&args.query, limit, bit)
            .into_iter()
            .filter_map(|hit| {
                let (summary, definition) = self.definitions.get(&hit.name)?;
                Some(FoundTool {
                    name: hit.name.to_string(),
                    summary: summary.clone(),
                    definition: definition.clone(),
                })
            })
            .collect();
        Ok(SearchOutput { tools })
    }
}

/// The first sentence of a description (to `. ` or the end of its first line), at most 200
/// characters.
pub(crate) fn summary(description: &str) -> String {
    let line = description.trim_start().lines().next().unwrap_or("");
    let sentence = match line.find(". ") {
        Some(i) => &line[..=i],
        None => line,
    };
    match sentence.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &sentence[..cut]),
        None => sentence.to_string(),
    }
}

/// The MCP definition the model needs to call a tool.
fn definition(spec: &ToolSpec) -> Value {
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
    Value::Object(out)
}
