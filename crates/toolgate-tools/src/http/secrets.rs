//! [`Secrets`]: the operator's credential values, kept out of what the model reads.
//!
//! A credential goes to its host only ([`super::client`]), but a server may send it back: a
//! body echoing the request's headers (httpbin's `/headers`, a debugging endpoint), an error
//! page quoting "invalid key ...", a `Location` carrying it (shown as the final URL, in
//! `redirects`, or in the error naming a blocked hop), a response header. Before a result or
//! an error leaves the HTTP tools, every form of every configured value is replaced by
//! `[toolgate: the credential for HOST]`:
//!
//! - the value as sent (`Bearer abc...`), and the part after its scheme word (`abc...`);
//! - for `Basic`, the decoded `user:password` and the password alone;
//! - each of those percent-encoded (`Bearer%20abc...`, as a URL carries it, or with any
//!   other byte encoded too: compared decoded, below) and in
//!   `application/x-www-form-urlencoded` form (`Bearer+abc...`);
//! - each of those as a format escapes it: text is compared with the forms after a backslash
//!   before ASCII punctuation is read as the character (Markdown from HTML writes `sk_live`
//!   as `sk\_live`, PHP's JSON writes `a/b` as `a\/b`), JSON's `\uXXXX` as the character it
//!   names, an HTML or XML character reference as the character (`&#115;`, `&#x73;`,
//!   `&amp;`: an XML answer quoting the value), and a percent-encoded byte as its character,
//!   whether a URL must encode it or not (`%2f` and `%2F` are `/`, `sk%5Flive` and `%73k_live`
//!   are `sk_live`, `%C3%A9` is `é`);
//! - in any ASCII case: a parser folds a host's case (`Location: http://TOKEN.example/` comes
//!   back lower-cased in the error naming that host), and a credential is never a word of
//!   text that differs from it only in case.
//!
//! Parts shorter than [`MIN_PART_CHARS`] are left alone (a one-letter password would otherwise
//! blank every such letter of a page); the whole value is always replaced. Longer forms are
//! replaced first, so `Bearer abc` becomes one marker, not `Bearer ` and a marker. A body cut
//! at the call's byte cap may end inside a form: such an end (at least [`MIN_PART_CHARS`] of
//! a form's first characters) is replaced too.

use base64::Engine;
use std::borrow::Cow;
use toolgate_core::ToolError;

use super::response::HttpResponse;

/// The shortest part of a value (a token after its scheme, a decoded password) replaced on
/// its own, in characters.
pub const MIN_PART_CHARS: usize = 6;

/// The forms of the credential values to replace (as text is compared with them: see the
/// module docs), each with its marker; longest first.
#[derive(Clone, Default)]
pub struct Secrets {
    forms: Vec<(String, String)>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("forms", &self.forms.len())
            .finish()
    }
}

