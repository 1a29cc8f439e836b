//! toolgate-tools: toolgate's built-in tools, one tool per file, grouped by family.
//!
//! | family | tool | what it does |
//! |---|---|---|
//! | [`fs`] | [`read_file`](fs::read_file) | the numbered lines of one text file, a window at a time |
//! | [`fs`] | [`list_dir`](fs::list_dir) | the entries of one directory, with kind and size |
//! | [`fs`] | [`glob`](fs::glob) | files whose path matches a glob, respecting ignore files |
//! | [`fs`] | [`write_file`](fs::write_file) | creates or replaces a whole file, atomically |
//! | [`fs`] | [`edit_file`](fs::edit_file) | replaces an exact, unique piece of a file and returns a diff |
//! | [`search`] | [`search_code`](search::search_code) | matching lines across files, on ripgrep's crates |
//! | [`results`] | [`read_result`](results::read_result) | pages of a result the pipeline truncated |
//! | [`resources`] | [`read_resource`](resources::read_resource), [`list_resources`](resources::list_resources) | the workspace's files as MCP resources (unlisted: served through `resources/*`) |
//! | [`http`] | [`http_fetch`](http::http_fetch) | a web page or API answer as text, over a connection the egress policy checks |
//! | [`http`] | [`http_request`](http::http_request) | any method with a body, its idempotency key sent as `Idempotency-Key` |
//!
//! The read-only tools ([`READ_ONLY_TOOLS`]) have `Effects::read_only()` and risk `read`;
//! the write tools ([`WRITE_TOOLS`]) are destructive with risk `write`, so the default
//! policy asks the approver before they run, and they write only through [`fs::atomic`]
//! (confined, atomic) and never to [`fs::protected`] paths. Every tool is a
//! [`toolgate_core::TypedTool`]: its input and output schemas are derived from its `Args` and
//! `Output` types, unknown arguments are refused, and its descriptions are written for the
//! model. File tools declare the paths they read (the pipeline's guard stage resolves them
//! inside the workspace for the policy), resolve them again themselves, and open them relative
//! to the workspace's directory handle, never by a host path; paths in results are relative to
//! the workspace root. Blocking file-system work runs on tokio's blocking pool and stops when
//! the call is cancelled or its future is dropped at the deadline.
//!
//! ```
//! use toolgate_core::{Pipeline, Registry, ToolCall, Workspace};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
//! let registry = toolgate_tools::register_read_only(Registry::builder()).build().unwrap();
//! let pipeline = Pipeline::builder(registry).build();
//! let session = pipeline
//!     .session("s1")
//!     .workspace(Workspace::open(dir.path()).unwrap())
//!     .build()
//!     .unwrap();
//! let call = ToolCall::new("c1", "read_file", serde_json::json!({"path": "hello.txt"}));
//! let result = pipeline.dispatch(call, &session).await;
//! assert_eq!(result.structured_content.unwrap()["content"], "     1\thello");
//! # });
//! ```

#![deny(missing_docs)]
// unsafe code is denied in every module; only `shell/sandbox.rs` (the code between fork and
// exec of a sandboxed command) allows it
#![deny(unsafe_code)]

mod blocking;
pub mod fs;
pub mod http;
pub mod resources;
pub mod results;
pub mod search;
pub mod shell;
mod text;
mod topk;
mod walk;

pub use fs::{EditFile, WriteFile};
pub use fs::{Glob, ListDir, ReadFile};
pub use results::ReadResult;
pub use search::SearchCode;

use std::sync::Arc;
use toolgate_core::{IntoTool, RegistrationError, RegistryBuilder, Tool};

/// The names of the read-only built-ins, in the order [`register_read_only`] registers them.
pub const READ_ONLY_TOOLS: [&str; 5] = [
    "read_file",
    "list_dir",
    "glob",
    "search_code",
    "read_result",
];

/// Registers every read-only built-in ([`READ_ONLY_TOOLS`]) on `builder`. Registration
/// errors (none are expected: the specs are fixed) surface from
/// [`RegistryBuilder::build`].
pub fn register_read_only(builder: RegistryBuilder) -> RegistryBuilder {
    builder
        .tool(ReadFile)
        .tool(ListDir)
        .tool(Glob)
        .tool(SearchCode)
        .tool(ReadResult)
}

