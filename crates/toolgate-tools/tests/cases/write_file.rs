//! write_file through a real pipeline (approver approving) and directly: what it writes, how
//! it keeps permissions, and every kind of bad input and bad target.

use super::write_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use toolgate_core::{ApprovalAnswer, ErrorKind, TypedTool};
use toolgate_tools::fs::write_file::{WriteFileArgs, WriteFileOutput, MAX_CONTENT_BYTES};
use toolgate_tools::WriteFile;

#[tokio::test]
async fn creates_files_and_parents_and_replaces_whole_files() {
    let w = Ws::new();
    let r = w
        .call(
            "write_file",
            json!({"path": "src/deep/new.rs", "content": "fn a() {}\n"}),
        )
        .await;
    let o: WriteFileOutput = out(&r);
    assert_eq!(
        o,
        WriteFileOutput {
            path: "src/deep/new.rs".into(),
            bytes_written: 10,
            created: true
        }
    );
    assert_eq!(w.read("src/deep/new.rs").unwrap(), b"fn a() {}\n");
    let o: WriteFileOutput = out(&w
        .call(
            "write_file",
            json!({"path": "./src/../src/deep/new.rs", "content": ""}),
        )
        .await);
    assert_eq!(
        (o.path.as_str(), o.bytes_written, o.created),
        ("src/deep/new.rs", 0, false)
    );
    assert_eq!(w.read("src/deep/new.rs").unwrap(), b"");
    // an absolute path inside the workspace is accepted
    let o: WriteFileOutput = out(&w
        .call(
            "write_file",
            json!({"path": w.abs("ws/abs.txt"), "content": "x"}),
        )
        .await);
    assert_eq!(o.path, "abs.txt");
    // the approver was asked once per call: the tool is destructive
    assert_eq!(w.asked(), 3);
    assert!(temp_files(&w.ws()).is_empty());
}

#[tokio::test]
async fn content_is_written_exactly_as_sent() {
    let w = Ws::new();
    let content = "\u{feff}crlf\r\nlone\rtab\tesc\u{1b}[31mred\u{1b}[0m bell\u{7} c1\u{9b} é\n";
    let r = w
        .call("write_file", json!({"path": "raw.txt", "content": content}))
        .await;
    let o: WriteFileOutput = out(&r);
    assert_eq!(o.bytes_written, content.len() as u64);
    assert_eq!(w.read("raw.txt").unwrap(), content.as_bytes());
    // the same through raw JSON text with escapes
    let r = w
        .call_raw(
            "write_file",
            r#"{"path":"esc.txt","content":"a\u001b[2Jb\r\n\u00e9\ud83d\ude00"}"#,
        )
        .await;
    out::<WriteFileOutput>(&r);
    assert_eq!(w.read("esc.txt").unwrap(), "a\u{1b}[2Jb\r\né😀".as_bytes());
}

#[tokio::test]
async fn replacing_keeps_the_permission_bits() {
    let w = Ws::new();
    w.write("run.sh", "#!/bin/sh\necho old\n");
    let p = w.ws().join("run.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o754)).unwrap();
    out::<WriteFileOutput>(
        &w.call(
            "write_file",
            json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
        )
        .await,
    );
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o754
    );
    assert_eq!(w.read("run.sh").unwrap(), b"#!/bin/sh\necho new\n");
}

#[tokio::test]
async fn bad_arguments_are_refused_before_anything_is_written() {
    let w = Ws::new();
    assert_bad_args(
        &w.call("write_file", json!({"path": "a.txt"})).await,
        &["/content"],
    );
    assert_bad_args(
        &w.call("write_file", json!({"content": "x"})).await,
        &["/path"],
    );
    assert_bad_args(
        &w.call("write_file", json!({"path": "", "content": "x"}))
            .await,
        &["/path"],
    );
    assert_bad_args(
        &w.call("write_file", json!({"path": "a.txt", "content": 5}))
            .await,
        &["/content"],
    );
    assert_bad_args(
        &w.call(
            "write_file",
            json!({"path": "a.txt", "content": "x", "mode": "0777"}),
        )
        .await,
        &["/mode"],
    );
    // NUL is refused everywhere, in content too
    let r = w
        .call("write_file", json!({"path": "a.txt", "content": "a\u{0}b"}))
        .await;
    assert_err(&r, ErrorKind::InvalidInput, Some("forbidden_characters"));
    let r = w
        .call("write_file", json!({"path": "a\u{0}.txt", "content": "x"}))
        .await;
    assert_err(&r, ErrorKind::InvalidInput, Some("forbidden_characters"));
    // terminal escapes are refused in the path (not in content)
    let r = w
        .call(
            "write_file",
            json!({"path": "a\u{1b}[2J.txt", "content": "x"}),
        )
        .await;
    assert_err(&r, ErrorKind::InvalidInput, Some("forbidden_characters"));
    for raw in [
        "",
        "[]",
        "\"x\"",
        "{\"path\":",
        "{\"path\":\"a.txt\",\"content\":\"x\"}}",
    ] {
        let r = w.call_raw("write_file", raw).await;
        assert!(r.is_error, "{raw:?}");
    }
    assert_eq!(list(&w.ws()), Vec::<String>::new());
    assert_eq!(w.asked(), 0);
}

