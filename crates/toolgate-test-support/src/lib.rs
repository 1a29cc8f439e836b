//! Test support for toolgate: fake tools with controllable behaviour, a scripted approver, and
//! temporary workspaces laid out like the security cases (`T/ws`, `T/outside`), and the real
//! MCP clients the tests run as child processes; an HTTP server and a DNS server on loopback for
//! the HTTP tools.

#![deny(missing_docs)]

pub mod approver;
pub mod chaos;
pub mod clients;
pub mod counting;
pub mod dns;
pub mod http;
pub mod ledger;
pub mod pipeline;
pub mod policy;
pub mod tools;
pub mod workspace;

pub use approver::ScriptedApprover;
pub use workspace::TempWorkspace;
