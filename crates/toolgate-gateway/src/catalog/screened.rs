//! What an upstream's last listings of resources and templates left out as quarantined, so a
//! `resources/read` of one is refused as its listing was ([`crate::served`]): the quarantine
//! keeps text aimed at the model from a client, and a read of a URI the client learned
//! elsewhere (a tool result's link, an earlier session) would otherwise serve what the listing
//! hid.
//!
//! A resource's URI is quarantined or clean as its latest listing said (the listing is paged,
//! so each page updates the URIs it holds). A quarantined template covers every URI it can
//! expand to, read by [`template_matches`], except a URI a listing served clean. Both sets are
//! bounded ([`MAX_URIS`]); past the bound a read of a URI no listing served clean is refused,
//! since what was left out can no longer be told apart.

use std::collections::HashSet;

/// The most URIs kept in each set (clean, quarantined).
pub(crate) const MAX_URIS: usize = 65_536;

/// One upstream's screening state: see the module's documentation.
#[derive(Debug, Default)]
pub(crate) struct Screened {
    clean: HashSet<String>,
    quarantined: HashSet<String>,
    /// More quarantined URIs were listed than [`MAX_URIS`].
    overflowed: bool,
    /// The quarantined templates' `uriTemplate`s (the upstream's own), as last listed.
    templates: Vec<String>,
}

impl Screened {
    /// Records a listed resource `uri` (the upstream's own) as quarantined or clean.
    pub(crate) fn listed(&mut self, uri: &str, quarantined: bool) {
        let uri = &normalized(uri);
        if quarantined {
            self.clean.remove(uri);
            if self.quarantined.len() < MAX_URIS {
                self.quarantined.insert(uri.to_string());
            } else if !self.quarantined.contains(uri) {
                self.overflowed = true;
            }
        } else {
            self.quarantined.remove(uri);
            if self.clean.len() < MAX_URIS {
                self.clean.insert(uri.to_string());
            }
        }
    }

    /// Replaces the quarantined templates with those of the latest listing.
    pub(crate) fn templates(&mut self, quarantined: Vec<String>) {
        self.templates = quarantined.iter().map(|t| normalized(t)).collect();
    }

    /// Whether a read of `uri` (the upstream's own) is refused: its listing quarantined it, or
    /// a quarantined template covers it and no listing served it clean.
    pub(crate) fn refuses(&self, uri: &str) -> bool {
        let uri = &normalized(uri);
        if self.quarantined.contains(uri) {
            return true;
        }
        if self.clean.contains(uri) {
            return false;
        }
        self.overflowed || self.templates.iter().any(|t| template_matches(t, uri))
    }
}

/// `uri` as the sets compare it, so a spelling an upstream's router may take for the same
/// resource is the same (RFC 3986 section 6.2.2): the scheme and authority in lower case, a
/// percent-encoded unreserved character decoded, `.` segments and repeated slashes left out, a
/// fragment, an empty query and a trailing slash dropped.
pub(crate) fn normalized(uri: &str) -> String {
    let uri = uri.split('#').next().unwrap_or(uri);
    let uri = uri.strip_suffix('?').unwrap_or(uri);
    // the scheme and authority: up to the first `/` after `://` (or the whole of a URI
    // without one)
    let (head, path) = match uri.find("://") {
        Some(at) => match uri[at + 3..].find('/') {
            Some(slash) => uri.split_at(at + 3 + slash),
            None => (uri, ""),
        },
        None => match uri.find(':') {
            Some(at) => uri.split_at(at + 1),
            None => ("", uri),
        },
    };
    let mut out = head.to_ascii_lowercase();
    let decoded = decode_unreserved(path);
    let segments: Vec<&str> = decoded
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if !segments.is_empty() || path.starts_with('/') {
        out.push('/');
    }
    out.push_str(&segments.join("/"));
    out
}

/// `text` with each `%XX` that encodes an unreserved character (RFC 3986 section 2.3)
/// decoded.
fn decode_unreserved(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                    out.push(v as char);
                    i += 3;
                    continue;
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or_default();
        out.push(c);
        i += c.len_utf8().max(1);
    }
    out
}

