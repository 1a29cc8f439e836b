//! The mail tools of `[mail]` (toolgate-mail), for `serve` and `call`.

use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use toolgate_config::model::MailTls;
use toolgate_core::Tool;

/// The five mail tools when the configuration has `[mail]`, else none. The credentials are
/// read from the variables `username_env` and `password_env` name (the configuration's load
/// checked they are set); the contacts files are read now.
///
/// # Errors
/// A variable unset since the load, a contacts file that does not parse, a bad sender.
pub fn mail_tools(
    config: &toolgate_config::Config,
    root: &Path,
) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    let Some(m) = config.mail() else {
        return Ok(Vec::new());
    };
    let tls = match m.tls {
        Some(MailTls::None) => toolgate_mail::Tls::None,
        Some(MailTls::Tls) => toolgate_mail::Tls::Tls,
        Some(MailTls::Starttls) | None => toolgate_mail::Tls::Starttls,
    };
    let mut mail = toolgate_mail::MailConfig::new(m.smtp_host.trim(), m.from.trim())
        .tls(tls)
        .contacts(config.mail_contacts(root));
    if let Some(port) = m.smtp_port {
        mail = mail.port(port);
    }
    if let Some(t) = &m.timeout {
        let d = toolgate_config::parse_span(t).map_err(anyhow::Error::msg)?;
        mail = mail.timeout(d);
    }
    if let Some(ca) = config.mail_ca_file(root) {
        mail = mail.ca_file(ca);
    }
    if let Some(b) = m.max_message_bytes {
        mail = mail.max_message_bytes(b);
    }
    if let (Some(u), Some(p)) = (&m.username_env, &m.password_env) {
        let read = |var: &str| {
            std::env::var(var).with_context(|| format!("[mail]: the environment variable {var}"))
        };
        mail = mail.credentials(read(u)?, read(p)?);
    }
    toolgate_mail::tools(mail).context("[mail]: the mail tools")
}
