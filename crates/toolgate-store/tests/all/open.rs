//! Opening bad files and places gives errors that name the problem.

use super::support::{rec, TempStore};
use toolgate_core::AuditSink;
use toolgate_store::{SqliteAuditSink, Store, StoreError, SCHEMA_VERSION};

fn open_err(path: &std::path::Path) -> StoreError {
    Store::open(path).expect_err("the open should fail")
}

#[test]
fn a_new_store_gets_its_tables_version_and_wal() {
    let t = TempStore::new();
    let raw = t.raw();
    let v: i64 = raw
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let app: i64 = raw
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    let mode: String = raw
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(
        (v, app, mode.as_str()),
        (SCHEMA_VERSION, toolgate_store::APPLICATION_ID, "wal")
    );
    // opening again (and from two handles) is fine
    Store::open(t.path()).unwrap();
    Store::open_existing(t.path()).unwrap();
}

#[test]
fn the_store_is_created_in_an_existing_directory_and_no_directory_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws/.toolgate/toolgate.db");
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::NoDirectory { .. }), "{e:?}");
    assert!(!dir.path().join("ws").exists());
    std::fs::create_dir_all(dir.path().join("ws/.toolgate")).unwrap();
    Store::open(&path).unwrap();
    assert!(path.is_file());
    assert_eq!(toolgate_store::default_path(&dir.path().join("ws")), path);
}

#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    std::fs::write(&path, b"this is a text file, not a database\n".repeat(200)).unwrap();
    let e = open_err(&path);
    assert!(matches!(e, StoreError::NotADatabase { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("not an SQLite database or is corrupt"),
        "{e}"
    );
    // and the file is left as it was
    assert!(std::fs::read(&path)
        .unwrap()
        .starts_with(b"this is a text file"));
}

#[test]
fn a_damaged_page_is_an_error_when_read_not_a_panic() {
    let t = TempStore::new();
    {
        let sink = SqliteAuditSink::new(&t.store).unwrap();
        for i in 1..=3_000 {
            sink.record(rec(i));
        }
        sink.flush_checked().unwrap();
    }
    t.raw()
        .pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .unwrap();
    let TempStore { dir, store } = t;
    drop(store);
    let path = dir.path().join("toolgate.db");
    // overwrite pages in the middle of the file with garbage
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    assert!(len > 64 << 10, "{len}");
    for b in &mut bytes[len / 3..len / 3 + 16384] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let outcome = Store::open(&path).and_then(|s| s.verify_audit());
    match outcome {
        Err(e) => assert!(
            e.to_string().contains("corrupt") || e.to_string().contains("malformed"),
            "{e}"
        ),
        Ok(v) => assert!(!v.is_intact(), "{v:?}"),
    }
}

#[test]
fn a_store_from_a_newer_toolgate_is_refused() {
    let t = TempStore::new();
    t.raw()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 7)
        .unwrap();
    let e = open_err(&t.path());
    match &e {
        StoreError::FutureSchema {
            found, supported, ..
        } => assert_eq!((*found, *supported), (SCHEMA_VERSION + 7, SCHEMA_VERSION)),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("use a newer toolgate"), "{e}");
}

#[test]
fn another_programs_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1);")
        .unwrap();
    let e = open_err(&path);
    assert!(matches!(e, StoreError::Foreign { .. }), "{e:?}");
    let n: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "no toolgate table was added");
}

#[test]
fn a_missing_store_is_not_created_by_open_existing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope/toolgate.db");
    let e = Store::open_existing(&path).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e:?}");
    assert!(e.to_string().contains("no toolgate store at"), "{e}");
    assert!(!path.exists() && !dir.path().join("nope").exists());
}

#[test]
fn places_that_cannot_hold_a_store_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    // a directory where the file should be
    let as_dir = dir.path().join("toolgate.db");
    std::fs::create_dir(&as_dir).unwrap();
    let e = open_err(&as_dir);
    assert!(e.to_string().contains("cannot open the store"), "{e}");
    // a file where the parent directory should be
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let e = open_err(&dir.path().join("file/toolgate.db"));
    assert!(matches!(e, StoreError::NoDirectory { .. }), "{e:?}");
    // a missing directory is not created
    let e = open_err(&dir.path().join("a/b/toolgate.db"));
    assert!(e.to_string().contains("create it first"), "{e}");
    assert!(!dir.path().join("a").exists());
    // a location nobody can create files in, root included
    let e = open_err(std::path::Path::new("/proc/self/toolgate-test.db"));
    assert!(e.to_string().contains("/proc/self/toolgate-test.db"), "{e}");
}

#[test]
fn a_read_only_directory_is_refused_for_a_new_store() {
    // root ignores permission bits, so this part runs only as another user
    if is_root() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let e = open_err(&ro.join("toolgate.db"));
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        matches!(e, StoreError::Open { .. } | StoreError::ReadOnly { .. }),
        "{e:?}"
    );
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn a_store_path_that_is_a_symlink_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("elsewhere.db");
    Store::open(&real).unwrap();
    let link = dir.path().join("toolgate.db");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let e = open_err(&link);
    assert!(matches!(e, StoreError::Open { .. }), "{e:?}");
    // a link to where a new store would go is refused too, and creates nothing
    let dangling = dir.path().join("new.db");
    std::os::unix::fs::symlink(dir.path().join("target.db"), &dangling).unwrap();
    open_err(&dangling);
    assert!(!dir.path().join("target.db").exists());
}
