//! An upstream's resources and prompts as calls of the pipeline: two unlisted tools per
//! upstream that serves them, [`ReadUpstreamResource`] (`toolgate.upstream.<name>.read_resource`)
//! and [`GetUpstreamPrompt`] (`toolgate.upstream.<name>.get_prompt`), which the MCP server's
//! catalog (toolgate-cli's) names for a `resources/read` or `prompts/get` of that upstream
//! ([`crate::catalog`]). So a read or a get is decided by the policy (rules may name these
//! tools), counted by the budgets, its text cleaned and truncated by finish, and recorded by
//! the audit, like a call of an upstream tool.
//!
//! A call, inside the execute stage: the upstream's breaker admits it (or it ends at once
//! with `tool_failed` / `upstream_unavailable`); the live connection is taken; the request is
//! sent with the upstream's URI or prompt name (the namespace taken off); the answer becomes
//! the output: each content of a read as an embedded resource at its namespaced URI, a
//! prompt's `description` and `messages` as structured content. The upstream's JSON-RPC error
//! `-32602` (or the older `-32002`) is `tool_failed` / `not_found`, any other its
//! `upstream_error`; a lost connection `upstream_failed`.

use crate::upstream::Upstream;
use futures::future::BoxFuture;
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{json, Value};
use std::sync::Arc;
use toolgate_core::registry::UNLISTED_TAG;
use toolgate_core::{
    Args, Content, Effects, Resource, Risk, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
};

/// The name of `upstream`'s resource-reading tool.
pub fn read_tool_name(upstream: &str) -> String {
    format!(
        "toolgate.upstream.{upstream}.{}",
        toolgate_config::upstreams::RESOURCE_TOOL_SUFFIX
    )
}

/// The name of `upstream`'s prompt-getting tool.
pub fn prompt_tool_name(upstream: &str) -> String {
    format!(
        "toolgate.upstream.{upstream}.{}",
        toolgate_config::upstreams::PROMPT_TOOL_SUFFIX
    )
}

/// The spec of an upstream's resource or prompt tool: read-only and idempotent (MCP's
/// resources and prompts are reads), open world (the data comes from another server), risk
/// `read`; its timeout the entry's.
fn spec(
    name: String,
    upstream: &Upstream,
    what: &str,
    input: Value,
) -> Result<ToolSpec, toolgate_core::RegistrationError> {
    let mut effects = Effects::read_only();
    effects.open_world = true;
    ToolSpec::builder(name)
        .description(format!(
            "{what} of the upstream MCP server {}, for the MCP server's {} (never listed)",
            upstream.name(),
            if what.starts_with("Reads") {
                "resources/read"
            } else {
                "prompts/get"
            }
        ))
        .input_schema(input)
        .effects(effects)
        .risk(Risk::Read)
        .timeout(upstream.config.timeout())
        .tag("upstream")
        .tag(format!("upstream:{}", upstream.name()))
        .tag(UNLISTED_TAG)
        .build()
}

/// What a request to the upstream ended with, as the call's error.
fn failed(upstream: &Upstream, what: &str, e: rmcp::ServiceError) -> ToolError {
    match e {
        rmcp::ServiceError::McpError(e) if matches!(e.code.0, -32602 | -32002) => {
            ToolError::not_found(format!(
                "{what}: the upstream server {} says {} (JSON-RPC error {})",
                upstream.name(),
                e.message,
                e.code.0
            ))
        }
        rmcp::ServiceError::McpError(e) => ToolError::failed(format!(
            "{what} failed upstream: {} (JSON-RPC error {})",
            e.message, e.code.0
        ))
        .with_reason("upstream_error"),
        other => ToolError::failed(format!(
            "{what} failed: the upstream server {} did not answer ({})",
            upstream.name(),
            crate::tool::describe(&other)
        ))
        .with_reason("upstream_failed")
        .transient(),
    }
}

/// Takes the upstream's breaker and live connection, or says why not.
fn admitted(
    upstream: &Upstream,
) -> Result<
    (
        crate::breaker::Admission,
        rmcp::service::Peer<rmcp::service::RoleClient>,
    ),
    ToolError,
> {
    let unavailable = |why: &str| {
        ToolError::failed(format!(
            "the upstream server {} {why}; try again later",
            upstream.name()
        ))
        .with_reason("upstream_unavailable")
    };
    let admission = upstream
        .breaker
        .admit()
        .map_err(|_| unavailable("is failing (its circuit breaker is open)"))?;
    match upstream.peer.load_full() {
        Some(peer) => Ok((admission, (*peer).clone())),
        None => {
            upstream.breaker.abandoned(admission);
            Err(unavailable("is not running (it is being started again)"))
        }
    }
}

/// Settles the breaker by how the request ended.
fn settle<T>(
    upstream: &Upstream,
    admission: crate::breaker::Admission,
    r: &Result<T, rmcp::ServiceError>,
) {
    match r {
        Ok(_) | Err(rmcp::ServiceError::McpError(_)) => upstream.breaker.success(),
        Err(e) => upstream.call_failed(admission, &e.to_string()),
    }
}

/// `resources/read` of one upstream: arguments `{uri}` (the upstream's own URI).
pub struct ReadUpstreamResource {
    spec: ToolSpec,
    upstream: Arc<Upstream>,
    separator: String,
}

