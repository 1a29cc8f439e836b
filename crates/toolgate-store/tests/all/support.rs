//! Records and stores for the tests.

use serde_json::{json, Value};
use std::path::PathBuf;
use toolgate_core::{AuditRecord, Decision, ErrorKind, Outcome};
use toolgate_store::Store;

/// A temporary directory with a store file in it.
pub struct TempStore {
    pub dir: tempfile::TempDir,
    pub store: Store,
}

impl TempStore {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("toolgate.db")).unwrap();
        TempStore { dir, store }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("toolgate.db")
    }

    /// A plain rusqlite connection to the same file, for editing rows behind the store's back.
    pub fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path()).unwrap()
    }
}

/// A record of call `i` of `tool` in `session`, with arguments `args`.
pub fn record(i: u64, tool: &str, session: &str, args: Value) -> AuditRecord {
    AuditRecord {
        time_us: 1_700_000_000_000_000 + i * 1_000_000,
        session: session.into(),
        profile: "default".into(),
        principal: None,
        tool: tool.into(),
        version: Some("1.0.0".into()),
        call_id: format!("call-{i}").into(),
        decision: Some(Decision::Allow),
        rule: Some("default.allow".into()),
        approval: None,
        grant: None,
        scope: None,
        arguments: args,
        result_bytes: 10 + i as usize,
        truncated: None,
        outcome: Outcome::Ok,
        error_kind: None,
        error_reason: None,
        attempts: 1,
        idempotency_key: None,
        ledger: None,
        duration_us: 100 + i,
    }
}

/// A simple record `i`.
pub fn rec(i: u64) -> AuditRecord {
    record(i, "read_file", "s1", json!({"path": format!("src/{i}.rs")}))
}

/// A failed record `i`.
pub fn failed(i: u64, kind: ErrorKind, reason: &str) -> AuditRecord {
    let mut r = rec(i);
    r.outcome = if kind == ErrorKind::ToolFailed {
        Outcome::RecoverableError
    } else {
        Outcome::FatalError
    };
    r.error_kind = Some(kind);
    r.error_reason = Some(reason.into());
    r
}
