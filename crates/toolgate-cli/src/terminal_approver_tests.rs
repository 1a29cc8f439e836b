use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::Cursor;

use std::time::Duration;

fn question(expiry: GrantExpiry) -> Question {
    Question {
        text: "question\n".into(),
        tool: "write_file".into(),
        expiry,
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
        grant: GrantRequest::new(scope),
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
                resource: None,
                expires_in_secs: Some(86_400),
            }
        }
    );
    assert_eq!(
        answer(b"always\nwrite_file\n\n90m\n").0,
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest {
                scope: GrantScope::Always,
                tool: Some("write_file".into()),
                resource: None,
                expires_in_secs: Some(5400),
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
    assert_eq!(
        answer(b"s\n").0,
        ApprovalAnswer::ApprovedFor {
            grant: GrantRequest::new(GrantScope::Session)
        }
    );
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
