//! Email address syntax: an `addr-spec` (RFC 5322 section 3.4.1) within SMTP's limits
//! (RFC 5321 section 4.5.3.1: a local part of at most 64 octets, a domain of at most 255),
//! with UTF-8 local parts and internationalized domains (RFC 6531), checked by the
//! `email_address` crate and then by lettre's `Address`, the type that is sent.
//!
//! What is accepted is what can be sent: the domain is sent in its IDNA ASCII form (RFC 5890,
//! `xn--...`, lower case), so only a non-ASCII local part needs a server with `SMTPUTF8`
//! (RFC 6531); a quoted local part (`"a b"@example.com`), which lettre cannot carry from the
//! message's headers into its envelope, is refused, and so is any address that does not come
//! back unchanged from a message built to it.

use crate::text::has_control;
use email_address::{EmailAddress, Options};

/// Why a text is not an address the tools accept, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressProblem {
    /// What is wrong.
    pub what: String,
    /// What to send instead.
    pub instead: String,
}

impl std::fmt::Display for AddressProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.what, self.instead)
    }
}

fn problem(what: impl Into<String>, instead: impl Into<String>) -> AddressProblem {
    AddressProblem {
        what: what.into(),
        instead: instead.into(),
    }
}

/// The options: no display name (`Ann <ann@x>`), no domain literal (`[10.0.0.1]`), a domain
/// of at least two labels.
const OPTIONS: Options = Options {
    minimum_sub_domains: 2,
    allow_domain_literal: false,
    allow_display_text: false,
    allow_long_local_parts: false,
};

/// Parses one bare address (`ann@example.com`, `张伟@例子.中国`).
///
/// # Errors
/// An [`AddressProblem`] saying what is wrong and what to send instead.
pub fn parse(text: &str) -> Result<lettre::Address, AddressProblem> {
    if has_control(text) {
        return Err(problem(
            "the address holds a line break or another control character, which would let it \
             add mail headers",
            "send the bare address alone, such as ann@example.com",
        ));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(problem(
            "the address is empty",
            "send one such as ann@example.com",
        ));
    }
    if text.contains('<') || text.contains('>') {
        return Err(problem(
            "display names are not accepted (`Name <address>`)",
            "send only the address between the angle brackets",
        ));
    }
    if let Err(e) = EmailAddress::parse_with_options(text, OPTIONS) {
        use email_address::Error as E;
        let instead = "send an address such as ann@example.com";
        return Err(match e {
            E::MissingSeparator => {
                problem("there is no @ between a local part and a domain", instead)
            }
            E::LocalPartEmpty => problem("nothing comes before the @", instead),
            E::DomainEmpty => problem("nothing comes after the @", instead),
            E::LocalPartTooLong => problem(
                "the part before the @ is longer than 64 octets (RFC 5321 section 4.5.3.1.1)",
                instead,
            ),
            E::DomainTooLong | E::SubDomainTooLong => problem(
                "the domain, or one of its labels, is too long (RFC 5321 section 4.5.3.1.2)",
                instead,
            ),
            E::SubDomainEmpty | E::DomainInvalidSeparator => problem(
                "the domain has an empty label (two dots, or a dot at an end)",
                instead,
            ),
            E::DomainTooFew => problem(
                "the domain has a single label; a deliverable domain has a dot, as example.com",
                "send the full domain",
            ),
            E::UnsupportedDomainLiteral | E::InvalidIPAddress => problem(
                "an IP address in brackets is not accepted as a domain",
                "send the recipient's domain name",
            ),
            E::UnbalancedQuotes => problem("a quoted local part is not closed", instead),
            other => problem(
                format!(
                    "it is not an address: {}",
                    other.to_string().trim_end_matches('.')
                ),
                instead,
            ),
        });
    }
    if text.starts_with('"') {
        return Err(problem(
            "a quoted local part (\"a b\"@example.com) cannot be sent by this mail server's \
             client",
            "send the address without the quotes when they only wrap letters, digits and \
             . _ + - (ann.lee@example.com), or ask the recipient for an address without spaces \
             or quotes",
        ));
    }
    // the domain in IDNA ASCII, lower case: `a@例子.广告` needs no SMTPUTF8
    let ascii = toolgate_core::pattern::normalize_address(text).ok_or_else(|| {
        problem(
            "the domain is not a valid internationalized domain name (IDNA)",
            "send the recipient's domain as it is registered, such as example.com",
        )
    })?;
    let address = ascii.parse::<lettre::Address>().map_err(|e| {
        problem(
            format!("it is not an address SMTP can send to: {e}"),
            "send an address such as ann@example.com",
        )
    })?;
    if !survives_a_message(&address) {
        return Err(problem(
            "the address does not come through unchanged when written into a message's \
             headers, so it cannot be sent",
            "send a plain address such as ann.lee@example.com",
        ));
    }
    Ok(address)
}

/// The mailbox an address names, for telling two spellings apart: the address in lower
/// case (its domain is lower-case IDNA ASCII already, from [`parse`]; the local part is
/// case-sensitive by RFC 5321 section 2.4, but no mail server in use treats `Ann@` and `ann@`
/// as two mailboxes, and the section itself discourages relying on it).
pub(crate) fn mailbox_key(address: &lettre::Address) -> String {
    AsRef::<str>::as_ref(address).to_lowercase()
}

/// Whether a message built to `address` has it, unchanged, as its envelope's recipient
/// (lettre derives the envelope from the `To:` header it writes).
fn survives_a_message(address: &lettre::Address) -> bool {
    use lettre::message::Mailbox;
    let Ok(from) = "toolgate@example.com".parse::<lettre::Address>() else {
        return false;
    };
    lettre::Message::builder()
        .from(Mailbox::new(None, from))
        .to(Mailbox::new(None, address.clone()))
        .body(String::new())
        .is_ok_and(|m| m.envelope().to() == std::slice::from_ref(address))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_addresses_parse_internationalized_ones_too() {
        for good in [
            "ann@example.com",
            "张伟@例子.中国",
            "josé@bücher.de",
            "a.b+tag@sub.example.org",
        ] {
            assert!(parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn domains_are_sent_in_idna_ascii_so_only_a_utf8_local_part_needs_smtputf8() {
        let a = parse("a@例子.广告").unwrap();
        assert_eq!(a.to_string(), "a@xn--fsqu00a.xn--4rr70v");
        assert!(a.to_string().is_ascii());
        let b = parse("张伟@例子.中国").unwrap();
        assert_eq!(b.to_string(), "张伟@xn--fsqu00a.xn--fiqs8s");
        assert!(!b.to_string().is_ascii());
        assert_eq!(
            parse("Ann@Example.COM").unwrap().to_string(),
            "Ann@example.com"
        );
    }

    #[test]
    fn bad_addresses_say_what_is_wrong() {
        for (bad, says) in [
            ("", "empty"),
            ("ann.example.com", "no @"),
            ("@example.com", "before the @"),
            ("ann@", "after the @"),
            ("ann@localhost", "single label"),
            ("ann@exa..mple.com", "empty label"),
            ("Ann <ann@example.com>", "display names"),
            ("ann@example.com\r\nBcc: x@evil.com", "control character"),
            ("ann@[10.0.0.1]", "IP address"),
            ("\"ann@example.com", "not an address"),
            ("\"a b\"@example.com", "quoted local part"),
            ("\"ab\"@example.com", "quoted local part"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.what.contains(says), "{bad:?}: {e}");
            assert!(!e.instead.is_empty());
        }
    }
}
