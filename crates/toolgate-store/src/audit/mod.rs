//! The audit log: one row per call in the `audit` table, hash-chained.
//!
//! - [`SqliteAuditSink`] writes records from a background thread with group commit;
//! - [`Store::verify_audit`](crate::Store::verify_audit) walks the chain and names the first edited, deleted or reordered
//!   record;
//! - [`Store::audit_records`](crate::Store::audit_records) reads records back by tool, session, outcome and time.
//!
//! Each row holds every field of [`toolgate_core::AuditRecord`] in its own column (the
//! arguments as canonical JSON, secrets redacted), a sequence number `seq` from 1, and
//! `hash = sha256(prev_hash || canonical JSON of the record)` ([`canonical`]).

pub mod canonical;
mod query;
pub(crate) mod row;
mod sink;
mod verify;

pub use query::{AuditQuery, StoredRecord};
pub use sink::{SqliteAuditSink, WriterStats};
pub use verify::{BreakKind, Verification};
