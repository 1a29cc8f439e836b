//! The body of the `path_resolver` fuzz target: arbitrary path strings resolved by
//! `toolgate_core::Workspace::resolve` on a small tree full of symbolic links, checked never
//! to escape the workspace root and never to panic.
//!
//! This file has no dependency beyond `toolgate-core`, `tempfile` and std, so the same code
//! runs under libFuzzer (`fuzz_targets/path_resolver.rs`) and in the stable test suite of
//! toolgate-tools (`crates/toolgate-tools/tests/cases/resolver_fuzz.rs`), which replays
//! every saved input in `fuzz/regressions/path_resolver/` and a bounded random run.
//!
//! The tree, in a fresh temporary directory `T` (kept for the life of the process):
//!
//! ```text
//! T/ws/a/b/c.txt          T/ws/a/link_up -> ..              T/ws/a/link_out -> ../../outside
//! T/ws/file.txt           T/ws/abs_out -> T/outside         T/ws/abs_in -> T/ws/a
//! T/outside/secret.txt    T/ws/loop1 -> loop2 -> loop1      T/ws/self -> .
//! T/ws-evil/x             T/ws/deep -> a/b                  T/ws/up2 -> a/../..
//!                         T/ws/dangling_out -> ../outside/nope
//!                         T/ws/dangling_in -> missing/x     T/ws/abs_file -> T/ws/a/b/c.txt
//! ```
//!
//! What is checked for every input, on the result of `resolve`:
//!
//! 1. nothing panics;
//! 2. `Ok(p)`: `p` is `.` or only normal components (no `..`, no root); every prefix of `p`
//!    that exists is not a symbolic link, and its host path canonicalizes to itself under the
//!    root, so the deepest existing ancestor is inside the workspace;
//! 3. differential, against the operating system: when `realpath` of the input (joined to
//!    the root when relative) succeeds, it must lie under the root whenever `resolve`
//!    accepted the input, and then be exactly `root/p`. (`resolve` may refuse more than the
//!    OS would, for example `..` written after the root's own name in an absolute path; it
//!    may never accept a path the OS puts outside.)

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use toolgate_core::Workspace;

/// Names the structured inputs are built from.
const TOKENS: [&str; 24] = [
    "a",
    "b",
    "c.txt",
    "..",
    ".",
    "link_up",
    "link_out",
    "abs_out",
    "abs_in",
    "loop1",
    "self",
    "deep",
    "up2",
    "dangling_out",
    "dangling_in",
    "missing",
    "outside",
    "ws",
    "secret.txt",
    "file.txt",
    "",
    "ws-evil",
    "x",
    "\\..",
];

/// The tree and the workspace over `T/ws`.
pub struct Tree {
    _tmp: tempfile::TempDir,
    t: PathBuf,
    root: PathBuf,
    ws: Workspace,
}

impl Tree {
    /// Builds the tree described in the module docs.
    ///
    /// # Panics
    /// When the temporary directory cannot be set up (an environment fault, not a finding).
    pub fn new() -> Tree {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let t = tmp
            .path()
            .canonicalize()
            .expect("canonical temporary directory");
        let ws = t.join("ws");
        for d in ["ws/a/b", "outside", "ws-evil"] {
            std::fs::create_dir_all(t.join(d)).expect("mkdir");
        }
        for (f, content) in [
            ("ws/a/b/c.txt", "c"),
            ("ws/file.txt", "f"),
            ("outside/secret.txt", "CANARY-OUT"),
            ("ws-evil/x", "x"),
        ] {
            std::fs::write(t.join(f), content).expect("write");
        }
        let links: [(PathBuf, &str); 12] = [
            ("..".into(), "a/link_up"),
            ("../../outside".into(), "a/link_out"),
            (t.join("outside"), "abs_out"),
            (ws.join("a"), "abs_in"),
            ("loop2".into(), "loop1"),
            ("loop1".into(), "loop2"),
            (".".into(), "self"),
            ("a/b".into(), "deep"),
            ("a/../..".into(), "up2"),
            ("../outside/nope".into(), "dangling_out"),
            ("missing/x".into(), "dangling_in"),
            (t.join("ws/a/b/c.txt"), "abs_file"),
        ];
        for (target, name) in links {
            symlink(target, ws.join(name)).expect("symlink");
        }
        let workspace = Workspace::open(&ws).expect("open the workspace");
        Tree {
            _tmp: tmp,
            t,
            root: ws,
            ws: workspace,
        }
    }

    /// Turns fuzzer bytes into a path: a first byte that is even means the rest is the path
    /// (lossy UTF-8); odd means every following byte picks a token of [`TOKENS`], joined
    /// by `/`, made absolute under `T` or the root when the first byte says so.
    pub fn path_from(&self, data: &[u8]) -> String {
        let Some((&mode, rest)) = data.split_first() else {
            return String::new();
        };
        if mode % 2 == 0 {
            return String::from_utf8_lossy(rest).into_owned();
        }
        let mut s = match mode % 8 {
            1 => String::new(),
            3 => format!("{}/", self.root.display()),
            5 => format!("{}/", self.t.display()),
            _ => "/".to_string(),
        };
        let parts: Vec<&str> = rest
            .iter()
            .map(|b| TOKENS[usize::from(*b) % TOKENS.len()])
            .collect();
        s.push_str(&parts.join("/"));
        s
    }

    /// Resolves `input` and checks the result (see the module docs).
    ///
    /// # Panics
    /// When a check fails: that is the finding.
    pub fn check(&self, input: &str) {
        let resolved = self.ws.resolve(input);
        let os = self.os_realpath(input);
        let Ok(p) = resolved else {
            return;
        };
        let rel = p.as_path();
        assert!(
            p.is_root() || rel.components().all(|c| matches!(c, Component::Normal(_))),
            "{input:?} resolved to a path that is not canonical: {rel:?}"
        );
        let mut prefix = self.root.clone();
        for c in rel.components() {
            if let Component::Normal(n) = c {
                prefix.push(n);
            }
            let Ok(meta) = std::fs::symlink_metadata(&prefix) else {
                break;
            };
            assert!(
                !meta.file_type().is_symlink(),
                "{input:?} resolved through a symbolic link: {prefix:?}"
            );
            let real = std::fs::canonicalize(&prefix);
            if let Ok(real) = real {
                assert!(
                    real.starts_with(&self.root),
                    "{input:?} resolved to {rel:?}, whose part {prefix:?} is really {real:?}, \
                     outside the root"
                );
            }
        }
        if let Some(real) = os {
            assert!(
                real.starts_with(&self.root),
                "{input:?} was accepted as {rel:?}, but the OS resolves it to {real:?}, outside \
                 the root"
            );
            let expected = if p.is_root() {
                self.root.clone()
            } else {
                self.root.join(rel)
            };
            assert_eq!(real, expected, "{input:?}: resolve and the OS disagree");
        }
    }

    /// What the OS makes of `input` (joined to the root when relative), when every
    /// component exists.
    fn os_realpath(&self, input: &str) -> Option<PathBuf> {
        if input.contains('\0') {
            return None;
        }
        let p = Path::new(input);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        };
        std::fs::canonicalize(full).ok()
    }
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

/// The fuzz target's entry point: one input against a tree built once per process.
pub fn run(data: &[u8]) {
    static TREE: OnceLock<Tree> = OnceLock::new();
    let tree = TREE.get_or_init(Tree::new);
    let path = tree.path_from(data);
    tree.check(&path);
}
