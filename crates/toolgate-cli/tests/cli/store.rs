//! The store commands end to end: `call` writing to the SQLite store, `audit`, `audit verify`,
//! `stats`, and `read_result` in a later `call` of the same session.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    ok(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs `toolgate call` in `ws` and returns its exit code.
fn call(ws: &Path, tool: &str, args: &str, session: &str) -> Option<i32> {
    let out = toolgate(
        &[
            "call",
            tool,
            args,
            "--workspace",
            ws.to_str().unwrap(),
            "--session",
            session,
        ],
        ws,
    );
    out.status.code()
}

#[test]
fn call_records_to_the_store_and_audit_reads_it_back() {
    let t = tree();
    let ws = t.path().join("ws");
    assert_eq!(
        call(&ws, "read_file", r#"{"path":"src/main.rs"}"#, "s1"),
        Some(0)
    );
    assert_eq!(
        call(&ws, "read_file", r#"{"path":"nope.rs"}"#, "s1"),
        Some(3)
    );
    assert_eq!(call(&ws, "list_dir", r#"{"path":"src"}"#, "s2"), Some(0));
    assert_eq!(call(&ws, "no_such_tool", "{}", "s2"), Some(4));
    assert!(ws.join(".toolgate/toolgate.db").is_file());
    assert!(!ws.join(".toolgate/audit.jsonl").exists());

    let w = ws.to_str().unwrap();
    let all = lines(&toolgate(&["audit", "--json", "--workspace", w], t.path()));
    assert_eq!(
        all.iter()
            .map(|r| (
                r["seq"].as_u64().unwrap(),
                r["tool"].as_str().unwrap(),
                r["outcome"].as_str().unwrap()
            ))
            .collect::<Vec<_>>(),
        vec![
            (1, "read_file", "ok"),
            (2, "read_file", "recoverable_error"),
            (3, "list_dir", "ok"),
            (4, "no_such_tool", "fatal_error")
        ]
    );
    assert_eq!(
        all[0]["arguments"],
        serde_json::json!({"path": "src/main.rs"})
    );
    assert_eq!(all[0]["session"], "s1");
    assert_eq!(all[1]["error_kind"], "tool_failed");
    assert_eq!(all[0]["hash"].as_str().unwrap().len(), 64);

    let seqs = |extra: &[&str]| -> Vec<u64> {
        let mut args = vec!["audit", "--json", "--workspace", w];
        args.extend_from_slice(extra);
        lines(&toolgate(&args, t.path()))
            .iter()
            .map(|r| r["seq"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&["--tool", "read_file"]), vec![1, 2]);
    assert_eq!(seqs(&["--session", "s2"]), vec![3, 4]);
    assert_eq!(seqs(&["--outcome", "recoverable"]), vec![2]);
    assert_eq!(seqs(&["--outcome", "fatal_error"]), vec![4]);
    assert_eq!(seqs(&["--since", "1h"]), vec![1, 2, 3, 4]);
    assert_eq!(
        seqs(&["--since", "2999-01-01T00:00:00Z"]),
        Vec::<u64>::new()
    );
    assert_eq!(seqs(&["--limit", "2"]), vec![3, 4]);
    assert_eq!(
        seqs(&["--tool", "read_file", "--session", "s2"]),
        Vec::<u64>::new()
    );

    // the table: a header and one row per record
    let table = ok(&toolgate(
        &[
            "audit",
            "--store",
            ws.join(".toolgate/toolgate.db").to_str().unwrap(),
        ],
        t.path(),
    ));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 5, "{table}");
    assert!(rows[0].starts_with("    SEQ  TIME"), "{table}");
    assert!(rows[2].contains("tool_failed/not_found"), "{table}");

    let verify = toolgate(&["audit", "verify", "--workspace", w], t.path());
    assert!(ok(&verify).starts_with("audit log intact: 4 records, head "));
}

#[test]
fn verify_names_the_first_edited_record_and_exits_3() {
    let t = tree();
    let ws = t.path().join("ws");
    for i in 0..3 {
        assert_eq!(
            call(
                &ws,
                "read_file",
                r#"{"path":"src/lib.rs"}"#,
                &format!("s{i}")
            ),
            Some(0)
        );
    }
    let db = ws.join(".toolgate/toolgate.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE audit SET outcome = 'fatal_error' WHERE seq = 2", [])
        .unwrap();
    let out = toolgate(
        &["audit", "verify", "--store", db.to_str().unwrap()],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "audit log broken at record 2: edited (its hash does not match its content); 1 records before it verified"
    );
    let out = toolgate(
        &["audit", "verify", "--json", "--store", db.to_str().unwrap()],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        json(&out),
        serde_json::json!({"status": "broken", "seq": 2, "break": {"kind": "edited"}, "verified": 1})
    );
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("DELETE FROM audit WHERE seq = 1", [])
        .unwrap();
    let out = toolgate(
        &["audit", "verify", "--store", db.to_str().unwrap()],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("broken at record 1: missing"));
}

#[test]
fn stats_sums_per_tool() {
    let t = tree();
    let ws = t.path().join("ws");
    for _ in 0..3 {
        call(&ws, "read_file", r#"{"path":"src/main.rs"}"#, "s");
    }
    call(&ws, "read_file", r#"{"path":"missing.rs"}"#, "s");
    call(&ws, "glob", r#"{"pattern":"**/*.rs"}"#, "s");
    let w = ws.to_str().unwrap();
    let stats = lines(&toolgate(&["stats", "--json", "--workspace", w], t.path()));
    assert_eq!(
        stats
            .iter()
            .map(|s| (s["tool"].as_str().unwrap(), s["calls"].as_u64().unwrap()))
            .collect::<Vec<_>>(),
        vec![("glob", 1), ("read_file", 4)]
    );
    assert_eq!(stats[1]["errors"], serde_json::json!({"tool_failed": 1}));
    let lat = &stats[1]["latency"];
    assert!(lat["p50_us"].as_u64().unwrap() <= lat["p99_us"].as_u64().unwrap());
    let table = ok(&toolgate(
        &["stats", "--workspace", w, "--tool", "read_file"],
        t.path(),
    ));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows[0].starts_with("TOOL") && rows[0].contains("P99"),
        "{table}"
    );
    assert!(
        rows[1].starts_with("read_file") && rows[1].contains("tool_failed=1"),
        "{table}"
    );
}

#[test]
fn read_result_pages_in_a_later_call_of_the_same_session() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::create_dir(ws.join("many")).unwrap();
    for i in 0..1000 {
        std::fs::write(
            ws.join("many").join(format!("{i:04}-{}", "x".repeat(120))),
            "",
        )
        .unwrap();
    }
    let w = ws.to_str().unwrap();
    let first = toolgate(
        &[
            "call",
            "list_dir",
            r#"{"path":"many"}"#,
            "-w",
            w,
            "--session",
            "big",
        ],
        &ws,
    );
    let v = json(&first);
    let handle = v["truncation"]["handle"]
        .as_str()
        .expect("truncated")
        .to_string();
    let total = v["truncation"]["original_bytes"].as_u64().unwrap();
    let read = |session: &str, offset: u64| {
        let args =
            serde_json::json!({"handle": handle, "offset": offset, "limit": 262144}).to_string();
        json(&toolgate(
            &[
                "call",
                "read_result",
                &args,
                "-w",
                w,
                "--session",
                session,
                "--id",
                &format!("r{offset}"),
            ],
            &ws,
        ))
    };
    let page = read("big", 0);
    assert_eq!(page["is_error"], false, "{page}");
    assert_eq!(
        page["structured_content"]["total_bytes"].as_u64(),
        Some(total)
    );
    assert_eq!(
        page["structured_content"]["text"].as_str().unwrap().len() as u64,
        total
    );
    // another session does not see it
    let other = read("intruder", 0);
    assert_eq!(other["is_error"], true);
    assert_eq!(other["error"]["reason"], "not_found");
}

#[test]
fn audit_to_jsonl_or_nowhere_still_works() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    let jsonl = t.path().join("audit.jsonl");
    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"src/main.rs"}"#,
            "-w",
            w,
            "--audit",
            jsonl.to_str().unwrap(),
        ],
        t.path(),
    );
    ok(&out);
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(text.lines().count(), 1);
    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"src/main.rs"}"#,
            "-w",
            w,
            "--no-audit",
        ],
        t.path(),
    );
    ok(&out);
    // neither wrote to the store
    let records = lines(&toolgate(&["audit", "--json", "-w", w], t.path()));
    assert!(records.is_empty(), "{records:?}");
}

