//! The body of the `command_grammar` fuzz target: command lines built from the input out of
//! programs that run other programs, with rules built from the input too, checked against
//! what the line was built to run.
//!
//! This file depends only on `toolgate-core`, `toolgate-tools` and std, so the same code runs
//! under libFuzzer (`fuzz_targets/command_grammar.rs`) and in the stable test suite of
//! toolgate-tools (`crates/toolgate-tools/tests/cases/grammar_fuzz.rs`), which replays every
//! saved input in `fuzz/regressions/command_grammar/`, runs a bounded pseudo-random run and a
//! proptest over the same body.
//!
//! The builder knows every program it puts in the line and how: as a command the shell runs
//! (`ls`, `bash -c 'LINE'`'s inner commands, `find -exec CMD`, `sed`'s `e CMD`, ...), as a
//! wrapper (`timeout 5 CMD`), as code no grammar can read (the command inside
//! `python3 -c '...'`, `awk 'BEGIN{system(...)}'`, `tar --to-command=...`, a variable that
//! names a program), or as an override of the sandbox's git settings (`GIT_PAGER=...`). The
//! property, for the verdict of one-word allow and deny rules over the line:
//!
//! 1. the verdict is `allow` only when every command it was built to run is allowed by a
//!    rule, no wrapper it holds is denied, and it holds no code that cannot be read and no
//!    override;
//! 2. a denied command, or a denied wrapper, is never allowed; when the analysis is certain
//!    (no syntax the parser doubts), the verdict is `deny`;
//! 3. an override of the sandbox's settings is denied (asked, when the parser doubts the
//!    line).
//!
//! That is: every program the line can run is decided by a rule, or the call asks.

use toolgate_core::Decision;
use toolgate_tools::shell::{analyze, CommandRules};

