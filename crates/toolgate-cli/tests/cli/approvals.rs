//! Approvals through the `toolgate` binary: operator grants (`approvals grant`, `list`,
//! `revoke`) that answer calls without asking and stop when revoked or expired, and the
//! terminal prompt of `toolgate call`, answered through a real pseudo-terminal.
//!
//! The prompt tests drive the binary with `tests/clients/tty_driver.py` (Python's `pty`, from
//! `TOOLGATE_TEST_PYTHON`); without it they are skipped with a note, except under CI, where
//! they fail.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use toolgate_test_support::clients::python_script;

const WRITE: &str = r#"{"path":"a.txt","content":"hello\n"}"#;

fn call(ws: &Path, session: &str, args: &str) -> Output {
    toolgate(
        &[
            "call",
            "write_file",
            args,
            "-w",
            ws.to_str().unwrap(),
            "--session",
            session,
        ],
        ws,
    )
}

fn kind(out: &Output) -> Value {
    json(out)["error"]["kind"].clone()
}

pub(super) fn approvals(ws: &Path, args: &[&str]) -> Output {
    let mut all = vec!["approvals"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-w", ws.to_str().unwrap()]);
    toolgate(&all, ws)
}

pub(super) fn lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The audit records of the workspace's store, oldest first: (tool, approval, grant, scope).
fn audit(ws: &Path) -> Vec<(Value, Value, Value, Value)> {
    let out = toolgate(&["audit", "--json", "-w", ws.to_str().unwrap()], ws);
    let mut v: Vec<(u64, (Value, Value, Value, Value))> = lines(&out)
        .into_iter()
        .map(|r| {
            (
                r["seq"].as_u64().unwrap(),
                (
                    r["tool"].clone(),
                    r["approval"].clone(),
                    r["grant"].clone(),
                    r["scope"].clone(),
                ),
            )
        })
        .collect();
    v.sort_by_key(|(s, _)| *s);
    v.into_iter().map(|(_, r)| r).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_operator_grant_answers_until_revoked() {
    let t = tree();
    let ws = t.path().join("ws");
    // nobody at a terminal: rejected
    assert_eq!(kind(&call(&ws, "s1", WRITE)), "approval_rejected");
    let out = approvals(
        &ws,
        &["grant", "--tool", "write_file", "--note", "ok for today"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("granted 1: always write_file"));
    let ok = call(&ws, "s1", WRITE);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "hello\n"
    );
    let listed = lines(&approvals(&ws, &["list", "--json"]));
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            &listed[0]["id"],
            &listed[0]["scope"],
            &listed[0]["state"],
            &listed[0]["granted_by"],
            &listed[0]["note"]
        ),
        (
            &Value::from(1),
            &Value::from("always"),
            &Value::from("active"),
            &Value::from("operator"),
            &Value::from("ok for today")
        )
    );
    let out = approvals(&ws, &["revoke", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(kind(&call(&ws, "s1", WRITE)), "approval_rejected");
    assert!(lines(&approvals(&ws, &["list", "--json"])).is_empty());
    let all = lines(&approvals(&ws, &["list", "--all", "--json"]));
    assert_eq!(all[0]["state"], "revoked");
    // revoking twice, or what is not there, is an error that says so
    let again = approvals(&ws, &["revoke", "1"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("revoked already"),
        "{}",
        stderr(&again)
    );
    let none = approvals(&ws, &["revoke", "99"]);
    assert!(
        stderr(&none).contains("there is no grant 99"),
        "{}",
        stderr(&none)
    );
    let audit_table = toolgate(&["audit", "-w", ws.to_str().unwrap()], &ws);
    let text = String::from_utf8_lossy(&audit_table.stdout);
    assert!(text.contains("ask:granted/always#1 "), "{text}");
    assert!(text.contains("ask:rejected "), "{text}");
    let table = approvals(&ws, &["list", "--all"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("   ID STATE"), "{text}");
    assert!(text.contains("revoked  always   write_file"), "{text}");
    // every decision is on record: rejected, granted by grant 1, rejected
    assert_eq!(
        audit(&ws),
        [
            (
                "write_file".into(),
                "rejected".into(),
                Value::Null,
                Value::Null
            ),
            (
                "write_file".into(),
                "granted".into(),
                1.into(),
                "always".into()
            ),
            (
                "write_file".into(),
                "rejected".into(),
                Value::Null,
                Value::Null
            ),
        ]
    );
}

#[test]
fn session_grants_hold_for_their_session_and_grants_expire() {
    let t = tree();
    let ws = t.path().join("ws");
    let out = approvals(
        &ws,
        &[
            "grant",
            "--tool",
            "write_file",
            "--scope",
            "session",
            "--session",
            "s1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(call(&ws, "s1", WRITE).status.code(), Some(0));
    assert_eq!(kind(&call(&ws, "s2", WRITE)), "approval_rejected");
    let once = approvals(
        &ws,
        &[
            "grant",
            "--tool",
            "write_file",
            "--scope",
            "once",
            "--session",
            "s3",
        ],
    );
    assert!(once.status.success(), "{}", stderr(&once));
    assert_eq!(call(&ws, "s3", WRITE).status.code(), Some(0));
    assert_eq!(kind(&call(&ws, "s3", WRITE)), "approval_rejected", "spent");
    // an expiry one second out: it answers now, and no longer a second later
    let out = approvals(
        &ws,
        &["grant", "--tool", "write_file", "--expires", "1s", "--json"],
    );
    let g = &lines(&out)[0];
    assert_eq!(g["state"], "active");
    assert_eq!(
        g["expires_us"].as_u64().unwrap() - g["created_us"].as_u64().unwrap(),
        1_000_000
    );
    assert_eq!(call(&ws, "s4", WRITE).status.code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(
        kind(&call(&ws, "s4", WRITE)),
        "approval_rejected",
        "expired"
    );
    let states: Vec<Value> = lines(&approvals(&ws, &["list", "--all", "--json"]))
        .iter()
        .map(|g| g["state"].clone())
        .collect();
    assert_eq!(states, ["active", "spent", "expired"]);
    // `--session` lists what holds for that session: its own grants and always grants
    let s1: Vec<Value> = lines(&approvals(&ws, &["list", "--session", "s1", "--json"]))
        .iter()
        .map(|g| g["id"].clone())
        .collect();
    assert_eq!(s1, [1]);
}

#[test]
fn a_resource_pattern_grant_covers_only_matching_calls() {
    let t = tree();
    let ws = t.path().join("ws");
    let out = approvals(
        &ws,
        &["grant", "--tool", "*_file", "--resource", "path:src/**"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let inside = call(&ws, "s1", r#"{"path":"src/new.rs","content":"x\n"}"#);
    assert_eq!(inside.status.code(), Some(0), "{}", stderr(&inside));
    assert_eq!(
        kind(&call(&ws, "s1", WRITE)),
        "approval_rejected",
        "a.txt is outside"
    );
    let listed = lines(&approvals(&ws, &["list", "--json"]));
    assert_eq!(
        listed[0]["resource_patterns"],
        serde_json::json!(["path:src/**"])
    );
    // several patterns: a call is covered when each path matches one of them
    let out = approvals(
        &ws,
        &[
            "grant",
            "--tool",
            "write_file",
            "--resource",
            "path:a.txt",
            "--resource",
            "path:docs/**",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(call(&ws, "s1", WRITE).status.code(), Some(0));
    let listed = lines(&approvals(&ws, &["list", "--json"]));
    assert_eq!(
        listed[1]["resource_patterns"],
        serde_json::json!(["path:a.txt", "path:docs/**"])
    );
}

#[test]
fn bad_grants_are_refused_with_the_reason() {
    let t = tree();
    let ws = t.path().join("ws");
    let long = "x".repeat(5000);
    for (args, says) in [
        (
            &["--tool", "write_file", "--scope", "forever"][..],
            "not once, session or always",
        ),
        (
            &["--tool", "write_file", "--scope", "session"],
            "needs --session",
        ),
        (
            &["--tool", "write_file", "--session", "s1"],
            "leave --session out",
        ),
        (
            &["--tool", "write_file", "--expires", "0s"],
            "already passed",
        ),
        (&["--tool", "write_file", "--expires", "soon"], "not a span"),
        (&["--tool", ""], "tool pattern"),
        (&["--tool", "write file"], "tool pattern"),
        (
            &["--tool", "write_file", "--resource", "src/**"],
            "must start with path:",
        ),
        (
            &["--tool", "write_file", "--resource", "path:../x"],
            "canonical",
        ),
        (&["--tool", "write_file", "--note", &long], "more than 4096"),
    ] {
        let mut all = vec!["grant"];
        all.extend_from_slice(args);
        let out = approvals(&ws, &all);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let err = stderr(&out).to_lowercase();
        assert!(err.contains(&says.to_lowercase()), "{args:?}: {err}");
    }
    // nothing was stored
    let out = approvals(&ws, &["list", "--all", "--json"]);
    assert!(out.stdout.is_empty() || lines(&out).is_empty());
}

/// What one `toolgate call` at a terminal ended with.
pub(super) struct AtTerminal {
    pub exit: i64,
    pub transcript: String,
    pub result: Value,
}

/// Runs `toolgate call write_file ARGS --session SESSION` on a pseudo-terminal, answering
/// with `steps` (see tty_driver.py). Its stdin carries `y` lines, which must not be taken as
/// an answer.
fn at_terminal(ws: &Path, session: &str, args: &str, steps: Value) -> Option<AtTerminal> {
    at_terminal_calling(ws, "write_file", session, args, steps)
}

/// [`at_terminal`] of a call of `tool`.
pub(super) fn at_terminal_calling(
    ws: &Path,
    tool: &str,
    session: &str,
    args: &str,
    steps: Value,
) -> Option<AtTerminal> {
    let mut driver =
        python_script(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/tty_driver.py"))?;
    let dir = tempfile::tempdir().unwrap();
    let stdin = dir.path().join("stdin");
    let stdout = dir.path().join("stdout");
    std::fs::write(&stdin, "y\ny\ny\n").unwrap();
    let out = driver
        .arg("--script")
        .arg(steps.to_string())
        .arg("--stdin")
        .arg(&stdin)
        .arg("--stdout")
        .arg(&stdout)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", tool, args, "-w"])
        .arg(ws)
        .args(["--session", session])
        .current_dir(ws)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "driver output is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(out.status.success(), "{report:#}");
    let text = std::fs::read_to_string(&stdout).unwrap();
    Some(AtTerminal {
        exit: report["exit"].as_i64().unwrap(),
        transcript: report["transcript"].as_str().unwrap().to_string(),
        result: serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: {text}\n{}", report["transcript"])),
    })
}

pub(super) const ASK: &str = "[f]eedback: ";

fn answer(text: &str) -> Value {
    serde_json::json!([{"expect": ASK, "send": text}])
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn the_terminal_prompt_approves_for_the_session() {
    let t = tree();
    let ws = t.path().join("ws");
    let Some(r) = at_terminal(&ws, "s1", WRITE, answer("s\n")) else {
        return;
    };
    assert_eq!(r.exit, 0, "{}", r.transcript);
    for shown in [
        "tool:      write_file",
        "rule:      risk.destructive",
        "reason:    the tool is destructive",
        "resource:  write a.txt",
        "path: \"a.txt\"",
        "change:",
        "+++ b/a.txt",
        "+hello",
    ] {
        assert!(r.transcript.contains(shown), "{shown}: {}", r.transcript);
    }
    // the next call of the session needs no one at a terminal; another session does
    assert_eq!(call(&ws, "s1", WRITE).status.code(), Some(0));
    assert_eq!(kind(&call(&ws, "s2", WRITE)), "approval_rejected");
    assert_eq!(
        audit(&ws),
        [
            (
                "write_file".into(),
                "approved".into(),
                1.into(),
                "session".into()
            ),
            (
                "write_file".into(),
                "granted".into(),
                1.into(),
                "session".into()
            ),
            (
                "write_file".into(),
                "rejected".into(),
                Value::Null,
                Value::Null
            ),
        ]
    );
    let g = &lines(&approvals(&ws, &["list", "--json"]))[0];
    assert_eq!(
        (&g["session"], &g["granted_by"]),
        (&"s1".into(), &"terminal".into())
    );
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn the_terminal_prompt_rejects_corrects_and_approves_always() {
    let t = tree();
    let ws = t.path().join("ws");
    let Some(no) = at_terminal(&ws, "s1", WRITE, answer("n\n")) else {
        return;
    };
    assert_eq!(no.exit, 4);
    assert_eq!(no.result["error"]["kind"], "approval_rejected");
    assert!(!ws.join("a.txt").exists());
    let steps = serde_json::json!([
        {"expect": ASK, "send": "f\n"},
        {"expect": "Feedback for the agent", "send": "write b.txt instead\n"},
    ]);
    let fix = at_terminal(&ws, "s1", WRITE, steps).unwrap();
    assert_eq!(fix.exit, 3);
    assert_eq!(fix.result["error"]["kind"], "approval_corrected");
    assert!(fix.result["error"]["message"]
        .as_str()
        .unwrap()
        .contains("write b.txt instead"));
    let steps = serde_json::json!([
        {"expect": ASK, "send": "a\n"},
        {"expect": "Tool pattern [write_file]: ", "send": "\n"},
        {"expect": "Resource pattern", "send": "src/**\n"},
        {"expect": "must start with path:", "send": ""},
        {"expect": ASK, "send": "a\n"},
        {"expect": "Tool pattern [write_file]: ", "send": "\n"},
        {"expect": "Resource pattern", "send": "path:a.txt\n"},
        {"expect": "Expires after", "send": "2h\n"},
    ]);
    let always = at_terminal(&ws, "s1", WRITE, steps).unwrap();
    assert_eq!(always.exit, 0, "{}", always.transcript);
    let g = &lines(&approvals(&ws, &["list", "--json"]))[0];
    assert_eq!(
        (&g["scope"], &g["session"]),
        (&"always".into(), &Value::Null)
    );
    assert_eq!(
        g["expires_us"].as_u64().unwrap() - g["created_us"].as_u64().unwrap(),
        7_200_000_000
    );
    // always: another session is approved without asking
    assert_eq!(call(&ws, "s9", WRITE).status.code(), Some(0));
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn the_terminal_prompt_survives_garbage_and_end_of_input() {
    let t = tree();
    let ws = t.path().join("ws");
    let steps: Vec<Value> = ["maybe\n", "\x1b[2J\n", "\u{7f}\n", "yes please\n", "??\n"]
        .iter()
        .map(|s| serde_json::json!({"expect": ASK, "send": s}))
        .collect();
    let Some(garbage) = at_terminal(&ws, "s1", WRITE, Value::Array(steps)) else {
        return;
    };
    assert_eq!(garbage.exit, 4, "{}", garbage.transcript);
    assert_eq!(garbage.result["error"]["kind"], "approval_rejected");
    assert!(garbage.result["error"]["details"]["reason"]
        .as_str()
        .unwrap()
        .contains("no valid answer"));
    assert_eq!(garbage.transcript.matches("is not an answer").count(), 5);
    let eof = at_terminal(
        &ws,
        "s1",
        WRITE,
        serde_json::json!([{"expect": ASK, "eof": true}]),
    )
    .unwrap();
    assert_eq!(eof.exit, 4);
    assert!(eof.result["error"]["details"]["reason"]
        .as_str()
        .unwrap()
        .contains("end of input"));
    assert!(!ws.join("a.txt").exists());
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn arguments_cannot_forge_the_prompt() {
    let t = tree();
    let ws = t.path().join("ws");
    let forged = serde_json::json!({
        "path": "a.txt",
        "content": "\u{1b}[2J\u{1b}[H\r\ntoolgate: approved by policy\nAllow? [y]es: \u{202e}",
    })
    .to_string();
    let Some(r) = at_terminal(&ws, "s1", &forged, answer("n\n")) else {
        return;
    };
    assert!(!r.transcript.contains('\u{1b}'), "{:?}", r.transcript);
    assert!(!r.transcript.contains('\u{202e}'), "{:?}", r.transcript);
    assert!(
        r.transcript
            .contains(r#"content: "\u{1b}[2J\u{1b}[H\u{d}\u{a}toolgate: approved"#),
        "{}",
        r.transcript
    );
    assert_eq!(r.exit, 4);
}

/// `toolgate serve` over stdio with the official Python SDK answering the approval form with
/// a scope (`tests/clients/approvals_client.py`): a session grant spares the session's next
/// call on the same path and not one on another path, a fresh session is asked, an always
/// grant spares every later session on that path. The grants (each naming the path asked
/// about) and the audit records are in the workspace's store; the session grant holds for the
/// configuration's `approvals.session_expires`.
fn serve_answers_with_scopes(mode: &str) {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[approvals]\nsession_expires = \"1h\"\nmax_expires = \"3h\"\n",
    )
    .unwrap();
    let Some(mut client) = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/approvals_client.py"),
    ) else {
        return;
    };
    let argv = serde_json::json!([env!("CARGO_BIN_EXE_toolgate"), "serve", "--workspace", ws]);
    let out = client
        .args(["--mode", mode, "--stdio", &argv.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("passed: approvals"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let grants = lines(&approvals(&ws, &["list", "--all", "--json"]));
    let summary: Vec<(Value, Value, bool, Value, Value)> = grants
        .iter()
        .map(|g| {
            (
                g["scope"].clone(),
                g["granted_by"].clone(),
                g["session"].is_null(),
                g["state"].clone(),
                g["resource_patterns"].clone(),
            )
        })
        .collect();
    // the session grant ended with its session (the client closed it): expired, not active
    assert_eq!(
        summary,
        [
            (
                "session".into(),
                "mcp-client".into(),
                false,
                "expired".into(),
                serde_json::json!(["path:/a.txt"])
            ),
            (
                "always".into(),
                "mcp-client".into(),
                true,
                "active".into(),
                serde_json::json!(["path:/c.txt"])
            ),
        ]
    );
    let lasts = |g: &Value| g["expires_us"].as_u64().unwrap() - g["created_us"].as_u64().unwrap();
    assert!(lasts(&grants[0]) < 3_600_000_000, "{}", grants[0]);
    assert_eq!(lasts(&grants[1]), 7_200_000_000);
    let active = lines(&approvals(&ws, &["list", "--json"]));
    assert_eq!(active.len(), 1, "{active:?}");
    assert_eq!(active[0]["scope"], "always");
    let w = "write_file";
    let approved = |id: i64, scope: &str| -> (Value, Value, Value, Value) {
        (w.into(), "approved".into(), id.into(), scope.into())
    };
    let granted = |id: i64, scope: &str| -> (Value, Value, Value, Value) {
        (w.into(), "granted".into(), id.into(), scope.into())
    };
    let once: (Value, Value, Value, Value) =
        (w.into(), "approved".into(), Value::Null, "once".into());
    let mut want = vec![
        approved(1, "session"),
        granted(1, "session"),
        once,
        approved(2, "always"),
        granted(2, "always"),
    ];
    if mode != "legacy" {
        // on 2026-07-28 the round that asks (input required) is recorded as pending: the
        // question went to the client, the retry carries the answer
        let asked: (Value, Value, Value, Value) =
            (w.into(), "pending".into(), Value::Null, Value::Null);
        want.insert(3, asked.clone());
        want.insert(2, asked.clone());
        want.insert(0, asked);
    }
    assert_eq!(audit(&ws), want);
    // those rounds are found by their outcome, and are neither errors nor rejections
    let dir = ws.to_str().unwrap();
    let by_outcome = |o: &str| {
        lines(&toolgate(
            &["audit", "--outcome", o, "--json", "-w", dir],
            &ws,
        ))
    };
    let waiting = by_outcome("input_required");
    assert_eq!(waiting.len(), if mode == "legacy" { 0 } else { 3 });
    for r in &waiting {
        assert_eq!(
            (&r["approval"], &r["decision"], &r["error_kind"]),
            (&Value::from("pending"), &Value::from("ask"), &Value::Null),
            "{r}"
        );
    }
    assert!(by_outcome("fatal_error").is_empty());
    assert!(by_outcome("recoverable_error").is_empty());
    let stats = lines(&toolgate(&["stats", "--json", "-w", dir], &ws));
    let s = stats.iter().find(|s| s["tool"] == w).unwrap();
    let calls = if mode == "legacy" { 5 } else { 8 };
    assert_eq!(
        (
            &s["calls"],
            &s["errors"],
            &s["denials"],
            &s["approvals_asked"],
            &s["approvals_granted"]
        ),
        (
            &Value::from(calls),
            &serde_json::json!({}),
            &Value::from(0),
            &Value::from(3),
            &Value::from(3)
        ),
        "{s}"
    );
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn serve_answers_with_scopes_on_2025_11_25() {
    serve_answers_with_scopes("legacy");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn serve_answers_with_scopes_on_2026_07_28() {
    serve_answers_with_scopes("2026-07-28");
}

const APPROVALS_TOML: &str =
    "[approvals]\nsession_expires = \"2s\"\nalways_expires = \"3h\"\nmax_expires = \"5h\"\n";

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// The configuration's `[approvals]` at the terminal prompt: a session answer's grant gets
/// `session_expires` and stops answering when it passes (a real wait of at most 2 s), an
/// always answer gets `always_expires` by default and may not ask past `max_expires`.
#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn configured_expiries_reach_the_terminal_prompts_grants() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), APPROVALS_TOML).unwrap();
    let Some(r) = at_terminal(&ws, "s1", WRITE, answer("s\n")) else {
        return;
    };
    assert_eq!(r.exit, 0, "{}", r.transcript);
    let g = &lines(&approvals(&ws, &["list", "--json"]))[0];
    let created = g["created_us"].as_u64().unwrap();
    assert_eq!(
        (&g["scope"], g["expires_us"].as_u64().unwrap() - created),
        (&Value::from("session"), 2_000_000),
        "{g}"
    );
    // once it has passed, the grant no longer answers and is listed as expired
    let wait = (created + 2_050_000).saturating_sub(now_us());
    std::thread::sleep(std::time::Duration::from_micros(wait));
    assert_eq!(kind(&call(&ws, "s1", WRITE)), "approval_rejected");
    let all = lines(&approvals(&ws, &["list", "--all", "--json"]));
    assert_eq!(all[0]["state"], "expired", "{all:?}");
    // an always answer: the configured default, and a span past the cap asked again
    let steps = serde_json::json!([
        {"expect": ASK, "send": "a\n"},
        {"expect": "Tool pattern", "send": "\n"},
        {"expect": "Resource pattern", "send": "\n"},
        {"expect": "at most 5h) [3h]: ", "send": "6h\n"},
        {"expect": ASK, "send": "a\n"},
        {"expect": "Tool pattern", "send": "\n"},
        {"expect": "Resource pattern", "send": "\n"},
        {"expect": "[3h]: ", "send": "\n"},
    ]);
    let r = at_terminal(&ws, "s2", WRITE, steps).unwrap();
    assert_eq!(r.exit, 0, "{}", r.transcript);
    assert!(
        r.transcript
            .contains("6h is longer than the longest expiry allowed (5h)"),
        "{}",
        r.transcript
    );
    let g = lines(&approvals(&ws, &["list", "--json"]));
    let always = g.iter().find(|g| g["scope"] == "always").unwrap();
    assert_eq!(
        always["expires_us"].as_u64().unwrap() - always["created_us"].as_u64().unwrap(),
        3 * 3600 * 1_000_000
    );
}

/// Flags override the configuration; bad values and a default past the cap are refused
/// with the reason, before anything runs.
#[test]
fn expiry_flags_override_the_configuration_and_bad_ones_are_refused() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), APPROVALS_TOML).unwrap();
    let dir = ws.to_str().unwrap();
    for (flags, says) in [
        (
            &["--always-expires", "6h"][..],
            "always grant expiry (6h) is longer than the maximum expiry (5h)",
        ),
        (
            &["--session-expires", "never"][..],
            "session grant expiry (never) is longer than the maximum expiry (5h)",
        ),
        (&["--max-expires", "soon"][..], "\"soon\" is not a span"),
        (&["--session-expires", "0s"][..], "shorter than one second"),
    ] {
        let mut args = vec!["call", "write_file", WRITE, "-w", dir, "--session", "s9"];
        args.extend_from_slice(flags);
        let out = toolgate(&args, &ws);
        assert_ne!(out.status.code(), Some(0), "{flags:?}");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
        assert!(!ws.join("a.txt").exists());
    }
    // a flag that raises the cap lets a longer default through
    let out = toolgate(
        &[
            "call",
            "write_file",
            WRITE,
            "-w",
            dir,
            "--session",
            "s9",
            "--always-expires",
            "6h",
            "--max-expires",
            "never",
        ],
        &ws,
    );
    assert_eq!(kind(&out), "approval_rejected", "{}", stderr(&out));
    // bad values in the file are located problems
    std::fs::write(
        ws.join("toolgate.toml"),
        "[approvals]\nalways_expires = \"soon\"\n",
    )
    .unwrap();
    let out = toolgate(&["check", "-w", dir], &ws);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("toolgate.toml:2:18: approvals.always_expires: \"soon\" is not a span"),
        "{stdout}"
    );
}
