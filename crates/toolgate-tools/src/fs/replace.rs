//! The text side of `edit_file`: exact-match replacement that keeps a file's byte-order mark
//! and line endings.
//!
//! The sequence, for the bytes of a file:
//!
//! 1. [`Text::decode`]: a leading UTF-8 byte-order mark is set aside; the rest must be UTF-8.
//!    Each `\r\n` counts as one newline: the *view* the model matches against is the text
//!    with every `\r\n` as `\n` (what `read_file` shows), and the positions of the `\r`s
//!    are kept so the untouched parts of the file are written back byte for byte. The
//!    file's line-ending style is CRLF when it has more `\r\n` than bare `\n` endings, LF
//!    otherwise. A file with `\r` and no `\n` at all (classic Mac OS line endings) is CR:
//!    each `\r` is a newline of the view, as `read_file` shows it, so the model's `\n`
//!    matches it and what it adds is written with `\r`, not a `\n` that would mix endings.
//! 2. [`find`]: the model's `old_string`, with its own `\r\n` read as `\n` the same way, is
//!    searched for exactly, byte for byte (no trimming, no fuzzy or whitespace-insensitive
//!    fallback: the line-ending equivalence above is the only one). Without `replace_all`
//!    it must occur exactly once, counting overlapping occurrences (`aa` in `aaa` is
//!    ambiguous); with it, every non-overlapping occurrence from the left is replaced.
//! 3. [`Text::apply`]: the file's bytes outside the matches are copied as they were; each
//!    match is replaced by `new_string` with its newlines written in the file's style (so a
//!    CRLF file stays CRLF, with no mixed endings); the byte-order mark is put back.

use memchr::memmem;
use std::borrow::Cow;
use std::ops::Range;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";
/// At most this many line numbers are listed for an ambiguous match.
pub(crate) const MAX_LISTED_LINES: usize = 20;
/// Occurrences are counted up to this many for an ambiguous match.
pub(crate) const MAX_COUNTED: usize = 10_000;
/// `replace_all` replaces at most this many occurrences (more is [`MatchError::TooMany`]),
/// which bounds the memory one edit takes.
pub(crate) const MAX_REPLACEMENTS: usize = 1_000_000;

/// A file's line-ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// `\n`.
    Lf,
    /// `\r\n`.
    Crlf,
    /// `\r` alone (a file without any `\n`).
    Cr,
}

/// A decoded file: the view the model matches against, and what it takes to write the file
/// back as it was outside the replaced parts.
#[derive(Debug)]
pub(crate) struct Text<'a> {
    /// Whether the file starts with a UTF-8 byte-order mark.
    pub bom: bool,
    /// The file after the byte-order mark, as it is on disk.
    raw: &'a str,
    /// `raw` with every `\r\n` as `\n`.
    pub view: Cow<'a, str>,
    /// The view offsets of the newlines that are `\r\n` on disk, ascending.
    crlf: Vec<usize>,
    /// The file's line-ending style.
    pub eol: Eol,
}

/// Why a file cannot be edited as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8 {
    /// The offset of the first byte that is not UTF-8, counted in the file.
    pub offset: usize,
}

/// Why `old_string` does not pick the text to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MatchError {
    /// It does not occur.
    NoMatch,
    /// It occurs `count` times (at least, when `count` is [`MAX_COUNTED`]), starting on these
    /// lines (1-based, at most [`MAX_LISTED_LINES`]).
    Ambiguous {
        /// How many times it occurs, overlapping occurrences included.
        count: usize,
        /// The lines the first occurrences start on.
        lines: Vec<u64>,
    },
    /// With `replace_all`, it occurs more than [`MAX_REPLACEMENTS`] times.
    TooMany,
}

/// `s` with every `\r\n` as `\n`; borrowed when it has no `\r`.
pub(crate) fn normalize(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', s.as_bytes()).is_none() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.replace("\r\n", "\n"))
    }
}

