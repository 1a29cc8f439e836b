//! One message over SMTP (RFC 5321) through lettre's connection, step by step, so a failure
//! says whether the server may hold the message.
//!
//! The sequence: connect (TLS from the first byte when configured), `EHLO`, `STARTTLS` when
//! configured (required: a server that does not offer it is refused), `AUTH` when credentials
//! are configured, then `MAIL FROM`, `RCPT TO` for each recipient, `DATA` and the message.
//! Every failure up to the message's final reply, and a negative final reply, leaves nothing
//! with the server ([`Failure::NotSent`]); a connection lost or a reply that never came after
//! the message was handed over leaves the server maybe holding it ([`Failure::Unknown`]).

use crate::{MailConfig, Tls};
use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Why a message was not (surely) sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server has nothing: it could not be reached, refused the TLS upgrade or the
    /// credentials (`auth` true), or answered no to the sender, a recipient or the message.
    NotSent {
        /// What happened, for the model and the operator.
        message: String,
        /// The server refused the credentials.
        auth: bool,
        /// The server refused a recipient or the message with a permanent (5xx) reply:
        /// sending the same again will fail the same way.
        permanent: bool,
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

fn not_sent(message: String, auth: bool, permanent: bool) -> Failure {
    Failure::NotSent {
        message,
        auth,
        permanent,
    }
}

/// Sends `email` (the formatted message) to the envelope's recipients, every network step
/// bounded by `timeout`.
///
/// # Errors
/// See [`Failure`].
pub async fn send(
    config: &MailConfig,
    envelope: &Envelope,
    email: &[u8],
    timeout: Duration,
) -> Result<String, Failure> {
    let host = config.smtp_host.as_str();
    let port = config.smtp_port.unwrap_or(config.tls.default_port());
    let hello = ClientId::default();
    let params = || {
        TlsParameters::new(host.to_string()).map_err(|e| {
            not_sent(
                format!("the TLS settings for {host} are refused: {e}"),
                false,
                false,
            )
        })
    };
    let unreachable = |e: String| {
        not_sent(
            format!("the SMTP server {host}:{port} could not be reached: {e}"),
            false,
            false,
        )
    };
    let mut conn = match config.tls {
        Tls::Tls => AsyncSmtpConnection::connect_tokio1(
            (host, port),
            Some(timeout),
            &hello,
            Some(params()?),
            None,
        )
        .await
        .map_err(|e| unreachable(e.to_string()))?,
        Tls::None | Tls::Starttls => {
            // our own socket, with Nagle's algorithm off: lettre writes the message and its
            // terminating `.` apart, and the second write would wait for the server's delayed
            // ACK (about 40 ms on Linux) before the final reply could come
            let greeted = async {
                let stream = tokio::net::TcpStream::connect((host, port))
                    .await
                    .map_err(|e| unreachable(e.to_string()))?;
                let _ = stream.set_nodelay(true);
                AsyncSmtpConnection::connect_with_transport(Box::new(stream), &hello)
                    .await
                    .map_err(|e| unreachable(e.to_string()))
            };
            tokio::time::timeout(timeout, greeted)
                .await
                .map_err(|_| unreachable(format!("no greeting within {timeout:?}")))??
        }
    };
    if config.tls == Tls::Starttls {
        if !conn.can_starttls() {
            conn.abort().await;
            return Err(not_sent(
                format!("the SMTP server {host}:{port} does not offer STARTTLS, which is required"),
                false,
                false,
            ));
        }
        conn.starttls(params()?, &hello).await.map_err(|e| {
            not_sent(
                format!("the TLS upgrade with {host}:{port} failed: {e}"),
                false,
                false,
            )
        })?;
    }
    if let Some((user, password)) = &config.credentials {
        let creds = Credentials::new(user.clone(), password.clone());
        if let Err(e) = conn
            .auth(&[Mechanism::Plain, Mechanism::Login], &creds)
            .await
        {
            conn.abort().await;
            return Err(not_sent(
                format!("the SMTP server refused the configured credentials: {e}"),
                true,
                true,
            ));
        }
    }
    match conn.send(envelope, email).await {
        Ok(response) => {
            let _ = conn.quit().await;
            Ok(format!(
                "{} {}",
                response.code(),
                response.message().collect::<Vec<_>>().join(" ")
            ))
        }
        Err(e) if e.is_permanent() || e.is_transient() => {
            conn.abort().await;
            Err(not_sent(
                format!("the SMTP server refused the message: {e}"),
                false,
                e.is_permanent(),
            ))
        }
        Err(e) => Err(Failure::Unknown(format!(
            "the connection to the SMTP server failed while it had the message: {e}"
        ))),
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
        assert!(a.starts_with("<tg.") && a.ends_with("@example.com>") && a.len() == 4 + 32 + 13);
    }
}
