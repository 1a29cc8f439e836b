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
//! - each of those percent-encoded (`Bearer%20abc...`, as a URL carries it) and in
//!   `application/x-www-form-urlencoded` form (`Bearer+abc...`).
//!
//! Parts shorter than [`MIN_PART_CHARS`] are left alone (a one-letter password would otherwise
//! blank every such letter of a page); the whole value is always replaced. Longer forms are
//! replaced first, so `Bearer abc` becomes one marker, not `Bearer ` and a marker. A body cut
//! at the call's byte cap may end inside a form: such an end (at least [`MIN_PART_CHARS`] of
//! a form's first characters) is replaced too.

use base64::Engine;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::borrow::Cow;
use toolgate_core::ToolError;

use super::response::HttpResponse;

/// The shortest part of a value (a token after its scheme, a decoded password) replaced on
/// its own, in characters.
pub const MIN_PART_CHARS: usize = 6;

/// Characters a URL carries as they are (RFC 3986 §2.3, unreserved); every other one is
/// percent-encoded in the encoded forms.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The forms of the credential values to replace, each with its marker; longest first.
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
                for shown in [
                    utf8_percent_encode(&form, UNRESERVED).to_string(),
                    url::form_urlencoded::byte_serialize(form.as_bytes()).collect(),
                    form,
                ] {
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

    /// `text` with every form replaced by its marker.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (form, marker) in &self.forms {
            if out.contains(form.as_str()) {
                out = Cow::Owned(out.replace(form.as_str(), marker));
            }
        }
        out
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
        for (form, marker) in &self.forms {
            // the longest start of `form` that `text` ends with
            let cut = form
                .char_indices()
                .map(|(i, _)| i)
                .skip(MIN_PART_CHARS)
                .filter(|&i| text.ends_with(&form[..i]))
                .last();
            if let Some(len) = cut {
                text.truncate(text.len() - len);
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
            self.scrub_json(details);
        }
    }

    fn scrub_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => self.scrub_in_place(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| self.scrub_json(v)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|v| self.scrub_json(v)),
            _ => {}
        }
    }
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