/// input-lone-surrogate-18 (input_sanitization): JSON text with a lone surrogate does not
/// parse, wherever the surrogate is; nothing is written, and the session goes on.
#[tokio::test]
async fn input_lone_surrogate_18_is_refused_and_the_next_call_works() {
    let w = Ws::new();
    for raw in [
        r#"{"path":"s.txt","content":"abc\ud800def"}"#,
        r#"{"path":"s.txt","content":"abc\udfffdef"}"#,
        r#"{"path":"s\ud800.txt","content":"abc"}"#,
        r#"{"path":"s.txt","content":"\ud83d"}"#,
        r#"{"path":"s.txt","content":"\ude00\ud83d"}"#,
    ] {
        let r = w.call_raw("write_file", raw).await;
        assert_err(&r, ErrorKind::InvalidArguments, Some("malformed_json"));
        assert!(r.is_recoverable());
    }
    assert_eq!(w.read("s.txt"), None);
    let o: WriteFileOutput = out(&w
        .call_raw(
            "write_file",
            r#"{"path":"s.txt","content":"abc\ud83d\ude00def"}"#,
        )
        .await);
    assert!(o.created);
    assert_eq!(w.read("s.txt").unwrap(), "abc😀def".as_bytes());
}

/// input-nul-path-16 (input_sanitization), the other characters a file name should not
/// hold: a line break, a tab or carriage return, a terminal escape, a C1 control, a direction
/// override, a zero-width or tag character in the path of either write tool is refused at
/// `/path` before anything is created, so no listing, diff or log shows a faked name
/// (`invoice\u{202e}fdp.exe` reads as `invoiceexe.pdf`); content keeps them, as sent.
#[tokio::test]
async fn input_nul_path_16_names_with_hidden_characters_are_not_created() {
    let w = Ws::new();
    w.write("a.txt", "a\n");
    for path in [
        "notes.txt\n.md",
        "x\ry.txt",
        "tab\t.txt",
        "sub\ndir/a.txt",
        "esc\u{1b}[31m.txt",
        "c1\u{9b}.txt",
        "invoice\u{202e}fdp.exe",
        "iso\u{2066}late.txt",
        "zero\u{200b}width.txt",
        "tag\u{e0041}.txt",
        "a\u{feff}b.txt",
        "a.txt\u{2028}",
    ] {
        for (tool, args) in [
            ("write_file", json!({"path": path, "content": "x\n"})),
            (
                "edit_file",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
            ),
        ] {
            let r = w.call(tool, args).await;
            let e = r
                .error
                .as_ref()
                .unwrap_or_else(|| panic!("{tool} {path:?} was written"));
            assert_eq!(
                (e.kind, e.reason.as_deref()),
                (ErrorKind::InvalidInput, Some("forbidden_characters")),
                "{tool} {path:?}: {e}"
            );
            assert_eq!(e.faults[0].pointer, "/path", "{tool} {path:?}");
            assert!(r.is_recoverable());
        }
    }
    assert_eq!(list(&w.ws()), ["a.txt"]);
    assert_eq!(w.read("a.txt").unwrap(), b"a\n");
    assert_eq!(w.asked(), 0);
}

