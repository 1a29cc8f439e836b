//! toolgate-mail: the email assistant, toolgate's first business toolset, and the example of
//! how a domain toolset is written on toolgate.
//!
//! Five tools with narrow contracts (never a raw SMTP or raw SQL tool):
//!
//! | tool | effects | what it does |
//! |---|---|---|
//! | `search_contacts` | read_only | ranked matching over the operator's contacts book ([`contacts`]) |
//! | `search_files` | read_only | workspace files by name, content, age and kind; returns `file_...` handles ([`handles`]) |
//! | `generate_email_draft` | read_only | a deterministic plain-text and HTML draft; returns a `draft_...` handle |
//! | `validate_email_address` | read_only | RFC 5321/5322/6531 syntax, and what the policy says about the recipient |
//! | `send_email` | destructive, not idempotent, open_world, risk external | one message over SMTP ([`smtp`]) |
//!
//! How it leans on toolgate rather than doing its own safety work:
//!
//! - `send_email` declares every recipient as a `recipient:` resource and every attachment as
//!   a path it reads, so the configuration's rules (`recipient:*@company.com`, `path:secrets`)
//!   decide it, an allow covers it only when it covers every recipient, and the approval
//!   question shows every recipient and attachment (name and size, from
//!   [`toolgate_core::Tool::preview`]);
//! - it is neither read-only nor idempotent, so the pipeline's idempotency ledger claims the
//!   call's key before the handler runs: a second send with the same key (or the same call
//!   again within the derived-key window) is a replay, never a second message. The
//!   `Message-ID` is derived from the key ([`smtp::message_id`]), so the copy a server holds
//!   can be found by searching for it;
//! - an SMTP failure before the server accepted the message is marked
//!   [`toolgate_core::ToolError::no_effect`] (the key is free again); a connection lost or a
//!   reply that never came after the message was handed over ends `outcome_unknown`, and the
//!   entry stays unsettled until the operator settles it (`toolgate ledger resolve`): this
//!   toolset has no mailbox to look in, so its reconcile hook answers unknown;
//! - credentials come from environment variables the configuration names, never from
//!   arguments or the configuration file, and a relay that sends the password back (in a
//!   `535`, in its final reply) has it replaced before the model or the ledger sees it
//!   (the crate's `scrub` module).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_mail::{MailConfig, Tls};
//! let config = MailConfig::new("127.0.0.1", "assistant@example.com")
//!     .port(8025)
//!     .tls(Tls::None)
//!     .contacts(["/srv/ws/contacts.csv".into()]);
//! let tools = toolgate_mail::tools(config)?;
//! let registry = toolgate_core::Registry::builder().tools(tools).build()?;
//! # let _ = registry; Ok(()) }
//! ```

#![deny(missing_docs)]

pub mod address;
pub mod contacts;
mod draft;
pub mod handles;
mod scrub;
mod search_files;
mod send;
pub mod smtp;
mod text;
mod tools;
mod validate;

pub use contacts::{Contact, ContactBook, SkippedRow};
pub use draft::{DraftArgs, DraftOutput, GenerateEmailDraft};
pub use search_files::{FileInfo, SearchFiles, SearchFilesArgs, SearchFilesOutput};
pub use send::{SendEmail, SendEmailArgs, SendEmailOutput};
pub use tools::{SearchContacts, SearchContactsArgs, SearchContactsOutput};
pub use validate::{ValidateArgs, ValidateEmailAddress, ValidateOutput};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{IntoTool, Tool};

/// The names of the mail tools, in registration order.
pub const TOOL_NAMES: [&str; 5] = [
    "search_contacts",
    "search_files",
    "generate_email_draft",
    "validate_email_address",
    "send_email",
];

