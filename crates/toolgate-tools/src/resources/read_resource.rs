//! `read_resource`: one workspace file by its `file:///` URI, for MCP's `resources/read`.
//!
//! The sequence: the URI is turned into a path ([`super::uri::to_path`]) by the guard stage,
//! which declares it as a read, so confinement (symlinks, `..`, devices), `path:` rules and
//! protected paths apply as to `read_file`; the handler resolves it again, opens it relative
//! to the workspace's directory handle (non-blocking, so a FIFO cannot hang the call), refuses
//! anything but a regular file with one name (a hard link may be an outside file's, as
//! `read_file` says), and reads it whole up to [`MAX_RESOURCE_BYTES`]. A file with no
//! NUL byte in its first 8 KiB that is valid UTF-8 is text (`TextResourceContents`); any other
//! is a base64 blob (`BlobResourceContents`); the MIME type comes from the extension. The
//! pipeline's finish stage then cuts a text past the byte limit to a preview whose marker
//! names the `read_result` handle, as it does for any tool.

use super::uri;
use crate::blocking;
use crate::fs::read_file::BINARY_SNIFF_BYTES;
use base64::Engine;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::io::Read;
use toolgate_core::registry::UNLISTED_TAG;
use toolgate_core::typed::schema_for;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    Args, ArgumentFault, Content, Effects, RegistrationError, Resource, Risk, Tool, ToolContext,
    ToolError, ToolOutput, ToolSpec, Workspace, WsPath,
};

/// The largest file read as a resource (4 MiB); a larger one is refused with
/// `unsafe_input` / `limit_exceeded` (read text files by windows with `read_file`).
pub const MAX_RESOURCE_BYTES: u64 = 4 << 20;

/// Arguments of `read_resource`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadResourceArgs {
    /// The resource's URI: `file:///` and the path relative to the workspace root, each
    /// segment percent-encoded (for example `file:///src/main.rs`).
    #[schemars(length(min = 1, max = 8192))]
    pub uri: String,
}

/// The `read_resource` tool: see the module docs. Its output is content (an embedded text or
/// blob resource), not structured, so it is a [`Tool`] of its own rather than a typed tool.
pub struct ReadResource {
    spec: ToolSpec,
}

const DESCRIPTION: &str = "Read one workspace file by its file:/// URI (the workspace root is \
the URI's root) as an MCP resource: text with its MIME type, or a base64 blob for a binary \
file. Serves resources/read; a model reads files with read_file. Files over 4 MiB are refused \
with limit_exceeded.";

impl ReadResource {
    /// The tool.
    ///
    /// # Errors
    /// None is expected: the spec is fixed.
    pub fn new() -> Result<Self, RegistrationError> {
        let spec = ToolSpec::builder("read_resource")
            .title("Read a resource")
            .description(DESCRIPTION)
            .input_schema(schema_for::<ReadResourceArgs>())
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("fs")
            .tag("resources")
            .tag(UNLISTED_TAG)
            // it reads a workspace file as read_file does: read_file's rules hold for it
            .rules_as("read_file")
            .build()?;
        Ok(ReadResource { spec })
    }
}

fn args(args: &Args) -> Result<&ReadResourceArgs, ToolError> {
    args.downcast_ref()
        .ok_or_else(|| ToolError::internal("read_resource got arguments of another type"))
}

impl Tool for ReadResource {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn schemas_derived(&self) -> bool {
        // the input schema is ReadResourceArgs's, derived; there is no output schema
        true
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        ReadResourceArgs::deserialize(arguments)
            .map(Args::new)
            .map_err(|e| {
                ToolError::invalid_arguments(
                    format!("send {{\"uri\": \"file:///PATH\"}}: {e}"),
                    vec![ArgumentFault {
                        pointer: String::new(),
                        message: e.to_string(),
                    }],
                )
            })
    }

    fn guard(&self, a: &Args, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let path = uri::to_path(&args(a)?.uri)?;
        crate::fs::protected::guard_read(ctx, &path)?;
        Ok(vec![Resource::read(path)])
    }

    fn call(&self, a: Args, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let requested = args(&a)?.uri.clone();
            let path = crate::fs::protected::resolve_for_read(&ctx, &uri::to_path(&requested)?)?;
            ctx.check_judged(&path, toolgate_core::Access::Read)?;
            let ws = ctx.require_workspace()?.clone();
            blocking::run(move || read(&ws, &path, requested)).await
        })
    }
}

/// Reads `path` whole as the contents of the resource `requested`.
fn read(ws: &Workspace, path: &WsPath, requested: String) -> Result<ToolOutput, ToolError> {
    let shown = path.display();
    if path.is_root() {
        return Err(not_a_file(&shown, "a directory"));
    }
    let file = crate::fs::open_exact(ws, path, false).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::not_found(format!(
            "no resource at {requested:?}: {shown:?} does not exist in the workspace; list \
             the resources (resources/list) for the URIs there are"
        ))
        .with_details(serde_json::json!({ "uri": requested })),
        _ if crate::fs::is_changed(&e) => crate::fs::changed_error(&shown),
        _ => io_error(&shown, &e),
    })?;
    let meta = file.metadata().map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(not_a_file(&shown, "a directory"));
    }
    if !meta.is_file() {
        return Err(not_a_file(&shown, "a FIFO, socket or device"));
    }
    if meta.len() > MAX_RESOURCE_BYTES {
        return Err(ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "{shown:?} has {} bytes, more than the {MAX_RESOURCE_BYTES} a resource read \
                 returns; read a text file by windows with read_file",
                meta.len()
            ),
        ));
    }
    // a hard link may be a name of a file outside the workspace, as for read_file
    crate::fs::read_file::refuse_hard_link(ws, path, std::os::unix::fs::MetadataExt::nlink(&meta))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_RESOURCE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&shown, &e))?;
    let nul = memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some();
    let content = if nul {
        binary(requested, &shown, &bytes)
    } else {
        match String::from_utf8(bytes) {
            Ok(text) => Content::embedded_text(requested, Some(uri::mime_type(&shown, true)), text),
            Err(e) => binary(requested, &shown, e.as_bytes()),
        }
    };
    Ok(ToolOutput {
        structured: None,
        content: vec![content],
    })
}

fn binary(requested: String, shown: &str, bytes: &[u8]) -> Content {
    Content::embedded_blob(
        requested,
        Some(uri::mime_type(shown, false)),
        base64::engine::general_purpose::STANDARD.encode(bytes),
    )
}

fn not_a_file(shown: &str, what: &str) -> ToolError {
    ToolError::failed(format!(
        "{shown:?} is {what}, not a file; only regular files are resources (list them with \
         resources/list)"
    ))
    .with_reason("not_a_regular_file")
}
