//! edit_file through a real pipeline (approver approving) and directly: exact matching,
//! line endings and byte-order marks, the diff, and every kind of bad input and bad target.
//! A failed edit never changes the file.

use super::write_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::fs::edit_file::{EditFileArgs, EditFileOutput, LineEnding, MAX_FILE_BYTES};
use toolgate_tools::EditFile;

async fn edit(w: &Ws, path: &str, old: &str, new: &str, all: bool) -> toolgate_core::ToolResult {
    w.call(
        "edit_file",
        json!({"path": path, "old_string": old, "new_string": new, "replace_all": all}),
    )
    .await
}

/// edit-crlf-22 (line_endings_bom): the model's `\n` matches a CRLF file's line endings, and
/// what it adds is written with CRLF: no mixed endings. A BOM stays in front.
#[tokio::test]
async fn edit_crlf_22_crlf_files_stay_crlf() {
    let w = Ws::new();
    w.write("a.txt", "alpha\r\nbeta\r\ngamma\r\n");
    let o: EditFileOutput = out(&edit(&w, "a.txt", "alpha\nbeta", "ALPHA\nBETA", false).await);
    assert_eq!(w.read("a.txt").unwrap(), b"ALPHA\r\nBETA\r\ngamma\r\n");
    assert_eq!(
        o,
        EditFileOutput {
            path: "a.txt".into(),
            replacements: 1,
            diff:
                "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-alpha\n-beta\n+ALPHA\n+BETA\n gamma\n"
                    .into(),
            diff_truncated: false,
            line_ending: LineEnding::Crlf,
            bom: false,
        }
    );
    // lines added, CRLF sent by the model, replace_all: still CRLF only
    out::<EditFileOutput>(&edit(&w, "a.txt", "BETA\r\n", "b1\nb2\r\nb3\n", false).await);
    let o: EditFileOutput = out(&edit(&w, "a.txt", "\n", "\n\n", true).await);
    assert_eq!(o.replacements, 5);
    let bytes = w.read("a.txt").unwrap();
    assert_eq!(
        bytes,
        b"ALPHA\r\n\r\nb1\r\n\r\nb2\r\n\r\nb3\r\n\r\ngamma\r\n\r\n"
    );
    let bare_lf = bytes
        .windows(2)
        .filter(|p| p[1] == b'\n' && p[0] != b'\r')
        .count();
    assert_eq!((bare_lf, bytes[0] == b'\n'), (0, false));
}

#[tokio::test]
async fn byte_order_marks_are_kept_with_either_line_ending() {
    let w = Ws::new();
    w.write("bom-crlf.txt", b"\xef\xbb\xbfname = a\r\nvalue = 1\r\n");
    w.write("bom-lf.txt", b"\xef\xbb\xbffirst\nsecond\n");
    let o: EditFileOutput = out(&edit(
        &w,
        "bom-crlf.txt",
        "name = a\nvalue = 1",
        "name = b\nvalue = 2\nextra = 3",
        false,
    )
    .await);
    assert_eq!((o.bom, o.line_ending), (true, LineEnding::Crlf));
    assert_eq!(
        w.read("bom-crlf.txt").unwrap(),
        b"\xef\xbb\xbfname = b\r\nvalue = 2\r\nextra = 3\r\n"
    );
    // the first line is matchable without the mark
    let o: EditFileOutput = out(&edit(&w, "bom-lf.txt", "first", "1st", false).await);
    assert_eq!((o.bom, o.line_ending), (true, LineEnding::Lf));
    assert_eq!(w.read("bom-lf.txt").unwrap(), b"\xef\xbb\xbf1st\nsecond\n");
    // deleting the whole text keeps the mark
    out::<EditFileOutput>(&edit(&w, "bom-lf.txt", "1st\nsecond\n", "", false).await);
    assert_eq!(w.read("bom-lf.txt").unwrap(), b"\xef\xbb\xbf");
}