/// Every read-only built-in as a type-erased tool, in the order of [`READ_ONLY_TOOLS`], for
/// callers that assemble a registry from several sources.
///
/// # Errors
/// A tool's spec build error (none is expected: the specs are fixed).
pub fn read_only_tools() -> Result<Vec<Arc<dyn Tool>>, RegistrationError> {
    Ok(vec![
        ReadFile.into_tool()?,
        ListDir.into_tool()?,
        Glob.into_tool()?,
        SearchCode.into_tool()?,
        ReadResult.into_tool()?,
    ])
}

/// The resource tools ([`resources::RESOURCE_TOOLS`]: `read_resource` and `list_resources`,
/// unlisted), through which an MCP server serves the workspace's files as resources
/// (`toolgate_mcp::catalog::WorkspaceCatalog`), as type-erased tools in that order.
///
/// # Errors
/// A tool's spec build error (none is expected: the specs are fixed).
pub fn resource_tools() -> Result<Vec<Arc<dyn Tool>>, RegistrationError> {
    Ok(vec![
        Arc::new(resources::ReadResource::new()?) as Arc<dyn Tool>,
        resources::ListResources.into_tool()?,
    ])
}

/// The names of the write built-ins, in the order [`register_write_tools`] registers them.
pub const WRITE_TOOLS: [&str; 2] = ["write_file", "edit_file"];

/// Registers the write built-ins ([`WRITE_TOOLS`]) on `builder`, with protected paths
/// refused. They are destructive, so the default policy asks the approver before each call.
/// Registration errors (none are expected: the specs are fixed) surface from
/// [`RegistryBuilder::build`].
pub fn register_write_tools(builder: RegistryBuilder) -> RegistryBuilder {
    builder.tool(WriteFile::new()).tool(EditFile::new())
}

/// Every write built-in as a type-erased tool, in the order of [`WRITE_TOOLS`].
///
/// # Errors
/// A tool's spec build error (none is expected: the specs are fixed).
pub fn write_tools() -> Result<Vec<Arc<dyn Tool>>, RegistrationError> {
    Ok(vec![
        WriteFile::new().into_tool()?,
        EditFile::new().into_tool()?,
    ])
}

/// The names of the HTTP built-ins, in the order [`register_http`] registers them.
pub const HTTP_TOOLS: [&str; 2] = ["http_fetch", "http_request"];

/// Registers the HTTP built-ins ([`HTTP_TOOLS`]) under `config` on `builder`, sharing one
/// client (one connection pool). Both have risk `external` and the configuration's `host:`
/// rules decide their URLs; `http_fetch` is read-only, so the default policy lets it run,
/// `http_request` is destructive, so it asks.
pub fn register_http(builder: RegistryBuilder, config: http::HttpConfig) -> RegistryBuilder {
    let client = Arc::new(http::HttpClient::new(config));
    builder
        .tool(http::HttpFetch::with_client(client.clone()))
        .tool(http::HttpRequest::with_client(client))
}

/// Every HTTP built-in under `config` as a type-erased tool, in the order of
/// [`HTTP_TOOLS`], sharing one client.
///
/// # Errors
/// A tool's spec build error (none is expected: the specs are fixed).
pub fn http_tools(config: http::HttpConfig) -> Result<Vec<Arc<dyn Tool>>, RegistrationError> {
    let client = Arc::new(http::HttpClient::new(config));
    Ok(vec![
        http::HttpFetch::with_client(client.clone()).into_tool()?,
        http::HttpRequest::with_client(client).into_tool()?,
    ])
}

/// Registers `run_shell` ([`shell::RunShell`]) with `config` on `builder`. It is destructive
/// and of risk `dangerous`, so the default policy asks before each call; wrap the policy in a
/// `ShellPolicy` to decide per command with allow, ask and deny rules. With
/// `ShellConfig::default()` it refuses to run where the kernel lacks its sandbox (see
/// [`shell::sandbox_report`]).
pub fn register_shell(builder: RegistryBuilder, config: shell::ShellConfig) -> RegistryBuilder {
    builder.tool(shell::RunShell::new(config))
}
