//! The audit log: one row per call in the `audit` table, hash-chained.
//!
//! - [`SqliteAuditSink`] writes records from a background thread with group commit;
//! - [`Store::verify_audit`](crate::Store::verify_audit) walks the chain and names the first edited, deleted or reordered
//!   record;
//! - [`Store::audit_records`](crate::Store::audit_records) reads records back by tool, session, outcome and time.
//!
//! A call that may act has two rows: its intent (outcome `started`), committed before its
//! handler ran, and its own record after (`intents` pairs them). Readers show a call once:
//! [`Store::audit_records`](crate::Store::audit_records) leaves out intents whose call has its
//! record and lists only the unfinished ones for the outcome `started`; statistics count the
//! calls' own records; `verify` chains every row and counts the unfinished intents.
//!
//! Each row holds every field of [`toolgate_core::AuditRecord`] in its own column (the
//! arguments as canonical JSON, secrets redacted), a sequence number `seq` from 1, and
//! `hash = sha256(prev_hash || canonical JSON of the record)` ([`canonical`]).

pub mod canonical;
mod intents;
mod query;
pub(crate) mod row;
mod sink;
mod verify;

pub use query::{AuditQuery, StoredRecord};
pub use sink::{SqliteAuditSink, WriterStats};
pub use verify::{BreakKind, Verification};
