//! The write tools' cases of `shared/cases/security.jsonl`, each generalized to its class:
//! writes through links (symbolic and hard), a parent swapped for a link while calls run,
//! and protected paths.

use super::write_support::*;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::ErrorKind;
use toolgate_tools::fs::edit_file::EditFileOutput;
use toolgate_tools::fs::write_file::WriteFileOutput;

/// A write_file call and an edit_file call of `path` that would replace the canary.
fn write_calls(path: &str) -> [(&'static str, Value); 2] {
    [
        ("write_file", json!({"path": path, "content": "PWNED\n"})),
        (
            "edit_file",
            json!({"path": path, "old_string": CANARY, "new_string": "PWNED"}),
        ),
    ]
}

/// fs-edit-through-link-06 (path_symlink_escape): a link inside the workspace that leads
/// out, to a file or a directory, relative or absolute, chained, dangling or above the root,
/// is refused by both write tools with path_outside_workspace; nothing outside changes or
/// appears, the links stay as they were, and the approver is never asked.
#[tokio::test]
async fn fs_edit_through_link_06_links_out_are_refused_by_both_tools() {
    let w = Ws::new();
    w.link("../outside/secret.txt", "conf.txt");
    w.link(w.t.join("outside/secret.txt"), "abs-conf.txt");
    w.link("conf.txt", "chain.txt");
    w.link("../outside", "out");
    w.link("../outside/new.txt", "dangling.txt");
    w.link("..", "up");
    w.link("../../outside", "sub/up");
    for path in [
        "conf.txt".to_string(),
        "abs-conf.txt".to_string(),
        "chain.txt".to_string(),
        "out/secret.txt".to_string(),
        "out/new.txt".to_string(),
        "dangling.txt".to_string(),
        "up/outside/secret.txt".to_string(),
        "sub/up/secret.txt".to_string(),
        "../outside/secret.txt".to_string(),
        w.abs("outside/secret.txt"),
        w.abs("ws/../outside/secret.txt"),
    ] {
        for (tool, args) in write_calls(&path) {
            let r = w.call(tool, args).await;
            assert_outside(&r);
            assert!(r.is_recoverable(), "{tool} {path}");
        }
    }
    w.assert_outside_untouched();
    assert_eq!(
        std::fs::read_link(w.ws().join("conf.txt")).unwrap(),
        std::path::Path::new("../outside/secret.txt")
    );
    assert_eq!(w.asked(), 0);
}

/// Links that stay inside the workspace are written at their resolved target; the link
/// itself is left as it is.
#[tokio::test]
async fn links_inside_are_written_at_their_target() {
    let w = Ws::new();
    w.write("real/conf.txt", "key = 1\n");
    w.link("real/conf.txt", "conf.txt");
    w.link("real", "alias");
    let o: WriteFileOutput = out(&w
        .call(
            "write_file",
            json!({"path": "conf.txt", "content": "key = 2\n"}),
        )
        .await);
    assert_eq!(o.path, "real/conf.txt");
    let o: EditFileOutput = out(&w
        .call(
            "edit_file",
            json!({"path": "alias/conf.txt", "old_string": "2", "new_string": "3"}),
        )
        .await);
    assert_eq!(o.path, "real/conf.txt");
    let o: WriteFileOutput = out(&w
        .call(
            "write_file",
            json!({"path": "alias/new.txt", "content": "n"}),
        )
        .await);
    assert_eq!(o.path, "real/new.txt");
    assert_eq!(w.read("real/conf.txt").unwrap(), b"key = 3\n");
    assert!(std::fs::symlink_metadata(w.ws().join("conf.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(list(&w.ws().join("real")), ["conf.txt", "new.txt"]);
}

/// Hard links: a file of the workspace with another name (outside or not) is neither
/// shown nor changed by either tool; the outside file keeps its content.
#[tokio::test]
async fn hard_links_to_outside_files_are_refused() {
    let w = Ws::new();
    std::fs::hard_link(w.t.join("outside/secret.txt"), w.ws().join("linked.txt")).unwrap();
    w.write("a.txt", "inside\n");
    std::fs::hard_link(w.ws().join("a.txt"), w.ws().join("b.txt")).unwrap();
    for path in ["linked.txt", "a.txt", "b.txt"] {
        for (tool, args) in write_calls(path) {
            let r = w.call(tool, args).await;
            assert_err(&r, ErrorKind::UnsafeInput, Some("hard_link"));
        }
    }
    let r = w
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "inside", "new_string": "x"}),
        )
        .await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("hard_link"));
    assert_eq!(
        std::fs::read_to_string(w.ws().join("linked.txt")).unwrap(),
        format!("{CANARY}\n")
    );
    assert_eq!(w.read("b.txt").unwrap(), b"inside\n");
    w.assert_outside_untouched();
}

