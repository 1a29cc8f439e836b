//! The tables, their version, and opening a connection with the store's settings.
//!
//! Opening a connection does, in order: open (or create) the file, set `busy_timeout`, check the
//! file is an SQLite database (`NotADatabase` otherwise), check `application_id` and
//! `user_version` (a database of another program is `Foreign`, a newer schema is
//! `FutureSchema`), switch to WAL, set `synchronous`, and create or migrate the tables in one
//! `BEGIN IMMEDIATE` transaction (two processes opening a new store at once do not race).
//!
//! The schema version lives in `PRAGMA user_version`; `MIGRATIONS[i]` takes a store from
//! version `i` to `i + 1`. A new version appends a migration and never edits an old one.

use crate::error::{Result, StoreError};
use crate::store::{Durability, StoreOptions};
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::path::Path;

/// `PRAGMA application_id` of a toolgate store: "tgst" in ASCII.
pub const APPLICATION_ID: i64 = 0x7467_7374;

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const MIGRATIONS: &[&str] = &[
    // 0 -> 1
    r#"
    CREATE TABLE audit (
        seq          INTEGER PRIMARY KEY,
        time_us      INTEGER NOT NULL,
        session      TEXT NOT NULL,
        profile      TEXT NOT NULL,
        tool         TEXT NOT NULL,
        version      TEXT,
        call_id      TEXT NOT NULL,
        decision     TEXT,
        rule         TEXT,
        approval     TEXT,
        arguments    TEXT NOT NULL,
        result_bytes INTEGER NOT NULL,
        truncated    TEXT,
        outcome      TEXT NOT NULL,
        error_kind   TEXT,
        error_reason TEXT,
        attempts     INTEGER NOT NULL,
        duration_us  INTEGER NOT NULL,
        prev_hash    BLOB NOT NULL,
        hash         BLOB NOT NULL
    );
    -- time only: each index costs the writer about a microsecond per record; times grow
    -- with seq (cheap appends) and serve --since; tool and session filters scan
    CREATE INDEX audit_time ON audit(time_us);

    CREATE TABLE results (
        id         INTEGER PRIMARY KEY,
        handle     TEXT NOT NULL UNIQUE,
        session    TEXT NOT NULL,
        created_us INTEGER NOT NULL,
        expires_us INTEGER NOT NULL,
        text       TEXT NOT NULL
    );
    CREATE INDEX results_expires ON results(expires_us);

    CREATE TABLE grants (
        id               INTEGER PRIMARY KEY,
        tool_pattern     TEXT NOT NULL,
        resource_pattern TEXT,
        scope            TEXT NOT NULL CHECK (scope IN ('once', 'session', 'always')),
        session          TEXT,
        created_us       INTEGER NOT NULL,
        expires_us       INTEGER,
        revoked_us       INTEGER,
        used_us          INTEGER,
        granted_by       TEXT,
        note             TEXT
    );
    CREATE INDEX grants_session ON grants(session);

    CREATE TABLE idempotency (
        key        TEXT PRIMARY KEY,
        tool       TEXT NOT NULL,
        args_hash  BLOB NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('in_progress', 'succeeded', 'failed')),
        result     TEXT,
        created_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL
    );
    "#,
    // 1 -> 2: the approval's provenance (the grant that approved a call or that its answer
    // created, and the approval's scope); old rows keep NULL, which their hashes never covered
    r#"
    ALTER TABLE audit ADD COLUMN grant_id INTEGER;
    ALTER TABLE audit ADD COLUMN scope TEXT;
    "#,
    // 2 -> 3: the idempotency ledger in use: the key and what the ledger did, in the audit
    // (old rows keep NULL, which their hashes never covered); the ledger's table, unused
    // before, rebuilt with keys per principal, the claim's holder and lease, the call and
    // its arguments for the operator, and the settlement
    r#"
    ALTER TABLE audit ADD COLUMN idempotency_key TEXT;
    ALTER TABLE audit ADD COLUMN ledger TEXT;

    DROP TABLE idempotency;
    CREATE TABLE idempotency (
        principal      TEXT NOT NULL,
        key            TEXT NOT NULL,
        derived        INTEGER NOT NULL,
        tool           TEXT NOT NULL,
        args_hash      BLOB NOT NULL,
        session        TEXT NOT NULL,
        call_id        TEXT NOT NULL,
        arguments      TEXT NOT NULL,
        state          TEXT NOT NULL
                       CHECK (state IN ('in_progress', 'unknown', 'succeeded', 'failed')),
        holder         INTEGER,
        lease_until_us INTEGER,
        created_us     INTEGER NOT NULL,
        updated_us     INTEGER NOT NULL,
        settled_by     TEXT,
        result         TEXT,
        PRIMARY KEY (principal, key)
    ) WITHOUT ROWID;
    CREATE INDEX idempotency_updated ON idempotency(updated_us);
    "#,
    // 3 -> 4: identity (issue 16): the principal a call was made for (an OAuth token's subject
    // and issuer; old rows and local calls keep NULL, which their hashes never covered), the
    // principal a grant is bound to, and the calls of each principal per UTC day
    r#"
    ALTER TABLE audit ADD COLUMN principal TEXT;
    ALTER TABLE audit ADD COLUMN principal_issuer TEXT;
    ALTER TABLE grants ADD COLUMN principal TEXT;
    ALTER TABLE grants ADD COLUMN principal_issuer TEXT;
    CREATE TABLE quota (
        principal TEXT NOT NULL,
        issuer    TEXT NOT NULL,
        day       INTEGER NOT NULL,
        calls     INTEGER NOT NULL,
        PRIMARY KEY (principal, issuer, day)
    ) WITHOUT ROWID;
    "#,
    // 4 -> 5: the gateway's pins of upstream tool definitions, and the upstreams' health
    // (created only if missing: the tables are new, and no other migration touches them)
    r#"
    CREATE TABLE IF NOT EXISTS upstream_pins (
        upstream          TEXT NOT NULL,
        tool              TEXT NOT NULL,
        state             TEXT NOT NULL CHECK (state IN ('pinned', 'changed', 'quarantined')),
        pinned_hash       TEXT,
        pinned_definition TEXT,
        seen_hash         TEXT NOT NULL,
        seen_definition   TEXT NOT NULL,
        reason            TEXT,
        first_seen_us     INTEGER NOT NULL,
        updated_us        INTEGER NOT NULL,
        approved_us       INTEGER,
        PRIMARY KEY (upstream, tool)
    );

    CREATE TABLE IF NOT EXISTS upstream_health (
        upstream   TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        detail     TEXT,
        restarts   INTEGER NOT NULL,
        failures   INTEGER NOT NULL,
        updated_us INTEGER NOT NULL
    );
    "#,
    // 5 -> 6: the notifications an upstream sent over its budgets, dropped (issue 15); the
    // table is made anew with its rows, so a store whose table has the column already (one
    // set back to an older version) migrates too
    r#"
    CREATE TABLE upstream_health_6 (
        upstream   TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        detail     TEXT,
        restarts   INTEGER NOT NULL,
        failures   INTEGER NOT NULL,
        updated_us INTEGER NOT NULL,
        dropped    INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO upstream_health_6 (upstream, state, detail, restarts, failures, updated_us)
        SELECT upstream, state, detail, restarts, failures, updated_us FROM upstream_health;
    DROP TABLE upstream_health;
    ALTER TABLE upstream_health_6 RENAME TO upstream_health;
    "#,
];

