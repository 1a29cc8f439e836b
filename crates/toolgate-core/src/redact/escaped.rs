//! Secrets inside backslash-escaped text: JSON carried in a string (`curl -d
//! "{\"password\":\"hunter2\"}"`, a tool's result holding a JSON document as a string), a key
//! name spelled with `\u` escapes (`\u0070assword=hunter2`), and the same escaped twice
//! (`{\\\"token\\\":\\\"abc\\\"}`).
//!
//! 1. A text holding a backslash is decoded: `\"`, `\\`, `\/`, `\'` and `\uXXXX` (a
//!    surrogate pair as one character) become the character they stand for, again while the
//!    result still holds one (an escape of an escape), at most [`MAX_PASSES`] times. Escapes
//!    of control characters (`\n`, `\t`, `\u000a`, ...) stay as they are, so a quoted value
//!    holding one is read whole (`"a\nb"`, a PEM key's `\n`-joined lines) and ordinary text
//!    (`C:\new\test`, `\d+`, `echo "a\nb"`) reads as it is written; malformed escapes (`\u12`,
//!    a lone surrogate, a trailing backslash) stay too.
//! 2. Each decoded text is scanned for secrets like any other ([`super::inline`], and its
//!    percent-encoded runs by [`super::percent`]): each round's text, not only the last, since
//!    a round too many can end a quoted value early (`"hun\"ter"`).
//! 3. Each secret found there is mapped back to the bytes of the original that spell it,
//!    escapes within it included (`{\"password\":\"[REDACTED]\"}`).
//!
//! A text without a backslash costs one pass of `memchr` over its bytes; one without an escape
//! it decodes costs one more. The map from a decoded text to the one it came from holds one
//! entry per escape, not per byte.

use std::ops::Range;

/// At most this many rounds of decoding (two undo JSON escaped inside escaped JSON, and one
/// more).
const MAX_PASSES: usize = 3;

/// Adds to `found` the ranges of `s` that spell a secret once its backslash escapes are
/// decoded (see the module docs).
pub(super) fn escaped_secrets(s: &str, found: &mut Vec<Range<usize>>) {
    if memchr::memchr(b'\\', s.as_bytes()).is_none() {
        return;
    }
    let mut rounds: Vec<Round> = Vec::new();
    let mut hits = Vec::new();
    for _ in 0..MAX_PASSES {
        let Some(round) = Round::of(rounds.last().map_or(s, |r| &r.text)) else {
            break;
        };
        hits.clear();
        super::inline::find(&round.text, &mut hits);
        super::percent::encoded_secrets(&round.text, &mut hits);
        rounds.push(round);
        found.extend(hits.iter().filter(|h| h.start < h.end).map(|h| {
            rounds
                .iter()
                .rev()
                .fold(h.clone(), |r, round| round.origin(r))
        }));
    }
}

/// One escape decoded: the bytes `at..at + len` of a round's text come from the bytes
/// `from..from + from_len` of the text before it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    at: usize,
    from: usize,
    len: u8,
    from_len: u8,
}

/// One round of decoding: the text, and the escapes it decoded in order.
struct Round {
    text: String,
    spans: Vec<Span>,
}

impl Round {
    /// `prev` with each escape it holds decoded; `None` when it holds none.
    fn of(prev: &str) -> Option<Round> {
        let b = prev.as_bytes();
        let mut text = String::new();
        let mut spans = Vec::new();
        // where the bytes not yet copied start: past the last escape decoded
        let mut copied = 0;
        for at in memchr::memchr_iter(b'\\', b) {
            if at < copied {
                // the second backslash of `\\`
                continue;
            }
            let Some((c, from_len)) = escape_at(b, at) else {
                continue;
            };
            if spans.is_empty() {
                text.reserve(b.len());
            }
            // `copied` and `at` are ASCII bytes' positions: character boundaries
            text.push_str(&prev[copied..at]);
            spans.push(Span {
                at: text.len(),
                from: at,
                len: c.len_utf8() as u8,
                from_len: from_len as u8,
            });
            text.push(c);
            copied = at + from_len;
        }
        if spans.is_empty() {
            return None;
        }
        text.push_str(&prev[copied..]);
        Some(Round { text, spans })
    }

