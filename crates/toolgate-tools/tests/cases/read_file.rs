//! `read_file` through the pipeline and directly.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::{Content, ErrorKind, TypedTool};
use toolgate_tools::fs::read_file::{ReadFileArgs, ReadFileOutput};
use toolgate_tools::ReadFile;

fn expect(
    path: &str,
    content: &str,
    start: u64,
    returned: u64,
    total: u64,
    next: Option<u64>,
) -> ReadFileOutput {
    ReadFileOutput {
        path: path.into(),
        content: content.into(),
        start_line: start,
        lines_returned: returned,
        total_lines: total,
        total_lines_at_least: false,
        truncated: next.is_some(),
        next_offset: next,
    }
}

#[tokio::test]
async fn reads_whole_files_with_line_numbers() {
    let f = Fixture::new();
    f.write("src/main.rs", "fn main() {\r\n    println!(\"hi\");\n}\n");
    let r = f.call("read_file", json!({"path": "src/main.rs"})).await;
    assert_eq!(
        out::<ReadFileOutput>(&r),
        expect(
            "src/main.rs",
            "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}",
            1,
            3,
            3,
            None
        )
    );
    // the model reads the numbered lines themselves, not their JSON
    assert_eq!(
        r.content,
        vec![Content::text(
            "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}"
        )]
    );
    // an absolute path inside the workspace and a `./` spelling name the same file
    let abs = f.ws().join("src/main.rs");
    let r2 = f
        .call("read_file", json!({"path": abs.to_str().unwrap()}))
        .await;
    assert_eq!(r2.structured_content, r.structured_content);
    let r3 = f
        .call("read_file", json!({"path": "./src/../src/main.rs"}))
        .await;
    assert_eq!(r3.structured_content, r.structured_content);
}

#[tokio::test]
async fn windows_page_through_a_file() {
    let f = Fixture::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &text);
    let r = f
        .call(
            "read_file",
            json!({"path": "ten.txt", "offset": 4, "limit": 3}),
        )
        .await;
    assert_eq!(
        out::<ReadFileOutput>(&r),
        expect(
            "ten.txt",
            "     4\tline 4\n     5\tline 5\n     6\tline 6",
            4,
            3,
            10,
            Some(7)
        )
    );
    assert_eq!(
        r.text(),
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n\
         [lines 4-6 of 10 shown; call read_file with offset 7 to read on]"
    );
    let r = f
        .call("read_file", json!({"path": "ten.txt", "offset": 10}))
        .await;
    assert_eq!(
        out::<ReadFileOutput>(&r),
        expect("ten.txt", "    10\tline 10", 10, 1, 10, None)
    );
    assert_eq!(r.text(), "    10\tline 10", "nothing follows the last line");
    let r = f
        .call("read_file", json!({"path": "ten.txt", "offset": 11}))
        .await;
    assert_bad_args(&r, &["/offset"]);
}

#[tokio::test]
async fn empty_and_unterminated_files() {
    let f = Fixture::new();
    f.write("empty.txt", "");
    f.write("no-eol", "a\nb");
    let r = f.call("read_file", json!({"path": "empty.txt"})).await;
    assert_eq!(
        out::<ReadFileOutput>(&r),
        expect("empty.txt", "", 1, 0, 0, None)
    );
    assert_eq!(
        r.content,
        vec![Content::text("[empty.txt is empty: 0 lines]")],
        "never an empty text block"
    );
    let r = f.call("read_file", json!({"path": "no-eol"})).await;
    assert_eq!(
        out::<ReadFileOutput>(&r),
        expect("no-eol", "     1\ta\n     2\tb", 1, 2, 2, None)
    );
}

#[tokio::test]
async fn long_lines_are_cut_and_invalid_utf8_replaced() {
    let f = Fixture::new();
    let mut content = "y".repeat(2500).into_bytes();
    content.extend_from_slice(b"\nok \xff\xfe end\n");
    f.write("long.txt", &content);
    let o: ReadFileOutput = out(&f.call("read_file", json!({"path": "long.txt"})).await);
    let want = format!(
        "     1\t{} [... line cut: 500 more bytes]\n     2\tok \u{fffd}\u{fffd} end",
        "y".repeat(2000)
    );
    assert_eq!(o.content, want);
}

