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
        self.templates = quarantined;
    }

    /// Whether a read of `uri` (the upstream's own) is refused: its listing quarantined it, or
    /// a quarantined template covers it and no listing served it clean.
    pub(crate) fn refuses(&self, uri: &str) -> bool {
        if self.quarantined.contains(uri) {
            return true;
        }
        if self.clean.contains(uri) {
            return false;
        }
        self.overflowed || self.templates.iter().any(|t| template_matches(t, uri))
    }
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
