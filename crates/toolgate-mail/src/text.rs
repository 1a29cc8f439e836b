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

/// Whether `text` holds a carriage return, a line feed or another control character, which
/// no mail header may carry (header injection).
pub(crate) fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
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
        assert!(!has_control("Quarterly report"));
    }
}
