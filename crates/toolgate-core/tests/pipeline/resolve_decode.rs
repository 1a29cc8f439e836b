//! Stages 1-4: resolve, sanitize, decode, guard.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_test_support::tools::destructive;
use toolgate_test_support::TempWorkspace;

#[tokio::test]
async fn success_round_trips_the_call_id() {
    let (p, audit) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("id-42", "echo", json!({"text": "hi"})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.call_id.as_str(), "id-42");
    assert_eq!(r.structured_content, Some(json!({"text": "hi"})));
    assert_eq!(r.text(), r#"{"text":"hi"}"#);
    assert_eq!(audit.records().len(), 1);
}

#[tokio::test]
async fn unknown_tool_is_fatal_and_keeps_the_id() {
    let (p, audit) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("c1", "nope", json!({})), &s).await;
    assert_eq!(err(&r).kind, ErrorKind::UnknownTool);
    assert!(!r.is_recoverable());
    assert_eq!(r.call_id.as_str(), "c1");
    let rec = audit.records();
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].error_kind, Some(ErrorKind::UnknownTool));
    assert_eq!(rec[0].outcome, Outcome::FatalError);
}

#[tokio::test]
async fn an_unknown_tool_error_never_names_an_unlisted_tool() {
    let hidden = toolgate_core::DynamicTool::new(
        ToolSpec::builder("read_resourcez")
            .description("unlisted")
            .tag(toolgate_core::registry::UNLISTED_TAG)
            .effects(Effects::read_only())
            .build()
            .unwrap(),
        |_, _| async { Ok(toolgate_core::ToolOutput::text("x")) },
    );
    let p = Pipeline::builder(
        Registry::builder()
            .tool(Echo::default())
            .tool(hidden)
            .build()
            .unwrap(),
    )
    .build();
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c1", "read_resource", json!({})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::UnknownTool);
    assert!(!e.message.contains("read_resourcez"), "{}", e.message);
    assert_eq!(e.details.as_ref().unwrap()["available"], json!(["echo"]));
    assert_eq!(e.details.as_ref().unwrap()["did_you_mean"], json!(null));
    // it is still callable by name
    let r = p
        .dispatch(ToolCall::new("c2", "read_resourcez", json!({})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
}

#[tokio::test]
async fn a_reused_call_id_is_rejected() {
    let (p, _) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let first = p
        .dispatch(ToolCall::new("same", "echo", json!({"text": "a"})), &s)
        .await;
    assert!(!first.is_error);
    let again = p
        .dispatch(ToolCall::new("same", "echo", json!({"text": "b"})), &s)
        .await;
    assert_eq!(err(&again).kind, ErrorKind::InvalidInput);
    assert_eq!(err(&again).reason.as_deref(), Some("duplicate_call_id"));
    assert_eq!(again.call_id.as_str(), "same");
    // another session may use the same id
    let s2 = p.session("s2").build().unwrap();
    assert!(
        !p.dispatch(ToolCall::new("same", "echo", json!({"text": "c"})), &s2)
            .await
            .is_error
    );
}

#[tokio::test]
async fn tools_outside_the_profile_are_invisible() {
    let runs = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let reg = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(runs.clone()))
        .build()
        .unwrap();
    let listed: Vec<_> = reg
        .list(Some("explore"))
        .unwrap()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(listed, ["echo"]);
    let all: Vec<_> = reg
        .list(None)
        .unwrap()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(all, ["delete_all", "echo"]);
    let (p, _) = pipeline_with(reg, Arc::new(PreApproved));
    let s = p.session("s").profile("explore").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::UnknownTool);
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(p.session("x").profile("no-such-profile").build().is_err());
}

#[tokio::test]
async fn a_caller_can_pin_a_version() {
    let v = |version: &'static str| {
        DynamicTool::new(
            ToolSpec::builder("versioned")
                .version(version)
                .effects(Effects::read_only())
                .build()
                .unwrap(),
            move |_, _| async move { Ok(ToolOutput::text(version)) },
        )
    };
    let reg = Registry::builder()
        .tool(v("1.9.0"))
        .tool(v("1.10.0"))
        .tool(v("1.2.0"))
        .build()
        .unwrap();
    assert!(Registry::builder()
        .tool(v("1.0.0"))
        .tool(v("1.0.0"))
        .build()
        .is_err());
    let (p, _) = pipeline_with(reg, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let latest = p
        .dispatch(ToolCall::new("a", "versioned", json!({})), &s)
        .await;
    assert_eq!(latest.text(), "1.10.0");
    let pinned = p
        .dispatch(
            ToolCall::new("b", "versioned", json!({})).with_version("1.2.0"),
            &s,
        )
        .await;
    assert_eq!(pinned.text(), "1.2.0");
    let missing = p
        .dispatch(
            ToolCall::new("c", "versioned", json!({})).with_version("9"),
            &s,
        )
        .await;
    assert_eq!(err(&missing).kind, ErrorKind::UnknownTool);
}

