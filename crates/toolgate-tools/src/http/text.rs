//! A body as text for the model, by its `Content-Type`: HTML as Markdown ([`super::html`]),
//! JSON as it is, other text as it is (decoded from its charset, UTF-32 included), binary
//! refused with its type and size.

use toolgate_core::ToolError;

/// What a body is, by its `Content-Type` (before it is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `text/html`, `application/xhtml+xml`: converted to Markdown.
    Html,
    /// `application/json`, `*/*+json`, `text/json`: returned as it is.
    Json,
    /// Other text (`text/*`, XML, JavaScript, YAML, TOML, CSV, form data, ...).
    Text,
    /// No `Content-Type`: decided by looking at the bytes.
    Unknown,
    /// Anything else (images, archives, PDF, octet streams, ...): refused.
    Binary,
}

/// How the text of a result was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// HTML converted to Markdown.
    Markdown,
    /// JSON as the server sent it.
    Json,
    /// Text as the server sent it.
    Text,
    /// No body (a HEAD request, a 204, an empty body).
    Empty,
}

/// The media type of `content_type` (lower case, without parameters) and its charset.
pub fn media_type(content_type: &str) -> (String, Option<String>) {
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
    });
    (media, charset)
}

/// The kind of a body of media type `media` (from [`media_type`]).
pub fn kind(media: &str) -> Kind {
    if media.is_empty() {
        return Kind::Unknown;
    }
    let (top, sub) = media.split_once('/').unwrap_or((media, ""));
    match (top, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Kind::Html,
        ("application", "json") | ("text", "json") => Kind::Json,
        (_, s) if s.ends_with("+json") => Kind::Json,
        ("text", _) => Kind::Text,
        (_, s) if s.ends_with("+xml") => Kind::Text,
        (
            "application",
            "xml"
            | "javascript"
            | "ecmascript"
            | "x-javascript"
            | "x-www-form-urlencoded"
            | "yaml"
            | "x-yaml"
            | "toml"
            | "x-toml"
            | "x-sh"
            | "x-shellscript"
            | "graphql"
            | "sql"
            | "csv"
            | "x-ndjson"
            | "jsonl"
            | "x-jsonlines"
            | "rtf"
            | "x-tex",
        ) => Kind::Text,
        _ => Kind::Binary,
    }
}

/// The error for a binary body: its type and size, and what to fetch instead.
pub fn binary(media: &str, size: Option<u64>) -> ToolError {
    let size_text = match size {
        Some(n) => format!("{n} bytes"),
        None => "of unknown size".to_string(),
    };
    ToolError::failed(format!(
        "binary_content: the response is {} ({size_text}), which is not text and is not \
         returned; fetch an HTML, JSON or text URL instead",
        if media.is_empty() {
            "binary content".to_string()
        } else {
            media.to_string()
        }
    ))
    .with_reason("binary_content")
    .with_details(serde_json::json!({"content_type": media, "size": size}))
}

/// The text of a body of `kind` in `charset`, or the binary error when it is not text.
///
/// # Errors
/// `tool_failed` / `binary_content` for a body that is not text: a binary type, an unknown
/// type whose bytes are not text, or a text type whose first KiB holds a NUL byte while its
/// charset is not UTF-16 or UTF-32 (an executable or an archive served as `text/plain`,
/// which would come back as escapes, four bytes for each NUL).
pub fn to_text(
    kind: Kind,
    media: &str,
    charset: Option<&str>,
    bytes: &[u8],
) -> Result<(String, Format), ToolError> {
    if bytes.is_empty() {
        return Ok((String::new(), Format::Empty));
    }
    let kind = match kind {
        Kind::Binary => return Err(binary(media, Some(bytes.len() as u64))),
        Kind::Unknown => sniff(bytes).ok_or_else(|| binary(media, Some(bytes.len() as u64)))?,
        _ if nul_in_text(charset, bytes) => {
            return Err(binary(
                &format!("{media} by its label, but its bytes are binary (NUL bytes)"),
                Some(bytes.len() as u64),
            ))
        }
        k => k,
    };
    let text = decode(charset, bytes);
    Ok(match kind {
        Kind::Html => (super::html::markdown(&text), Format::Markdown),
        Kind::Json => (text, Format::Json),
        _ => (text, Format::Text),
    })
}

/// Whether a body labelled as text has a NUL byte in its first KiB, where neither its
/// charset nor a byte-order mark says UTF-16 or UTF-32 (whose text has NULs).
fn nul_in_text(charset: Option<&str>, bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    if !head.contains(&0) {
        return false;
    }
    let wide_label = charset.is_some_and(|c| {
        let c = c.trim().to_ascii_lowercase();
        c.starts_with("utf-16") || c.starts_with("ucs-") || utf32_label(&c).is_some()
    });
    let wide_bom = head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]);
    !(wide_label || wide_bom)
}

