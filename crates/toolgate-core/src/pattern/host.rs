//! [`HostPattern`]: a pattern over the host of a URL.

use super::PatternError;
use crate::egress::is_localhost;
use crate::egress::ranges::embedded_v4;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A pattern over the host a URL names:
/// - `example.com`: that host exactly (names compare case-insensitively, a trailing dot is
///   ignored, international names compare in their ASCII (punycode) form);
/// - `*.example.com`: every host below `example.com` (`api.example.com`,
///   `a.b.example.com`), not `example.com` itself;
/// - `*`: every host;
/// - an IP address (`10.0.0.1`, `::1` or `[::1]`), matched against URLs that name it in any
///   form the URL parser accepts (`http://0x7f.1/` is `127.0.0.1`), any IPv6 address that
///   carries it as the egress policy reads them (mapped, compatible, translated, NAT64, 6to4,
///   Teredo: [`crate::egress::ranges::embedded_v4`]), and, for a loopback address, the names
///   that are loopback by definition (`localhost` and the names below it, RFC 6761);
/// - a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`), matched the same way.
///
/// A host name pattern never matches a URL that names an IP address, and an address pattern
/// no other name than `localhost`'s: the pattern is over what the call names, before DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    text: String,
    kind: HostKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostKind {
    Any,
    Name(String),
    /// `*.suffix`: the suffix with its leading dot (`.example.com`).
    Below(String),
    Net(ipnet::IpNet),
}

impl HostPattern {
    /// Parses a host pattern (the text after `host:`).
    ///
    /// # Errors
    /// [`PatternError::Empty`], or [`PatternError::Host`] for a name the URL standard does not
    /// accept as a host, a `*` anywhere but as the whole first label, or a bad network.
    pub fn parse(text: &str) -> Result<HostPattern, PatternError> {
        let original = text.trim();
        if original.is_empty() {
            return Err(PatternError::Empty { kind: "host" });
        }
        let bad = |why: &str| PatternError::Host {
            pattern: original.to_string(),
            why: why.to_string(),
        };
        let kind = if original == "*" {
            HostKind::Any
        } else if let Ok(net) = original.parse::<ipnet::IpNet>() {
            HostKind::Net(net.trunc())
        } else if original.contains('/') {
            return Err(bad(
                "a network is an address and a prefix length, as 10.0.0.0/8",
            ));
        } else if let Some(ip) = parse_ip(original) {
            HostKind::Net(ipnet::IpNet::from(ip))
        } else if let Some(rest) = original.strip_prefix("*.") {
            if rest.contains('*') {
                return Err(bad(
                    "`*` may only stand as the whole first label, as *.example.com",
                ));
            }
            HostKind::Below(format!(
                ".{}",
                name(rest).ok_or_else(|| bad("not a host name"))?
            ))
        } else if original.contains('*') {
            return Err(bad(
                "`*` may only stand as the whole first label, as *.example.com",
            ));
        } else {
            match url::Host::parse(original.trim_end_matches('.')) {
                Ok(url::Host::Domain(d)) => HostKind::Name(d),
                Ok(url::Host::Ipv4(ip)) => HostKind::Net(ipnet::IpNet::from(IpAddr::V4(ip))),
                Ok(url::Host::Ipv6(ip)) => HostKind::Net(ipnet::IpNet::from(IpAddr::V6(ip))),
                Err(e) => return Err(bad(&e.to_string())),
            }
        };
        Ok(HostPattern {
            text: original.to_string(),
            kind,
        })
    }

    /// Whether the host of `url` matches; `false` for a URL that does not parse or has no
    /// host.
    pub fn matches_url(&self, url: &str) -> bool {
        match url::Url::parse(url) {
            Ok(u) => u.host().is_some_and(|h| self.matches_host(&h)),
            Err(_) => false,
        }
    }

    /// Whether a parsed host matches.
    pub fn matches_host(&self, host: &url::Host<&str>) -> bool {
        match (&self.kind, host) {
            (HostKind::Any, _) => true,
            (HostKind::Name(n), url::Host::Domain(d)) => eq_name(d, n),
            (HostKind::Below(suffix), url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.');
                d.len() > suffix.len()
                    && d.is_char_boundary(d.len() - suffix.len())
                    && d[d.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
            }
            (HostKind::Net(net), url::Host::Ipv4(ip)) => net.contains(&IpAddr::V4(*ip)),
            (HostKind::Net(net), url::Host::Ipv6(ip)) => {
                net.contains(&IpAddr::V6(*ip))
                    || embedded_v4(*ip)
                        .0
                        .into_iter()
                        .flatten()
                        .any(|v4| net.contains(&IpAddr::V4(v4)))
            }
            (HostKind::Net(net), url::Host::Domain(d)) => {
                is_localhost(d)
                    && (net.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST))
                        || net.contains(&IpAddr::V6(Ipv6Addr::LOCALHOST)))
            }
            _ => false,
        }
    }

    /// Whether the pattern is an address or a network (`203.0.113.7`, `10.0.0.0/8`, `::1`),
    /// the patterns [`HostPattern::matches_address`] can match.
    pub fn is_address(&self) -> bool {
        matches!(self.kind, HostKind::Net(_))
    }

    /// Whether `address`, an address a host name resolved to, is one this pattern names: only
    /// an address or network pattern matches (as it would the address written in a URL, the
    /// IPv6 forms that carry an IPv4 address included); a name pattern, and `*`, never do
    /// (they were matched against the name).
    pub fn matches_address(&self, address: IpAddr) -> bool {
        if !self.is_address() {
            return false;
        }
        match address {
            IpAddr::V4(v4) => self.matches_host(&url::Host::Ipv4(v4)),
            IpAddr::V6(v6) => self.matches_host(&url::Host::Ipv6(v6)),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    let s = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(s);
    s.parse().ok()
}

/// A host name in the URL standard's ASCII form, or `None`.
fn name(s: &str) -> Option<String> {
    match url::Host::parse(s.trim_end_matches('.')) {
        Ok(url::Host::Domain(d)) => Some(d),
        _ => None,
    }
}

fn eq_name(host: &str, name: &str) -> bool {
    host.trim_end_matches('.').eq_ignore_ascii_case(name)
}
