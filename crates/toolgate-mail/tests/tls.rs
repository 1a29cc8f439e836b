//! STARTTLS (RFC 3207) and implicit TLS (RFC 8314) against a real SMTP server (aiosmtpd) on
//! 127.0.0.1 whose certificate a private CA made at test time (trustme) signed; the CA is
//! trusted through `ca_file`, as an operator with an internal relay would. A certificate
//! from another CA, one for another host, the public roots alone, and a server that does not
//! offer STARTTLS all fail closed: `smtp_tls_failed`, nothing sent, the key free.

use crate::support::setup::{kind_reason, setup_with};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_mail::Tls;

fn message() -> serde_json::Value {
    json!({"to": ["ann@company.com"], "subject": "Over TLS", "body": "Hello over TLS"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn starttls_and_implicit_tls_with_the_operators_ca_deliver_encrypted() {
    for (mode, tls) in [("starttls", Tls::Starttls), ("tls", Tls::Tls)] {
        let Some(t) = setup_with(&["--tls", mode], |c, server| {
            c.tls(tls).ca_file(server.file("ca.pem"))
        }) else {
            return;
        };
        let s = t.session("s1");
        let r = t.call_keyed(&s, "1", "K-tls", message()).await;
        assert!(!r.is_error, "{mode}: {r:?}");
        let messages = t.server.messages();
        assert_eq!(messages.len(), 1, "{mode}: {messages:?}");
        assert_eq!(messages[0]["tls"], true, "{mode}: sent in the clear");
        assert_eq!(messages[0]["subject"], "Over TLS");
        assert_eq!(
            messages[0]["text"].as_str().unwrap().trim_end(),
            "Hello over TLS"
        );
    }
}

/// Each wrong trust setting refuses the server's certificate: no message, a clear error
/// naming the operator's settings, and the same key sent again runs again (not a replay, not
/// outcome_unknown): the failure freed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_certificate_not_trusted_or_not_for_the_host_fails_closed_and_sends_nothing() {
    type Edit = fn(
        toolgate_mail::MailConfig,
        &crate::support::smtp::SmtpServer,
    ) -> toolgate_mail::MailConfig;
    let cases: [(&str, &[&str], Edit); 5] = [
        ("another CA", &["--tls", "starttls"], |c, s| {
            c.tls(Tls::Starttls).ca_file(s.file("other-ca.pem"))
        }),
        ("the public roots", &["--tls", "starttls"], |c, _| {
            c.tls(Tls::Starttls)
        }),
        (
            "a certificate for another host",
            &["--tls", "starttls", "--cert-host", "mail.example.com"],
            |c, s| c.tls(Tls::Starttls).ca_file(s.file("ca.pem")),
        ),
        ("implicit TLS, another CA", &["--tls", "tls"], |c, s| {
            c.tls(Tls::Tls).ca_file(s.file("other-ca.pem"))
        }),
        ("a server without STARTTLS", &[], |c, _| {
            c.tls(Tls::Starttls)
        }),
    ];
    for (case, server_args, edit) in cases {
        let Some(t) = setup_with(server_args, edit) else {
            return;
        };
        let s = t.session("s1");
        let r = t.call_keyed(&s, "1", "K-bad-tls", message()).await;
        assert_eq!(
            kind_reason(&r),
            ("tool_failed".into(), "smtp_tls_failed".into()),
            "{case}: {r:?}"
        );
        let e = r.error.as_ref().unwrap();
        assert!(
            e.message.contains("nothing was sent"),
            "{case}: {}",
            e.message
        );
        if case != "a server without STARTTLS" {
            assert!(e.message.contains("ca_file"), "{case}: {}", e.message);
        }
        let again = t.call_keyed(&s, "2", "K-bad-tls", message()).await;
        assert!(!again.replayed, "{case}: {again:?}");
        assert_eq!(kind_reason(&again).1, "smtp_tls_failed", "{case}");
        assert_eq!(t.server.messages().len(), 0, "{case}");
    }
}

/// A CA file that cannot be read or holds no certificate stops the toolset's setup with an
/// error naming the file.
#[test]
fn a_ca_file_that_is_missing_or_not_pem_is_refused_at_setup() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "this is not a certificate\n").unwrap();
    let broken = dir.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    for (path, says) in [
        (dir.path().join("missing.pem"), "cannot be read"),
        (not_pem, "holds no PEM certificate"),
        (broken, "is not PEM"),
    ] {
        let config = toolgate_mail::MailConfig::new("127.0.0.1", "a@example.com")
            .tls(Tls::Starttls)
            .ca_file(&path);
        let Err(e) = toolgate_mail::tools(config) else {
            panic!("{} was accepted", path.display())
        };
        let e = e.to_string();
        assert!(
            e.contains(says) && e.contains(&path.display().to_string()),
            "{e}"
        );
    }
}