#[tokio::test]
async fn directories_fifos_and_files_on_the_way_are_refused() {
    let w = Ws::new();
    w.write("dir/keep.txt", "k");
    w.write("file.txt", "f");
    w.fifo("pipe");
    let cases = [
        (".", "is_a_directory"),
        ("dir", "is_a_directory"),
        ("dir/", "is_a_directory"),
        ("newdir/", "is_a_directory"),
        ("file.txt/", "is_a_directory"),
        ("file.txt/.", "is_a_directory"),
        ("new.txt/.", "is_a_directory"),
        ("pipe", "not_a_regular_file"),
        ("file.txt/x.txt", "not_a_directory"),
    ];
    for (path, reason) in cases {
        let call = w.call("write_file", json!({"path": path, "content": "x"}));
        let r = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .unwrap_or_else(|_| panic!("{path}: write_file hung"));
        assert_err(&r, ErrorKind::ToolFailed, Some(reason));
    }
    assert_eq!(w.read("file.txt").unwrap(), b"f");
    assert_eq!(list(&w.ws()), ["dir", "file.txt", "pipe"]);
    assert_eq!(list(&w.ws().join("dir")), ["keep.txt"]);
}

#[tokio::test]
async fn huge_content_is_refused_before_approval() {
    let w = Ws::new();
    let huge = "x".repeat(MAX_CONTENT_BYTES as usize + 1);
    let r = w
        .call("write_file", json!({"path": "big.txt", "content": huge}))
        .await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert_eq!(w.asked(), 0);
    assert_eq!(w.read("big.txt"), None);
    // exactly at the limit is fine
    let max = "y".repeat(MAX_CONTENT_BYTES as usize);
    let o: WriteFileOutput = out(&w
        .call("write_file", json!({"path": "big.txt", "content": max}))
        .await);
    assert_eq!(o.bytes_written, MAX_CONTENT_BYTES);
}

#[tokio::test]
async fn a_rejected_approval_writes_nothing() {
    let w = Ws::answering(ApprovalAnswer::Rejected {
        reason: "no".into(),
    });
    w.write("a.txt", "old");
    for path in ["a.txt", "b.txt"] {
        let r = w
            .call("write_file", json!({"path": path, "content": "new"}))
            .await;
        // the model reads that nothing changed and to ask the user; the rule that asked is
        // in the details, not in its text
        assert_err(&r, ErrorKind::ApprovalRejected, Some("not_approved"));
        let e = r.error.as_ref().unwrap();
        assert!(e.message.contains("nothing was changed"), "{}", e.message);
        assert!(
            e.message.contains("ask the user how to go on"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("destructive"), "{}", e.message);
        assert_eq!(
            e.details.as_ref().unwrap()["rule"],
            "default.destructive_asks"
        );
    }
    assert_eq!(w.read("a.txt").unwrap(), b"old");
    assert_eq!(list(&w.ws()), ["a.txt"]);
    let corrected = Ws::answering(ApprovalAnswer::Corrected {
        feedback: "write it under docs/".into(),
    });
    let r = corrected
        .call("write_file", json!({"path": "b.txt", "content": "new"}))
        .await;
    assert_err(&r, ErrorKind::ApprovalCorrected, None);
    assert!(list(&corrected.ws()).is_empty());
}

#[tokio::test]
async fn direct_calls_are_confined_and_checked_too() {
    let w = Ws::new();
    let tool = WriteFile::new();
    let args = |path: &str, content: &str| WriteFileArgs {
        path: path.into(),
        content: content.into(),
    };
    let o = tool.call(args("d/a.txt", "direct"), w.ctx()).await.unwrap();
    assert_eq!((o.path.as_str(), o.created), ("d/a.txt", true));
    assert_eq!(w.read("d/a.txt").unwrap(), b"direct");
    for (path, reason) in [
        ("../outside/x.txt", "path_outside_workspace"),
        (".git/config", "protected_path"),
    ] {
        let e = tool.call(args(path, "x"), w.ctx()).await.unwrap_err();
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::UnsafeInput, Some(reason))
        );
        let e = tool.guard(&args(path, "x"), &w.ctx()).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some(reason));
    }
    let huge = "z".repeat(MAX_CONTENT_BYTES as usize + 1);
    let e = tool.call(args("h.txt", &huge), w.ctx()).await.unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("limit_exceeded"));
    // without a workspace, and with a read-only view of one
    let e = tool
        .call(
            args("a.txt", "x"),
            toolgate_core::ToolContext::builder().build(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("no_workspace"));
    let ro = toolgate_core::ToolContext::builder()
        .workspace(w.session.workspace().unwrap().read_only())
        .build();
    let e = tool.call(args("ro.txt", "x"), ro).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::PermissionDenied);
    assert_eq!(w.read("ro.txt"), None);
    w.assert_outside_untouched();
}