/// edit-crlf-22 (line_endings_bom), what read_file shows is what edit_file matches: a file
/// with a byte-order mark is read without it (the mark is no text to copy), and is edited
/// from the text read; a mixed file keeps each untouched ending and writes new lines in its
/// majority style.
#[tokio::test]
async fn edit_crlf_22_text_read_from_a_file_matches_it() {
    let w = Ws::new();
    w.write("bom.txt", b"\xef\xbb\xbf[core]\r\nname = a\r\n");
    let r = w.call("read_file", json!({"path": "bom.txt"})).await;
    assert_eq!(r.text(), "     1\t[core]\n     2\tname = a");
    let o: EditFileOutput =
        out(&edit(&w, "bom.txt", "[core]\nname = a", "[core]\nname = b", false).await);
    assert_eq!((o.bom, o.line_ending), (true, LineEnding::Crlf));
    assert_eq!(
        w.read("bom.txt").unwrap(),
        b"\xef\xbb\xbf[core]\r\nname = b\r\n"
    );
    // mixed: the majority (CRLF) for new lines, the lone LF left as it was
    w.write("mixed.txt", "a\r\nb\nc\r\nd\r\n");
    let o: EditFileOutput = out(&edit(&w, "mixed.txt", "c\nd", "c\nc2\nd", false).await);
    assert_eq!(o.line_ending, LineEnding::Crlf);
    assert_eq!(w.read("mixed.txt").unwrap(), b"a\r\nb\nc\r\nc2\r\nd\r\n");
}

/// edit-crlf-22 (line_endings_bom), classic Mac OS endings: a file with `\r` and no `\n` is
/// read one line per `\r` (not one line full of escaped `\x0d`), the model's `\n` (or `\r`)
/// matches its line ends, and what it adds is written with `\r`: no `\n` mixed in.
#[tokio::test]
async fn edit_crlf_22_cr_only_files_stay_cr_only() {
    let w = Ws::new();
    w.write("mac.txt", "alpha\rbeta\rgamma\r");
    let r = w.call("read_file", json!({"path": "mac.txt"})).await;
    assert_eq!(r.text(), "     1\talpha\n     2\tbeta\n     3\tgamma");
    let o: EditFileOutput =
        out(&edit(&w, "mac.txt", "alpha\nbeta", "ALPHA\nBETA\nnew", false).await);
    assert_eq!(o.line_ending, LineEnding::Cr);
    assert_eq!(o.diff, "--- a/mac.txt\n+++ b/mac.txt\n@@ -1,3 +1,4 @@\n-alpha\n-beta\n+ALPHA\n+BETA\n+new\n gamma\n");
    out::<EditFileOutput>(&edit(&w, "mac.txt", "new\rgamma", "gamma\r\ndelta", false).await);
    assert_eq!(w.read("mac.txt").unwrap(), b"ALPHA\rBETA\rgamma\rdelta\r");
}

/// A character read_file shows escaped (an invisible one, a control) copied from its text into
/// old_string matches nothing; the error says what the escape stands for and what to send.
#[tokio::test]
async fn an_escape_copied_from_read_file_is_explained_and_the_character_itself_matches() {
    let w = Ws::new();
    let text = "let a = \"x\u{200b}y\";\n";
    w.write("z.rs", text);
    let r = edit(&w, "z.rs", "\"x\\u{200b}y\"", "\"xy\"", false).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("no_match"));
    let m = &r.error.as_ref().unwrap().message;
    assert!(m.contains("send the character itself"), "{m}");
    assert_eq!(w.read("z.rs").unwrap(), text.as_bytes());
    // a plain miss does not talk about escapes
    let r = edit(&w, "z.rs", "let b", "let c", false).await;
    assert!(
        !r.error.as_ref().unwrap().message.contains("escape"),
        "{r:?}"
    );
    let o: EditFileOutput = out(&edit(&w, "z.rs", "\"x\u{200b}y\"", "\"xy\"", false).await);
    assert_eq!(o.replacements, 1);
    assert_eq!(w.read("z.rs").unwrap(), b"let a = \"xy\";\n");
}