impl Secrets {
    /// The forms of `values`: each a host (for the marker) and the credential's value.
    pub fn new<'a>(values: impl IntoIterator<Item = (&'a str, &'a str)>) -> Secrets {
        let mut forms: Vec<(String, String)> = Vec::new();
        for (host, value) in values {
            let marker = format!("[toolgate: the credential for {host}]");
            for form in forms_of(value) {
                // a percent-encoded spelling (a URL's, with `%20`, or with every byte encoded)
                // is compared decoded, as the form itself; a form's `+` for a space is not
                let spellings: [String; 2] = [
                    url::form_urlencoded::byte_serialize(form.as_bytes()).collect(),
                    form,
                ];
                for shown in spellings {
                    let shown = normalize(&shown);
                    if !forms.iter().any(|(f, _)| *f == shown) {
                        forms.push((shown, marker.clone()));
                    }
                }
            }
        }
        forms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Secrets { forms }
    }

    /// Whether there is nothing to replace.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// `text` with every form replaced by its marker: each stretch of `text` where forms were
    /// found (overlapping ones joined) becomes the marker of the first.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let compared = normalize(text);
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for (i, (form, _)) in self.forms.iter().enumerate() {
            found.extend(
                compared
                    .match_indices(form.as_str())
                    .map(|(at, _)| (at, at + form.len(), i)),
            );
        }
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        found.sort_unstable();
        let mut joined: Vec<(usize, usize, usize)> = Vec::new();
        for (start, end, i) in found {
            match joined.last_mut() {
                Some(last) if start < last.1 => last.1 = last.1.max(end),
                _ => joined.push((start, end, i)),
            }
        }
        let bounds: Vec<usize> = joined.iter().flat_map(|&(s, e, _)| [s, e]).collect();
        let at = offsets_in(text, &bounds);
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (n, &(_, _, i)) in joined.iter().enumerate() {
            out.push_str(&text[copied..at[2 * n]]);
            out.push_str(&self.forms[i].1);
            copied = at[2 * n + 1];
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    fn scrub_in_place(&self, text: &mut String) {
        if let Cow::Owned(clean) = self.scrub(text) {
            *text = clean;
        }
    }

    /// Replaces the forms in every text of `response`: its URL, redirects, headers and body.
    pub fn scrub_response(&self, response: &mut HttpResponse) {
        if self.is_empty() {
            return;
        }
        self.scrub_in_place(&mut response.url);
        self.scrub_in_place(&mut response.body);
        if response.truncated {
            self.scrub_cut_end(&mut response.body);
        }
        response
            .redirects
            .iter_mut()
            .for_each(|r| self.scrub_in_place(r));
        response
            .headers
            .values_mut()
            .for_each(|v| self.scrub_in_place(v));
    }

    /// Replaces the end of `text`, cut short, when it is the start of a form (at least
    /// [`MIN_PART_CHARS`] characters of it, a whole form being replaced already).
    fn scrub_cut_end(&self, text: &mut String) {
        let compared = normalize(text);
        for (form, marker) in &self.forms {
            // the longest start of `form` that `text` ends with
            let cut = form
                .char_indices()
                .map(|(i, _)| i)
                .skip(MIN_PART_CHARS)
                .filter(|&i| compared.ends_with(&form[..i]))
                .last();
            if let Some(len) = cut {
                let start = offsets_in(text, &[compared.len() - len])[0];
                text.truncate(start);
                text.push_str(marker);
                return;
            }
        }
    }

    /// Replaces the forms in `error`'s message and in every string of its details.
    pub fn scrub_error(&self, error: &mut ToolError) {
        if self.is_empty() {
            return;
        }
        self.scrub_in_place(&mut error.message);
        if let Some(details) = error.details.as_deref_mut() {
            self.scrub_value(details);
        }
    }

    /// Replaces the forms in every string of `value` (object keys are left as they are).
    pub fn scrub_value(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => self.scrub_in_place(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| self.scrub_value(v)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|v| self.scrub_value(v)),
            _ => {}
        }
    }

    /// Replaces the forms in `text`, in place.
    pub fn scrub_string(&self, text: &mut String) {
        self.scrub_in_place(text);
    }
}

/// Calls `emit(start, c)` for each character `c` of `text` as it is compared with the forms
/// (see the module docs), `start` being where the text it is read from starts in `text`.
fn compared_chars(text: &str, mut out: impl FnMut(usize, char)) {
    let mut emit = |at: usize, c: char| out(at, c.to_ascii_lowercase());
    let bytes = text.as_bytes();
    let hex = |at: usize, n: usize| {
        bytes
            .get(at..at + n)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
    };
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = bytes.get(at + 1).copied();
        if c == '\\' && next.is_some_and(|n| n.is_ascii_punctuation()) {
            emit(at, char::from(bytes[at + 1]));
            chars.next();
        } else if let Some(code) = (c == '\\' && next == Some(b'u'))
            .then(|| hex(at + 2, 4))
            .flatten()
            .and_then(|h| u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
            .and_then(char::from_u32)
        {
            emit(at, code);
            (0..5).for_each(|_| {
                chars.next();
            });
        } else if let Some((code, len)) = (c == '&').then(|| char_reference(&bytes[at..])).flatten()
        {
            emit(at, code);
            (1..len).for_each(|_| {
                chars.next();
            });
        } else if let Some((code, len)) = (c == '%').then(|| percent_escape(&bytes[at..])).flatten()
        {
            emit(at, code);
            (1..len).for_each(|_| {
                chars.next();
            });
        } else {
            emit(at, c);
        }
    }
}

