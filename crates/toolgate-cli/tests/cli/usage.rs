//! What a new user meets in the first hour at the command line: usage errors exit 2, an
//! unknown profile lists the ones there are, logs written to a file hold no colour codes, a
//! grant that covers no tool says so, a call nobody could approve says how to let it run, and
//! a session made for one call ends with it (its session grant too).

use super::{json, toolgate, tree};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use toolgate_test_support::clients::python_script;

const WRITE: &str = r#"{"path":"a.txt","content":"hello\n"}"#;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_since_is_a_usage_error() {
    let t = tree();
    let ws = t.path().join("ws");
    let dir = ws.to_str().unwrap();
    for command in ["audit", "stats"] {
        for bad in ["yesterday", "3x", "", "2026-13-01T00:00:00Z"] {
            let out = toolgate(&[command, "--since", bad, "-w", dir], &ws);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} {bad:?}: {}",
                stderr(&out)
            );
            let e = stderr(&out);
            assert!(e.contains("--since"), "{e}");
            assert!(e.contains("such as 1h or 30m"), "{e}");
        }
        // a good one is no usage error (the workspace has no store yet: exit 0 or 1, not 2)
        let out = toolgate(&[command, "--since", "1h", "-w", dir], &ws);
        assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    }
}

#[test]
fn an_unknown_profile_lists_the_profiles_there_are() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[profiles.orders]\ntools = [\"read_file\"]\n",
    )
    .unwrap();
    let dir = ws.to_str().unwrap();
    let serve = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--profile", "nope", "-w", dir])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    for out in [
        toolgate(&["tools", "--profile", "nope", "-w", dir], &ws),
        toolgate(
            &["call", "read_file", "{}", "--profile", "nope", "-w", dir],
            &ws,
        ),
        serve,
    ] {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let e = stderr(&out);
        assert!(e.contains("profile nope"), "{e}");
        let defined = e.split("defined: ").nth(1).unwrap_or_default().trim();
        let mut names: Vec<&str> = defined.split(", ").collect();
        names.sort_unstable();
        assert_eq!(names, ["default", "explore", "orders"], "{e}");
    }
}

#[test]
fn logs_written_to_a_file_carry_no_colour_codes() {
    let t = tree();
    let ws = t.path().join("ws");
    let log = t.path().join("toolgate.log");
    let status = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "read_file", r#"{"path":"nope.txt"}"#, "-w"])
        .arg(&ws)
        .env("TOOLGATE_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("tool call failed"),
        "the debug log was written: {text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "escape codes in a log file: {text:?}"
    );
}

#[test]
fn a_grant_pattern_that_matches_no_tool_warns() {
    let t = tree();
    let ws = t.path().join("ws");
    let dir = ws.to_str().unwrap();
    let out = toolgate(
        &["approvals", "grant", "--tool", "write-file", "-w", dir],
        &ws,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("warning"), "{e}");
    assert!(e.contains("matches none of the tools"), "{e}");
    assert!(e.contains("did you mean write_file?"), "{e}");
    // patterns that cover a tool say nothing
    for pattern in ["write_file", "*_file", "*"] {
        let out = toolgate(&["approvals", "grant", "--tool", pattern, "-w", dir], &ws);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "{pattern}");
    }
}

/// Without a terminal nobody can answer: the model is told that nobody could be asked and
/// nothing changed, and the operator how to let such calls run; doing what it says works.
#[test]
fn a_call_nobody_could_approve_says_how_to_allow_it() {
    let t = tree();
    let ws = t.path().join("ws");
    let dir = ws.to_str().unwrap();
    let out = toolgate(&["call", "write_file", WRITE, "-w", dir], &ws);
    assert_eq!(out.status.code(), Some(4), "fatal: {}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "approval_rejected");
    assert_eq!(v["error"]["reason"], "nobody_to_ask");
    let m = v["error"]["message"].as_str().unwrap();
    for says in [
        "nobody could be asked",
        "nothing was changed",
        "decision = \"allow\"",
        "toolgate approvals grant --tool write_file",
    ] {
        assert!(m.contains(says), "{says}: {m}");
    }
    assert!(!m.contains("risk.destructive"), "{m}");
    assert_eq!(v["error"]["details"]["rule"], "risk.destructive");
    assert!(!ws.join("a.txt").exists());
    let grant = toolgate(
        &[
            "approvals",
            "grant",
            "--tool",
            "write_file",
            "--expires",
            "1h",
            "-w",
            dir,
        ],
        &ws,
    );
    assert!(grant.status.success(), "{}", stderr(&grant));
    let out = toolgate(&["call", "write_file", WRITE, "-w", dir], &ws);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "hello\n"
    );
}

