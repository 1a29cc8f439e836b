//! [`Scrubber`]: the configured SMTP password kept out of what a relay sends back.
//!
//! A relay may quote what it was sent: a `535` naming the credentials it refused ("bad
//! credentials for [AHVzZXIAcGFzcw==]"), a final reply to the message quoting the session's
//! `AUTH`. Whatever it says reaches the model (in `smtp_auth_failed` and the other errors, and
//! in `send_email`'s `server_reply`) and the ledger, which keeps the result for replays. So
//! every reply text and error of a send ([`crate::smtp::send`]) goes through
//! [`Scrubber::outcome`] before a result or an error is made of it, and each form of the
//! password is replaced by `[toolgate: the credential for HOST]`:
//!
//! - the password as configured;
//! - `AUTH PLAIN`'s base64 of `\0user\0password`, and of `user\0password` (an authorization
//!   identity left out);
//! - `AUTH LOGIN`'s base64 of the password;
//!
//! each base64 form with its padding or without, every form in any ASCII case (a relay
//! upper-casing what it quotes). A decoded `AUTH PLAIN` (`user password`, NULs shown as
//! blanks) holds the password, so it is replaced there. Like the HTTP tools' scrubber, a
//! password encoded otherwise (split, reversed, base64 at another offset) is not recognised.

use crate::smtp::Failure;
use crate::MailConfig;
use base64::Engine;
use std::borrow::Cow;

/// The forms of one configured password, each replaced by the marker; see the module docs.
pub(crate) struct Scrubber {
    /// ASCII lower case, longest first.
    forms: Vec<String>,
    marker: String,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrubber")
            .field("forms", &self.forms.len())
            .finish()
    }
}

impl Scrubber {
    /// The forms of `config`'s password (none without credentials, or with an empty one).
    pub(crate) fn new(config: &MailConfig) -> Scrubber {
        let marker = format!("[toolgate: the credential for {}]", config.smtp_host);
        let Some((user, password)) = config.credentials.as_ref().filter(|(_, p)| !p.is_empty())
        else {
            return Scrubber {
                forms: Vec::new(),
                marker,
            };
        };
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut forms = vec![password.clone()];
        for sent in [
            format!("\0{user}\0{password}"),
            format!("{user}\0{password}"),
            password.clone(),
        ] {
            let padded = b64.encode(sent);
            forms.push(padded.trim_end_matches('=').to_string());
            forms.push(padded);
        }
        let mut forms: Vec<String> = forms.iter().map(|f| f.to_ascii_lowercase()).collect();
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        Scrubber { forms, marker }
    }

    /// `text` with every form replaced by the marker (overlapping ones joined).
    pub(crate) fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.forms.is_empty() {
            return Cow::Borrowed(text);
        }
        // ASCII lower case keeps every byte where it was, so offsets are the original's
        let compared = text.to_ascii_lowercase();
        let mut found: Vec<(usize, usize)> = self
            .forms
            .iter()
            .flat_map(|form| {
                compared
                    .match_indices(form.as_str())
                    .map(|(at, f)| (at, at + f.len()))
                    .collect::<Vec<_>>()
            })
            .collect();
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        found.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (start, end) in found {
            if end <= copied {
                continue;
            }
            if start >= copied {
                out.push_str(&text[copied..start]);
                out.push_str(&self.marker);
            }
            copied = end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// The outcome of a send with every text in it scrubbed: the server's final reply, or
    /// the failure's message.
    pub(crate) fn outcome(&self, outcome: Result<String, Failure>) -> Result<String, Failure> {
        let clean = |s: String| match self.scrub(&s) {
            Cow::Owned(clean) => clean,
            Cow::Borrowed(_) => s,
        };
        match outcome {
            Ok(reply) => Ok(clean(reply)),
            Err(Failure::NotSent { message, cause }) => Err(Failure::NotSent {
                message: clean(message),
                cause,
            }),
            Err(Failure::Unknown(message)) => Err(Failure::Unknown(clean(message))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smtp::Cause;
    use pretty_assertions::assert_eq;

    fn scrubber(user: &str, password: &str) -> Scrubber {
        Scrubber::new(&MailConfig::new("relay.test", "a@example.com").credentials(user, password))
    }

    /// Each way a relay quotes the password it was sent loses it; the rest of the reply stays.
    #[test]
    fn every_form_of_the_password_a_relay_sends_back_is_replaced() {
        let s = scrubber("agent", "Correct-Horse-PWCANARY-9");
        let m = "[toolgate: the credential for relay.test]";
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let plain = b64("\0agent\0Correct-Horse-PWCANARY-9");
        let table: Vec<(String, String)> = vec![
            (
                "535 5.7.8 bad credentials for [AGFnZW50AENvcnJlY3QtSG9yc2UtUFdDQU5BUlktOQ==] \
                 decoded [ agent Correct-Horse-PWCANARY-9]"
                    .into(),
                format!("535 5.7.8 bad credentials for [{m}] decoded [ agent {m}]"),
            ),
            (
                "250 queued; auth was [ agent Correct-Horse-PWCANARY-9]".into(),
                format!("250 queued; auth was [ agent {m}]"),
            ),
            // padding dropped, no authorization identity, LOGIN's password alone, upper case
            (
                format!("535 [{}]", plain.trim_end_matches('=')),
                format!("535 [{m}]"),
            ),
            (
                format!("535 {}", b64("agent\0Correct-Horse-PWCANARY-9")),
                format!("535 {m}"),
            ),
            (
                format!("535 login {}", b64("Correct-Horse-PWCANARY-9")),
                format!("535 login {m}"),
            ),
            ("535 CORRECT-HORSE-PWCANARY-9".into(), format!("535 {m}")),
            // what holds none of them is left as it is; the user name is no secret
            (
                "250 2.0.0 Ok: queued as 4F2A for agent".into(),
                "250 2.0.0 Ok: queued as 4F2A for agent".into(),
            ),
        ];
        for (reply, want) in table {
            assert_eq!(s.scrub(&reply), want, "{reply}");
        }
        assert!(matches!(s.scrub("250 ok"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_text_of_an_outcome_is_scrubbed_and_nothing_without_credentials() {
        let s = scrubber("u", "pw-7f3a");
        let m = "[toolgate: the credential for relay.test]";
        assert_eq!(s.outcome(Ok("250 pw-7f3a".into())), Ok(format!("250 {m}")));
        assert_eq!(
            s.outcome(Err(Failure::NotSent {
                message: "refused pw-7f3a".into(),
                cause: Cause::Auth
            })),
            Err(Failure::NotSent {
                message: format!("refused {m}"),
                cause: Cause::Auth
            })
        );
        assert_eq!(
            s.outcome(Err(Failure::Unknown("lost pw-7f3a".into()))),
            Err(Failure::Unknown(format!("lost {m}")))
        );
        let none = Scrubber::new(&MailConfig::new("relay.test", "a@example.com"));
        assert_eq!(none.scrub("250 pw-7f3a"), "250 pw-7f3a");
        assert_eq!(scrubber("u", "").scrub("250 ok"), "250 ok");
    }
}