/// The kind of a body without a type: HTML, or text when it decodes as UTF-8 without NULs,
/// else `None` (binary).
fn sniff(bytes: &[u8]) -> Option<Kind> {
    let head = &bytes[..bytes.len().min(1024)];
    if head.contains(&0) {
        return None;
    }
    // a multi-byte character may be cut at the end of the head
    let valid = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() == 1024,
    };
    if !valid {
        return None;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(256)])
        .trim_start()
        .to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Some(Kind::Html)
    } else {
        Some(Kind::Text)
    }
}

/// `bytes` decoded from `charset` (UTF-8 when absent or unknown), malformed sequences
/// replaced; a byte-order mark decides over the label (WHATWG Encoding §6). UTF-32, which
/// the WHATWG decoders leave out, is decoded here ([`decode_utf32`]): read as UTF-8, its
/// text would come back as escapes around every character, and no echoed credential would be
/// found in it.
fn decode(charset: Option<&str>, bytes: &[u8]) -> String {
    if let Some(label) = charset.and_then(utf32_label) {
        return decode_utf32(label, bytes);
    }
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned()
}

/// The byte order a UTF-32 label names: `Some(None)` for a label without one (`utf-32`,
/// `ucs-4`), `None` for a label of another encoding.
fn utf32_label(charset: &str) -> Option<Option<ByteOrder>> {
    let c = charset.trim().to_ascii_lowercase();
    let base = [
        "utf-32",
        "utf32",
        "ucs-4",
        "ucs4",
        "iso-10646-ucs-4",
        "csucs4",
    ]
    .into_iter()
    .find(|b| c.starts_with(b))?;
    match &c[base.len()..] {
        "" => Some(None),
        "le" | "-le" => Some(Some(ByteOrder::Little)),
        "be" | "-be" => Some(Some(ByteOrder::Big)),
        _ => None,
    }
}

/// The order of the bytes of a UTF-32 code unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteOrder {
    Little,
    Big,
}

