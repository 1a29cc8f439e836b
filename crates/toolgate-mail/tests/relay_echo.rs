//! A relay that quotes the credentials it was sent (a `535` naming what it refused, a final
//! reply quoting the session's `AUTH`): the configured password, in none of the forms it was
//! sent in, reaches the model's error, the result's `server_reply`, or the result the ledger
//! keeps and a replay returns.

use crate::support::setup::{kind_reason, setup};
use base64::Engine;
use serde_json::json;

const MARKER: &str = "[toolgate: the credential for 127.0.0.1]";

/// Every form of `password` (sent by `user`) a relay may quote.
fn forms(user: &str, password: &str) -> Vec<String> {
    let b64 = |t: String| base64::engine::general_purpose::STANDARD.encode(t);
    vec![
        password.to_string(),
        b64(format!("\0{user}\0{password}")),
        b64(password.to_string()),
    ]
}

fn assert_clean(shown: &str, user: &str, password: &str) {
    for form in forms(user, password) {
        assert!(!shown.contains(&form), "{form} leaked: {shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_refused_auth_quoted_by_the_relay_does_not_show_the_password() {
    for extra in [&[][..], &["--only-login"][..]] {
        let mut server_args = vec![
            "--user",
            "assistant",
            "--password",
            "right",
            "--echo-credentials",
        ];
        server_args.extend_from_slice(extra);
        let password = "Correct-Horse-PWCANARY-9";
        let Some(t) = setup(&server_args, |c| c.credentials("assistant", password)) else {
            return;
        };
        let s = t.session("s1");
        let args = json!({"to": ["ann@company.com"], "subject": "a", "body": "x"});
        let r = t.call_keyed(&s, "1", "K-1", args).await;
        assert_eq!(
            kind_reason(&r),
            ("tool_failed".into(), "smtp_auth_failed".into()),
            "{extra:?}"
        );
        let message = &r.error.as_ref().unwrap().message;
        // the relay's text is there, the password is not
        assert!(
            message.contains("bad credentials for") && message.contains(MARKER),
            "{extra:?}: {message}"
        );
        assert_clean(&serde_json::to_string(&r).unwrap(), "assistant", password);
        assert_eq!(t.server.messages().len(), 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_final_reply_quoting_the_auth_does_not_show_the_password_nor_does_its_replay() {
    let password = "Stapled-Battery-PWCANARY-7";
    let Some(t) = setup(
        &[
            "--user",
            "assistant",
            "--password",
            password,
            "--echo-credentials",
        ],
        |c| c.credentials("assistant", password),
    ) else {
        return;
    };
    let s = t.session("s1");
    let args = json!({"to": ["ann@company.com"], "subject": "a", "body": "x"});
    let first = t.call_keyed(&s, "1", "K-2", args.clone()).await;
    assert!(!first.is_error, "{first:?}");
    let reply = first.structured_content.as_ref().unwrap()["server_reply"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reply.starts_with("250 ") && reply.contains("auth was") && reply.contains(MARKER),
        "{reply}"
    );
    // the replay is the result the ledger recorded
    let again = t.call_keyed(&s, "2", "K-2", args).await;
    assert!(!again.is_error, "{again:?}");
    assert_eq!(
        again.structured_content.as_ref().unwrap()["server_reply"],
        reply.as_str()
    );
    assert_eq!(t.server.messages().len(), 1);
    for r in [&first, &again] {
        assert_clean(&serde_json::to_string(r).unwrap(), "assistant", password);
    }
}
