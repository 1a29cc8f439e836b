//! One message over SMTP (RFC 5321) through lettre's connection, step by step, so a failure
//! says whether the server may hold the message.
//!
//! The sequence: connect (TLS from the first byte when configured, RFC 8314), `EHLO`,
//! `STARTTLS` when configured (RFC 3207; required: a server that does not offer it is
//! refused), `AUTH` when credentials are configured, `MAIL FROM`, `RCPT TO` for each recipient
//! and `DATA`: until the server has answered `DATA` with `354` it has nothing, so every
//! failure up to there, a step that does not finish by the hand-over deadline included, is
//! [`Failure::NotSent`]. Then the message is handed over: a negative final reply is
//! [`Failure::NotSent`] too; a connection lost or a final reply that does not come by the
//! reply deadline leaves the server maybe holding it ([`Failure::Unknown`]). Last, every text
//! the server or lettre gave (the final reply, a failure's message) has the configured
//! password replaced in whatever form a relay sent it back (the crate's `scrub` module), before a
//! result, an error or a ledger entry is made of it.
//!
//! The server's certificate is checked against the public web roots, or only against the
//! operator's own CA when [`MailConfig::ca_file`] names one, and against the configured host
//! name (or IP address); a certificate that does not verify ends the connection before
//! anything is sent ([`Cause::Tls`]).

use crate::{MailConfig, MailError, Tls};
use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{
    AsyncSmtpConnection, Certificate, CertificateStore, TlsParameters,
};
use lettre::transport::smtp::commands::{Data, Mail, Rcpt};
use lettre::transport::smtp::extension::{ClientId, Extension, MailBodyParameter, MailParameter};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// Why nothing was sent: what the model and the operator can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The server could not be reached, did not answer in time, or failed a step for a
    /// reason that may pass: sending again later may work.
    Unavailable,
    /// The TLS handshake failed: the server's certificate is not trusted (not issued by the
    /// configured CA, or not for the configured host), or TLS is not offered. Only the
    /// operator can fix it.
    Tls,
    /// The server refused the configured credentials.
    Auth,
    /// The server refused the sender, a recipient or the message; `permanent` for a 5xx
    /// reply (sending the same again will fail the same way).
    Refused {
        /// A 5xx reply.
        permanent: bool,
    },
}

/// Why a message was not (surely) sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server has nothing: the failure came before it accepted `DATA`, or it answered
    /// no to the message.
    NotSent {
        /// What happened, for the model and the operator.
        message: String,
        /// Why.
        cause: Cause,
    },
    /// The message was handed over and its final reply never came (or the connection broke):
    /// the server may hold it.
    Unknown(String),
}

/// The `Message-ID` (RFC 5322 section 3.6.4) of the message sent under idempotency key
/// `key`: `<tg.` and 32 hex digits of SHA-256 of the key `@` the sender's domain `>`. The
/// same key gives the same id, so the copy a server holds can be searched for.
pub fn message_id(key: &str, domain: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("<tg.{hex}@{domain}>")
}

fn not_sent(message: String, cause: Cause) -> Failure {
    Failure::NotSent { message, cause }
}

/// The TLS parameters of `config`: `None` for [`Tls::None`]; else for its host, trusting the
/// certificates of its `ca_file` only, or the public web roots without one. Built once, when
/// the toolset is set up.
///
/// # Errors
/// [`MailError::Tls`]: a CA file that cannot be read or holds no PEM certificate.
pub(crate) fn tls_parameters(config: &MailConfig) -> Result<Option<TlsParameters>, MailError> {
    if config.tls == Tls::None {
        return Ok(None);
    }
    let host = config
        .smtp_host
        .trim_start_matches('[')
        .trim_end_matches(']');
    let mut builder = TlsParameters::builder(host.to_string());
    if let Some(path) = &config.ca_file {
        let bad = |message: String| MailError::Tls {
            path: path.clone(),
            message,
        };
        let pem = std::fs::read(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
        if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
            return Err(bad(
                "holds no PEM certificate (-----BEGIN CERTIFICATE-----); write the CA's \
                 certificate in PEM"
                    .into(),
            ));
        }
        let cert = Certificate::from_pem(&pem).map_err(|e| bad(format!("is not PEM: {e}")))?;
        builder = builder
            .certificate_store(CertificateStore::None)
            .add_root_certificate(cert);
    }
    builder
        .build_rustls()
        .map(Some)
        .map_err(|e| MailError::Tls {
            path: config.ca_file.clone().unwrap_or_default(),
            message: format!("the TLS settings for {host} are refused: {e}"),
        })
}

