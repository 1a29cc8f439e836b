//! The egress policy: which URLs a tool may fetch and which addresses it may connect to. One
//! check for every outgoing connection (SSRF safety), shared by the HTTP tools and meant for
//! anything else that connects on a model's behalf (the gateway's HTTP upstreams, an egress
//! proxy). Pure: no I/O here; the resolver and the connector that apply it live with the HTTP
//! client (`toolgate_tools::http`).
//!
//! The sequence for one URL, the first one and every redirect hop alike, before connecting:
//!
//! 1. **parse** it as the WHATWG URL standard does ([`url::Url`], which the HTTP client also
//!    connects by, so the host checked is the host connected to): decimal, octal, hexadecimal
//!    and short IPv4 forms (`http://0177.1/`, `http://2130706433/`) become the IPv4 address
//!    they name, backslashes count as slashes, international names become their ASCII form,
//!    and an IPv6 zone id does not parse (`invalid_url`);
//! 2. the **scheme** is `http` or `https`, in any case (`scheme_not_allowed`: `file:`, `ftp:`,
//!    `gopher:`, `data:`, ...);
//! 3. no **user name or password** before the host (`credentials_in_url`): a model does not
//!    send credentials, the operator configures them per host;
//! 4. the **host**: an IP address is checked now, IPv4 carried in IPv6 included
//!    ([`ranges::classify`]); `localhost` and the names below it are loopback (RFC 6761); other
//!    names are checked when they resolve (`private_address`);
//! 5. when a name resolves, **every** answer is checked ([`EgressPolicy::check_answers`]): one
//!    blocked answer blocks the name (a resolver that mixes a public and a private answer must
//!    not get a connection to either), and the connection goes to the checked answers only,
//!    with no second lookup (so DNS rebinding finds nothing to rebind).
//!
//! An address is blocked when it is in one of the special-purpose ranges
//! ([`ranges::BlockedRange`]: loopback, private, link-local, carrier-grade NAT, unique local,
//! multicast, broadcast, unspecified, documentation, benchmarking, reserved, the cloud metadata
//! addresses) and no range the operator opened ([`EgressPolicy::allow_private`]) contains it.
//!
//! ```
//! use toolgate_core::egress::EgressPolicy;
//! let policy = EgressPolicy::new();
//! assert!(policy.check_url("https://example.com/").is_ok());
//! assert_eq!(policy.check_url("http://0177.0.0.1/").unwrap_err().reason(), "private_address");
//! assert_eq!(policy.check_url("FiLe:///etc/passwd").unwrap_err().reason(), "scheme_not_allowed");
//! let opened = EgressPolicy::new().allow_private(["127.0.0.2/32".parse().unwrap()]);
//! assert!(opened.check_url("http://127.0.0.2:8080/").is_ok());
//! ```

pub mod ranges;

use crate::error::ToolError;
use ipnet::IpNet;
use ranges::{classify_all, opened_by, Classification};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// The most characters of a URL quoted in a message; a longer one is cut with `...`.
const QUOTED_URL_CHARS: usize = 200;

/// Which URLs and addresses a connection may go to; see the module docs. Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    allow: Vec<IpNet>,
}

impl EgressPolicy {
    /// The policy that opens nothing: every blocked range stays blocked.
    pub fn new() -> Self {
        EgressPolicy::default()
    }

    /// Opens `nets`, ranges of blocked addresses the operator lets connections reach (for
    /// example `127.0.0.2/32` for a local test server, `10.1.0.0/16` for an internal API).
    /// A cloud metadata address is opened only by a range of that one address.
    #[must_use]
    pub fn allow_private(mut self, nets: impl IntoIterator<Item = IpNet>) -> Self {
        self.allow.extend(nets.into_iter().map(|n| n.trunc()));
        self
    }

    /// The ranges the operator opened.
    pub fn allowed_ranges(&self) -> &[IpNet] {
        &self.allow
    }