impl<'a> Text<'a> {
    /// Decodes a file's bytes (step 1).
    ///
    /// # Errors
    /// [`NotUtf8`] with the offset of the first byte that is not UTF-8.
    pub(crate) fn decode(bytes: &'a [u8]) -> Result<Text<'a>, NotUtf8> {
        let (bom, body) = match bytes.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let raw = std::str::from_utf8(body).map_err(|e| NotUtf8 {
            offset: e.valid_up_to() + if bom { BOM.len() } else { 0 },
        })?;
        let has_cr = memchr::memchr(b'\r', body).is_some();
        if has_cr && memchr::memchr(b'\n', body).is_none() {
            // one byte for one: view offsets are file offsets
            return Ok(Text {
                bom,
                raw,
                view: Cow::Owned(raw.replace('\r', "\n")),
                crlf: Vec::new(),
                eol: Eol::Cr,
            });
        }
        let (view, crlf) = if has_cr {
            split_crlf(raw)
        } else {
            (Cow::Borrowed(raw), Vec::new())
        };
        let newlines = memchr::memchr_iter(b'\n', body).count();
        let eol = if crlf.len() > newlines - crlf.len() {
            Eol::Crlf
        } else {
            Eol::Lf
        };
        Ok(Text {
            bom,
            raw,
            view,
            crlf,
            eol,
        })
    }

    /// `s` (`old_string` or `new_string`) as the view spells it: `\r\n` as `\n`, and in a CR
    /// file a lone `\r` as `\n` too.
    pub(crate) fn normalize<'s>(&self, s: &'s str) -> Cow<'s, str> {
        match (self.eol, normalize(s)) {
            (Eol::Cr, n) if n.contains('\r') => Cow::Owned(n.replace('\r', "\n")),
            (_, n) => n,
        }
    }

    /// The offset in the file body (after the byte-order mark) of view offset `at`: a `\r\n`
    /// newline's offset is that of its `\r`.
    fn raw_offset(&self, at: usize) -> usize {
        at + self.crlf.partition_point(|&n| n < at)
    }

    /// The file with `ranges` (view offsets, ascending, disjoint) replaced by `new` (step 3),
    /// and the view of the result.
    ///
    /// # Errors
    /// The length in bytes the result would have, when that is more than `max_len`; nothing
    /// is allocated for it then.
    pub(crate) fn apply(
        &self,
        ranges: &[Range<usize>],
        new: &str,
        max_len: u64,
    ) -> Result<(Vec<u8>, String), u64> {
        let new_view = self.normalize(new);
        let rendered: Cow<'_, str> = match self.eol {
            Eol::Crlf => Cow::Owned(new_view.replace('\n', "\r\n")),
            Eol::Cr => Cow::Owned(new_view.replace('\n', "\r")),
            Eol::Lf => Cow::Borrowed(&new_view),
        };
        let raw_removed: usize = ranges
            .iter()
            .map(|r| self.raw_offset(r.end) - self.raw_offset(r.start))
            .sum();
        let kept =
            (self.raw.len() - raw_removed) as u64 + if self.bom { BOM.len() as u64 } else { 0 };
        let len = (rendered.len() as u64)
            .saturating_mul(ranges.len() as u64)
            .saturating_add(kept);
        if len > max_len {
            return Err(len);
        }
        let mut bytes = Vec::with_capacity(len as usize);
        let removed: usize = ranges.iter().map(|r| r.len()).sum();
        let mut view =
            String::with_capacity(self.view.len() - removed + new_view.len() * ranges.len());
        if self.bom {
            bytes.extend_from_slice(BOM);
        }
        let (mut raw_at, mut view_at) = (0, 0);
        for r in ranges {
            let (start, end) = (self.raw_offset(r.start), self.raw_offset(r.end));
            bytes.extend_from_slice(&self.raw.as_bytes()[raw_at..start]);
            bytes.extend_from_slice(rendered.as_bytes());
            view.push_str(&self.view[view_at..r.start]);
            view.push_str(&new_view);
            raw_at = end;
            view_at = r.end;
        }
        bytes.extend_from_slice(&self.raw.as_bytes()[raw_at..]);
        view.push_str(&self.view[view_at..]);
        Ok((bytes, view))
    }
}

/// `raw` with every `\r\n` as `\n`, and the view offsets of those newlines.
fn split_crlf(raw: &str) -> (Cow<'_, str>, Vec<usize>) {
    let bytes = raw.as_bytes();
    let mut view = String::with_capacity(raw.len());
    let mut crlf = Vec::new();
    let mut from = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        if nl > 0 && bytes[nl - 1] == b'\r' {
            // `\r` and `\n` are ASCII, so these are character boundaries
            view.push_str(&raw[from..nl - 1]);
            crlf.push(view.len());
            from = nl;
        }
    }
    view.push_str(&raw[from..]);
    (Cow::Owned(view), crlf)
}

