//! Fixtures: a temp dir `T` holding the workspace `T/ws` and `T/outside/secret.txt` (whose
//! content is the canary `CANARY-OUT`), a pipeline over the read-only built-ins, and
//! assertions on results.

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use toolgate_core::{
    ErrorKind, Pipeline, Registry, Session, ToolCall, ToolContext, ToolResult, Workspace,
};

/// The text no result may ever show.
pub const CANARY: &str = "CANARY-OUT";

pub struct Fixture {
    _tmp: tempfile::TempDir,
    /// The temp dir holding `ws` and `outside`.
    pub t: PathBuf,
    pub pipeline: Pipeline,
    pub session: Session,
    calls: AtomicU64,
}

impl Fixture {
    /// `T/ws` (the workspace root) and `T/outside/secret.txt`.
    pub fn new() -> Fixture {
        Self::with_root("ws")
    }

    /// Like [`Fixture::new`] with the workspace at `T/<root>`.
    pub fn with_root(root: &str) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(t.join(root)).unwrap();
        std::fs::create_dir_all(t.join("outside")).unwrap();
        std::fs::write(t.join("outside/secret.txt"), format!("{CANARY}\n")).unwrap();
        let registry = toolgate_tools::register_read_only(Registry::builder())
            .build()
            .unwrap();
        let pipeline = Pipeline::builder(registry).build();
        let session = pipeline
            .session("s1")
            .workspace(Workspace::open(t.join(root)).unwrap())
            .build()
            .unwrap();
        Fixture {
            _tmp: tmp,
            t,
            pipeline,
            session,
            calls: AtomicU64::new(0),
        }
    }

    /// The workspace root on the host.
    pub fn ws(&self) -> PathBuf {
        self.session.workspace().unwrap().root().to_path_buf()
    }

    /// Writes `content` to `rel` under the workspace, creating directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Creates a symlink at `rel` under the workspace pointing at `target` (as given).
    pub fn link(&self, target: impl AsRef<Path>, rel: &str) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    /// `T/<rel>` as a string, for absolute-path arguments.
    pub fn abs(&self, rel: &str) -> String {
        self.t.join(rel).to_str().unwrap().to_string()
    }

    /// One call through the whole pipeline.
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let result = self
            .pipeline
            .dispatch(
                ToolCall::new(format!("call-{n}"), tool, args),
                &self.session,
            )
            .await;
        assert_eq!(result.call_id.as_str(), format!("call-{n}"));
        result
    }

    /// A hand-built context over the same workspace (read-only view, as the pipeline gives
    /// read-only tools), for calling handlers directly.
    pub fn ctx(&self) -> ToolContext {
        ToolContext::builder()
            .workspace(self.session.workspace().unwrap().read_only())
            .build()
    }
}

/// The structured output of a successful result, decoded.
#[track_caller]
pub fn out<T: DeserializeOwned>(r: &ToolResult) -> T {
    assert!(!r.is_error, "expected success, got {}", r.text());
    let v = r
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("no structured content: {}", r.text()));
    serde_json::from_value(v).unwrap()
}

/// Asserts the result is an error of `kind` with `reason`.
#[track_caller]
pub fn assert_err(r: &ToolResult, kind: ErrorKind, reason: Option<&str>) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected {kind} ({reason:?}), got success: {}", r.text()));
    assert!(r.is_error);
    assert_eq!((e.kind, e.reason.as_deref()), (kind, reason), "{e}");
    assert!(!e.message.is_empty());
    assert_no_canary(r);
}

/// Asserts the result is `unsafe_input` / `path_outside_workspace` and shows no outside content.
#[track_caller]
pub fn assert_outside(r: &ToolResult) {
    assert_err(r, ErrorKind::UnsafeInput, Some("path_outside_workspace"));
}

/// Asserts `not_found`.
#[track_caller]
pub fn assert_not_found(r: &ToolResult) {
    assert_err(r, ErrorKind::ToolFailed, Some("not_found"));
}

/// Asserts `invalid_arguments` with exactly these fault pointers (sorted).
#[track_caller]
pub fn assert_bad_args(r: &ToolResult, pointers: &[&str]) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected invalid_arguments, got {}", r.text()));
    assert_eq!(e.kind, ErrorKind::InvalidArguments, "{e}");
    let mut got: Vec<&str> = e.faults.iter().map(|f| f.pointer.as_str()).collect();
    got.sort();
    got.dedup();
    assert_eq!(got, pointers, "{e:?}");
}

/// Asserts that nothing in the result, as it goes on the wire, holds the canary.
#[track_caller]
pub fn assert_no_canary(r: &ToolResult) {
    let wire = serde_json::to_string(r).unwrap();
    assert!(!wire.contains(CANARY), "canary leaked: {wire}");
    assert!(!r.text().contains(CANARY), "canary leaked: {}", r.text());
}

/// Asserts that no raw control character other than `\n`, `\t` (and the `\r` of `\r\n`) is
/// in the result's text or its wire form.
#[track_caller]
pub fn assert_no_controls(r: &ToolResult) {
    let text = r.text();
    let wire = serde_json::to_string(r).unwrap();
    for s in [text.as_ref(), wire.as_str()] {
        let bad = s.chars().find(|&c| {
            (c < ' ' && c != '\n' && c != '\t' && c != '\r') || ('\u{7f}'..='\u{9f}').contains(&c)
        });
        assert!(bad.is_none(), "raw control {bad:?} in {s:?}");
    }
}