#[tokio::test]
async fn unique_matches_are_required_unless_replace_all() {
    let w = Ws::new();
    let text = "let x = 1;\nlet y = x;\nprint(x);\n";
    w.write("m.rs", text);
    let r = edit(&w, "m.rs", "x", "z", false).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("ambiguous_match"));
    let e = r.error.as_ref().unwrap();
    assert!(e.message.contains("occurs 3 times"), "{}", e.message);
    assert!(e.message.contains("lines 1, 2, 3"), "{}", e.message);
    assert!(e.message.contains("replace_all"), "{}", e.message);
    assert_eq!(
        e.details.as_deref(),
        Some(&json!({"count": 3, "lines": [1, 2, 3]}))
    );
    assert_eq!(w.read("m.rs").unwrap(), text.as_bytes());
    let r = edit(&w, "m.rs", "let q", "let r", false).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("no_match"));
    assert!(r.error.as_ref().unwrap().message.contains("read_file"));
    assert_eq!(w.read("m.rs").unwrap(), text.as_bytes());
    // whitespace is part of the match: no trimming, no fuzzy fallback
    for near in [
        "let x = 1; ",
        " let x = 1;",
        "let  x = 1;",
        "LET X = 1;",
        "let x = 1;\r",
    ] {
        let r = edit(&w, "m.rs", near, "nope", false).await;
        assert_err(&r, ErrorKind::ToolFailed, Some("no_match"));
    }
    let o: EditFileOutput = out(&edit(&w, "m.rs", "x", "count", true).await);
    assert_eq!(o.replacements, 3);
    assert_eq!(
        w.read("m.rs").unwrap(),
        b"let count = 1;\nlet y = count;\nprint(count);\n"
    );
    let o: EditFileOutput = out(&edit(&w, "m.rs", "let y = count;\n", "", false).await);
    assert_eq!(o.replacements, 1);
    assert_eq!(
        o.diff,
        "--- a/m.rs\n+++ b/m.rs\n@@ -1,3 +1,2 @@\n let count = 1;\n-let y = count;\n print(count);\n"
    );
}

#[tokio::test]
async fn bad_strings_are_invalid_arguments_and_change_nothing() {
    let w = Ws::new();
    w.write("a.txt", "a\r\nb\n");
    assert_bad_args(&edit(&w, "a.txt", "", "x", false).await, &["/old_string"]);
    assert_bad_args(&edit(&w, "a.txt", "a", "a", false).await, &["/new_string"]);
    assert_bad_args(
        &edit(&w, "a.txt", "a\r\nb", "a\nb", true).await,
        &["/new_string"],
    );
    assert_bad_args(
        &w.call("edit_file", json!({"path": "a.txt", "old_string": "a"}))
            .await,
        &["/new_string"],
    );
    assert_bad_args(
        &w.call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"}),
        )
        .await,
        &["/replace_all"],
    );
    assert_bad_args(
        &w.call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b", "fuzzy": true}),
        )
        .await,
        &["/fuzzy"],
    );
    let r = edit(&w, "a.txt", "a\u{0}", "b", false).await;
    assert_err(&r, ErrorKind::InvalidInput, Some("forbidden_characters"));
    let r = w
        .call_raw(
            "edit_file",
            r#"{"path":"a.txt","old_string":"a","new_string":"\udc00"}"#,
        )
        .await;
    assert_err(&r, ErrorKind::InvalidArguments, Some("malformed_json"));
    let huge = "h".repeat(MAX_FILE_BYTES as usize + 1);
    let r = edit(&w, "a.txt", "a", &huge, false).await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert_eq!(w.read("a.txt").unwrap(), b"a\r\nb\n");
    assert_eq!(w.asked(), 0);
}

#[tokio::test]
async fn control_characters_in_strings_are_matched_and_written_verbatim() {
    let w = Ws::new();
    w.write("t.txt", "col1\tcol2\x1b[0m\n");
    out::<EditFileOutput>(&edit(&w, "t.txt", "\tcol2\x1b[0m", "\tCOL2\x1b[1m\x0c", false).await);
    assert_eq!(w.read("t.txt").unwrap(), b"col1\tCOL2\x1b[1m\x0c\n");
}

