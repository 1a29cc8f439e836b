//! [`Store`]: one SQLite file, opened with the store's settings, shared by cheap clones.

use crate::error::{Result, StoreError};
use crate::schema;
use parking_lot::Mutex;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The store file under a workspace: `<root>/.toolgate/toolgate.db`.
pub fn default_path(workspace_root: &Path) -> PathBuf {
    workspace_root.join(".toolgate").join("toolgate.db")
}

/// How hard a commit pushes data to the disk (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `NORMAL` (the default). In WAL mode a commit is written to the WAL before it returns but
    /// not synced: a crash of the process (SIGKILL, a panic) loses nothing committed; a power
    /// cut or kernel crash can roll back the last commits, and the database stays consistent.
    /// The WAL is synced at each checkpoint.
    #[default]
    Normal,
    /// `FULL`: every commit is synced to the disk before it returns (one `fsync` per group of
    /// audit records), so committed records survive a power cut too.
    Full,
}

/// Settings of a [`Store`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Commit durability (default [`Durability::Normal`]).
    pub durability: Durability,
    /// How long a statement waits for another connection's write lock (default 5 s).
    pub busy_timeout: Duration,
    /// How long a spilled result is kept after it was stored (default 24 hours).
    pub result_retention: Duration,
    /// Capacity of the audit writer's queue, in records (default 65,536). When the writer
    /// falls this far behind, `record` waits for room, so memory stays bounded and no record
    /// is dropped.
    pub audit_queue: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            durability: Durability::Normal,
            busy_timeout: Duration::from_secs(5),
            result_retention: Duration::from_secs(24 * 3600),
            audit_queue: 65_536,
        }
    }
}

/// One toolgate store: the audit log, spilled results, approval grants and the idempotency
/// ledger in one SQLite file (WAL mode). Cheap to clone; clones share one connection for the
/// query API. The audit writer ([`crate::SqliteAuditSink`]) opens its own.
///
/// Several processes may open the same file: SQLite's locks serialize writers, and the audit
/// writer reads the chain's head inside each write transaction.
#[derive(Clone)]
pub struct Store {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) path: PathBuf,
    pub(crate) options: StoreOptions,
    pub(crate) conn: Mutex<Connection>,
    /// The grants' compiled patterns, by grant id (shared by every clone of the store).
    pub(crate) grant_patterns: toolgate_core::grant::GrantPatternCache,
    /// Ledger claims made through this store, for pruning every 256.
    pub(crate) ledger_claims: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the store at `path`, creating the file and the tables when missing, with the
    /// default options. Its directory must exist: no directory is created for a store (a
    /// workspace's `.toolgate` is made by [`toolgate_core::Workspace::state_dir`]).
    ///
    /// # Errors
    /// [`StoreError::NoDirectory`], [`StoreError::Open`], [`StoreError::ReadOnly`],
    /// [`StoreError::NotADatabase`] (a corrupt file), [`StoreError::Foreign`],
    /// [`StoreError::FutureSchema`] (written by a newer toolgate).
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Self::open_with(path, StoreOptions::default())
    }

    /// [`Store::open`] with `options`.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            match std::fs::metadata(parent) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(StoreError::NoDirectory {
                        path: parent.to_path_buf(),
                        why: "is not a directory".into(),
                    })
                }
                Err(e) => {
                    return Err(StoreError::NoDirectory {
                        path: parent.to_path_buf(),
                        why: format!("cannot be used ({e}); create it first"),
                    })
                }
            }
        }
        Self::connect(path, options, true)
    }

    /// Opens a store that must exist already (for commands that only read it).
    ///
    /// # Errors
    /// [`StoreError::Missing`] when there is no file at `path`; otherwise as [`Store::open`].
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Self::connect(path, StoreOptions::default(), false)
    }

    fn connect(path: &Path, options: StoreOptions, create: bool) -> Result<Store> {
        let conn = schema::connect(path, &options, create)?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                options,
                conn: Mutex::new(conn),
                grant_patterns: Default::default(),
                ledger_claims: Default::default(),
            }),
        })
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &StoreOptions {
        &self.inner.options
    }

    /// A second connection to the same file with the same settings (the audit writer's).
    pub(crate) fn reconnect(&self) -> Result<Connection> {
        schema::connect(&self.inner.path, &self.inner.options, false)
    }

    /// Runs `f` on the shared connection.
    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.inner.conn.lock();
        f(&mut conn)
    }
}

/// Converts a count or time to SQLite's `INTEGER`, saturating at `i64::MAX`.
pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Reads an `INTEGER` column that must not be negative.
pub(crate) fn to_u64(
    v: i64,
    table: &'static str,
    row: &dyn std::fmt::Display,
    col: &str,
) -> Result<u64> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt {
        table,
        row: row.to_string(),
        why: format!("{col} is negative ({v})"),
    })
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn now_us() -> u64 {
    toolgate_core::audit::now_us(std::time::SystemTime::now())
}
