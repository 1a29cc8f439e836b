//! `[mail]`: each bad setting a located problem; a good one loads.

use super::support::load;
use toolgate_test_support::TempWorkspace;

fn problems(ws: &TempWorkspace, text: &str) -> Vec<String> {
    load(ws, text)
        .expect_err("the configuration should be refused")
        .iter()
        .map(|p| {
            let shown = p.to_string();
            shown
                .strip_prefix(&format!("{}:", p.file.display()))
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn bad_mail_settings_are_located() {
    let ws = TempWorkspace::new();
    std::fs::write(ws.root().join("contacts.csv"), "name,email\n").unwrap();
    let head = "[mail]\nsmtp_host = \"smtp.example.com\"\nfrom = \"a@example.com\"\n";
    for (rest, at, says) in [
        ("tls = \"none\"\n", "4:7: mail.tls:", "allowed only for a loopback host"),
        (
            "username_env = \"TOOLGATE_TEST_NO_SUCH_VAR\"\npassword_env = \"TOOLGATE_TEST_NO_SUCH_VAR2\"\n",
            "4:16: mail.username_env:",
            "TOOLGATE_TEST_NO_SUCH_VAR is not set",
        ),
        ("contacts = \"missing.csv\"\n", "4:12: mail.contacts:", "cannot be read"),
        (
            "contacts = [\"missing.csv\"]\n",
            "4:13: mail.contacts[0]:",
            "\"missing.csv\" cannot be read",
        ),
        ("timeout = \"soon\"\n", "4:11: mail.timeout:", "not a span"),
        ("timeout = \"1h\"\n", "4:11: mail.timeout:", "from 1s to 10m"),
        ("max_message_bytes = 10\n", "4:21: mail.max_message_bytes:", "1024 to"),
        ("ca_file = \"missing.pem\"\n", "4:11: mail.ca_file:", "cannot be read"),
        ("ca_file = \"contacts.csv\"\n", "4:11: mail.ca_file:", "holds no PEM certificate"),
        ("smtp_prot = 25\n", "4:1", "unknown field `smtp_prot`"),
    ] {
        let p = problems(&ws, &format!("{head}{rest}"));
        let both = p.iter().filter(|l| !l.contains("mail.password_env:")).collect::<Vec<_>>();
        assert_eq!(both.len(), 1, "{rest}: {p:#?}");
        assert!(both[0].starts_with(at) && both[0].contains(says), "{rest}: {p:#?}");
    }
    let p = problems(&ws, "[mail]\nsmtp_host = \"h\"\nfrom = \"nobody\"\n");
    assert!(p[0].starts_with("3:8: mail.from:"), "{p:#?}");
    let p = problems(&ws, "[mail]\nfrom = \"a@example.com\"\n");
    assert!(p[0].contains("smtp_host"), "{p:#?}");
}

#[test]
fn a_loopback_server_without_tls_and_a_readable_book_load() {
    let ws = TempWorkspace::new();
    std::fs::write(
        ws.root().join("contacts.csv"),
        "name,email,organization,aliases\n",
    )
    .unwrap();
    let c = load(
        &ws,
        "[mail]\nsmtp_host = \"127.0.0.1\"\nsmtp_port = 8025\ntls = \"none\"\n\
         from = \"Assistant <assistant@example.com>\"\ncontacts = \"contacts.csv\"\n\
         timeout = \"20s\"\n",
    )
    .unwrap();
    assert_eq!(c.mail().unwrap().smtp_port, Some(8025));
    assert_eq!(
        c.mail_contacts(&ws.root()),
        [ws.root().join("contacts.csv")]
    );
    assert!(toolgate_config::mail::is_loopback("localhost"));
    assert!(toolgate_config::mail::is_loopback("[::1]"));
    assert!(!toolgate_config::mail::is_loopback("10.0.0.1"));
}
