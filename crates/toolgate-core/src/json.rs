//! Compact JSON text of a [`serde_json::Value`], byte for byte as `serde_json::to_string`
//! writes it, and its length without writing it: the result path's passes over a large
//! output (its size against the cap, the text block a client shows beside structured content)
//! each read a string's bytes eight at a time and copy runs between escapes whole, where
//! `serde_json` looks every byte up in a table.
//!
//! What is escaped is `serde_json`'s (RFC 8259, section 7): `"` and `\` with a backslash,
//! `\b`, `\f`, `\n`, `\r` and `\t` by their short escapes, the other characters below U+0020
//! as `\u00XX` (lower-case hex); everything else, DEL and non-ASCII included, as it is in
//! UTF-8. Numbers are written as `serde_json` writes them (its `Display`, the same digits).

use serde_json::Value;
use std::fmt::Write as _;

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// `0x80` in each byte of `x` that is zero, `0` in every other bit (exact: no carry crosses a
/// byte, since `(b & 0x7f) + 0x7f` is at most `0xfe`).
#[inline(always)]
pub(crate) fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// `0x80` in each byte of `x` equal to `b`.
#[inline(always)]
pub(crate) fn eq_bytes(x: u64, b: u8) -> u64 {
    zero_bytes(x ^ (ONES * u64::from(b)))
}

/// `0x80` in each byte of `x` below `0x20` (a C0 control).
#[inline(always)]
pub(crate) fn c0_bytes(x: u64) -> u64 {
    zero_bytes(x & (ONES * 0xe0))
}

/// The eight bytes at `bytes[i..i + 8]`, first byte lowest.
#[inline(always)]
pub(crate) fn word(bytes: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[i..i + 8]);
    u64::from_le_bytes(w)
}

/// `0x80` in each byte of `x` that JSON escapes: `"`, `\` and the C0 controls.
#[inline(always)]
fn escaped_bytes(x: u64) -> u64 {
    c0_bytes(x) | eq_bytes(x, b'"') | eq_bytes(x, b'\\')
}

/// `0x80` in each byte of `x` with a two-byte escape among the C0 controls.
#[inline(always)]
fn short_c0_bytes(x: u64) -> u64 {
    eq_bytes(x, b'\n')
        | eq_bytes(x, b'\t')
        | eq_bytes(x, b'\r')
        | eq_bytes(x, 0x08)
        | eq_bytes(x, 0x0c)
}

/// How many bytes JSON writes for byte `b` of a string.
#[inline(always)]
fn escaped_width(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..=0x1f => 6,
        _ => 1,
    }
}

/// The length of `s` as the body of a JSON string (without its quotes).
pub fn escaped_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut extra = 0usize;
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let x = word(bytes, i);
        let any = escaped_bytes(x);
        if any != 0 {
            // two bytes for each escaped byte, four more for each `\u00XX`
            let long = c0_bytes(x) & !short_c0_bytes(x);
            extra += any.count_ones() as usize + 4 * long.count_ones() as usize;
        }
        i += 8;
    }
    let tail: usize = bytes[i..].iter().map(|&b| escaped_width(b) - 1).sum();
    bytes.len() + extra + tail
}

/// Appends `s` escaped as the body of a JSON string (without its quotes) to `out`.
pub fn push_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let m = escaped_bytes(word(bytes, i));
        if m == 0 {
            i += 8;
            continue;
        }
        // the first escaped byte: ASCII, so both slices end on character boundaries
        let j = i + (m.trailing_zeros() / 8) as usize;
        out.push_str(&s[start..j]);
        push_escape(out, bytes[j]);
        start = j + 1;
        i = j + 1;
    }
    while i < bytes.len() {
        if escaped_width(bytes[i]) > 1 {
            out.push_str(&s[start..i]);
            push_escape(out, bytes[i]);
            start = i + 1;
        }
        i += 1;
    }
    out.push_str(&s[start..]);
}

fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}

/// `v`'s compact JSON text, the same bytes as `serde_json::to_string(v)`.
pub fn to_string(v: &Value) -> String {
    let mut out = String::new();
    push_value(&mut out, v);
    out
}

/// Appends `v`'s compact JSON text to `out`.
pub fn push_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => {
            out.reserve(s.len() + 2);
            out.push('"');
            push_escaped(out, s);
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                push_escaped(out, key);
                out.push_str("\":");
                push_value(out, item);
            }
            out.push('}');
        }
    }
}

/// The length of `v`'s compact JSON text (`serde_json::to_string(v).len()`), counted
/// without writing it.
pub fn compact_len(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => {
            let mut count = Count(0);
            let _ = write!(count, "{n}");
            count.0
        }
        Value::String(s) => escaped_len(s) + 2,
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(compact_len).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, item)| escaped_len(k) + 3 + compact_len(item))
                    .sum::<usize>()
        }
    }
}

struct Count(usize);

impl std::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn same_as_serde(v: &Value) {
        let want = serde_json::to_string(v).unwrap();
        assert_eq!(to_string(v), want, "{v:?}");
        assert_eq!(compact_len(v), want.len(), "{v:?}");
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        for v in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-17),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(2.5e-8),
            json!(""),
            json!("plain"),
            json!("quote\" back\\slash \n\r\t\u{8}\u{c} \u{0}\u{1b}\u{1f} \u{7f} é😀"),
            json!([]),
            json!({}),
            json!({"a": [1, "x\ty", {"k\"ey": null}], "b": {"c": [true, false]}}),
        ] {
            same_as_serde(&v);
        }
        // every byte value below 0x80 at every offset of a word, alone and in runs
        for b in 0u8..0x80 {
            for pad in 0..17 {
                let s = format!(
                    "{}{}{}",
                    "a".repeat(pad),
                    char::from(b),
                    "é".repeat(pad % 5)
                );
                same_as_serde(&json!(s));
                assert_eq!(
                    escaped_len(&s),
                    serde_json::to_string(&s).unwrap().len() - 2
                );
            }
        }
    }

    proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in "(?s).{0,80}", c in "[\\x00-\\x7f]{0,40}") {
            for s in [s.clone(), c.clone(), format!("{s}{c}{s}")] {
                let want = serde_json::to_string(&s).unwrap();
                let mut got = String::from("\"");
                push_escaped(&mut got, &s);
                got.push('"');
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(escaped_len(&s) + 2, want.len());
            }
        }
    }
}
