//! Capturing one output stream of a command in bounded memory.
//!
//! A [`Capture`] keeps the first [`CaptureLimits::keep_head`] bytes and the last
//! [`CaptureLimits::keep_tail`] bytes of a stream (a ring buffer) and counts the rest, so
//! `yes | head -c 50000000` costs at most `keep_head + keep_tail` bytes however much it
//! prints. When the stream ends, [`Capture::finish`] gives everything that was kept as text
//! ([`Captured::kept`]: the whole stream, or its head, a line naming the bytes dropped between,
//! and its tail), which goes to the result store when it does not fit the preview, and
//! [`Captured::preview`] cuts the text the model sees from it: at most
//! [`CaptureLimits::preview`] bytes, a third from the start of the stream and two thirds from
//! its end (the end of a build or a test run is where its verdict is), with a marker between
//! them naming the `read_result` handle and the offset in the kept text to read on from. Cuts
//! never split a UTF-8 character and prefer line breaks; invalid UTF-8 is shown as U+FFFD.
//! The kept text is already cleaned as every tool output is (control characters written as
//! visible escapes, `\x1b`: [`clean_output`]), so the preview's size is the size the model
//! sees: a stream of control characters or binary bytes, up to four times longer once
//! cleaned, would otherwise overrun the preview and push its end out of the result.

use std::collections::VecDeque;
use std::ops::Range;
use toolgate_core::results::{ceil_char_boundary, floor_char_boundary};
use toolgate_core::sanitize::clean_output;

/// How much of one stream is kept and shown, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureLimits {
    /// Bytes of the stream's start kept in memory (and in the stored full text).
    pub keep_head: usize,
    /// Bytes of the stream's end kept in memory (and in the stored full text).
    pub keep_tail: usize,
    /// The most bytes of text shown to the model for this stream (the preview).
    pub preview: usize,
}

impl CaptureLimits {
    /// The limits with every field at least 256 bytes and `preview` at most
    /// `keep_head + keep_tail`, so the preview is cut from what was kept.
    pub fn normalized(self) -> CaptureLimits {
        let keep_head = self.keep_head.max(256);
        let keep_tail = self.keep_tail.max(256);
        CaptureLimits {
            keep_head,
            keep_tail,
            preview: self.preview.clamp(256, keep_head + keep_tail),
        }
    }
}

/// One stream being captured.
#[derive(Debug)]
pub struct Capture {
    limits: CaptureLimits,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// A finished stream: everything that was kept, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The kept text: the whole stream, or its head, a marker line naming the bytes dropped
    /// between, and its tail. This is what the result store keeps when the stream does not fit
    /// its preview, so offsets named in a preview's marker are offsets into it.
    pub kept: String,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// Where the marker line of the dropped bytes lies in `kept`, when bytes were dropped.
    gap: Option<Range<usize>>,
    /// [`CaptureLimits::preview`].
    limit: usize,
}

impl Capture {
    /// An empty capture.
    pub fn new(limits: CaptureLimits) -> Capture {
        let limits = limits.normalized();
        Capture {
            limits,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    /// Bytes seen so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes held in memory now (at most `keep_head + keep_tail`).
    pub fn held(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Takes the next chunk of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let room = self.limits.keep_head - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.is_empty() {
            return;
        }
        let cap = self.limits.keep_tail;
        if bytes.len() >= cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - cap..]);
            return;
        }
        let over = (self.tail.len() + bytes.len()).saturating_sub(cap);
        self.tail.drain(..over);
        self.tail.extend(bytes);
    }

    /// Everything kept, as text: see the module docs.
    pub fn finish(self) -> Captured {
        let total = self.total;
        let dropped = total - (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into();
        let head = utf8_prefix(&self.head);
        let tail = if dropped > 0 {
            utf8_suffix(&tail)
        } else {
            &tail[..]
        };
        let mut kept = String::with_capacity(head.len() + tail.len() + 64);
        let mut gap = None;
        let text = |bytes: &[u8]| clean_output(&String::from_utf8_lossy(bytes)).into_owned();
        if dropped == 0 {
            let mut all = self.head;
            all.extend_from_slice(tail);
            kept.push_str(&text(&all));
        } else {
            kept.push_str(&text(head));
            if !kept.is_empty() && !kept.ends_with('\n') {
                kept.push('\n');
            }
            let start = kept.len();
            kept.push_str(&format!(
                "[... {dropped} of {total} bytes of output were not kept ...]"
            ));
            kept.push('\n');
            gap = Some(start..kept.len());
            kept.push_str(&text(tail));
        }
        Captured {
            kept,
            total_bytes: total,
            gap,
            limit: self.limits.preview,
        }
    }
}