/// When the steps of one send must be done.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// Every step before the message is handed over (connect, TLS, `AUTH`, `MAIL`, `RCPT`,
    /// `DATA`): past it the send stops with [`Cause::Unavailable`], nothing sent.
    pub handover: Instant,
    /// The message's final reply: past it the send stops with [`Failure::Unknown`].
    pub reply: Instant,
}

impl Deadlines {
    /// The deadlines of a send that must be over within `budget` of now: the reply a margin
    /// (a twentieth of the budget, 10 ms to 500 ms) before the end, so this send says what
    /// happened before its caller stops waiting, the hand-over a margin before the reply.
    pub fn within(budget: Duration) -> Deadlines {
        let now = Instant::now();
        let margin = (budget / 20).clamp(Duration::from_millis(10), Duration::from_millis(500));
        let reply = now + budget.saturating_sub(margin);
        Deadlines {
            handover: now + budget.saturating_sub(margin * 2),
            reply,
        }
    }
}

/// Whether `e` (or what caused it) is a TLS failure: rustls reports a handshake that failed
/// (a certificate not trusted or not for the host) as an I/O error of kind `InvalidData`,
/// which a TCP connection never gives.
fn is_tls_error(e: &lettre::transport::smtp::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::InvalidData;
        }
        source = s.source();
    }
    e.is_tls()
}

/// Runs step `what` by `by`: a timeout is [`Cause::Unavailable`], an error is classified by
/// `classify`.
async fn step<T>(
    by: Instant,
    what: &str,
    fut: impl Future<Output = Result<T, lettre::transport::smtp::Error>>,
    classify: impl FnOnce(lettre::transport::smtp::Error) -> Failure,
) -> Result<T, Failure> {
    match tokio::time::timeout_at(by, fut).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(classify(e)),
        Err(_) => Err(not_sent(
            format!("the SMTP server did not answer {what} in time"),
            Cause::Unavailable,
        )),
    }
}

/// A refusal of `what` by the server (a 4xx or 5xx reply), else the server unavailable.
fn refused(what: &'static str) -> impl FnOnce(lettre::transport::smtp::Error) -> Failure {
    move |e| {
        if e.is_permanent() || e.is_transient() {
            not_sent(
                format!("the SMTP server refused {what}: {e}"),
                Cause::Refused {
                    permanent: e.is_permanent(),
                },
            )
        } else {
            not_sent(
                format!("the SMTP conversation failed at {what}: {e}"),
                Cause::Unavailable,
            )
        }
    }
}

/// Sends `email` (the formatted message) to the envelope's recipients, each step by its
/// deadline; `tls` from [`tls_parameters`]. The server's final reply, or the failure, with
/// every form of the configured password a server sent back replaced
/// ([`crate::scrub::Scrubber`]).
///
/// # Errors
/// See [`Failure`].
pub(crate) async fn send(
    config: &MailConfig,
    tls: Option<&TlsParameters>,
    envelope: &Envelope,
    email: &[u8],
    by: Deadlines,
) -> Result<String, Failure> {
    let outcome = deliver(config, tls, envelope, email, by).await;
    crate::scrub::Scrubber::new(config).outcome(outcome)
}