/// The default SMTP timeout and `send_email` call timeout: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default cap on a message's size, headers, body and encoded attachments together:
/// 10 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 10 << 20;

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tls {
    /// Plain text; only for a loopback host (the configuration refuses it for another).
    None,
    /// A plain connection upgraded with `STARTTLS` (RFC 3207), required (port 587 by default).
    #[default]
    Starttls,
    /// TLS from the first byte ("implicit TLS", RFC 8314; port 465 by default).
    Tls,
}

impl Tls {
    /// The port used when none is configured: 25 for `None`, 587 for `Starttls`, 465 for
    /// `Tls`.
    pub const fn default_port(self) -> u16 {
        match self {
            Tls::None => 25,
            Tls::Starttls => 587,
            Tls::Tls => 465,
        }
    }
}

/// The mail toolset's settings (`[mail]` in `toolgate.toml`). Its `Debug` shows the SMTP
/// user name but never the password (`<redacted>`), so a log line or panic message that
/// prints the settings does not carry it.
#[derive(Clone)]
pub struct MailConfig {
    /// The SMTP server's host name or address.
    pub smtp_host: String,
    /// Its port (default by [`Tls::default_port`]).
    pub smtp_port: Option<u16>,
    /// How the connection is secured.
    pub tls: Tls,
    /// The SMTP user name and password, already read from the environment variables the
    /// configuration names; `None` sends without authenticating.
    pub credentials: Option<(String, String)>,
    /// The sender's address (`From:` and the envelope sender).
    pub from: String,
    /// The contacts files (`.csv` with the header `name,email,organization,aliases`, or
    /// `.vcf` vCards), absolute paths.
    pub contacts: Vec<PathBuf>,
    /// The SMTP timeout and `send_email`'s call timeout.
    pub timeout: Duration,
    /// The largest message `send_email` sends, in bytes.
    pub max_message_bytes: u64,
    /// A PEM file of the CA certificates trusted for the server's TLS certificate, instead of
    /// the public web roots (an internal relay's private CA); `None` trusts the public roots.
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for MailConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let MailConfig {
            smtp_host,
            smtp_port,
            tls,
            credentials,
            from,
            contacts,
            timeout,
            max_message_bytes,
            ca_file,
        } = self;
        f.debug_struct("MailConfig")
            .field("smtp_host", smtp_host)
            .field("smtp_port", smtp_port)
            .field("tls", tls)
            .field(
                "credentials",
                &credentials.as_ref().map(|(user, _)| (user, "<redacted>")),
            )
            .field("from", from)
            .field("contacts", contacts)
            .field("timeout", timeout)
            .field("max_message_bytes", max_message_bytes)
            .field("ca_file", ca_file)
            .finish()
    }
}

impl MailConfig {
    /// Settings for `smtp_host`, sending as `from`, with STARTTLS, no credentials, no
    /// contacts and the default limits.
    pub fn new(smtp_host: impl Into<String>, from: impl Into<String>) -> Self {
        MailConfig {
            smtp_host: smtp_host.into(),
            smtp_port: None,
            tls: Tls::Starttls,
            credentials: None,
            from: from.into(),
            contacts: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            ca_file: None,
        }
    }

    /// Trusts only the CA certificates of the PEM file `path` for the server's certificate.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// Sets the port.
    pub fn port(mut self, port: u16) -> Self {
        self.smtp_port = Some(port);
        self
    }

    /// Sets how the connection is secured.
    pub fn tls(mut self, tls: Tls) -> Self {
        self.tls = tls;
        self
    }

    /// Sets the contacts files.
    pub fn contacts(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        self.contacts = files.into_iter().collect();
        self
    }

