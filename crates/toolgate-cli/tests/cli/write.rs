//! write_file and edit_file through `toolgate call`: they ask for approval (`--yes` gives
//! it), write atomically inside the workspace, and refuse protected paths and paths outside.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;

#[test]
fn write_and_edit_need_approval_and_then_change_real_files() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    let write = r#"{"path":"src/new.rs","content":"pub fn a() {}\r\npub fn b() {}\r\n"}"#;
    // no --yes: nobody approves, the call is rejected (fatal, exit 4) and nothing is written
    let out = toolgate(
        &["call", "write_file", write, "-w", w, "--no-audit"],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(json(&out)["error"]["kind"], "approval_rejected");
    assert!(!ws.join("src/new.rs").exists());
    let out = toolgate(
        &["call", "write_file", write, "-w", w, "--no-audit", "--yes"],
        t.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json(&out);
    assert_eq!(
        v["structured_content"],
        serde_json::json!({"path": "src/new.rs", "bytes_written": 30, "created": true})
    );
    let edit = r#"{"path":"src/new.rs","old_string":"pub fn b() {}\n","new_string":"pub fn b() {}\npub fn c() {}\n"}"#;
    let out = toolgate(
        &["call", "edit_file", edit, "-w", w, "--no-audit", "--yes"],
        t.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json(&out);
    assert_eq!(v["structured_content"]["replacements"], 1);
    assert_eq!(v["structured_content"]["line_ending"], "crlf");
    assert!(v["structured_content"]["diff"]
        .as_str()
        .unwrap()
        .contains("+pub fn c() {}\n"));
    assert_eq!(
        std::fs::read(ws.join("src/new.rs")).unwrap(),
        b"pub fn a() {}\r\npub fn b() {}\r\npub fn c() {}\r\n"
    );
}

#[test]
fn protected_and_outside_paths_are_recoverable_refusals() {
    let t = tree();
    let ws = t.path().join("ws");
    let w = ws.to_str().unwrap();
    for (args, reason) in [
        (
            r#"{"path":".toolgate/policy.toml","content":"x"}"#,
            "protected_path",
        ),
        (r#"{"path":".git/config","content":"x"}"#, "protected_path"),
        (
            r#"{"path":"../outside/secret.txt","content":"x"}"#,
            "path_outside_workspace",
        ),
    ] {
        let out = toolgate(
            &["call", "write_file", args, "-w", w, "--no-audit", "--yes"],
            t.path(),
        );
        assert_eq!(out.status.code(), Some(3), "{args}");
        let v = json(&out);
        assert_eq!(v["error"]["kind"], "unsafe_input");
        assert_eq!(v["error"]["reason"], reason);
    }
    // (the CLI keeps its own store under .toolgate/; the policy file was not created)
    assert!(!ws.join(".toolgate/policy.toml").exists() && !ws.join(".git").exists());
    assert_eq!(
        std::fs::read_to_string(t.path().join("outside/secret.txt")).unwrap(),
        "CANARY-OUT\n"
    );
}