#[tokio::test]
async fn a_cancelled_call_writes_nothing() {
    let w = Ws::new();
    w.write("a.txt", "old");
    let token = toolgate_core::CancellationToken::new();
    token.cancel();
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(w.session.workspace().unwrap().clone())
        .cancellation(token)
        .build();
    let e = WriteFile::new()
        .call(
            WriteFileArgs {
                path: "a.txt".into(),
                content: "new".into(),
            },
            ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
    assert_eq!(w.read("a.txt").unwrap(), b"old");
    assert!(temp_files(&w.ws()).is_empty());
}

/// Concurrent writers of one file: every read sees one whole version, never a mix or a
/// prefix, and no temporary file is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_never_leave_a_partial_file() {
    let w = std::sync::Arc::new(Ws::new());
    let versions: Vec<String> = (0..6)
        .map(|i| format!("{i}").repeat(1000 + i * 37_000))
        .collect();
    w.write("shared.txt", &versions[0]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let path = w.ws().join("shared.txt");
        let versions = versions.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
                let got = std::fs::read_to_string(&path).unwrap();
                assert!(
                    versions.contains(&got),
                    "a reader saw a partial file of {} bytes",
                    got.len()
                );
                reads += 1;
            }
            reads
        })
    };
    let mut writers = Vec::new();
    for round in 0..5 {
        for (i, v) in versions.iter().enumerate() {
            let w = w.clone();
            let v = v.clone();
            writers.push(tokio::spawn(async move {
                let r = w
                    .call("write_file", json!({"path": "shared.txt", "content": v}))
                    .await;
                assert!(!r.is_error, "round {round} writer {i}: {}", r.text());
            }));
        }
    }
    for h in writers {
        h.await.unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    let last = String::from_utf8(w.read("shared.txt").unwrap()).unwrap();
    assert!(versions.contains(&last));
    assert!(temp_files(&w.ws()).is_empty());
}

#[test]
fn the_write_tools_are_destructive_documented_and_keep_content_verbatim() {
    use toolgate_core::{Registry, Risk};
    let registry = toolgate_tools::register_write_tools(Registry::builder())
        .build()
        .unwrap();
    let names: Vec<String> = registry
        .list(None)
        .unwrap()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["edit_file", "write_file"]);
    let listed: Vec<String> = toolgate_tools::write_tools()
        .unwrap()
        .iter()
        .map(|t| t.spec().name.to_string())
        .collect();
    assert_eq!(listed, toolgate_tools::WRITE_TOOLS);
    // the explore profile (read-only tools) does not see them
    assert!(registry.list(Some("explore")).unwrap().is_empty());
    for spec in registry.list(None).unwrap() {
        let name = &*spec.name;
        let e = spec.effects;
        assert!(
            !e.read_only && e.destructive && !e.open_world && !e.concurrency_safe,
            "{name}"
        );
        assert_eq!(e.idempotent, name == "write_file", "{name}");
        assert_eq!(spec.risk, Risk::Write, "{name}");
        assert!(spec.description.len() > 300, "{name}");
        let verbatim: Vec<&str> = spec.verbatim_arguments.iter().map(|s| s.as_str()).collect();
        let expected: &[&str] = if name == "write_file" {
            &["content"]
        } else {
            &["old_string", "new_string"]
        };
        assert_eq!(verbatim, expected, "{name}");
        let input = &spec.input_schema;
        assert_eq!(input["additionalProperties"], false, "{name}");
        for (prop, schema) in input["properties"].as_object().unwrap() {
            let d = schema["description"].as_str().unwrap_or_default();
            assert!(d.len() > 20, "{name}.{prop} needs a description");
        }
        let output = spec.output_schema.as_ref().unwrap();
        for (prop, schema) in output["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{name} output {prop}");
        }
        let validator =
            toolgate_core::schema::CompiledSchema::compile(name, "inputSchema", input).unwrap();
        assert!(!spec.examples.is_empty());
        for example in &spec.examples {
            assert!(
                validator.is_valid(&example.arguments),
                "{name}: {}",
                example.arguments
            );
        }
    }
}
