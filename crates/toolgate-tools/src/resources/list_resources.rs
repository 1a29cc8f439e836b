//! `list_resources`: the workspace's files as MCP resources, a page at a time, for
//! `resources/list` and for completing the `path` of the `file:///{path}` template.
//!
//! The sequence: a workspace-confined walk of the root (`src/walk.rs`: ignore files
//! respected, hidden files and `.git` skipped, links never followed), keeping each file whose
//! read the policy does not deny outright (a `path:` rule on a directory holds for the files
//! found below it, as for `glob`) and, with a `prefix`, only paths that start with it (a file
//! whose path is not UTF-8 is left out: no `file://` URI would read it back); at most
//! [`MAX_WALKED`] files are kept, sorted in byte order; the page is the [`PAGE`] first after
//! `cursor` (the last path of the previous page), with `next_cursor` when more follow.

use super::uri;
use crate::blocking;
use crate::topk::TopK;
use crate::walk::{Walk, WalkOptions};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::registry::UNLISTED_TAG;
use toolgate_core::{
    Access, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool,
    Workspace, WsPath,
};

/// At most this many files are listed in all (the first in byte order of the files walked):
/// a listing is bounded however large the workspace is.
pub const MAX_WALKED: usize = 10_000;
/// Files on one page by default, and at most.
pub const PAGE: usize = 100;

/// Arguments of `list_resources`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListResourcesArgs {
    /// The last path of the previous page (its `next_cursor`); absent for the first page.
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub cursor: Option<String>,
    /// Only paths (relative to the workspace root) that start with this text.
    #[serde(default)]
    #[schemars(length(max = 4096))]
    pub prefix: Option<String>,
    /// Files on the page (default and at most 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// One file as a resource (MCP `Resource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceEntry {
    /// `file:///` and the path relative to the workspace root, percent-encoded.
    pub uri: String,
    /// The path relative to the workspace root.
    pub name: String,
    /// The MIME type its extension suggests, when it has a known one.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    pub size: u64,
}

/// The result of `list_resources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListResourcesOutput {
    /// The page, sorted by path in byte order.
    pub resources: Vec<ResourceEntry>,
    /// The `cursor` of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Whether files past the first 10,000 were left out of the listing.
    pub truncated: bool,
}

/// The `list_resources` tool: see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListResources;

const DESCRIPTION: &str = "List the workspace's files as MCP resources (file:/// URIs), a \
page of at most 100 at a time after `cursor`, or those whose path starts with `prefix`. Serves \
resources/list and the completion of file:///{path}; a model finds files with glob. Files \
ignored by .gitignore, hidden files and files the policy denies reading are left out; at most \
10,000 are listed.";

impl TypedTool for ListResources {
    type Args = ListResourcesArgs;
    type Output = ListResourcesOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("list_resources")
            .title("List resources")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("fs")
            .tag("resources")
            .tag(UNLISTED_TAG)
    }

    fn guard(&self, _: &ListResourcesArgs, _: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        Ok(vec![Resource::read(".")])
    }

    async fn call(
        &self,
        args: ListResourcesArgs,
        ctx: ToolContext,
    ) -> Result<ListResourcesOutput, ToolError> {
        let ws = ctx.require_workspace()?.clone();
        let root = ctx.resolve(".")?;
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        let (mut files, truncated) = blocking::run(move || {
            let found = walk(&ws, &root, args.prefix.as_deref().unwrap_or(""), &ctx);
            if cancel.is_cancelled() {
                return Err(ToolError::new(
                    toolgate_core::ErrorKind::Cancelled,
                    "the call was cancelled before it finished",
                ));
            }
            Ok(found)
        })
        .await?;
        let start = match &args.cursor {
            Some(c) => files.partition_point(|(p, _)| p.as_str() <= c.as_str()),
            None => 0,
        };
        let limit = args.limit.map_or(PAGE, |l| (l as usize).clamp(1, PAGE));
        let end = (start + limit).min(files.len());
        let next_cursor = (end < files.len()).then(|| files[end - 1].0.clone());
        let resources = files
            .drain(start..end)
            .map(|(name, size)| ResourceEntry {
                uri: uri::to_uri(&name),
                mime_type: mime_guess::from_path(&name).first_raw().map(str::to_string),
                name,
                size,
            })
            .collect();
        Ok(ListResourcesOutput {
            resources,
            next_cursor,
            truncated,
        })
    }
}

/// The files under the root whose path starts with `prefix` and whose read the policy does
/// not deny, with their sizes: the [`MAX_WALKED`] first in byte order, and whether more were
/// found.
fn walk(
    ws: &Workspace,
    root: &WsPath,
    prefix: &str,
    ctx: &ToolContext,
) -> (Vec<(String, u64)>, bool) {
    let walk = Walk::new(ws, root, WalkOptions::default());
    let parts = walk.run(
        || (TopK::new(MAX_WALKED), 0usize),
        |(first, seen): &mut (TopK<(String, u64)>, usize), entry| {
            if ctx.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = walk.relative(entry.path()) else {
                return WalkState::Continue;
            };
            // a name that is not UTF-8 has no URI that reads it back (its lossy form names
            // another file, or none): left out
            let Some(name) = rel.to_str() else {
                return WalkState::Continue;
            };
            if !name.starts_with(prefix) || !ctx.permits(rel, Access::Read) {
                return WalkState::Continue;
            }
            *seen += 1;
            let size = entry.metadata().map_or(0, |m| m.len());
            first.push((name.to_owned(), size));
            WalkState::Continue
        },
    );
    let mut first = TopK::new(MAX_WALKED);
    let mut seen = 0;
    for (part, n) in parts {
        first.merge(part);
        seen += n;
    }
    (first.into_sorted_vec(), seen > MAX_WALKED)
}
