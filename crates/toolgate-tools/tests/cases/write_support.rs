//! Fixtures for the write tools: a temp dir `T` holding the workspace `T/ws` and
//! `T/outside/secret.txt` (the canary), a pipeline with the read-only and write built-ins
//! whose approver approves (or rejects), and helpers to look at the tree.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use toolgate_core::{
    ApprovalAnswer, Pipeline, Registry, Session, ToolCall, ToolContext, ToolResult, Workspace,
};
use toolgate_test_support::ScriptedApprover;

pub use super::support::{assert_bad_args, assert_err, assert_outside, out, CANARY};

pub struct Ws {
    _tmp: tempfile::TempDir,
    /// The temp dir holding `ws` and `outside`.
    pub t: PathBuf,
    pub pipeline: Pipeline,
    pub session: Session,
    pub approver: Arc<ScriptedApprover>,
    calls: AtomicU64,
}

impl Ws {
    /// A workspace whose approver approves every call.
    pub fn new() -> Ws {
        Self::answering(ApprovalAnswer::Approved)
    }

    /// A workspace whose approver answers `answer` to every call.
    pub fn answering(answer: ApprovalAnswer) -> Ws {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(t.join("ws")).unwrap();
        std::fs::create_dir_all(t.join("outside")).unwrap();
        std::fs::write(t.join("outside/secret.txt"), format!("{CANARY}\n")).unwrap();
        let registry = toolgate_tools::register_write_tools(toolgate_tools::register_read_only(
            Registry::builder(),
        ))
        .build()
        .unwrap();
        let approver = Arc::new(ScriptedApprover::always(answer));
        let pipeline = Pipeline::builder(registry)
            .approver(approver.clone())
            .build();
        let session = pipeline
            .session("w")
            .workspace(Workspace::open(t.join("ws")).unwrap())
            .build()
            .unwrap();
        Ws {
            _tmp: tmp,
            t,
            pipeline,
            session,
            approver,
            calls: AtomicU64::new(0),
        }
    }

    /// `T/ws`.
    pub fn ws(&self) -> PathBuf {
        self.t.join("ws")
    }

    /// `T/<rel>` as a string, for absolute-path arguments.
    pub fn abs(&self, rel: &str) -> String {
        self.t.join(rel).to_str().unwrap().to_string()
    }

    /// Writes `content` to `T/ws/<rel>`, creating directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// The bytes of `T/ws/<rel>`, `None` when it does not exist.
    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ws().join(rel)).ok()
    }

    /// A symlink at `T/ws/<rel>` pointing at `target` (as given).
    pub fn link(&self, target: impl AsRef<Path>, rel: &str) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    /// A FIFO at `T/ws/<rel>`.
    pub fn fifo(&self, rel: &str) {
        let status = std::process::Command::new("mkfifo")
            .arg(self.ws().join(rel))
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// One call through the whole pipeline.
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.dispatch(|id| ToolCall::new(id, tool, args)).await
    }

    /// One call whose arguments are sent as raw JSON text.
    pub async fn call_raw(&self, tool: &str, raw: &str) -> ToolResult {
        self.dispatch(|id| ToolCall::raw(id, tool, raw)).await
    }

    async fn dispatch(&self, make: impl FnOnce(String) -> ToolCall) -> ToolResult {
        let id = format!("w-{}", self.calls.fetch_add(1, Ordering::Relaxed));
        let result = self
            .pipeline
            .dispatch(make(id.clone()), &self.session)
            .await;
        assert_eq!(result.call_id.as_str(), id);
        result
    }

    /// A writable context over the workspace, for calling handlers directly.
    pub fn ctx(&self) -> ToolContext {
        ToolContext::builder()
            .workspace(self.session.workspace().unwrap().clone())
            .build()
    }

    /// How many approval requests the approver has had.
    pub fn asked(&self) -> usize {
        self.approver.asked().len()
    }

    /// Asserts `T/outside` holds only `secret.txt`, with the canary unchanged.
    #[track_caller]
    pub fn assert_outside_untouched(&self) {
        assert_eq!(list(&self.t.join("outside")), ["secret.txt"]);
        assert_eq!(
            std::fs::read_to_string(self.t.join("outside/secret.txt")).unwrap(),
            format!("{CANARY}\n")
        );
    }
}

/// The names in `dir`, sorted.
pub fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every temporary file left under `dir`, recursively (there must never be any).
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if name.starts_with(".toolgate-") && name.ends_with(".tmp") {
                found.push(e.path());
            }
        }
    }
    found
}