    /// Sets the SMTP user name and password.
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((user.into(), password.into()));
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the message size cap, in bytes.
    pub fn max_message_bytes(mut self, bytes: u64) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

/// Why the toolset could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    /// A contacts file could not be read or parsed.
    #[error("contacts file {path}: {message}")]
    Contacts {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The sender address is not an address.
    #[error("the sender address {0:?} is not an email address: {1}")]
    From(String, String),
    /// The TLS settings cannot be used: the CA file cannot be read or holds no PEM
    /// certificate.
    #[error("TLS: {}: {message}", path.display())]
    Tls {
        /// The CA file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A tool did not register.
    #[error(transparent)]
    Registration(#[from] toolgate_core::RegistrationError),
}

/// What the five tools share: the settings, the contacts book, and the handles given out.
#[derive(Debug)]
pub(crate) struct MailState {
    pub config: MailConfig,
    pub tls: TlsSetup,
    pub from: lettre::message::Mailbox,
    pub contacts: ContactBook,
    pub handles: handles::Handles,
}

/// The TLS parameters built once for every send (lettre's type has no `Debug`).
pub(crate) struct TlsSetup(pub Option<lettre::transport::smtp::client::TlsParameters>);

impl std::fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TlsSetup").field(&self.0.is_some()).finish()
    }
}

/// The five mail tools over `config`: the contacts files are read now.
///
/// # Errors
/// [`MailError::Contacts`] for a contacts file that cannot be read or has a wrong header (a
/// bad row is skipped and logged at warn level: [`ContactBook::skipped`]),
/// [`MailError::From`] for a sender that is not an address, [`MailError::Tls`] for a CA file
/// that cannot be used.
pub fn tools(config: MailConfig) -> Result<Vec<Arc<dyn Tool>>, MailError> {
    let contacts = ContactBook::load(&config.contacts)?;
    let tls = TlsSetup(smtp::tls_parameters(&config)?);
    let mut from = config
        .from
        .parse::<lettre::message::Mailbox>()
        .map_err(|e| MailError::From(config.from.clone(), e.to_string()))?;
    // the sender's domain in IDNA ASCII too, so an ASCII local part needs no SMTPUTF8
    if let Some(ascii) = toolgate_core::pattern::normalize_address(from.email.as_ref()) {
        if let Ok(email) = ascii.parse() {
            from.email = email;
        }
    }
    for row in contacts.skipped() {
        tracing::warn!(
            file = %row.path.display(),
            line = row.line,
            problem = %row.problem,
            "a contacts row is skipped: its contact cannot be found or sent to until the row is \
             fixed (`toolgate check` lists every such row)"
        );
    }
    let state = Arc::new(MailState {
        config,
        tls,
        from,
        contacts,
        handles: handles::Handles::default(),
    });
    Ok(vec![
        SearchContacts::new(state.clone()).into_tool()?,
        SearchFiles::new(state.clone()).into_tool()?,
        GenerateEmailDraft::new(state.clone()).into_tool()?,
        ValidateEmailAddress::new(state.clone())?.into_tool()?,
        SendEmail::new(state).into_tool()?,
    ])
}

/// The mail tools' contracts, for checking a configuration that names them (rules and
/// profiles) before `[mail]` is read.
pub fn specs() -> Vec<toolgate_core::ToolSpec> {
    // no TLS set up: the contracts do not depend on it, and building a TLS client (its root
    // store) is a sizeable part of a server's start
    let config = MailConfig::new("localhost", "toolgate@localhost").tls(Tls::None);
    tools(config)
        .map(|t| t.iter().map(|t| t.spec().clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `specs` builds the tools without TLS: the contracts must be the same as with it.
    #[test]
    fn the_contracts_do_not_depend_on_tls() {
        let with_tls: Vec<_> = tools(MailConfig::new("localhost", "toolgate@localhost"))
            .unwrap()
            .iter()
            .map(|t| t.spec().clone())
            .collect();
        assert_eq!(with_tls.len(), 5);
        assert_eq!(specs(), with_tls);
    }

    #[test]
    fn the_settings_debug_shows_the_user_never_the_password() {
        let mut config = MailConfig::new("localhost", "toolgate@localhost");
        config.credentials = Some(("mailer".into(), "hunter2-secret".into()));
        let shown = format!("{config:?} {config:#?}");
        assert!(
            shown.contains("mailer") && shown.contains("<redacted>"),
            "{shown}"
        );
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