/// `bytes` decoded as UTF-32 in the byte order its byte-order mark gives (the mark dropped),
/// else its label's, else the one its first code units fit (a code point never sets the
/// highest byte: big-endian text has a zero first byte in every unit, little-endian a zero
/// last byte), big-endian when both fit (Unicode §3.10, D99). A unit that is no code point
/// (a surrogate, past U+10FFFF) becomes U+FFFD; a partial unit at the end (a body cut at the
/// byte cap) is dropped.
fn decode_utf32(label: Option<ByteOrder>, bytes: &[u8]) -> String {
    let (order, body) = match bytes {
        [0xff, 0xfe, 0, 0, rest @ ..] => (ByteOrder::Little, rest),
        [0, 0, 0xfe, 0xff, rest @ ..] => (ByteOrder::Big, rest),
        _ => {
            let head = &bytes[..bytes.len().min(1024) / 4 * 4];
            let fits = |i: usize| head.chunks_exact(4).all(|u| u[i] == 0);
            let order = label.unwrap_or(if !fits(0) && fits(3) {
                ByteOrder::Little
            } else {
                ByteOrder::Big
            });
            (order, bytes)
        }
    };
    body.chunks_exact(4)
        .map(|u| {
            let u = [u[0], u[1], u[2], u[3]];
            let code = match order {
                ByteOrder::Little => u32::from_le_bytes(u),
                ByteOrder::Big => u32::from_be_bytes(u),
            };
            char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn kinds_by_media_type() {
        for (ct, k) in [
            ("text/html; charset=utf-8", Kind::Html),
            ("TEXT/HTML", Kind::Html),
            ("application/xhtml+xml", Kind::Html),
            ("application/json", Kind::Json),
            ("application/problem+json", Kind::Json),
            ("application/vnd.api+json; charset=utf-8", Kind::Json),
            ("text/plain", Kind::Text),
            ("text/csv", Kind::Text),
            ("application/xml", Kind::Text),
            ("application/atom+xml", Kind::Text),
            ("application/javascript", Kind::Text),
            ("application/x-yaml", Kind::Text),
            ("", Kind::Unknown),
            ("image/png", Kind::Binary),
            ("application/octet-stream", Kind::Binary),
            ("application/pdf", Kind::Binary),
            ("application/zip", Kind::Binary),
            ("video/mp4", Kind::Binary),
        ] {
            assert_eq!(kind(&media_type(ct).0), k, "{ct}");
        }
        assert_eq!(
            media_type("text/html; Charset=\"ISO-8859-1\""),
            ("text/html".into(), Some("iso-8859-1".into()))
        );
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
                    <h1>Title</h1><p>Some <b>bold</b> and a <a href=\"/x\">link</a>.</p>\
                    <script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>";
        let (md, f) = to_text(Kind::Html, "text/html", None, html.as_bytes()).unwrap();
        assert_eq!(f, Format::Markdown);
        assert!(md.contains("# Title"), "{md}");
        assert!(md.contains("**bold**") && md.contains("[link](/x)"), "{md}");
        assert!(md.contains("one") && md.contains("two"), "{md}");
        assert!(!md.contains("alert") && !md.contains("p{}"), "{md}");
    }

    #[test]
    fn text_is_decoded_from_its_charset() {
        let latin1 = b"caf\xe9";
        let (t, f) = to_text(Kind::Text, "text/plain", Some("iso-8859-1"), latin1).unwrap();
        assert_eq!((t.as_str(), f), ("caf\u{e9}", Format::Text));
        // malformed UTF-8 is replaced, not refused, in a text type
        let (t, _) = to_text(Kind::Text, "text/plain", None, b"a\xffb").unwrap();
        assert_eq!(t, "a\u{fffd}b");
        let (t, f) = to_text(Kind::Json, "application/json", None, b"{\"a\":1}").unwrap();
        assert_eq!((t.as_str(), f), ("{\"a\":1}", Format::Json));
    }

    /// UTF-32 in either byte order, told by its mark, its label or its bytes, is decoded (the
    /// WHATWG decoders have no UTF-32: read as UTF-8 it came back as NUL escapes).
    #[test]
    fn utf32_is_decoded_in_either_byte_order() {
        let le =
            |t: &str| -> Vec<u8> { t.chars().flat_map(|c| (c as u32).to_le_bytes()).collect() };
        let be =
            |t: &str| -> Vec<u8> { t.chars().flat_map(|c| (c as u32).to_be_bytes()).collect() };
        let text = "t=sk_live_é✓";
        let with_mark = |mark: &[u8], body: Vec<u8>| [mark, &body].concat();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("utf-32", with_mark(&[0xff, 0xfe, 0, 0], le(text))),
            ("utf-32", with_mark(&[0, 0, 0xfe, 0xff], be(text))),
            ("utf-32", le(text)),
            ("utf-32", be(text)),
            ("UTF-32LE", le(text)),
            ("utf-32be", be(text)),
            ("utf32", le(text)),
            ("ucs-4", be(text)),
            // a mark decides over the label's order
            ("utf-32be", with_mark(&[0xff, 0xfe, 0, 0], le(text))),
        ];
        for (label, bytes) in cases {
            for (kind, media) in [(Kind::Text, "text/plain"), (Kind::Json, "application/json")] {
                let (t, _) = to_text(kind, media, Some(label), &bytes).unwrap();
                assert_eq!(t, text, "{label} {media}");
            }
        }
        // a unit that is no code point is replaced, a cut unit at the end dropped
        let mut bad = le("ab");
        bad.extend(0xd800u32.to_le_bytes());
        bad.extend(0x11_0000u32.to_le_bytes());
        bad.extend([b'c', 0]);
        let (t, _) = to_text(Kind::Text, "text/plain", Some("utf-32le"), &bad).unwrap();
        assert_eq!(t, "ab\u{fffd}\u{fffd}");
        let (t, _) = to_text(Kind::Html, "text/html", Some("utf-32"), &le("<p>hi</p>")).unwrap();
        assert_eq!(t.trim(), "hi");
        assert_eq!(utf32_label("utf-16le"), None);
        assert_eq!(utf32_label("utf-32x"), None);
    }

    #[test]
    fn binary_is_refused_with_its_type_and_size() {
        let e = to_text(Kind::Binary, "image/png", None, &[0x89, b'P', b'N', b'G']).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("binary_content"));
        assert!(
            e.message.contains("image/png (4 bytes)") && e.message.contains("instead"),
            "{}",
            e.message
        );
        // a text type whose bytes are binary (an executable served as text/plain) is refused
        // too, saying both; UTF-16 text (NULs in every other byte) is text
        let e = to_text(
            Kind::Text,
            "text/plain",
            None,
            b"\x7fELF\x02\x01\x01\x00\x00",
        )
        .unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("binary_content"));
        assert!(
            e.message
                .contains("text/plain by its label, but its bytes are binary"),
            "{}",
            e.message
        );
        assert!(to_text(Kind::Json, "application/json", None, b"{\"a\":\"\x00\"}").is_err());
        let utf16 = b"h\x00i\x00";
        assert_eq!(
            to_text(Kind::Text, "text/plain", Some("utf-16le"), utf16)
                .unwrap()
                .0,
            "hi"
        );
        assert_eq!(
            to_text(Kind::Text, "text/plain", None, b"\xff\xfeh\x00i\x00")
                .unwrap()
                .0,
            "hi"
        );
        // without a type, bytes with NULs or invalid UTF-8 are binary; text is text
        assert!(to_text(Kind::Unknown, "", None, b"\x00\x01\x02").is_err());
        assert!(to_text(Kind::Unknown, "", None, b"\xff\xfe\xfd").is_err());
        assert_eq!(
            to_text(Kind::Unknown, "", None, b"plain words").unwrap().1,
            Format::Text
        );
        assert_eq!(
            to_text(Kind::Unknown, "", None, b"<!DOCTYPE html><p>x</p>")
                .unwrap()
                .1,
            Format::Markdown
        );
        assert_eq!(
            to_text(Kind::Binary, "", None, b"").unwrap().1,
            Format::Empty
        );
    }
}
