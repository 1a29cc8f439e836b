//! The full structured result as the text kept behind its handle: JSON that a model can page
//! through, with the byte offset of each place a shortened copy leaves something out.
//!
//! Objects and arrays are written one member or item a line, indented by two spaces, except
//! that a value whose compact JSON is at most [`LINE`] bytes (and holds no marked place) is
//! written compact on its line: a list of small records reads as one record a line.

use super::structured::Step;
use serde_json::Value;
use std::fmt::Write as _;

/// The longest value written compact on one line, in bytes.
const LINE: usize = 120;

/// A place whose offset in the text is wanted: in the value at `path`, where item or member
/// `index` begins (an array or an object), or where byte `index` of the string begins.
pub(crate) struct Mark<'a> {
    /// Where the array, object or string is.
    pub path: &'a [Step],
    /// The item, the member (in key order) or the byte.
    pub index: usize,
}

/// The text of `value`, and the offset of each of `marks` in it (in their order; the end of
/// the text for a mark that names nothing in the value).
pub(crate) fn render(value: &Value, marks: &[Mark<'_>]) -> (String, Vec<usize>) {
    let mut w = Writer {
        out: String::new(),
        path: Vec::new(),
        marks,
        offsets: vec![usize::MAX; marks.len()],
    };
    w.value(value, 0);
    let end = w.out.len();
    let offsets = w
        .offsets
        .into_iter()
        .map(|o| if o == usize::MAX { end } else { o })
        .collect();
    (w.out, offsets)
}

/// A step of the path being written, borrowed from the value.
#[derive(Clone, Copy)]
enum At<'v> {
    Key(&'v str),
    Index(usize),
}

struct Writer<'m, 'v> {
    out: String,
    path: Vec<At<'v>>,
    marks: &'m [Mark<'m>],
    offsets: Vec<usize>,
}

impl<'v> Writer<'_, 'v> {
    /// Whether `mark` is at the current path (`exact`) or under it.
    fn matches(&self, mark: &Mark<'_>, exact: bool) -> bool {
        if mark.path.len() < self.path.len() || (exact && mark.path.len() != self.path.len()) {
            return false;
        }
        self.path.iter().zip(mark.path).all(|(a, b)| match (a, b) {
            (At::Key(k), Step::Key(m)) => *k == m,
            (At::Index(i), Step::Index(j)) => i == j,
            _ => false,
        })
    }

    /// Records the current offset for every mark at this path whose index is `index`.
    fn mark(&mut self, index: usize, at: usize) {
        for (i, m) in self.marks.iter().enumerate() {
            if m.index == index && self.offsets[i] == usize::MAX && self.matches(m, true) {
                self.offsets[i] = at;
            }
        }
    }

    fn value(&mut self, v: &'v Value, indent: usize) {
        let marked = self.marks.iter().any(|m| self.matches(m, false));
        if !marked && compact_len_upto(v, LINE).is_some() {
            // never fails: writing to a String
            let _ = write!(self.out, "{v}");
            return;
        }
        match v {
            Value::Array(items) if !items.is_empty() => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    self.newline(indent + 2);
                    self.mark(i, self.out.len());
                    self.path.push(At::Index(i));
                    self.value(item, indent + 2);
                    self.path.pop();
                    if i + 1 < items.len() {
                        self.out.push(',');
                    }
                }
                self.newline(indent);
                self.out.push(']');
            }
            Value::Object(members) if !members.is_empty() => {
                self.out.push('{');
                for (i, (key, item)) in members.iter().enumerate() {
                    self.newline(indent + 2);
                    self.mark(i, self.out.len());
                    self.string(key);
                    self.out.push_str(": ");
                    self.path.push(At::Key(key));
                    self.value(item, indent + 2);
                    self.path.pop();
                    if i + 1 < members.len() {
                        self.out.push(',');
                    }
                }
                self.newline(indent);
                self.out.push('}');
            }
            Value::String(s) => {
                let start = self.out.len() + 1;
                for (i, m) in self.marks.iter().enumerate() {
                    if self.offsets[i] == usize::MAX && self.matches(m, true) {
                        let cut = crate::results::floor_char_boundary(s, m.index);
                        self.offsets[i] = start + super::escaped_len(&s[..cut]);
                    }
                }
                self.string(s);
            }
            other => {
                let _ = write!(self.out, "{other}");
            }
        }
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// `s` as a JSON string, escaped as `serde_json` escapes it.
    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

/// The compact JSON length of `v` when it is at most `limit` bytes; `None` past it (counting
/// stops there).
fn compact_len_upto(v: &Value, limit: usize) -> Option<usize> {
    let n = match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => {
            if s.len() > limit {
                return None;
            }
            super::escaped_len(s) + 2
        }
        Value::Array(items) => {
            let mut n = 1 + items.len().max(1);
            for item in items {
                n += compact_len_upto(item, limit.checked_sub(n)?)?;
            }
            n
        }
        Value::Object(members) => {
            let mut n = 1 + members.len().max(1);
            for (k, item) in members {
                n += super::escaped_len(k) + 3;
                n += compact_len_upto(item, limit.checked_sub(n)?)?;
            }
            n
        }
    };
    (n <= limit).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn small_values_stay_on_one_line_and_the_text_is_the_same_json() {
        // keys in sorted order: the same text whether or not serde_json keeps insertion order
        // (its `preserve_order`, which cedar-policy turns on in the workspace's build)
        let v = json!({
            "entries": [
                {"kind": "file", "name": "a\"b", "size": 3},
                {"kind": "dir", "name": "c"},
                {"kind": "file", "name": "a much longer name than the others", "size": 1000}
            ],
            "long": "x".repeat(200),
            "n": 2,
            "path": "."
        });
        let (text, offsets) = render(&v, &[]);
        assert!(offsets.is_empty());
        assert_eq!(
            text,
            format!(
                "{{\n  \"entries\": [\n    {{\"kind\":\"file\",\"name\":\"a\\\"b\",\"size\":3}},\n    \
                 {{\"kind\":\"dir\",\"name\":\"c\"}},\n    {{\"kind\":\"file\",\"name\":\"a much \
                 longer name than the others\",\"size\":1000}}\n  ],\n  \"long\": \"{}\",\n  \
                 \"n\": 2,\n  \"path\": \".\"\n}}",
                "x".repeat(200)
            )
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn marks_give_the_offset_of_items_members_and_bytes() {
        let v = json!({"a": [1, 2, 3], "s": "é\"tail", "o": {"x": 1, "y": 2}});
        let a = [Step::Key("a".into())];
        let s = [Step::Key("s".into())];
        let o = [Step::Key("o".into())];
        let marks = [
            Mark { path: &a, index: 2 },
            Mark { path: &s, index: 2 },
            Mark { path: &o, index: 1 },
            Mark { path: &a, index: 9 },
        ];
        let (text, offsets) = render(&v, &marks);
        assert!(text[offsets[0]..].starts_with("3\n"), "{text}");
        assert!(text[offsets[1]..].starts_with("\\\"tail\""), "{text}");
        assert!(text[offsets[2]..].starts_with("\"y\": 2"), "{text}");
        assert_eq!(offsets[3], text.len());
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn compact_lengths_are_exact_up_to_the_limit() {
        for v in [
            json!(null),
            json!(false),
            json!([]),
            json!({}),
            json!([1, "a\n", {"k": [true]}]),
            json!({"a": -1.5, "b": "€"}),
        ] {
            assert_eq!(compact_len_upto(&v, 1000), Some(v.to_string().len()), "{v}");
            assert_eq!(compact_len_upto(&v, v.to_string().len() - 1), None, "{v}");
        }
    }
}
