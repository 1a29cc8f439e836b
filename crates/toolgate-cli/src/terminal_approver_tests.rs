use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::Cursor;
use toolgate_core::ResolvedResource;

use std::time::Duration;

fn question(expiry: GrantExpiry) -> Question {
    Question {
        text: "question\n".into(),
        tool: "write_file".into(),
        expiry,
        scoped: Some(vec!["path:/a.txt".into()]),
    }
}

fn answer_with(input: &[u8], expiry: GrantExpiry) -> (ApprovalAnswer, String) {
    let mut out = Vec::new();
    let a = converse(
        &mut Cursor::new(input.to_vec()),
        &mut out,
        &question(expiry),
    );
    (a, String::from_utf8(out).unwrap())
}

fn answer(input: &[u8]) -> (ApprovalAnswer, String) {
    answer_with(input, GrantExpiry::default())
}

fn scoped(scope: GrantScope) -> ApprovalAnswer {
    ApprovalAnswer::ApprovedFor {
        grant: GrantRequest::on(scope, &["path:/a.txt".into()]),
    }
}

#[test]
fn each_answer_means_what_it_says() {
    assert_eq!(answer(b"y\n").0, ApprovalAnswer::Approved);
    assert_eq!(answer(b"YES\n").0, ApprovalAnswer::Approved);
    assert_eq!(answer(b"s\n").0, scoped(GrantScope::Session));
    assert!(matches!(answer(b"n\n").0, ApprovalAnswer::Rejected { .. }));
    assert_eq!(
        answer(b"f\n  use b.txt \n").0,
        ApprovalAnswer::Corrected {
            feedback: "use b.txt".into()
        }
    );
    // empty feedback goes back to the question
    assert_eq!(answer(b"f\n\ny\n").0, ApprovalAnswer::Approved);
}

#[test]
fn always_asks_for_patterns_and_expiry_with_defaults() {
    assert_eq!(
        answer(b"a\n\n\n\n").0,
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest {
                scope: GrantScope::Always,
                tool: Some("write_file".into()),
                resources: vec!["path:/a.txt".into()],
                expires_in_secs: Some(86_400),
            }
        }
    );
    // `*` is the person's explicit choice of any resource; one pattern replaces the call's
    assert_eq!(
        answer(b"always\nwrite_file\n*\n90m\n").0,
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest {
                scope: GrantScope::Always,
                tool: Some("write_file".into()),
                resources: Vec::new(),
                expires_in_secs: Some(5400),
            }
        }
    );
    assert_eq!(
        answer(b"a\n*_file\npath:src/**\n1h\n").0,
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest {
                scope: GrantScope::Always,
                tool: Some("*_file".into()),
                resources: vec!["path:src/**".into()],
                expires_in_secs: Some(3600),
            }
        }
    );
    let (a, _) = answer(b"a\n\n\nnever\n");
    assert!(
        matches!(&a, ApprovalAnswer::ApprovedFor { grant } if grant.expires_in_secs.is_none()),
        "{a:?}"
    );
    // a bad expiry goes back to the question, which then takes a plain yes
    let (a, out) = answer(b"a\n\n\nsoon\ny\n");
    assert_eq!(a, ApprovalAnswer::Approved);
    assert!(out.contains("not a span"), "{out}");
}

/// The configured expiries: a session grant's, the default of an always grant, and the cap
/// an always answer may not pass (a longer span or `never` goes back to the question).
#[test]
fn configured_expiries_apply_and_the_cap_holds() {
    let h = |n: u64| Some(Duration::from_secs(n * 3600));
    let expiry = GrantExpiry {
        session: h(1),
        always: h(2),
        max: h(8),
    };
    let expires = |input: &[u8]| match answer_with(input, expiry) {
        (ApprovalAnswer::ApprovedFor { grant }, _) => Ok(grant.expires_in_secs),
        (other, out) => Err((other, out)),
    };
    assert_eq!(expires(b"s\n"), Ok(Some(3600)));
    assert_eq!(expires(b"a\n\n\n\n"), Ok(Some(7200)));
    assert_eq!(expires(b"a\n\n\n8h\n"), Ok(Some(8 * 3600)));
    for bad in ["9h", "never"] {
        let input = format!("a\n\n\n{bad}\ny\n");
        let (a, out) = answer_with(input.as_bytes(), expiry);
        assert_eq!(a, ApprovalAnswer::Approved, "{bad}");
        assert!(
            out.contains("longer than the longest expiry allowed (8h)"),
            "{out}"
        );
        assert!(out.contains("at most 8h) [2h]"), "{out}");
    }
    // without a configuration a session grant holds until its session ends
    assert_eq!(answer(b"s\n").0, scoped(GrantScope::Session));
}

