//! Sending through the pipeline to a real SMTP server: the whole flow, and the two-emails
//! failure (a final reply that never comes in time).

use crate::support::setup::{kind_reason, pdf_bytes, setup};
use base64::Engine as _;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn contacts_files_draft_validate_and_send_deliver_one_message_with_the_pdf() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let r = t
        .call(&s, "1", "search_contacts", json!({"query": "张总"}))
        .await;
    let contacts = &r.structured_content.as_ref().unwrap()["contacts"];
    assert_eq!(contacts[0]["name"], "张伟", "{r:?}");
    assert_eq!(contacts[0]["email"], "zhang.wei@example.cn");
    let id = contacts[0]["id"].as_str().unwrap().to_string();
    let file = t.report_handle(&s).await;
    let r = t
        .call(
            &s,
            "2",
            "generate_email_draft",
            json!({"to": [id], "subject": "Last week's progress",
                   "key_points": ["The analysis report is attached", "Tests start Monday"],
                   "tone": "formal", "language": "zh"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    let draft = r.structured_content.as_ref().unwrap();
    let text = draft["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("尊敬的张伟："), "{text}");
    let r = t
        .call(
            &s,
            "3",
            "validate_email_address",
            json!({"address": "zhang.wei@example.cn"}),
        )
        .await;
    // no rule allows sending to it: a send is put to a person (this flow's approver approves)
    assert_eq!(r.structured_content.as_ref().unwrap()["policy"], "ask");
    let r = t
        .call(
            &s,
            "4",
            "send_email",
            json!({"to": [id], "cc": ["ann@company.com"], "draft": draft["draft"],
                   "attachments": [file]}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    let out = r.structured_content.as_ref().unwrap();
    let messages = t.server.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    assert_eq!(
        m["rcpt_tos"],
        json!(["zhang.wei@example.cn", "ann@company.com"])
    );
    assert_eq!(m["mail_from"], "assistant@example.com");
    assert_eq!(m["subject"], "Last week's progress");
    assert_eq!(m["message_id"], out["message_id"]);
    assert_eq!(m["text"].as_str().unwrap().replace("\r\n", "\n"), text);
    assert!(m["html"]
        .as_str()
        .unwrap()
        .contains("<li>Tests start Monday</li>"));
    let attachments = m["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0]["filename"], "analysis-report.pdf");
    assert_eq!(attachments[0]["content_type"], "application/pdf");
    let sent = base64::engine::general_purpose::STANDARD
        .decode(attachments[0]["data_b64"].as_str().unwrap())
        .unwrap();
    assert_eq!(sent, pdf_bytes());
}

/// The server records the message, then holds its final reply past the call's timeout: the
/// call ends outcome_unknown, and neither the same key nor the same call sent again without
/// one (its derived key) sends a second copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_final_reply_past_the_timeout_is_outcome_unknown_and_never_sent_twice() {
    let Some(t) = setup(&["--stall", "4"], |c| c.timeout(Duration::from_secs(1))) else {
        return;
    };
    let s = t.session("s1");
    let args = json!({"to": ["ann@company.com"], "subject": "Invoice", "body": "Please pay."});
    let started = Instant::now();
    let first = t.call_keyed(&s, "1", "K-1", args.clone()).await;
    // the handler's own verdict, with the Message-ID to look for, before the call's timeout
    assert_eq!(
        kind_reason(&first),
        ("outcome_unknown".into(), "smtp_no_final_reply".into()),
        "{first:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    for (id, key) in [("2", "K-1"), ("3", "K-1")] {
        let again = t.call_keyed(&s, id, key, args.clone()).await;
        assert_eq!(kind_reason(&again).0, "outcome_unknown", "{again:?}");
    }
    // without a key: the derived key of this caller, tool and arguments
    let other = json!({"to": ["ann@company.com"], "subject": "Invoice 2", "body": "Please pay."});
    let first = t.call(&s, "4", "send_email", other.clone()).await;
    assert_eq!(kind_reason(&first).0, "outcome_unknown", "{first:?}");
    let again = t.call(&s, "5", "send_email", other).await;
    assert_eq!(kind_reason(&again).0, "outcome_unknown", "{again:?}");
    // the server finishes its replies; it holds one copy of each message
    tokio::time::sleep(Duration::from_secs(5)).await;
    let messages = t.server.messages();
    let subjects: Vec<&str> = messages
        .iter()
        .map(|m| m["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["Invoice", "Invoice 2"]);
    assert_eq!(
        messages[0]["message_id"],
        toolgate_mail::smtp::message_id("K-1", "example.com")
    );
}

/// A message the server accepts is recorded in the ledger: the same key sent again is a
/// replay of the first result, and the server holds one copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_sent_message_sent_again_with_its_key_is_a_replay() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let args = json!({"to": ["ann@company.com"], "subject": "Hello", "body": "Hi Ann"});
    let first = t.call_keyed(&s, "1", "K-9", args.clone()).await;
    assert!(!first.is_error, "{first:?}");
    let again = t.call_keyed(&s, "2", "K-9", args).await;
    assert!(again.replayed, "{again:?}");
    assert_eq!(again.structured_content, first.structured_content);
    assert_eq!(t.server.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_lone_carriage_return_in_the_body_never_reaches_the_server() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    // `\r.\r` ends the data for some servers: what follows would be commands of its own
    let body = "Hi Ann,\r.\rMAIL FROM:<assistant@example.com>\r\nRCPT TO:<x@rival.com>\r\n\
                DATA\r\nSubject: smuggled\r\n\r\nsecret\r\n.\r\nRSET";
    let r = t
        .call(
            &s,
            "1",
            "send_email",
            json!({"to": ["ann@company.com"], "subject": "Report", "body": body}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    let messages = t.server.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let m = &messages[0];
    assert_eq!(m["lone_cr"], 0, "{m}");
    assert_eq!(m["rcpt_tos"], json!(["ann@company.com"]));
    let text = m["text"].as_str().unwrap().replace("\r\n", "\n");
    assert_eq!(
        text.trim_end(),
        "Hi Ann,\n.\nMAIL FROM:<assistant@example.com>\nRCPT TO:<x@rival.com>\nDATA\n\
         Subject: smuggled\n\nsecret\n.\nRSET"
    );
}

/// A retry that spells a recipient's local part in other letters (`Ann@` for `ann@`, the
/// domain in capitals), with no key of its own, is the same message to the ledger: a replay,
/// never a second copy; and one mailbox written twice in a list is sent to once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_recipient_cased_otherwise_on_a_retry_is_a_replay_not_a_second_message() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let first = t
        .call(
            &s,
            "1",
            "send_email",
            json!({"to": ["ann@company.com", "Ann@Company.com"], "subject": "Hello",
                   "body": "Hi Ann"}),
        )
        .await;
    assert!(!first.is_error, "{first:?}");
    let again = t
        .call(
            &s,
            "2",
            "send_email",
            json!({"to": ["ANN@COMPANY.COM"], "subject": "Hello", "body": "Hi Ann"}),
        )
        .await;
    assert!(again.replayed, "{again:?}");
    let messages = t.server.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["rcpt_tos"], json!(["ann@company.com"]));
}