/// The character a percent-encoded sequence at the start of `bytes` stands for, and the
/// sequence's length in bytes: `%5F` (any byte, not only the ones a URL must encode: `%73k`
/// is `sk`), or the escapes of one UTF-8 character (`%C3%A9`). `None` when `bytes` starts
/// with no such sequence.
fn percent_escape(bytes: &[u8]) -> Option<(char, usize)> {
    let byte = |i: usize| -> Option<u8> {
        let at = 3 * i;
        match bytes.get(at..at + 3)? {
            [b'%', hi, lo] => {
                let hex = |c: u8| char::from(c).to_digit(16);
                Some((hex(*hi)? * 16 + hex(*lo)?) as u8)
            }
            _ => None,
        }
    };
    let lead = byte(0)?;
    let len = match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let mut utf8 = [0u8; 4];
    for (i, slot) in utf8.iter_mut().enumerate().take(len) {
        *slot = byte(i)?;
    }
    let c = std::str::from_utf8(&utf8[..len]).ok()?.chars().next()?;
    Some((c, 3 * len))
}

/// The character an HTML or XML character reference at the start of `bytes` names, and the
/// reference's length in bytes: `&#115;`, `&#x73;`, or one of XML's five named ones (`&amp;`,
/// `&lt;`, `&gt;`, `&quot;`, `&apos;`), as an XML or HTML page served as text carries a value
/// it quotes. `None` when `bytes` starts with no such reference.
fn char_reference(bytes: &[u8]) -> Option<(char, usize)> {
    let end = bytes.iter().take(12).position(|&b| b == b';')?;
    let body = std::str::from_utf8(&bytes[1..end]).ok()?;
    let code = match body {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let digits = body.strip_prefix('#')?;
            let (digits, radix) = match digits.strip_prefix(['x', 'X']) {
                Some(hex) => (hex, 16),
                None => (digits, 10),
            };
            if digits.is_empty() || !digits.chars().all(|d| d.is_digit(radix)) {
                return None;
            }
            char::from_u32(u32::from_str_radix(digits, radix).ok()?)?
        }
    };
    Some((code, end + 1))
}

/// `text` as it is compared with the forms ([`compared_chars`]).
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    compared_chars(text, |_, c| out.push(c));
    out
}

/// Where each of `positions` (ascending offsets in [`normalize`]`(text)`, each at a character's
/// start or its end) is in `text`.
fn offsets_in(text: &str, positions: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(positions.len());
    let mut compared = 0;
    compared_chars(text, |at, c| {
        while positions.get(out.len()) == Some(&compared) {
            out.push(at);
        }
        compared += c.len_utf8();
    });
    out.resize(positions.len(), text.len());
    out
}

