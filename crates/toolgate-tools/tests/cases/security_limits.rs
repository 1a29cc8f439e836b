//! The resource- and number-limit cases of `shared/cases/security.jsonl` (fifo-81,
//! huge-single-line-82, offset-overflow-83, regex-redos-85, glob-brace-86), each run against
//! every tool that takes the same kind of input. (stale-edit-90 is `stale_edit.rs`; dup-keys-84
//! needs the configuration's rules and is a test of the binary, `toolgate-cli`'s
//! `cli/dup_keys.rs`.)

use super::shell_support::{exists, Shell};
use super::support::{assert_bad_args, assert_err, out};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use toolgate_core::{ErrorKind, ToolCall, ToolResult};
use toolgate_tools::fs::glob::GlobOutput;
use toolgate_tools::fs::list_dir::{EntryKind, ListDirOutput};
use toolgate_tools::fs::read_file::ReadFileOutput;
use toolgate_tools::search::search_code::SearchCodeOutput;
use toolgate_tools::shell::run_shell::RunShellOutput;

/// A pipeline with the read-only tools and run_shell, approving every call.
fn fixture() -> Shell {
    Shell::new()
}

async fn call(s: &Shell, tool: &str, args: Value) -> ToolResult {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    s.pipeline
        .dispatch(ToolCall::new(format!("lim-{n}"), tool, args), &s.session)
        .await
}

