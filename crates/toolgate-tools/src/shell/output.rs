//! Capturing one output stream of a command in bounded memory.
//!
//! A [`Capture`] keeps the first [`CaptureLimits::keep_head`] bytes and the last
//! [`CaptureLimits::keep_tail`] bytes of a stream (a ring buffer) and counts the rest, so
//! `yes | head -c 50000000` costs at most `keep_head + keep_tail` bytes however much it
//! prints. When the stream ends, [`Capture::finish`] gives the text the model sees (at most
//! [`CaptureLimits::preview`] bytes: head, a marker saying how many bytes were dropped, tail)
//! and, when that text is not the whole stream, the longer text kept for the result store
//! (everything kept: head, marker, tail). Cuts never split a UTF-8 character; invalid UTF-8 is
//! shown as U+FFFD.

use std::collections::VecDeque;

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

/// A finished stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The text for the model: the whole stream, or head, marker and tail within
    /// [`CaptureLimits::preview`] bytes.
    pub preview: String,
    /// Whether `preview` is not the whole stream.
    pub truncated: bool,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// When truncated: everything that was kept (head, marker, tail), for the result store.
    pub kept: Option<String>,
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

    /// The stream as text: see the module docs.
    pub fn finish(self) -> Captured {
        let total = self.total;
        let dropped = total - (self.head.len() + self.tail.len()) as u64;
        if dropped == 0 && self.head.len() + self.tail.len() <= self.limits.preview {
            let mut all = self.head;
            all.extend(self.tail);
            return Captured {
                preview: String::from_utf8_lossy(&all).into_owned(),
                truncated: false,
                total_bytes: total,
                kept: None,
            };
        }
        let tail: Vec<u8> = self.tail.into();
        let kept = join(&self.head, &tail, dropped, total);
        // the preview: about two thirds head, one third tail, within `preview` bytes
        let marker_room = marker(total, total).len() + 2;
        let budget = self.limits.preview.saturating_sub(marker_room);
        let head_part = utf8_prefix(&self.head[..(budget * 2 / 3).min(self.head.len())]);
        let tail_budget = budget - head_part.len();
        let tail_part = if tail.len() > tail_budget {
            utf8_suffix(&tail[tail.len() - tail_budget..])
        } else {
            &tail[..]
        };
        let shown = (head_part.len() + tail_part.len()) as u64;
        let preview = join(head_part, tail_part, total - shown, total);
        let kept = (dropped > 0 || kept.len() > preview.len()).then_some(kept);
        Captured {
            preview,
            truncated: true,
            total_bytes: total,
            kept,
        }
    }
}

fn marker(dropped: u64, total: u64) -> String {
    format!("[... {dropped} of {total} bytes of output left out here ...]")
}

/// `head`, a marker line naming the `dropped` bytes, and `tail`, as text.
fn join(head: &[u8], tail: &[u8], dropped: u64, total: u64) -> String {
    let head = utf8_prefix(head);
    let tail = utf8_suffix(tail);
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(&String::from_utf8_lossy(head));
    if dropped > 0 {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker(dropped, total));
        out.push('\n');
    }
    out.push_str(&String::from_utf8_lossy(tail));
    out
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
        assert_eq!(
            c.finish(),
            Captured {
                preview: "hello world\n".into(),
                truncated: false,
                total_bytes: 12,
                kept: None
            }
        );
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
        assert!(got.truncated);
        assert_eq!(got.total_bytes, total);
        assert!(got.preview.len() <= 1024, "{}", got.preview.len());
        assert!(got.preview.starts_with("FIRST\n"));
        assert!(got.preview.ends_with("LAST\n"));
        assert!(got.preview.contains("bytes of output left out here"));
        let kept = got.kept.unwrap();
        assert!(kept.starts_with("FIRST\n") && kept.ends_with("LAST\n"));
        assert!(kept.len() > got.preview.len() && kept.len() <= 4096 + 2048 + 100);
    }

    #[test]
    fn a_chunk_larger_than_the_tail_keeps_its_end() {
        let mut c = Capture::new(limits(256, 256, 256));
        c.push(&[b'a'; 256]);
        let mut big = vec![b'b'; 10_000];
        big.extend_from_slice(b"END");
        c.push(&big);
        let got = c.finish();
        assert!(got.preview.ends_with("END"));
        assert!(got.kept.unwrap().ends_with("bbbEND"));
    }

    #[test]
    fn cuts_never_split_characters() {
        for (head, tail) in [(256, 256), (257, 258), (259, 257), (300, 301)] {
            let mut c = Capture::new(limits(head, tail, 400));
            let text = "€😀é".repeat(2000);
            for chunk in text.as_bytes().chunks(7) {
                c.push(chunk);
            }
            let got = c.finish();
            assert!(!got.preview.contains('\u{FFFD}'), "{head} {tail}");
            assert!(!got.kept.unwrap().contains('\u{FFFD}'), "{head} {tail}");
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let mut c = Capture::new(limits(1024, 1024, 1024));
        c.push(&[0xff, b'a', 0xc3]);
        assert_eq!(c.finish().preview, "\u{FFFD}a\u{FFFD}");
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