#[test]
fn garbage_and_end_of_input_reject() {
    let (a, out) = answer(b"maybe\n\x1b[2J\nyes please\n\xff\xfe\n?\n");
    assert!(
        matches!(&a, ApprovalAnswer::Rejected { reason } if reason.contains("no valid answer")),
        "{a:?}"
    );
    assert!(
        !out.contains('\x1b'),
        "the echo of garbage is escaped: {out:?}"
    );
    assert_eq!(out.matches("is not an answer").count(), MAX_TRIES);
    for input in [
        &b""[..],
        b"maybe\n",
        b"f\n",
        b"a\n",
        b"a\nwrite_file\n",
        b"a\n\n\n",
    ] {
        let (a, _) = answer(input);
        assert!(
            matches!(&a, ApprovalAnswer::Rejected { reason } if reason.contains("end of input")),
            "{input:?}: {a:?}"
        );
    }
    // an endless line is read in bounded pieces and is no answer
    let mut long = vec![b'y'; 100_000];
    long.push(b'\n');
    assert!(matches!(answer(&long).0, ApprovalAnswer::Rejected { .. }));
}

#[test]
fn what_the_model_wrote_cannot_forge_the_prompt() {
    assert_eq!(escape("a\x1b[2Jb", 80), "a\\u{1b}[2Jb");
    assert_eq!(escape("x\r\nAllow? y", 80), "x\\u{d}\\u{a}Allow? y");
    assert_eq!(escape("\u{202e}txt.exe", 80), "\\u{202e}txt.exe");
    assert_eq!(escape("\u{9b}31m", 80), "\\u{9b}31m");
    assert_eq!(escape("a\\u{1b}", 80), "a\\\\u{1b}");
    assert_eq!(escape("abcdef", 3), "abc...");
    let s = summarize(&json!({
        "path": "a.txt\n  rule: fake",
        "content": "x".repeat(1000),
        "api_key": "sk-live-1234567890abcdef",
        "\u{1b}[31mkey": 1,
    }));
    assert_eq!(s.lines().count(), 4, "{s}");
    assert!(!s.contains('\x1b') && !s.contains("sk-live"), "{s}");
    assert!(s.contains("(1000 characters)"), "{s}");
    assert!(s.contains(r#""a.txt\u{a}  rule: fake""#), "{s}");
    let many: serde_json::Map<String, Value> =
        (0..50).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let s = summarize(&Value::Object(many));
    assert_eq!(s.lines().count(), MAX_ARGUMENT_LINES + 1, "{s}");
    assert!(s.ends_with("... and 30 more\n"), "{s}");
}

/// The question shows what the call would change, escaped line by line and cut to
/// [`MAX_PREVIEW_LINES`], indented under `change:`; without a preview there is no such part.
#[test]
fn the_question_shows_the_change_escaped_and_bounded() {
    let spec = toolgate_core::ToolSpec::builder("edit_file")
        .build()
        .unwrap();
    let id = toolgate_core::CallId::from("c1");
    let args = json!({"path": "a.txt"});
    let mut diff =
        String::from("--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-old\n+new \u{1b}[2J\u{202e}x\n");
    for i in 0..100 {
        diff.push_str(&format!("+more {i}\n"));
    }
    let request = |preview| ApprovalRequest {
        tool: &spec,
        call_id: &id,
        session_id: "s",
        profile: "default",
        arguments: &args,
        resources: &[],
        rule: "risk.destructive",
        reason: "the tool is destructive",
        preview,
        grantable: true,
    };
    let q = Question::new(&request(Some(&diff)), GrantExpiry::default());
    assert!(
        q.text.contains("  change:\n    --- a/a.txt\n"),
        "{}",
        q.text
    );
    assert!(
        q.text.contains("    -old\n    +new \\u{1b}[2J\\u{202e}x\n"),
        "{}",
        q.text
    );
    assert!(
        !q.text.contains('\u{1b}') && !q.text.contains('\u{202e}'),
        "{}",
        q.text
    );
    assert!(q.text.contains("more lines not shown"), "{}", q.text);
    let shown = q
        .text
        .lines()
        .filter(|l| l.starts_with("    +more"))
        .count();
    assert_eq!(shown, MAX_PREVIEW_LINES - 5, "{}", q.text);
    let plain = Question::new(&request(None), GrantExpiry::default());
    assert!(!plain.text.contains("change:"), "{}", plain.text);
}

fn run_shell_spec() -> toolgate_core::ToolSpec {
    use toolgate_core::IntoTool;
    toolgate_tools::shell::RunShell::default()
        .into_tool()
        .unwrap()
        .spec()
        .clone()
}

fn ask(resources: &[ResolvedResource], arguments: &Value) -> Question {
    let spec = run_shell_spec();
    let id = toolgate_core::CallId::from("c1");
    let request = ApprovalRequest {
        tool: &spec,
        call_id: &id,
        session_id: "s1",
        profile: "default",
        arguments,
        resources,
        rule: "shell.unlisted",
        reason: "no rule allows them",
        preview: None,
        grantable: true,
    };
    Question::new(&request, GrantExpiry::default())
}

fn commands(n: usize, last: &str) -> Vec<ResolvedResource> {
    let mut r: Vec<ResolvedResource> = (0..n)
        .map(|i| ResolvedResource::Command(format!("echo {i}")))
        .collect();
    r.push(ResolvedResource::Command(last.into()));
    r
}

/// A line of 21 harmless commands and `touch x`: the question shows every command, `touch x`
/// included, and a session answer grants those commands, not run_shell.
#[test]
fn the_question_shows_every_command_and_a_session_grants_only_those() {
    let resources = commands(21, "touch x");
    let line: Vec<String> = (0..21).map(|i| format!("echo {i}")).collect();
    let command = format!("{} && touch x", line.join(" && "));
    let q = ask(&resources, &json!({ "command": command }));
    assert_eq!(
        q.text.matches("  resource:  command ").count(),
        22,
        "{}",
        q.text
    );
    assert!(
        q.text.contains("  resource:  command touch x\n"),
        "{}",
        q.text
    );
    assert!(
        q.text
            .contains("covers run_shell on command:echo 0, command:echo 1,"),
        "{}",
        q.text
    );
    let (a, out) = {
        let mut out = Vec::new();
        let a = converse(&mut Cursor::new(b"s\n".to_vec()), &mut out, &q);
        (a, String::from_utf8(out).unwrap())
    };
    assert!(out.contains("[s]ession / [a]lways"), "{out}");
    let ApprovalAnswer::ApprovedFor { grant } = a else {
        panic!("{a:?}")
    };
    assert_eq!(grant.resources.len(), 22);
    assert_eq!(grant.resources[21], "command:touch x");
    assert!(grant.tool.is_none());
}

/// Past what the question can show, or with a command a grant cannot name, it says so and
/// offers this call only: `s` and `a` are not answers.
#[test]
fn an_incomplete_question_offers_only_this_call() {
    let long = format!("echo {}", "x".repeat(toolgate_core::grant::MAX_LINE_CHARS));
    for (resources, says) in [
        (
            commands(toolgate_core::grant::MAX_SHOWN, "touch x"),
            "NOT SHOWN: 1 more resource is not shown",
        ),
        (commands(0, &long), "NOT SHOWN: 1 line is cut short"),
        (commands(2, "rm $TARGET"), "has a word a grant cannot name"),
    ] {
        let q = ask(&resources, &json!({"command": "..."}));
        assert!(q.text.contains(says), "{says}: {}", q.text);
        assert!(q.text.contains("is not offered"), "{}", q.text);
        let mut out = Vec::new();
        let a = converse(&mut Cursor::new(b"s\na\ny\n".to_vec()), &mut out, &q);
        let out = String::from_utf8(out).unwrap();
        assert_eq!(a, ApprovalAnswer::Approved, "{out}");
        assert_eq!(out.matches("(see scope above)").count(), 2, "{out}");
        assert!(!out.contains("[s]ession"), "{out}");
    }
}

/// Secrets in a command are redacted in the question too.
#[test]
fn resource_lines_are_redacted() {
    let q = ask(
        &[ResolvedResource::Command(
            "curl -H 'Authorization: Bearer ghp_0123456789abcdefABCDEF' x".into(),
        )],
        &json!({}),
    );
    assert!(!q.text.contains("ghp_0123"), "{}", q.text);
    assert!(q.text.contains("Bearer [REDACTED]"), "{}", q.text);
}