#[tokio::test]
async fn sanitize_refuses_bad_json_and_bad_characters() {
    let (p, _) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let cases = [
        (
            ToolCall::raw("1", "echo", "{\"text\": "),
            ErrorKind::InvalidArguments,
            "",
        ),
        (
            ToolCall::raw("2", "echo", r#"{"text":"abc\ud800def"}"#),
            ErrorKind::InvalidArguments,
            "",
        ),
        (
            ToolCall::new("3", "echo", json!([1, 2])),
            ErrorKind::InvalidArguments,
            "",
        ),
        (
            ToolCall::new("4", "echo", json!("text")),
            ErrorKind::InvalidArguments,
            "",
        ),
        (
            ToolCall::new("5", "echo", json!({"text": "a\u{0}b"})),
            ErrorKind::InvalidInput,
            "/text",
        ),
        (
            ToolCall::new("6", "echo", json!({"text": "\u{1b}[2J"})),
            ErrorKind::InvalidInput,
            "/text",
        ),
    ];
    for (call, kind, pointer) in cases {
        let id = call.id.clone();
        let r = p.dispatch(call, &s).await;
        let e = err(&r);
        assert_eq!(e.kind, kind, "call {id}: {e}");
        assert!(e.is_recoverable());
        assert_eq!(r.call_id, id);
        if !pointer.is_empty() {
            assert_eq!(e.faults[0].pointer, pointer);
        }
    }
    // raw JSON that parses goes through; null arguments mean {}
    let ok = p
        .dispatch(ToolCall::raw("7", "echo", r#"{"text":"ok"}"#), &s)
        .await;
    assert!(!ok.is_error);
    let null = p
        .dispatch(ToolCall::new("8", "echo", serde_json::Value::Null), &s)
        .await;
    assert_eq!(err(&null).faults[0].pointer, "/text");
}

#[tokio::test]
async fn decode_reports_every_fault_with_its_pointer() {
    let (p, _) = echo_pipeline();
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c", "echo", json!({"max_depth": 3})), &s)
        .await;
    let e = err(&r);
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert_eq!(e.reason.as_deref(), Some("schema_violation"));
    let mut pointers: Vec<_> = e.faults.iter().map(|f| f.pointer.as_str()).collect();
    pointers.sort();
    assert_eq!(pointers, ["/max_depth", "/text"]);
    assert!(r.text().contains("/max_depth"), "{}", r.text());
    let wrong = p
        .dispatch(ToolCall::new("d", "echo", json!({"text": 5})), &s)
        .await;
    assert_eq!(err(&wrong).faults[0].pointer, "/text");
}

fn path_tool() -> DynamicTool {
    let spec = ToolSpec::builder("touch_path")
        .effects(Effects::read_only())
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        }))
        .build()
        .unwrap();
    DynamicTool::new(spec, |args, ctx| async move {
        let p = ctx.resolve(args["path"].as_str().unwrap_or_default())?;
        Ok(ToolOutput::text(p.display()))
    })
    .with_guard(|args, _| {
        Ok(vec![Resource::read(
            args["path"].as_str().unwrap_or_default(),
        )])
    })
}

#[tokio::test]
async fn guard_confines_declared_paths() {
    let tw = TempWorkspace::new();
    std::os::unix::fs::symlink("../outside/secret.txt", tw.root().join("notes.txt")).unwrap();
    let (p, _) = pipeline_with(
        Registry::builder().tool(path_tool()).build().unwrap(),
        Arc::new(NobodyApprover),
    );
    let s = p.session("s").workspace(tw.workspace()).build().unwrap();
    let outside_abs = tw.t().join("outside/secret.txt").display().to_string();
    for (i, path) in [
        "../outside/secret.txt",
        "notes.txt",
        "/etc/passwd",
        outside_abs.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        let r = p
            .dispatch(
                ToolCall::new(format!("c{i}"), "touch_path", json!({"path": path})),
                &s,
            )
            .await;
        let e = err(&r);
        assert_eq!(e.kind, ErrorKind::UnsafeInput, "{path}");
        assert_eq!(
            e.reason.as_deref(),
            Some("path_outside_workspace"),
            "{path}"
        );
        if !path.starts_with('/') {
            assert!(
                !r.text().contains(&tw.t().display().to_string()),
                "host path leaked: {}",
                r.text()
            );
        }
    }
    let ok = p
        .dispatch(
            ToolCall::new("ok", "touch_path", json!({"path": "sub/../new.txt"})),
            &s,
        )
        .await;
    assert_eq!(ok.text(), "new.txt");
    // without a workspace, a path tool cannot run
    let bare = p.session("bare").build().unwrap();
    let r = p
        .dispatch(
            ToolCall::new("c", "touch_path", json!({"path": "a"})),
            &bare,
        )
        .await;
    assert_eq!(err(&r).reason.as_deref(), Some("no_workspace"));
}

#[tokio::test]
async fn a_handler_runs_with_a_hand_built_context() {
    let ctx = ToolContext::builder()
        .call_id("x")
        .session_id("unit")
        .build();
    let out = Echo::default()
        .call(
            toolgate_test_support::tools::EchoArgs {
                text: "direct".into(),
            },
            ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.text, "direct");
}