/// How the builder put a program in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// A command the shell runs, readable: it needs an allow rule.
    Command(&'static str),
    /// A wrapper around a command: only deny and ask rules are about it.
    Wrapper(&'static str),
    /// A command inside code nothing can read: the call must ask.
    Hidden(&'static str),
    /// An override of the sandbox's git settings: the call must be denied.
    Override,
}

/// Programs the lines are made of.
pub const NAMES: [&str; 12] = [
    "ls", "cat", "touch", "rm", "curl", "git", "id", "wc", "echo", "python3", "sed", "find",
];
/// Programs the rules are about: the lines' programs and some wrappers and shells.
pub const RULE_NAMES: [&str; 15] = [
    "ls", "cat", "touch", "rm", "curl", "git", "id", "wc", "echo", "python3", "sed", "find",
    "timeout", "sudo", "bash",
];
const ARGS: [&str; 5] = ["-x", "a.txt", "'q w'", "--opt=1", "x\\ y"];
const WRAPPERS: [(&str, &str); 7] = [
    ("timeout", "timeout 5"),
    ("nice", "nice -n 3"),
    ("nohup", "nohup"),
    ("env", "env LC_ALL=C"),
    ("stdbuf", "stdbuf -oL"),
    ("setsid", "setsid"),
    ("sudo", "sudo -u nobody"),
];

/// Builds the line and the rules from `data`, and checks the property (see the module docs).
pub fn run(data: &[u8]) {
    let (rules, pairs) = rules(data);
    let rest = data.get(RULE_NAMES.len().div_ceil(4)..).unwrap_or_default();
    let (line, placed) = build(rest);
    check(&line, &placed, &rules, &pairs);
}

/// One-word rules from the first bytes: two bits per name (none, allow, deny, allow).
pub fn rules(data: &[u8]) -> (CommandRules, Vec<(Decision, &'static str)>) {
    let mut pairs = Vec::new();
    for (i, name) in RULE_NAMES.iter().enumerate() {
        let bits = data.get(i / 4).copied().unwrap_or(0) >> ((i % 4) * 2) & 3;
        match bits {
            1 | 3 => pairs.push((Decision::Allow, *name)),
            2 => pairs.push((Decision::Deny, *name)),
            _ => {}
        }
    }
    let rules = CommandRules::from_pairs(pairs.iter().copied()).expect("one-word rules parse");
    (rules, pairs)
}

/// Checks the property for `line`, built with `placed`, under `rules`.
pub fn check(
    line: &str,
    placed: &[Placed],
    rules: &CommandRules,
    pairs: &[(Decision, &'static str)],
) {
    let has = |d: Decision, name: &str| pairs.iter().any(|(pd, n)| *pd == d && *n == name);
    let analysis = analyze(line);
    let verdict = rules.verdict(&analysis);
    let denied = placed.iter().any(|p| match p {
        Placed::Command(n) | Placed::Wrapper(n) => has(Decision::Deny, n),
        _ => false,
    });
    if placed.contains(&Placed::Override) {
        // what the parser cannot read it cannot know to refuse: it asks
        let want = if analysis.certain {
            Decision::Deny
        } else {
            Decision::Ask
        };
        assert!(
            verdict.decision >= want,
            "an override of the sandbox's settings was not refused: {line:?}: {verdict:?}"
        );
        return;
    }
    if verdict.decision == Decision::Allow {
        for p in placed {
            match p {
                Placed::Command(n) => assert!(
                    has(Decision::Allow, n) && !has(Decision::Deny, n),
                    "`{n}` ran on no allow rule: {line:?}: {verdict:?}\n{analysis:?}"
                ),
                Placed::Wrapper(n) => assert!(
                    !has(Decision::Deny, n),
                    "the denied wrapper `{n}` was allowed: {line:?}"
                ),
                Placed::Hidden(n) => panic!(
                    "`{n}`, run by code no rule can read, was allowed: {line:?}: {verdict:?}"
                ),
                Placed::Override => unreachable!(),
            }
        }
    }
    if denied && analysis.certain {
        assert_eq!(
            verdict.decision,
            Decision::Deny,
            "a denied program in a certain line was not denied: {line:?}: {verdict:?}\n{analysis:?}"
        );
    }
}

/// Builds a line from `data`: each byte chooses the next construct. Returns the line and the
/// programs put in it.
pub fn build(data: &[u8]) -> (String, Vec<Placed>) {
    let mut bytes = data.iter().copied();
    let mut placed = Vec::new();
    let line = expr(&mut bytes, &mut placed, 0);
    (line, placed)
}

/// `s` as one single-quoted shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn segment(bytes: &mut dyn Iterator<Item = u8>, placed: &mut Vec<Placed>) -> String {
    let b = bytes.next().unwrap_or(0) as usize;
    let name = NAMES[b % NAMES.len()];
    placed.push(Placed::Command(name));
    let mut s = name.to_string();
    for _ in 0..(b / NAMES.len()) % 3 {
        let a = bytes.next().unwrap_or(0) as usize;
        s.push(' ');
        s.push_str(ARGS[a % ARGS.len()]);
    }
    s
}

/// A segment whose programs are all hidden (inside code no grammar reads).
fn hidden(bytes: &mut dyn Iterator<Item = u8>, placed: &mut Vec<Placed>) -> String {
    let mut inner = Vec::new();
    let s = segment(bytes, &mut inner);
    placed.extend(inner.into_iter().map(|p| match p {
        Placed::Command(n) => Placed::Hidden(n),
        other => other,
    }));
    s
}

fn expr(bytes: &mut dyn Iterator<Item = u8>, placed: &mut Vec<Placed>, depth: usize) -> String {
    let Some(b) = bytes.next() else {
        return segment(bytes, placed);
    };
    if depth > 5 {
        return segment(bytes, placed);
    }
    let sub = |bytes: &mut dyn Iterator<Item = u8>, placed: &mut Vec<Placed>| {
        expr(bytes, placed, depth + 1)
    };
    match b % 32 {
        0 => format!("{} && {}", sub(bytes, placed), sub(bytes, placed)),
        1 => format!("{}; {}", sub(bytes, placed), sub(bytes, placed)),
        2 => format!("{} | {}", sub(bytes, placed), sub(bytes, placed)),
        3 => format!("({})", sub(bytes, placed)),
        4 => {
            placed.push(Placed::Command("echo"));
            format!("echo \"$( {} )\"", sub(bytes, placed))
        }
        5 => {
            placed.push(Placed::Command("bash"));
            format!("bash -c {}", quote(&sub(bytes, placed)))
        }
        6 => {
            let (name, words) = WRAPPERS[bytes.next().unwrap_or(0) as usize % WRAPPERS.len()];
            placed.push(Placed::Wrapper(name));
            format!("{words} {}", segment(bytes, placed))
        }
        7 => {
            placed.push(Placed::Wrapper("xargs"));
            format!("{} | xargs {}", sub(bytes, placed), segment(bytes, placed))
        }
        8 => {
            placed.push(Placed::Command("find"));
            format!("find . -exec {} \\;", segment(bytes, placed))
        }
        9 => {
            placed.push(Placed::Command("sed"));
            format!(
                "sed -n {} f.txt",
                quote(&format!("1e {}", segment(bytes, placed)))
            )
        }
        10 => {
            placed.push(Placed::Command("git"));
            format!("git rebase --exec {} main", quote(&segment(bytes, placed)))
        }
        11 => {
            placed.push(Placed::Command("python3"));
            let inner = hidden(bytes, placed);
            format!(
                "python3 -c {}",
                quote(&format!("import os; os.system({inner:?})"))
            )
        }
        12 => {
            let inner = hidden(bytes, placed);
            placed.push(Placed::Hidden("awk"));
            format!("awk {}", quote(&format!("BEGIN{{system({inner:?})}}")))
        }
        13 => {
            placed.push(Placed::Command("sed"));
            let inner = hidden(bytes, placed);
            format!(
                "sed {} f.txt",
                quote(&format!("s/.*/{}/e", inner.replace('/', "\\/")))
            )
        }
        14 => {
            let inner = hidden(bytes, placed);
            placed.push(Placed::Hidden("tar"));
            format!("tar --to-command={} -xf a.tar", quote(&inner))
        }
        15 => {
            placed.push(Placed::Command("git"));
            let inner = hidden(bytes, placed);
            format!("git -c alias.x={} x", quote(&format!("!{inner}")))
        }
        16 => {
            let inner = hidden(bytes, placed);
            placed.push(Placed::Hidden("make"));
            format!("make CC={}", quote(&inner))
        }
        17 => {
            // a variable that names a program: the line is uncertain
            let var = ["EDITOR", "LD_PRELOAD", "NODE_OPTIONS", "GIT_SSH_COMMAND"]
                [bytes.next().unwrap_or(0) as usize % 4];
            let inner = hidden(bytes, placed);
            format!("{var}={} {}", quote(&inner), segment(bytes, placed))
        }
        18 => {
            // a harmless variable changes nothing
            format!("LC_ALL=C TZ=UTC {}", segment(bytes, placed))
        }
        19 => {
            placed.push(Placed::Override);
            let how = [
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=",
                "GIT_PAGER=",
                "env GIT_CONFIG_PARAMETERS=",
                "git -c core.pager=",
            ][bytes.next().unwrap_or(0) as usize % 4];
            // never the value the sandbox sets (`GIT_PAGER=cat` overrides nothing)
            let inner = format!("{}; false", hidden(bytes, placed));
            format!("{how}{} {}", quote(&inner), segment(bytes, placed))
        }
        20 => {
            placed.push(Placed::Override);
            let how = ["env -i", "unset GIT_CONFIG_COUNT;", "export -n GIT_PAGER;"]
                [bytes.next().unwrap_or(0) as usize % 3];
            format!("{how} {}", segment(bytes, placed))
        }
        21 => {
            placed.push(Placed::Command("git"));
            format!("git -C . {}", segment_after_git(bytes))
        }
        22 => {
            // the line runs a script whose commands cannot be seen
            let inner = hidden(bytes, placed);
            format!("echo {} | bash", quote(&inner))
        }
        23 => format!("if {}; then {}; fi", sub(bytes, placed), sub(bytes, placed)),
        24 => format!("{} > out.txt 2>&1", sub(bytes, placed)),
        25 => {
            placed.push(Placed::Command("sh"));
            placed.push(Placed::Command("find"));
            let inner = sub(bytes, placed);
            format!("find . -exec sh -c {} \\;", quote(&inner))
        }
        _ => segment(bytes, placed),
    }
}

/// A git subcommand after global options (not placed: `git` is).
fn segment_after_git(bytes: &mut dyn Iterator<Item = u8>) -> String {
    ["status", "log --oneline", "tag v1", "push origin"][bytes.next().unwrap_or(0) as usize % 4]
        .to_string()
}