/// [`send`] before the password is scrubbed from its texts.
async fn deliver(
    config: &MailConfig,
    tls: Option<&TlsParameters>,
    envelope: &Envelope,
    email: &[u8],
    by: Deadlines,
) -> Result<String, Failure> {
    let host = config.smtp_host.as_str();
    let port = config.smtp_port.unwrap_or(config.tls.default_port());
    let hello = ClientId::default();
    let tls_failed = move |e: lettre::transport::smtp::Error| {
        not_sent(
            format!(
                "the TLS handshake with {host}:{port} failed ({e}): the server's certificate is \
                 not trusted for {host} (the operator's [mail] ca_file and smtp_host must match \
                 the server's certificate)"
            ),
            Cause::Tls,
        )
    };
    let unreachable = move |e: lettre::transport::smtp::Error| {
        if is_tls_error(&e) {
            tls_failed(e)
        } else {
            not_sent(
                format!("the SMTP server {host}:{port} could not be reached: {e}"),
                Cause::Unavailable,
            )
        }
    };
    let mut conn = match (config.tls, tls) {
        (Tls::Tls, Some(params)) => {
            let left = by.handover.saturating_duration_since(Instant::now());
            step(
                by.handover,
                "the connection and TLS handshake",
                AsyncSmtpConnection::connect_tokio1(
                    (host, port),
                    Some(left),
                    &hello,
                    Some(params.clone()),
                    None,
                ),
                unreachable,
            )
            .await?
        }
        _ => {
            // our own socket, with Nagle's algorithm off: lettre writes the message and its
            // terminating `.` apart, and the second write would wait for the server's delayed
            // ACK (about 40 ms on Linux) before the final reply could come
            let stream = match tokio::time::timeout_at(
                by.handover,
                tokio::net::TcpStream::connect((host, port)),
            )
            .await
            {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    return Err(not_sent(
                        format!("the SMTP server {host}:{port} could not be reached: {e}"),
                        Cause::Unavailable,
                    ))
                }
                Err(_) => {
                    return Err(not_sent(
                        format!(
                            "the SMTP server {host}:{port} did not accept a connection in time"
                        ),
                        Cause::Unavailable,
                    ))
                }
            };
            let _ = stream.set_nodelay(true);
            step(
                by.handover,
                "with its greeting",
                AsyncSmtpConnection::connect_with_transport(Box::new(stream), &hello),
                unreachable,
            )
            .await?
        }
    };
    let result = conversation(&mut conn, config, tls, envelope, email, by, &hello).await;
    // a polite QUIT where the conversation is in order, by the reply deadline so a slow
    // goodbye never turns a sent message into a timed-out call; after a failed TLS handshake
    // (lettre's stream is gone) or a step that ran out of time, the socket is just closed
    match &result {
        Ok(_) => {
            let _ = tokio::time::timeout_at(by.reply, conn.quit()).await;
        }
        Err(Failure::NotSent {
            cause: Cause::Auth | Cause::Refused { .. },
            ..
        }) => {
            let _ = tokio::time::timeout_at(by.reply, conn.abort()).await;
        }
        Err(_) => {}
    }
    result
}

