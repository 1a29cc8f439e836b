//! [`RecipientPattern`]: a pattern over the recipients of a message (an email address).

use super::{MatchMode, PatternError};
use std::fmt;

/// A pattern over a recipient's email address (the text after `recipient:`):
/// - `boss@company.com`: that address;
/// - `*@company.com`: every address at `company.com` (not at its subdomains);
/// - `*@*.company.com`: every address at a domain below `company.com`;
/// - `*`: every address.
///
/// Domains compare case-insensitively and in their ASCII form (IDNA, UTS #46: `*@bücher.de`
/// and `*@xn--bcher-kva.de` are one pattern), a trailing dot ignored. A local part compares as
/// written in a pattern that grants ([`MatchMode::Grant`]) and as the mailbox it reaches in
/// one that restricts ([`MatchMode::Restrict`]): mail servers commonly treat `Boss` and
/// `boss` as one mailbox and deliver `boss+anything` (a sub-address, RFC 5233) to `boss`, and
/// a quoted local part (`"boss"`) is the same one (RFC 5321 §4.1.2), so a deny or ask on
/// `boss@company.com` catches every such spelling while an allow names only the one written.
/// A restricting pattern whose local part has a `+` of its own names that sub-address only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipientPattern {
    text: String,
    local: Local,
    domain: Domain,
    mode: MatchMode,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Local {
    Any,
    Exact(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Domain {
    Any,
    Exact(String),
    /// `*.suffix`: the suffix with its leading dot.
    Below(String),
}

/// The address `address` in the form patterns match: the local part as sent, `@`, the domain
/// in lower-case ASCII (IDNA), without a trailing dot; `None` when it has no `@`, an empty
/// local part, or a domain that is not a host name.
pub fn normalize_address(address: &str) -> Option<String> {
    let (local, domain) = address.trim().rsplit_once('@')?;
    if local.is_empty() {
        return None;
    }
    let domain = ascii_domain(domain)?;
    Some(format!("{local}@{domain}"))
}

/// A host name in lower-case ASCII (IDNA), without a trailing dot.
fn ascii_domain(domain: &str) -> Option<String> {
    let d = domain.strip_suffix('.').unwrap_or(domain);
    if d.is_empty() || d.contains(['*', '[', ']', '/', ':']) {
        return None;
    }
    match url::Host::parse(d).ok()? {
        url::Host::Domain(d) => Some(d),
        _ => None,
    }
}

impl RecipientPattern {
    /// Parses a recipient pattern (the text after `recipient:`) that matches in `mode`.
    ///
    /// # Errors
    /// [`PatternError::Empty`], or [`PatternError::Recipient`] for a pattern without `@`, a
    /// `*` anywhere but as the whole local part or the whole first label of the domain, or a
    /// domain that is not a host name.
    pub fn parse(text: &str, mode: MatchMode) -> Result<RecipientPattern, PatternError> {
        let original = text.trim();
        if original.is_empty() {
            return Err(PatternError::Empty { kind: "recipient" });
        }
        let bad = |why: &str| PatternError::Recipient {
            pattern: original.to_string(),
            why: why.to_string(),
        };
        let (local, domain) = if original == "*" {
            (Local::Any, Domain::Any)
        } else {
            let (l, d) = original.rsplit_once('@').ok_or_else(|| {
                bad("a recipient pattern is an address (boss@company.com), *@domain or *@*.domain")
            })?;
            let local = match l {
                "*" => Local::Any,
                "" => return Err(bad("the local part before @ is empty; write * for any")),
                l if l.contains('*') => {
                    return Err(bad(
                        "`*` may only stand as the whole local part, as *@company.com",
                    ))
                }
                l => Local::Exact(l.to_string()),
            };
            let domain = if let Some(rest) = d.strip_prefix("*.") {
                Domain::Below(format!(
                    ".{}",
                    ascii_domain(rest).ok_or_else(|| bad("not a domain name after *."))?
                ))
            } else if d == "*" {
                Domain::Any
            } else {
                Domain::Exact(ascii_domain(d).ok_or_else(|| {
                    bad("the part after @ is not a domain name (`*` only as *.company.com)")
                })?)
            };
            (local, domain)
        };
        Ok(RecipientPattern {
            text: original.to_string(),
            local,
            domain,
            mode,
        })
    }

    /// Whether `address` (any spelling: its domain is normalized here, see
    /// [`normalize_address`]) matches; `false` for a text that is not an address.
    pub fn matches(&self, address: &str) -> bool {
        let Some((local, domain)) = address.trim().rsplit_once('@') else {
            return false;
        };
        let domain_ok = match &self.domain {
            Domain::Any => true,
            _ => match ascii_domain(domain) {
                None => false,
                Some(d) => match &self.domain {
                    Domain::Exact(e) => d == *e,
                    Domain::Below(suffix) => d.len() > suffix.len() && d.ends_with(suffix.as_str()),
                    Domain::Any => true,
                },
            },
        };
        domain_ok
            && match &self.local {
                Local::Any => !local.is_empty(),
                Local::Exact(l) => match self.mode {
                    MatchMode::Grant => local == l,
                    MatchMode::Restrict => mailbox(local, !l.contains('+')) == mailbox(l, false),
                },
            }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The mailbox a local part reaches, for a restricting pattern: lower-cased, its quotes
/// removed (`"boss"`), and with `strip_tag` its sub-address tag cut off (`boss+x` → `boss`).
fn mailbox(local: &str, strip_tag: bool) -> String {
    let unquoted = local
        .strip_prefix('"')
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or(local);
    let base = match unquoted.split_once('+') {
        Some((base, _)) if strip_tag && !base.is_empty() => base,
        _ => unquoted,
    };
    base.to_lowercase()
}

impl fmt::Display for RecipientPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(p: &str) -> RecipientPattern {
        RecipientPattern::parse(p, MatchMode::Grant).unwrap()
    }

    #[test]
    fn domains_compare_in_ascii_and_ignoring_case() {
        let p = grant("*@Company.com");
        assert!(p.matches("ann@company.COM"));
        assert!(p.matches("ann@company.com."));
        assert!(!p.matches("ann@sub.company.com"));
        assert!(!p.matches("ann@company.com.evil.net"));
        assert!(!p.matches("company.com"));
        let idn = grant("*@bücher.de");
        assert!(idn.matches("leser@xn--bcher-kva.de"));
        assert!(idn.matches("leser@BÜCHER.de"));
        let below = grant("*@*.company.com");
        assert!(below.matches("a@eu.company.com"));
        assert!(!below.matches("a@company.com"));
        assert!(!below.matches("a@evilcompany.com"));
        assert!(grant("*").matches("张伟@例子.中国"));
    }

    #[test]
    fn local_parts_match_exactly_when_granting_and_every_case_when_restricting() {
        assert!(grant("boss@company.com").matches("boss@COMPANY.com"));
        assert!(!grant("boss@company.com").matches("Boss@company.com"));
        let deny = RecipientPattern::parse("boss@company.com", MatchMode::Restrict).unwrap();
        assert!(deny.matches("BOSS@company.com"));
        assert!(!deny.matches("boss2@company.com"));
        // every spelling of the same mailbox: a sub-address, quotes
        for same in [
            "boss+x@company.com",
            "Boss+@company.com",
            "\"boss\"@company.com",
        ] {
            assert!(deny.matches(same), "{same}");
            assert!(!grant("boss@company.com").matches(same), "{same}");
        }
        assert!(!deny.matches("bossy+x@company.com"));
        assert!(!deny.matches("+boss@company.com"));
        // a deny on one sub-address names that one
        let tagged = RecipientPattern::parse("boss+hr@company.com", MatchMode::Restrict).unwrap();
        assert!(tagged.matches("Boss+HR@company.com"));
        assert!(!tagged.matches("boss@company.com") && !tagged.matches("boss+x@company.com"));
    }

    #[test]
    fn bad_patterns_say_what_to_write() {
        for (bad, says) in [
            ("", "must not be empty"),
            ("company.com", "*@domain"),
            ("b*ss@company.com", "whole local part"),
            ("@company.com", "write * for any"),
            ("*@comp*ny.com", "not a domain"),
            ("*@", "not a domain"),
            ("*@[127.0.0.1]", "not a domain"),
        ] {
            let e = RecipientPattern::parse(bad, MatchMode::Grant)
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn addresses_normalize_their_domain_only() {
        assert_eq!(
            normalize_address("Ann@Bücher.DE.").as_deref(),
            Some("Ann@xn--bcher-kva.de")
        );
        assert_eq!(normalize_address("no-at-sign"), None);
        assert_eq!(normalize_address("@x.com"), None);
        assert_eq!(normalize_address("a@"), None);
    }
}
