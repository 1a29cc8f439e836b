//! The issue's "done when" through `toolgate call`: an agent profile with write tools (the
//! `default` profile, which has every built-in) edits a real Rust crate and runs its tests
//! with `cargo test --offline` in run_shell's sandbox, network off; edits that cannot apply
//! change nothing.

use super::{json, toolgate};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A crate with no dependencies whose one test fails: `add` subtracts.
pub const LIB_RS: &str = "/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n\n    #[test]\n    fn adds_negatives() {\n        assert_eq!(super::add(-1, -2), -3);\n    }\n}\n";

/// Writes the crate into `ws`.
pub fn write_crate(ws: &Path) {
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/lib.rs"), LIB_RS).unwrap();
}

/// `toolgate call TOOL ARGS` as the `default` profile in `ws`, approved (`--yes`), audited to
/// the workspace's store.
fn call(ws: &Path, tool: &str, args: &Value) -> (Option<i32>, Value) {
    let out: Output = toolgate(
        &[
            "call",
            tool,
            &args.to_string(),
            "--workspace",
            ws.to_str().unwrap(),
            "--profile",
            "default",
            "--session",
            "project",
            "--id",
            &format!("{tool}-{}", rand_suffix()),
            "--yes",
        ],
        ws,
    );
    (out.status.code(), json(&out))
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A listener on 127.0.0.1 that counts the connections it accepts, to show that a command
/// reaching for it does not get through.
fn canary() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            h.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut s) = stream {
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let _ = s.read(&mut [0u8; 64]);
            }
        }
    });
    (port, hits)
}

#[test]
fn the_default_profile_edits_a_crate_and_its_tests_pass_offline_in_the_sandbox() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    write_crate(&ws);

    // the profile has the write tools and run_shell; the read-only `explore` does not
    let out = toolgate(&["tools", "--profile", "default", "--format", "json"], &ws);
    let listed = json(&out);
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for want in ["read_file", "edit_file", "write_file", "run_shell"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let out = toolgate(&["tools", "--profile", "explore", "--format", "json"], &ws);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"run_shell\""));

    // the test fails before the fix: an ordinary result with exit code 101
    let cargo_test =
        serde_json::json!({"command": "cargo test --offline 2>&1", "timeout_ms": 300000});
    let (code, before) = call(&ws, "run_shell", &cargo_test);
    assert_eq!(code, Some(0), "{before:#}");
    let s = &before["structured_content"];
    assert_eq!(s["exit_code"], 101, "{s:#}");
    assert_eq!(s["sandboxed"], true);
    assert!(
        s["stdout"]
            .as_str()
            .unwrap()
            .contains("test result: FAILED"),
        "{s:#}"
    );

    // edits that cannot apply are recoverable errors (exit 3) and change nothing
    for (args, reason) in [
        (
            serde_json::json!({"path": "src/lib.rs", "old_string": "a * b", "new_string": "a + b"}),
            "no_match",
        ),
        (
            serde_json::json!({"path": "src/lib.rs", "old_string": "assert_eq!(super::add(", "new_string": "assert_ne!(super::add("}),
            "ambiguous_match",
        ),
        (
            serde_json::json!({"path": "../ws/../outside.rs", "old_string": "a", "new_string": "b"}),
            "path_outside_workspace",
        ),
    ] {
        let (code, r) = call(&ws, "edit_file", &args);
        assert_eq!(code, Some(3), "{r:#}");
        assert_eq!(r["is_error"], true);
        assert_eq!(r["error"]["reason"], reason, "{r:#}");
        assert_eq!(
            std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
            LIB_RS
        );
    }
    // a bad argument shape is refused before anything runs
    let (code, r) = call(&ws, "edit_file", &serde_json::json!({"path": "src/lib.rs"}));
    assert_eq!(code, Some(3), "{r:#}");
    assert_eq!(r["error"]["kind"], "invalid_arguments");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        LIB_RS
    );

    // the fix, with its diff in the structured output
    let (code, fixed) = call(
        &ws,
        "edit_file",
        &serde_json::json!({"path": "src/lib.rs", "old_string": "    a - b\n", "new_string": "    a + b\n"}),
    );
    assert_eq!(code, Some(0), "{fixed:#}");
    let s = &fixed["structured_content"];
    assert_eq!(s["replacements"], 1);
    let diff = s["diff"].as_str().unwrap();
    assert!(
        diff.contains("-    a - b\n") && diff.contains("+    a + b\n"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        LIB_RS.replace("a - b", "a + b")
    );

    // now the tests pass, in the sandbox, with the network off: a listener on the host's
    // loopback is not reachable from the command
    let (port, hits) = canary();
    let (code, after) = call(
        &ws,
        "run_shell",
        &serde_json::json!({
            "command": format!("cargo test --offline 2>&1; status=$?; (echo x > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo NET-REACHED; exit $status"),
            "timeout_ms": 300000
        }),
    );
    assert_eq!(code, Some(0), "{after:#}");
    let s = &after["structured_content"];
    let stdout = s["stdout"].as_str().unwrap();
    assert_eq!(s["exit_code"], 0, "{stdout}");
    assert!(
        stdout.contains("test result: ok. 2 passed; 0 failed"),
        "{stdout}"
    );
    assert!(!stdout.contains("NET-REACHED"), "{stdout}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert!(s["duration_ms"].as_u64().is_some());
    // the build went into the workspace's own target directory
    assert!(ws.join("target/debug").is_dir());

    // every call is in the workspace's audit log, chained and intact
    let out = toolgate(
        &[
            "audit",
            "--session",
            "project",
            "--json",
            "--workspace",
            ws.to_str().unwrap(),
        ],
        &ws,
    );
    let records: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tools: Vec<&str> = records
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "run_shell",
            "edit_file",
            "edit_file",
            "edit_file",
            "edit_file",
            "edit_file",
            "run_shell"
        ]
    );
    let out = toolgate(
        &["audit", "verify", "--workspace", ws.to_str().unwrap()],
        &ws,
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn without_approval_nothing_is_edited_or_run() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    write_crate(&ws);
    let w = ws.to_str().unwrap();
    for (tool, args) in [
        (
            "edit_file",
            r#"{"path":"src/lib.rs","old_string":"    a - b\n","new_string":"    a + b\n"}"#,
        ),
        (
            "run_shell",
            r#"{"command":"cargo test --offline; touch ran"}"#,
        ),
    ] {
        let out = toolgate(&["call", tool, args, "-w", w, "--no-audit"], &ws);
        assert_eq!(out.status.code(), Some(4), "{tool}");
        assert_eq!(json(&out)["error"]["kind"], "approval_rejected");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        LIB_RS
    );
    assert!(!ws.join("ran").exists() && !ws.join("target").exists());
}
