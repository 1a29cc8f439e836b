//! The body of the `command_parser` fuzz target: `toolgate_tools::shell::analyze` on
//! arbitrary text and on command lines built from the input, checked never to panic, to be
//! deterministic, and never to lose a command.
//!
//! This file depends only on `toolgate-tools` and std, so the same code runs under libFuzzer
//! (`fuzz_targets/command_parser.rs`) and in the stable test suite of toolgate-tools
//! (`crates/toolgate-tools/tests/cases/parser_fuzz.rs`), which replays every saved input in
//! `fuzz/regressions/command_parser/` and a bounded pseudo-random run.
//!
//! What is checked for every input:
//!
//! 1. on the input as text: nothing panics; two analyses are equal; `certain` holds exactly
//!    when no reason is given; a policy that allows only `echo *` allows the line only when
//!    the analysis is certain and every command it found is `echo` (so nothing the parser
//!    could not see is ever allowed);
//! 2. on a command line built from the input's bytes out of known commands (`ls`, `git`,
//!    `curl`, ...) joined by every operator and nested in every construct the parser reads
//!    (lists, pipelines, subshells, groups, `$( )`, backticks, `<( )`, `>( )`, `bash -c`,
//!    `VAR=` prefixes, wrappers, functions, conditions, redirections): when the analysis is
//!    certain, every command put in the line is among the commands found (no command hides
//!    from the policy).

use toolgate_core::Decision;
use toolgate_tools::shell::{analyze, CommandRules};

/// Runs both checks on one input.
pub fn run(data: &[u8]) {
    check_text(&String::from_utf8_lossy(data));
    let (line, names) = build(data);
    check_built(&line, &names);
}

/// Check 1: arbitrary text.
pub fn check_text(text: &str) {
    let a = analyze(text);
    assert_eq!(a, analyze(text), "not deterministic: {text:?}");
    assert_eq!(a.certain, a.uncertain.is_empty(), "{text:?}: {a:?}");
    for c in &a.commands {
        let _ = c.display();
    }
    let rules = CommandRules::from_pairs([(Decision::Allow, "echo *")]).expect("valid rules");
    if rules.verdict(&a).decision == Decision::Allow {
        assert!(a.certain, "{text:?}");
        assert!(
            a.commands
                .iter()
                .all(|c| c.argv.first().is_some_and(|n| n == "echo")),
            "allowed a line running more than echo: {text:?}: {a:?}"
        );
    }
}

/// Check 2: every command placed in `line` is found, unless the analysis is uncertain.
pub fn check_built(line: &str, names: &[&str]) {
    let a = analyze(line);
    if !a.certain {
        return;
    }
    for name in names {
        assert!(
            a.commands.iter().any(|c| c
                .argv
                .first()
                .is_some_and(|n| n.rsplit('/').next() == Some(name))),
            "`{name}` hides in {line:?}: {a:?}"
        );
    }
}

const NAMES: [&str; 8] = [
    "ls",
    "git",
    "curl",
    "rm",
    "touch",
    "cat",
    "id",
    "/usr/bin/wc",
];
const ARGS: [&str; 6] = ["-x", "a.txt", "'q w'", "\"d e\"", "--opt=1", "x\\ y"];

/// Builds a command line from `data`: a small expression language over segments, each byte
/// choosing the next construct. Returns the line and the command names put in it.
pub fn build(data: &[u8]) -> (String, Vec<&'static str>) {
    let mut bytes = data.iter().copied();
    let mut names = Vec::new();
    let line = expr(&mut bytes, &mut names, 0);
    (line, names)
}

fn segment(bytes: &mut impl Iterator<Item = u8>, names: &mut Vec<&'static str>) -> String {
    let b = bytes.next().unwrap_or(0) as usize;
    let name = NAMES[b % NAMES.len()];
    names.push(name.rsplit('/').next().unwrap_or(name));
    let mut s = name.to_string();
    for _ in 0..(b / NAMES.len()) % 3 {
        let a = bytes.next().unwrap_or(0) as usize;
        s.push(' ');
        s.push_str(ARGS[a % ARGS.len()]);
    }
    s
}

fn expr(
    bytes: &mut impl Iterator<Item = u8>,
    names: &mut Vec<&'static str>,
    depth: usize,
) -> String {
    let Some(b) = bytes.next() else {
        return segment(bytes, names);
    };
    if depth > 6 {
        return segment(bytes, names);
    }
    let sub = |bytes: &mut dyn Iterator<Item = u8>, names: &mut Vec<&'static str>| {
        expr(&mut ByRef(bytes), names, depth + 1)
    };
    match b % 24 {
        0 => format!("{} && {}", sub(bytes, names), sub(bytes, names)),
        1 => format!("{} || {}", sub(bytes, names), sub(bytes, names)),
        2 => format!("{}; {}", sub(bytes, names), sub(bytes, names)),
        3 => format!("{} | {}", sub(bytes, names), sub(bytes, names)),
        4 => format!("{} |& {}", sub(bytes, names), sub(bytes, names)),
        5 => format!("{} & {}", sub(bytes, names), sub(bytes, names)),
        6 => format!("{}\n{}", sub(bytes, names), sub(bytes, names)),
        7 => format!("({})", sub(bytes, names)),
        8 => format!("{{ {}; }}", sub(bytes, names)),
        9 => {
            names.push("echo");
            format!("echo \"$({})\"", sub(bytes, names))
        }
        10 => {
            let inner = sub(bytes, names);
            names.push("echo");
            if inner.contains('`') {
                format!("echo $({inner})")
            } else {
                format!("echo `{inner}`")
            }
        }
        11 => {
            names.push("diff");
            format!("diff <({}) a.txt", sub(bytes, names))
        }
        12 => {
            names.push("echo");
            format!("echo ok > >({})", sub(bytes, names))
        }
        13 => {
            let inner = sub(bytes, names);
            if inner.contains('\'') {
                format!(
                    "bash -c \"{}\"",
                    inner
                        .replace('\\', "\\\\")
                        .replace('"', "\\\"")
                        .replace('$', "\\$")
                        .replace('`', "\\`")
                )
            } else {
                format!("bash -c '{inner}'")
            }
        }
        14 => format!("LC_ALL=C {}", segment(bytes, names)),
        15 => format!("timeout 5 {}", segment(bytes, names)),
        16 => format!("env A=1 nice -n 3 {}", segment(bytes, names)),
        17 => format!("{} > out.txt 2>&1", sub(bytes, names)),
        18 => format!("if {}; then {}; fi", sub(bytes, names), sub(bytes, names)),
        19 => {
            names.push("f");
            format!("f() {{ {}; }}; f", sub(bytes, names))
        }
        20 => format!(
            "while {}; do {}; done",
            sub(bytes, names),
            sub(bytes, names)
        ),
        21 => format!("! {}", sub(bytes, names)),
        22 => format!("{} | xargs {}", sub(bytes, names), segment(bytes, names)),
        _ => segment(bytes, names),
    }
}

/// An iterator borrowed through a trait object, so the builder can recurse.
struct ByRef<'a>(&'a mut dyn Iterator<Item = u8>);

impl Iterator for ByRef<'_> {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        self.0.next()
    }
}
