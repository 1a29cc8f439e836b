//! Approvals show everything they approve (issue 12, item 6), through the `toolgate` binary
//! at a real pseudo-terminal (`tests/clients/tty_driver.py`; skipped without
//! `TOOLGATE_TEST_PYTHON`, failing under CI): a line of 21 harmless commands and `touch x`
//! shows `touch x`; approving `python3 -m unittest` for the session lets that command run
//! again without a question, and `rm -rf` still asks (here nobody answers: rejected, nothing
//! removed); a line the question cannot show whole, or name in a grant, offers only this call,
//! and a line read without certainty is shown whole. The same over MCP, with the official
//! Python SDK answering the form (`tests/clients/approval_scope_client.py`), on 2025-11-25
//! (elicitation) and 2026-07-28 (input-required).

use super::approvals::{approvals, at_terminal_calling, lines, ASK};
use super::{json, toolgate};
use pretty_assertions::assert_eq;
use serde_json::{json as j, Value};
use std::path::Path;
use toolgate_test_support::clients::python_script;

fn shell(command: &str) -> String {
    j!({ "command": command }).to_string()
}

/// `toolgate call run_shell` with nobody at a terminal: a call that asks is rejected.
fn unattended(ws: &Path, session: &str, command: &str) -> Value {
    json(&toolgate(
        &[
            "call",
            "run_shell",
            &shell(command),
            "-w",
            ws.to_str().unwrap(),
            "--session",
            session,
        ],
        ws,
    ))
}

#[test]
fn a_session_approval_covers_the_commands_asked_about_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("victim")).unwrap();
    std::fs::write(ws.join("victim/keep.txt"), "keep\n").unwrap();
    std::fs::write(
        ws.join("test_a.py"),
        "import unittest\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n",
    )
    .unwrap();
    let echoes: Vec<String> = (0..21).map(|i| format!("echo {i}")).collect();
    let line = format!("{} && touch x", echoes.join(" && "));
    let Some(r) = at_terminal_calling(
        &ws,
        "run_shell",
        "s1",
        &shell(&line),
        j!([{"expect": ASK, "send": "n\n"}]),
    ) else {
        return;
    };
    assert!(
        r.transcript.contains("resource:  command touch x"),
        "{}",
        r.transcript
    );
    assert_eq!(r.transcript.matches("resource:  command echo").count(), 21);
    assert_eq!(r.result["error"]["kind"], "approval_rejected");
    assert!(!ws.join("x").exists());

    let r = at_terminal_calling(
        &ws,
        "run_shell",
        "s1",
        &shell("python3 -m unittest -q"),
        j!([{"expect": ASK, "send": "s\n"}]),
    )
    .unwrap();
    assert_eq!(r.exit, 0, "{}", r.transcript);
    assert!(
        r.transcript
            .contains("covers run_shell on command:python3 -m unittest -q only"),
        "{}",
        r.transcript
    );
    // the same command runs again in the session without a question; others still ask
    let again = unattended(&ws, "s1", "python3 -m unittest -q");
    assert_eq!(again["is_error"], false, "{again}");
    for other in [
        "rm -rf victim",
        "python3 -m unittest -q && rm -rf victim",
        "python3 -c 'import shutil; shutil.rmtree(\"victim\")'",
        "python3 -m unittestx",
    ] {
        let v = unattended(&ws, "s1", other);
        assert_eq!(v["error"]["kind"], "approval_rejected", "{other}: {v}");
        assert!(ws.join("victim/keep.txt").exists(), "{other}");
    }
    let g = &lines(&approvals(&ws, &["list", "--json"]))[0];
    assert_eq!(
        (&g["tool_pattern"], &g["resource_patterns"], &g["scope"]),
        (
            &Value::from("run_shell"),
            &j!(["command:python3 -m unittest -q"]),
            &Value::from("session")
        )
    );
}