/// protected-gitconfig-43 and protected-own-config-45 (protected_path): `.git` internals at
/// any depth and in any spelling, toolgate's store and configuration, and links to them, are
/// refused by both tools before approval; nothing is created or changed.
#[tokio::test]
async fn protected_gitconfig_43_and_own_config_45_are_refused() {
    let w = Ws::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(w.ws())
        .status();
    if !matches!(git, Ok(s) if s.success()) {
        w.write(".git/config", "[core]\n\tbare = false\n");
    }
    std::fs::create_dir_all(w.ws().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(w.ws().join(".toolgate")).unwrap();
    w.write("vendor/lib/.git/config", "[core]\n");
    w.write("toolgate.toml", "[policy]\n");
    w.link(".git/hooks", "hooks");
    w.link(".git/config", "innocent.cfg");
    let config_before = w.read(".git/config").unwrap();
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/hooks/post-checkout",
        ".git",
        ".GIT/config",
        ".git./config",
        "vendor/lib/.git/config",
        ".toolgate/policy.toml",
        ".toolgate/audit.jsonl",
        ".TOOLGATE/policy.toml",
        "sub/.toolgate/policy.toml",
        "toolgate.toml",
        "Toolgate.toml",
        "hooks/pre-commit",
        "innocent.cfg",
    ] {
        let r = w
            .call(
                "write_file",
                json!({"path": path, "content": "[core]\n\tfsmonitor = ./x.sh\n"}),
            )
            .await;
        assert_err(&r, ErrorKind::UnsafeInput, Some("protected_path"));
        let r = w
            .call(
                "edit_file",
                json!({"path": path, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = ./x.sh"}),
            )
            .await;
        assert_err(&r, ErrorKind::UnsafeInput, Some("protected_path"));
    }
    assert_eq!(w.read(".git/config").unwrap(), config_before);
    assert_eq!(w.read(".git/hooks/pre-commit"), None);
    assert_eq!(list(&w.ws().join(".toolgate")), Vec::<String>::new());
    assert!(!w.ws().join(".GIT").exists() || w.ws().join(".git").exists());
    assert!(!w.ws().join("sub").exists());
    assert_eq!(w.read("toolgate.toml").unwrap(), b"[policy]\n");
    assert_eq!(w.asked(), 0, "protected paths are refused before approval");
    // names that only look alike are ordinary files
    for path in [
        ".gitignore",
        ".github/workflows/ci.yml",
        "my.git/x",
        "toolgate.toml.bak",
    ] {
        let o: WriteFileOutput = out(&w
            .call("write_file", json!({"path": path, "content": "ok\n"}))
            .await);
        assert_eq!(o.path, path);
    }
}

/// protected-gitconfig-43 (protected_path), beyond `.git`: files that make the next editor
/// or agent run code or skip its approvals (VS Code settings and tasks, as in CVE-2025-53773;
/// a project's MCP server list, as `.cursor/mcp.json` in CVE-2025-54135; `.claude`,
/// `.idea`), hook runners and shell start-up files, at any depth and in any case, new or
/// existing, directly or through a link, are refused by both tools before approval.
#[tokio::test]
async fn protected_gitconfig_43_editor_agent_and_hook_files_are_refused() {
    let w = Ws::new();
    w.write(".vscode/settings.json", "{}\n");
    w.write(".husky/pre-commit", "npm test\n");
    w.link(".vscode", "editor");
    for path in [
        ".vscode/settings.json",
        ".vscode/tasks.json",
        ".VSCODE/tasks.json",
        "app/.vscode/settings.json",
        "editor/settings.json",
        ".idea/workspace.xml",
        ".claude/settings.json",
        ".cursor/mcp.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".mcp.json",
        "sub/.mcp.json",
        ".husky/pre-commit",
        ".gitconfig",
        ".bashrc",
        ".zshrc",
        ".profile",
        // every start-up file of bash, zsh, ksh and csh: zsh reads .zshenv for each script
        ".zshenv",
        ".zlogin",
        ".bash_login",
        ".bash_logout",
        ".cshrc",
        ".ssh/config",
        ".ssh/authorized_keys",
        // other agents' and editors' project settings, and VS Code's workspace file
        ".zed/settings.json",
        ".amazonq/mcp.json",
        ".roo/mcp.json",
        ".kiro/settings/mcp.json",
        ".continue/mcpServers/x.yaml",
        "opencode.json",
        ".aider.conf.yml",
        "team.code-workspace",
        // NTFS names .git's own directory stream so; the tools refuse it everywhere
        ".git::$INDEX_ALLOCATION/config",
        ".pre-commit-config.yml",
    ] {
        for (tool, args) in [
            (
                "write_file",
                json!({"path": path, "content": "{\"chat.tools.autoApprove\": true}\n"}),
            ),
            (
                "edit_file",
                json!({"path": path, "old_string": "{}", "new_string": "{\"x\": 1}"}),
            ),
        ] {
            let r = w.call(tool, args).await;
            assert_err(&r, ErrorKind::UnsafeInput, Some("protected_path"));
        }
    }
    assert_eq!(w.read(".vscode/settings.json").unwrap(), b"{}\n");
    assert_eq!(w.read(".husky/pre-commit").unwrap(), b"npm test\n");
    assert_eq!(list(&w.ws()), [".husky", ".vscode", "editor"]);
    assert_eq!(w.asked(), 0, "protected paths are refused before approval");
    // reading them is not writing them
    let r = w
        .call("read_file", json!({"path": ".vscode/settings.json"}))
        .await;
    assert_eq!(r.text(), "     1\t{}");
    // names that only look alike are ordinary files
    for path in [
        "vscode/settings.json",
        "docs/mcp.json",
        "bashrc.example",
        ".profile.d/x",
    ] {
        let o: WriteFileOutput = out(&w
            .call("write_file", json!({"path": path, "content": "ok\n"}))
            .await);
        assert_eq!(o.path, path);
    }
}

/// A host that allows protected paths explicitly gets them written; every other check stays.
#[tokio::test]
async fn protected_paths_can_be_allowed_by_the_host() {
    use toolgate_core::TypedTool;
    let w = Ws::new();
    w.write(".git/config", "[core]\n");
    let ctx = w.ctx();
    let tool = toolgate_tools::WriteFile::new().allow_protected_paths();
    let args = toolgate_tools::fs::write_file::WriteFileArgs {
        path: ".toolgate/policy.toml".into(),
        content: "x = 1\n".into(),
    };
    let o = tool.call(args, ctx.clone()).await.unwrap();
    assert!(o.created);
    let edit = toolgate_tools::EditFile::new().allow_protected_paths();
    let args = toolgate_tools::fs::edit_file::EditFileArgs {
        path: ".git/config".into(),
        old_string: "[core]".into(),
        new_string: "[core]\n\tbare = false".into(),
        replace_all: false,
    };
    edit.call(args, ctx.clone()).await.unwrap();
    assert_eq!(w.read(".git/config").unwrap(), b"[core]\n\tbare = false\n");
    let args = toolgate_tools::fs::write_file::WriteFileArgs {
        path: "../outside/x".into(),
        content: "x".into(),
    };
    let e = tool.call(args, ctx).await.unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("path_outside_workspace"));
    w.assert_outside_untouched();
}

/// Swaps `ws/sub` between the real directory and a link to `../outside`, until stopped.
/// When the link is not at `sub` it waits at `sub.l`; when the directory is not, at `sub.d`.
/// Three swaps in four are atomic (`renameat2(RENAME_EXCHANGE)`); the fourth is two plain
/// renames, leaving `sub` missing for a moment (a write may create a new `sub` then, which
/// is moved aside to `sub.junk.N`, inside the workspace). While `control.hold` is set it
/// stops between swaps, with `sub` in place, and says so in `control.held`.
fn swapper(ws: std::path::PathBuf, control: Arc<Control>) -> std::thread::JoinHandle<u64> {
    use rustix::fs::{renameat, renameat_with, RenameFlags};
    std::thread::spawn(move || {
        let dir = std::fs::File::open(&ws).unwrap();
        let mut junk = 0u32;
        // moves `from` to `sub`, moving aside a directory a write created there meanwhile
        let mut place = |from: &str| {
            for _ in 0..8 {
                if renameat(&dir, from, &dir, "sub").is_ok() {
                    return;
                }
                junk += 1;
                let _ = renameat(&dir, "sub", &dir, format!("sub.junk.{junk}").as_str());
            }
            panic!("the swapper could not put {from} back at sub");
        };
        let mut link_at_sub = false;
        let mut swaps = 0u64;
        while !control.stop.load(Ordering::Relaxed) {
            if control.hold.load(Ordering::Acquire) {
                control.held.store(true, Ordering::Release);
                while control.hold.load(Ordering::Acquire) && !control.stop.load(Ordering::Relaxed)
                {
                    std::thread::sleep(Duration::from_micros(50));
                }
                control.held.store(false, Ordering::Release);
                continue;
            }
            let (waiting, parked) = if link_at_sub {
                ("sub.d", "sub.l")
            } else {
                ("sub.l", "sub.d")
            };
            if swaps % 4 < 3 {
                renameat_with(&dir, "sub", &dir, waiting, RenameFlags::EXCHANGE).unwrap();
                renameat(&dir, waiting, &dir, parked).unwrap();
            } else {
                renameat(&dir, "sub", &dir, parked).unwrap();
                place(waiting);
            }
            link_at_sub = !link_at_sub;
            swaps += 1;
            // a short pause, so some calls run between swaps and not only across them
            std::thread::sleep(Duration::from_micros(50));
        }
        swaps
    })
}

/// What the test and [`swapper`] share: `stop` ends the swapper; `hold` asks it to stop
/// between swaps, which it confirms with `held`.
#[derive(Default)]
struct Control {
    stop: AtomicBool,
    hold: AtomicBool,
    held: AtomicBool,
}

/// fs-toctou-write-10 (toctou_race): while a helper thread swaps `ws/sub` between a real
/// directory and a symlink to `../outside`, 1200 calls (write_file, the last 200 edit_file)
/// to `sub/...` each either write inside the workspace or fail with path_outside_workspace
/// (or, when `sub` is missing for a moment, not_found); `outside/out.txt` is never created.
/// Every 25th call is a write_file with the swapper held, `sub` still: it must write when `sub` is the
/// directory and be refused when it is the link, so both outcomes are seen however the calls
/// and the swaps are scheduled (a loaded machine once let no racing write through).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_toctou_write_10_a_swapped_parent_never_leads_a_write_out() {
    let w = Ws::new();
    std::fs::create_dir_all(w.ws().join("sub")).unwrap();
    std::os::unix::fs::symlink("../outside", w.ws().join("sub.l")).unwrap();
    let control = Arc::new(Control::default());
    let helper = swapper(w.ws(), control.clone());
    // stops the swapper however the test ends, before the tree is removed
    struct StopOnDrop(Arc<Control>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.stop.store(true, Ordering::Relaxed);
        }
    }
    let _stop = StopOnDrop(control.clone());
    let (mut written, mut refused, mut missing) = (0u32, 0u32, 0u32);
    let (mut still_dir, mut still_link) = (0u32, 0u32);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mut i = 0u32;
    // the racing calls, then still calls until each state was seen twice
    while i < 1200 || still_dir < 2 || still_link < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the calls take less than two minutes (call {i}, {still_dir} still calls in the \
             directory, {still_link} at the link)"
        );
        if i % 25 == 24 || i >= 1200 {
            control.hold.store(true, Ordering::Release);
            while !control.held.load(Ordering::Acquire) {
                assert!(tokio::time::Instant::now() < deadline, "the swapper stops");
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
            let link = std::fs::symlink_metadata(w.ws().join("sub"))
                .unwrap()
                .file_type()
                .is_symlink();
            let r = w
                .call(
                    "write_file",
                    json!({"path": "sub/out.txt", "content": "STILL"}),
                )
                .await;
            let reason = r.error.as_ref().and_then(|e| e.reason.as_deref());
            if link {
                assert_eq!(reason, Some("path_outside_workspace"), "{}", r.text());
                still_link += 1;
            } else {
                assert_eq!(reason, None, "{}", r.text());
                still_dir += 1;
            }
            control.hold.store(false, Ordering::Release);
            while control.held.load(Ordering::Acquire) {
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
            assert!(
                !w.t.join("outside/out.txt").exists(),
                "still call {i} wrote outside the workspace"
            );
            i += 1;
            continue;
        }
        let (tool, args) = if i < 1000 {
            (
                "write_file",
                json!({"path": "sub/out.txt", "content": "RACE"}),
            )
        } else {
            (
                "edit_file",
                json!({"path": "sub/out.txt", "old_string": "RACE", "new_string": "RACE"
                    .to_string() + "!"}),
            )
        };
        let r = tokio::time::timeout_at(deadline, w.call(tool, args))
            .await
            .expect("the calls take less than two minutes");
        match r.error.as_ref().map(|e| (e.kind, e.reason.as_deref())) {
            None => written += 1,
            Some((ErrorKind::UnsafeInput, Some("path_outside_workspace"))) => refused += 1,
            Some((ErrorKind::ToolFailed, Some("not_found" | "no_match"))) => missing += 1,
            Some(other) => panic!("call {i} ({tool}): unexpected {other:?}: {}", r.text()),
        }
        assert!(
            !w.t.join("outside/out.txt").exists(),
            "call {i} ({tool}) wrote outside the workspace"
        );
        i += 1;
    }
    control.stop.store(true, Ordering::Relaxed);
    let swaps = helper.join().unwrap();
    w.assert_outside_untouched();
    assert!(swaps > 0, "the swapper swapped");
    assert!(temp_files(&w.ws()).is_empty());
    eprintln!(
        "toctou: racing calls {written} written, {refused} refused, {missing} missing; still \
         calls {still_dir} in the directory, {still_link} at the link; {swaps} swaps"
    );
}