    /// Whether a connection may go to `ip`: `Err` with why not.
    ///
    /// # Errors
    /// The blocked range `ip` is in, when no allowed range opens it.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Classification> {
        // every reason counts: a Teredo address carries two IPv4 addresses, each opened or not
        match classify_all(ip)
            .into_iter()
            .flatten()
            .find(|why| !opened_by(&self.allow, ip, why))
        {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Parses `text` and checks it (steps 1 to 4 of the module docs).
    ///
    /// # Errors
    /// [`Blocked`] with the first check that fails.
    pub fn check_url(&self, text: &str) -> Result<Url, Blocked> {
        let url = Url::parse(text).map_err(|e| Blocked::InvalidUrl {
            url: quoted(text),
            why: e.to_string(),
        })?;
        self.check(&url)?;
        Ok(url)
    }

    /// Checks a parsed URL (steps 2 to 4 of the module docs): a redirect's target after
    /// [`Url::join`].
    ///
    /// # Errors
    /// [`Blocked`] with the first check that fails.
    pub fn check(&self, url: &Url) -> Result<(), Blocked> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(Blocked::SchemeNotAllowed {
                scheme: scheme.to_string(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Blocked::CredentialsInUrl {
                host: url.host_str().unwrap_or_default().to_string(),
            });
        }
        match url.host() {
            None => Err(Blocked::InvalidUrl {
                url: quoted(url.as_str()),
                why: "it has no host".into(),
            }),
            Some(Host::Ipv4(ip)) => self.check_literal(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => self.check_literal(IpAddr::V6(ip)),
            Some(Host::Domain(name)) if is_localhost(name) => self.check_answers(
                name,
                &[
                    IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(Ipv6Addr::LOCALHOST),
                ],
            ),
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    fn check_literal(&self, ip: IpAddr) -> Result<(), Blocked> {
        self.check_ip(ip).map_err(|why| Blocked::PrivateAddress {
            host: ip.to_string(),
            addr: ip,
            resolved: false,
            why,
        })
    }

    /// Checks every address the name `host` resolved to (step 5 of the module docs).
    ///
    /// # Errors
    /// [`Blocked::PrivateAddress`] for the first blocked answer, or [`Blocked::NoAddress`]
    /// when there is none.
    pub fn check_answers(&self, host: &str, answers: &[IpAddr]) -> Result<(), Blocked> {
        if answers.is_empty() {
            return Err(Blocked::NoAddress {
                host: host.to_string(),
            });
        }
        for ip in answers {
            self.check_ip(*ip).map_err(|why| Blocked::PrivateAddress {
                host: host.to_string(),
                addr: *ip,
                resolved: true,
                why,
            })?;
        }
        Ok(())
    }
}

/// Whether `name` (in the URL standard's ASCII form) is `localhost` or below it.
pub(crate) fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name.len() > ".localhost".len()
            && name.is_char_boundary(name.len() - ".localhost".len())
            && name[name.len() - ".localhost".len()..].eq_ignore_ascii_case(".localhost")
}

/// `text` cut to [`QUOTED_URL_CHARS`] characters for a message.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_URL_CHARS) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// Why a URL or an address was refused. [`Blocked::reason`] is the sub-reason of the
/// `url_blocked` error a tool returns ([`Blocked::to_tool_error`]); the message says what was
/// wrong and what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Blocked {
    /// The text is not an absolute URL the WHATWG standard accepts.
    #[error(
        "invalid_url: {url:?} is not a URL a connection can be made to ({why}); send an \
         absolute http:// or https:// URL such as https://example.com/page"
    )]
    InvalidUrl {
        /// The text, cut to 200 characters.
        url: String,
        /// What the URL parser said.
        why: String,
    },
    /// A scheme other than `http` and `https`.
    #[error(
        "scheme_not_allowed: {scheme}: URLs are not fetched; only http:// and https:// URLs \
         are (no file:, ftp:, gopher:, data: or other schemes): send an http or https URL"
    )]
    SchemeNotAllowed {
        /// The scheme, lower-cased by the parser.
        scheme: String,
    },
    /// A user name or password before the host.
    #[error(
        "credentials_in_url: the URL carries a user name or password before its host \
         {host:?}; send it without them (credentials for a host are set by the operator, \
         never sent in a URL)"
    )]
    CredentialsInUrl {
        /// The URL's host.
        host: String,
    },
    /// The host is, or resolves to, a blocked address.
    #[error("private_address: {}", private_message(.host, .addr, *.resolved, .why))]
    PrivateAddress {
        /// The host as the URL names it.
        host: String,
        /// The blocked address.
        addr: IpAddr,
        /// Whether the address is an answer of the resolver (not the URL's own host).
        resolved: bool,
        /// Why it is blocked.
        why: Classification,
    },
    /// The name resolved to no address.
    #[error(
        "no_address: the host {host:?} resolved to no address; check the host name, or send \
         another URL"
    )]
    NoAddress {
        /// The name.
        host: String,
    },
}

