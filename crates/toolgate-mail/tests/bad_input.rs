//! Bad input to the mail tools: each a clear error the model can act on, and nothing sent.

use crate::support::setup::{kind_reason, setup, Setup};
use serde_json::{json, Value};

async fn refused(t: &Setup, s: &toolgate_core::Session, id: &str, args: Value) -> (String, String) {
    let r = t.call(s, id, "send_email", args).await;
    let kr = kind_reason(&r);
    let message = &r.error.as_ref().unwrap().message;
    assert!(
        !message.is_empty() && !message.contains("panicked"),
        "{r:?}"
    );
    kr
}

fn args(to: &[&str], attachments: Vec<String>) -> Value {
    json!({"to": to, "subject": "Report", "body": "See attached.", "attachments": attachments})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn bad_recipients_handles_and_headers_are_refused_before_anything_is_sent() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let handle = t.report_handle(&s).await;
    let ok = ["ann@company.com"];
    let cases: Vec<(Value, (&str, &str))> = vec![
        (
            args(&["ann@localhost"], vec![]),
            ("invalid_input", "invalid_address"),
        ),
        (
            args(&["Ann <ann@company.com>"], vec![]),
            ("invalid_input", "invalid_address"),
        ),
        (
            args(&["contact_0123456789abcdef"], vec![]),
            ("invalid_input", "unknown_contact"),
        ),
        (
            args(&ok, vec!["reports/analysis-report.pdf".into()]),
            ("invalid_input", "not_a_handle"),
        ),
        (
            args(&ok, vec!["../../etc/passwd".into()]),
            ("invalid_input", "not_a_handle"),
        ),
        (
            args(&ok, vec!["file_0123456789abcdef".into()]),
            ("invalid_input", "unknown_handle"),
        ),
        (
            args(&["someone@rival.com"], vec![]),
            ("permission_denied", "rules[1]"),
        ),
        (
            args(&["ann@company.com", "SOMEONE@Rival.COM"], vec![]),
            ("permission_denied", "rules[1]"),
        ),
        (
            json!({"to": ok, "subject": "Hi\r\nBcc: all@company.com", "body": "x"}),
            ("invalid_input", "header_injection"),
        ),
        (
            json!({"to": ok, "subject": "Hi"}),
            ("invalid_input", "body_or_draft"),
        ),
        (
            json!({"to": ok, "body": "x"}),
            ("invalid_input", "missing_subject"),
        ),
        (
            json!({"to": ok, "subject": "Hi", "draft": "draft_0123456789abcdef"}),
            ("invalid_input", "unknown_handle"),
        ),
    ];
    for (i, (a, (kind, reason))) in cases.into_iter().enumerate() {
        let (k, r) = refused(&t, &s, &format!("c{i}"), a.clone()).await;
        assert_eq!((k.as_str(), r.as_str()), (kind, reason), "{a}");
    }
    // another session's handle
    let s2 = t.session("s2");
    assert_eq!(
        refused(&t, &s2, "x1", args(&ok, vec![handle.clone()]))
            .await
            .1,
        "foreign_handle"
    );
    // the file denied by a path rule is never listed, so it has no handle
    let r = t
        .call(&s, "x2", "search_files", json!({"query": "secret"}))
        .await;
    assert_eq!(r.structured_content.as_ref().unwrap()["files"], json!([]));
    // a link in the workspace to a file outside it is never listed either
    std::os::unix::fs::symlink("/etc/hostname", t.dir.path().join("reports/outside.pdf")).unwrap();
    let r = t
        .call(&s, "x3", "search_files", json!({"query": "outside"}))
        .await;
    assert_eq!(r.structured_content.as_ref().unwrap()["files"], json!([]));
    // a handle whose file was replaced since (here by a link out of the workspace) is stale
    let path = t.dir.path().join("reports/analysis-report.pdf");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
    assert_eq!(
        refused(&t, &s, "x4", args(&ok, vec![handle])).await.1,
        "stale_handle"
    );
    assert_eq!(t.server.messages().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn an_attachment_over_the_cap_is_refused() {
    let Some(t) = setup(&[], |c| c.max_message_bytes(2000)) else {
        return;
    };
    let s = t.session("s1");
    let handle = t.report_handle(&s).await;
    let (k, r) = refused(&t, &s, "1", args(&["ann@company.com"], vec![handle])).await;
    assert_eq!((k.as_str(), r.as_str()), ("unsafe_input", "limit_exceeded"));
    assert_eq!(t.server.messages().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_server_refusing_the_credentials_or_a_recipient_sends_nothing_and_frees_the_key() {
    let Some(t) = setup(
        &[
            "--user",
            "assistant",
            "--password",
            "right",
            "--reject-domain",
            "gone.example.com",
        ],
        |c| c.credentials("assistant", "wrong"),
    ) else {
        return;
    };
    let s = t.session("s1");
    let (k, r) = refused(&t, &s, "1", args(&["ann@company.com"], vec![])).await;
    assert_eq!(
        (k.as_str(), r.as_str()),
        ("tool_failed", "smtp_auth_failed")
    );
    drop(t);
    let Some(t) = setup(
        &[
            "--user",
            "assistant",
            "--password",
            "right",
            "--reject-domain",
            "gone.example.com",
        ],
        |c| c.credentials("assistant", "right"),
    ) else {
        return;
    };
    let s = t.session("s1");
    let a = args(&["ann@company.com", "old@gone.example.com"], vec![]);
    let r = t.call_keyed(&s, "1", "K-2", a.clone()).await;
    assert_eq!(
        kind_reason(&r),
        ("tool_failed".into(), "smtp_refused".into())
    );
    assert!(r.error.as_ref().unwrap().message.contains("550"), "{r:?}");
    assert_eq!(t.server.messages().len(), 0);
    // nothing was sent, so the key is free: the corrected call with it goes out
    let r = t
        .call_keyed(&s, "2", "K-2", args(&["ann@company.com"], vec![]))
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(t.server.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn hard_linked_files_are_neither_found_nor_attached() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let root = t.dir.path();
    // a second name for the denied file, and one for a file the search matches by content
    std::fs::hard_link(
        root.join("reports/secret-plan.pdf"),
        root.join("reports/copy.pdf"),
    )
    .unwrap();
    std::fs::hard_link(root.join("notes.txt"), root.join("reports/copy.txt")).unwrap();
    for query in ["copy", "analysis is done"] {
        let r = t
            .call(&s, query, "search_files", json!({"query": query}))
            .await;
        let files = r.structured_content.as_ref().unwrap()["files"].clone();
        assert_eq!(files, json!([]), "{query}: {files}");
    }
    // a handle to a file that has gained a second name since is stale
    let handle = t.report_handle(&s).await;
    std::fs::hard_link(
        root.join("reports/analysis-report.pdf"),
        root.join("reports/other-name.pdf"),
    )
    .unwrap();
    let ok = ["ann@company.com"];
    assert_eq!(
        refused(&t, &s, "x1", args(&ok, vec![handle])).await.1,
        "stale_handle"
    );
    assert_eq!(t.server.messages().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_file_changed_in_place_with_its_modification_time_restored_is_stale() {
    let Some(t) = setup(&[], |c| c) else { return };
    let s = t.session("s1");
    let handle = t.report_handle(&s).await;
    let path = t.dir.path().join("reports/analysis-report.pdf");
    let before = std::fs::metadata(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[0] ^= 0x20; // same size, same inode
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(before.modified().unwrap())
        .unwrap();
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );
    let ok = ["ann@company.com"];
    assert_eq!(
        refused(&t, &s, "x1", args(&ok, vec![handle])).await.1,
        "stale_handle"
    );
    assert_eq!(t.server.messages().len(), 0);
}