#[tokio::test]
async fn large_pages_stop_at_the_content_budget() {
    let f = Fixture::new();
    let text: String = (1..=3000)
        .map(|i| format!("{i:04} {}\n", "z".repeat(60)))
        .collect();
    f.write("big.txt", &text);
    let r = f.call("read_file", json!({"path": "big.txt"})).await;
    assert!(r.truncation.is_none(), "the page must fit the result cap");
    let o: ReadFileOutput = out(&r);
    assert!(o.truncated && o.lines_returned < 3000 && o.total_lines == 3000);
    let next = o.next_offset.unwrap();
    assert_eq!(
        r.text(),
        format!(
            "{}\n[lines 1-{} of 3000 shown; call read_file with offset {next} to read on]",
            o.content,
            next - 1
        ),
        "the page says where to read on"
    );
    let o2: ReadFileOutput = out(&f
        .call("read_file", json!({"path": "big.txt", "offset": next}))
        .await);
    assert_eq!(o2.start_line, next);
    assert!(o2.content.starts_with(&format!("{next:>6}\t{next:04} ")));
}

#[tokio::test]
async fn refuses_what_is_not_a_readable_text_file() {
    let f = Fixture::new();
    f.write("bin.dat", b"\x7fELF\x00\x01rest");
    f.write("dir/x.txt", "x");
    let r = f.call("read_file", json!({"path": "bin.dat"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("binary_file"));
    let r = f.call("read_file", json!({"path": "dir"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("is_a_directory"));
    let r = f.call("read_file", json!({"path": "."})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("is_a_directory"));
    assert_not_found(&f.call("read_file", json!({"path": "missing.txt"})).await);
    assert_not_found(&f.call("read_file", json!({"path": "dir/x.txt/y"})).await);
    // a file of zeros is binary however large
    let big = std::fs::File::create(f.ws().join("zeros.log")).unwrap();
    big.set_len(64 << 20).unwrap();
    let r = f.call("read_file", json!({"path": "zeros.log"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("binary_file"));
}

/// A file past what used to be read_file's limit (10 MiB), here 48 MiB with a sparse middle,
/// is read by windows at its start, in its middle and at its end; each result holds only its
/// window, and an offset past the end names the valid range.
#[tokio::test]
async fn a_file_of_any_size_is_read_by_windows() {
    use std::io::{Seek, SeekFrom, Write};
    let f = Fixture::new();
    let path = f.ws().join("big.log");
    let mut file = std::fs::File::create(&path).unwrap();
    let head: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
    file.write_all(head.as_bytes()).unwrap();
    // 48 MiB of spaces and line breaks would take long to write: a sparse hole of NUL bytes
    // (past the first 8 KiB, so the file is text) holds the middle, as one long line
    file.seek(SeekFrom::Start(48 << 20)).unwrap();
    file.write_all(b"\nTAIL 1\nTAIL 2\n").unwrap();
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() > 10 << 20);
    let o: ReadFileOutput = out(&f
        .call("read_file", json!({"path": "big.log", "limit": 2}))
        .await);
    assert_eq!(o.content, "     1\tline 1\n     2\tline 2");
    assert_eq!((o.total_lines, o.next_offset), (100_003, Some(3)));
    let o: ReadFileOutput = out(&f
        .call(
            "read_file",
            json!({"path": "big.log", "offset": 99_999, "limit": 3}),
        )
        .await);
    assert!(
        o.content
            .starts_with(" 99999\tline 99999\n100000\tline 100000\n100001\t\\x00\\x00"),
        "{}",
        &o.content[..80]
    );
    assert!(
        o.content.ends_with(" more bytes]"),
        "the sparse line is cut"
    );
    assert!(o.content.len() < 16 << 10, "{}", o.content.len());
    let o: ReadFileOutput = out(&f
        .call("read_file", json!({"path": "big.log", "offset": 100_002}))
        .await);
    assert_eq!(o.content, "100002\tTAIL 1\n100003\tTAIL 2");
    assert!(!o.truncated);
    let r = f
        .call("read_file", json!({"path": "big.log", "offset": 100_004}))
        .await;
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("from 1 to 100003"), "{e}");
}

#[tokio::test]
async fn a_fifo_is_refused_without_blocking() {
    let f = Fixture::new();
    let fifo = f.ws().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        f.call("read_file", json!({"path": "pipe"})),
    )
    .await
    .expect("read_file must not block on a FIFO");
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_regular_file"));
}

/// A unix socket cannot be opened (`ENXIO`): it is not a regular file, as a FIFO is not,
/// rather than an I/O error.
#[tokio::test]
async fn a_socket_is_not_a_regular_file() {
    let f = Fixture::new();
    let _socket = std::os::unix::net::UnixListener::bind(f.ws().join("sock")).unwrap();
    let r = f.call("read_file", json!({"path": "sock"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_regular_file"));
}

#[tokio::test]
async fn a_link_inside_the_workspace_reads_its_target() {
    let f = Fixture::new();
    f.write("real/notes.md", "hello\n");
    f.link("real/notes.md", "alias.md");
    let o: ReadFileOutput = out(&f.call("read_file", json!({"path": "alias.md"})).await);
    assert_eq!(o, expect("real/notes.md", "     1\thello", 1, 1, 1, None));
}

#[tokio::test]
async fn bad_arguments_name_their_pointer() {
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    let cases = [
        (json!({}), vec!["/path"]),
        (json!({"path": 5}), vec!["/path"]),
        (json!({"path": ""}), vec!["/path"]),
        (json!({"path": "a.txt", "offset": 0}), vec!["/offset"]),
        (json!({"path": "a.txt", "offset": -1}), vec!["/offset"]),
        (json!({"path": "a.txt", "limit": 0}), vec!["/limit"]),
        (json!({"path": "a.txt", "limit": 10001}), vec!["/limit"]),
        (json!({"path": "a.txt", "limit": "10"}), vec!["/limit"]),
        (json!({"path": "a.txt", "offset": 1.5}), vec!["/offset"]),
        (json!({"path": ["a.txt"]}), vec!["/path"]),
    ];
    for (args, pointers) in cases {
        let r = f.call("read_file", args.clone()).await;
        assert_bad_args(&r, &pointers);
    }
    let r = f.call("read_file", json!([1, 2])).await;
    assert_err(&r, ErrorKind::InvalidArguments, None);
}

#[tokio::test]
async fn a_session_without_workspace_cannot_read() {
    let f = Fixture::new();
    let session = f.pipeline.session("bare").build().unwrap();
    let call = toolgate_core::ToolCall::new("c1", "read_file", json!({"path": "a.txt"}));
    let r = f.pipeline.dispatch(call, &session).await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("no_workspace"));
}

#[tokio::test]
async fn direct_calls_are_confined_too() {
    let f = Fixture::new();
    f.write("a.txt", "alpha\n");
    f.link("../outside/secret.txt", "notes.txt");
    let args = |path: &str| ReadFileArgs {
        path: path.into(),
        offset: None,
        limit: None,
    };
    let o = ReadFile.call(args("a.txt"), f.ctx()).await.unwrap();
    assert_eq!(o, expect("a.txt", "     1\talpha", 1, 1, 1, None));
    for bad in [
        "notes.txt",
        "../outside/secret.txt",
        &f.abs("outside/secret.txt"),
        "/etc/passwd",
    ] {
        let e = ReadFile.call(args(bad), f.ctx()).await.unwrap_err();
        assert_eq!(
            e.reason.as_deref(),
            Some("path_outside_workspace"),
            "{bad}: {e}"
        );
    }
    let e = ReadFile
        .call(args("a.txt"), toolgate_core::ToolContext::builder().build())
        .await
        .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("no_workspace"));
    // out-of-range numbers given directly are clamped, never a panic
    let o = ReadFile
        .call(
            ReadFileArgs {
                path: "a.txt".into(),
                offset: Some(0),
                limit: Some(u32::MAX),
            },
            f.ctx(),
        )
        .await
        .unwrap();
    assert_eq!(o.lines_returned, 1);
}
