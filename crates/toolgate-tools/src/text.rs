//! Text helpers shared by the tools: line endings, lossy decoding and cutting long lines.

use std::borrow::Cow;

/// `bytes` without one trailing `\n` and then one trailing `\r`.
pub(crate) fn trim_eol(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// Appends `bytes` to `out` decoded as UTF-8 (an invalid sequence becomes U+FFFD), cut after
/// `max_chars` characters with a marker saying how many bytes were left out.
pub(crate) fn push_cut(out: &mut String, bytes: &[u8], max_chars: usize) {
    let text = decode(bytes);
    // a line of at most `max_chars` bytes has at most `max_chars` characters
    if text.len() <= max_chars {
        out.push_str(&text);
        return;
    }
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push_str(&cut_marker(text.len() - cut));
        }
        None => out.push_str(&text),
    }
}

/// Appends a line of `total` bytes of which only the first ones, `kept`, are at hand (at least
/// `4 * max_chars + 4` of them when the line is longer): decoded and cut as [`push_cut`] does,
/// the marker counting the bytes never read too.
pub(crate) fn push_cut_of(out: &mut String, kept: &[u8], total: usize, max_chars: usize) {
    if kept.len() >= total {
        push_cut(out, kept, max_chars);
        return;
    }
    let text = decode(kept);
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            // the cut falls inside `kept`, so `cut` bytes of the line are shown (counted on
            // the decoded text when the line is not valid UTF-8)
            out.push_str(&cut_marker(total.saturating_sub(cut)));
        }
        None => {
            out.push_str(&text);
            out.push_str(&cut_marker(total.saturating_sub(kept.len())));
        }
    }
}

/// A line shown around byte `at` (where a match starts): as [`cut`] gives it when `at` lies
/// well within its first `max_chars` characters; otherwise from a little before `at`, after a
/// marker saying how many bytes were left out before, so the match is in what is shown.
pub(crate) fn excerpt(bytes: &[u8], at: usize, max_chars: usize) -> String {
    const LEAD: usize = 100;
    if at.saturating_add(LEAD) <= max_chars || at >= bytes.len() {
        return cut(bytes, max_chars);
    }
    let mut start = at - LEAD.min(at);
    // not inside a UTF-8 sequence
    while start < at && bytes[start] & 0xC0 == 0x80 {
        start += 1;
    }
    let mut out = format!("[... {start} bytes before ...] ");
    push_cut(&mut out, &bytes[start..], max_chars);
    out
}

/// `bytes` as text: borrowed when they are valid UTF-8 (checked with SIMD, the common case),
/// else decoded with each invalid sequence as U+FFFD, as [`String::from_utf8_lossy`] does.
/// The lossy decoder alone walks valid text a byte at a time: a profile of 32 KiB reads put
/// 6% of the server's time in it.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `bytes` decoded and cut as [`push_cut`] does.
pub(crate) fn cut(bytes: &[u8], max_chars: usize) -> String {
    let mut out = String::with_capacity(bytes.len().min(max_chars + 48));
    push_cut(&mut out, bytes, max_chars);
    out
}

fn cut_marker(rest: usize) -> String {
    format!(" [... line cut: {rest} more bytes]")
}

/// A path relative to the workspace root as shown to the model: `/`-separated, lossy for
/// names that are not UTF-8. On Unix the separator already is `/`.
pub(crate) fn rel_display(p: &std::path::Path) -> Cow<'_, str> {
    p.to_string_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_text_is_borrowed_and_invalid_bytes_decoded_as_the_lossy_decoder_does() {
        for bytes in [
            &b"plain ascii"[..],
            "caf\u{e9} \u{1F600} \u{202E}".as_bytes(),
            b"",
        ] {
            assert!(matches!(decode(bytes), Cow::Borrowed(_)));
            assert_eq!(decode(bytes), String::from_utf8_lossy(bytes));
        }
        for bytes in [
            &b"bad \xff byte"[..],
            b"\xe2\x82",         // a sequence cut at the end
            b"\xc3\x28 x",       // a bad continuation byte
            b"\xed\xa0\x80",     // a surrogate
            b"\xf4\x90\x80\x80", // past U+10FFFF
        ] {
            assert!(matches!(decode(bytes), Cow::Owned(_)));
            assert_eq!(decode(bytes), String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn line_endings_are_trimmed_once() {
        assert_eq!(trim_eol(b"a\r\n"), b"a");
        assert_eq!(trim_eol(b"a\n"), b"a");
        assert_eq!(trim_eol(b"a\n\n"), b"a\n");
        assert_eq!(trim_eol(b"a"), b"a");
        assert_eq!(trim_eol(b""), b"");
    }

    #[test]
    fn long_lines_are_cut_on_character_boundaries() {
        assert_eq!(cut(b"short", 10), "short");
        let s = "é".repeat(30);
        let c = cut(s.as_bytes(), 10);
        assert!(c.starts_with(&"é".repeat(10)));
        assert!(c.ends_with(" [... line cut: 40 more bytes]"), "{c}");
        // exactly at the limit in characters, longer in bytes: not cut
        assert_eq!(cut("é".repeat(10).as_bytes(), 10), "é".repeat(10));
        assert_eq!(cut(b"a\xffb", 10), "a\u{fffd}b");
    }

    #[test]
    fn an_excerpt_shows_a_match_far_into_a_long_line() {
        let line = format!("{}NEEDLE{}", "é".repeat(3000), "b".repeat(1000));
        let at = line.find("NEEDLE").unwrap();
        let e = excerpt(line.as_bytes(), at, 500);
        assert!(
            e.starts_with("[... 5900 bytes before ...] éé"),
            "{}",
            &e[..40]
        );
        assert!(e.contains("NEEDLE") && e.ends_with(" more bytes]"), "{e}");
        // a match near the start: the line as cut
        assert_eq!(excerpt(b"NEEDLE and more", 0, 500), "NEEDLE and more");
        assert_eq!(excerpt(line.as_bytes(), 10, 500), cut(line.as_bytes(), 500));
    }
}