fn private_message(host: &str, addr: &IpAddr, resolved: bool, why: &Classification) -> String {
    let what = match why.embedded {
        Some((how, v4)) => format!(
            "{addr}, {} {} IPv6 address of {v4}, {}",
            how.article(),
            how.describe(),
            why.range.describe()
        ),
        None => format!("{addr}, {}", why.range.describe()),
    };
    let names = if resolved {
        format!("the host {host:?} resolves to {what}")
    } else {
        format!("the URL's host is {what}")
    };
    format!(
        "{names}. Connections go only to public internet addresses, never to the local host, \
         private networks or cloud metadata services; send the URL of a public site instead \
         (an operator can open an address range in toolgate.toml: [http] allow_private)"
    )
}

impl Blocked {
    /// The sub-reason: `invalid_url`, `scheme_not_allowed`, `credentials_in_url`,
    /// `private_address` or `no_address`.
    pub const fn reason(&self) -> &'static str {
        match self {
            Blocked::InvalidUrl { .. } => "invalid_url",
            Blocked::SchemeNotAllowed { .. } => "scheme_not_allowed",
            Blocked::CredentialsInUrl { .. } => "credentials_in_url",
            Blocked::PrivateAddress { .. } => "private_address",
            Blocked::NoAddress { .. } => "no_address",
        }
    }

    /// The error a tool returns: recoverable `unsafe_input` with reason `url_blocked`, this
    /// message (which starts with the sub-reason), and details for the operator
    /// (`url_blocked`: the sub-reason; for an address, `host`, `address`, `range` and the
    /// `embedded` IPv4 address).
    pub fn to_tool_error(&self) -> ToolError {
        ToolError::unsafe_input("url_blocked", self.to_string()).with_details(self.details())
    }

    /// The operator's details of [`Blocked::to_tool_error`].
    pub fn details(&self) -> serde_json::Value {
        let mut d = serde_json::json!({ "url_blocked": self.reason() });
        match self {
            Blocked::PrivateAddress {
                host, addr, why, ..
            } => {
                d["host"] = host.as_str().into();
                d["address"] = addr.to_string().into();
                d["range"] = why.range.as_str().into();
                if let Some((_, v4)) = why.embedded {
                    d["embedded"] = v4.to_string().into();
                }
            }
            Blocked::SchemeNotAllowed { scheme } => d["scheme"] = scheme.as_str().into(),
            Blocked::NoAddress { host } | Blocked::CredentialsInUrl { host } => {
                d["host"] = host.as_str().into();
            }
            Blocked::InvalidUrl { .. } => {}
        }
        d
    }
}

impl From<Blocked> for ToolError {
    fn from(b: Blocked) -> Self {
        b.to_tool_error()
    }
}

impl fmt::Display for Classification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.embedded {
            Some((how, v4)) => write!(f, "{} ({} {v4})", self.range, how.describe()),
            None => write!(f, "{}", self.range),
        }
    }
}

#[cfg(test)]
mod tests;
