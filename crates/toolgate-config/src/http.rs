//! `[http]`: checking the HTTP tools' settings (every problem located) and building their
//! [`HttpConfig`].

use crate::model::HttpSettings;
use crate::problem::{Locator, Problem, Seg};
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use toolgate_tools::http::{self, Credential, HttpConfig};

fn at(keys: &[&str]) -> Vec<Seg> {
    keys.iter().map(|k| Seg::Key((*k).to_string())).collect()
}

/// A range of `allow_private`: CIDR, or a single address.
fn net(text: &str) -> Option<IpNet> {
    let t = text.trim();
    t.parse::<IpNet>()
        .ok()
        .or_else(|| t.parse::<IpAddr>().ok().map(IpNet::from))
}

/// A name server: `IP:PORT`, or an IP (port 53).
fn nameserver(text: &str) -> Option<SocketAddr> {
    let t = text.trim();
    t.parse::<SocketAddr>()
        .ok()
        .or_else(|| t.parse::<IpAddr>().ok().map(|ip| SocketAddr::new(ip, 53)))
}

/// Problems of `[http]`, pushed to `out`; returns where each credential's variable is named,
/// for [`crate::Config::missing_credentials`].
pub(crate) fn check(
    loc: &Locator<'_>,
    raw: &HttpSettings,
    out: &mut Vec<Problem>,
) -> Vec<(String, Problem)> {
    for (i, text) in raw.allow_private.iter().enumerate() {
        if net(text).is_none() {
            let mut path = at(&["http", "allow_private"]);
            path.push(Seg::Index(i));
            out.push(loc.at(
                &path,
                format!(
                    "{text:?} is not an address range: write a network in CIDR notation \
                     (10.1.0.0/16) or one address (127.0.0.2)"
                ),
            ));
        }
    }
    if raw.max_redirects.is_some_and(|n| n > http::MAX_REDIRECTS) {
        out.push(loc.at(
            &at(&["http", "max_redirects"]),
            format!("at most {} redirects can be followed", http::MAX_REDIRECTS),
        ));
    }
    for (key, value) in [
        ("connect_timeout_ms", raw.connect_timeout_ms),
        ("timeout_ms", raw.timeout_ms),
    ] {
        let max = http::MAX_TIMEOUT.as_millis() as u64;
        if value.is_some_and(|v| v == 0 || v > max) {
            out.push(loc.at(
                &at(&["http", key]),
                format!("a timeout must be above 0 ms and at most {max} ms"),
            ));
        }
    }
    if raw
        .max_bytes
        .is_some_and(|b| b == 0 || b > http::MAX_MAX_BYTES)
    {
        out.push(loc.at(
            &at(&["http", "max_bytes"]),
            format!(
                "the body cap must be above 0 bytes and at most {} bytes",
                http::MAX_MAX_BYTES
            ),
        ));
    }
    for (i, text) in raw.nameservers.iter().enumerate() {
        if nameserver(text).is_none() {
            let mut path = at(&["http", "nameservers"]);
            path.push(Seg::Index(i));
            out.push(loc.at(
                &path,
                format!("{text:?} is not a name server: write IP:PORT (127.0.0.1:5353) or an IP"),
            ));
        }
    }
    for (name, answers) in &raw.hosts {
        let path = at(&["http", "hosts", name]);
        match HttpConfig::host_key(name) {
            Some(k) if k.parse::<IpAddr>().is_err() => {}
            _ => out.push(loc.at(
                &path,
                format!("{name:?} is not a host name (static answers are for names)"),
            )),
        }
        if answers.is_empty() {
            out.push(loc.at(&path, "a static answer needs at least one address"));
        }
        for (i, a) in answers.iter().enumerate() {
            if a.trim().parse::<IpAddr>().is_err() {
                let mut p = path.clone();
                p.push(Seg::Index(i));
                out.push(loc.at(&p, format!("{a:?} is not an IP address")));
            }
        }
    }
    let mut vars = Vec::new();
    for (host, c) in &raw.credentials {
        let path = at(&["http", "credentials", host]);
        if HttpConfig::host_key(host).is_none() {
            out.push(loc.at(
                &path,
                format!("{host:?} is not a host: write a name (api.example.com) or an address"),
            ));
        }
        if let Some(why) = http::headers::credential_header_problem(&c.header) {
            let mut p = path.clone();
            p.push(Seg::Key("header".into()));
            out.push(loc.at(&p, why));
        }
        let mut p = path;
        p.push(Seg::Key("value_env".into()));
        vars.push((
            c.value_env.clone(),
            loc.at(
                &p,
                format!(
                    "the environment variable {} (the credential for {host}) is not set: set \
                     it where toolgate runs, or calls to {host} fail with credential_missing",
                    c.value_env
                ),
            ),
        ));
    }
    vars
}

/// The HTTP tools' configuration from checked settings (credentials read from the
/// environment now).
pub(crate) fn build(raw: &HttpSettings) -> HttpConfig {
    let mut c = HttpConfig::default();
    c.allow_private = raw.allow_private.iter().filter_map(|t| net(t)).collect();
    if let Some(n) = raw.max_redirects {
        c.max_redirects = n;
    }
    if let Some(ms) = raw.connect_timeout_ms {
        c.connect_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = raw.timeout_ms {
        c.timeout = Duration::from_millis(ms);
    }
    if let Some(b) = raw.max_bytes {
        c.max_bytes = b;
    }
    c.nameservers = raw
        .nameservers
        .iter()
        .filter_map(|t| nameserver(t))
        .collect();
    for (name, answers) in &raw.hosts {
        if let Some(k) = HttpConfig::host_key(name) {
            let ips = answers
                .iter()
                .filter_map(|a| a.trim().parse().ok())
                .collect();
            c.hosts.insert(k, ips);
        }
    }
    for (host, cred) in &raw.credentials {
        if let Some(k) = HttpConfig::host_key(host) {
            c.credentials.insert(
                k,
                Credential::from_env(&cred.header, &cred.value_env)
                    .with_plain_http(cred.plain_http),
            );
        }
    }
    c
}
