//! The workspace's files as MCP resources (specification 2025-11-25, "Resources"): two
//! unlisted tools an MCP server calls through the pipeline for `resources/read` and
//! `resources/list`, so every read and every listing is a call the policy decides and the audit
//! records, under the same profiles, `path:` rules, confinement, budgets and truncation as
//! `read_file`.
//!
//! | tool | MCP method | what it does |
//! |---|---|---|
//! | [`read_resource`] | `resources/read` | one file by its `file:///` URI, as text or as a base64 blob, with its MIME type |
//! | [`list_resources`] | `resources/list`, `completion/complete` | the workspace's files, a page at a time, or those under a prefix |
//!
//! Both carry [`toolgate_core::registry::UNLISTED_TAG`]: `tools/list` never shows them (a
//! model reads files with `read_file`), and a profile serves the workspace's resources when it
//! includes them (`default` and `explore` do; a profile that names its tools must name
//! `read_resource` and `list_resources` too). URIs map to paths as [`uri`] says.

pub mod list_resources;
pub mod read_resource;
pub mod uri;

pub use list_resources::ListResources;
pub use read_resource::ReadResource;

/// The names of the resource tools, in the order [`crate::resource_tools`] registers them.
pub const RESOURCE_TOOLS: [&str; 2] = ["read_resource", "list_resources"];
