//! [`WorkspaceCatalog`]: the workspace's files as `file:///` resources, through the unlisted
//! `list_resources` and `read_resource` tools of toolgate-tools
//! ([`toolgate_tools::resources`]), which the registry must hold
//! ([`toolgate_tools::resource_tools`]).
//!
//! - `resources/list`: a `list_resources` call per page (the policy leaves out files it denies
//!   reading; at most 10,000 files, 100 a page);
//! - `resources/templates/list`: `file:///{path}`;
//! - `resources/read` of a `file:` URI: a `read_resource` call;
//! - `completion/complete` of the template's `path`: a `list_resources` call for the paths
//!   that start with the value typed so far (at most 100, `hasMore` when more match).
//!
//! A session whose profile does not include the tools lists no workspace resources, and its
//! reads are `-32602` saying so.

use super::{Calls, Catalog, Page, Serves, Target};
use futures::future::BoxFuture;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, ErrorData, Reference, Resource, ResourceTemplate,
};
use serde_json::{json, Value};
use toolgate_core::{ErrorKind, ToolResult};
use toolgate_tools::resources::uri;

/// The workspace's files as resources: see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkspaceCatalog;

/// `list_resources` called with `arguments`: its output, or `None` when the session's profile
/// does not include the tool.
async fn list(calls: &Calls<'_>, arguments: Value) -> Result<Option<Value>, ErrorData> {
    let result: ToolResult = calls.call("list_resources", arguments).await?;
    match &result.error {
        Some(e) if e.kind == ErrorKind::UnknownTool => Ok(None),
        Some(_) => Err(super::read_error("file:///", &result)),
        None => Ok(result.structured_content),
    }
}

impl Catalog for WorkspaceCatalog {
    fn serves(&self) -> Serves {
        Serves {
            resources: true,
            completions: true,
            ..Serves::default()
        }
    }

    fn list_resources<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Page<Resource>, ErrorData>> {
        Box::pin(async move {
            let mut arguments = json!({});
            if let Some(c) = cursor {
                arguments["cursor"] = c.into();
            }
            let Some(mut out) = list(calls, arguments).await? else {
                return Ok(Page::empty());
            };
            let items = serde_json::from_value(out["resources"].take()).map_err(|e| {
                ErrorData::internal_error(format!("listing the workspace's files: {e}"), None)
            })?;
            Ok(Page {
                items,
                next: out["next_cursor"].as_str().map(str::to_string),
            })
        })
    }

    fn list_resource_templates<'a>(
        &'a self,
        _calls: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, ErrorData>> {
        let template = serde_json::from_value(json!({
            "uriTemplate": uri::TEMPLATE,
            "name": "workspace-file",
            "title": "Workspace file",
            "description": "A file of the workspace by its path relative to the workspace root \
                            (file:///src/main.rs): text with its MIME type, or a base64 blob"
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        Box::pin(std::future::ready(template.map(|t| vec![t])))
    }

    fn read(&self, uri: &str) -> Option<Target> {
        uri::is_file_uri(uri).then(|| Target {
            tool: "read_resource".into(),
            arguments: json!({ "uri": uri }),
        })
    }

    fn complete<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        request: &'a CompleteRequestParams,
    ) -> Option<BoxFuture<'a, Result<CompletionInfo, ErrorData>>> {
        let Reference::Resource(r) = &request.r#ref else {
            return None;
        };
        if r.uri != uri::TEMPLATE {
            return None;
        }
        Some(Box::pin(async move {
            if request.argument.name != "path" {
                return Err(ErrorData::invalid_params(
                    format!(
                        "{} has no argument {:?}; complete \"path\"",
                        uri::TEMPLATE,
                        request.argument.name
                    ),
                    None,
                ));
            }
            let arguments = json!({ "prefix": request.argument.value, "limit": 100 });
            let Some(out) = list(calls, arguments).await? else {
                return Ok(CompletionInfo::default());
            };
            let values: Vec<String> = out["resources"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r["name"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let mut info = CompletionInfo::default();
            info.values = values;
            info.has_more = Some(out["next_cursor"].is_string());
            Ok(info)
        }))
    }
}