impl ReadUpstreamResource {
    pub(crate) fn new(
        upstream: Arc<Upstream>,
        separator: &str,
    ) -> Result<Self, toolgate_core::RegistrationError> {
        let input = json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "minLength": 1, "maxLength": 8192}},
            "required": ["uri"],
            "additionalProperties": false
        });
        Ok(ReadUpstreamResource {
            spec: spec(
                read_tool_name(upstream.name()),
                &upstream,
                "Reads a resource",
                input,
            )?,
            upstream,
            separator: separator.to_string(),
        })
    }
}

impl Tool for ReadUpstreamResource {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        Ok(Args::new(arguments.clone()))
    }

    /// Refuses, before the policy and any approval, a read of a resource the upstream's latest
    /// listing quarantined (or a URI a quarantined template covers): `tool_failed` with the
    /// reason `resource_quarantined`.
    fn guard(&self, args: &Args, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let uri = args
            .downcast_ref::<Value>()
            .and_then(|a| a["uri"].as_str())
            .unwrap_or_default();
        if self.upstream.screened.lock().refuses(uri) {
            let prefix = crate::catalog::uri_prefix(&self.upstream.config, &self.separator);
            return Err(ToolError::failed(format!(
                "{prefix}{uri} cannot be read: the upstream server {} describes it with text \
                 aimed at the model, so it is quarantined and not listed. Nothing was read; use \
                 a resource from resources/list instead",
                self.upstream.name()
            ))
            .with_reason("resource_quarantined"));
        }
        Ok(Vec::new())
    }

    fn call(&self, args: Args, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move { self.upstream.held(self.read(args).await) })
    }
}

impl ReadUpstreamResource {
    async fn read(&self, args: Args) -> Result<ToolOutput, ToolError> {
        {
            let args = args
                .downcast::<Value>()
                .map_err(|_| ToolError::internal("arguments of another type"))?;
            let uri = args["uri"].as_str().unwrap_or_default().to_string();
            let (admission, peer) = admitted(&self.upstream)?;
            let read = peer
                .read_resource(ReadResourceRequestParams::new(uri.clone()))
                .await;
            settle(&self.upstream, admission, &read);
            let read = read.map_err(|e| failed(&self.upstream, &format!("reading {uri}"), e))?;
            let prefix = crate::catalog::uri_prefix(&self.upstream.config, &self.separator);
            let content = read
                .contents
                .into_iter()
                .filter_map(|c| match c {
                    rmcp::model::ResourceContents::TextResourceContents {
                        uri,
                        mime_type,
                        text,
                        ..
                    } => Some(Content::embedded_text(
                        format!("{prefix}{uri}"),
                        mime_type,
                        text,
                    )),
                    rmcp::model::ResourceContents::BlobResourceContents {
                        uri,
                        mime_type,
                        blob,
                        ..
                    } => Some(Content::embedded_blob(
                        format!("{prefix}{uri}"),
                        mime_type,
                        blob,
                    )),
                    // a kind of contents this version does not know
                    _ => None,
                })
                .collect();
            let mut out = ToolOutput {
                structured: None,
                content,
            };
            crate::answer::check_blocks(&mut out.content);
            crate::result::unhide_output(&mut out, &self.spec.name);
            Ok(out)
        }
    }
}

/// `prompts/get` of one upstream: arguments `{name, arguments}` (the upstream's own prompt
/// name and its string arguments).
pub struct GetUpstreamPrompt {
    spec: ToolSpec,
    upstream: Arc<Upstream>,
}

impl GetUpstreamPrompt {
    pub(crate) fn new(upstream: Arc<Upstream>) -> Result<Self, toolgate_core::RegistrationError> {
        let input = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 1024},
                "arguments": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["name"],
            "additionalProperties": false
        });
        Ok(GetUpstreamPrompt {
            spec: spec(
                prompt_tool_name(upstream.name()),
                &upstream,
                "Gets a prompt",
                input,
            )?,
            upstream,
        })
    }
}

impl Tool for GetUpstreamPrompt {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        Ok(Args::new(arguments.clone()))
    }

    fn call(&self, args: Args, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move { self.upstream.held(self.get(args).await) })
    }
}

impl GetUpstreamPrompt {
    async fn get(&self, args: Args) -> Result<ToolOutput, ToolError> {
        {
            let args = args
                .downcast::<Value>()
                .map_err(|_| ToolError::internal("arguments of another type"))?;
            let name = args["name"].as_str().unwrap_or_default().to_string();
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = args["arguments"].as_object().cloned();
            let (admission, peer) = admitted(&self.upstream)?;
            let got = peer.get_prompt(params).await;
            settle(&self.upstream, admission, &got);
            let got = got.map_err(|e| failed(&self.upstream, &format!("prompt {name}"), e))?;
            let mut value = json!({ "messages": got.messages });
            if let Some(d) = got.description {
                value["description"] = d.into();
            }
            let prefix = crate::catalog::uri_prefix(&self.upstream.config, "");
            crate::answer::namespace_prompt(&mut value, &prefix);
            let mut out = ToolOutput::structured(value);
            crate::result::unhide_output(&mut out, &self.spec.name);
            Ok(out)
        }
    }
}
