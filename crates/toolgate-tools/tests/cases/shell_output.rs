//! run_shell's output past its preview: the end of the output is always shown (a third head,
//! two thirds tail), and the marker between names the `read_result` handle and the offset that
//! reads on from the head.

use super::shell_support::*;
use serde_json::{json, Value};
use toolgate_core::ToolCall;

/// The `read_result` arguments a preview's marker names.
fn marker_call(preview: &str) -> Value {
    let start = preview
        .find("read_result {")
        .expect("the marker names read_result")
        + 12;
    let end = start + preview[start..].find('}').unwrap() + 1;
    serde_json::from_str(&preview[start..end]).unwrap()
}

/// Output of every size between the preview (24 KiB) and past what is kept in memory (2 MiB
/// head, 256 KiB tail) ends with its last line, a test runner's summary here; the marker's
/// handle and offset read on from right after the head.
#[tokio::test]
async fn the_end_of_long_output_is_always_shown() {
    let s = Shell::new();
    // (failing tests, bytes of padding per test): 30 KiB, 63 KB, 1 MiB, 3 MiB of output
    for (tests, pad) in [(60, 480), (150, 400), (1500, 680), (4000, 760)] {
        let command = format!(
            "printf -v pad '%{pad}s' ''; pad=${{pad// /-}}; for i in $(seq {tests}); do echo \"FAIL: test_$i (tests.Case)\"; echo \"$pad\"; done; echo \"FAILED (failures={tests})\""
        );
        let r = s.call(json!({ "command": command })).await;
        let o = output(&r);
        let summary = format!("FAILED (failures={tests})\n");
        assert!(o.stdout_truncated, "{tests}");
        assert!(o.stdout.len() <= 24 << 10, "{tests}: {}", o.stdout.len());
        assert!(o.stdout.starts_with("FAIL: test_1 "), "{tests}");
        assert!(o.stdout.ends_with(&summary), "{tests}: the tail is lost");
        let (head, rest) = o.stdout.split_once("[... ").unwrap();
        let tail = rest.split_once("...]\n").unwrap().1;
        assert!(
            tail.len() > head.len(),
            "{tests}: {} {}",
            head.len(),
            tail.len()
        );
        let full: String = (1..=tests)
            .map(|i| format!("FAIL: test_{i} (tests.Case)\n{}\n", "-".repeat(pad)))
            .chain([summary.clone()])
            .collect();
        let call = marker_call(&o.stdout);
        let handle = o.stdout_handle.clone().expect("a handle");
        assert_eq!(call["handle"], handle.as_str(), "{tests}");
        let offset = call["offset"].as_u64().unwrap() as usize;
        assert!(
            o.stdout.starts_with(&full[..offset]),
            "{tests}: the offset is past the head"
        );
        assert!(
            head.len() - offset <= 1,
            "{tests}: the offset is the head's end"
        );
        let page = s
            .pipeline
            .dispatch(
                ToolCall::new(format!("p{tests}"), "read_result", call),
                &s.session,
            )
            .await;
        assert!(!page.is_error, "{}", page.text());
        let page = page.structured_content.unwrap();
        let text = page["text"].as_str().unwrap();
        assert!(
            text.starts_with(&full[offset..offset + 1000]),
            "{tests}: {}",
            &text[..60]
        );
        assert_eq!(page["offset"], offset);
    }
}

/// stderr is treated the same way, and a short stream is shown whole with no handle.
#[tokio::test]
async fn both_streams_keep_their_ends() {
    let s = Shell::new();
    let o = s.run("seq 1 20000 >&2; echo short").await;
    assert_eq!(
        (o.stdout.as_str(), o.stdout_handle.as_deref()),
        ("short\n", None)
    );
    assert!(o.stderr_truncated && o.stderr.len() <= 12 << 10);
    assert!(o.stderr.starts_with("1\n2\n") && o.stderr.ends_with("19999\n20000\n"));
    let call = marker_call(&o.stderr);
    assert_eq!(call["handle"], o.stderr_handle.unwrap().as_str());
}

/// output-huge-70 (output_truncation), other shapes of huge output: one line with no
/// newline, 4-byte characters whose cuts fall inside a character, bytes that are not UTF-8
/// and control characters (each shown as a longer escape, which once overran the preview),
/// only newlines, and a flood on stderr alone. Each result stays within the tool's cap and
/// the preview sizes, keeps its first and last bytes, and never shows a broken character
/// where the output had none.
#[tokio::test]
async fn every_shape_of_huge_output_is_cut_within_the_caps() {
    let s = Shell::new();
    let cap = s
        .pipeline
        .registry()
        .get("run_shell", None)
        .unwrap()
        .spec()
        .max_result_bytes;
    // (command, stdout starts with, stdout ends with, whether the output is UTF-8)
    let cases = [
        (
            "printf A; head -c 20000000 /dev/zero | tr '\\0' b; printf Z",
            "Abbb",
            "bbbZ",
            true,
        ),
        (
            "printf '\\360\\237\\230\\200%.0s' $(seq 300000); printf 'end\\n'",
            "\u{1F600}\u{1F600}",
            "\u{1F600}end\n",
            true,
        ),
        (
            "echo START; head -c 3000000 /dev/urandom; echo; echo END",
            "START\n",
            "END\n",
            false,
        ),
        (
            "echo START; yes '' | head -c 20000000; echo END",
            "START\n\n",
            "\nEND\n",
            true,
        ),
        (
            "echo START; head -c 3000000 /dev/zero | tr '\\0' '\\033'; echo; echo END",
            "START\n\\x1b\\x1b",
            "\nEND\n",
            true,
        ),
    ];
    for (command, head, tail, utf8) in cases {
        let r = s.call(json!({ "command": command })).await;
        assert!(r.text().len() <= cap, "{command}: {} bytes", r.text().len());
        let o = output(&r);
        assert!(o.stdout_truncated, "{command}");
        assert!(o.stdout.len() <= 24 << 10, "{command}: {}", o.stdout.len());
        assert!(o.stdout.starts_with(head), "{command}: {:.40}", o.stdout);
        assert!(o.stdout.ends_with(tail), "{command}");
        assert!(
            o.stdout.contains("bytes of output left out here"),
            "{command}"
        );
        if utf8 {
            assert!(!o.stdout.contains('\u{FFFD}'), "{command}");
        }
    }
    let o = s
        .run("head -c 20000000 /dev/zero | tr '\\0' e >&2; echo out")
        .await;
    assert_eq!(o.stdout, "out\n");
    assert!(o.stderr_truncated && o.stderr.len() <= 12 << 10);
    assert!(o.stderr.starts_with("eee") && o.stderr.ends_with("eee"));
}