/// The plain forms of one value: itself, the token after a scheme word, and for `Basic` the
/// decoded `user:password` and password (see the module docs).
fn forms_of(value: &str) -> Vec<String> {
    let value = value.trim();
    if value.is_empty() {
        return Vec::new();
    }
    let mut forms = vec![value.to_string()];
    let mut part = |p: &str| {
        if p.chars().count() >= MIN_PART_CHARS && !forms.iter().any(|f| f == p) {
            forms.push(p.to_string());
        }
    };
    let Some((scheme, token)) = value.split_once(char::is_whitespace) else {
        return forms;
    };
    let token = token.trim();
    part(token);
    if scheme.eq_ignore_ascii_case("basic") {
        let unpadded = token.trim_end_matches('=');
        part(unpadded);
        let decoded = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(unpadded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok());
        if let Some(pair) = decoded {
            part(&pair);
            if let Some((_, password)) = pair.split_once(':') {
                part(password);
            }
        }
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_form_of_a_value_is_replaced_longest_first() {
        let s = Secrets::new([("api.test", "Bearer abc-123-xyz")]);
        assert_eq!(
            s.scrub("h: Bearer abc-123-xyz; t=abc-123-xyz; u=?k=Bearer%20abc-123-xyz&f=Bearer+abc-123-xyz"),
            "h: [toolgate: the credential for api.test]; t=[toolgate: the credential for \
             api.test]; u=?k=[toolgate: the credential for api.test]&f=[toolgate: the \
             credential for api.test]"
        );
        assert!(matches!(s.scrub("nothing here"), Cow::Borrowed(_)));
    }

    /// A password a server puts in a redirect's `Location` reaches the result in the WHATWG
    /// spelling toolgate writes the URL in (a space encoded, `!` and `@` not), which neither the
    /// raw nor the fully encoded form matches.
    #[test]
    fn the_spelling_a_url_gives_a_value_is_replaced() {
        let basic = base64::engine::general_purpose::STANDARD.encode("alice:correct horse!");
        let s = Secrets::new([("h", format!("Basic {basic}").as_str())]);
        let m = "[toolgate: the credential for h]";
        for (text, want) in [
            ("http://h/q?x=correct%20horse!", format!("http://h/q?x={m}")),
            ("http://h/p/correct%20horse!", format!("http://h/p/{m}")),
            ("http://h/#correct%20horse!", format!("http://h/#{m}")),
        ] {
            assert_eq!(s.scrub(text), want, "{text}");
        }
    }

    #[test]
    fn basic_is_replaced_decoded_too_and_short_parts_are_left() {
        // alice:s3cret-pw
        let s = Secrets::new([("h", "Basic YWxpY2U6czNjcmV0LXB3")]);
        assert_eq!(
            s.scrub("alice:s3cret-pw / s3cret-pw / YWxpY2U6czNjcmV0LXB3 / alice"),
            "[toolgate: the credential for h] / [toolgate: the credential for h] / \
             [toolgate: the credential for h] / alice"
        );
        let short = Secrets::new([("h", "Basic YTpi")]); // a:b
        assert_eq!(short.scrub("a:b YTpi a"), "a:b YTpi a");
        assert_eq!(
            short.scrub("Basic YTpi"),
            "[toolgate: the credential for h]"
        );
        assert!(Secrets::new([("h", "  ")]).is_empty());
    }

    #[test]
    fn a_form_escaped_by_markdown_or_json_or_in_lower_case_hex_is_replaced() {
        let s = Secrets::new([("h", "Bearer sk_live_a1b2/c3d4+e5f6*g7h8")]);
        let m = "[toolgate: the credential for h]";
        for (shown, scrubbed) in [
            // an HTML error page quoting the key, as htmd writes it in Markdown
            (
                r"invalid key: Bearer sk\_live\_a1b2/c3d4+e5f6\*g7h8",
                format!("invalid key: {m}"),
            ),
            (
                r"key *sk\_live\_a1b2/c3d4+e5f6\*g7h8*",
                format!("key *{m}*"),
            ),
            // PHP's json_encode escapes slashes; other encoders write \u002b for +
            (
                r#"{"auth": "Bearer sk_live_a1b2\/c3d4+e5f6*g7h8"}"#,
                format!(r#"{{"auth": "{m}"}}"#),
            ),
            (
                r#"{"t": "sk_live_a1b2/c3d4\u002Be5f6*g7h8", "n": 1}"#,
                format!(r#"{{"t": "{m}", "n": 1}}"#),
            ),
            (
                "q=Bearer%20sk_live_a1b2%2fc3d4%2be5f6%2ag7h8&x=1",
                format!("q={m}&x=1"),
            ),
            // an XML answer quoting it, and character references in decimal and hex
            (
                "<auth>Bearer sk&#95;live&#x5F;a1b2/c3d4&#43;e5f6*g7h8</auth>",
                format!("<auth>{m}</auth>"),
            ),
            // escapes elsewhere are kept as they are
            (r"a\_b %2f \u0041 \", r"a\_b %2f \u0041 \".to_string()),
            (
                "a &amp; b &#65; &#x; &#9999999999; &unknown; &",
                "a &amp; b &#65; &#x; &#9999999999; &unknown; &".to_string(),
            ),
        ] {
            assert_eq!(s.scrub(shown), scrubbed, "{shown}");
        }
        let mut cut = r"echo: sk\_live\_a1".to_string();
        s.scrub_cut_end(&mut cut);
        assert_eq!(cut, format!("echo: {m}"));
    }

    /// A percent-encoding of characters a URL need not encode (`%5F` for `_`, `%73` for `s`,
    /// every byte), one of a UTF-8 character, and a value in another ASCII case (a parser
    /// folds a host's case before the error naming it is made) are the value.
    #[test]
    fn over_encoded_and_case_folded_forms_are_replaced() {
        let s = Secrets::new([("h", "Bearer sk_live_SECRETCANARY12345")]);
        let m = "[toolgate: the credential for h]";
        let every_byte: String = "sk_live_SECRETCANARY12345"
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect();
        for (shown, scrubbed) in [
            ("t=sk%5Flive%5FSECRETCANARY12345&n=1", format!("t={m}&n=1")),
            ("t=%73k_live_SECRETCANARY12345", format!("t={m}")),
            ("t=sk%5flive%5fSECRETCANARY12345", format!("t={m}")),
            (&format!("t={every_byte}"), format!("t={m}")),
            ("a=Bearer%20sk%5Flive%5FSECRETCANARY12345", format!("a={m}")),
            ("a=Bearer+sk_live_SECRETCANARY12345", format!("a={m}")),
            (
                "redirect_to_blocked: http://sk_live_secretcanary12345.localhost/",
                format!("redirect_to_blocked: http://{m}.localhost/"),
            ),
            (
                "the host \"SK_LIVE_SECRETCANARY12345.example.invalid\"",
                format!("the host \"{m}.example.invalid\""),
            ),
            // escapes that spell nothing of it stay as they are
            (
                "%C3%28 %ff %E2%82 %zz %4 100%",
                "%C3%28 %ff %E2%82 %zz %4 100%".to_string(),
            ),
        ] {
            assert_eq!(s.scrub(shown), scrubbed, "{shown}");
        }
        let s = Secrets::new([("h", "Bearer naïve-tøken-99")]);
        assert_eq!(
            s.scrub("k=na%C3%AFve-t%c3%b8ken-99;"),
            "k=[toolgate: the credential for h];"
        );
        assert_eq!(percent_escape(b"%E2%9C%93!"), Some(('✓', 9)));
        assert_eq!(percent_escape(b"%C0%80"), None);
    }

    /// XML's named references stand for the characters a value holds (`&`, `<`, `"`, ...).
    #[test]
    fn a_value_with_markup_characters_is_found_behind_their_references() {
        let s = Secrets::new([("h", "k3y&<\"'>z9")]);
        let m = "[toolgate: the credential for h]";
        assert_eq!(
            s.scrub("<v a=\"k3y&amp;&lt;&quot;&apos;&gt;z9\"/>"),
            format!("<v a=\"{m}\"/>")
        );
        assert_eq!(
            s.scrub("<v>k3y&#38;&#x3c;&#34;&#39;&#62;z9</v>"),
            format!("<v>{m}</v>")
        );
    }

    #[test]
    fn a_text_cut_inside_a_form_has_its_end_replaced() {
        let s = Secrets::new([("api.test", "Bearer abc-123-xyz")]);
        let mut cut = "echo: Bearer abc-12".to_string();
        s.scrub_cut_end(&mut cut);
        assert_eq!(cut, "echo: [toolgate: the credential for api.test]");
        // the token alone, cut (six characters of it at least)
        let mut cut = "k=abc-12".to_string();
        s.scrub_cut_end(&mut cut);
        assert_eq!(cut, "k=[toolgate: the credential for api.test]");
        // fewer than six: left
        for text in ["k=abc-1", "nothing like it", ""] {
            let mut t = text.to_string();
            s.scrub_cut_end(&mut t);
            assert_eq!(t, text);
        }
        // a multi-byte character in a form is cut at its boundary
        let s = Secrets::new([("h", "Bearer naïve-tøken-99")]);
        let mut cut = "Bearer naïve-tø".to_string();
        s.scrub_cut_end(&mut cut);
        assert_eq!(cut, "[toolgate: the credential for h]");
    }
}