/// fifo-81 (resource_limits): a FIFO nobody writes to never blocks a call: read_file refuses
/// it at once (not_a_regular_file), search_code, glob and list_dir finish (list_dir shows it as
/// kind other), run_shell `cat` on it ends at its timeout, write_file and edit_file refuse it.
#[tokio::test]
async fn fifo_81_a_fifo_blocks_no_tool() {
    let s = fixture();
    s.setup("mkfifo live.pipe && echo 'needle here' > a.txt");
    let started = Instant::now();
    let r = call(&s, "read_file", json!({"path": "live.pipe"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_regular_file"));
    assert!(r.text().contains("FIFO"), "{}", r.text());
    let o: SearchCodeOutput = out(&call(&s, "search_code", json!({"pattern": "needle"})).await);
    assert_eq!(o.matches.len(), 1);
    let o: SearchCodeOutput = out(&call(
        &s,
        "search_code",
        json!({"pattern": "needle", "path": "live.pipe"}),
    )
    .await);
    assert_eq!(o.total_matches, 0);
    let o: GlobOutput = out(&call(&s, "glob", json!({"pattern": "**/*"})).await);
    assert_eq!(o.paths, ["a.txt", "live.pipe"]);
    let o: ListDirOutput = out(&call(&s, "list_dir", json!({})).await);
    let pipe = o.entries.iter().find(|e| e.name == "live.pipe").unwrap();
    assert_eq!((pipe.kind, pipe.size), (EntryKind::Other, None));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let r = s
        .call(json!({"command": "cat live.pipe", "timeout_ms": 1000}))
        .await;
    let e = r.error.as_ref().expect("timed out");
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::OutcomeUnknown, Some("timeout"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    // the write tools refuse it without opening it
    let w = super::write_support::Ws::new();
    w.fifo("live.pipe");
    for (tool, args) in [
        ("write_file", json!({"path": "live.pipe", "content": "x"})),
        (
            "edit_file",
            json!({"path": "live.pipe", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let r = w.call(tool, args).await;
        assert_err(&r, ErrorKind::ToolFailed, Some("not_a_regular_file"));
    }
}

/// huge-single-line-82 (output_truncation): one line of 5 MB stays a few KiB in every result:
/// read_file cuts it to 2000 characters with a marker counting the rest, search_code reports
/// the match at its column with an excerpt that shows it, run_shell `cat` keeps head and tail
/// under the result cap with a handle that reads the rest.
#[tokio::test]
async fn huge_single_line_82_one_huge_line_stays_small() {
    let s = fixture();
    s.setup("python3 -c \"print('A'*5000000 + 'NEEDLE' + 'B'*100)\" > min.js");
    let r = call(&s, "read_file", json!({"path": "min.js", "limit": 1})).await;
    let o: ReadFileOutput = out(&r);
    assert!(o.content.starts_with("     1\tAAAA"));
    assert!(
        o.content.ends_with(" [... line cut: 4998106 more bytes]"),
        "{}",
        &o.content[o.content.len() - 60..]
    );
    assert!(serde_json::to_string(&r).unwrap().len() < 8 << 10);
    let r = call(&s, "search_code", json!({"pattern": "NEEDLE"})).await;
    let o: SearchCodeOutput = out(&r);
    let m = &o.matches[0];
    assert_eq!(
        (m.path.as_str(), m.line, m.column),
        ("min.js", 1, 5_000_001)
    );
    assert!(
        m.text.contains("NEEDLE") && m.text.len() < 1024,
        "{}",
        m.text
    );
    assert!(
        m.text.starts_with("[... 4999900 bytes before ...] AAA"),
        "{}",
        m.text
    );
    assert!(serde_json::to_string(&r).unwrap().len() < 8 << 10);
    let r = s.call(json!({"command": "cat min.js"})).await;
    let spec_cap = 64 << 10;
    assert!(r.text().len() <= spec_cap, "{}", r.text().len());
    let o: RunShellOutput = out(&r);
    assert!(
        o.stdout.starts_with("AAAA") && o.stdout.ends_with("BBBB\n"),
        "{}",
        o.stdout.len()
    );
    assert!(o.stdout_truncated && o.stdout.contains("read_result {\"handle\":\""));
    let page = call(
        &s,
        "read_result",
        json!({"handle": o.stdout_handle.unwrap(), "offset": 2_000_000, "limit": 100}),
    )
    .await;
    assert!(out::<Value>(&page)["text"]
        .as_str()
        .unwrap()
        .starts_with("AAAA"));
}

/// fifo-81 and huge-single-line-82 (resource_limits), a file of gigabytes: a window at its
/// start ends at once, without reading the whole file to count its lines (a sparse file of
/// 64 GiB took the call to its timeout): `total_lines` is then a lower bound, said so in the
/// structured content and the text; search_code and glob over it finish too.
#[tokio::test]
async fn fifo_81_a_window_of_a_huge_file_does_not_read_all_of_it() {
    let s = fixture();
    let path = s.t.join("ws/huge.log");
    let f = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &f, "entry\n".repeat(3000).as_bytes()).unwrap();
    // the rest is a hole: no disk, but 64 GiB to read
    f.set_len(64 << 30).unwrap();
    let started = Instant::now();
    let r = call(&s, "read_file", json!({"path": "huge.log", "limit": 2})).await;
    let o: ReadFileOutput = out(&r);
    assert_eq!(
        (o.lines_returned, o.total_lines_at_least, o.next_offset),
        (2, true, Some(3))
    );
    // the lines of what was read (a chunk or two) are counted, and that many at least
    assert!((3..=3000).contains(&o.total_lines), "{}", o.total_lines);
    assert!(
        r.text().ends_with(&format!(
            "\n[lines 1-2 of at least {} shown; call read_file with offset 3 to read on]",
            o.total_lines
        )),
        "{}",
        r.text()
    );
    // a window in the middle of the text part, the same
    let o: ReadFileOutput = out(&call(
        &s,
        "read_file",
        json!({"path": "huge.log", "offset": 2500, "limit": 10}),
    )
    .await);
    assert_eq!((o.lines_returned, o.total_lines_at_least), (10, true));
    let o: SearchCodeOutput = out(&call(&s, "search_code", json!({"pattern": "entry"})).await);
    assert_eq!(o.total_matches, 0, "the hole makes it binary: skipped");
    let o: GlobOutput = out(&call(&s, "glob", json!({"pattern": "*.log"})).await);
    assert_eq!(o.paths, ["huge.log"]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // a small file is still counted to its end
    s.setup("printf 'a\\nb\\nc\\n' > small.txt");
    let o: ReadFileOutput =
        out(&call(&s, "read_file", json!({"path": "small.txt", "limit": 1})).await);
    assert_eq!((o.total_lines, o.total_lines_at_least), (3, false));
}

/// offset-overflow-83 (numeric_limits): numbers past what an argument can hold are refused as
/// invalid_arguments at their own pointer (never a panic or a wrap-around), and an offset
/// past the end names the valid range.
#[tokio::test]
async fn offset_overflow_83_numbers_past_their_type_are_refused_at_their_pointer() {
    let s = fixture();
    s.setup("printf 'a\\nb\\nc\\n' > f.txt");
    let r = call(
        &s,
        "read_file",
        json!({"path": "f.txt", "offset": u64::MAX}),
    )
    .await;
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("send an offset from 1 to 3"), "{e}");
    assert_eq!(e.faults[0].pointer, "/offset");
    let two_64: Value = serde_json::from_str("18446744073709551616").unwrap();
    let huge: Value = serde_json::from_str("1e30").unwrap();
    for (tool, args, pointer) in [
        (
            "read_file",
            json!({"path": "f.txt", "offset": two_64}),
            "/offset",
        ),
        (
            "read_file",
            json!({"path": "f.txt", "offset": huge}),
            "/offset",
        ),
        (
            "read_file",
            json!({"path": "f.txt", "offset": -1}),
            "/offset",
        ),
        (
            "read_file",
            json!({"path": "f.txt", "offset": 1.5}),
            "/offset",
        ),
        ("read_file", json!({"path": "f.txt", "limit": 0}), "/limit"),
        (
            "read_file",
            json!({"path": "f.txt", "limit": u32::MAX}),
            "/limit",
        ),
        (
            "read_result",
            json!({"handle": "res_x", "limit": u64::MAX}),
            "/limit",
        ),
        (
            "read_result",
            json!({"handle": "res_x", "offset": two_64}),
            "/offset",
        ),
        (
            "search_code",
            json!({"pattern": "a", "max_matches": u64::MAX}),
            "/max_matches",
        ),
        (
            "search_code",
            json!({"pattern": "a", "context": u64::MAX}),
            "/context",
        ),
        ("list_dir", json!({"path": two_64}), "/path"),
        (
            "run_shell",
            json!({"command": "true", "timeout_ms": u64::MAX}),
            "/timeout_ms",
        ),
    ] {
        let r = call(&s, tool, args.clone()).await;
        assert_bad_args(&r, &[pointer]);
        assert!(r.is_recoverable(), "{tool} {args}");
    }
    // JSON Schema counts 2.0 and 1e3 as integers, so they are the integers they spell (they
    // failed to decode, with no pointer, while the validator let them through)
    for (i, (raw, first, lines)) in [
        (r#"{"path":"f.txt","offset":2.0}"#, 2, 2),
        (r#"{"path":"f.txt","offset":2e0,"limit":1.0}"#, 2, 1),
        (r#"{"path":"f.txt","limit":1e3}"#, 1, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("lim-raw-{i}");
        let r = s
            .pipeline
            .dispatch(ToolCall::raw(id, "read_file", raw), &s.session)
            .await;
        let o: ReadFileOutput = out(&r);
        assert_eq!((o.start_line, o.lines_returned), (first, lines), "{raw}");
    }
    let r = s
        .pipeline
        .dispatch(
            ToolCall::raw(
                "lim-raw-e19",
                "read_file",
                r#"{"path":"f.txt","offset":1e19}"#,
            ),
            &s.session,
        )
        .await;
    let e = r.error.as_ref().unwrap();
    assert!(e.message.contains("send an offset from 1 to 3"), "{e}");
    // an offset that fits but is past the end of a stored result names the end
    let r = call(
        &s,
        "read_result",
        json!({"handle": "res_x", "offset": u64::MAX}),
    )
    .await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_found"));
}

/// regex-redos-85 (resource_limits): a pattern that backtracks exponentially elsewhere runs in
/// linear time here; one whose compiled form is too large ends quickly with invalid_regex
/// saying why and suggesting literal; look-around and back-references get the same clear
/// error.
#[tokio::test]
async fn regex_redos_85_patterns_cannot_take_the_machine() {
    let s = fixture();
    s.setup("python3 -c \"print('a'*100000 + '!')\" > a.txt");
    let started = Instant::now();
    let o: SearchCodeOutput = out(&call(&s, "search_code", json!({"pattern": "(a+)+$"})).await);
    assert_eq!(o.total_matches, 0);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    for (pattern, why) in [
        ("(\\w{1000}){1000}", "size limit"),
        ("\\w{5000}", "size limit"),
        ("(?=a)b", "look-around"),
        ("(a)\\1", "backreferences"),
    ] {
        let started = Instant::now();
        let r = call(&s, "search_code", json!({ "pattern": pattern })).await;
        assert_err(&r, ErrorKind::InvalidArguments, Some("invalid_regex"));
        let e = r.error.as_ref().unwrap();
        assert!(
            e.message.contains(why) && e.message.contains("literal true"),
            "{e}"
        );
        assert_eq!(e.faults[0].pointer, "/pattern");
        // a bound that catches a blow-up (which takes minutes), not a timing: one pattern takes
        // ~5 s in a debug build on a loaded 2-core machine, a tenth of it in release
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{pattern}: {:?}",
            started.elapsed()
        );
    }
}

/// glob-brace-86 (resource_limits): brace groups, nested braces and long runs of `*a` or
/// `**/` never expand exponentially; each glob (and search_code's glob filter) finishes
/// quickly, and `{..,src}/*` returns only paths inside the workspace.
#[tokio::test]
async fn glob_brace_86_patterns_never_expand_exponentially() {
    let s = fixture();
    s.setup("mkdir -p src && for i in $(seq 1 300); do echo 'fn f() {}' > src/file_$i.rs; done");
    let patterns = [
        (format!("{}b", "{a}".repeat(300)), 0),
        ("{a,b}".repeat(100), 0),
        (format!("{}a{}", "{".repeat(60), "}".repeat(60)), 0),
        ("*a".repeat(300), 0),
        (format!("{}*.rs", "**/".repeat(300)), 300),
        ("{..,src}/*".to_string(), 300),
    ];
    for (pattern, matches) in patterns {
        let started = Instant::now();
        let r = call(&s, "glob", json!({ "pattern": pattern })).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{pattern}: {:?}",
            started.elapsed()
        );
        if let Some(e) = &r.error {
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{pattern}: {e}");
            continue;
        }
        let o: GlobOutput = out(&r);
        assert_eq!(o.total_matches, matches, "{pattern}");
        assert!(
            o.paths.iter().all(|p| p.starts_with("src/")),
            "{pattern}: {:?}",
            o.paths
        );
        let started = Instant::now();
        let r = call(&s, "search_code", json!({"pattern": "fn", "glob": pattern})).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{pattern}: {:?}",
            started.elapsed()
        );
        assert!(r.is_recoverable(), "{pattern}: {}", r.text());
    }
    assert!(!exists(s.t.join("outside/file_1.rs")));
}
