//! The built-ins' errors are answers a model can act on: a missing file names the near paths
//! and a `glob` that finds its name; a bad regular expression is described on the pattern the
//! model sent, never on the one toolgate builds around it; a limit says what to do that a
//! tool here can do.

use super::support::{assert_err, out};
use super::write_support::Ws;
use serde_json::json;
use toolgate_core::ErrorKind;
use toolgate_tools::fs::glob::GlobOutput;
use toolgate_tools::fs::write_file::MAX_CONTENT_BYTES;

fn message(r: &toolgate_core::ToolResult) -> String {
    r.error.as_ref().expect("an error").message.clone()
}

#[tokio::test]
async fn a_missing_file_names_near_paths_and_the_glob_that_finds_it() {
    let w = Ws::new();
    w.write("src/parser.rs", "x");
    w.write("src/lexer.rs", "x");
    w.write("docs/guide.md", "x");
    let r = w.call("read_file", json!({"path": "src/parsr.rs"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_found"));
    let m = message(&r);
    assert!(m.contains("did you mean \"src/parser.rs\"?"), "{m}");
    assert!(m.contains("{\"pattern\": \"**/parsr.rs\"}"), "{m}");
    let details = r.error.as_ref().unwrap().details.as_deref().unwrap();
    assert_eq!(details["near"], json!(["src/parser.rs"]));
    // a misspelt directory: the path under the right one
    let m = message(&w.call("read_file", json!({"path": "scr/lexer.rs"})).await);
    assert!(m.contains("did you mean \"src/lexer.rs\"?"), "{m}");
    // nothing near: no guess, and the glob the message suggests finds the file
    let r = w.call("read_file", json!({"path": "guide.md"})).await;
    let m = message(&r);
    assert!(!m.contains("did you mean"), "{m}");
    let o: GlobOutput = out(&w.call("glob", json!({"pattern": "**/guide.md"})).await);
    assert_eq!(o.paths, ["docs/guide.md"]);
    // edit_file's missing file says the same
    let r = w
        .call(
            "edit_file",
            json!({"path": "src/parsr.rs", "old_string": "x", "new_string": "y"}),
        )
        .await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_found"));
    assert_eq!(w.asked(), 0);
}

#[tokio::test]
async fn regex_errors_are_about_the_pattern_sent() {
    let w = Ws::new();
    w.write("a.txt", "fn main() {}\n");
    for (pattern, says) in [
        ("fn (", "unclosed group (at character 4 of \"fn (\")"),
        ("a{3,1}", "invalid repetition count range"),
        ("[z-a]", "invalid character class range"),
        ("\\p{NoSuchClass}", "Unicode property not found"),
        ("x)", "unopened group"),
    ] {
        let r = w.call("search_code", json!({"pattern": pattern})).await;
        assert_err(&r, ErrorKind::InvalidArguments, Some("invalid_regex"));
        let text = r.text();
        assert!(text.contains(says), "{pattern}: {text}");
        assert!(
            !text.contains("(?:"),
            "{pattern}: toolgate's wrapping shows: {text}"
        );
        assert!(!text.contains("regex parse error"), "{pattern}: {text}");
        assert!(text.contains("set literal true"), "{pattern}: {text}");
    }
}

#[tokio::test]
async fn limits_suggest_only_what_a_tool_can_do() {
    let w = Ws::new();
    let huge = "x".repeat(MAX_CONTENT_BYTES as usize + 1);
    let r = w
        .call("write_file", json!({"path": "big.txt", "content": huge}))
        .await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    let m = message(&r);
    // no tool appends, so writing "in parts" is not advice a model can follow
    assert!(!m.contains("parts"), "{m}");
    assert!(m.contains("no tool appends"), "{m}");
    let r = w
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x".repeat(MAX_CONTENT_BYTES as usize + 1), "new_string": ""}),
        )
        .await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert!(
        message(&r).contains("send a shorter piece of text"),
        "{}",
        message(&r)
    );
}