#[test]
fn a_question_that_cannot_show_or_name_everything_offers_only_this_call() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // a variable whose value is only known when it runs, and a line past what is shown
    let many: Vec<String> = (0..201).map(|i| format!("echo {i}")).collect();
    // a heredoc whose command lies far past what an argument summary shows
    let padding: Vec<String> = (0..12)
        .map(|i| format!("echo {i} padding the line past what a summary shows"))
        .collect();
    let heredoc = format!("bash <<EOF\n{}\ntouch pwned\nEOF", padding.join("\n"));
    for (line, says) in [
        (heredoc, "  call:      touch pwned"),
        ("T=victim; rm -rf $T".to_string(), "cannot name exactly"),
        (many.join("; "), "NOT SHOWN: 1 more resource is not shown"),
        (
            "bash <<EOF\ntouch pwned\nEOF".to_string(),
            "the policy cannot name what this call does (shell.uncertain)",
        ),
    ] {
        let steps = j!([
            {"expect": ASK, "send": "s\n"},
            {"expect": "only this call can be approved", "send": "a\n"},
            {"expect": ASK, "send": "n\n"},
        ]);
        let Some(r) = at_terminal_calling(&ws, "run_shell", "s1", &shell(&line), steps) else {
            return;
        };
        assert!(r.transcript.contains(says), "{says}: {}", r.transcript);
        assert!(!r.transcript.contains("[s]ession"), "{}", r.transcript);
        assert_eq!(r.result["error"]["kind"], "approval_rejected");
    }
    assert!(lines(&approvals(&ws, &["list", "--json"])).is_empty());
    // a grant over the command a line names does not answer a line read without certainty;
    // only the whole tool, granted on purpose, does
    let grant = |extra: &[&str]| {
        let mut argv = vec!["grant", "--tool", "run_shell"];
        argv.extend_from_slice(extra);
        assert!(approvals(&ws, &argv).status.success());
    };
    grant(&["--resource", "command:bash"]);
    let line = "bash <<EOF\ntouch pwned\nEOF";
    assert_eq!(
        unattended(&ws, "s2", line)["error"]["kind"],
        "approval_rejected"
    );
    assert!(!ws.join("pwned").exists());
    grant(&[]);
    assert_eq!(unattended(&ws, "s2", line)["is_error"], false);
    assert!(ws.join("pwned").exists());
}

/// A workspace for the MCP client: a test module for `python3 -m unittest`, a directory
/// `rm -rf` would remove.
fn over_mcp(mode: &str) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("victim")).unwrap();
    std::fs::write(ws.join("victim/keep.txt"), "keep\n").unwrap();
    std::fs::write(
        ws.join("test_a.py"),
        "import unittest\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n",
    )
    .unwrap();
    let Some(mut client) = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/approval_scope_client.py"),
    ) else {
        return;
    };
    let argv = j!([env!("CARGO_BIN_EXE_toolgate"), "serve", "--workspace", ws]);
    let out = client
        .args(["--mode", mode, "--stdio", &argv.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("passed: approval scope"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for planted in ["x", "pwned"] {
        assert!(!ws.join(planted).exists(), "{planted} was created");
    }
    assert!(ws.join("victim/keep.txt").exists());
    // the session grant, ended with the session
    let grants = lines(&approvals(&ws, &["list", "--all", "--json"]));
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(
        (&grants[0]["resource_patterns"], &grants[0]["scope"]),
        (
            &j!(["command:python3 -m unittest -q"]),
            &Value::from("session")
        )
    );
    // the audit names the rule that decided each call the person declined
    let audit = toolgate(
        &[
            "audit",
            "--json",
            "--limit",
            "0",
            "-w",
            ws.to_str().unwrap(),
        ],
        &ws,
    );
    let rejected: Vec<Value> = String::from_utf8_lossy(&audit.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["approval"] == "rejected")
        .map(|r| r["rule"].clone())
        .collect();
    assert_eq!(
        rejected,
        [
            "shell.unlisted",
            "shell.uncertain",
            "shell.unlisted",
            "shell.unlisted",
            "shell.unlisted"
        ]
    );
}

#[test]
fn over_mcp_a_question_shows_what_it_approves_on_2025_11_25() {
    over_mcp("legacy");
}

#[test]
fn over_mcp_a_question_shows_what_it_approves_on_2026_07_28() {
    over_mcp("2026-07-28");
}