/// The conversation on a greeted connection: STARTTLS, AUTH, the envelope, the message.
async fn conversation(
    conn: &mut AsyncSmtpConnection,
    config: &MailConfig,
    tls: Option<&TlsParameters>,
    envelope: &Envelope,
    email: &[u8],
    by: Deadlines,
    hello: &ClientId,
) -> Result<String, Failure> {
    let host = config.smtp_host.as_str();
    let port = config.smtp_port.unwrap_or(config.tls.default_port());
    if let (Tls::Starttls, Some(params)) = (config.tls, tls) {
        if !conn.can_starttls() {
            return Err(not_sent(
                format!("the SMTP server {host}:{port} does not offer STARTTLS, which is required"),
                Cause::Tls,
            ));
        }
        step(
            by.handover,
            "STARTTLS and the TLS handshake",
            conn.starttls(params.clone(), hello),
            |e| {
                if e.is_permanent() || e.is_transient() {
                    not_sent(
                        format!("the SMTP server {host}:{port} refused STARTTLS: {e}"),
                        Cause::Tls,
                    )
                } else {
                    not_sent(
                        format!(
                            "the TLS handshake with {host}:{port} failed ({e}): the server's \
                             certificate is not trusted for {host} (the operator's [mail] \
                             ca_file and smtp_host must match the server's certificate)"
                        ),
                        Cause::Tls,
                    )
                }
            },
        )
        .await?;
    }
    if let Some((user, password)) = &config.credentials {
        let creds = Credentials::new(user.clone(), password.clone());
        step(
            by.handover,
            "AUTH",
            conn.auth(&[Mechanism::Plain, Mechanism::Login], &creds),
            |e| {
                not_sent(
                    format!("the SMTP server refused the configured credentials: {e}"),
                    Cause::Auth,
                )
            },
        )
        .await?;
    }
    // RFC 6531 and RFC 6152: SMTPUTF8 for an address with a non-ASCII local part (domains
    // come here in IDNA ASCII), 8BITMIME for a message that is not ASCII, each only when the
    // server offers it
    let info = conn.server_info();
    let mut options = Vec::new();
    let non_ascii = envelope
        .from()
        .into_iter()
        .chain(envelope.to())
        .any(|a| !AsRef::<str>::as_ref(a).is_ascii());
    if non_ascii {
        if !info.supports_feature(Extension::SmtpUtfEight) {
            return Err(not_sent(
                "the SMTP server does not accept an address whose part before the @ is not \
                 ASCII (it offers no SMTPUTF8, RFC 6531); nothing was sent: send to an ASCII \
                 address for that recipient (domains are sent in ASCII already)"
                    .into(),
                Cause::Refused { permanent: true },
            ));
        }
        options.push(MailParameter::SmtpUtfEight);
    }
    if !email.is_ascii() {
        if !info.supports_feature(Extension::EightBitMime) {
            return Err(not_sent(
                "the SMTP server does not accept 8-bit messages (no 8BITMIME)".into(),
                Cause::Refused { permanent: true },
            ));
        }
        options.push(MailParameter::Body(MailBodyParameter::EightBitMime));
    }
    step(
        by.handover,
        "MAIL FROM",
        conn.command(Mail::new(envelope.from().cloned(), options)),
        refused("the sender"),
    )
    .await?;
    for to in envelope.to() {
        step(
            by.handover,
            "RCPT TO",
            conn.command(Rcpt::new(to.clone(), vec![])),
            refused("a recipient"),
        )
        .await?;
    }
    step(by.handover, "DATA", conn.command(Data), refused("DATA")).await?;
    // handed over from here: the server may hold the message unless it answers no
    match tokio::time::timeout_at(by.reply, conn.message(email)).await {
        Ok(Ok(response)) => Ok(format!(
            "{} {}",
            response.code(),
            response.message().collect::<Vec<_>>().join(" ")
        )),
        Ok(Err(e)) if e.is_permanent() || e.is_transient() => Err(not_sent(
            format!("the SMTP server refused the message: {e}"),
            Cause::Refused {
                permanent: e.is_permanent(),
            },
        )),
        Ok(Err(e)) => Err(Failure::Unknown(format!(
            "the connection to the SMTP server failed while it had the message: {e}"
        ))),
        Err(_) => Err(Failure::Unknown(
            "the SMTP server did not give its final reply to the message in time".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_follow_the_key() {
        let a = message_id("K-1", "example.com");
        assert_eq!(a, message_id("K-1", "example.com"));
        assert_ne!(a, message_id("K-2", "example.com"));
        assert!(a.starts_with("<tg.") && a.len() == 4 + 32 + 13);
    }

    #[test]
    fn the_hand_over_comes_before_the_reply_before_the_budget_ends() {
        let d = Deadlines::within(Duration::from_secs(1));
        let end = Instant::now() + Duration::from_secs(1);
        assert!(d.handover < d.reply && d.reply < end);
        let d = Deadlines::within(Duration::ZERO);
        assert!(d.handover <= d.reply);
    }
}