impl Captured {
    /// Whether the preview leaves part of the stream out (then [`Captured::kept`] belongs in
    /// the result store, and its handle in [`Captured::preview`]).
    pub fn truncated(&self) -> bool {
        self.gap.is_some() || self.kept.len() > self.limit
    }

    /// The text the model sees: the whole stream when it fits, else at most
    /// [`CaptureLimits::preview`] bytes of [`Captured::kept`], a third from its start and two
    /// thirds from its end, with a marker line between them saying how many bytes of output
    /// it leaves out and, with `handle`, the `read_result` call that reads on from the first
    /// of them (`{"handle":"res_...","offset":N}`, `N` a byte offset into the kept text).
    pub fn preview(&self, handle: Option<&str>) -> String {
        if !self.truncated() {
            return self.kept.clone();
        }
        let text = self.kept.as_str();
        let widest = marker(self.total_bytes, self.total_bytes, handle, text.len());
        let budget = self.limit.saturating_sub(widest.len() + 2);
        let head_len = prefer_newline_back(text, floor_char_boundary(text, budget / 3));
        let tail_room = budget - head_len;
        let tail_start = prefer_newline_forward(
            text,
            ceil_char_boundary(text, text.len() - tail_room.min(text.len() - head_len)),
        );
        // stream bytes shown: the head and the tail, without the kept text's own marker
        let marker_shown = self
            .gap
            .as_ref()
            .map_or(0, |g| g.end.saturating_sub(g.start.max(tail_start)));
        let shown = (head_len + text.len() - tail_start - marker_shown) as u64;
        let left_out = self.total_bytes.saturating_sub(shown);
        let mut out = String::with_capacity(self.limit);
        out.push_str(&text[..head_len]);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker(left_out, self.total_bytes, handle, head_len));
        out.push('\n');
        out.push_str(&text[tail_start..]);
        out
    }
}

