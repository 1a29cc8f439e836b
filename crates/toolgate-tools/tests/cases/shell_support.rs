//! Fixtures for run_shell: a temp dir `T` with the workspace `T/ws` and `T/outside`, a
//! pipeline with run_shell (and the read-only tools) under a chosen policy and approver, and
//! a canary HTTP server on 127.0.0.1 that counts its hits.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{
    Approver, Pipeline, Policy, PreApproved, Registry, Session, ToolCall, ToolContext, ToolResult,
    Workspace,
};
use toolgate_tools::shell::run_shell::RunShellOutput;
use toolgate_tools::shell::ShellConfig;

pub struct Shell {
    _tmp: tempfile::TempDir,
    /// The temp dir holding `ws` and `outside`.
    pub t: PathBuf,
    pub pipeline: Pipeline,
    pub session: Session,
    calls: AtomicU64,
}

/// How a [`Shell`] fixture is built.
pub struct ShellSetup {
    pub config: ShellConfig,
    pub policy: Option<Arc<dyn Policy>>,
    pub approver: Arc<dyn Approver>,
}

impl Default for ShellSetup {
    /// The default configuration, the default policy, and an approver that approves.
    fn default() -> Self {
        ShellSetup {
            config: ShellConfig::default(),
            policy: None,
            approver: Arc::new(PreApproved),
        }
    }
}

impl Shell {
    /// The default setup.
    pub fn new() -> Shell {
        Self::with(ShellSetup::default())
    }

    pub fn with(setup: ShellSetup) -> Shell {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(t.join("ws")).unwrap();
        std::fs::create_dir_all(t.join("outside")).unwrap();
        std::fs::write(t.join("outside/secret.txt"), "CANARY-OUT\n").unwrap();
        let registry = toolgate_tools::register_shell(
            toolgate_tools::register_read_only(Registry::builder()),
            setup.config,
        )
        .build()
        .unwrap();
        let mut builder = Pipeline::builder(registry).approver(setup.approver);
        if let Some(policy) = setup.policy {
            builder = builder.policy(policy);
        }
        let pipeline = builder.build();
        let session = pipeline
            .session("s1")
            .workspace(Workspace::open(t.join("ws")).unwrap())
            .build()
            .unwrap();
        Shell {
            _tmp: tmp,
            t,
            pipeline,
            session,
            calls: AtomicU64::new(0),
        }
    }

    /// The workspace root on the host.
    pub fn ws(&self) -> PathBuf {
        self.t.join("ws")
    }

    /// Runs `script` with `sh -c` in the workspace, outside any sandbox (test set-up).
    pub fn setup(&self, script: &str) {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(self.ws())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "set-up failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// One call through the whole pipeline.
    pub async fn call(&self, args: Value) -> ToolResult {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        self.pipeline
            .dispatch(
                ToolCall::new(format!("call-{n}"), "run_shell", args),
                &self.session,
            )
            .await
    }

    /// Runs `command` through the pipeline and returns its output (it must succeed as a
    /// call; the command's own exit code is in the output).
    #[track_caller]
    pub fn run(&self, command: &str) -> impl std::future::Future<Output = RunShellOutput> + '_ {
        let command = command.to_string();
        async move {
            let r = self.call(json!({"command": command})).await;
            output(&r)
        }
    }

    /// A context over the same workspace, for calling the handler directly (no guard, no
    /// policy): what the sandbox alone enforces.
    pub fn ctx(&self) -> ToolContext {
        ToolContext::builder()
            .workspace(self.session.workspace().unwrap().clone())
            .results(self.pipeline.results().clone())
            .session_id("s1")
            .build()
    }
}

/// The output of a successful call.
#[track_caller]
pub fn output(r: &ToolResult) -> RunShellOutput {
    assert!(!r.is_error, "expected success, got {}", r.text());
    serde_json::from_value(r.structured_content.clone().expect("structured content")).unwrap()
}

/// A local HTTP server on 127.0.0.1 that counts connections and answers each with 200.
pub struct Canary {
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl Canary {
    pub fn start() -> Canary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
            }
        });
        Canary { port, hits }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Whether `p` exists (without following a final symlink).
pub fn exists(p: impl AsRef<Path>) -> bool {
    p.as_ref().symlink_metadata().is_ok()
}
