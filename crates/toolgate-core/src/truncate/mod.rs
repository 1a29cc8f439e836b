//! Cutting a result to its tool's byte limit, the full result kept behind a handle that
//! `read_result` pages through by byte offset.
//!
//! | part | how it is cut | file |
//! |---|---|---|
//! | text blocks | a head-and-tail preview with a marker naming the handle and offset | `text.rs` ([`preview`]) |
//! | structured content | inside the value: the largest arrays lose their last items, the largest strings their middle (with a marker), objects their last members only when nothing else is left; a `truncation` record at its root names what was left out and where it starts in the full result | `structured.rs` ([`shorten`]) |
//! | the full structured result | its JSON text, one short item a line, with the offset of each first part left out | `render.rs` |
//! | output schemas | every `outputSchema` is widened at registration to admit the `truncation` record | `schema.rs` ([`widen_output_schema`]) |
//!
//! An MCP tool with an `outputSchema` must return structured content that conforms to it
//! (specification 2025-11-25, "Structured Content" and "Output Schema"), so a structured result
//! is never replaced by a text: the value itself gets shorter. A value the widened schema
//! rejects once shortened (a `minItems`, a `pattern` on a cut string) is sent whole; the
//! finish stage then cuts only its text.

mod render;
mod schema;
mod structured;
mod text;

pub use schema::{truncation_schema, widen_output_schema, TRUNCATION_PROPERTY};
pub use structured::{shorten, Shortened};
pub use text::preview;

/// The text kept behind the handle of a structured result: its JSON, objects and arrays one
/// member or item a line except values of at most 120 bytes, written compact on their line.
pub fn full_text(value: &serde_json::Value) -> String {
    render::render(value, &[]).0
}

/// The length of `s` as the body of a JSON string (without its quotes), as `serde_json`
/// writes it: `"` and `\` and the control characters with a short escape take two bytes, the
/// other control characters six (`\u001b`), everything else as it is in UTF-8.
pub fn escaped_len(s: &str) -> usize {
    crate::json::escaped_len(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_lengths_match_serde_json() {
        for s in [
            "",
            "plain",
            "quote\" back\\slash",
            "\n\r\t\u{8}\u{c}",
            "\u{1b}[31m",
            "é😀\u{7f}",
        ] {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(escaped_len(s), json.len() - 2, "{s:?}");
        }
    }
}
