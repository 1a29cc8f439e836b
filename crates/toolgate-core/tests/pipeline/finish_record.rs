//! Stages 8-9 and batches: output schema, truncation and paging, the audit record, batch order
//! and concurrency.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::atomic::{AtomicU32, Ordering};
use toolgate_core::results::page;
use toolgate_test_support::tools::{bad_output, big_output, Done, NoArgs};

#[tokio::test]
async fn output_violating_its_schema_is_an_error() {
    for (i, out) in [json!({"count": "three"}), json!({}), json!({"other": 1})]
        .into_iter()
        .enumerate()
    {
        let (p, _) = pipeline_with(
            Registry::builder().tool(bad_output(out)).build().unwrap(),
            Arc::new(NobodyApprover),
        );
        let s = p.session("s").build().unwrap();
        let r = p
            .dispatch(ToolCall::new(format!("c{i}"), "bad_output", json!({})), &s)
            .await;
        let e = err(&r);
        assert_eq!(e.kind, ErrorKind::ToolFailed);
        assert_eq!(e.reason.as_deref(), Some("output_schema_mismatch"));
        assert!(r.structured_content.is_none());
    }
    let (p, _) = pipeline_with(
        Registry::builder()
            .tool(bad_output(json!({"count": 3})))
            .build()
            .unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    assert!(
        !p.dispatch(ToolCall::new("ok", "bad_output", json!({})), &s)
            .await
            .is_error
    );
}

#[tokio::test]
async fn large_results_are_truncated_and_paged_by_handle() {
    let (p, audit) = pipeline_with(
        Registry::builder()
            .tool(big_output(100_000, 4096))
            .build()
            .unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("big", "big_output", json!({})), &s)
        .await;
    assert!(!r.is_error);
    let t = r.truncation.clone().expect("truncated");
    assert_eq!(t.original_bytes, 100_000);
    assert!(r.text().len() <= 4096, "{}", r.text().len());
    assert!(r.text().starts_with("line 000000"));
    assert!(r.text().contains(&t.handle));
    // page through the full result by handle
    let full = p.results().get("s", &t.handle).unwrap().expect("stored");
    let mut offset = 0;
    let mut rebuilt = String::new();
    loop {
        let pg = page(&full, offset, 7_000).unwrap();
        rebuilt.push_str(&pg.text);
        match pg.next_offset {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(rebuilt.len(), 100_000);
    assert!(rebuilt.starts_with("line 000000 of the big output\n"));
    // another session cannot read it
    assert!(p.results().get("other", &t.handle).unwrap().is_none());
    assert_eq!(
        audit.records()[0].truncated.as_deref(),
        Some(t.handle.as_str())
    );
}

/// An image or audio block past the limit is left out whole behind its own handle, with a
/// line saying so: it was dropped with no word, the result's size given as its text's alone
/// (11 bytes of "Screenshot:" for 150 kB), and an image alone came back as an empty text.
#[tokio::test]
async fn media_past_the_limit_is_left_out_by_handle_with_a_word() {
    use toolgate_core::{Content, DynamicTool, Effects, ToolOutput, ToolSpec};
    let data = "A".repeat(150_000);
    let shot = |name: &str, content: Vec<Content>| {
        let spec = ToolSpec::builder(name)
            .description("Takes a screenshot.")
            .effects(Effects::read_only())
            .max_result_bytes(4096)
            .build()
            .unwrap();
        DynamicTool::new(spec, move |_, _| {
            let content = content.clone();
            async move {
                Ok(ToolOutput {
                    structured: None,
                    content,
                })
            }
        })
    };
    let registry = Registry::builder()
        .tool(shot(
            "shot",
            vec![
                Content::text("Screenshot:"),
                Content::image(data.clone(), "image/png"),
                Content::resource_link("file:///a.png", "a.png"),
            ],
        ))
        .tool(shot(
            "alone",
            vec![Content::audio(data.clone(), "audio/wav")],
        ))
        .build()
        .unwrap();
    let (p, _) = pipeline_with(registry, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    for (tool, kind) in [
        ("shot", "an image (image/png"),
        ("alone", "audio (audio/wav"),
    ] {
        let r = p.dispatch(ToolCall::new(tool, tool, json!({})), &s).await;
        assert!(!r.is_error, "{tool}");
        let t = r.truncation.clone().expect("truncated");
        assert!(t.original_bytes >= 150_000, "{tool}: {t:?}");
        let text = r.text();
        assert!(
            text.contains(kind) && text.contains("150000 bytes"),
            "{tool}: {text}"
        );
        let handle = text
            .split("handle ")
            .nth(1)
            .and_then(|h| h.split_whitespace().next())
            .unwrap_or_else(|| panic!("{text}"));
        let kept = p.results().get("s", handle).unwrap().expect("stored");
        assert_eq!(kept.len(), 150_000, "{tool}");
        assert!(
            r.content
                .iter()
                .all(|c| !matches!(c, Content::Image { .. } | Content::Audio { .. })),
            "{tool}"
        );
    }
    let r = p.dispatch(ToolCall::new("s2", "shot", json!({})), &s).await;
    assert!(r.text().starts_with("Screenshot:"), "{}", r.text());
    assert!(r
        .content
        .iter()
        .any(|c| matches!(c, Content::ResourceLink(_))));
}

#[tokio::test]
async fn every_call_leaves_one_redacted_audit_record() {
    let (p, audit) = echo_pipeline();
    let s = p.session("sess").build().unwrap();
    let calls = [
        ToolCall::new("1", "echo", json!({"text": "sk-abcdefghijklmnop123456"})),
        ToolCall::new("2", "missing", json!({})),
        ToolCall::new("3", "echo", json!({"nope": 1})),
    ];
    for c in calls {
        p.dispatch(c, &s).await;
    }
    let rec = audit.records();
    let ids: Vec<_> = rec.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"]);
    assert_eq!(rec[0].arguments, json!({"text": "[REDACTED]"}));
    assert_eq!(rec[0].outcome, Outcome::Ok);
    assert_eq!(rec[0].decision, Some(Decision::Allow));
    assert_eq!(&*rec[0].session, "sess");
    assert_eq!(rec[2].error_kind, Some(ErrorKind::InvalidArguments));
}

/// Waits at a two-party barrier: succeeds only when two calls run at the same time.
struct Rendezvous(Arc<tokio::sync::Barrier>);
impl TypedTool for Rendezvous {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("rendezvous").effects(Effects::read_only())
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Done, ToolError> {
        tokio::time::timeout(std::time::Duration::from_secs(5), self.0.wait())
            .await
            .map_err(|_| ToolError::failed("ran alone"))?;
        Ok(Done { done: true })
    }
}

/// Counts how many calls run at once.
struct Exclusive {
    now: Arc<AtomicU32>,
    max: Arc<AtomicU32>,
}
impl TypedTool for Exclusive {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("exclusive").effects(Effects {
            destructive: false,
            ..Effects::side_effecting()
        })
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Done, ToolError> {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(Done { done: true })
    }
}

#[tokio::test]
async fn batches_run_safe_calls_together_and_others_alone_in_order() {
    let max = Arc::new(AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(Rendezvous(Arc::new(tokio::sync::Barrier::new(2))))
        .tool(Exclusive {
            now: Arc::new(AtomicU32::new(0)),
            max: max.clone(),
        })
        .tool(Echo::default())
        .build()
        .unwrap();
    let (p, _) = pipeline_with(reg, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let calls = vec![
        ToolCall::new("r1", "rendezvous", json!({})),
        ToolCall::new("r2", "rendezvous", json!({})),
        ToolCall::new("x1", "exclusive", json!({})),
        ToolCall::new("x2", "exclusive", json!({})),
        ToolCall::new("u", "unknown", json!({})),
        ToolCall::new("e", "echo", json!({"text": "last"})),
    ];
    let results = p.dispatch_batch(calls, &s).await;
    let ids: Vec<_> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2", "x1", "x2", "u", "e"]);
    assert!(
        !results[0].is_error && !results[1].is_error,
        "{:?}",
        results[0]
    );
    assert!(!results[2].is_error && !results[3].is_error);
    assert_eq!(max.load(Ordering::SeqCst), 1);
    assert_eq!(results[4].error_kind(), Some(ErrorKind::UnknownTool));
    assert!(!results[5].is_error);
}

#[tokio::test]
async fn every_content_kind_passes_finish_cleaned_and_counted_against_the_limit() {
    // 300 bytes of base64 audio: alone past the smallest byte limit (256)
    let audio = || Content::audio("A".repeat(300), "audio/wav");
    fn media_tool(cap: usize, audio: Content) -> DynamicTool {
        let spec = ToolSpec::builder("media")
            .description("Returns one block of every kind.")
            .effects(Effects::read_only())
            .max_result_bytes(cap)
            .build()
            .unwrap();
        DynamicTool::new(spec, move |_, _| {
            let audio = audio.clone();
            async move {
                Ok(ToolOutput {
                    structured: None,
                    content: vec![
                        Content::text("see below"),
                        audio,
                        Content::embedded_text("test://r", None, "red\u{1b}[31m text"),
                        Content::embedded_blob("test://b", Some("image/png".into()), "iVBORw0K"),
                        Content::ResourceLink(
                            ResourceLink::new("file:///a.txt", "a\u{1b}[2Jb").description("d\u{7}"),
                        ),
                    ],
                })
            }
        })
    }
    let (p, _) = pipeline_with(
        Registry::builder()
            .tool(media_tool(4096, audio()))
            .build()
            .unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("m", "media", json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content.len(), 5);
    assert_eq!(r.content[1], audio());
    // escapes in what a model or person reads are made visible, payloads stay as sent
    let Content::Resource {
        resource: ResourceContents::Text { text, .. },
    } = &r.content[2]
    else {
        panic!("{:?}", r.content[2]);
    };
    assert!(!text.contains('\u{1b}'), "{text:?}");
    let Content::ResourceLink(link) = &r.content[4] else {
        panic!("{:?}", r.content[4]);
    };
    assert!(!link.name.contains('\u{1b}'), "{link:?}");
    assert!(!link.description.as_deref().unwrap().contains('\u{7}'));
    assert_eq!(link.uri, "file:///a.txt");
    assert!(r.truncation.is_none());

    // the binary payloads count toward the result byte limit
    let (p, _) = pipeline_with(
        Registry::builder()
            .tool(media_tool(256, audio()))
            .build()
            .unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("m", "media", json!({})), &s).await;
    assert!(r.truncation.is_some(), "{r:?}");
}
