//! The store's errors, for the host (never shown to a model).

use std::path::PathBuf;

/// What went wrong opening or using the store. Messages are written for the operator: they
/// name the file and say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `open_existing` found no file at the path.
    #[error("no toolgate store at {path} (run a `toolgate call` first, or pass --store)")]
    Missing {
        /// The path looked at.
        path: PathBuf,
    },
    /// The directory of the store is missing or not a directory: a store gets no directory
    /// created for it.
    #[error("the store's directory {path} {why}")]
    NoDirectory {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The file could not be opened or created (permissions, a read-only location, a
    /// directory in the way).
    #[error("cannot open the store {path}: {source}")]
    Open {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file or its location cannot be written.
    #[error("the store {path} cannot be written (read-only file or location): {source}")]
    ReadOnly {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file is not an SQLite database, or is damaged.
    #[error("{path} is not a toolgate store: the file is not an SQLite database or is corrupt ({source})")]
    NotADatabase {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file is an SQLite database that belongs to another program.
    #[error("{path} is an SQLite database but not a toolgate store ({why})")]
    Foreign {
        /// The store file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },
    /// The store was written by a newer toolgate.
    #[error("{path} has schema version {found}, newer than the {supported} this toolgate knows; use a newer toolgate")]
    FutureSchema {
        /// The store file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build reads and writes.
        supported: i64,
    },
    /// A query or statement failed.
    #[error("store query failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A row holds a value this build cannot decode (a damaged or hand-edited row).
    #[error("row {row} of table {table} cannot be decoded: {why}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The row's key (sequence number, id or key).
        row: String,
        /// What is wrong with it.
        why: String,
    },
    /// A grant was refused before it reached the table.
    #[error("invalid grant: {0}")]
    InvalidGrant(String),
    /// An idempotency ledger call was refused.
    #[error("idempotency key {key:?}: {why}")]
    Ledger {
        /// The key.
        key: String,
        /// Why.
        why: String,
    },
    /// The audit writer thread failed to write some records.
    #[error("the audit writer lost {lost} record(s): {last_error}")]
    AuditWriter {
        /// Records that could not be written.
        lost: u64,
        /// The last error it saw.
        last_error: String,
    },
}

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