#[tokio::test]
async fn files_that_cannot_be_edited_are_refused_unchanged() {
    let w = Ws::new();
    w.write("latin1.txt", b"caf\xe9\n");
    w.write("dir/x.txt", "x");
    w.fifo("pipe");
    let big = "a\n".repeat(MAX_FILE_BYTES as usize / 2) + "b";
    w.write("big.txt", &big);
    w.write("grow.txt", "seed\n");
    let cases = [
        ("latin1.txt", "caf", ErrorKind::ToolFailed, "not_utf8"),
        ("missing.txt", "x", ErrorKind::ToolFailed, "not_found"),
        ("nodir/missing.txt", "x", ErrorKind::ToolFailed, "not_found"),
        ("dir", "x", ErrorKind::ToolFailed, "is_a_directory"),
        (".", "x", ErrorKind::ToolFailed, "is_a_directory"),
        ("pipe", "x", ErrorKind::ToolFailed, "not_a_regular_file"),
        ("big.txt", "b", ErrorKind::UnsafeInput, "limit_exceeded"),
    ];
    for (path, old, kind, reason) in cases {
        let call = edit(&w, path, old, "new", false);
        let r = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .unwrap_or_else(|_| panic!("{path}: edit_file hung"));
        assert_err(&r, kind, Some(reason));
    }
    let r = edit(&w, "latin1.txt", "caf", "new", false).await;
    assert!(r.error.unwrap().message.contains("offset 3"));
    // an edit whose result would pass the limit
    let r = edit(&w, "grow.txt", "seed", &"g".repeat(6 << 20), false).await;
    out::<EditFileOutput>(&r);
    let r = edit(&w, "grow.txt", "g", "gg", true).await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    // one replacement whose result passes the limit
    let r = edit(&w, "grow.txt", "\n", &"h".repeat(5 << 20), false).await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert!(r.error.unwrap().message.contains("would become"));
    // replace_all past a million occurrences is refused before anything is built
    let r = edit(&w, "grow.txt", "g", "h", true).await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert!(r.error.unwrap().message.contains("more than 1000000 times"));
    assert_eq!(w.read("grow.txt").unwrap().len(), (6 << 20) + 1);
    assert_eq!(w.read("latin1.txt").unwrap(), b"caf\xe9\n");
    assert_eq!(w.read("big.txt").unwrap(), big.as_bytes());
    assert!(!w.ws().join("nodir").exists() && !w.ws().join("missing.txt").exists());
    assert!(temp_files(&w.ws()).is_empty());
}

#[tokio::test]
async fn permissions_survive_an_edit() {
    let w = Ws::new();
    w.write("tool.sh", "#!/bin/sh\necho 1\n");
    let p = w.ws().join("tool.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    out::<EditFileOutput>(&edit(&w, "tool.sh", "echo 1", "echo 2", false).await);
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[tokio::test]
async fn direct_calls_check_the_same_things() {
    let w = Ws::new();
    w.write("a.txt", "one two\n");
    let tool = EditFile::new();
    let args = |old: &str, new: &str| EditFileArgs {
        path: "a.txt".into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    };
    let o = tool.call(args("two", "2"), w.ctx()).await.unwrap();
    assert_eq!(o.replacements, 1);
    assert_eq!(w.read("a.txt").unwrap(), b"one 2\n");
    for (old, new, pointer) in [("", "x", "/old_string"), ("one", "one", "/new_string")] {
        let e = tool.call(args(old, new), w.ctx()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArguments);
        assert_eq!(e.faults[0].pointer, pointer);
        let e = tool.guard(&args(old, new), &w.ctx()).unwrap_err();
        assert_eq!(e.faults[0].pointer, pointer);
    }
    let mut outside = args("CANARY", "x");
    outside.path = "../outside/secret.txt".into();
    let e = tool.call(outside, w.ctx()).await.unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("path_outside_workspace"));
    assert_eq!(w.read("a.txt").unwrap(), b"one 2\n");
    w.assert_outside_untouched();
}

#[tokio::test]
async fn a_cancelled_edit_changes_nothing() {
    let w = Ws::new();
    w.write("c.txt", "v1\n");
    let token = toolgate_core::CancellationToken::new();
    token.cancel();
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(w.session.workspace().unwrap().clone())
        .cancellation(token)
        .build();
    let e = EditFile::new()
        .call(
            EditFileArgs {
                path: "c.txt".into(),
                old_string: "v1".into(),
                new_string: "v2".into(),
                replace_all: false,
            },
            ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
    assert_eq!(w.read("c.txt").unwrap(), b"v1\n");
    assert!(temp_files(&w.ws()).is_empty());
}

/// Under the idempotency ledger: an edit that failed changed nothing, so the same edit sent
/// again once the file allows it runs (its derived key was left free); a successful edit sent
/// again is answered with its first result instead of failing on the text it replaced.
#[tokio::test]
async fn a_failed_edit_leaves_its_key_free_and_a_repeated_edit_is_a_replay() {
    let w = Ws::new();
    w.write("a.txt", "one\n");
    let r = edit(&w, "a.txt", "two", "three", false).await;
    assert_eq!(
        r.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::ToolFailed)
    );
    w.write("a.txt", "one\ntwo\n");
    let first = edit(&w, "a.txt", "two", "three", false).await;
    assert!(!first.is_error && !first.replayed, "{first:?}");
    assert_eq!(w.read("a.txt").unwrap(), b"one\nthree\n");
    let again = edit(&w, "a.txt", "two", "three", false).await;
    assert!(again.replayed, "{again:?}");
    assert_eq!(again.structured_content, first.structured_content);
    assert_eq!(w.read("a.txt").unwrap(), b"one\nthree\n");
}
