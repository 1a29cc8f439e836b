//! What a user found getting through: each is now refused by the guard (before the policy or
//! a person is asked) and nothing is sent, saying what to send instead; and internationalized domains go out in IDNA ASCII, so a
//! server without SMTPUTF8 takes an ASCII local part.

use crate::support::setup::{kind_reason, setup, Setup};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use toolgate_core::{Session, ToolResult};

fn message(r: &ToolResult) -> &str {
    &r.error.as_ref().unwrap().message
}

async fn draft(t: &Setup, s: &Session, id: &str, to: &str) -> Value {
    let r = t
        .call(
            s,
            id,
            "generate_email_draft",
            json!({"to": [to], "subject": "Report", "key_points": ["Attached"],
                   "tone": "formal"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    r.structured_content.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn what_cannot_be_sent_is_refused_saying_what_to_send_instead() {
    let Some(t) = setup(&[], |c| c.max_message_bytes(2000)) else {
        return;
    };
    let s = t.session("s1");
    // a quoted local part: validation and sending agree
    let r = t
        .call(
            &s,
            "v1",
            "validate_email_address",
            json!({"address": "\"a b\"@example.com"}),
        )
        .await;
    let v = r.structured_content.as_ref().unwrap();
    assert_eq!(v["valid"], false, "{v}");
    assert!(
        v["problem"].as_str().unwrap().contains("quoted local part"),
        "{v}"
    );
    assert!(
        v["suggestion"]
            .as_str()
            .unwrap()
            .contains("without the quotes"),
        "{v}"
    );
    let r = t
        .call(
            &s,
            "s1",
            "send_email",
            json!({"to": ["\"a b\"@example.com"], "subject": "Hi", "body": "x"}),
        )
        .await;
    assert_eq!(
        kind_reason(&r),
        ("invalid_input".into(), "invalid_address".into())
    );
    assert!(message(&r).contains("without the quotes"), "{r:?}");

    // a raw encoded word in a subject, in a draft or a send
    let subject = "=?utf-8?q?Hi=0D=0ABcc:_x@y?=";
    let r = t
        .call(
            &s,
            "s2",
            "send_email",
            json!({"to": ["ann@company.com"], "subject": subject, "body": "x"}),
        )
        .await;
    assert_eq!(kind_reason(&r).1, "header_injection");
    assert!(message(&r).contains("plain text"), "{r:?}");
    let r = t
        .call(
            &s,
            "d1",
            "generate_email_draft",
            json!({"to": ["ann@company.com"], "subject": subject, "key_points": ["x"]}),
        )
        .await;
    assert_eq!(kind_reason(&r).1, "header_injection");

    // a Unicode line separator is a line break; a bidirectional override reorders the text
    for (i, (subject, says)) in [
        ("Hi\u{2028}Bcc: all@company.com", "line break"),
        ("Invoice \u{202e}gnimoc", "U+202E"),
        ("Invoice \u{2067}x", "U+2067"),
    ]
    .into_iter()
    .enumerate()
    {
        for (tool, rest) in [
            ("send_email", json!({"body": "x"})),
            ("generate_email_draft", json!({"key_points": ["x"]})),
        ] {
            let mut args = json!({"to": ["ann@company.com"], "subject": subject});
            args.as_object_mut()
                .unwrap()
                .extend(rest.as_object().unwrap().clone());
            let r = t.call(&s, &format!("u{i}-{tool}"), tool, args).await;
            assert_eq!(kind_reason(&r).1, "header_injection", "{subject:?} {r:?}");
            assert!(message(&r).contains(says), "{r:?}");
        }
    }
    // an attachment whose name an override makes read as a PDF (`invoiceexe.pdf`)
    std::fs::write(t.dir.path().join("reports/invoice\u{202e}fdp.exe"), "MZ").unwrap();
    let r = t
        .call(&s, "rtlo-find", "search_files", json!({"query": "invoice"}))
        .await;
    let files = &r.structured_content.as_ref().unwrap()["files"];
    assert_eq!(files.as_array().unwrap().len(), 1, "{r:?}");
    let r = t
        .call(
            &s,
            "rtlo-send",
            "send_email",
            json!({"to": ["ann@company.com"], "subject": "Invoice", "body": "x",
                   "attachments": [files[0]["handle"]]}),
        )
        .await;
    assert_eq!(kind_reason(&r).1, "header_injection", "{r:?}");
    assert!(
        message(&r).contains("U+202E") && message(&r).contains("rename"),
        "{r:?}"
    );
    assert!(!message(&r).contains('\u{202e}'), "{r:?}");
    // right-to-left text needs no override and is sent
    let r = t
        .call(
            &s,
            "rtl",
            "send_email",
            json!({"to": ["ann@company.com"], "subject": "\u{200f}שלום report", "body": "x"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(t.server.messages().len(), 1);

    // a body over the cap by itself says so, and by how much
    let body = "x".repeat(2500);
    let r = t
        .call(
            &s,
            "s3",
            "send_email",
            json!({"to": ["ann@company.com"], "subject": "Long", "body": body}),
        )
        .await;
    assert_eq!(
        kind_reason(&r),
        ("unsafe_input".into(), "limit_exceeded".into())
    );
    assert!(
        message(&r).contains("the body is 2500 bytes")
            && message(&r).contains("by 500 bytes")
            && message(&r).contains("shorten the body")
            && !message(&r).contains("attach fewer"),
        "{r:?}"
    );

    // an unknown kind of file
    let r = t
        .call(
            &s,
            "f1",
            "search_files",
            json!({"query": "", "kind": "???"}),
        )
        .await;
    assert_eq!(
        kind_reason(&r),
        ("invalid_input".into(), "invalid_kind".into())
    );
    assert!(
        message(&r).contains("\"pdf\"") && message(&r).contains("image"),
        "{r:?}"
    );

    // a draft written for Ann, sent to Zhang: it would greet Ann
    let d = draft(&t, &s, "d2", "ann@company.com").await;
    assert!(
        d["text"].as_str().unwrap().starts_with("Dear Ann Lee,"),
        "{d}"
    );
    let r = t
        .call(
            &s,
            "s4",
            "send_email",
            json!({"to": ["zhang.wei@example.cn"], "draft": d["draft"]}),
        )
        .await;
    assert_eq!(
        kind_reason(&r),
        ("invalid_input".into(), "draft_recipients".into())
    );
    assert!(
        message(&r).contains("ann@company.com")
            && message(&r).contains("call generate_email_draft"),
        "{r:?}"
    );
    // to the recipient it was written for, with someone in copy: sent
    let r = t
        .call(
            &s,
            "s5",
            "send_email",
            json!({"to": ["ann@company.com"], "cc": ["zhang.wei@example.cn"],
                   "draft": d["draft"]}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    // with the right-to-left subject above: the only two sent
    assert_eq!(t.server.messages().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn an_idn_domain_goes_out_in_ascii_to_a_server_without_smtputf8() {
    let Some(t) = setup(&["--no-smtputf8"], |c| c) else {
        return;
    };
    let s = t.session("s1");
    let r = t
        .call(
            &s,
            "v1",
            "validate_email_address",
            json!({"address": "a@例子.广告"}),
        )
        .await;
    let v = r.structured_content.as_ref().unwrap();
    assert_eq!(v["normalized"], "a@xn--fsqu00a.xn--4rr70v", "{v}");
    let r = t
        .call(
            &s,
            "1",
            "send_email",
            json!({"to": ["a@例子.广告"], "subject": "Hello", "body": "Hi"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    let m = t.server.messages();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["rcpt_tos"], json!(["a@xn--fsqu00a.xn--4rr70v"]));
    // a non-ASCII local part needs SMTPUTF8: refused, saying so, nothing sent
    let r = t
        .call(
            &s,
            "2",
            "send_email",
            json!({"to": ["张伟@例子.中国"], "subject": "Hello", "body": "Hi"}),
        )
        .await;
    assert_eq!(kind_reason(&r).1, "smtp_refused", "{r:?}");
    assert!(message(&r).contains("SMTPUTF8"), "{r:?}");
    assert_eq!(t.server.messages().len(), 1);
}
