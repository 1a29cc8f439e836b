//! Text a model (or a client) controls, made safe for an operator's view: the approval
//! prompt, `toolgate audit`, `stats`, `approvals list`, the log. One function, [`operator`],
//! used by every view, so what one view escapes no other shows raw.
//!
//! What it escapes is every character that could move the cursor, change colours, reorder
//! or hide text, or start a new line ([`is_hidden`]): C0 and C1 controls (ESC, CR, LF, DEL,
//! CSI, NEL, ...), bidirectional marks, embeddings, overrides and isolates (U+061C,
//! U+200E/F, U+202A-U+202E, U+2066-U+2069), zero-width characters and joiners (U+200B-U+200D,
//! U+2060-U+2064, U+FEFF), the line and paragraph separators (U+2028, U+2029), interlinear
//! annotation marks (U+FFF9-U+FFFB) and tag characters (U+E0000-U+E007F), each shown as
//! `\u{..}`; and `\` itself doubled, so text cannot pose as an escape. A row of a table built
//! from escaped fields stays one row, and reads in the order it is stored.

use std::borrow::Cow;

/// Whether `c` is escaped by [`operator`] (see the module docs).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `s` for an operator's view: at most `max_chars` characters of it (then `...`), every
/// hidden character as `\u{..}` and `\` as `\\`. Borrows when nothing changes.
pub fn operator(s: &str, max_chars: usize) -> Cow<'_, str> {
    let clean = !s.chars().any(|c| c == '\\' || is_hidden(c));
    if clean && s.chars().nth(max_chars).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(max_chars.saturating_mul(4)) + 3);
    for (i, c) in s.chars().enumerate() {
        if i == max_chars {
            out.push_str("...");
            break;
        }
        if c == '\\' {
            out.push_str("\\\\");
        } else if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A line of JSON (as `serde_json` writes it) with every hidden character that is not ASCII
/// written as a JSON `\uXXXX` escape (a surrogate pair past U+FFFF): the same value, but a
/// line that stays one line in a viewer that breaks at U+2028 and reads in stored order.
/// (`serde_json` escapes the ASCII controls itself.) Borrows when nothing changes.
pub fn json_line(json: &str) -> Cow<'_, str> {
    if json.is_ascii() || !json.chars().any(|c| !c.is_ascii() && is_hidden(c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        if !c.is_ascii() && is_hidden(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_could_redraw_or_reorder_a_line_is_escaped() {
        for (raw, shown) in [
            ("a\x1b[2Jb", "a\\u{1b}[2Jb"),
            ("x\r\nAllow? y", "x\\u{d}\\u{a}Allow? y"),
            ("\u{202e}txt.exe", "\\u{202e}txt.exe"),
            ("a\u{2028}b\u{2029}c", "a\\u{2028}b\\u{2029}c"),
            ("\u{9b}31m\u{85}", "\\u{9b}31m\\u{85}"),
            ("\u{2066}x\u{2069}\u{061c}", "\\u{2066}x\\u{2069}\\u{61c}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("a\\u{1b}", "a\\\\u{1b}"),
        ] {
            assert_eq!(operator(raw, 80), shown, "{raw:?}");
        }
        // ordinary text, accents and emoji included, is borrowed as it is
        assert!(matches!(
            operator("plain é 😀 text", 80),
            Cow::Borrowed("plain é 😀 text")
        ));
    }

    #[test]
    fn text_is_cut_to_its_width_in_characters() {
        assert_eq!(operator("ééééé", 3), "ééé...");
        assert_eq!(operator("abc", 3), "abc");
        assert_eq!(operator("\u{202e}bcd", 2), "\\u{202e}b...");
    }

    #[test]
    fn json_lines_keep_their_value_and_their_line() {
        let v = serde_json::json!({"path": "a\u{2028}b\u{202e}c\u{e0041}", "n": "é"});
        let line = serde_json::to_string(&v).unwrap();
        let safe = json_line(&line);
        assert!(
            !safe.contains('\u{2028}') && !safe.contains('\u{202e}'),
            "{safe}"
        );
        assert!(
            safe.contains("\\u2028") && safe.contains("\\udb40\\udc41"),
            "{safe}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), v);
        assert!(matches!(json_line("{\"a\":\"é\"}"), Cow::Borrowed(_)));
    }
}
