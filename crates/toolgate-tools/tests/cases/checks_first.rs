//! A call bound to fail is refused before anyone is asked to approve it, for every built-in
//! tool: the write tools and run_shell in their guard (whatever the policy), the read tools
//! when a policy asks about them. The question of a call that can run shows what it would
//! change (a unified diff for write_file and edit_file, escaped by the approver). And since
//! the world can change while a person thinks, the handler checks again: a file edited while
//! the question was open is not overwritten.

use super::support::{assert_err, out};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use toolgate_core::{
    ApprovalAnswer, ApprovalRequest, Approver, ErrorKind, Pipeline, Policy, PolicyInput, Registry,
    Session, ToolCall, ToolResult, Verdict, Workspace,
};
use toolgate_test_support::ScriptedApprover;
use toolgate_tools::fs::edit_file::EditFileOutput;
use toolgate_tools::shell::report::SandboxReport;
use toolgate_tools::shell::run_shell::RunShell;
use toolgate_tools::shell::ShellConfig;

/// Asks about every call, reads included.
struct AskAll;

impl Policy for AskAll {
    fn decide(&self, _input: &PolicyInput<'_>) -> Verdict {
        Verdict::ask("test.ask_all", "the test asks about every call")
    }
}

/// A workspace with every built-in behind `AskAll` and an approver that approves (after
/// running `on_ask`, when set, while the question is open).
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    pipeline: Pipeline,
    session: Session,
    approver: Arc<ScriptedApprover>,
    n: AtomicU64,
}

impl Fixture {
    fn new(report: Option<SandboxReport>) -> Fixture {
        Self::with(report, |_| None)
    }

    /// With the approver `approver` makes for the workspace (`None`: the scripted one).
    fn with(
        report: Option<SandboxReport>,
        approver: impl FnOnce(&Path) -> Option<Arc<dyn Approver>>,
    ) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/lib.rs"), "fn a() {}\nfn a() {}\nfn b() {}\n").unwrap();
        let mut shell = RunShell::new(ShellConfig::default());
        if let Some(r) = report {
            shell = shell.with_sandbox_report(r);
        }
        let registry = toolgate_tools::register_write_tools(toolgate_tools::register_read_only(
            Registry::builder(),
        ))
        .tool(shell)
        .build()
        .unwrap();
        let scripted = Arc::new(ScriptedApprover::always(ApprovalAnswer::Approved));
        let pipeline = Pipeline::builder(registry)
            .policy(Arc::new(AskAll))
            .approver(approver(&ws).unwrap_or_else(|| scripted.clone()))
            .build();
        let session = pipeline
            .session("checks")
            .workspace(Workspace::open(&ws).unwrap())
            .build()
            .unwrap();
        Fixture {
            _tmp: tmp,
            ws,
            pipeline,
            session,
            approver: scripted,
            n: AtomicU64::new(0),
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let id = format!("c{}", self.n.fetch_add(1, Ordering::Relaxed));
        self.pipeline
            .dispatch(ToolCall::new(id, tool, args), &self.session)
            .await
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).unwrap()
    }
}

/// Every file under `dir` with its content, to show nothing changed.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                out.push((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn calls_bound_to_fail_are_refused_before_anyone_is_asked() {
    let f = Fixture::new(None);
    std::fs::write(f.ws.join("binary.bin"), b"\xff\xfe\x00").unwrap();
    std::fs::create_dir_all(f.ws.join("dir")).unwrap();
    std::fs::write(f.ws.join("file.txt"), "x").unwrap();
    std::fs::hard_link(f.ws.join("file.txt"), f.ws.join("linked.txt")).unwrap();
    let before = tree(&f.ws);
    let edit = |path: &str, old: &str| json!({"path": path, "old_string": old, "new_string": "X"});
    let cases: Vec<(&str, Value, ErrorKind, &str)> = vec![
        // edit_file: the text must be there, once; the file must exist and be text
        (
            "edit_file",
            edit("src/lib.rs", "fn zzz"),
            ErrorKind::ToolFailed,
            "no_match",
        ),
        (
            "edit_file",
            edit("src/lib.rs", "fn a() {}"),
            ErrorKind::ToolFailed,
            "ambiguous_match",
        ),
        (
            "edit_file",
            edit("src/missing.rs", "fn a"),
            ErrorKind::ToolFailed,
            "not_found",
        ),
        (
            "edit_file",
            edit("missing/dir/x.rs", "fn a"),
            ErrorKind::ToolFailed,
            "not_found",
        ),
        (
            "edit_file",
            edit("binary.bin", "x"),
            ErrorKind::ToolFailed,
            "not_utf8",
        ),
        (
            "edit_file",
            edit("dir", "x"),
            ErrorKind::ToolFailed,
            "is_a_directory",
        ),
        (
            "edit_file",
            edit("linked.txt", "x"),
            ErrorKind::UnsafeInput,
            "hard_link",
        ),
        // write_file: what the write would find
        (
            "write_file",
            json!({"path": "dir", "content": "x"}),
            ErrorKind::ToolFailed,
            "is_a_directory",
        ),
        (
            "write_file",
            json!({"path": "file.txt/below.txt", "content": "x"}),
            ErrorKind::ToolFailed,
            "not_a_directory",
        ),
        (
            "write_file",
            json!({"path": "linked.txt", "content": "x"}),
            ErrorKind::UnsafeInput,
            "hard_link",
        ),
        // run_shell: the working directory must be one
        (
            "run_shell",
            json!({"command": "touch made", "cwd": "nope"}),
            ErrorKind::ToolFailed,
            "not_found",
        ),
        (
            "run_shell",
            json!({"command": "touch made", "cwd": "file.txt"}),
            ErrorKind::ToolFailed,
            "not_a_directory",
        ),
        // the read tools, when a policy asks about them
        (
            "read_file",
            json!({"path": "src/lib.rss"}),
            ErrorKind::ToolFailed,
            "not_found",
        ),
        (
            "read_file",
            json!({"path": "dir"}),
            ErrorKind::ToolFailed,
            "is_a_directory",
        ),
        (
            "list_dir",
            json!({"path": "file.txt"}),
            ErrorKind::ToolFailed,
            "not_a_directory",
        ),
        (
            "glob",
            json!({"pattern": "*.rs", "path": "nope"}),
            ErrorKind::ToolFailed,
            "not_found",
        ),
        (
            "search_code",
            json!({"pattern": "fn", "path": "nope"}),
            ErrorKind::ToolFailed,
            "not_found",
        ),
    ];
    for (tool, args, kind, reason) in cases {
        let r = f.call(tool, args.clone()).await;
        assert_err(&r, kind, Some(reason));
        assert!(
            f.approver.asked().is_empty(),
            "{tool} {args}: the approver was asked about a call bound to fail"
        );
    }
    assert_eq!(tree(&f.ws), before, "a refused call changed the workspace");
    // and the calls that can run are asked about, and run
    let r = f.call("read_file", json!({"path": "src/lib.rs"})).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(f.approver.asked().len(), 1);
}