#[test]
fn bad_stores_and_arguments_give_clear_errors() {
    let t = tree();
    let p = t.path();
    let err = |out: &Output| String::from_utf8_lossy(&out.stderr).to_string();

    let out = toolgate(&["audit", "-w", p.join("ws").to_str().unwrap()], p);
    assert_eq!(out.status.code(), Some(1));
    assert!(err(&out).contains("no toolgate store at"), "{}", err(&out));

    let garbage = p.join("garbage.db");
    std::fs::write(&garbage, "not a database at all, just text\n".repeat(100)).unwrap();
    for cmd in [&["audit"][..], &["audit", "verify"], &["stats"]] {
        let mut args = cmd.to_vec();
        args.extend(["--store", garbage.to_str().unwrap()]);
        let out = toolgate(&args, p);
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        assert!(
            err(&out).contains("is not a toolgate store"),
            "{}",
            err(&out)
        );
    }
    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"src/main.rs"}"#,
            "-w",
            p.join("ws").to_str().unwrap(),
            "--store",
            garbage.to_str().unwrap(),
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err(&out).contains("is not a toolgate store"),
        "{}",
        err(&out)
    );

    // a store of a newer toolgate
    let ws = p.join("ws");
    call(&ws, "read_file", r#"{"path":"src/main.rs"}"#, "s");
    let db = ws.join(".toolgate/toolgate.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 999)
        .unwrap();
    let out = toolgate(&["audit", "--store", db.to_str().unwrap()], p);
    assert_eq!(out.status.code(), Some(1));
    assert!(err(&out).contains("schema version 999"), "{}", err(&out));

    let out = toolgate(
        &[
            "audit",
            "--since",
            "last tuesday",
            "--store",
            db.to_str().unwrap(),
        ],
        p,
    );
    // a usage error, like every other bad flag value
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err(&out).contains("invalid value 'last tuesday' for '--since <TIME>'"),
        "{}",
        err(&out)
    );
    let out = toolgate(&["audit", "--outcome", "meh"], p);
    assert_eq!(out.status.code(), Some(2));
    let out = toolgate(&["audit", "--store", "a", "--workspace", "b"], p);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sigterm_cancels_the_call_and_still_commits_its_record() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "call",
            "run_shell",
            r#"{"command":"sleep 30"}"#,
            "--yes",
            "-w",
            w,
            "--session",
            "term",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // the store exists once the process is past its start; give the shell a moment to begin
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !ws.join(".toolgate/toolgate.db").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    let started = std::time::Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(kill.success());
    // a watchdog, so a process that ignores SIGTERM fails the test instead of hanging it
    std::thread::spawn({
        let pid = pid.clone();
        move || {
            std::thread::sleep(std::time::Duration::from_secs(25));
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid])
                .status();
        }
    });
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the call ran on after SIGTERM"
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "cancelled", "{v}");
    let records = lines(&toolgate(
        &["audit", "--json", "-w", w, "--session", "term"],
        t.path(),
    ));
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["tool"], "run_shell");
    assert_eq!(records[0]["error_kind"], "cancelled");
}