/// The view ranges to replace (step 2): `old` (already normalized, not empty) in `view`.
///
/// # Errors
/// [`MatchError::NoMatch`]; [`MatchError::Ambiguous`] without `replace_all` when `old`
/// occurs more than once; [`MatchError::TooMany`] with it past [`MAX_REPLACEMENTS`].
pub(crate) fn find(
    view: &str,
    old: &str,
    replace_all: bool,
) -> Result<Vec<Range<usize>>, MatchError> {
    let finder = memmem::Finder::new(old.as_bytes());
    let hay = view.as_bytes();
    if replace_all {
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for at in finder.find_iter(hay) {
            if ranges.len() == MAX_REPLACEMENTS {
                return Err(MatchError::TooMany);
            }
            ranges.push(at..at + old.len());
        }
        return if ranges.is_empty() {
            Err(MatchError::NoMatch)
        } else {
            Ok(ranges)
        };
    }
    let first = finder.find(hay).ok_or(MatchError::NoMatch)?;
    if finder.find(&hay[first + 1..]).is_none() {
        let only = first..first + old.len();
        return Ok(vec![only]);
    }
    let mut count = 0;
    let mut lines = Vec::new();
    let mut line = 1u64;
    let mut counted_to = 0;
    let mut at = first;
    loop {
        count += 1;
        if lines.len() < MAX_LISTED_LINES {
            line += memchr::memchr_iter(b'\n', &hay[counted_to..at]).count() as u64;
            counted_to = at;
            lines.push(line);
        }
        if count >= MAX_COUNTED {
            break;
        }
        match finder.find(&hay[at + 1..]) {
            Some(next) => at = at + 1 + next,
            None => break,
        }
    }
    Err(MatchError::Ambiguous { count, lines })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn edit(file: &[u8], old: &str, new: &str, all: bool) -> Result<Vec<u8>, MatchError> {
        let text = Text::decode(file).unwrap();
        let ranges = find(&text.view, &text.normalize(old), all)?;
        Ok(text.apply(&ranges, new, u64::MAX).unwrap().0)
    }

    #[test]
    fn crlf_files_match_lf_text_and_stay_crlf() {
        let file = b"alpha\r\nbeta\r\ngamma\r\n";
        assert_eq!(
            edit(file, "alpha\nbeta", "ALPHA\nBETA", false).unwrap(),
            b"ALPHA\r\nBETA\r\ngamma\r\n"
        );
        // the model may send CRLF itself; new lines it adds are CRLF too
        assert_eq!(
            edit(file, "beta\r\n", "b1\nb2\r\n", false).unwrap(),
            b"alpha\r\nb1\r\nb2\r\ngamma\r\n"
        );
        // a match that ends before a newline keeps the whole `\r\n`
        assert_eq!(
            edit(file, "gamma", "G", false).unwrap(),
            b"alpha\r\nbeta\r\nG\r\n"
        );
        let t = Text::decode(file).unwrap();
        assert_eq!((t.eol, t.bom), (Eol::Crlf, false));
        assert_eq!(t.view, "alpha\nbeta\ngamma\n");
    }

    #[test]
    fn lf_and_mixed_files_keep_their_untouched_bytes() {
        assert_eq!(edit(b"a\nb\n", "a\nb", "x\r\ny", false).unwrap(), b"x\ny\n");
        // mixed, mostly LF: the CRLF line outside the match stays CRLF, new lines are LF
        let mixed = b"one\ntwo\r\nthree\nfour\n";
        assert_eq!(Text::decode(mixed).unwrap().eol, Eol::Lf);
        assert_eq!(
            edit(mixed, "three\nfour", "3\n4", false).unwrap(),
            b"one\ntwo\r\n3\n4\n"
        );
        // a lone `\r` is an ordinary character
        assert_eq!(edit(b"a\rb\n", "\rb", "!", false).unwrap(), b"a!\n");
        assert_eq!(edit(b"x\r\r\ny", "\r\ny", "Z", false).unwrap(), b"x\rZ");
    }

    #[test]
    fn the_bom_is_kept_and_never_matched() {
        let file = b"\xef\xbb\xbfkey = 1\r\nother = 2\r\n";
        assert_eq!(
            edit(file, "key = 1", "key = 10", false).unwrap(),
            b"\xef\xbb\xbfkey = 10\r\nother = 2\r\n"
        );
        assert_eq!(
            edit(file, "\u{feff}key", "k", false),
            Err(MatchError::NoMatch)
        );
        let t = Text::decode(b"\xef\xbb\xbf").unwrap();
        assert!(t.bom && t.view.is_empty());
    }

    #[test]
    fn uniqueness_counts_overlaps_and_lists_lines() {
        assert_eq!(
            edit(b"aaa", "aa", "b", false),
            Err(MatchError::Ambiguous {
                count: 2,
                lines: vec![1, 1]
            })
        );
        assert_eq!(edit(b"aaa", "aa", "b", true).unwrap(), b"ba");
        assert_eq!(
            edit(b"x\ny\r\nx\n\nx", "x", "z", false),
            Err(MatchError::Ambiguous {
                count: 3,
                lines: vec![1, 3, 5]
            })
        );
        assert_eq!(
            edit(b"x\ny\r\nx\n\nx", "x", "zz", true).unwrap(),
            b"zz\ny\r\nzz\n\nzz"
        );
        assert_eq!(edit(b"abc", "abd", "x", true), Err(MatchError::NoMatch));
        let many = "q\n".repeat(MAX_COUNTED + 5);
        match edit(many.as_bytes(), "q", "r", false) {
            Err(MatchError::Ambiguous { count, lines }) => {
                assert_eq!(count, MAX_COUNTED);
                assert_eq!(lines, (1..=MAX_LISTED_LINES as u64).collect::<Vec<_>>());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_result_past_the_limit_is_refused_before_it_is_built() {
        let file = "a".repeat(1 << 19);
        let t = Text::decode(file.as_bytes()).unwrap();
        let ranges = find(&t.view, "a", true).unwrap();
        assert_eq!(ranges.len(), 1 << 19);
        let huge = "b".repeat(1 << 21);
        assert_eq!(t.apply(&ranges, &huge, 10 << 20), Err(1 << 40));
    }

    #[test]
    fn replace_all_is_bounded() {
        let many = "x".repeat(MAX_REPLACEMENTS + 1);
        assert_eq!(find(&many, "x", true), Err(MatchError::TooMany));
        assert_eq!(find(&many[1..], "x", true).unwrap().len(), MAX_REPLACEMENTS);
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_offset() {
        assert_eq!(Text::decode(b"ok\xff").unwrap_err(), NotUtf8 { offset: 2 });
        assert_eq!(
            Text::decode(b"\xef\xbb\xbfab\xc3").unwrap_err(),
            NotUtf8 { offset: 5 }
        );
        assert!(Text::decode(b"\xef\xbb").is_err());
    }

    #[test]
    fn cr_only_files_stay_cr_only() {
        let t = Text::decode(b"alpha\rbeta\rgamma\r").unwrap();
        assert_eq!((t.eol, t.view.as_ref()), (Eol::Cr, "alpha\nbeta\ngamma\n"));
        assert_eq!(
            edit(b"alpha\rbeta\rgamma\r", "alpha\nbeta", "A\nB\r\nC", false).unwrap(),
            b"A\rB\rC\rgamma\r"
        );
        assert_eq!(
            edit(b"\xef\xbb\xbfa\rb\r", "a\rb", "x\ny", false).unwrap(),
            b"\xef\xbb\xbfx\ry\r"
        );
        // one `\n` anywhere makes it an LF (or mixed) file, where a lone `\r` is a character
        assert_eq!(Text::decode(b"a\rb\n").unwrap().eol, Eol::Lf);
    }

    #[test]
    fn the_result_view_is_the_normalized_file() {
        let file = b"\xef\xbb\xbfa\r\nb\nc\r\n";
        let t = Text::decode(file).unwrap();
        let ranges = find(&t.view, "b\nc", false).unwrap();
        let (bytes, view) = t.apply(&ranges, "B\r\nC\nD", 1000).unwrap();
        assert_eq!(
            t.apply(&ranges, "B\r\nC\nD", bytes.len() as u64 - 1),
            Err(bytes.len() as u64)
        );
        assert_eq!(view, "a\nB\nC\nD\n");
        let again = Text::decode(&bytes).unwrap();
        assert_eq!(again.view, view);
        assert!(again.bom);
    }
}
