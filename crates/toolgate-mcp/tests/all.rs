//! toolgate-mcp's integration tests: real MCP clients (the Python SDK, the Inspector CLI,
//! pydantic-ai) against the server over stdio and streamable HTTP, the HTTP guard and the
//! JSON-RPC framing probed with raw requests (the security cases of their classes).
//!
//! The clients come from `.ci/run`: `TOOLGATE_TEST_PYTHON` (a venv with `mcp` and
//! `pydantic-ai-slim[mcp]`) and `TOOLGATE_TEST_INSPECTOR` (the Inspector's launcher, run with
//! `TOOLGATE_TEST_NODE`). Without them a client test is skipped with a note, except under CI
//! (`CI` set), where it fails.

mod cases;
