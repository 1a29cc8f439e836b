//! The hash chain catches records edited, deleted, reordered or damaged behind its back
//! (edits made with a plain rusqlite connection to the same file).

use super::support::{rec, TempStore};
use pretty_assertions::assert_eq;
use toolgate_core::AuditSink;
use toolgate_store::{BreakKind, SqliteAuditSink, Verification};

/// A store with records 1..=n.
fn chained(n: u64) -> TempStore {
    let t = TempStore::new();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    for i in 1..=n {
        sink.record(rec(i));
    }
    sink.flush_checked().unwrap();
    assert!(t.store.verify_audit().unwrap().is_intact());
    t
}

fn broken(seq: u64, kind: BreakKind) -> Verification {
    Verification::Broken {
        seq,
        kind,
        verified: seq - 1,
    }
}

#[test]
fn an_empty_log_is_intact() {
    let t = TempStore::new();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        Verification::Intact {
            records: 0,
            head: None,
            unfinished: 0
        }
    );
}

#[test]
fn an_edited_column_is_caught_at_its_record() {
    for (column, value) in [
        ("outcome", "'fatal_error'"),
        ("arguments", "'{\"path\":\"src/other.rs\"}'"),
        ("tool", "'write_file'"),
        ("duration_us", "1"),
        ("decision", "NULL"),
        ("error_reason", "'x'"),
        ("time_us", "time_us + 1"),
    ] {
        let t = chained(10);
        let n = t
            .raw()
            .execute(
                &format!("UPDATE audit SET {column} = {value} WHERE seq = 4"),
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            t.store.verify_audit().unwrap(),
            broken(4, BreakKind::Edited),
            "editing {column}"
        );
    }
}

#[test]
fn rewriting_one_hash_to_match_the_edit_breaks_the_link_to_the_next_record() {
    let t = chained(10);
    let raw = t.raw();
    raw.execute("UPDATE audit SET outcome = 'fatal_error' WHERE seq = 4", [])
        .unwrap();
    // the forger recomputes row 4's hash from its new content; row 5 still chains to the old one
    let recomputed = {
        let rows = t.store.audit_records(&Default::default()).unwrap();
        let mut json = Vec::new();
        toolgate_store::audit::canonical::canonical_json(&rows[3].record, &mut json);
        let prev: Vec<u8> = raw
            .query_row("SELECT hash FROM audit WHERE seq = 3", [], |r| r.get(0))
            .unwrap();
        toolgate_store::audit::canonical::chain_hash(&prev.try_into().unwrap(), &json)
    };
    raw.execute(
        "UPDATE audit SET hash = ?1 WHERE seq = 4",
        [&recomputed[..]],
    )
    .unwrap();
    // row 5 is intact in itself but no longer follows row 4
    assert_eq!(
        t.store.verify_audit().unwrap(),
        broken(5, BreakKind::OutOfPlace)
    );
}

#[test]
fn a_deleted_record_is_caught_by_its_sequence_number() {
    let t = chained(10);
    t.raw()
        .execute("DELETE FROM audit WHERE seq = 6", [])
        .unwrap();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        broken(6, BreakKind::Missing)
    );

    let t = chained(3);
    t.raw()
        .execute("DELETE FROM audit WHERE seq = 1", [])
        .unwrap();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        broken(1, BreakKind::Missing)
    );
}

#[test]
fn a_deleted_record_with_the_rest_renumbered_is_caught() {
    let t = chained(10);
    let raw = t.raw();
    raw.execute("DELETE FROM audit WHERE seq = 6", []).unwrap();
    raw.execute("UPDATE audit SET seq = seq - 1 WHERE seq > 6", [])
        .unwrap();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        broken(6, BreakKind::OutOfPlace)
    );
}

#[test]
fn swapped_records_are_caught_as_out_of_place() {
    let t = chained(10);
    let raw = t.raw();
    raw.execute_batch(
        "UPDATE audit SET seq = 1000 WHERE seq = 3;
         UPDATE audit SET seq = 3 WHERE seq = 7;
         UPDATE audit SET seq = 7 WHERE seq = 1000;",
    )
    .unwrap();
    assert_eq!(
        t.store.verify_audit().unwrap(),
        broken(3, BreakKind::OutOfPlace)
    );
}

#[test]
fn undecodable_columns_are_named() {
    for (column, value, says) in [
        (
            "outcome",
            "'exploded'",
            "outcome \"exploded\" is not a known value",
        ),
        ("arguments", "'{not json'", "arguments are not JSON"),
        ("duration_us", "-5", "duration_us is negative"),
        ("time_us", "'yesterday'", "holds a value of type Text"),
        ("hash", "x'00'", "hash is 1 bytes, not 32"),
        (
            "error_kind",
            "'meltdown'",
            "error_kind \"meltdown\" is not a known value",
        ),
    ] {
        let t = chained(5);
        t.raw()
            .execute(
                &format!("UPDATE audit SET {column} = {value} WHERE seq = 2"),
                [],
            )
            .unwrap();
        match t.store.verify_audit().unwrap() {
            Verification::Broken {
                seq: 2,
                kind: BreakKind::Undecodable(why),
                verified: 1,
            } => assert!(why.contains(says), "{column}: {why}"),
            other => panic!("{column}: {other:?}"),
        }
        // querying that row is an error naming the row, not a panic
        let e = t.store.audit_records(&Default::default()).unwrap_err();
        assert!(e.to_string().contains("row 2 of table audit"), "{e}");
    }
}

#[test]
fn the_writer_keeps_appending_after_a_damaged_head_and_verify_names_it() {
    let t = chained(3);
    t.raw()
        .execute("UPDATE audit SET hash = x'01' WHERE seq = 3", [])
        .unwrap();
    let sink = SqliteAuditSink::new(&t.store).unwrap();
    sink.record(rec(4));
    sink.flush_checked().unwrap();
    assert_eq!(t.store.audit_count().unwrap(), 4);
    assert!(matches!(
        t.store.verify_audit().unwrap(),
        Verification::Broken {
            seq: 3,
            kind: BreakKind::Undecodable(_),
            ..
        }
    ));
}
