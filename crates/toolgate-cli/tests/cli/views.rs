//! Text a model controls stays on its line in every operator view: `toolgate audit` (table and
//! JSON), `stats`, `approvals list` and the log, for every character that could break a line,
//! reorder it or redraw the terminal.

use super::toolgate;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Characters that must never reach an operator's view raw.
const HIDDEN: &[char] = &[
    '\u{1b}',
    '\u{7}',
    '\u{85}',
    '\u{9b}',
    '\u{200b}',
    '\u{200e}',
    '\u{200f}',
    '\u{2028}',
    '\u{2029}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{061c}',
    '\u{feff}',
    '\u{e0041}',
];

fn assert_clean(what: &str, text: &str) {
    let raw: Vec<_> = text.chars().filter(|c| HIDDEN.contains(c)).collect();
    assert!(raw.is_empty(), "{what} shows {raw:?} raw:\n{text}");
}

fn run(ws: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .args(["--workspace", ws.to_str().unwrap()])
        .env("TOOLGATE_LOG", "debug")
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn every_operator_view_escapes_what_a_model_wrote() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let w = ws.to_str().unwrap();
    // one call per hidden character: in the arguments (written by write_file, searched for
    // by search_code), the call id, the session and a tool name that does not exist
    for (i, c) in HIDDEN.iter().enumerate() {
        // (in the content: the write tools make no file whose name holds one)
        let write = json!({"path": format!("f{i}.txt"), "content": format!("x{c}y")});
        let id = format!("id-{i}-{c}");
        let session = format!("s{c}");
        let (_, log) = run(
            ws,
            &[
                "call",
                "write_file",
                &write.to_string(),
                "--yes",
                "--id",
                &id,
                "--session",
                &session,
            ],
        );
        assert_clean("the log of write_file", &log);
        let (_, log) = run(ws, &["call", &format!("no_such{c}tool"), "{}", "--id", &id]);
        assert_clean("the log of an unknown tool", &log);
        let search = json!({"pattern": format!("a{c}b"), "literal": true});
        let out = toolgate(&["call", "search_code", &search.to_string(), "-w", w], ws);
        assert_clean(
            "toolgate call's own log",
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    let calls = 3 * HIDDEN.len();

    let (table, log) = run(ws, &["audit", "--limit", "0"]);
    assert_clean("audit", &table);
    assert_clean("audit's log", &log);
    // one header line and one line per call, whatever the calls held
    assert_eq!(table.lines().count(), 1 + calls, "{table}");
    assert!(table.contains("\\u{202e}"), "{table}");

    let (lines, _) = run(ws, &["audit", "--json", "--limit", "0"]);
    assert_clean("audit --json", &lines);
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), calls);
    // the same value: escaped as JSON, not changed (content is written as sent)
    let written: Vec<_> = records
        .iter()
        .filter(|r| r["tool"] == "write_file" && r["outcome"] == "ok")
        .map(|r| r["arguments"]["content"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<_> = HIDDEN.iter().map(|c| format!("x{c}y")).collect();
    assert_eq!(written, expected);

    let (stats, _) = run(ws, &["stats"]);
    assert_clean("stats", &stats);

    let tool = "write\u{202e}_file\u{2028}";
    let note = "note\u{2029}\u{1b}[2J";
    let (granted, _) = run(
        ws,
        &[
            "approvals",
            "grant",
            "--tool",
            tool,
            "--note",
            note,
            "--expires",
            "1h",
        ],
    );
    assert_clean("approvals grant", &granted);
    let (list, _) = run(ws, &["approvals", "list"]);
    assert_clean("approvals list", &list);
    assert_eq!(list.lines().count(), 2, "{list}");
    let (list, _) = run(ws, &["approvals", "list", "--json"]);
    assert_clean("approvals list --json", &list);
    let grant: Value = serde_json::from_str(list.trim()).unwrap();
    assert_eq!(
        (grant["tool_pattern"].as_str(), grant["note"].as_str()),
        (Some(tool), Some(note))
    );
}