/// Whether `uri` may be an expansion of the RFC 6570 `template`: each expression (`{...}`,
/// any operator) may stand for any text, the literal text between them must match exactly.
/// Wider than the RFC (an expression of the simple form cannot expand to `/`), which is the
/// safe side for a refusal; an unclosed `{` matches the rest.
pub(crate) fn template_matches(template: &str, uri: &str) -> bool {
    // the literal pieces, in order; the first anchored at the start, the last at the end
    let mut pieces: Vec<&str> = Vec::new();
    let mut rest = template;
    let mut open_end = false;
    loop {
        match rest.find('{') {
            Some(at) => {
                pieces.push(&rest[..at]);
                match rest[at..].find('}') {
                    Some(close) => rest = &rest[at + close + 1..],
                    None => {
                        open_end = true;
                        break;
                    }
                }
            }
            None => {
                pieces.push(rest);
                break;
            }
        }
    }
    if open_end {
        pieces.push("");
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return uri == first;
    }
    let Some(mut middle) = uri.strip_prefix(first) else {
        return false;
    };
    if middle.len() < last.len() || !middle.ends_with(last) {
        return false;
    }
    middle = &middle[..middle.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match middle.find(piece) {
            Some(at) => middle = &middle[at + piece.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_expansions_and_nothing_else() {
        for (t, uri, want) in [
            ("notes://{id}", "notes://a", true),
            ("notes://{id}", "notes://a/b", true),
            ("notes://{id}", "note://a", false),
            ("notes://{id}/raw", "notes://a/raw", true),
            ("notes://{id}/raw", "notes://a/rawx", false),
            ("notes://{id}/raw", "notes:///raw", true),
            ("a{x}b{y}c", "aXbYc", true),
            ("a{x}b{y}c", "aXYc", false),
            ("a{x}b{y}c", "abc", true),
            ("ab{x}ba", "aba", false),
            ("file:///{+path}", "file:///etc/passwd", true),
            ("plain://x", "plain://x", true),
            ("plain://x", "plain://xy", false),
            ("open://{x", "open://anything", true),
            ("open://{x", "other://", false),
            ("{x}", "", true),
            ("", "", true),
            ("", "a", false),
            ("é{x}ü", "éü", true),
            ("é{x}ü", "éaü", true),
            ("é{x}ü", "ü", false),
        ] {
            assert_eq!(template_matches(t, uri), want, "{t} against {uri}");
        }
    }

    #[test]
    fn spellings_of_one_uri_are_one() {
        for same in [
            "MEM://evil/Doc",
            "mem://EVIL/Doc",
            "mem://evil/Doc/",
            "mem://evil/Doc#x",
            "mem://evil/Doc?",
            "mem://evil/%44oc",
            "mem://evil//Doc",
            "mem://evil/./Doc",
        ] {
            assert_eq!(normalized(same), normalized("mem://evil/Doc"), "{same}");
        }
        assert_ne!(normalized("mem://evil/doc"), normalized("mem://evil/Doc"));
        assert_ne!(
            normalized("mem://evil/Doc?a=1"),
            normalized("mem://evil/Doc")
        );
        for odd in [
            "",
            "%",
            "%4",
            "a%",
            "x:%zz",
            "://",
            "é%C3%A9/ü",
            "%aé",
            "m://h/%é",
        ] {
            let _ = normalized(odd);
        }
        let mut s = Screened::default();
        s.listed("mem://evil/Doc", true);
        assert!(s.refuses("MEM://EVIL/%44oc/"));
    }

    #[test]
    fn a_read_is_refused_as_the_latest_listing_said() {
        let mut s = Screened::default();
        assert!(!s.refuses("notes://a"), "nothing listed yet");
        s.listed("notes://evil", true);
        s.listed("notes://a", false);
        assert!(s.refuses("notes://evil") && !s.refuses("notes://a"));
        // a later listing that serves it clean lets it be read, and the other way round
        s.listed("notes://evil", false);
        s.listed("notes://a", true);
        assert!(!s.refuses("notes://evil") && s.refuses("notes://a"));

        s.templates(vec!["notes://{id}".into()]);
        assert!(
            s.refuses("notes://other"),
            "covered by the quarantined template"
        );
        assert!(!s.refuses("notes://evil"), "served clean by a listing");
        assert!(!s.refuses("docs://other"));
        s.templates(Vec::new());
        assert!(!s.refuses("notes://other"));
    }

    #[test]
    fn past_the_bound_only_uris_served_clean_are_read() {
        let mut s = Screened::default();
        s.listed("ok://clean", false);
        for i in 0..MAX_URIS {
            s.listed(&format!("bad://{i}"), true);
        }
        assert!(!s.refuses("ok://never-listed"));
        s.listed("bad://one-more", true);
        assert!(s.refuses("bad://one-more") && s.refuses("ok://never-listed"));
        assert!(!s.refuses("ok://clean"));
    }
}
