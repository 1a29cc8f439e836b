//! Property: no sequence of edit operations on random files corrupts or partially writes a
//! file. Files have random text with mixed CRLF and LF endings (or, without any `\n`, CR
//! endings), sometimes a byte-order mark
//! and sometimes no final newline; `old_string` is sometimes cut from the file (one or many
//! matches) and sometimes random (often none). After every operation the file is exactly
//! what an independent reference model of edit_file says: the new content when the edit
//! succeeds, the old content byte for byte when it fails (some operations are cancelled
//! before they commit, which must leave the file as it was), and no temporary file is left.

use super::write_support::temp_files;
use proptest::prelude::*;
use toolgate_core::{ErrorKind, ToolContext, TypedTool, Workspace};
use toolgate_tools::fs::edit_file::EditFileArgs;
use toolgate_tools::EditFile;

/// One unit of a file as the reference model sees it.
#[derive(Debug, Clone, PartialEq)]
enum Unit {
    Char(char),
    /// A line ending, as on disk: `\r\n`, `\n`, or `\r` in a file without any `\n`.
    Newline(&'static str),
}

/// What the reference model expects of one edit.
#[derive(Debug, PartialEq)]
enum Expected {
    Bytes(Vec<u8>),
    Fails(&'static str),
}

/// The reference model of edit_file, written from its documented behaviour, unit by unit.
fn reference(file: &[u8], old: &str, new: &str, all: bool) -> Expected {
    let fold = |s: &str| s.replace("\r\n", "\n");
    let (old, new) = (fold(old), fold(new));
    if old.is_empty() || old == new {
        return Expected::Fails("invalid_arguments");
    }
    let (bom, body) = match file.strip_prefix(b"\xef\xbb\xbf") {
        Some(b) => (true, b),
        None => (false, file),
    };
    let Ok(body) = std::str::from_utf8(body) else {
        return Expected::Fails("not_utf8");
    };
    // a file with `\r` and no `\n`: each `\r` is a newline, in the file and in the strings
    let cr_only = body.contains('\r') && !body.contains('\n');
    let (old, new) = if cr_only {
        (old.replace('\r', "\n"), new.replace('\r', "\n"))
    } else {
        (old, new)
    };
    let mut units = Vec::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {
                chars.next();
                units.push(Unit::Newline("\r\n"));
            }
            '\r' if cr_only => units.push(Unit::Newline("\r")),
            '\n' => units.push(Unit::Newline("\n")),
            c => units.push(Unit::Char(c)),
        }
    }
    let view_of = |u: &[Unit]| -> String {
        u.iter()
            .map(|u| match u {
                Unit::Char(c) => *c,
                Unit::Newline(_) => '\n',
            })
            .collect()
    };
    let crlf = units
        .iter()
        .filter(|u| **u == Unit::Newline("\r\n"))
        .count();
    let lf = units.iter().filter(|u| **u == Unit::Newline("\n")).count();
    let style = match (cr_only, crlf > lf) {
        (true, _) => "\r",
        (false, true) => "\r\n",
        (false, false) => "\n",
    };
    let new_units: Vec<Unit> = new
        .chars()
        .map(|c| match c {
            '\n' => Unit::Newline(style),
            c => Unit::Char(c),
        })
        .collect();
    let old_units: Vec<Unit> = old
        .chars()
        .map(|c| {
            if c == '\n' {
                Unit::Newline("\n")
            } else {
                Unit::Char(c)
            }
        })
        .collect();
    let matches_at = |i: usize| {
        units.len() >= i + old_units.len()
            && view_of(&units[i..i + old_units.len()]) == view_of(&old_units)
    };
    let starts: Vec<usize> = (0..units.len()).filter(|&i| matches_at(i)).collect();
    if starts.is_empty() {
        return Expected::Fails("no_match");
    }
    if starts.len() > 1 && !all {
        return Expected::Fails("ambiguous_match");
    }
    let mut out_units = Vec::new();
    let mut i = 0;
    while i < units.len() {
        if matches_at(i) {
            out_units.extend(new_units.iter().cloned());
            i += old_units.len();
        } else {
            out_units.push(units[i].clone());
            i += 1;
        }
    }
    let mut bytes = if bom {
        b"\xef\xbb\xbf".to_vec()
    } else {
        Vec::new()
    };
    for u in out_units {
        match u {
            Unit::Char(c) => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            Unit::Newline(ending) => bytes.extend_from_slice(ending.as_bytes()),
        }
    }
    Expected::Bytes(bytes)
}

