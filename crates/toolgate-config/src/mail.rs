//! `[mail]`: the email assistant's settings, checked at load so `toolgate check` locates
//! every problem: the TLS mode against the host, the credentials' variables in the
//! environment, the contacts files and the CA file readable, the timeout and the size cap in
//! range.

use crate::model::{MailSettings, MailTls};
use crate::problem::Seg;
use std::path::Path;
use std::time::Duration;

/// The longest `timeout` accepted: 10 minutes.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The accepted range of `max_message_bytes`: 1 KiB to 1 GiB.
pub const MESSAGE_BYTES: (u64, u64) = (1024, 1 << 30);

/// Whether `host` is a loopback host (`localhost`, `127.0.0.0/8`, `::1`).
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The problems of `m`, each at its key under `mail`; contacts files are relative to `root`.
pub(crate) fn check(m: &MailSettings, root: &Path) -> Vec<(Vec<Seg>, String)> {
    let at = |k: &str| vec![Seg::Key("mail".into()), Seg::Key(k.into())];
    let mut out = Vec::new();
    if m.smtp_host.trim().is_empty() || m.smtp_host.contains(char::is_whitespace) {
        out.push((
            at("smtp_host"),
            "write the SMTP server's host name or address".into(),
        ));
    }
    if m.tls == Some(MailTls::None) && !is_loopback(&m.smtp_host) {
        out.push((
            at("tls"),
            format!(
                "tls = \"none\" sends mail and credentials in plain text, allowed only for a \
                 loopback host (127.0.0.1, ::1, localhost), not {:?}; write tls = \"starttls\" \
                 or \"tls\"",
                m.smtp_host
            ),
        ));
    }
    if m.smtp_port == Some(0) {
        out.push((at("smtp_port"), "the port must be 1 to 65535".into()));
    }
    match (&m.username_env, &m.password_env) {
        (Some(_), None) => out.push((
            at("username_env"),
            "a user name needs a password: add password_env".into(),
        )),
        (None, Some(_)) => out.push((
            at("password_env"),
            "a password needs a user name: add username_env".into(),
        )),
        _ => {}
    }
    for (k, var) in [
        ("username_env", &m.username_env),
        ("password_env", &m.password_env),
    ] {
        let Some(var) = var else { continue };
        if var.is_empty() || var.contains(['=', '\0']) {
            out.push((
                at(k),
                format!("{var:?} is not an environment variable's name"),
            ));
        } else if std::env::var_os(var).is_none_or(|v| v.is_empty()) {
            out.push((
                at(k),
                format!("the environment variable {var} is not set (or empty); set it where toolgate runs"),
            ));
        }
    }
    let addr = match (m.from.find('<'), m.from.rfind('>')) {
        (Some(a), Some(b)) if a < b => &m.from[a + 1..b],
        _ => m.from.as_str(),
    };
    if toolgate_core::pattern::normalize_address(addr).is_none()
        || m.from.contains(char::is_control)
    {
        out.push((
            at("from"),
            format!(
                "{:?} is not a sender address; write one such as \"assistant@example.com\" or \
                 \"Assistant <assistant@example.com>\"",
                m.from
            ),
        ));
    }
    if let Some(files) = &m.contacts {
        let paths = files.paths();
        for (i, p) in paths.iter().enumerate() {
            let mut key = at("contacts");
            if matches!(files, crate::model::ContactsFiles::Many(_)) {
                key.push(Seg::Index(i));
            }
            let full = root.join(p);
            let readable = std::fs::File::open(&full).and_then(|f| f.metadata());
            match readable {
                Ok(meta) if meta.is_file() => {}
                Ok(_) => out.push((
                    key,
                    format!("the contacts file {p:?} is not a regular file"),
                )),
                Err(e) => out.push((key, format!("the contacts file {p:?} cannot be read: {e}"))),
            }
        }
    }
    if let Some(ca) = &m.ca_file {
        if m.tls == Some(MailTls::None) {
            out.push((
                at("ca_file"),
                "ca_file is for a TLS connection, and tls = \"none\" has none; remove it or \
                 write tls = \"starttls\" or \"tls\""
                    .into(),
            ));
        }
        match std::fs::read(root.join(ca)) {
            Ok(pem) if pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") => {}
            Ok(_) => out.push((
                at("ca_file"),
                format!(
                    "{ca:?} holds no PEM certificate (-----BEGIN CERTIFICATE-----); write the \
                     CA's certificate in PEM"
                ),
            )),
            Err(e) => out.push((
                at("ca_file"),
                format!("the CA file {ca:?} cannot be read: {e}"),
            )),
        }
    }
    if let Some(t) = &m.timeout {
        match crate::ledger::parse_span(t) {
            Ok(d) if d.is_zero() || d > MAX_TIMEOUT => out.push((
                at("timeout"),
                format!("{t:?} is out of range: write a span from 1s to 10m"),
            )),
            Ok(_) => {}
            Err(e) => out.push((at("timeout"), e)),
        }
    }
    if let Some(b) = m.max_message_bytes {
        let (least, most) = MESSAGE_BYTES;
        if !(least..=most).contains(&b) {
            out.push((
                at("max_message_bytes"),
                format!("{b} is out of range: write {least} to {most} bytes"),
            ));
        }
    }
    out
}
