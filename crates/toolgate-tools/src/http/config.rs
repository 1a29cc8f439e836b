//! [`HttpConfig`]: what the operator sets for the HTTP tools (`[http]` in toolgate.toml), and
//! the limits on those settings.

use ipnet::IpNet;
use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Redirects followed by default.
pub const DEFAULT_MAX_REDIRECTS: u32 = 5;
/// The most redirects the configuration may allow.
pub const MAX_REDIRECTS: u32 = 20;
/// The default time to set up a connection (DNS, TCP, TLS): 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a whole call may take, redirects and body included: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest either timeout may be set to: 10 minutes.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Body bytes read by default, and the most a call may ask for unless the operator sets
/// another cap: 1 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 20;
/// The highest cap the configuration may set: 64 MiB.
pub const MAX_MAX_BYTES: u64 = 64 << 20;

/// The HTTP tools' settings. [`HttpConfig::default`] opens no private range, follows 5
/// redirects, connects within 10 s, ends a call after 30 s, reads at most 1 MiB of a body and
/// resolves names with the system's resolver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Ranges of blocked addresses (loopback, private, link-local, ...) the tools may reach;
    /// nothing blocked is reachable otherwise. A cloud metadata address is opened only by a
    /// range of that one address.
    pub allow_private: Vec<IpNet>,
    /// Redirects followed before the call fails with `too_many_redirects` (0: a redirect is
    /// returned as it is, for the model to decide).
    pub max_redirects: u32,
    /// The time to set up a connection: resolving the name, TCP and TLS.
    pub connect_timeout: Duration,
    /// The time a whole call may take: the tools' timeout.
    pub timeout: Duration,
    /// The most body bytes a call reads (on the wire and after decompression alike), and the
    /// highest `max_bytes` a call may ask for.
    pub max_bytes: u64,
    /// Name servers to resolve with (`udp` and `tcp` on each address) instead of the system's
    /// resolver; empty: the system's.
    pub nameservers: Vec<SocketAddr>,
    /// Static answers by host name, like curl's `--resolve`, consulted before any resolver
    /// and checked like any answer. Names in the URL standard's ASCII form, lower case,
    /// without a trailing dot ([`HttpConfig::host_key`]).
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
    /// Credentials sent to one host each, by host name or address
    /// ([`HttpConfig::host_key`]).
    pub credentials: BTreeMap<String, Credential>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allow_private: Vec::new(),
            max_redirects: DEFAULT_MAX_REDIRECTS,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
            nameservers: Vec::new(),
            hosts: BTreeMap::new(),
            credentials: BTreeMap::new(),
        }
    }
}

impl HttpConfig {
    /// The key `host` is looked up by in [`HttpConfig::hosts`] and
    /// [`HttpConfig::credentials`]: a name in the URL standard's ASCII form (international
    /// names as punycode), lower case, without a trailing dot; an IP address as it displays
    /// (`127.0.0.2`, `::1`, without brackets). `None` for text that is not a host.
    pub fn host_key(host: &str) -> Option<String> {
        let trimmed = host.trim();
        let unbracketed = trimmed
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(trimmed);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Some(ip.to_string());
        }
        match url::Host::parse(trimmed.trim_end_matches('.')) {
            Ok(url::Host::Domain(d)) if !d.is_empty() => Some(d),
            Ok(url::Host::Ipv4(ip)) => Some(ip.to_string()),
            Ok(url::Host::Ipv6(ip)) => Some(ip.to_string()),
            _ => None,
        }
    }
}

/// A credential the tools add to every request to one host: header `header` with the value of
/// the environment variable `value_env`, read when the tools are built. The model never sees
/// it: not in the tools' results, not in the audit record, and never sent to another origin (a
/// redirect to another host, another port of the host, or another scheme goes without it).
/// It goes only over `https://` unless `plain_http` (a call naming `http://` on the host is
/// refused before anything is sent, saying to use `https://`).
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The header's name (`Authorization`, `X-Api-Key`).
    pub header: String,
    /// The environment variable the value was read from.
    pub value_env: String,
    /// The value, `None` when the variable is unset or empty (requests to the host then
    /// fail with `credential_missing` rather than go without it).
    pub value: Option<Secret>,
    /// Also send it over plain `http://` (a service without TLS on this machine or its
    /// network), where anyone on the path can read it; default false.
    pub plain_http: bool,
}

impl Credential {
    /// A credential of `header` with the value of `value_env` from the environment.
    pub fn from_env(header: impl Into<String>, value_env: impl Into<String>) -> Self {
        let value_env = value_env.into();
        let value = std::env::var(&value_env)
            .ok()
            .filter(|v| !v.is_empty())
            .map(Secret);
        Credential {
            header: header.into(),
            value_env,
            value,
            plain_http: false,
        }
    }

    /// The same credential, also sent over plain `http://` when `yes`.
    #[must_use]
    pub fn with_plain_http(mut self, yes: bool) -> Self {
        self.plain_http = yes;
        self
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("header", &self.header)
            .field("value_env", &self.value_env)
            .field("value", &self.value.as_ref().map(|_| "[redacted]"))
            .field("plain_http", &self.plain_http)
            .finish()
    }
}

/// A secret value: shown as `[redacted]` by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}
