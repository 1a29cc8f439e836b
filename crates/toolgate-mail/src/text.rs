//! Text folding for matching: case- and accent-insensitive, CJK kept as written.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// `text` folded for matching: compatibility-decomposed (NFKD: full-width letters become
/// ASCII), combining marks removed (`é` → `e`), lower-cased, white space collapsed to one
/// space and trimmed. Characters without case or marks (CJK) stay as they are.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether `text` holds a carriage return, a line feed, another control character or a
/// Unicode line or paragraph separator (U+2028, U+2029, which readers show as a line break),
/// none of which a mail header may carry (header injection).
pub(crate) fn has_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
}

/// The first bidirectional embedding, override or isolate in `text` (U+202A to U+202E,
/// U+2066 to U+2069), which makes what follows it read in another order than it is written:
/// an attachment named `invoice\u{202e}fdp.exe` shows as `invoiceexe.pdf` (the direction marks
/// U+200E and U+200F, which right-to-left text needs, are not among them).
pub(crate) fn bidi_override(text: &str) -> Option<char> {
    text.chars()
        .find(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
}

/// `text` with every line break a line feed: `\r\n` and a lone `\r` each become `\n`
/// (lettre writes each `\n` as `\r\n` on the wire). A lone carriage return must not reach
/// SMTP (RFC 5321 §2.3.8): a server that takes `\r.\r` for the end of the data would read
/// what follows as commands of its own (SMTP smuggling), another message to other
/// recipients. Borrowed when there is no `\r`.
pub(crate) fn line_feeds_only(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Whether `text` holds what a mail reader would decode as an RFC 2047 encoded word
/// (`=?charset?q?...?=` or `=?charset?b?...?=`), in a header written as is: it could show as
/// other text, line breaks included.
pub(crate) fn has_encoded_word(text: &str) -> bool {
    let mut rest = text;
    while let Some(start) = rest.find("=?") {
        let after = &rest[start + 2..];
        // charset ? encoding ? text ?=, with no white space inside
        let word = after.split(char::is_whitespace).next().unwrap_or("");
        let mut parts = word.splitn(3, '?');
        if let (Some(charset), Some(encoding), Some(tail)) =
            (parts.next(), parts.next(), parts.next())
        {
            if !charset.is_empty()
                && matches!(encoding, "q" | "Q" | "b" | "B")
                && tail.contains("?=")
            {
                return true;
            }
        }
        rest = after;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_ignores_case_accents_and_width() {
        assert_eq!(fold("  José  ÁLVAREZ "), "jose alvarez");
        assert_eq!(fold("Ｍüller"), "muller");
        assert_eq!(fold("张总"), "张总");
        assert!(has_control("a\r\nBcc: x@y"));
        assert_eq!(line_feeds_only("a\r.\rb\r\nc\n\r"), "a\n.\nb\nc\n\n");
        assert!(matches!(
            line_feeds_only("a\nb"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert!(!has_control("Quarterly report"));
        assert!(has_control("Hi\u{2028}Bcc: x@y"));
        assert_eq!(bidi_override("invoice\u{202e}fdp.exe"), Some('\u{202e}'));
        assert_eq!(bidi_override("\u{2067}x"), Some('\u{2067}'));
        assert_eq!(bidi_override("\u{200f}שלום report"), None);
        assert!(has_encoded_word("=?utf-8?q?Hi=0D=0ABcc:_x@y?="));
        assert!(has_encoded_word("Re: =?UTF-8?B?SGk=?= there"));
        assert!(!has_encoded_word("is 2+2=? 4?"));
        assert!(!has_encoded_word("a =? b ?= c"));
    }
}
