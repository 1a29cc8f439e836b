//! A text past its byte limit: a head-and-tail preview with a marker naming the handle.

use crate::results::{ceil_char_boundary, floor_char_boundary};

/// A preview of `text` at most `max_bytes` long: the head (about two thirds), a marker that
/// says how many bytes were dropped and how to read them (`read_result` with `handle`), and
/// the tail. Cuts fall on UTF-8 boundaries, at a line break when one is near. Returns the
/// preview and how many bytes of `text` it shows.
pub fn preview(text: &str, max_bytes: usize, handle: &str) -> (String, usize) {
    if text.len() <= max_bytes {
        return (text.to_string(), text.len());
    }
    // the marker's own length depends on the numbers in it; reserve for the widest
    let marker_room = marker(text.len(), text.len(), handle, text.len()).len() + 2;
    let budget = max_bytes.saturating_sub(marker_room);
    let head_len = prefer_newline_back(text, floor_char_boundary(text, budget * 2 / 3));
    let tail_room = budget - head_len;
    let tail_start = prefer_newline_forward(
        text,
        ceil_char_boundary(text, text.len() - tail_room.min(text.len() - head_len)),
    );
    let dropped = tail_start - head_len;
    let mut out = String::with_capacity(max_bytes);
    out.push_str(&text[..head_len]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker(dropped, text.len(), handle, head_len));
    out.push('\n');
    out.push_str(&text[tail_start..]);
    debug_assert!(out.len() <= max_bytes, "{} > {max_bytes}", out.len());
    (out, head_len + (text.len() - tail_start))
}

fn marker(dropped: usize, total: usize, handle: &str, offset: usize) -> String {
    format!(
        "[... {dropped} of {total} bytes truncated; read them with read_result {{\"handle\":\"{handle}\",\"offset\":{offset}}} ...]"
    )
}

/// Moves a head cut back to just after a line break when one lies within 256 bytes.
fn prefer_newline_back(text: &str, cut: usize) -> usize {
    let from = floor_char_boundary(text, cut.saturating_sub(256));
    match text[from..cut].rfind('\n') {
        Some(i) => from + i + 1,
        None => cut,
    }
}

/// Moves a tail cut forward to just after a line break when one lies within 256 bytes.
fn prefer_newline_forward(text: &str, cut: usize) -> usize {
    let to = floor_char_boundary(text, cut.saturating_add(256));
    match text[cut..to].find('\n') {
        Some(i) if cut + i + 1 < text.len() => cut + i + 1,
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(preview("abc", 10, "h"), ("abc".to_string(), 3));
    }

    #[test]
    fn long_text_keeps_head_and_tail_within_the_limit() {
        let text: String = (0..10_000).map(|i| format!("line {i} ü€\n")).collect();
        for max in [256, 1000, 4096, 65536] {
            let (p, shown) = preview(&text, max, "res_0123");
            assert!(p.len() <= max, "{} > {max}", p.len());
            assert!(p.starts_with("line 0 "));
            assert!(p.ends_with("line 9999 ü€\n"));
            assert!(p.contains("res_0123"));
            assert!(shown < text.len());
        }
    }

    #[test]
    fn cuts_never_split_characters() {
        let text = "😀".repeat(5000);
        let (p, _) = preview(&text, 1000, "h");
        assert!(p.len() <= 1000);
        // it is a String, so boundaries held; the head and tail are whole emoji
        assert!(p.starts_with('😀') && p.ends_with('😀'));
    }
}