/// A random file: lines from a small alphabet (so strings repeat), each ended by LF or CRLF,
/// or, one file in five, all by CR.
fn file() -> impl Strategy<Value = Vec<u8>> {
    let line = prop::sample::select(vec!["a", "ab", "b a", "", "ä\t", "x = 1;", "a\rb", "é€"]);
    let ending = prop::sample::select(vec!["\n", "\r\n"]);
    (
        any::<bool>(),
        prop::collection::vec((line, ending), 0..12),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(bom, lines, final_eol, invalid, mac)| {
            let mut bytes = if bom {
                b"\xef\xbb\xbf".to_vec()
            } else {
                Vec::new()
            };
            for (l, e) in &lines {
                bytes.extend_from_slice(l.as_bytes());
                // classic Mac OS: every line ended by `\r`
                bytes.extend_from_slice(if mac { b"\r" } else { e.as_bytes() });
            }
            if !final_eol && mac && bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            if !final_eol && bytes.last() == Some(&b'\n') {
                bytes.pop();
                if bytes.last() == Some(&b'\r') {
                    bytes.pop();
                }
            }
            if invalid && lines.len() == 3 {
                bytes.push(0xff);
            }
            bytes
        })
}

/// One edit: `old` cut from the file's current text at a random place and length, or a
/// random string; a random `new`; `replace_all` half the time.
#[derive(Debug, Clone)]
struct Op {
    cut: Option<(prop::sample::Index, usize)>,
    old: String,
    new: String,
    all: bool,
    /// The call is cancelled before it starts: whatever it finds, it must not commit.
    cancel: bool,
}

fn op() -> impl Strategy<Value = Op> {
    let piece = "[ab\n\r é]{0,6}";
    (
        prop::option::of((any::<prop::sample::Index>(), 1usize..8)),
        piece,
        piece,
        any::<bool>(),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(cut, old, new, all, cancel)| Op {
            cut,
            old,
            new,
            all,
            cancel,
        })
}

/// `old` for `op` against the current file: a piece of its text, or the op's own string.
fn old_for(op: &Op, file: &[u8]) -> String {
    let text = String::from_utf8_lossy(file);
    let chars: Vec<char> = text.trim_start_matches('\u{feff}').chars().collect();
    match op.cut {
        Some((at, len)) if !chars.is_empty() => {
            let start = at.index(chars.len());
            chars[start..(start + len).min(chars.len())]
                .iter()
                .collect()
        }
        _ => op.old.clone(),
    }
}

fn run_ops(initial: Vec<u8>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, &initial).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tool = EditFile::new();
    for op in ops {
        let before = std::fs::read(&path).unwrap();
        let old = old_for(&op, &before);
        let expected = match reference(&before, &old, &op.new, op.all) {
            Expected::Bytes(_) if op.cancel => Expected::Fails("cancelled"),
            e => e,
        };
        let token = toolgate_core::CancellationToken::new();
        if op.cancel {
            token.cancel();
        }
        let ctx = ToolContext::builder()
            .workspace(ws.clone())
            .cancellation(token)
            .build();
        let args = EditFileArgs {
            path: "f.txt".into(),
            old_string: old.clone(),
            new_string: op.new.clone(),
            replace_all: op.all,
        };
        let result = rt.block_on(tool.call(args, ctx));
        let after = std::fs::read(&path).unwrap();
        match (&expected, &result) {
            (Expected::Bytes(b), Ok(o)) => {
                prop_assert_eq!(&after, b, "old {:?} new {:?} all {}", old, op.new, op.all);
                prop_assert!(o.replacements >= 1);
            }
            (Expected::Fails(reason), Err(e)) => {
                prop_assert_eq!(&after, &before, "a failed edit changed the file");
                let got = match e.kind {
                    ErrorKind::InvalidArguments => "invalid_arguments",
                    ErrorKind::Cancelled => "cancelled",
                    _ => e.reason.as_deref().unwrap_or("?"),
                };
                prop_assert_eq!(got, *reason);
            }
            _ => prop_assert!(
                false,
                "expected {:?}, got {:?} (old {:?}, new {:?}, all {}, file {:?})",
                expected,
                result.as_ref().map(|o| o.replacements),
                old,
                op.new,
                op.all,
                String::from_utf8_lossy(&before)
            ),
        }
        prop_assert!(temp_files(dir.path()).is_empty());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        max_shrink_iters: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_sequence_of_edits_corrupts_a_file(
        initial in file(),
        ops in prop::collection::vec(op(), 1..10),
    ) {
        run_ops(initial, ops)?;
    }
}

#[test]
fn the_reference_model_agrees_with_the_handed_out_case() {
    assert_eq!(
        reference(
            b"alpha\r\nbeta\r\ngamma\r\n",
            "alpha\nbeta",
            "ALPHA\nBETA",
            false
        ),
        Expected::Bytes(b"ALPHA\r\nBETA\r\ngamma\r\n".to_vec())
    );
    assert_eq!(
        reference(b"aaa", "aa", "b", false),
        Expected::Fails("ambiguous_match")
    );
    assert_eq!(
        reference(b"aaa", "aa", "b", true),
        Expected::Bytes(b"ba".to_vec())
    );
}
