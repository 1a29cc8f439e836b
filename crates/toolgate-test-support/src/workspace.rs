//! Temporary workspaces in the layout of `shared/cases/security.jsonl`: `T/ws` is the
//! workspace root, `T/outside/secret.txt` holds `CANARY-OUT`.

use std::path::{Path, PathBuf};
use toolgate_core::Workspace;

/// The canary text outside the workspace.
pub const CANARY: &str = "CANARY-OUT";

/// A temporary directory `T` with `T/ws` (the workspace) and `T/outside/secret.txt`; removed
/// on drop.
pub struct TempWorkspace {
    dir: tempfile::TempDir,
    workspace: Workspace,
}

impl TempWorkspace {
    /// Creates the layout.
    ///
    /// # Panics
    /// When the temporary directory cannot be created (a test environment fault).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("creating a temporary directory");
        std::fs::create_dir_all(dir.path().join("ws")).expect("creating ws");
        std::fs::create_dir_all(dir.path().join("outside")).expect("creating outside");
        std::fs::write(dir.path().join("outside/secret.txt"), format!("{CANARY}\n"))
            .expect("writing the canary");
        let workspace = Workspace::open(dir.path().join("ws")).expect("opening ws");
        TempWorkspace { dir, workspace }
    }

    /// `T`.
    pub fn t(&self) -> &Path {
        self.dir.path()
    }

    /// `T/ws`.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// The workspace.
    pub fn workspace(&self) -> Workspace {
        self.workspace.clone()
    }

    /// Writes `content` to `T/ws/rel`, creating parents.
    ///
    /// # Panics
    /// On I/O errors (a test environment fault).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("creating parents");
        }
        std::fs::write(&p, content).expect("writing a fixture file");
        p
    }

    /// Runs a POSIX shell `setup` snippet in `T`, as the security cases describe.
    ///
    /// # Panics
    /// When the snippet fails.
    pub fn sh(&self, setup: &str) {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(setup)
            .current_dir(self.t())
            .status()
            .expect("running sh");
        assert!(status.success(), "setup failed: {setup}");
    }
}

impl Default for TempWorkspace {
    fn default() -> Self {
        Self::new()
    }
}
