//! Importing tool definitions written for other runtimes (MCP tools, OpenAI functions, the
//! BFCL dialect) as toolgate specs.

pub mod mcp;