#[tokio::test]
async fn write_tools_check_first_whatever_the_policy() {
    // the default policy asks only about destructive tools; a guard check fails them the same
    // way even where a rule would allow the call without asking
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    let registry = toolgate_tools::register_write_tools(Registry::builder())
        .build()
        .unwrap();
    struct AllowAll;
    impl Policy for AllowAll {
        fn decide(&self, _input: &PolicyInput<'_>) -> Verdict {
            Verdict::allow("test.allow_all", "the test allows every call")
        }
    }
    let pipeline = Pipeline::builder(registry)
        .policy(Arc::new(AllowAll))
        .build();
    let session = pipeline
        .session("s")
        .workspace(Workspace::open(&ws).unwrap())
        .build()
        .unwrap();
    let r = pipeline
        .dispatch(
            ToolCall::new(
                "1",
                "edit_file",
                json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
            ),
            &session,
        )
        .await;
    assert_err(&r, ErrorKind::ToolFailed, Some("no_match"));
}

#[tokio::test]
async fn the_run_shell_sandbox_is_checked_before_asking() {
    let mut nothing = toolgate_tools::shell::sandbox_report();
    nothing.landlock_abi = 0;
    nothing.network_namespace = false;
    let f = Fixture::new(Some(nothing));
    let r = f.call("run_shell", json!({"command": "touch made"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("sandbox_unavailable"));
    assert!(f.approver.asked().is_empty());
    assert!(!f.ws.join("made").exists());
}

#[tokio::test]
async fn the_question_shows_the_change_as_a_diff() {
    let f = Fixture::new(None);
    let o: EditFileOutput = out(&f
        .call(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn b() {}", "new_string": "fn c() {}"}),
        )
        .await);
    let asked = f.approver.asked();
    let preview = asked[0].preview.as_deref().expect("edit_file gives a diff");
    assert_eq!(preview, o.diff, "the question shows the diff the call made");
    assert!(preview.contains("-fn b() {}\n+fn c() {}\n"), "{preview}");
    // a new file is all additions; a replaced one shows what goes and what comes
    let r = f
        .call(
            "write_file",
            json!({"path": "new.txt", "content": "hello\nworld\n"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    let r = f
        .call(
            "write_file",
            json!({"path": "new.txt", "content": "hello\nthere\n"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    let asked = f.approver.asked();
    assert_eq!(
        asked[1].preview.as_deref(),
        Some("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n")
    );
    assert_eq!(
        asked[2].preview.as_deref(),
        Some("--- a/new.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n")
    );
    // the read tools give none
    f.call("read_file", json!({"path": "new.txt"})).await;
    assert_eq!(f.approver.asked()[3].preview, None);
}

/// An approver that edits the file while the question is open, then approves.
struct EditsWhileAsked {
    path: PathBuf,
}

impl Approver for EditsWhileAsked {
    fn approve<'a>(
        &'a self,
        _request: &'a ApprovalRequest<'a>,
    ) -> Pin<Box<dyn Future<Output = ApprovalAnswer> + Send + 'a>> {
        std::fs::write(&self.path, "fn changed() {}\n").unwrap();
        Box::pin(async { ApprovalAnswer::Approved })
    }
}

#[tokio::test]
async fn the_handler_checks_again_after_the_question() {
    let f = Fixture::with(None, |ws| {
        Some(Arc::new(EditsWhileAsked {
            path: ws.join("src/lib.rs"),
        }))
    });
    let r = f
        .call(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn b() {}", "new_string": "fn c() {}"}),
        )
        .await;
    // the guard saw `fn b` once; by the time the call ran it was gone
    assert_err(&r, ErrorKind::ToolFailed, Some("no_match"));
    assert_eq!(f.read("src/lib.rs"), "fn changed() {}\n");
}
