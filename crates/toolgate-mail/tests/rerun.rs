//! The flow run again: search_files and generate_email_draft hand out new handles on every
//! call, yet send_email's derived key follows what is sent (recipients, subject, the draft's
//! text, each attachment's content), so the same message sent again through new handles is a
//! replay, or `unsettled` after an unknown outcome, and never a second copy; another body is
//! another message.

use crate::support::setup::{kind_reason, setup, Setup};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use toolgate_core::{Session, ToolResult};

/// One round of the flow: find the report, draft with `points`, send the draft with the
/// report attached, without an idempotency key.
async fn round(t: &Setup, s: &Session, n: u32, points: &[&str]) -> ToolResult {
    let file = t.report_handle(s).await;
    let draft = t
        .call(
            s,
            &format!("draft-{n}"),
            "generate_email_draft",
            json!({"to": ["ann@company.com"], "subject": "Analysis report",
                   "key_points": points, "language": "en"}),
        )
        .await;
    assert!(!draft.is_error, "{draft:?}");
    let draft = draft.structured_content.as_ref().unwrap()["draft"].clone();
    let send: Value = json!({"to": ["ann@company.com"], "draft": draft, "attachments": [file]});
    t.call(s, &format!("send-{n}"), "send_email", send).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn the_flow_run_again_after_an_unknown_outcome_is_unsettled_not_a_second_copy() {
    let Some(t) = setup(&["--stall", "4"], |c| c.timeout(Duration::from_secs(1))) else {
        return;
    };
    let s = t.session("s1");
    let started = Instant::now();
    let first = round(&t, &s, 1, &["The report is attached"]).await;
    assert_eq!(
        kind_reason(&first),
        ("outcome_unknown".into(), "smtp_no_final_reply".into()),
        "{first:?}"
    );
    // new handles for the same draft and file: the same message, so the same derived key
    let second = round(&t, &s, 2, &["The report is attached"]).await;
    assert_eq!(
        kind_reason(&second),
        ("outcome_unknown".into(), "unsettled".into()),
        "{second:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(t.server.messages().len(), 1, "{:?}", t.server.messages());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn the_flow_run_again_after_a_send_is_a_replay_and_another_body_is_sent() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let first = round(&t, &s, 1, &["The report is attached"]).await;
    assert!(!first.is_error, "{first:?}");
    let second = round(&t, &s, 2, &["The report is attached"]).await;
    assert!(second.replayed, "{second:?}");
    assert_eq!(second.structured_content, first.structured_content);
    assert_eq!(t.server.messages().len(), 1);
    // a genuinely different message: another body
    let third = round(&t, &s, 3, &["The report is attached", "One more point"]).await;
    assert!(!third.is_error && !third.replayed, "{third:?}");
    assert_ne!(
        third.structured_content.as_ref().unwrap()["message_id"],
        first.structured_content.as_ref().unwrap()["message_id"]
    );
    let messages = t.server.messages();
    assert_eq!(messages.len(), 2);
    assert!(messages[1]["text"]
        .as_str()
        .unwrap()
        .contains("One more point"));
    // the same body with `body` instead of a draft, and another attachment's content, are
    // other messages too: the report rewritten is found anew and sent
    std::fs::write(
        t.dir.path().join("reports/analysis-report.pdf"),
        b"%PDF-1.4 v2",
    )
    .unwrap();
    let fourth = round(&t, &s, 4, &["The report is attached"]).await;
    assert!(!fourth.is_error && !fourth.replayed, "{fourth:?}");
    assert_eq!(t.server.messages().len(), 3);
}
