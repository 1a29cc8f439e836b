//! Numbers at their edges through the binary: spans past what a grant may hold are refused
//! with a clear error wherever they are given, and rows already holding absurd values (a
//! grant expiring in a million years, times past year 9999, negative times) never make a
//! reader panic.

use super::toolgate;
use std::path::Path;
use std::process::Output;

fn run(ws: &Path, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--workspace", ws.to_str().unwrap()]);
    toolgate(&all, ws)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Not a panic (101), not a signal: a clean exit with `code`.
fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(out.status.code(), Some(code), "{what}: {}", text(out));
    assert!(!text(out).contains("panicked"), "{what}: {}", text(out));
}

#[test]
fn spans_past_a_hundred_years_are_refused_wherever_they_are_given() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    // a store to grant into
    let out = run(ws, &["call", "list_dir", "{}"]);
    assert_exit(&out, 0, "a first call");
    for span in ["1000000y", "101y", "36526days", "99999999999h"] {
        let out = run(
            ws,
            &[
                "approvals",
                "grant",
                "--tool",
                "write_file",
                "--expires",
                span,
            ],
        );
        assert_exit(&out, 2, span);
        assert!(
            text(&out).contains("longer than the longest expiry, 100 years"),
            "{span}: {}",
            text(&out)
        );
        for flag in ["--session-expires", "--always-expires", "--max-expires"] {
            let out = run(ws, &["call", "list_dir", "{}", flag, span]);
            assert_exit(&out, 2, &format!("call {flag} {span}"));
        }
        for (key, config) in [
            (
                "always_expires",
                format!("[approvals]\nalways_expires = \"{span}\"\n"),
            ),
            (
                "session_expires",
                format!("[approvals]\nsession_expires = \"{span}\"\n"),
            ),
            (
                "max_expires",
                format!("[approvals]\nmax_expires = \"{span}\"\n"),
            ),
        ] {
            std::fs::write(ws.join("edge.toml"), config).unwrap();
            let out = run(ws, &["check", "--config", "edge.toml"]);
            assert_exit(&out, 1, &format!("check {key} = {span}"));
            assert!(
                text(&out).contains("edge.toml:2:") && text(&out).contains("100 years"),
                "{key} = {span}: {}",
                text(&out)
            );
        }
    }
    // serve's hours flag is bounded by the MCP form's cap (a year) before serving
    let out = run(ws, &["serve", "--always-expires-hours", "4294967295"]);
    assert_exit(&out, 2, "serve --always-expires-hours");
    assert!(text(&out).contains("1..=8760"), "{}", text(&out));
    // the longest accepted span is stored and shown
    let out = run(
        ws,
        &[
            "approvals",
            "grant",
            "--tool",
            "write_file",
            "--expires",
            "36525days",
        ],
    );
    assert_exit(&out, 0, "100 years");
    let out = run(ws, &["approvals", "list"]);
    assert_exit(&out, 0, "list");
    assert_eq!(text(&out).lines().count(), 2, "{}", text(&out));
}

#[test]
fn absurd_values_already_stored_never_make_a_reader_panic() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let out = run(ws, &["call", "list_dir", "{}"]);
    assert_exit(&out, 0, "a first call");
    let db = ws.join(".toolgate/toolgate.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    // what an older build stored for --expires 1000000y (now + saturated µs), and worse
    for (created, expires) in [
        (1_700_000_000_000_000i64, i64::MAX),
        (i64::MAX - 1, i64::MAX),
        (253_402_300_800_000_000, 253_402_300_900_000_000),
    ] {
        conn.execute(
            "INSERT INTO grants (tool_pattern, scope, created_us, expires_us) \
             VALUES ('write_file', 'always', ?1, ?2)",
            [created, expires],
        )
        .unwrap();
    }
    // audit rows with times and durations at the top of their columns
    conn.execute_batch(
        "UPDATE audit SET time_us = 9223372036854775807, duration_us = 9223372036854775807, \
         result_bytes = 9223372036854775807",
    )
    .unwrap();
    for args in [
        &["approvals", "list"][..],
        &["approvals", "list", "--all"],
        &["approvals", "list", "--json"],
        &["audit"],
        &["audit", "--json"],
        &["audit", "--since", "1000000y"],
        &["stats"],
        &["stats", "--json"],
    ] {
        let out = run(ws, args);
        assert_exit(&out, 0, &args.join(" "));
    }
    let list = text(&run(ws, &["approvals", "list"]));
    assert!(list.contains("after-9999"), "{list}");
    // the chain no longer matches the edited rows: verify says so, it does not crash
    let out = run(ws, &["audit", "verify"]);
    assert_exit(&out, 3, "verify");

    // a negative time is damage: a clear error naming the row, and the row can be revoked
    conn.execute(
        "INSERT INTO grants (tool_pattern, scope, created_us, expires_us) \
         VALUES ('edit_file', 'always', -5, -1)",
        [],
    )
    .unwrap();
    let id = conn.last_insert_rowid().to_string();
    let out = run(ws, &["approvals", "list", "--all"]);
    assert_exit(&out, 1, "list with a damaged row");
    assert!(text(&out).contains("negative"), "{}", text(&out));
    let out = run(ws, &["approvals", "revoke", &id]);
    assert_exit(&out, 0, "revoke the damaged row");
    assert_exit(&run(ws, &["approvals", "list"]), 0, "list after");
}
