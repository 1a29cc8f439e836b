//! toolgate-store: toolgate's embedded storage, one SQLite file in WAL mode (by default
//! `<workspace>/.toolgate/toolgate.db`, see [`default_path`]).
//!
//! | table | what | API |
//! |---|---|---|
//! | `audit` | one hash-chained record per call | [`SqliteAuditSink`], [`Store::verify_audit`], [`Store::audit_records`], [`Store::tool_stats`] |
//! | `results` | full results behind truncation handles | [`SqliteResultStore`], [`Store::prune_results`] |
//! | `grants` | approval grants (once, session, always) | [`Store::insert_grant`], [`Store::active_grants`], [`Store::revoke_grant`], [`Store::use_once_grant`] |
//! | `idempotency` | the ledger of side-effecting calls, per principal and key | `Store` is a [`toolgate_core::Ledger`]: `PipelineBuilder::ledger(Arc::new(store))`; [`Store::ledger_entries`] |
//! | `upstream_pins`, `upstream_health` | the gateway's pinned upstream tool definitions, and its upstreams' health | [`Store::observe_definition`], [`Store::approve_pins`], [`Store::pins`], [`Store::record_upstream_health`] |
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_core::{AuditSink, Pipeline, Registry};
//! use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open(dir.path().join("toolgate.db")).unwrap();
//! let pipeline = Pipeline::builder(Registry::builder().build().unwrap())
//!     .audit(Arc::new(SqliteAuditSink::new(&store).unwrap()))
//!     .results(Arc::new(SqliteResultStore::new(store.clone())))
//!     .build();
//! // ... dispatch calls ...
//! pipeline.audit().flush();
//! assert!(store.verify_audit().unwrap().is_intact());
//! ```
//!
//! Durability: `synchronous=NORMAL` by default ([`Durability`]): in WAL mode a committed group
//! survives a crash of the process (SIGKILL); only a power cut can take back the last commits,
//! and the file stays consistent either way. [`Durability::Full`] syncs every commit.

#![deny(missing_docs)]

pub mod audit;
mod error;
pub mod grants;
pub mod ledger;
pub mod pins;
pub mod quota;
pub mod results;
mod schema;
pub mod stats;
mod store;

pub use audit::{AuditQuery, BreakKind, SqliteAuditSink, StoredRecord, Verification, WriterStats};
pub use error::{Result, StoreError};
pub use grants::{Grant, GrantFilter, GrantScope, NewGrant};
pub use pins::{Observed, Pin, PinState, UpstreamHealth};
pub use results::SqliteResultStore;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use stats::{Latency, ToolStats};
pub use store::{default_path, Durability, Store, StoreOptions};