/// The marker line of a preview (without its line break).
fn marker(left_out: u64, total: u64, handle: Option<&str>, offset: usize) -> String {
    match handle {
        Some(h) => format!(
            "[... {left_out} of {total} bytes of output left out here; read them with read_result \
             {{\"handle\":\"{h}\",\"offset\":{offset}}} ...]"
        ),
        None => format!("[... {left_out} of {total} bytes of output left out here ...]"),
    }
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

/// `bytes` without an incomplete UTF-8 sequence cut off at its end.
fn utf8_prefix(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// `bytes` without UTF-8 continuation bytes cut off at its start (at most three).
fn utf8_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn limits(head: usize, tail: usize, preview: usize) -> CaptureLimits {
        CaptureLimits {
            keep_head: head,
            keep_tail: tail,
            preview,
        }
    }

    #[test]
    fn short_streams_are_kept_whole() {
        let mut c = Capture::new(limits(1024, 1024, 1024));
        c.push(b"hello ");
        c.push(b"world\n");
        let got = c.finish();
        assert!(!got.truncated());
        assert_eq!(got.kept, "hello world\n");
        assert_eq!(got.total_bytes, 12);
        assert_eq!(got.preview(Some("res_x")), "hello world\n");
    }

    #[test]
    fn memory_stays_bounded_and_the_ends_survive() {
        let mut c = Capture::new(limits(4096, 2048, 1024));
        let line = b"line of output\n";
        c.push(b"FIRST\n");
        for _ in 0..100_000 {
            c.push(line);
            assert!(c.held() <= 4096 + 2048);
        }
        c.push(b"LAST\n");
        let total = 6 + 100_000 * line.len() as u64 + 5;
        let got = c.finish();
        assert!(got.truncated());
        assert_eq!(got.total_bytes, total);
        let preview = got.preview(Some("res_0123"));
        assert!(preview.len() <= 1024, "{}", preview.len());
        assert!(preview.starts_with("FIRST\n"));
        assert!(preview.ends_with("LAST\n"));
        assert!(preview.contains("bytes of output left out here; read them with read_result"));
        assert!(got.kept.starts_with("FIRST\n") && got.kept.ends_with("LAST\n"));
        assert!(got.kept.contains("bytes of output were not kept"));
        assert!(got.kept.len() > preview.len() && got.kept.len() <= 4096 + 2048 + 100);
    }

    /// Between the preview and the head kept in memory the stream is whole, and its end is
    /// still what the preview ends with (the tail was lost there once).
    #[test]
    fn a_stream_longer_than_the_preview_keeps_its_tail() {
        let mut c = Capture::new(limits(2 << 20, 256 << 10, 24 << 10));
        let mut all = String::new();
        for i in 0..150 {
            all.push_str(&format!(
                "FAIL: test_{i} (tests.Case)\n{}\n",
                "-".repeat(400)
            ));
        }
        all.push_str("FAILED (failures=150)\n");
        assert!(all.len() > 24 << 10 && all.len() < 2 << 20);
        c.push(all.as_bytes());
        let got = c.finish();
        assert!(got.truncated());
        assert_eq!(got.kept, all, "the whole stream was kept");
        let preview = got.preview(Some("res_0123"));
        assert!(preview.len() <= 24 << 10, "{}", preview.len());
        assert!(preview.starts_with("FAIL: test_0 "));
        assert!(preview.ends_with("FAILED (failures=150)\n"), "{preview}");
        // the tail gets two thirds of the room
        let (head, rest) = preview.split_once("[... ").unwrap();
        let tail = rest.split_once("...]\n").unwrap().1;
        assert!(
            tail.len() > head.len() * 3 / 2,
            "{} {}",
            head.len(),
            tail.len()
        );
    }

    /// The marker names the handle and the offset in the kept text where what it leaves out
    /// begins: reading from there gives the bytes after the head, and the count is exact.
    #[test]
    fn the_marker_names_where_to_read_on() {
        let mut c = Capture::new(limits(1 << 20, 1 << 16, 2000));
        let text: String = (0..3000).map(|i| format!("{i}\n")).collect();
        c.push(text.as_bytes());
        let got = c.finish();
        let preview = got.preview(Some("res_abc"));
        let (head, rest) = preview.split_once("[... ").unwrap();
        let offset: usize = rest
            .split_once("\"offset\":")
            .unwrap()
            .1
            .split_once('}')
            .unwrap()
            .0
            .parse()
            .unwrap();
        assert_eq!(offset, head.len());
        assert!(got.kept[offset..].starts_with(&text[head.len()..head.len() + 20]));
        let left_out: usize = rest.split_once(' ').unwrap().0.parse().unwrap();
        let tail = rest.split_once("...]\n").unwrap().1;
        assert_eq!(head.len() + left_out + tail.len(), text.len());
        assert!(rest.contains("\"handle\":\"res_abc\""));
        // without a handle (the store failed) the marker still counts what is left out
        let bare = got.preview(None);
        assert!(
            bare.contains(" bytes of output left out here ...]") && !bare.contains("read_result")
        );
    }

    #[test]
    fn a_chunk_larger_than_the_tail_keeps_its_end() {
        let mut c = Capture::new(limits(256, 256, 256));
        c.push(&[b'a'; 256]);
        let mut big = vec![b'b'; 10_000];
        big.extend_from_slice(b"END");
        c.push(&big);
        let got = c.finish();
        assert!(got.preview(None).ends_with("END"));
        assert!(got.kept.ends_with("bbbEND"));
    }

    #[test]
    fn cuts_never_split_characters() {
        for (head, tail) in [(256, 256), (257, 258), (259, 257), (300, 301), (8000, 256)] {
            let mut c = Capture::new(limits(head, tail, 400));
            let text = "€😀é".repeat(2000);
            for chunk in text.as_bytes().chunks(7) {
                c.push(chunk);
            }
            let got = c.finish();
            assert!(
                !got.preview(Some("h")).contains('\u{FFFD}'),
                "{head} {tail}"
            );
            assert!(!got.kept.contains('\u{FFFD}'), "{head} {tail}");
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let mut c = Capture::new(limits(1024, 1024, 1024));
        c.push(&[0xff, b'a', 0xc3]);
        assert_eq!(c.finish().preview(None), "\u{FFFD}a\u{FFFD}");
    }

    #[test]
    fn limits_are_normalized() {
        assert_eq!(
            limits(0, 0, 0).normalized(),
            limits(256, 256, 256),
            "tiny limits are raised"
        );
        assert_eq!(limits(1000, 1000, 1 << 30).normalized().preview, 2000);
    }
}