    /// The bytes of the text before this round that the byte at `p` comes from.
    fn byte_origin(&self, p: usize) -> Range<usize> {
        match self.spans.partition_point(|s| s.at <= p).checked_sub(1) {
            None => p..p + 1,
            Some(i) => {
                let s = self.spans[i];
                let (end, from_end) = (s.at + s.len as usize, s.from + s.from_len as usize);
                if p < end {
                    s.from..from_end
                } else {
                    let q = from_end + (p - end);
                    q..q + 1
                }
            }
        }
    }

    /// The range of the text before this round that spells the non-empty range `r` of this
    /// round's text: every escape that `r` touches whole.
    fn origin(&self, r: Range<usize>) -> Range<usize> {
        self.byte_origin(r.start).start..self.byte_origin(r.end - 1).end
    }
}

/// The character the escape at `at` (a backslash) stands for, and the escape's length in
/// bytes; `None` for an escape left as it is: a control character's, a malformed one, a
/// lone surrogate, a backslash at the end, and any other character after a backslash.
fn escape_at(b: &[u8], at: usize) -> Option<(char, usize)> {
    match *b.get(at + 1)? {
        c @ (b'"' | b'\\' | b'/' | b'\'') => Some((char::from(c), 2)),
        b'u' => {
            let hi = hex4(b, at + 2)?;
            let (code, len) = if (0xD800..0xDC00).contains(&hi) {
                // a high surrogate stands for a character only with a low one after it
                if b.get(at + 6..at + 8) != Some(b"\\u") {
                    return None;
                }
                let lo = hex4(b, at + 8).filter(|lo| (0xDC00..0xE000).contains(lo))?;
                (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 12)
            } else {
                (hi, 6)
            };
            // a lone low surrogate is no character
            char::from_u32(code)
                .filter(|c| !c.is_control())
                .map(|c| (c, len))
        }
        _ => None,
    }
}

/// The four hex digits at `at` as a number.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?
        .iter()
        .try_fold(0, |n, &c| Some(n * 16 + char::from(c).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_text_is_decoded_with_each_escape_mapped_to_its_bytes() {
        let s = r#"a\"b\\\"c\u00e9\/\d\ud83d\ude00"#;
        let one = Round::of(s).unwrap();
        assert_eq!(one.text, r#"a"b\"cé/\d😀"#);
        // `"` from `\"`, verbatim `b`, `é` (two bytes) from `\u00e9`, `😀` from the pair
        assert_eq!(one.origin(1..2), 1..3);
        assert_eq!(one.origin(2..3), 3..4);
        assert_eq!(one.origin(6..8), 9..15);
        assert_eq!(one.origin(7..8), 9..15);
        assert_eq!(one.origin(9..11), 17..19);
        assert_eq!(one.origin(11..15), 19..31);
        assert_eq!(one.origin(0..15), 0..31);
        let two = Round::of(&one.text).unwrap();
        assert_eq!(two.text, r#"a"b"cé/\d😀"#);
        assert_eq!(two.origin(3..4), 3..5);
        assert_eq!(one.origin(two.origin(3..4)), 4..8);
        assert!(Round::of(&two.text).is_none());
    }

    #[test]
    fn escapes_of_control_characters_and_malformed_ones_stay() {
        for s in [
            r"C:\new\test",
            r"\d+\s*\w",
            r"echo a\nb\tc\r\b\f",
            r"\u000a\u0000\u007f\u0085",
            r"\u12",
            r"\u12g4",
            r"\uD800",
            r"\uD800x",
            r"\uD800\u0041",
            r"\uDC00",
            r"\uD800\uD800",
            "\\",
            "x\\",
            r"\x41\0\é",
            "",
        ] {
            let decoded = Round::of(s).map(|r| r.text);
            let expected = s.contains(r"\u0041").then(|| r"\uD800A".to_string());
            assert_eq!(decoded, expected, "{s:?}");
        }
        assert_eq!(escape_at(br"\u0041", 0), Some(('A', 6)));
        assert_eq!(escape_at(br"\uD83D\uDE00", 0), Some(('😀', 12)));
        assert_eq!(escape_at(br"\uD83D\u0041", 0), None);
        assert_eq!(escape_at(br"\uDE00", 0), None);
        assert_eq!(hex4(b"00e", 0), None);
    }
}
