//! [`IdScan`]: the id of a message too large to keep, found while its bytes go by.
//!
//! A stdio line over the size cap is not kept, so it cannot be parsed; but its request still
//! needs an answer the client can match, and the major SDKs write `id` after `params` (the
//! TypeScript SDK's `{...request, jsonrpc, id}`, the Python SDK's field order), so the id is
//! usually at the end of the line. The scanner follows the bytes of one JSON object fed in
//! pieces, tracking strings and nesting, and keeps only the value of a top-level member
//! written literally as `"id"` (at most [`super::MAX_ID_BYTES`] bytes of it). It does not
//! validate JSON: on anything it does not understand it finds no id, and the answer goes out
//! with `"id": null`.

use super::frame::MAX_ID_BYTES;
use rmcp::model::RequestId;

/// Where the scanner is, outside strings, in the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the opening `{`.
    Start,
    /// Expecting a member name.
    Key,
    /// After a member name, expecting `:`.
    Colon,
    /// In a member's value.
    Value,
    /// Past the closing `}`, or lost.
    Done,
}

/// A streaming finder of the top-level `"id"` of one JSON object.
#[derive(Debug)]
pub struct IdScan {
    phase: Phase,
    /// Open containers, the top-level object included.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// While reading a top-level member name: how much of `id` it has matched (`None`: not
    /// `id`, or written with an escape).
    key: Option<u8>,
    in_key: bool,
    /// The current member is `id`.
    value_is_id: bool,
    /// The bytes of the id's value while it is read; `Some` once it started.
    capture: Option<Vec<u8>>,
    /// The first id found (a later duplicate is ignored).
    id: Option<Vec<u8>>,
}

impl Default for IdScan {
    fn default() -> Self {
        IdScan::new()
    }
}

impl IdScan {
    /// A scanner before the first byte.
    pub fn new() -> Self {
        IdScan {
            phase: Phase::Start,
            depth: 0,
            in_string: false,
            escaped: false,
            key: None,
            in_key: false,
            value_is_id: false,
            capture: None,
            id: None,
        }
    }

    /// Follows `bytes`, the next piece of the message.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.phase == Phase::Done {
                return;
            }
            self.byte(b);
        }
    }

    /// The id found, if the object had a top-level `"id"` that is a string of at most
    /// [`MAX_ID_BYTES`] bytes or an integer.
    pub fn finish(mut self) -> Option<RequestId> {
        self.end_capture();
        let raw = self.id?;
        match serde_json::from_slice::<serde_json::Value>(&raw).ok()? {
            serde_json::Value::String(s) if s.len() <= MAX_ID_BYTES => {
                Some(RequestId::String(s.into()))
            }
            serde_json::Value::Number(n) => n.as_i64().map(RequestId::Number),
            _ => None,
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(c) = &mut self.capture {
            if c.len() > MAX_ID_BYTES * 6 + 2 {
                // longer than any id accepted, even written with escapes
                self.capture = None;
                self.value_is_id = false;
            } else if self.in_string || is_number_byte(b) {
                c.push(b);
            }
        }
        if self.in_string {
            self.string_byte(b);
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.phase == Phase::Key {
                    self.in_key = true;
                    self.key = Some(0);
                } else if self.depth == 1 && self.phase == Phase::Value && self.wants_id() {
                    self.capture = Some(vec![b'"']);
                }
            }
            b'{' | b'[' => {
                if self.phase == Phase::Start {
                    if b == b'{' {
                        self.phase = Phase::Key;
                        self.depth = 1;
                    } else {
                        self.phase = Phase::Done;
                    }
                    return;
                }
                if self.depth == 1 && self.phase == Phase::Value {
                    // an object or array as the id: no id to answer with
                    self.value_is_id = false;
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_capture();
                    self.phase = Phase::Done;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.phase == Phase::Colon => self.phase = Phase::Value,
            b',' if self.depth == 1 => {
                self.end_capture();
                self.phase = Phase::Key;
                self.value_is_id = false;
            }
            _ if self.depth == 1 && self.phase == Phase::Value => {
                if is_number_byte(b) {
                    if self.wants_id() {
                        self.capture = Some(vec![b]);
                    }
                } else if !b.is_ascii_whitespace() {
                    // true, false, null: not an id
                    self.value_is_id = false;
                } else if self.capture.is_some() {
                    self.end_capture();
                }
            }
            _ if self.phase == Phase::Start && !b.is_ascii_whitespace() => {
                self.phase = Phase::Done;
            }
            _ => {}
        }
    }

    fn string_byte(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
            return;
        }
        match b {
            b'\\' => {
                self.escaped = true;
                if self.in_key {
                    self.key = None;
                }
            }
            b'"' => {
                self.in_string = false;
                if self.in_key {
                    self.in_key = false;
                    self.value_is_id = self.key == Some(2);
                    self.phase = Phase::Colon;
                } else if self.capture.is_some() {
                    self.end_capture();
                }
            }
            _ if self.in_key => {
                self.key = match (self.key, b) {
                    (Some(0), b'i') => Some(1),
                    (Some(1), b'd') => Some(2),
                    _ => None,
                };
            }
            _ => {}
        }
    }

    /// The current member is `id` and no id was kept yet.
    fn wants_id(&self) -> bool {
        self.value_is_id && self.id.is_none() && self.capture.is_none()
    }

    fn end_capture(&mut self) {
        if let Some(c) = self.capture.take() {
            if self.value_is_id && self.id.is_none() {
                self.id = Some(c);
            }
        }
    }
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Option<RequestId> {
        let mut s = IdScan::new();
        s.feed(text.as_bytes());
        s.finish()
    }

    fn scan_in_pieces(text: &str, piece: usize) -> Option<RequestId> {
        let mut s = IdScan::new();
        for chunk in text.as_bytes().chunks(piece) {
            s.feed(chunk);
        }
        s.finish()
    }

    #[test]
    fn finds_the_id_wherever_it_is() {
        let big = "x".repeat(10_000);
        for (text, want) in [
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"m"}"#.to_string(),
                Some(RequestId::Number(5)),
            ),
            (
                format!(
                    r#"{{"method":"tools/call","params":{{"id":1,"a":"{big}"}},"jsonrpc":"2.0","id":"req-7"}}"#
                ),
                Some(RequestId::String("req-7".into())),
            ),
            (
                r#" { "id" : -12 , "x": [1,{"id":2}] }"#.into(),
                Some(RequestId::Number(-12)),
            ),
            (
                r#"{"x":"\"id\": 3","id":4}"#.into(),
                Some(RequestId::Number(4)),
            ),
            (
                r#"{"id":"a\"b"}"#.into(),
                Some(RequestId::String("a\"b".into())),
            ),
            (r#"{"id":1.5}"#.into(), None),
            (r#"{"id":null}"#.into(), None),
            (r#"{"id":{"a":1}}"#.into(), None),
            (r#"{"id":true}"#.into(), None),
            (r#"{"i\u0064":1}"#.into(), None),
            (r#"[{"id":1}]"#.into(), None),
            (r#"{"ids":1,"d":2}"#.into(), None),
            (
                format!(r#"{{"id":"{}"}}"#, "y".repeat(MAX_ID_BYTES + 1)),
                None,
            ),
            (r#"{"id":7"#.into(), Some(RequestId::Number(7))),
            ("not json".into(), None),
            (String::new(), None),
        ] {
            assert_eq!(scan(&text), want, "{text}");
            for piece in [1, 2, 3, 7] {
                assert_eq!(
                    scan_in_pieces(&text, piece),
                    want,
                    "{text} in pieces of {piece}"
                );
            }
        }
    }
}
