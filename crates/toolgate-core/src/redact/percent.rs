//! Secrets inside percent-encoded text: a URL carried in another URL's parameter
//! (`?next=https%3A%2F%2Fa.com%2Fcb%3Faccess_token%3DSECRET`), a form value holding a query
//! (`u=a%26password%3DSECRET`), a redirect URI's fragment (`%23access_token%3DSECRET`).
//!
//! 1. Each run of text holding a `%` and two hex digits, up to a blank, a quote or an angle
//!    bracket on either side, is decoded: every escape of an ASCII byte (`%3D` is `=`),
//!    again while the result still holds one (double encoding, `%253D`), at most
//!    [`MAX_PASSES`] times. Escapes of other bytes stay as they are, so the decoded text is
//!    UTF-8 whenever the original is.
//! 2. The decoded text is scanned for secrets like any other ([`super::inline`]).
//! 3. Each secret found there is mapped back to the bytes of the original that spell it
//!    (`access_token%3D[REDACTED]`).
//!
//! A text without such an escape costs one pass of `memchr` over its bytes.

use std::ops::Range;

/// At most this many rounds of decoding of one run (three undo a double encoding and one
/// more).
const MAX_PASSES: usize = 3;

/// Adds to `found` the ranges of `s` that spell a secret once its percent-encoded runs are
/// decoded (see the module docs).
pub(super) fn encoded_secrets(s: &str, found: &mut Vec<Range<usize>>) {
    let b = s.as_bytes();
    let mut done = 0;
    for pct in memchr::memchr_iter(b'%', b) {
        if pct < done || !escape_at(b, pct).is_some_and(|c| c.is_ascii()) {
            continue;
        }
        let start = b[done..pct]
            .iter()
            .rposition(|&c| ends_run(c))
            .map_or(done, |p| done + p + 1);
        let end = b[pct..]
            .iter()
            .position(|&c| ends_run(c))
            .map_or(b.len(), |p| pct + p);
        run_secrets(s, start..end, found);
        done = end;
    }
}

/// Characters that end a run: blanks, quotes, angle brackets and backslashes (a URL in a
/// command line, a JSON string, an HTML attribute, an escaped quote after it). All ASCII, so
/// a run's ends are character boundaries.
fn ends_run(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\')
}

/// The byte a `%` at `at` and the two hex digits after it stand for.
fn escape_at(b: &[u8], at: usize) -> Option<u8> {
    let hex = |c: u8| char::from(c).to_digit(16);
    match b.get(at..at + 3)? {
        [b'%', hi, lo] => Some((hex(*hi)? * 16 + hex(*lo)?) as u8),
        _ => None,
    }
}

/// Text decoded from a run, with the range of the original each of its bytes comes from.
struct Decoded {
    text: String,
    from: Vec<(usize, usize)>,
}

impl Decoded {
    /// One round of decoding: every escape of an ASCII byte becomes that byte. `None` when
    /// there is none.
    fn once(&self) -> Option<Decoded> {
        let b = self.text.as_bytes();
        let mut text = Vec::with_capacity(b.len());
        let mut from = Vec::with_capacity(b.len());
        let mut decoded = false;
        let mut i = 0;
        while i < b.len() {
            match escape_at(b, i).filter(u8::is_ascii) {
                Some(c) => {
                    text.push(c);
                    from.push((self.from[i].0, self.from[i + 2].1));
                    decoded = true;
                    i += 3;
                }
                None => {
                    text.push(b[i]);
                    from.push(self.from[i]);
                    i += 1;
                }
            }
        }
        // an ASCII escape became one ASCII byte, so the text is as much UTF-8 as before
        let text = String::from_utf8(text).ok()?;
        decoded.then_some(Decoded { text, from })
    }
}

/// The secrets of the run `run` of `s`, decoded, mapped back to `s`.
fn run_secrets(s: &str, run: Range<usize>, found: &mut Vec<Range<usize>>) {
    let mut view = Decoded {
        text: s[run.clone()].to_string(),
        from: run.clone().map(|i| (i, i + 1)).collect(),
    };
    for _ in 0..MAX_PASSES {
        match view.once() {
            Some(next) => view = next,
            None => break,
        }
    }
    let mut hits = Vec::new();
    super::inline::find(&view.text, &mut hits);
    found.extend(
        hits.into_iter()
            .filter(|h| h.start < h.end)
            .map(|h| view.from[h.start].0..view.from[h.end - 1].1),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_run_is_decoded_with_each_byte_mapped_to_its_escape() {
        let s = "a%3Db%25%32%36c%C3%A9";
        let mut view = Decoded {
            text: s.to_string(),
            from: (0..s.len()).map(|i| (i, i + 1)).collect(),
        };
        while let Some(next) = view.once() {
            view = next;
        }
        // `%25%32%36` is `%26` once decoded, `&` twice; `%C3%A9` (not ASCII) stays
        assert_eq!(view.text, "a=b&c%C3%A9");
        assert_eq!(view.from[1], (1, 4));
        assert_eq!(view.from[3], (5, 14));
        assert_eq!(view.from[4], (14, 15));
        assert_eq!(escape_at(b"%4", 0), None);
        assert_eq!(escape_at(b"%g1", 0), None);
        assert_eq!(escape_at(b"%7e", 0), Some(b'~'));
    }
}
