//! The unified diff `edit_file` returns, on the `similar` crate.
//!
//! Only the part of the file around the edits is diffed: from [`CONTEXT`] lines before the
//! first replaced range to [`CONTEXT`] lines after the last one, with hunk line numbers
//! offset to the whole file, so a small edit of a large file costs little. The diff is of
//! the files as the model sees them (`\r\n` shown as `\n`), is cut at [`MAX_DIFF_BYTES`],
//! and falls back to a coarser (still correct) diff when computing the smallest one would
//! take longer than [`DIFF_TIMEOUT`].

use similar::{Algorithm, ChangeTag, TextDiff};
use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

/// Lines of context around each change.
pub const CONTEXT: usize = 3;
/// The diff is cut after this many bytes (32 KiB), at a line boundary.
pub const MAX_DIFF_BYTES: usize = 32 << 10;
/// Time allowed for finding the smallest diff before a coarser one is taken.
pub const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// A unified diff and whether it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diff {
    /// `--- a/PATH`, `+++ b/PATH`, then hunks.
    pub text: String,
    /// Whether lines past [`MAX_DIFF_BYTES`] were left out.
    pub truncated: bool,
}

/// The diff of `old` and `new` for the file `shown`, where `changed` (byte offsets in `old`,
/// not empty, ascending) were replaced and everything after `changed.last().end` in `old`
/// is the same as the end of `new`.
pub(crate) fn unified(shown: &str, old: &str, new: &str, changed: &[Range<usize>]) -> Diff {
    let (first, last) = match (changed.first(), changed.last()) {
        (Some(f), Some(l)) => (f.start, l.end),
        _ => (0, old.len()),
    };
    let start = lines_back(old, first, CONTEXT);
    let end_old = lines_forward(old, last, CONTEXT);
    let tail = old.len() - end_old;
    let end_new = new.len() - tail;
    let line_offset = memchr::memchr_iter(b'\n', &old.as_bytes()[..start]).count();
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old[start..end_old], &new[start..end_new]);
    let mut text = format!("--- a/{shown}\n+++ b/{shown}\n");
    let mut truncated = false;
    'groups: for group in diff.grouped_ops(CONTEXT) {
        let (Some(first_op), Some(last_op)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first_op.old_range().start..last_op.old_range().end;
        let new_range = first_op.new_range().start..last_op.new_range().end;
        let hunk = format!(
            "@@ -{} +{} @@\n",
            hunk_range(&old_range, line_offset),
            hunk_range(&new_range, line_offset)
        );
        if !push_line(&mut text, &hunk) {
            truncated = true;
            break;
        }
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let value = change.value();
                let mut line = String::with_capacity(value.len() + 2);
                line.push(sign);
                line.push_str(value);
                if !value.ends_with('\n') {
                    line.push_str("\n\\ No newline at end of file\n");
                }
                if !push_line(&mut text, &line) {
                    truncated = true;
                    break 'groups;
                }
            }
        }
    }
    if truncated {
        let _ = writeln!(text, "[... diff cut at {MAX_DIFF_BYTES} bytes]");
    }
    Diff { text, truncated }
}

/// The diff of the whole of `old` against `new` (empty `old`: a new file), for
/// `write_file`'s approval question.
pub(crate) fn whole(shown: &str, old: &str, new: &str) -> Diff {
    let all = 0..old.len();
    unified(shown, old, new, std::slice::from_ref(&all))
}

/// Appends `line` unless that takes `text` past [`MAX_DIFF_BYTES`].
fn push_line(text: &mut String, line: &str) -> bool {
    if text.len() + line.len() > MAX_DIFF_BYTES {
        return false;
    }
    text.push_str(line);
    true
}

/// `start,len` of a hunk (1-based; for an empty range the line before it, as diff does).
fn hunk_range(r: &Range<usize>, offset: usize) -> String {
    let len = r.end - r.start;
    let start = if len == 0 {
        r.start + offset
    } else {
        r.start + offset + 1
    };
    format!("{start},{len}")
}

/// The start of the line `n` lines before the line holding offset `at`.
fn lines_back(s: &str, at: usize, n: usize) -> usize {
    let mut start = line_start(s, at);
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = line_start(s, start - 1);
    }
    start
}

/// The end (after its `\n`) of the line `n` lines after the one holding the last byte
/// before `at` (so a range ending just after a newline does not take in the next line).
fn lines_forward(s: &str, at: usize, n: usize) -> usize {
    let bytes = s.as_bytes();
    let mut end = if at > 0 && bytes[at - 1] == b'\n' {
        at
    } else {
        line_end(bytes, at)
    };
    for _ in 0..n {
        if end >= bytes.len() {
            break;
        }
        end = line_end(bytes, end);
    }
    end
}

fn line_start(s: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &s.as_bytes()[..at]).map_or(0, |i| i + 1)
}

fn line_end(bytes: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1)
}

#[cfg(test)]
// one replaced range is the common case
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn hunks_are_numbered_against_the_whole_file() {
        let old = numbered(20);
        let at = old.find("line 10\n").unwrap();
        let new = old.replace("line 10\n", "ten\nTEN\n");
        let d = unified("f.txt", &old, &new, &[at..at + 8]);
        assert_eq!(
            d.text,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,8 @@\n line 7\n line 8\n line 9\n-line 10\n\
             +ten\n+TEN\n line 11\n line 12\n line 13\n"
        );
        assert!(!d.truncated);
    }

    #[test]
    fn edits_at_the_edges_and_without_final_newline() {
        let d = unified("a", "x\ny", "x\nz", &[2..3]);
        assert_eq!(
            d.text,
            "--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\
             \\ No newline at end of file\n"
        );
        let d = unified("a", "gone\nkept\n", "kept\n", &[0..5]);
        assert_eq!(d.text, "--- a/a\n+++ b/a\n@@ -1,2 +1,1 @@\n-gone\n kept\n");
        let d = unified("a", "", "new\n", &[0..0]);
        assert_eq!(d.text, "--- a/a\n+++ b/a\n@@ -0,0 +1,1 @@\n+new\n");
    }

    #[test]
    fn far_apart_edits_make_separate_hunks() {
        let old = numbered(40);
        let new = old
            .replace("line 5\n", "five\n")
            .replace("line 35\n", "thirty-five\n");
        let a = old.find("line 5\n").unwrap();
        let b = old.find("line 35\n").unwrap();
        let d = unified("f", &old, &new, &[a..a + 7, b..b + 8]);
        let headers: Vec<&str> = d.text.lines().filter(|l| l.starts_with("@@")).collect();
        assert_eq!(headers, ["@@ -2,7 +2,7 @@", "@@ -32,7 +32,7 @@"]);
    }

    #[test]
    fn long_diffs_are_cut_at_a_line() {
        let old = "x\n".repeat(40_000);
        let new = "y\n".repeat(40_000);
        let d = unified("f", &old, &new, &[0..old.len()]);
        assert!(d.truncated);
        assert!(d.text.len() <= MAX_DIFF_BYTES + 64);
        assert!(d.text.ends_with("[... diff cut at 32768 bytes]\n"));
    }
}