/// Opens a connection to `path` with the store's settings, creating and migrating the tables
/// when `create` is set (otherwise a store of an older version is only read, not migrated).
///
/// # Errors
/// [`StoreError::Open`], [`StoreError::ReadOnly`], [`StoreError::NotADatabase`],
/// [`StoreError::Foreign`], [`StoreError::FutureSchema`].
pub(crate) fn connect(path: &Path, options: &StoreOptions, create: bool) -> Result<Connection> {
    // NOFOLLOW: a store path that is a symlink (planted in a workspace's .toolgate/) is
    // refused rather than followed to a file elsewhere
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
    conn.busy_timeout(options.busy_timeout)
        .map_err(|e| classify(path, e))?;
    let (app_id, version) = identity(&conn).map_err(|e| classify(path, e))?;
    let empty = is_empty(&conn).map_err(|e| classify(path, e))?;
    if !empty && app_id != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            why: format!("application_id is {app_id:#x}, not {APPLICATION_ID:#x}"),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::FutureSchema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(path = %path.display(), mode, "the store is not in WAL mode");
    }
    let sync = match options.durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .map_err(|e| classify(path, e))?;
    if version < SCHEMA_VERSION {
        migrate(conn, path)
    } else {
        Ok(conn)
    }
}

/// Brings the tables to [`SCHEMA_VERSION`]. Also on `open_existing`: an older store cannot be
/// read by this build without its tables.
fn migrate(mut conn: Connection, path: &Path) -> Result<Connection> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| classify(path, e))?;
    // another process may have migrated between our check and the lock
    let (_, mut version) = identity(&tx).map_err(|e| classify(path, e))?;
    if version == 0 {
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| classify(path, e))?;
    }
    while version < SCHEMA_VERSION {
        let Some(sql) = usize::try_from(version)
            .ok()
            .and_then(|v| MIGRATIONS.get(v))
        else {
            break;
        };
        tx.execute_batch(sql).map_err(|e| classify(path, e))?;
        version += 1;
    }
    tx.pragma_update(None, "user_version", version)
        .map_err(|e| classify(path, e))?;
    tx.commit().map_err(|e| classify(path, e))?;
    Ok(conn)
}

fn identity(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    let app: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok((app, version))
}

fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    Ok(n == 0)
}

/// Turns SQLite's error on opening into one that names the problem.
pub(crate) fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
            StoreError::NotADatabase { path, source: e }
        }
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly { path, source: e },
        Some(ErrorCode::CannotOpen) | Some(ErrorCode::PermissionDenied) => {
            StoreError::Open { path, source: e }
        }
        _ => StoreError::Open { path, source: e },
    }
}
