//! Nothing left behind: the temporary files of writes a crash interrupted are hidden from
//! the tools and removed once stale (by `toolgate serve` at start, and by the next write in
//! their directory), never through a link; and a match deep in a long line is shown with
//! what is around it.

use super::{json, toolgate};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Older than a sweep's 15 minutes.
fn make_stale(path: &Path) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

struct Tree {
    _t: tempfile::TempDir,
    ws: PathBuf,
    stale: Vec<PathBuf>,
    fresh: PathBuf,
    outside: PathBuf,
}

/// A workspace with stale temporary files at several depths, a fresh one (a write in
/// progress), a link of the temporary name to a stale file outside, and ordinary files.
fn tree() -> Tree {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("src/deep/er")).unwrap();
    std::fs::create_dir_all(t.path().join("outside")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "fn main() {}\n").unwrap();
    let stale: Vec<PathBuf> = [
        ".toolgate-00000000000000a1.tmp",
        "src/.toolgate-00000000000000b2.tmp",
        "src/deep/er/.toolgate-00000000000000c3.tmp",
    ]
    .iter()
    .map(|p| ws.join(p))
    .collect();
    for p in &stale {
        std::fs::write(p, "fn main() { half written").unwrap();
        make_stale(p);
    }
    let fresh = ws.join("src/.toolgate-00000000000000d4.tmp");
    std::fs::write(&fresh, "being written").unwrap();
    let outside = t.path().join("outside/.toolgate-00000000000000e5.tmp");
    std::fs::write(&outside, "not the workspace's").unwrap();
    make_stale(&outside);
    std::os::unix::fs::symlink(&outside, ws.join("src/.toolgate-00000000000000f6.tmp")).unwrap();
    Tree {
        _t: t,
        ws,
        stale,
        fresh,
        outside,
    }
}

fn call(ws: &Path, tool: &str, args: &str) -> serde_json::Value {
    let out = toolgate(
        &[
            "call",
            tool,
            args,
            "--workspace",
            ws.to_str().unwrap(),
            "--yes",
        ],
        ws,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    json(&out)
}

#[test]
fn temporary_files_are_hidden_from_list_dir_glob_and_search() {
    let t = tree();
    for dir in [".", "src", "src/deep/er"] {
        let v = call(&t.ws, "list_dir", &format!(r#"{{"path":"{dir}"}}"#));
        let text = v["structured_content"].to_string();
        assert!(!text.contains(".toolgate-0"), "{dir}: {text}");
    }
    let v = call(&t.ws, "glob", r#"{"pattern":"**/.toolgate-*"}"#);
    assert_eq!(
        v["structured_content"]["paths"],
        serde_json::json!([]),
        "{v}"
    );
    let v = call(&t.ws, "glob", r#"{"pattern":"**/*.tmp"}"#);
    assert_eq!(
        v["structured_content"]["paths"],
        serde_json::json!([]),
        "{v}"
    );
    let v = call(
        &t.ws,
        "search_code",
        r#"{"pattern":"fn main","glob":".toolgate-*"}"#,
    );
    assert_eq!(v["structured_content"]["total_matches"], 0, "{v}");
    let v = call(&t.ws, "search_code", r#"{"pattern":"half written"}"#);
    assert_eq!(v["structured_content"]["total_matches"], 0, "{v}");
    // hidden, not removed: listing does not sweep
    assert!(t.stale.iter().all(|p| p.exists()));
}

#[test]
fn serve_removes_stale_temporary_files_at_start_and_nothing_else() {
    let t = tree();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--no-audit", "--workspace"])
        .arg(&t.ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while t.stale.iter().any(|p| p.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = serve.kill();
    let _ = serve.wait();
    for p in &t.stale {
        assert!(!p.exists(), "{} is still there", p.display());
    }
    assert!(
        t.fresh.exists(),
        "a write in progress keeps its temporary file"
    );
    assert!(
        t.outside.exists(),
        "nothing outside the workspace is removed"
    );
    let link = t.ws.join("src/.toolgate-00000000000000f6.tmp");
    assert!(
        link.symlink_metadata().is_ok(),
        "a link of the name is left alone"
    );
    assert!(t.ws.join("src/lib.rs").exists());
}

#[test]
fn a_write_sweeps_its_directory() {
    let t = tree();
    call(
        &t.ws,
        "write_file",
        r#"{"path":"src/new.rs","content":"x\n"}"#,
    );
    // src/ is swept; the directories the write did not touch wait for a serve or a write
    assert!(!t.stale[1].exists());
    assert!(t.stale[0].exists() && t.stale[2].exists());
    assert!(t.fresh.exists() && t.outside.exists());
}

#[test]
fn a_match_past_five_million_columns_is_shown_around_the_match() {
    let t = tempfile::tempdir().unwrap();
    let line = format!("{}NEEDLE-42{}\n", "x".repeat(5_000_000), "y".repeat(1_000));
    std::fs::write(t.path().join("wide.txt"), line).unwrap();
    let v = call(t.path(), "search_code", r#"{"pattern":"NEEDLE-\\d+"}"#);
    let m = &v["structured_content"]["matches"][0];
    assert_eq!(m["column"], 5_000_001);
    let text = m["text"].as_str().unwrap();
    assert!(
        text.starts_with("[... 4999900 bytes before ...] "),
        "{}",
        &text[..40]
    );
    assert!(
        text.contains(&format!("{}NEEDLE-42y", "x".repeat(100))),
        "{text}"
    );
    assert!(text.len() < 700, "{}", text.len());
}