/// `toolgate call` without `--session` runs in a session of its own, which ends with the call:
/// a `session` answer at the prompt leaves a grant that is listed as expired, not active.
#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn a_session_made_for_one_call_ends_with_it() {
    let t = tree();
    let ws = t.path().join("ws");
    let Some(mut driver) =
        python_script(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/tty_driver.py"))
    else {
        return;
    };
    let io = tempfile::tempdir().unwrap();
    std::fs::write(io.path().join("stdin"), "").unwrap();
    let steps = serde_json::json!([{"expect": "[f]eedback: ", "send": "s\n"}]);
    let out = driver
        .arg("--script")
        .arg(steps.to_string())
        .arg("--stdin")
        .arg(io.path().join("stdin"))
        .arg("--stdout")
        .arg(io.path().join("stdout"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "write_file", WRITE, "-w"])
        .arg(&ws)
        .current_dir(&ws)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exit"], 0, "{report:#}");
    let dir = ws.to_str().unwrap();
    let listed = |args: &[&str]| -> Vec<Value> {
        let mut all = vec!["approvals", "list", "--json", "-w", dir];
        all.extend_from_slice(args);
        let out = toolgate(&all, &ws);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert!(
        listed(&[]).is_empty(),
        "no grant of an ended session is active"
    );
    let all = listed(&["--all"]);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(
        (&all[0]["scope"], &all[0]["state"]),
        (&"session".into(), &"expired".into())
    );
}

/// The README's synopsis (`## The command line`) names exactly the flags each command's
/// `--help` lists, for every command.
#[test]
fn the_readme_synopsis_matches_every_commands_help() {
    let readme = include_str!("../../../../README.md");
    let section = readme
        .split("## The command line")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("the synopsis block");
    let mut synopsis: Vec<(String, std::collections::BTreeSet<String>)> = Vec::new();
    for line in section.lines() {
        if let Some(rest) = line.strip_prefix("toolgate ") {
            let command: Vec<&str> = rest
                .split_whitespace()
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
                .collect();
            synopsis.push((command.join(" "), Default::default()));
        }
        if let Some((_, flags)) = synopsis.last_mut() {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if word.starts_with("--") && word.len() > 2 {
                    flags.insert(word.to_string());
                }
            }
        }
    }
    let commands: Vec<&str> = synopsis.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        commands,
        [
            "tools",
            "call",
            "check",
            "validate",
            "export",
            "eval retrieval",
            "audit",
            "audit verify",
            "stats",
            "serve",
            "approvals list",
            "approvals revoke",
            "approvals grant",
            "ledger list",
            "ledger resolve",
            "upstream list",
            "upstream diff",
            "upstream approve"
        ]
    );
    let t = tree();
    for (command, flags) in &synopsis {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let out = toolgate(&args, t.path());
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let help = String::from_utf8_lossy(&out.stdout);
        let listed: std::collections::BTreeSet<String> = help
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let l = l
                    .strip_prefix("-")
                    .filter(|r| r.chars().nth(1) == Some(','))
                    .map_or(l, |r| r[2..].trim_start());
                l.strip_prefix("--").map(|r| {
                    format!(
                        "--{}",
                        r.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                            .next()
                            .unwrap()
                    )
                })
            })
            .filter(|f| f != "--help")
            .collect();
        assert_eq!(
            flags, &listed,
            "toolgate {command}: the README's synopsis against --help"
        );
    }
}
