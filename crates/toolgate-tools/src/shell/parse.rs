//! Reading a bash command line the way bash would run it: [`analyze`].
//!
//! The command is parsed with tree-sitter-bash into a syntax tree, and every node is visited
//! (with an explicit stack, so nesting depth costs no native stack). Every `command` node,
//! wherever it sits (after `&&`, `||`, `;`, `|`, `|&`, `&` or a newline, in a subshell, a
//! group, a function body, a condition, `$( )`, backticks, `<( )`, `>( )`, a here-document)
//! becomes a [`SimpleCommand`]:
//!
//! 1. its leading `VAR=value` assignments are stripped (kept in `assignments`);
//! 2. its words are read as bash would after quote removal (`c'ur'l`, `"curl"`, `\curl` and
//!    `$'\x63url'` all read `curl`); words holding expansions keep their source text;
//! 3. its words are read by the command grammar ([`toolgate_core::pattern::program`]): a
//!    wrapper (`env`, `nice`, `timeout`, `nohup`, `command`, `exec`, `time`, `sudo`,
//!    `xargs`, `stdbuf`, `setsid`, ...) is unwrapped to the command it runs; the commands a
//!    program runs that can be read (`bash -c STRING` and the other POSIX shells, `su -c`,
//!    `find -exec ... ;`, `fd -x`, `sed`'s `e COMMAND`, `git rebase --exec`, `git bisect
//!    run`, `eval` of literal words, ...) are commands of their own; the word through which
//!    it runs code that cannot be read (an interpreter's script or `-c`, `awk`'s `system`,
//!    `tar --to-command`, ...) is kept in [`SimpleCommand::reading`], for the rules to decide.
//!
//! What the line may run without it being known that it does is kept apart, in
//! [`CommandAnalysis::possible`], for the rules that restrict only: a literal argument of a
//! program the grammar cannot read that reads as a line (`./mysh -c 'touch x'`), the code
//! words of an interpreter's inline code, a program's path given to `cp`/`ln`/... or opened
//! for reading, and the words of a line whose doubt may make its text run as code (a name
//! only known when it runs, `eval`, `PS4`, a syntax error: see `words_if_unread`).
//!
//! Redirections become [`Redirect`]s (their targets are paths the call reads or writes);
//! file-descriptor duplications (`2>&1`) and the standard devices (`/dev/null`, ...) are not
//! paths.
//!
//! Variables a command line sets are judged by [`super::vars`]: a `VAR=` prefix (or
//! `env VAR=`, `export VAR=`, `declare -x`, `read VAR`, `for VAR in`, ... of a variable the
//! sandbox exports) that is not known to be harmless makes the analysis uncertain; one that
//! would undo the sandbox's git settings (`GIT_CONFIG_COUNT=`, `unset GIT_PAGER`, `env -i`,
//! `git -c core.fsmonitor=...`) is listed in [`CommandAnalysis::pinned`], and the call is
//! refused.
//!
//! Whatever cannot be read with certainty makes the analysis uncertain, with a reason:
//! syntax errors, a command name that is an expansion or holds glob or brace patterns,
//! `eval` of a word that is only known when it runs, `source`, `.`, `alias`, `hash` with
//! options, `enable`, `trap`, a wrapper used in a way the grammar cannot read (`env -S`), a program reading the commands it runs from its
//! input (`curl x | bash`, `vim`, `ed`), variables set as above (but `IFS=` before `read`),
//! `set -a`, name references, arithmetic on variables (bash evaluates a variable's text as an
//! expression, which can run a command substitution) unless each holds a number the line
//! itself set (see `Known`: `n=0; n=$((n+1))`, `for ((i=0; ..))`), subscripts other than
//! literal numbers, `@`, `*` and the keys of an associative array the line declared, brace
//! expansion, redirection targets holding expansions, input
//! larger than [`MAX_INPUT`], nesting deeper than [`MAX_DEPTH`], or a parse slower than
//! [`PARSE_BUDGET`].

use super::vars::{self, Var};
use std::time::{Duration, Instant};
use toolgate_core::pattern::program::{self, Reading, Run};
use tree_sitter::{Node, Parser};

/// Commands longer than this (bytes) are not parsed: the analysis is uncertain.
pub const MAX_INPUT: usize = 256 << 10;
/// Nodes nested deeper than this, or `bash -c` strings nested deeper than
/// [`MAX_SHELL_NESTING`], make the analysis uncertain.
pub const MAX_DEPTH: usize = 512;
/// How deep `bash -c '...'` strings are analyzed again.
pub const MAX_SHELL_NESTING: usize = 8;
/// A parse that takes longer than this is abandoned: the analysis is uncertain.
pub const PARSE_BUDGET: Duration = Duration::from_millis(250);

/// Read or write access of a redirection target.
pub use toolgate_core::Access;

/// Everything a command line would run and touch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandAnalysis {
    /// Every simple command, in source order (substitutions after the command holding them).
    pub commands: Vec<SimpleCommand>,
    /// Every redirection to or from a file.
    pub redirects: Vec<Redirect>,
    /// Whether every command and target could be read with certainty.
    pub certain: bool,
    /// Why the analysis is uncertain (empty when certain).
    pub uncertain: Vec<String>,
    /// How the line would undo settings the sandbox pins (git's hooks, fsmonitor, pagers,
    /// ...: see [`super::vars`]); a line with any is refused.
    pub pinned: Vec<String>,
    /// Commands the line may run, read from the arguments of a program the command grammar
    /// does not know or that runs its arguments ([`program::runs_its_arguments`]), or whose
    /// name is a glob or an expansion: an argument that reads as a command line, which such a
    /// program may run (`./mysh -c 'touch x'`, `strace -f bash -c 'touch x'`). Deny and ask
    /// rules match them; they need no allow rule (the program itself does).
    pub possible: Vec<SimpleCommand>,
}

/// One command bash would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The words after assignments and wrappers: `["git", "clean", "-fd"]`. A word holding an
    /// expansion keeps its source text (`$HOME/x`).
    pub argv: Vec<String>,
    /// The `VAR=value` prefixes stripped before matching, as written.
    pub assignments: Vec<String>,
    /// The words of each wrapper unwrapped to reach `argv`, outermost first
    /// (`[["timeout", "5"], ["nice"]]`); deny and ask rules match them too.
    pub wrappers: Vec<Vec<String>>,
    /// Whether more arguments are added when it runs (the command of `xargs`, `find -exec`).
    pub open_args: bool,
    /// Whether those arguments are words of `xargs`'s input, which may be anything, options
    /// included (`find -exec` adds the paths it finds, which start with its root).
    pub args_from_input: bool,
    /// What the command grammar read in `argv`: the word through which it runs code that
    /// cannot be read, if any, and its global options.
    pub reading: Reading,
}

impl SimpleCommand {
    /// The command as a line: its words joined by spaces, quoted where needed.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|w| quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One redirection to or from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The target as bash reads it (quotes removed).
    pub path: String,
    /// `Read` for `<`, `Write` for `>`, `>>`, `>|`, `&>`, `&>>`, `>&FILE` and `<>`.
    pub access: Access,
}

/// Quotes `word` for display when it holds characters the shell would split or expand.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^~".contains(&b) || !b.is_ascii());
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Analyzes `command` as bash would run it: see the module docs. Never panics; any input
/// that cannot be read with certainty gives `certain: false` with its reasons.
pub fn analyze(command: &str) -> CommandAnalysis {
    let mut a = Analyzer::default();
    a.source(command, 0);
    a.words_if_unread(command);
    // `exec 3</usr/bin/touch; /proc/self/fd/3 x`: a program opened for reading may be run
    // through its descriptor
    let opened: Vec<String> = a
        .redirects
        .iter()
        .filter(|r| r.access == Access::Read && r.path.contains('/'))
        .map(|r| r.path.clone())
        .collect();
    for path in &opened {
        a.possible_argv(std::iter::once(path.as_str()));
    }
    let mut out = CommandAnalysis {
        commands: a.commands,
        redirects: a.redirects,
        certain: a.uncertain.is_empty(),
        uncertain: a.uncertain,
        pinned: a.pinned,
        possible: a.possible,
    };
    out.pinned.dedup();
    out.uncertain.dedup();
    out
}

#[derive(Default)]
struct Analyzer {
    commands: Vec<SimpleCommand>,
    redirects: Vec<Redirect>,
    uncertain: Vec<String>,
    pinned: Vec<String>,
    /// See [`CommandAnalysis::possible`].
    possible: Vec<SimpleCommand>,
    /// Whether a doubt of the line may make its text run as code ([`Analyzer::doubt`]).
    unread: bool,
    /// How many lines were parsed as possible commands, in this analysis and the ones it was
    /// made for (at most [`MAX_POSSIBLE_LINES`]).
    possible_reads: usize,
    /// What each line being read (the innermost last) sets its variables to: see [`Known`].
    known: Vec<Known>,
    /// `set -k` (or `-a`) came before in the line: a `NAME=value` argument after a command's
    /// name may be in its environment, and is judged as an assignment for it.
    keyword: bool,
}

/// The variables of one line whose text bash may evaluate without running anything: bash
/// evaluates a variable's text as an expression in arithmetic (`$((n))`, `[[ n -eq 0 ]]`,
/// `for ((..))`, an indexed array's subscript), and text like `a[$(cmd)]` runs cmd. A
/// variable is known when every assignment to it in the line gives it a number (a literal
/// number, or arithmetic, whose own variables are checked where it is), none gives it text
/// from elsewhere (`read`, `mapfile`, `for x in`, `printf -v`, a declaration without a number,
/// `${x:=..}`, a command substitution, ...), and the evaluation comes after an assignment that
/// has surely run by then (see [`ran_until`]: a statement of the line, of a group `{ ..; }`, a
/// subshell, a loop body or a function body, including `local`/`declare`/`readonly`/`export
/// x=5`, before the evaluation in the same sequence or `&&` list; or the initializer of the
/// enclosing `for ((..))`); before it the value comes from the environment. Appending a
/// number (`x+=1`, `x+=$((..))`) keeps a number a number and text text: it neither sets nor
/// taints. A declaration without a value (`export x`, `readonly x`, `export -n x`, `declare
/// -x x` outside a function: see [`keeps_values`]) keeps the value too; after `readonly x`
/// an assignment to x fails, so one written after it sets nothing.
#[derive(Default)]
struct Known {
    /// Where a variable holds a number it was given in the line.
    set: Vec<Set>,
    /// Variables given other text somewhere in the line.
    tainted: std::collections::HashSet<String>,
    /// Associative arrays declared by a statement of the line (`declare -A m`), and where:
    /// their subscripts are strings, not arithmetic.
    assoc: Vec<(String, usize)>,
    /// Where each variable is assigned: `declare -A` fails on an indexed array
    /// assigned before it (`m=(1); declare -A m`), which stays indexed.
    touched: Vec<(String, usize)>,
    /// Where each variable is named by a builtin (`declare`, `local`, `unset`, `read`, ...):
    /// after `unset m`, or in a function's `local m`, `m[k]=v` makes an indexed array again.
    declared: Vec<(String, usize)>,
    /// A builtin assigns a variable whose name is only known when it runs (`printf -v "$v"`,
    /// `read "$v"`, `declare "$v=..."`): it may be any of them.
    any: bool,
    /// Where a variable is made read-only without a value (`readonly x`, `declare -r x`):
    /// an assignment after it fails.
    frozen: Vec<(String, usize)>,
    /// Variables a declaration of the line exports (`export x`, `declare -x x=1`): a later
    /// assignment to one reaches the commands after it, as `export x=...` would.
    exported: std::collections::HashSet<String>,
    /// Every literal text the line gives a variable (an appended part counted as a value of
    /// its own, since what it is appended to may be empty): a word made of the variable's
    /// value is judged by these (see [`Known::never_dash`]).
    texts: Vec<(String, String)>,
    /// Variables given text the line does not show somewhere (`x=$1`, `read x`, `for x in`,
    /// `${x:=..}`, a declaration that does not simply assign, `unset x`).
    foreign: std::collections::HashSet<String>,
}

/// One assignment of a number, and the bytes of the line where it has surely run.
struct Set {
    /// The variable assigned.
    name: String,
    /// An evaluation after this byte comes after the assignment...
    from: usize,
    /// ...up to this byte (inclusive; `usize::MAX`: to the end of the line).
    to: usize,
    /// The innermost function definition holding the assignment (its first byte): a function
    /// defined in the range may be called after it (`f() { local x=1; g() { ..; }; }; f; g`).
    function: Option<usize>,
}

impl Known {
    /// Whether `name`, evaluated at byte `at` in the function starting at `function`, holds a
    /// number set by the line.
    fn number(&self, name: &str, at: usize, function: Option<usize>) -> bool {
        matches!(name, "#" | "?" | "$" | "!")
            || !self.tainted.contains(name) && self.assigned(name, at, function)
    }

    /// Whether the value of `name` read at byte `at` in the function starting at `function`
    /// surely starts with something else than `-`: the line surely assigned it before, gave it
    /// only literal texts none of which is empty or starts with `-` (or numbers), and nothing
    /// it does not show.
    fn never_dash(&self, name: &str, at: usize, function: Option<usize>) -> bool {
        !self.foreign.contains(name)
            && self.assigned(name, at, function)
            && self
                .texts
                .iter()
                .filter(|(n, _)| n == name)
                .all(|(_, v)| !v.is_empty() && !v.starts_with('-'))
    }

    /// Whether an assignment of the line to `name` has surely run before byte `at` in the
    /// function starting at `function`, and no builtin may have assigned it a text unseen.
    fn assigned(&self, name: &str, at: usize, function: Option<usize>) -> bool {
        !self.any
            && !set_by_bash(name)
            && self.set.iter().any(|s| {
                s.name == name
                    && s.from < at
                    && at <= s.to
                    && (s.function == function || s.function.is_none() && s.to == usize::MAX)
                    && !self.frozen.iter().any(|(n, f)| n == name && *f < s.from)
            })
    }
}

/// Bash builtins that read options only before their first operand.
const OPTIONS_FIRST: [&str; 11] = [
    "printf",
    "read",
    "set",
    "shopt",
    "mapfile",
    "readarray",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
];
/// The program named for the words of a line the grammar could not parse (see
/// [`Analyzer::possible_words`]): no program the command grammar knows.
const UNPARSED: &str = "(unparsed)";
/// The program named for the words of an interpreter's code ([`Analyzer::possible_code`]).
const CODE: &str = "(code)";
/// Characters that make an argument a command line rather than one word, where a program may
/// run it as one (white space, operators, redirections, expansions).
const LINE_CHARS: [char; 12] = [' ', '\t', '\n', ';', '&', '|', '<', '>', '(', '`', '$', '{'];
/// The most arguments parsed as lines a command may run ([`CommandAnalysis::possible`]) in
/// one analysis; past it they are split into words.
const MAX_POSSIBLE_LINES: usize = 32;
/// Programs that copy, move or link files: a program's path among their operands makes a
/// copy of the program under another name.
const COPIES_FILES: [&str; 6] = ["cp", "ln", "install", "mv", "rsync", "link"];
/// Builtins that run code the analysis cannot see.
const OPAQUE: [&str; 8] = [
    "eval", "source", ".", "alias", "hash", "enable", "trap", "coproc",
];
/// Bash's reserved words: as a command name they mean the grammar misread the line.
const RESERVED: [&str; 20] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "function", "select", "{", "}", "!", "[[", "]]",
];
/// Targets that are standard streams or devices, not files of the workspace.
const DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];

impl Analyzer {
    /// The line cannot be read with certainty, for a reason that may make text of the line
    /// run as code (see [`Analyzer::words_if_unread`]).
    fn doubt(&mut self, why: impl Into<String>) {
        self.unread = true;
        self.doubt_local(why);
    }

    /// The line cannot be read with certainty, for a reason that makes no text of the line
    /// code: a variable set for a command, words or options known only when it runs, a
    /// redirection target, a command's input.
    fn doubt_local(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.uncertain.contains(&why) {
            self.uncertain.push(why);
        }
    }

    /// Records what setting a variable means (see [`super::vars`]).
    fn var(&mut self, v: Var) {
        match v {
            Var::Harmless => {}
            // what the variable changes is the business of the program it is set for, not
            // text of the line run as code (that is [`Analyzer::evaluated_var`])
            Var::Changes(why) => self.doubt_local(why),
            Var::Pinned(why) => {
                if !self.pinned.contains(&why) {
                    self.pinned.push(why);
                }
            }
        }
    }

    /// Marks the line unread ([`Analyzer::doubt`]) when it sets a variable whose text bash
    /// itself runs or looks commands up by (`PS4='$(touch x)'`, `PROMPT_COMMAND`,
    /// `BASH_CMDS[ls]=/usr/bin/touch`, `BASH_ALIASES`, `BASH_ENV`, `PATH`, `IFS`).
    fn evaluated_var(&mut self, name: &str) {
        if vars::changes_the_shell(name) {
            self.unread = true;
        }
    }

    /// Records what setting `name` to `value` for a command means ([`vars::judge`]), and reads
    /// the command line a program runs from such a variable set to a literal value
    /// ([`vars::line_of`]: `GIT_EXTERNAL_DIFF`, `PROMPT_COMMAND`, ...) as a line of its own,
    /// so the rules that restrict hold for it; the assignment itself keeps the line uncertain.
    /// A value the sandbox gives the variable already (`GIT_PAGER=cat`) changes nothing, and a
    /// pinned one is refused whatever it runs: neither is read.
    fn assign(&mut self, name: &str, value: Option<&str>, nesting: usize) {
        self.evaluated_var(name);
        let v = vars::judge(name, value);
        let changes = matches!(v, Var::Changes(_));
        self.var(v);
        if let Some(line) = value
            .filter(|_| changes)
            .and_then(|v| vars::line_of(name, v))
        {
            self.source(&line, nesting + 1);
        }
    }

    /// Records what assigning the shell variable `name` means: for later commands, as an
    /// exported variable when a declaration of the line exports it (`export x=5; x=abc`
    /// hands `abc` on), else as [`vars::judge_shell_variable`] says. `number`: the value is
    /// a number (arithmetic) whose digits are not known here.
    fn shell_var(&mut self, name: &str, value: Option<&str>, number: bool) {
        self.evaluated_var(name);
        let bare = name.split('[').next().unwrap_or(name);
        if self.known.last().is_some_and(|k| k.exported.contains(bare)) {
            self.var(match value {
                None if number => vars::judge_number(name),
                _ => vars::judge(name, value),
            });
        } else {
            self.var(vars::judge_shell_variable(name, value));
        }
    }

    /// Reads `line`, which a command of the line may run (see [`CommandAnalysis::possible`]),
    /// and keeps what it runs as possible commands: whatever it holds that cannot be read,
    /// or would undo the sandbox's settings, is the possible program's business, not the
    /// line's.
    /// Past [`MAX_POSSIBLE_LINES`] parses the line is not parsed: its words, split at white
    /// space, quotes and operators, are kept as the words of `program` (one the grammar
    /// cannot read), which a rule that restricts reads from any word naming its program.
    fn possible_line(&mut self, program: &str, line: &str, nesting: usize) {
        if self.possible_reads >= MAX_POSSIBLE_LINES || nesting >= MAX_SHELL_NESTING {
            self.possible_words(program, line);
            return;
        }
        self.possible_reads += 1;
        let mut inner = Analyzer {
            possible_reads: self.possible_reads,
            ..Analyzer::default()
        };
        inner.source(line, nesting + 1);
        // as a rule reads a possible command: a program of the line not known is not
        // searched for others (`--title 'Replace curl'` runs no curl)
        for c in &mut inner.commands {
            c.reading = program::read_possible(&c.argv);
        }
        inner.words_if_unread(line);
        self.possible_reads = inner.possible_reads;
        self.possible.append(&mut inner.commands);
        self.possible.append(&mut inner.possible);
    }

    /// Where the line `src` just read cannot be read with certainty, or runs code the
    /// analysis cannot read (a script, an interpreter's code), keeps its words as a possible
    /// command ([`Analyzer::possible_words`]): what such a line runs is made of text it
    /// holds (`c=touch; $c x`, `$(echo touch) x`, `PS4='$(touch x)'; set -x`, `printf
    /// 'touch x' > f; bash f`), so a rule that restricts reads every word of it. The line
    /// asks in any case: no allow rule or grant covers it.
    fn words_if_unread(&mut self, src: &str) {
        // a script the line writes and runs (`printf 'touch x' > f; bash f`)
        let writes_its_script = self.commands.iter().any(|c| {
            c.reading
                .code
                .as_ref()
                .and_then(|k| c.argv.get(k.at))
                .is_some_and(|script| {
                    self.redirects
                        .iter()
                        .any(|r| r.access == Access::Write && r.path == *script)
                })
        });
        if !writes_its_script && self.runs_what_it_writes() {
            // uncertain too: what it wrote may not be readable (`base64 -d > Makefile`)
            self.doubt(
                "the line writes a file that it then runs as code (a script, a build tool's \
                 file); what it runs is only known when it runs",
            );
        }
        if self.unread || writes_its_script {
            self.possible_words(UNPARSED, src);
        }
    }

    /// Whether the line writes a file that a command of the line then runs as code: the
    /// files it writes are its redirection targets and what `tee`, `sponge`, `dd of=`, `cp`,
    /// `mv`, `install`, `ln` and `rsync` write; one is run when a command runs it by name
    /// (`./s.sh`), an interpreter or shell is given it as its code (`bash s.sh`, `python3 -m
    /// m` after `m.py`) or as its input (`bash < f`), or it is a file a build tool of the line
    /// reads by its name (`Makefile` and `make`, `package.json` and `npm`, `Cargo.toml` and
    /// `cargo`, `conftest.py` and `pytest`, ...). An interpreter or shell whose code is a word
    /// only known when the line runs (`bash $f`, `bash ./s*.sh`) counts as running any of
    /// them. A file only named by other commands (`git add README.md`, `cat notes.md`) is
    /// data.
    fn runs_what_it_writes(&self) -> bool {
        // the programs rustup's proxies stand for, which read the toolchain file
        const RUSTUP_PROXIES: &[&str] = &[
            "cargo",
            "rustc",
            "rustup",
            "rustfmt",
            "rustdoc",
            "cargo-fmt",
            "cargo-clippy",
        ];
        const READ_BY_NAME: &[(&str, &[&str])] = &[
            ("Makefile", &["make", "gmake"]),
            ("makefile", &["make", "gmake"]),
            ("GNUmakefile", &["make", "gmake"]),
            (
                "package.json",
                &["npm", "pnpm", "yarn", "npx", "bun", "node"],
            ),
            (".npmrc", &["npm", "pnpm", "npx"]),
            (".yarnrc", &["yarn"]),
            (".yarnrc.yml", &["yarn"]),
            ("Cargo.toml", &["cargo"]),
            ("rust-toolchain", RUSTUP_PROXIES),
            ("rust-toolchain.toml", RUSTUP_PROXIES),
            // `.cargo/config.toml`: a rustc-wrapper, a linker, aliases
            ("config.toml", &["cargo"]),
            ("build.rs", &["cargo"]),
            (
                "pyproject.toml",
                &["pip", "pip3", "python", "python3", "uv", "poetry", "pytest"],
            ),
            ("setup.py", &["pip", "pip3", "python", "python3", "uv"]),
            ("setup.cfg", &["pip", "pip3", "python", "python3", "pytest"]),
            ("conftest.py", &["pytest", "python", "python3"]),
            ("pytest.ini", &["pytest", "python", "python3"]),
            ("tox.ini", &["tox", "pytest"]),
            ("noxfile.py", &["nox"]),
            ("Rakefile", &["rake", "bundle"]),
            ("Gemfile", &["bundle", "gem"]),
            ("build.gradle", &["gradle", "gradlew"]),
            ("build.gradle.kts", &["gradle", "gradlew"]),
            ("settings.gradle", &["gradle", "gradlew"]),
            ("pom.xml", &["mvn", "mvnw"]),
            ("CMakeLists.txt", &["cmake"]),
            ("justfile", &["just"]),
            ("Justfile", &["just"]),
            ("Taskfile.yml", &["task"]),
            ("meson.build", &["meson", "ninja"]),
            (".envrc", &["direnv"]),
            ("deno.json", &["deno"]),
        ];
        let plain = |p: &str| p.trim_start_matches("./").to_string();
        // a command of the line writes files whose names the line does not show (`split`'s,
        // an archive's members): any file may be one
        let mut extracted_at: Option<usize> = None;
        let mut written: Vec<String> = self
            .redirects
            .iter()
            .filter(|r| r.access == Access::Write)
            .map(|r| plain(&r.path))
            .collect();
        for (at, c) in self.commands.iter().enumerate() {
            let Some(first) = c.argv.first() else {
                continue;
            };
            let operands = || c.argv[1..].iter().filter(|w| !w.starts_with('-'));
            let mut prefixed = false;
            match program::program_name(first) {
                "tee" | "sponge" => written.extend(operands().map(|w| plain(w))),
                "dd" => written.extend(
                    c.argv
                        .iter()
                        .filter_map(|w| w.strip_prefix("of="))
                        .map(&plain),
                ),
                "cp" | "mv" | "install" | "ln" | "rsync" => {
                    written.extend(operands().next_back().map(|w| plain(w)))
                }
                // `find -fprintf FILE FMT`, `-fprint FILE`, `-fprint0 FILE`, `-fls FILE`
                "find" | "gfind" => written.extend(
                    c.argv
                        .windows(2)
                        .filter(|w| {
                            matches!(w[0].as_str(), "-fprint" | "-fprint0" | "-fprintf" | "-fls")
                        })
                        .map(|w| plain(&w[1])),
                ),
                // `uniq IN OUT`; `xxd -r [IN] OUT` (an input `-` is not an operand here)
                "uniq" => written.extend(
                    c.argv[1..]
                        .iter()
                        .filter(|w| !w.starts_with('-') || *w == "-")
                        .nth(1)
                        .map(|w| plain(w)),
                ),
                "xxd" if c.argv.iter().any(|w| w == "-r" || w == "-revert") => {
                    written.extend(operands().next_back().map(|w| plain(w)))
                }
                // `sort -o FILE`, `-oFILE`, `--output=FILE`
                "sort" => {
                    for (k, w) in c.argv.iter().enumerate() {
                        let next = || c.argv.get(k + 1).map(String::as_str);
                        // `--out`, `--outp=`: getopt takes a long option's prefix
                        let long = |f: &str| f.len() >= 4 && "--output".starts_with(f);
                        let file = if let Some((flag, v)) =
                            w.split_once('=').filter(|_| w.starts_with("--"))
                        {
                            long(flag).then_some(v)
                        } else if w.starts_with("--") {
                            if long(w) {
                                next()
                            } else {
                                None
                            }
                        } else if let Some(cluster) = w.strip_prefix('-') {
                            // `-o FILE`, `-oFILE`, `-uo FILE`, `-uoFILE`
                            cluster
                                .find('o')
                                .map(|at| &cluster[at + 1..])
                                .and_then(|rest| if rest.is_empty() { next() } else { Some(rest) })
                        } else {
                            None
                        };
                        written.extend(file.map(&plain));
                    }
                }
                // their output files start with a prefix: every file the line names may be one
                "split" | "csplit" => prefixed = true,
                // `gunzip s.gz` (`gzip -d s.gz`) writes `s`
                name @ ("gunzip" | "unxz" | "unzstd" | "bunzip2" | "uncompress" | "unlz4"
                | "gzip" | "xz" | "zstd" | "bzip2" | "lz4")
                    if matches!(
                        name,
                        "gunzip" | "unxz" | "unzstd" | "bunzip2" | "uncompress" | "unlz4"
                    ) || c.argv.iter().any(|w| {
                        w == "--decompress"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('d'))
                    }) =>
                {
                    written.extend(operands().map(|w| {
                        let w = plain(w);
                        [".gz", ".xz", ".zst", ".bz2", ".Z", ".lz4", ".tgz"]
                            .iter()
                            .find_map(|ext| w.strip_suffix(ext).map(str::to_string))
                            .unwrap_or(w)
                    }))
                }
                // what an archive holds is only known when it is extracted (or a patch
                // applied); tar when it extracts (`-x`, `xf`, `--extract`, `--get`)
                "tar" | "gtar" | "bsdtar" => {
                    let extracts = c.argv[1..].iter().enumerate().any(|(k, w)| {
                        matches!(w.as_str(), "--extract" | "--get")
                            || (!w.starts_with("--")
                                && (w.starts_with('-') || k == 0)
                                && w.contains('x'))
                    });
                    // to a command or standard output, the members are not written
                    let to_files = !c.argv.iter().any(|w| {
                        w.starts_with("--to-command")
                            || w == "--to-stdout"
                            || (w.starts_with('-') && !w.starts_with("--") && w.contains('O'))
                    });
                    prefixed |= extracts && to_files;
                }
                "unzip" | "cpio" | "7z" | "7za" | "ar" | "patch" => prefixed = true,
                _ => {}
            }
            if prefixed && extracted_at.is_none() {
                extracted_at = Some(at);
            }
        }
        // a command after the one that wrote files the line does not name, which runs a
        // file by its name or as code, is a build tool, or git (an archive may hold a git
        // directory whose configuration runs commands)
        let changes_dir = self.commands.iter().any(|c| {
            c.argv
                .first()
                .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd"))
        });
        let after_extract = extracted_at.is_some_and(|k| {
            self.commands[k + 1..].iter().any(|c| {
                let Some(first) = c.argv.first() else {
                    return false;
                };
                let program = program::program_name(first);
                // git at the root reads the root's own .git (bound read-only); git pointed
                // at another directory may read one the archive made
                let git_elsewhere = program == "git"
                    && (changes_dir
                        || c.argv.iter().any(|w| {
                            matches!(w.as_str(), "-C" | "--no-index")
                                || w.starts_with("--git-dir")
                                || w.starts_with("--work-tree")
                        }));
                first.contains('/')
                    || c.reading.code.is_some()
                    || git_elsewhere
                    || READ_BY_NAME
                        .iter()
                        .any(|(_, tools)| tools.contains(&program))
            })
        });
        if after_extract {
            return true;
        }
        if written.is_empty() {
            return false;
        }
        let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let names = |w: &str| {
            let w = plain(w);
            written
                .iter()
                .any(|p| *p == w || base(p) == w || base(p) == base(&w))
        };
        let unknown = |w: &str| w.contains(['*', '?', '[', '$', '`']);
        let programs: Vec<&str> = self
            .commands
            .iter()
            .filter_map(|c| c.argv.first().map(|w| program::program_name(w)))
            .collect();
        let build_file = written.iter().any(|p| {
            READ_BY_NAME
                .iter()
                .any(|(file, tools)| base(p) == *file && tools.iter().any(|t| programs.contains(t)))
        });
        let runs_one = self.commands.iter().any(|c| {
            let Some(first) = c.argv.first() else {
                return false;
            };
            // `./s.sh`, `sub/run`; `. s.sh`, `source s.sh`
            let by_name = (first.contains('/') && names(first))
                || (matches!(first.as_str(), "." | "source")
                    && c.argv.get(1).is_some_and(|f| names(f)));
            // `bash s.sh`, `python3 x.py`, `bash $f`; `python3 -m m` after `m.py`
            let as_code = c.reading.code.as_ref().is_some_and(|k| {
                c.argv.get(k.at).is_some_and(|w| {
                    names(w)
                        || unknown(w)
                        || (w == "-m"
                            && c.argv.get(k.at + 1).is_some_and(|m| {
                                names(&format!("{m}.py")) || names(&format!("{m}/__main__.py"))
                            }))
                })
            });
            by_name || as_code
        });
        // `bash < f`, `sh -s < f`: a shell or interpreter reading its code from a file written
        let as_input = self
            .redirects
            .iter()
            .any(|r| r.access == Access::Read && names(&r.path))
            && self.commands.iter().any(|c| {
                c.argv
                    .first()
                    .is_some_and(|w| program::is_shell(program::program_name(w)))
                    || c.reading
                        .code
                        .as_ref()
                        .is_some_and(|k| k.at >= c.argv.len())
            });
        build_file || runs_one || as_input
    }

    /// Keeps the words of `line` as a possible command of `program`, a program the command
    /// grammar does not know: a rule that restricts reads its words from any word naming the
    /// rule's program. The words are the line's text with quotes and backslashes taken out
    /// (`"tou"ch` is `touch`), split at white space, operators, expansions and the
    /// separators of assignments and parameter expansions (`c=touch`, `${PWD:0:0}touch`),
    /// then the words holding those split only at white space and operators.
    fn possible_words(&mut self, program: &str, line: &str) {
        // line continuations out, as bash takes them out (`c=tou\<newline>ch`)
        let joined = line.replace("\\\n", "");
        let line = joined.as_str();
        // C escapes decoded first, as `$'...'`, printf and `echo -e` read them
        // (`c=$'\x74ouch'; $c x`, `printf -v c '\164ouch'`)
        let decoded = line
            .contains('\\')
            .then(|| unescape_ansi_c(&format!("$'{line}'")))
            .flatten();
        // quotes out, with the `$` of `$'..'` and `$".."` (`c=tou$'c'h`)
        let unquote = |t: &str| -> String {
            t.replace("$'", "'")
                .replace("$\"", "\"")
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                .collect()
        };
        let text = unquote(line);
        let decoded = decoded.map(|d| unquote(&d)).filter(|d| *d != text);
        let fine = |t: &str| -> Vec<String> {
            // a control character decoded from `\0` or `\x01` separates too (`xargs -0`)
            t.split(|c: char| c.is_whitespace() || c.is_control() || ";&|()<>`${}=,:".contains(c))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        };
        let mut words = fine(&text);
        // and the words split at white space and operators only, whole: a glob the grammar
        // broke (`/usr/bin/@(tou)ch` with extglob) is matched as one
        words.extend(
            text.split(|c: char| c.is_whitespace() || ";&|<>`".contains(c))
                .filter(|w| !w.is_empty() && w.contains(['(', '{', '$', '=', ',', ':']))
                .map(str::to_string),
        );
        if let Some(d) = &decoded {
            words.extend(fine(d));
        }
        // a word of nothing but pattern characters (`*` in `a * b`, a markdown list's `*`)
        // names no program: taken for every word it may become, it would match any rule
        words.retain(|w| !w.chars().all(|c| matches!(c, '*' | '?')));
        self.possible_argv(std::iter::once(program).chain(words.iter().map(String::as_str)));
    }

    /// Keeps the words of the inline code the command `argv` runs (see
    /// [`Analyzer::possible_code`]): the word that carries the code ([`Reading::code`]) and
    /// the values of the options that give code after it, when they hold code (white space
    /// or code punctuation: `-c CODE`, `-W x -c CODE`, `-o ProxyCommand=...`, `declare
    /// 'a[$(cmd)]=1'`), not a module or a script's path and arguments (`python3 -m pytest -k
    /// 'not curl'`).
    fn inline_code(&mut self, argv: &[String], reading: &Reading) {
        let Some(code) = reading.code.as_ref() else {
            return;
        };
        let holds_code =
            |w: &str| w.contains(|c: char| c.is_whitespace() || "(){};|&\"'$`".contains(c));
        let program = argv.first().map_or("", |w| program::program_name(w));
        let inline: Vec<String> = argv
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(k, w)| {
                let before = argv[k - 1].as_str();
                let shared = matches!(before, "-c" | "-e" | "-E" | "--eval" | "-p" | "--print");
                // a program's own code options are code whatever their shape (`vim -c '!id'`)
                (holds_code(w) && (*k == code.at || (*k > code.at && shared)))
                    || code_option(program, before)
                    || code_word(program, w, *k)
            })
            .map(|(_, w)| w.clone())
            .collect();
        if !inline.is_empty() {
            self.possible_code(&inline);
        }
    }

    /// Keeps the words of the inline code an interpreter runs (`python3 -c 'os.system("touch
    /// x")'`, `awk 'BEGIN{system("touch x")}'`, `perl -e 'system q(touch x)'`) as a possible
    /// command of a program no grammar knows: the code's text split at every character that
    /// cannot be part of a program's name, path or option, so a command it spells out in a
    /// string is read by the rules that restrict.
    fn possible_code(&mut self, code: &[String]) {
        let words = code.iter().flat_map(|w| {
            w.split(|c: char| !(c.is_alphanumeric() || "-._/+~@%".contains(c)))
                .filter(|w| !w.is_empty())
        });
        self.possible_argv(std::iter::once(CODE).chain(words));
    }

    /// Keeps a program's file `path` as a possible command of its own: `/usr/bin/touch`, and
    /// for git's own programs (`/usr/lib/git-core/git-push`) the git command they are.
    fn possible_program_file(&mut self, path: &str) {
        match program::git_builtin(path) {
            Some(sub) => self.possible_argv(["git", sub].into_iter()),
            None => self.possible_argv(std::iter::once(path)),
        }
    }

    /// Keeps `words` as a possible command.
    fn possible_argv<'w>(&mut self, words: impl Iterator<Item = &'w str>) {
        let argv: Vec<String> = words.map(str::to_string).collect();
        let reading = program::read(&argv);
        self.possible.push(SimpleCommand {
            argv,
            reading,
            ..SimpleCommand::default()
        });
    }

    /// Parses `src` and visits its tree; `nesting` counts enclosing `bash -c` strings.
    fn source(&mut self, src: &str, nesting: usize) {
        if src.len() > MAX_INPUT {
            self.doubt(format!("the command is longer than {MAX_INPUT} bytes"));
            return;
        }
        if nesting > MAX_SHELL_NESTING {
            self.doubt("`bash -c` strings are nested too deeply");
            return;
        }
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_err()
        {
            self.doubt("the bash grammar could not be loaded");
            return;
        }
        let started = Instant::now();
        let mut over_budget = |_: &tree_sitter::ParseState| started.elapsed() > PARSE_BUDGET;
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut over_budget);
        let bytes = src.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(options),
        );
        let Some(tree) = tree else {
            self.doubt("the command took too long to parse");
            return;
        };
        let root = tree.root_node();
        self.known.push(known(root, src));
        if root.has_error() {
            self.doubt("the command has a syntax error or a construct the parser does not know");
        }
        let mut stack: Vec<(Node, usize)> = vec![(root, 0)];
        while let Some((node, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                self.doubt(format!("the command nests deeper than {MAX_DEPTH} levels"));
                continue;
            }
            self.visit(node, src, nesting);
            let mut cursor = node.walk();
            let children: Vec<Node> = node.children(&mut cursor).collect();
            for child in children.into_iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        self.known.pop();
    }

    /// Doubts an arithmetic evaluation of `expr` (source text at byte `at`, in `node`) unless
    /// every variable it names holds a number the line set (see [`Known`]).
    fn arithmetic(&mut self, expr: &str, node: Node, at: usize, what: &str) {
        let at = evaluated_at(node, at);
        let function = function_of(node);
        let unknown: Vec<String> = match arithmetic_names(expr) {
            Some(names) => names
                .into_iter()
                .filter(|n| !self.known.last().is_some_and(|k| k.number(n, at, function)))
                .collect(),
            None => {
                self.doubt(format!(
                    "{what} `{expr}` holds an expansion whose text bash evaluates as an \
                     expression (which can run commands); assign it to a variable first \
                     (`n=$((...))`) or use plain `$name`s set from numbers in the line"
                ));
                return;
            }
        };
        if !unknown.is_empty() {
            self.doubt(format!(
                "{what} `{expr}` evaluates the text of {} as an expression, which can run \
                 commands (`a[$(cmd)]`) when it comes from outside the line; set each from a \
                 number earlier in the line (`{}=0`) or compare text instead (`[ \"$x\" = 5 ]`)",
                unknown
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                unknown[0]
            ));
        }
    }

    fn visit(&mut self, node: Node, src: &str, nesting: usize) {
        match node.kind() {
            "command" => self.command(node, src, nesting),
            "declaration_command" | "unset_command" => {
                let argv = node_words(node, src);
                self.declare(&argv, Some((node.start_byte(), function_of(node))));
                let reading = program::read(&argv);
                // `declare 'a[$(touch x)]=1'`: the subscript bash evaluates is code
                self.inline_code(&argv, &reading);
                self.commands.push(SimpleCommand {
                    argv,
                    reading,
                    ..SimpleCommand::default()
                });
            }
            "variable_assignment"
                if !node
                    .parent()
                    .is_some_and(|p| matches!(p.kind(), "command" | "declaration_command")) =>
            {
                // an assignment without a command: a shell variable
                let (name, value) = assignment_parts(node, src);
                // `f=/usr/bin/touch; cp "$f" t`: a program's file held in a variable
                if let Some(v) = value.as_deref().filter(|v| names_a_program_file(v)) {
                    self.possible_program_file(v);
                }
                let number = node
                    .child_by_field_name("value")
                    .is_some_and(|v| is_number(v, src));
                self.shell_var(&name, value.as_deref(), number);
            }
            "for_statement" => {
                if let Some(v) = node.child_by_field_name("variable") {
                    self.shell_var(text(v, src), None, false);
                }
            }
            "file_redirect" => self.redirect(node, src),
            "arithmetic_expansion" | "arithmetic_statement" => {
                self.arithmetic(text(node, src), node, node.start_byte(), "the arithmetic");
            }
            "command_substitution"
                if text(node, src).starts_with("$((") && text(node, src).ends_with("))") =>
            {
                // in a here-document the grammar reads `$((x))` as `$( (x) )`; bash
                // evaluates it as arithmetic (and its commands are analyzed as well); `$((a)
                // )` is a command substitution
                self.arithmetic(text(node, src), node, node.start_byte(), "the arithmetic");
            }
            "command_substitution"
                if text(node, src).starts_with('`') && text(node, src).contains("\\`") =>
            {
                // inside backquotes bash takes `\`` for a backquote and `\\` for a backslash,
                // then parses the text: ``echo `echo \`touch x\`` `` runs touch, which the
                // grammar reads as an escaped word. The text is read again as bash reads it
                let t = text(node, src);
                let inner = &t[1..t.len().saturating_sub(1).max(1)];
                self.source(&unescape_backquoted(inner), nesting + 1);
            }
            "compound_statement" if text(node, src).starts_with("((") => {
                self.arithmetic(text(node, src), node, node.start_byte(), "the arithmetic");
            }
            "subscript" => self.subscript(node, src),
            "test_command" => {
                let t = text(node, src);
                const ARITH: [&str; 6] = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
                // inside [[ ]] the operands of these are arithmetic, and a bare name is a
                // variable whose text is evaluated in turn (`y='a[$(cmd)]'; [[ y -eq 0 ]]`
                // runs cmd)
                if t.starts_with("[[") && ARITH.iter().any(|op| t.contains(op)) {
                    let mut operands: Vec<Node> = Vec::new();
                    let mut stack = vec![node];
                    while let Some(n) = stack.pop() {
                        let op = n.child_by_field_name("operator").map(|o| text(o, src));
                        if n.kind() == "binary_expression" && op.is_some_and(|o| ARITH.contains(&o))
                        {
                            operands.extend(n.child_by_field_name("left"));
                            operands.extend(n.child_by_field_name("right"));
                        }
                        let mut cursor = n.walk();
                        stack.extend(n.children(&mut cursor));
                    }
                    if operands.is_empty() {
                        self.doubt(format!(
                            "an arithmetic test `{t}` the analysis cannot split into operands"
                        ));
                    }
                    for o in operands {
                        let raw = text(o, src);
                        let bare = raw
                            .strip_prefix('"')
                            .and_then(|r| r.strip_suffix('"'))
                            .unwrap_or(raw);
                        self.arithmetic(bare, o, o.start_byte(), "the arithmetic test operand");
                    }
                }
                let inner = t.trim_start_matches("[[").trim_end_matches("]]");
                let named_subscript = inner.split('[').skip(1).any(|after| {
                    after
                        .split(']')
                        .next()
                        .unwrap_or_default()
                        .bytes()
                        .any(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'`'))
                });
                if t.contains("-v") && (t.contains("$(") || t.contains('`') || named_subscript) {
                    // `[[ -v a[y] ]]` evaluates the subscript, and with it the text of `y`
                    self.doubt("a `-v` test on a subscript, which bash evaluates");
                }
            }
            "expansion" => {
                if let Some(why) = expansion_evaluates(text(node, src)) {
                    self.doubt(why);
                }
                // `${x:-`cmd`}`: the grammar reads a backquoted command inside `${...}` as
                // text, where bash runs it; its lines are read for the rules too
                if unparsed_in_text(node, src, "`") {
                    self.doubt("a command in backquotes inside `${...}`, which bash runs");
                    let t = text(node, src);
                    for inner in t.split('`').skip(1).step_by(2) {
                        self.source(inner, nesting + 1);
                    }
                }
                // `${x#$(cmd)}`, `${x^^$(cmd)}`: the same of `$(...)` in a pattern the grammar
                // reads as text (it ran under `allow command:echo` with no question)
                if unparsed_in_text(node, src, "$(") {
                    self.doubt("a command substitution inside `${...}`, which bash runs");
                    for inner in dollar_substitutions(text(node, src)) {
                        self.source(inner, nesting + 1);
                    }
                }
                // `"${x:-'$(cmd)'}"`: inside double quotes bash takes the single quotes of the
                // word as characters and expands what they hold; the grammar reads a quoted
                // string
                if inside_double_quotes(node) {
                    let quoted = raw_strings(node, src);
                    let code: Vec<&str> = quoted
                        .iter()
                        .filter(|t| t.contains("$(") || t.contains('`'))
                        .copied()
                        .collect();
                    if !code.is_empty() {
                        self.doubt(
                            "single quotes inside a double-quoted `${...}`, which bash takes \
                             as characters, expanding what they hold",
                        );
                        for t in code {
                            for inner in dollar_substitutions(t) {
                                self.source(inner, nesting + 1);
                            }
                            for inner in t.split('`').skip(1).step_by(2) {
                                self.source(inner, nesting + 1);
                            }
                        }
                    }
                }
                // `${PWD#${!y}}`, `${PWD#${a[y]}}`: an expansion in a pattern the grammar reads
                // as text, which bash evaluates (an indirect name, a subscript, `@P`)
                if unparsed_in_text(node, src, "${") {
                    self.doubt("an expansion inside the pattern of `${...}`, which bash evaluates");
                }
            }
            _ if node.child_count() == 0
                && !matches!(node.kind(), "raw_string" | "ansi_c_string" | "comment")
                && text(node, src).contains("$[") =>
            {
                // bash's old arithmetic expansion `$[ ]`, which the grammar reads as text
                self.doubt(
                    "arithmetic on variables (bash evaluates their text, which can run commands)",
                );
            }
            "c_style_for_statement" => {
                // its three expressions are arithmetic: a name is a variable whose text is
                // evaluated in turn (`n='a[$(cmd)]'; for ((i=0; i<n; i++))` runs cmd)
                let t = text(node, src);
                let header = t.split("))").next().unwrap_or(t);
                let header = header.trim_start_matches("for").trim_start();
                let header = header.strip_prefix("((").unwrap_or(header);
                self.arithmetic(
                    header,
                    node,
                    node.start_byte() + 1,
                    "the `for ((..))` header",
                );
            }
            "array"
                if array_subscripts_evaluate(text(node, src))
                    && !associative_literal(node, src) =>
            {
                self.doubt(
                    "an array subscript naming a variable (bash evaluates its text, which can \
                     run commands)",
                );
            }
            "regex" if text(node, src).contains("${") || text(node, src).contains("$(") => {
                // `[[ x =~ ${!y} ]]`: the grammar reads the pattern as text, bash expands it
                let t = text(node, src);
                self.doubt("an expansion in a `[[ =~ ]]` pattern, which bash evaluates");
                for inner in dollar_substitutions(t) {
                    self.source(inner, nesting + 1);
                }
            }
            "heredoc_redirect" => {
                // `<<$x`: bash takes the delimiter as written and, as no part of it is
                // quoted, expands the body, which the grammar reads as text
                let t = text(node, src);
                let first = t.lines().next().unwrap_or_default();
                let delimiter = first.trim_start_matches('<').trim_start_matches('-').trim();
                let quoted = delimiter.contains(['\'', '"', '\\']);
                if !quoted && delimiter.contains(['$', '`']) {
                    let body = t.get(first.len()..).unwrap_or_default();
                    if body.contains("$(") || body.contains('`') {
                        self.doubt(format!(
                            "a here-document whose delimiter `{delimiter}` is an expansion, \
                             whose body bash expands"
                        ));
                        for inner in dollar_substitutions(body) {
                            self.source(inner, nesting + 1);
                        }
                        for inner in body.split('`').skip(1).step_by(2) {
                            self.source(inner, nesting + 1);
                        }
                    }
                }
            }
            "brace_expression" => self.doubt_local("brace expansion"),
            "ERROR" => {
                self.doubt("the command has a syntax error");
                // `{touch,x}` at the start of a line: the grammar reads a broken group where
                // bash reads a brace expansion; its words are read for the rules that restrict
                let raw = text(node, src);
                if raw.contains('{') && raw.len() <= MAX_BRACE_SOURCE {
                    if let Some(line) = braces_in_text(raw).filter(|l| l != raw) {
                        self.source(&line, nesting + 1);
                    }
                }
            }
            _ if node.is_missing() => self.doubt("the command is incomplete"),
            _ => {}
        }
    }

    /// A subscript (`${a[i]}`, `a[i]=v`): a literal number, `@` or `*` evaluates nothing, nor
    /// does any key of an associative array the line declared; any other subscript of an
    /// indexed array is arithmetic (see [`Self::arithmetic`]).
    fn subscript(&mut self, node: Node, src: &str) {
        let (Some(name), Some(index)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("index"),
        ) else {
            self.doubt(format!(
                "the subscript `{}` could not be read",
                text(node, src)
            ));
            return;
        };
        let name = text(name, src);
        let i = text(index, src).trim();
        let number = i.strip_prefix('-').unwrap_or(i);
        if matches!(i, "@" | "*")
            || !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
        {
            return;
        }
        let at = node.start_byte();
        if self
            .known
            .last()
            .is_some_and(|k| k.assoc.iter().any(|(n, from)| n == name && *from < at))
        {
            return;
        }
        self.arithmetic(
            i,
            node,
            at,
            &format!(
                "the subscript of `{name}` (arithmetic unless `{name}` is declared \
                 associative with `declare -A {name}` earlier in the line)"
            ),
        );
    }

    fn command(&mut self, node: Node, src: &str, nesting: usize) {
        let mut assignments = Vec::new();
        let mut prefixes: Vec<(String, Option<String>)> = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut cursor = node.walk();
        if !blank_gaps(node, src) {
            self.doubt("the grammar read separate commands as one");
        }
        // the end of the previous child, and whether it was a word
        let mut prev: Option<(usize, bool)> = None;
        for child in node.children(&mut cursor) {
            // a line continuation with nothing around it (`tou\<newline>ch`) is removed
            // before bash splits words, so the words on both sides are one
            let joined = prev.is_some_and(|(end, _)| {
                src.get(end..child.start_byte())
                    .is_some_and(|gap| !gap.is_empty() && gap.replace("\\\n", "").is_empty())
            });
            let after_word = prev.is_some_and(|(_, was_word)| was_word);
            let next = match child.kind() {
                "command_name" => Some(word(child.named_child(0).unwrap_or(child), src)),
                "variable_assignment"
                | "file_redirect"
                | "heredoc_redirect"
                | "herestring_redirect" => None,
                _ if child.is_named() => Some(word(child, src)),
                _ => None,
            };
            match (next, joined && after_word) {
                (Some(w), true) => {
                    if let Some(last) = words.last_mut() {
                        last.text.push_str(&w.text);
                        last.literal &= w.literal;
                        last.glob |= w.glob;
                        last.brace |= w.brace;
                        last.quoted |= w.quoted;
                        last.split |= w.split;
                    }
                }
                (Some(w), false) => {
                    if joined {
                        self.doubt("a line continuation joins a word to what is before it");
                    }
                    words.push(w);
                }
                (None, _) => {
                    if joined {
                        self.doubt("a line continuation joins a word to what is before it");
                    }
                    if child.kind() == "variable_assignment" {
                        let (name, value) = assignment_parts(child, src);
                        prefixes.push((name, value));
                        assignments.push(text(child, src).to_string());
                    }
                }
            }
            let is_word = child.is_named()
                && !matches!(
                    child.kind(),
                    "variable_assignment"
                        | "file_redirect"
                        | "heredoc_redirect"
                        | "herestring_redirect"
                );
            prev = Some((child.end_byte(), is_word));
        }
        let Some(name) = words.first() else {
            // assignments with only redirections: shell variables
            for (name, value) in &prefixes {
                self.shell_var(name, value.as_deref(), false);
            }
            return;
        };
        for (name, value) in &prefixes {
            if name == "IFS" && value.is_some() && name_is(words.first(), "read") {
                // `IFS= read -r line`: the separators `read` splits its input at, as a
                // literal, for that `read` only
                continue;
            }
            self.assign(name, value.as_deref(), nesting);
        }
        if let Some(why) = unknown_as_name(name) {
            let doubt = format!("the command name `{}` {why}", name.text);
            if name.literal {
                // a glob: the rules that restrict take it for every word it matches
                self.doubt_local(doubt);
            } else {
                self.doubt(doubt);
            }
        } else if RESERVED.contains(&name.text.as_str()) && !name.quoted {
            // the grammar read a compound command (`! if ...`) as a simple one
            self.doubt(format!(
                "the reserved word `{}` stands where a command name should",
                name.text
            ));
        }
        if words.iter().any(|w| w.brace) {
            self.doubt_local("brace expansion, which can add words");
            // the words it makes, read as a line for the rules that restrict:
            // `{touch,x}` runs `touch x`
            if let Some(line) = brace_expanded(&words) {
                self.source(&line, nesting + 1);
            }
        }
        let name_text = words.first().map(|w| program::program_name(&w.text));
        if name_text.is_some_and(|n| program::is_shell(n) || matches!(n, "source" | ".")) {
            // `bash <(echo 'touch x')`, `source <(printf ...)`: the script is the literal
            // output of the substituted command, read for the rules that restrict
            if let Some(script) = substituted_script(node, src) {
                self.source(&script, nesting + 1);
            }
            // a shell reading its commands from a here-string, here-document or pipe: what it
            // reads is read here too (the line stays uncertain: its input is code no rule
            // grants)
            if reads_commands_from_input(&words) {
                if let Some(feed) = stdin_text(node, src).or_else(|| piped_text(node, src)) {
                    self.source(&feed, nesting + 1);
                }
            }
        } else if words.iter().all(|w| w.literal) {
            // an interpreter reading its code from a here-string, here-document or pipe
            // (`python3 <<< 'os.system("touch x")'`): the code's words, for the rules that
            // restrict
            let argv: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            // `python3 <<< CODE`, and any program given its code file as standard input
            // (`make -f /dev/stdin <<< ...`, `perl - <<EOF`)
            let from_input = program::read(&argv).code.is_some_and(|c| {
                c.at >= argv.len()
                    || argv[1..].iter().any(|w| {
                        matches!(
                            *w,
                            "-" | "-f-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
                        ) || w.ends_with("=/dev/stdin")
                    })
            });
            if from_input {
                if let Some(feed) = stdin_text(node, src).or_else(|| piped_text(node, src)) {
                    self.possible_code(&[feed]);
                }
            }
        }
        // the run's home directory holds the startup files programs read (`~/.gdbinit`,
        // `~/.lesskey`, Python's user site): a line that may write there may have an allowed
        // program run what it wrote (`cd` alone goes there too); programs that only print or
        // read what they name are left alone
        // `cd`, `cd -P`, `cd --`: with no operand, cd goes home
        let bare_cd = matches!(words.first().map(|w| w.text.as_str()), Some("cd" | "pushd"))
            && words[1..]
                .iter()
                .all(|w| w.literal && w.text.starts_with('-') && w.text != "-");
        let writes_by_operand = words
            .first()
            .is_some_and(|w| !never_writes_operands(program::program_name(&w.text)));
        // `echo ~ | xargs -I{} cp g {}/.lesskey`: an operand filled in from input, in a line
        // that names the home
        let filled_in = || {
            words.iter().skip(1).any(|w| w.text.contains("{}"))
                && (mentions_home(src) || spliced_home(&format!("$({src})")))
        };
        if bare_cd || (writes_by_operand && (words.iter().skip(1).any(|w| w.home) || filled_in())) {
            self.doubt_local(HOME_DOUBT);
        }
        // bash's history runs earlier lines again, changed (`fc -s`, `!!` after `set -H`,
        // `history -s TEXT` then `fc -s`): words that were data become a command
        let history = match words.first().map(|w| w.text.as_str()) {
            Some("fc") => true,
            Some("history") => words.iter().any(|w| w.text == "-s"),
            Some("set" | "shopt") => words.iter().skip(1).any(|w| {
                matches!(w.text.as_str(), "history" | "histexpand" | "histappend")
                    || (w.text.starts_with(['-', '+'])
                        && !w.text.starts_with("--")
                        && w.text.contains('H'))
            }),
            _ => false,
        };
        if history {
            self.doubt("the line turns on or uses bash's history, which runs earlier lines again");
        }
        let shapes = words
            .iter()
            .map(|w| Shape {
                name: unknown_as_name(w),
                split: w.split,
                option: self.may_be_option(w, node),
            })
            .collect();
        let argv: Vec<String> = words.into_iter().map(|w| w.text).collect();
        if self.keyword {
            // after `set -k`, bash puts `NAME=value` arguments in the command's environment
            for w in argv.iter().skip(1) {
                if let Some((name, value)) = w.split_once('=') {
                    let identifier = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if identifier {
                        self.assign(name, Some(value), nesting);
                    }
                }
            }
        }
        self.unwrap(
            SimpleCommand {
                argv,
                assignments,
                ..SimpleCommand::default()
            },
            shapes,
            nesting,
        );
    }

    /// Whether the word `w` of the command `node` is only known when the line runs and may
    /// start with `-`: it starts with an expansion (a variable the line gave only texts that
    /// start otherwise, surely before, is known not to; an arithmetic expansion gives a
    /// number, which as an option is digits, naming nothing to write or run), or with a
    /// literal `-` the expansion completes into an option (`-n"$x"`; not `--key="$k"`, whose
    /// option is written).
    fn may_be_option(&self, w: &Word, node: Node) -> bool {
        if w.literal {
            return false;
        }
        match &w.lead {
            Lead::Plain | Lead::Named | Lead::Number => false,
            Lead::Dash | Lead::Unknown => true,
            Lead::Var(name) => {
                let at = evaluated_at(node, node.start_byte());
                !self
                    .known
                    .last()
                    .is_some_and(|k| k.never_dash(name, at, function_of(node)))
            }
        }
    }

    /// Unwraps wrappers, records the command they run, then the commands it runs in turn.
    /// `shapes` says what is known of each word of `cmd.argv` ([`Shape`]): a command a
    /// wrapper, `find -exec` or `xargs` runs is named as much by the line as one at the start
    /// (`timeout 5 $x`, `find . -exec $x ;`), and its arguments as much as any.
    fn unwrap(&mut self, mut cmd: SimpleCommand, mut shapes: Vec<Shape>, nesting: usize) {
        if nesting > MAX_SHELL_NESTING {
            self.doubt("commands run by commands are nested too deeply");
            return;
        }
        let mut reading = program::read(&cmd.argv);
        let mut layers = 0;
        loop {
            let Some(first) = cmd.argv.first() else {
                return;
            };
            let name = program::program_name(first).to_string();
            if OPAQUE.contains(&name.as_str()) && !runs_nothing(&cmd.argv) {
                match eval_line(&name, &cmd.argv, &shapes)
                    .or_else(|| trap_line(&name, &cmd.argv, &shapes))
                {
                    // bash parses and runs the words joined: so are they read here
                    Some(line) => self.source(&line, nesting + 1),
                    None => {
                        // what it will run when a later word names it, read now for the rules
                        // that restrict (`alias t=touch`, `hash -p /usr/bin/touch ls`)
                        for line in later_lines(&name, &cmd.argv, &shapes) {
                            self.source(&line, nesting + 1);
                        }
                        let why = format!("`{name}` runs code the analysis cannot see");
                        if matches!(name.as_str(), "source" | ".") {
                            // a file's code: the line's text is not what it runs
                            self.doubt_local(why)
                        } else {
                            self.doubt(why)
                        }
                    }
                }
            }
            self.environment(&name, &cmd.argv, &reading, nesting);
            let Some(k) = reading.wraps else {
                break;
            };
            if let Some(code) = &reading.code {
                self.doubt_local(code.why.to_string());
            }
            layers += 1;
            if layers > 16 {
                self.doubt("wrappers are nested too deeply");
                break;
            }
            cmd.wrappers.push(cmd.argv[..k].to_vec());
            cmd.argv.drain(..k);
            shapes.drain(..k.min(shapes.len()));
            cmd.open_args |= name == "xargs";
            cmd.args_from_input |= name == "xargs";
            reading = program::read(&cmd.argv);
        }
        if let Some(code) = reading.code.as_ref().filter(|c| c.at >= cmd.argv.len()) {
            // code from its input: no rule can name it
            self.doubt_local(code.why.to_string());
        }
        if cmd.open_args {
            // `echo touch x | xargs env`, `... | xargs timeout 5`, `... | xargs git`: the words
            // xargs adds are the program a wrapper runs, or the subcommand, so what runs is the
            // input's text; read it from any word for the rules that restrict
            let program = cmd.argv.first().map(|w| program::program_name(w));
            // a wrapper or shell not given its program or code yet (`sh -c 'echo "$1"' _`
            // gets arguments, not code)
            let given = reading.wraps.is_some()
                || !reading.runs.is_empty()
                || reading.code.as_ref().is_some_and(|c| c.at < cmd.argv.len());
            // sed, awk and make take files after their script or targets, not a program
            let script_first = program.is_some_and(|p| {
                matches!(
                    p,
                    "sed"
                        | "gsed"
                        | "awk"
                        | "gawk"
                        | "mawk"
                        | "nawk"
                        | "make"
                        | "gmake"
                        | "find"
                        | "fd"
                        | "fdfind"
                )
            });
            let takes_a_program =
                !given && !script_first && program.is_some_and(program::runs_other_programs);
            let bare = cmd.argv.len() == 1 && !program.is_some_and(program::runs_nothing_else);
            if cmd.args_from_input
                && !given
                && !takes_a_program
                && !bare
                && program.is_some_and(program::options_matter)
                && !cmd.argv.iter().any(|w| w == "--")
            {
                // `cat b | xargs -0 tar -cf t.tar h` with b holding `--checkpoint-action=exec=`:
                // a word of the input may be an option that writes files or runs a program
                self.doubt_local(format!(
                    "`{}` gets words of xargs's input as arguments, which may be options that \
                     run a program or write files; end its options with `--` before them",
                    program.unwrap_or("")
                ));
            }
            if takes_a_program || bare {
                self.doubt(format!(
                    "`{}` gets more arguments when it runs (from xargs's input, or the names \
                     find gives), which may name the program or subcommand it runs",
                    program.unwrap_or("")
                ));
            }
        }
        if let (Some(name), Some(Some(why))) = (cmd.argv.first(), shapes.first().map(|s| s.name)) {
            // the same words as for the first word of a line, so the reason is given once
            let doubt = format!("the command name `{name}` {why}");
            if why == "is a glob pattern" {
                self.doubt_local(doubt);
            } else {
                self.doubt(doubt);
            }
        }
        if let Some(first) = cmd.argv.first() {
            let program = program::program_name(first);
            let split = cmd.argv.iter().zip(&shapes).skip(1).find(|(_, s)| s.split);
            if let (false, Some((word, _))) = (program::runs_nothing_else(program), split) {
                // `find . $x` with x='-exec rm -rf y ;': the words it becomes are options
                self.doubt_local(format!(
                    "the unquoted `{word}` in the arguments of `{program}` becomes words only \
                     known when it runs, which can be options that make it run a command \
                     (`find . $x` with x='-exec rm -rf y ;'); quote it (`\"{word}\"`) or write \
                     the words"
                ));
            }
        }
        if let Some(first) = cmd.argv.first() {
            let program = program::program_name(first);
            if program::options_matter(program) {
                // `--` ends the options (but for find, whose expression follows); bash's
                // builtins take options only before their first operand (`printf FORMAT`)
                let words = cmd.argv.iter().zip(&shapes).enumerate().skip(1);
                for (i, (word, shape)) in words {
                    if word == "--" && !matches!(program, "find" | "gfind") {
                        break;
                    }
                    let operand = shape.name.is_none() && !word.starts_with('-');
                    if operand && OPTIONS_FIRST.contains(&program) {
                        break;
                    }
                    // `git add "$f"`: past a subcommand none of whose options matter (the
                    // word the program's grammar takes for its subcommand, written out, and
                    // no global option that could make it run another)
                    if operand
                        && reading
                            .subcommand
                            .as_ref()
                            .is_some_and(|s| s.at == i && !s.any)
                        && program::subcommand_options_harmless(program, word)
                    {
                        break;
                    }
                    if shape.option && !program::takes_value(program, &cmd.argv[i - 1]) {
                        self.doubt_local(format!(
                            "`{word}` in the arguments of `{program}` is only known when it \
                             runs and may be an option that makes it write a file or run a \
                             command (`sort \"$x\"` with x='-o/some/file', `find . \"$x\"` with \
                             x=-delete); give the variable its value earlier in the line, put \
                             `--` before the operands, or start the word with something else \
                             than `-` (`\"./$x\"`)"
                        ));
                        break;
                    }
                }
            }
        }
        let opaque = cmd.argv.first().is_some_and(|first| {
            !reading.known
                || program::runs_its_arguments(program::program_name(first))
                || shapes.first().is_some_and(|s| s.name.is_some())
        });
        if let Some(first) = cmd.argv.first().filter(|_| opaque) {
            {
                // `./mysh -c 'touch x'`: a program the grammar cannot read may be a shell, and
                // run a literal argument as a line; read for the rules that restrict only
                let lines = cmd
                    .argv
                    .iter()
                    .zip(&shapes)
                    .skip(1)
                    .filter(|(w, s)| s.name.is_none() && !s.split && w.contains(LINE_CHARS));
                for (line, _) in lines {
                    self.possible_line(first, line, nesting);
                }
            }
        }
        // `f=/usr/bin/touch; cp "$f" t`: a program's file held in a variable
        for value in cmd.assignments.iter().filter_map(|a| a.split_once('=')) {
            let value = value.1.trim_matches(['"', '\'']);
            if names_a_program_file(value) {
                self.possible_program_file(value);
            }
        }
        if let Some(first) = cmd.argv.first() {
            let program = program::program_name(first);
            if let Some(sub) = program::git_builtin(program) {
                // `/usr/lib/git-core/git-push`, `git-push`: git's own program for `git push`
                let rest = cmd.argv[1..].iter().map(String::as_str);
                self.possible_argv(["git", sub].into_iter().chain(rest));
            }
            if program == "git" {
                // plumbing that does what a porcelain command does (`git send-pack` pushes):
                // read as that command too, so a rule on it holds
                let at = reading.subcommand.as_ref().map_or(1, |s| s.at);
                let porcelain = match cmd.argv.get(at).map(String::as_str) {
                    Some("send-pack" | "http-push") => Some("push"),
                    Some("fetch-pack") => Some("fetch"),
                    Some("commit-tree") => Some("commit"),
                    Some("update-ref") => Some("branch"),
                    Some("read-tree" | "checkout-index") => Some("checkout"),
                    _ => None,
                };
                if let Some(porcelain) = porcelain {
                    let rest = cmd.argv[at + 1..].iter().map(String::as_str);
                    self.possible_argv(["git", porcelain].into_iter().chain(rest));
                }
            }
            let copies = COPIES_FILES.contains(&program);
            let inspects = looks_only(program);
            // `ln -s /usr/bin/touch t; ./t x`: a copy or link of a program runs as it does,
            // so the program's path given to them is read as a command of its own; so is a
            // program's file given to any other command (`cat /usr/bin/touch > t`, `dd
            // if=/usr/bin/touch`, `base64 /usr/bin/touch`), which can copy it as well
            for (word, shape) in cmd.argv.iter().zip(&shapes).skip(1) {
                let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
                let path = (shape.name.is_none() && !word.starts_with('-') && word.contains('/'))
                    .then_some(word.as_str());
                let path = match path {
                    Some(p) if copies || (!inspects && names_a_program_file(p)) => Some(p),
                    _ => (!inspects && names_a_program_file(value)).then_some(value),
                };
                if let Some(p) = path {
                    self.possible_program_file(p);
                }
            }
        }
        if !opaque {
            // what a program the grammar does not know runs is read above
            self.inline_code(&cmd.argv, &reading);
        }
        let runs = std::mem::take(&mut reading.runs);
        let (argv, shapes) = if runs.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            (cmd.argv.clone(), shapes)
        };
        let placeholders = if cmd.open_args {
            placeholders(&cmd.wrappers)
        } else {
            Vec::new()
        };
        cmd.reading = reading;
        self.commands.push(cmd);
        for run in runs {
            match run {
                Run::Line(line) => {
                    if let Some(p) = placeholders.iter().find(|p| line.contains(p.as_str())) {
                        // `xargs -I{} sh -c '{}'`, `find -exec sh -c 'echo {}' ;`: the words
                        // put in for the placeholder when it runs are read as shell code
                        // as code: what the input says is read from any word of the line
                        self.doubt(format!(
                            "the shell line `{line}` gets its input put in for `{p}` when it \
                             runs, as code; pass it as an argument (`sh -c '... \"$1\"' _ {p}`)"
                        ));
                    }
                    self.source(&line, nesting + 1)
                }
                Run::Words { start, end, open } => {
                    let inner = SimpleCommand {
                        argv: argv[start..end].to_vec(),
                        wrappers: vec![argv[..start].to_vec()],
                        open_args: open,
                        ..SimpleCommand::default()
                    };
                    let shapes = shapes.get(start..end).unwrap_or_default().to_vec();
                    self.unwrap(inner, shapes, nesting + 1);
                }
                _ => self.doubt("a command runs another in a way the analysis does not read"),
            }
        }
    }

    /// What the command `name` with words `argv` does to the environment of the commands
    /// after it (or the one it wraps): see [`super::vars`].
    fn environment(&mut self, name: &str, argv: &[String], reading: &Reading, nesting: usize) {
        match name {
            "env" => {
                let end = reading.wraps.unwrap_or(argv.len());
                let cleared = || {
                    Var::Pinned(
                        "`env -i` clears the sandbox's git settings from the environment".into(),
                    )
                };
                // getopt takes a long option's unique prefix: `--ignore-env`, `--uns=NAME`
                let long = |a: &str, full: &str| a.len() >= 3 && full.starts_with(a);
                let mut i = 1;
                while i < end {
                    let a = argv[i].as_str();
                    if a == "-" || (a.starts_with("--") && long(a, "--ignore-environment")) {
                        self.var(cleared());
                    } else if let Some((flag, n)) =
                        a.split_once('=').filter(|_| a.starts_with("--"))
                    {
                        if long(flag, "--unset") {
                            self.var(vars::judge_unset(n));
                        }
                    } else if a.starts_with("--") && long(a, "--unset") {
                        i += 1;
                        if let Some(n) = argv.get(i) {
                            self.var(vars::judge_unset(n));
                        }
                    } else if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
                        // a cluster, read as getopt does: `-vu NAME`, `-iv`, `-uNAME`
                        for (k, c) in a.char_indices().skip(1) {
                            match c {
                                'i' => self.var(cleared()),
                                'u' | 'C' | 'S' | 'P' | 'a' => {
                                    let rest = &a[k + 1..];
                                    let value = if rest.is_empty() {
                                        i += 1;
                                        argv.get(i).map(String::as_str)
                                    } else {
                                        Some(rest)
                                    };
                                    if c == 'u' {
                                        if let Some(n) = value {
                                            self.var(vars::judge_unset(n));
                                        }
                                    }
                                    break;
                                }
                                _ => {}
                            }
                        }
                    } else if !a.starts_with('-') {
                        if let Some((n, v)) = a.split_once('=') {
                            self.assign(n, Some(v), nesting);
                        }
                    }
                    i += 1;
                }
            }
            "exec" => {
                // `exec -c` runs the command with an empty environment, as `env -i` does
                let end = reading.wraps.unwrap_or(argv.len());
                if argv[1..end]
                    .iter()
                    .take_while(|a| a.starts_with('-') && a.len() > 1 && *a != "--")
                    .any(|a| a[1..].split('a').next().is_some_and(|f| f.contains('c')))
                {
                    self.var(Var::Pinned(
                        "`exec -c` clears the sandbox's git settings from the environment".into(),
                    ));
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" | "unset" => {
                // run by `builtin`, `command`, ...: where it stands is not looked at, so a
                // value it keeps counts as unknown
                self.declare(argv, None);
            }
            "set" | "shopt" if Self::exports_assignments(argv) => {
                self.keyword = true;
                self.doubt_local(
                    "`set -a` (allexport) exports every variable set after it, and `set -k` \
                     (keyword) puts every NAME=value argument in the command's environment",
                );
            }
            "read" | "printf" | "getopts" | "mapfile" | "readarray" => {
                for n in assigned_names(name, argv) {
                    self.shell_var(n, None, false);
                }
            }
            "git" => {
                let Some(sub) = &reading.subcommand else {
                    return;
                };
                let mut i = 1;
                while i < sub.at.min(argv.len()) {
                    let a = argv[i].as_str();
                    let (setting, env) = if a == "-c" || a == "--config-env" {
                        i += 1;
                        (argv.get(i).map(String::as_str), a != "-c")
                    } else if let Some(v) = a.strip_prefix("--config-env=") {
                        (Some(v), true)
                    } else if let Some(v) = a.strip_prefix("-c").filter(|_| a.len() > 2) {
                        (Some(v), false)
                    } else {
                        (None, false)
                    };
                    if let Some(setting) = setting {
                        let (key, value) = match setting.split_once('=') {
                            Some((k, v)) => (k, if env { None } else { Some(v) }),
                            None => (setting, if env { None } else { Some("true") }),
                        };
                        if let Some(v) = vars::judge_git_key(key, value) {
                            self.var(v);
                        }
                    }
                    i += 1;
                }
            }
            _ => {}
        }
    }

    /// Whether `set` or `shopt` with words `argv` may turn on bash's `allexport` (`set -a`, `set
    /// -o allexport`, `shopt -os allexport`) or `keyword` (`set -k`): in a cluster (`-eak`,
    /// `-eo allexport`), in either order; `+` forms turn them off, but are read the same (fail
    /// closed). The same options given to a shell (`bash -kc`) are read with the shell's line.
    pub(crate) fn exports_assignments(argv: &[String]) -> bool {
        let named = |w: &str| matches!(w, "allexport" | "keyword");
        let mut words = argv.iter().skip(1).peekable();
        while let Some(w) = words.next() {
            if named(w) {
                return true;
            }
            let flags = w
                .strip_prefix('-')
                .or_else(|| w.strip_prefix('+'))
                .filter(|f| !f.starts_with('-'));
            if let Some(f) = flags {
                if f.contains(['a', 'k']) && argv[0] == "set" {
                    return true;
                }
                if f.contains('o') && words.peek().is_some_and(|n| named(n)) {
                    return true;
                }
            }
        }
        false
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly` and `unset`, with their words;
    /// `place` is where the declaration stands (its first byte, and the function holding it)
    /// when it is a declaration of the line, so a name without a value is judged by the value
    /// the variable holds there (`x=5; export x` as `export x=5`; see [`Known`]).
    fn declare(&mut self, argv: &[String], place: Option<(usize, Option<usize>)>) {
        let Some(keyword) = argv.first() else {
            return;
        };
        let flags: String = argv[1..]
            .iter()
            .filter(|a| a.starts_with('-') && a.len() > 1)
            .map(|a| &a[1..])
            .collect();
        let all_flags: String = argv[1..]
            .iter()
            .filter(|a| (a.starts_with('-') || a.starts_with('+')) && a.len() > 1)
            .map(|a| &a[1..])
            .collect();
        // the number the variable holds where the declaration keeps its value, if the line
        // gave it one that has surely been assigned there
        let holds_number = |this: &Analyzer, name: &str| {
            place.is_some_and(|(at, function)| {
                keeps_values(keyword, &all_flags, function.is_some())
                    && this
                        .known
                        .last()
                        .is_some_and(|k| k.number(name, at, function))
            })
        };
        let unset = keyword == "unset";
        let unexport = keyword == "export" && flags.contains('n');
        let exports = keyword == "export" || flags.contains('x');
        if !unset && keyword != "export" && flags.contains('n') {
            self.doubt("a name reference, which assigns another variable by its name");
        }
        let names: Vec<&String> = argv[1..]
            .iter()
            .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
            .collect();
        // given a number here, and only numbers anywhere in the line (see [`Known`])
        let numbers_only = |a: &&String| {
            a.split_once('=').is_some_and(|(name, _)| {
                let name = name.trim_end_matches('+');
                self.known
                    .last()
                    .is_some_and(|k| !k.any && !k.tainted.contains(name))
            })
        };
        if flags.contains('i') && !unset && !names.iter().all(numbers_only) {
            // every later assignment to an integer variable is evaluated as arithmetic, and
            // a name in it is a variable whose text is evaluated in turn (`a[$(cmd)]`)
            self.doubt(
                "the integer attribute, which evaluates assignments as arithmetic: declare it \
                 with a number (`declare -i n=0`) and assign it only numbers in the line",
            );
        }
        if flags.contains('f') {
            if exports && !unset {
                self.doubt("an exported function, which the commands it runs may call");
            }
            return;
        }
        for a in argv[1..]
            .iter()
            .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
        {
            let (name, value) = match a.split_once('=') {
                Some((n, v)) => (n.trim_end_matches('+'), Some(v)),
                None => (a.as_str(), None),
            };
            let name = name.split('[').next().unwrap_or(name);
            // an array is never exported: `declare -ax GIT_CONFIG_COUNT` takes the variable
            // out of the commands' environment, as unset does
            let array = !unset && flags.contains(['a', 'A']);
            let v = if unset || unexport || (array && vars::is_pinned(name)) {
                vars::judge_unset(name)
            } else if value.is_none() && (keyword == "readonly" || exports && vars::is_pinned(name))
            {
                // re-exporting, or making read-only, the value it has
                Var::Harmless
            } else if exports && value.is_none() && holds_number(self, name) {
                vars::judge_number(name)
            } else if exports {
                vars::judge(name, value)
            } else {
                vars::judge_shell_variable(name, value)
            };
            self.var(v);
        }
    }

    fn redirect(&mut self, node: Node, src: &str) {
        let mut cursor = node.walk();
        let destinations = node
            .children_by_field_name("destination", &mut cursor)
            .count();
        if destinations > 1 || !blank_gaps(node, src) {
            // bash takes one word as the target; the grammar sometimes swallows the words
            // (and lines) after it
            self.doubt("the grammar read words after a redirection target as targets");
        }
        let mut op = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                op.push_str(text(child, src));
            }
        }
        let Some(dest) = node.child_by_field_name("destination") else {
            return;
        };
        if dest.kind() == "process_substitution" {
            return;
        }
        let target = word(dest, src);
        if target.home {
            self.doubt_local(HOME_DOUBT);
        }
        let dup = matches!(op.as_str(), ">&" | "<&" | ">&-" | "<&-")
            && (target.text.bytes().all(|b| b.is_ascii_digit()) || target.text == "-");
        if dup {
            return;
        }
        if !target.literal {
            self.doubt_local(format!(
                "the redirection target `{}` is only known when it runs",
                target.text
            ));
            return;
        }
        if target.glob || target.brace {
            self.doubt_local(format!(
                "the redirection target `{}` is a pattern",
                target.text
            ));
            return;
        }
        let path = target.text;
        if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
            self.doubt(format!(
                "the redirection `{path}` opens a network connection"
            ));
            return;
        }
        if DEVICES.contains(&path.as_str())
            || path.starts_with("/dev/fd/")
            || path.starts_with("/proc/self/fd/")
        {
            return;
        }
        let access = match op.as_str() {
            "<" | "<&" => Access::Read,
            _ => Access::Write,
        };
        if access == Access::Read && names_a_program_file(&path) {
            // `cat < /usr/bin/touch > t`: a copy of the program
            self.possible_program_file(&path);
        }
        if op == "<>" {
            self.redirects.push(Redirect {
                path: path.clone(),
                access: Access::Read,
            });
        }
        self.redirects.push(Redirect { path, access });
    }
}

/// Whether `option` of `program` takes code in the program's own language that may run a
/// shell command (`gdb -ex 'shell id'`, `vim -c '!id'`, `php -r 'system("id");'`, `sqlite3
/// -cmd '.shell id'`), besides the `-c`/`-e`/`--eval` every interpreter shares.
fn code_option(program: &str, option: &str) -> bool {
    match program {
        "gdb" | "gdb-multiarch" => matches!(
            option,
            "-ex"
                | "-iex"
                | "--ex"
                | "--iex"
                | "-eval-command"
                | "--eval-command"
                | "-init-eval-command"
                | "--init-eval-command"
        ),
        "lldb" => matches!(
            option,
            "-o" | "-O" | "--one-line" | "--one-line-before-file"
        ),
        "php" | "php-cli" => matches!(option, "-r" | "-B" | "-R" | "-E"),
        "sqlite3" | "sqlite" => option == "-cmd",
        _ if program::is_interactive(program) => matches!(option, "-c" | "--cmd" | "-S"),
        _ => false,
    }
}

/// Whether the word `w` (the `k`th of the command) is code by its place or shape
/// in `program`: a code option's `--OPTION=CODE`, an editor's `+COMMAND`, the SQL or dot-commands after a `sqlite3` database.
fn code_word(program: &str, w: &str, k: usize) -> bool {
    // `--eval-command=CODE`
    w.split_once('=')
        .is_some_and(|(o, _)| o.starts_with('-') && code_option(program, o))
        || (program::is_interactive(program) && w.starts_with('+') && w.len() > 1)
        || (matches!(program, "sqlite3" | "sqlite") && k >= 2 && !w.starts_with('-'))
}

/// Whether `word` is a path into a directory of programs (`/usr/bin/touch`, `/bin/sh`,
/// `/usr/local/sbin/x`, `/usr/lib/git-core/git-push`, `/opt/tool/bin/x`, a glob such as
/// `/usr/bin/tou*`): naming such a file can copy the program.
fn names_a_program_file(word: &str) -> bool {
    word.starts_with('/')
        && (word.contains("/bin/")
            || word.contains("/sbin/")
            || word.contains("/libexec/")
            || word.contains("/git-core/"))
        && !word.ends_with('/')
}

/// Whether `program` only looks at the files it names (their names, sizes, links, hashes,
/// matching lines), copying no file's content anywhere and writing none of them.
pub(crate) fn looks_only(program: &str) -> bool {
    matches!(
        program,
        "ls" | "stat"
            | "readlink"
            | "realpath"
            | "file"
            | "which"
            | "type"
            | "du"
            | "wc"
            | "md5sum"
            | "sha1sum"
            | "sha256sum"
            | "sha512sum"
            | "cksum"
            | "test"
            | "["
            | "grep"
            | "rg"
            | "ldd"
            | "find"
            | "cmp"
            | "diff"
            | "strings"
            | "nm"
            | "command"
            | "whereis"
            | "dpkg"
            | "rpm"
            | "tree"
    )
}

/// Whether `program` writes none of the files it names as operands: [`looks_only`] but
/// `find` (whose `-fprint` writes one), and the programs that print them or their names
/// (`cat`, `head`, `echo`, `basename`, ...).
pub(crate) fn never_writes_operands(program: &str) -> bool {
    (looks_only(program) && program != "find")
        || matches!(
            program,
            "echo" | "printf" | "cat" | "head" | "tail" | "less" | "dirname" | "basename"
        )
}

/// Why a line that reaches the run's home directory is uncertain.
const HOME_DOUBT: &str = "the line reaches the run's home directory, where programs read \
     their startup files (~/.gdbinit, ~/.lesskey, Python's user site): what an allowed program \
     runs after the line writes there cannot be read";

/// Whether the word `text` (as written) names the run's home directory or a path in it: `~`
/// or `~/...` (any `~user` too), `$HOME` or `${HOME...}` anywhere in it, or the name of the
/// directory toolgate makes for it (`toolgate-home-`).
fn reaches_home(text: &str) -> bool {
    mentions_home(text) || text.contains("toolgate-home-") || spliced_home(text)
}

/// Whether a command substitution in `text` names `HOME` once its quotes and backslashes are
/// taken out (`$(printenv H\OME)`, `$(printenv H''OME)`, `<(printenv "HOM"E)`).
fn spliced_home(text: &str) -> bool {
    // most words hold no substitution: one scan says so
    if !text.contains(['(', '`']) {
        return false;
    }
    let Some(at) = ["$(", "<(", ">(", "`"]
        .iter()
        .filter_map(|o| text.find(o))
        .min()
    else {
        return false;
    };
    let joined: String = text[at..]
        .chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"'))
        .collect();
    joined.match_indices("HOME").any(|(i, _)| {
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !ident(joined[..i].chars().next_back()) && !ident(joined[i + 4..].chars().next())
    })
}

/// Whether the shell text `text` (a word, or a whole line) may name the run's home as bash
/// reads it: a `~` starting a word outside quotes (`"~30%"` is text), `$HOME` or `${HOME`
/// outside single quotes (`'handle $HOME'` is text); inside a command substitution too
/// (`"$(echo ~)"`), where the word `HOME` counts as well (`$(printenv HOME)`).
fn mentions_home(text: &str) -> bool {
    let b = text.as_bytes();
    let (mut single, mut double) = (false, false);
    // inside a command substitution (`$(...)`, backquotes), where the word `HOME` may be a
    // program's argument that prints the home (`printenv HOME`)
    let (mut depth, mut backquoted) = (0usize, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' if !single => {
                i += 2;
                continue;
            }
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            // a command substitution opens a new quoting context
            b'(' if !single && i > 0 && matches!(b[i - 1], b'$' | b'<' | b'>') => {
                depth += 1;
                double = false;
            }
            b')' if !single && !double => depth = depth.saturating_sub(1),
            b'`' if !single => {
                backquoted = !backquoted;
                double = false;
            }
            b'~' if !single && !double => {
                let starts_word = i == 0
                    || matches!(
                        b[i - 1],
                        b' ' | b'\t' | b'\n' | b'=' | b':' | b'(' | b'`' | b';' | b'|' | b'&'
                    );
                if starts_word {
                    return true;
                }
            }
            b'$' if !single
                && (text[i + 1..].starts_with("HOME") || text[i + 1..].starts_with("{HOME")) =>
            {
                return true;
            }
            b'H' if !single && (depth > 0 || backquoted) && text[i..].starts_with("HOME") => {
                let before = i.checked_sub(1).map(|j| b[j]);
                let after = b.get(i + 4).copied();
                let ident =
                    |x: Option<u8>| x.is_some_and(|x| x.is_ascii_alphanumeric() || x == b'_');
                if !ident(before) && !ident(after) {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether the compound value `array` (`([a]=1 [b]=2)`) is given to an associative array
/// declared in the same statement (`declare -A m=(...)`, `local -A`, `typeset -A`) and holds
/// no expansion: its keys are strings then, not arithmetic, and evaluate nothing.
fn associative_literal(array: Node, src: &str) -> bool {
    let t = text(array, src);
    if t.contains(['$', '`']) {
        return false;
    }
    let Some(declaration) = array
        .parent()
        .filter(|p| p.kind() == "variable_assignment")
        .and_then(|p| p.parent())
        .filter(|d| d.kind() == "declaration_command")
    else {
        return false;
    };
    let mut cursor = declaration.walk();
    let flags: Vec<Node> = declaration
        .children(&mut cursor)
        .filter(|c| c.kind() == "word" && text(*c, src).starts_with('-'))
        .collect();
    flags.iter().any(|f| text(*f, src).contains('A'))
}

/// Whether bash itself sets the variable `name` to text from outside the line, without an
/// assignment the line shows: `read` and `select` without a name (`REPLY`), `mapfile`
/// (`MAPFILE`), `getopts`, `[[ =~ ]]` (`BASH_REMATCH`), `cd` (`PWD`), the last argument
/// (`_`), the command text (`BASH_COMMAND`), ...
fn set_by_bash(name: &str) -> bool {
    const SET: [&str; 14] = [
        "_",
        "REPLY",
        "MAPFILE",
        "OPTARG",
        "OPTIND",
        "PWD",
        "OLDPWD",
        "DIRSTACK",
        "COPROC",
        "PIPESTATUS",
        "FUNCNAME",
        "HOSTNAME",
        "SHELLOPTS",
        "GROUPS",
    ];
    SET.contains(&name)
        || name.starts_with("BASH")
        || name.starts_with("COMP")
        || name.starts_with("READLINE")
        || name.starts_with("HIST")
}

/// What the analysis knows of one word of a command besides its text.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Why it cannot be read as a command name (see [`unknown_as_name`]).
    name: Option<&'static str>,
    /// It holds an unquoted expansion: bash splits what it expands to into words.
    split: bool,
    /// It is only known when the line runs and may start with `-`: an option (see
    /// [`Analyzer::may_be_option`]).
    option: bool,
}

/// The line `eval` runs when every word after it is literal (quote removal done, no
/// expansion, no glob): the words joined with spaces, after a leading `--`, as bash's `eval`
/// joins them. `None` for any other command, a word known only when it runs, or an option.
fn eval_line(name: &str, argv: &[String], shapes: &[Shape]) -> Option<String> {
    if name != "eval" || shapes.len() != argv.len() {
        return None;
    }
    let skip = if argv.get(1).is_some_and(|a| a == "--") {
        2
    } else {
        1
    };
    let (words, shapes) = (argv.get(skip..)?, shapes.get(skip..)?);
    if words.first().is_some_and(|w| w.starts_with('-'))
        || shapes.iter().any(|s| s.name.is_some() || s.split)
    {
        return None;
    }
    Some(words.join(" "))
}

/// What `alias NAME=VALUE...` and `hash -p PATH NAME` make a later word run, when literal:
/// each alias's value (a line's start) and the program hashed (run for NAME). Empty for any
/// other command.
fn later_lines(name: &str, argv: &[String], shapes: &[Shape]) -> Vec<String> {
    let literal = |i: usize| shapes.get(i).is_some_and(|s| s.name.is_none() && !s.split);
    match name {
        "alias" => argv
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(i, a)| literal(*i) && !a.starts_with('-'))
            .filter_map(|(_, a)| a.split_once('=').map(|(_, v)| v.to_string()))
            .filter(|v| !v.trim().is_empty())
            .collect(),
        "hash" => argv
            .windows(2)
            .enumerate()
            .filter(|(i, w)| w[0] == "-p" && literal(i + 1))
            .map(|(_, w)| shell_quote(&w[1]))
            .collect(),
        _ => Vec::new(),
    }
}

/// The most words a brace expansion is read into; past it a word is read as a glob
/// ([`brace_glob`]).
const MAX_BRACE_WORDS: usize = 256;

/// The command `words` after bash's brace expansion (`{a,b}` alternatives, `{1..3}` and
/// `{a..c}` sequences, nested), each word quoted, as one line; `None` when a word is not
/// literal. A word holding more than 64 braces ([`expand_word`]), or past
/// [`MAX_BRACE_WORDS`], is taken as its [`brace_glob`]. A brace a
/// quote kept from expanding may be expanded here too: the line is read only for the rules
/// that restrict, where a word too many is on the safe side.
fn brace_expanded(words: &[Word]) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    let mut budget = MAX_BRACE_WORDS;
    for w in words {
        if !w.literal {
            return None;
        }
        if !w.brace {
            out.push(shell_quote(&w.text));
            continue;
        }
        let mut expanded = Vec::new();
        if !expand_word(&w.text, &mut expanded, &mut budget) {
            // past the bound: a glob that matches every word it makes
            out.push(shell_quote(&brace_glob(&w.text)));
            continue;
        }
        out.extend(expanded.iter().map(|e| shell_quote(e)));
    }
    Some(out.join(" "))
}

/// Whether `mark` (a backquote, `$(`) stands in the text of `node` outside the parts the
/// grammar read itself (single-quoted strings, command substitutions it parsed).
fn unparsed_in_text(node: Node, src: &str, mark: &str) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "raw_string" | "command_substitution") {
            continue;
        }
        // (the expansion's own `${` token is not text)
        if n.child_count() == 0 && text(n, src).contains(mark) && text(n, src) != mark {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}

/// The longest text [`braces_in_text`] reads.
const MAX_BRACE_SOURCE: usize = 4096;

/// `raw` with each of its blank-separated words brace-expanded ([`expand_braces`]), joined by
/// spaces (a word past [`MAX_BRACE_WORDS`] as its [`brace_glob`]). A reading for the rules
/// that restrict only: line breaks become spaces and a quoted word split at its blanks is
/// left as it is.
fn braces_in_text(raw: &str) -> Option<String> {
    let mut budget = MAX_BRACE_WORDS;
    let mut out: Vec<String> = Vec::new();
    for token in raw.split_whitespace() {
        let mut expanded = Vec::new();
        if expand_word(token, &mut expanded, &mut budget) {
            out.append(&mut expanded);
        } else {
            out.push(brace_glob(token));
        }
    }
    Some(out.join(" "))
}

/// `word` with each brace group (`{a,b}`, `{1..9}`, nested ones whole) replaced by `*`: a
/// glob matching every word its brace expansion makes, for a word that makes more than
/// [`MAX_BRACE_WORDS`] (a restricting rule takes a glob for every word it matches).
fn brace_glob(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut depth = 0usize;
    for c in word.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    out.push('*');
                }
                depth += 1;
            }
            '}' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c => out.push(c),
        }
    }
    out
}

/// [`expand_braces`] of one word, refused (`false`) past 64 braces, which bounds the
/// recursion's depth.
fn expand_word(word: &str, out: &mut Vec<String>, budget: &mut usize) -> bool {
    word.matches('{').count() <= 64 && expand_braces(word, out, budget)
}

/// Appends the brace expansion of `text` to `out`, spending one of `budget` per word made;
/// `false` when the budget runs out.
fn expand_braces(text: &str, out: &mut Vec<String>, budget: &mut usize) -> bool {
    let b = text.as_bytes();
    for (open, _) in b.iter().enumerate().filter(|(_, c)| **c == b'{') {
        let (mut depth, mut commas, mut close) = (0usize, Vec::new(), None);
        for (j, c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
        let Some(close) = close else {
            continue;
        };
        let alternatives: Vec<String> = if commas.is_empty() {
            match sequence(&text[open + 1..close]) {
                Some(seq) => seq,
                None => continue,
            }
        } else {
            let mut parts = Vec::with_capacity(commas.len() + 1);
            let mut from = open + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                parts.push(text[from..c].to_string());
                from = c + 1;
            }
            parts
        };
        let (before, after) = (&text[..open], &text[close + 1..]);
        return alternatives
            .iter()
            .all(|a| expand_braces(&format!("{before}{a}{after}"), out, budget));
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    out.push(text.to_string());
    true
}

/// The words of a brace sequence's inside (`1..3`, `a..c`, `10..1..2`), at most
/// [`MAX_BRACE_WORDS`] of them; `None` when it is not one.
fn sequence(inside: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inside.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(z)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let count = a.abs_diff(z) / step.unsigned_abs() + 1;
        if count > MAX_BRACE_WORDS as u64 {
            return None;
        }
        let dir = i128::from(if z >= a { step } else { -step });
        return Some(
            (0..i128::from(count))
                .map(|k| (i128::from(a) + k * dir).to_string())
                .collect(),
        );
    }
    let (mut a, mut z) = (parts[0].chars(), parts[1].chars());
    let (Some(a), None, Some(z), None) = (a.next(), a.next(), z.next(), z.next()) else {
        return None;
    };
    if !a.is_ascii_alphabetic() || !z.is_ascii_alphabetic() {
        return None;
    }
    let (lo, hi) = (a.min(z) as u8, a.max(z) as u8);
    let mut seq: Vec<String> = (lo..=hi)
        .step_by(step as usize)
        .map(|c| (c as char).to_string())
        .collect();
    if z < a {
        seq.reverse();
    }
    Some(seq)
}

/// `word` single-quoted for the shell (a program path read as a line of its own).
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The line `trap LINE SIGNAL...` sets to run when a signal comes or the shell exits, when it
/// is literal (quote removal done, no expansion, no glob): bash parses it then as `eval`
/// would. `None` for any other command, a line known only when it runs, an option (`-p`,
/// `-l`), a reset (`-`, or a signal alone) or an empty line (the signal ignored).
fn trap_line(name: &str, argv: &[String], shapes: &[Shape]) -> Option<String> {
    if name != "trap" || shapes.len() != argv.len() {
        return None;
    }
    let at = if argv.get(1).is_some_and(|a| a == "--") {
        2
    } else {
        1
    };
    let (line, shape) = (argv.get(at)?, shapes.get(at)?);
    // a line and at least one signal: with one word, bash resets that signal
    if argv.len() < at + 2 || line.starts_with('-') || line.trim().is_empty() {
        return None;
    }
    if shape.name.is_some() || shape.split {
        return None;
    }
    Some(line.clone())
}

/// Whether `node` stands inside a double-quoted string (or a here-document's body).
fn inside_double_quotes(node: Node) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if matches!(n.kind(), "string" | "heredoc_body") {
            return true;
        }
        if matches!(n.kind(), "command" | "program") {
            return false;
        }
        at = n.parent();
    }
    false
}

/// The texts of the single-quoted strings under `node`.
fn raw_strings<'s>(node: Node, src: &'s str) -> Vec<&'s str> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "raw_string" {
            out.push(text(n, src));
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    out
}

/// The commands of each `$(...)` in `text` (not `$((`, arithmetic), up to its balancing
/// parenthesis (or the end of the text).
fn dollar_substitutions(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("$(").map(|k| i + k) {
        let start = at + 2;
        if b.get(start) == Some(&b'(') {
            i = start + 1;
            continue;
        }
        let mut depth = 1usize;
        let mut end = b.len();
        for (j, c) in b.iter().enumerate().skip(start) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(&text[start..end]);
        i = end.max(start);
    }
    out
}

/// The text of a backquoted command substitution as bash parses it: a backslash before
/// `` ` ``, `$` or `\\` is removed, and with a newline (bash manual, 3.5.4 "Command
/// Substitution"); any other is kept.
fn unescape_backquoted(inner: &str) -> String {
    unescape_before(inner, false)
}

/// Why the word `w` cannot be read as a command name: it holds an expansion, or is a glob
/// pattern (`None` when it is a literal word).
fn unknown_as_name(w: &Word) -> Option<&'static str> {
    if !w.literal {
        Some("is only known when it runs")
    } else if w.glob {
        Some("is a glob pattern")
    } else {
        None
    }
}

/// Whether `w` is the literal word `name`.
fn name_is(w: Option<&Word>, name: &str) -> bool {
    w.is_some_and(|w| w.literal && w.text == name)
}

/// Whether the command `argv` only looks names up and runs nothing: `command -v NAME...`
/// (`-V`), `type NAME...` (with `-t`, `-a`, `-p`, `-P`, `-f`), `hash NAME...` (which
/// remembers where a command is, as running it would).
pub(crate) fn runs_nothing(argv: &[String]) -> bool {
    let names = |from: usize| {
        argv.len() > from
            && argv[from..]
                .iter()
                .all(|a| !a.starts_with('-') && !a.contains('/') && !a.contains('='))
    };
    match argv.first().map(String::as_str) {
        Some("command") => matches!(argv.get(1).map(String::as_str), Some("-v" | "-V")) && names(2),
        Some("type") => {
            let opts = argv[1..]
                .iter()
                .take_while(|a| matches!(a.as_str(), "-t" | "-a" | "-p" | "-P" | "-f" | "-ta"))
                .count();
            names(1 + opts)
        }
        Some("hash") => names(1),
        _ => false,
    }
}

/// The variables an arithmetic expression `expr` names (`$((n + $m))`: `n`, `m`), or `None`
/// when it holds something else whose text is evaluated (a command substitution, a
/// parameter expansion other than `${name}`, quotes of another kind).
fn arithmetic_names(expr: &str) -> Option<Vec<String>> {
    let b = expr.as_bytes();
    let mut names = Vec::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c == b'$' {
            if expr[i..].starts_with("$((") {
                i += 3;
            } else if b.get(i + 1) == Some(&b'{') {
                let end = expr[i..].find('}')? + i;
                let inner = &expr[i + 2..end];
                let length = inner.strip_prefix('#').map(|n| {
                    n.strip_suffix("[@]")
                        .or_else(|| n.strip_suffix("[*]"))
                        .unwrap_or(n)
                });
                match length {
                    // a length (`${#name}`, `${#a[@]}`) is a number whatever the text
                    Some(n) if !n.is_empty() && n.bytes().all(ident) => {}
                    _ if !inner.is_empty() && inner.bytes().all(ident) => {
                        names.push(inner.to_string())
                    }
                    _ => return None,
                }
                i = end + 1;
            } else if b
                .get(i + 1)
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
            {
                let start = i + 1;
                i = start;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                names.push(expr[start..i].to_string());
            } else if b
                .get(i + 1)
                .is_some_and(|&c| matches!(c, b'#' | b'?' | b'$' | b'!'))
            {
                names.push(expr[i + 1..i + 2].to_string());
                i += 2;
            } else {
                return None;
            }
        } else if c.is_ascii_digit() {
            // a number, with its base (`16#ff`, `0x1f`)
            while i < b.len() && (ident(b[i]) || matches!(b[i], b'#' | b'@')) {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            names.push(expr[start..i].to_string());
        } else if matches!(c, b'`' | b'\'' | b'\\') {
            return None;
        } else {
            i += 1;
        }
    }
    Some(names)
}

/// Which variables of the line under `root` hold numbers, and where: see [`Known`].
fn known(root: Node, src: &str) -> Known {
    /// Builtins that assign the variables they name.
    const ASSIGNING: [&str; 14] = [
        "read",
        "mapfile",
        "readarray",
        "printf",
        "getopts",
        "let",
        "wait",
        "compgen",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
    ];
    let mut k = Known::default();
    let name_of = |w: &str| -> String {
        w.split(['=', '[', '+'])
            .next()
            .unwrap_or_default()
            .trim_matches(['"', '\''])
            .to_string()
    };
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
        match n.kind() {
            "variable_assignment" => {
                let Some(target) = n.child_by_field_name("name") else {
                    continue;
                };
                let name = match target.child_by_field_name("name") {
                    Some(inner) => text(inner, src),
                    None => text(target, src),
                }
                .to_string();
                k.touched.push((name.clone(), n.start_byte()));
                if in_arithmetic(n, src) {
                    // an arithmetic assignment gives a number
                    continue;
                }
                let value = n.child_by_field_name("value");
                let number = value.is_none_or(|v| is_number(v, src));
                match value {
                    None => k.texts.push((name.clone(), String::new())),
                    Some(v) if v.kind() == "arithmetic_expansion" => {}
                    Some(v) => {
                        let w = word(v, src);
                        if w.literal {
                            k.texts.push((name.clone(), w.text));
                        } else {
                            k.foreign.insert(name.clone());
                        }
                    }
                }
                if !number {
                    k.tainted.insert(name.clone());
                }
                let parent = n.parent();
                let declaration = parent.filter(|p| p.kind() == "declaration_command");
                if src
                    .get(target.end_byte()..)
                    .is_some_and(|r| r.starts_with("+="))
                    || parent.is_some_and(|p| p.kind() == "command")
                    || declaration.is_some_and(|d| !declaration_sets(d, src))
                {
                    // appending a number keeps a number a number and text text; a prefix
                    // (`x=1 cmd`) is for that command only; a declaration that does not
                    // simply assign is tainted below
                    continue;
                }
                // bash expands every word of a declaration before it assigns any
                let statement = match parent {
                    Some(p)
                        if matches!(p.kind(), "variable_assignments" | "declaration_command") =>
                    {
                        p
                    }
                    _ => n,
                };
                let from = declaration.map_or(n.end_byte(), |d| d.end_byte());
                if let Some(to) = ran_until(statement, src) {
                    k.set.push(Set {
                        name,
                        from,
                        to,
                        function: function_of(n),
                    });
                }
            }
            "for_statement" | "select_statement" => {
                if let Some(v) = n.child_by_field_name("variable") {
                    // `for i in 1 2 3`: inside the loop, a number of the line's
                    let mut cursor = n.walk();
                    let values: Vec<Node> =
                        n.children_by_field_name("value", &mut cursor).collect();
                    let numbers = n.kind() == "for_statement"
                        && !values.is_empty()
                        && values.iter().all(|v| is_number(*v, src));
                    if numbers {
                        k.set.push(Set {
                            name: text(v, src).to_string(),
                            from: n.start_byte(),
                            to: n.end_byte(),
                            function: function_of(n),
                        });
                    } else {
                        k.tainted.insert(text(v, src).to_string());
                        k.foreign.insert(text(v, src).to_string());
                    }
                }
            }
            "c_style_for_statement" => {
                let mut cursor = n.walk();
                for init in n.children_by_field_name("initializer", &mut cursor) {
                    if init.kind() == "variable_assignment" {
                        if let Some(v) = init.child_by_field_name("name") {
                            k.set.push(Set {
                                name: text(v, src).to_string(),
                                from: n.start_byte(),
                                to: n.end_byte(),
                                function: function_of(n),
                            });
                        }
                    }
                }
            }
            "declaration_command" | "unset_command" | "command" => {
                // a declaration's `name=number`, which the assignment's own arm reads
                let assigns_number = |c: &Node| {
                    n.kind() == "declaration_command"
                        && c.kind() == "variable_assignment"
                        && declaration_sets(n, src)
                        && c.child_by_field_name("value")
                            .is_some_and(|v| is_number(v, src))
                };
                // a declaration's `name=text`, whose literal value the assignment's arm keeps
                let assigns_literal = |c: &Node| {
                    n.kind() == "declaration_command"
                        && c.kind() == "variable_assignment"
                        && declaration_sets(n, src)
                        && c.child_by_field_name("value").is_none_or(|v| {
                            v.kind() == "arithmetic_expansion" || word(v, src).literal
                        })
                };
                let (words, (numbers, literals)): (Vec<&str>, (Vec<bool>, Vec<bool>)) = {
                    let mut cursor = n.walk();
                    n.named_children(&mut cursor)
                        .map(|c| (text(c, src), (assigns_number(&c), assigns_literal(&c))))
                        .unzip()
                };
                let keyword = n.child(0).map(|c| text(c, src)).unwrap_or_default();
                let options: String = words
                    .iter()
                    .filter(|w| (w.starts_with('-') || w.starts_with('+')) && w.len() > 1)
                    .map(|w| &w[1..])
                    .collect();
                let minus: String = words
                    .iter()
                    .filter(|w| w.starts_with('-') && w.len() > 1)
                    .map(|w| &w[1..])
                    .collect();
                // a name without a value keeps what the variable holds (`export x`)
                let keeps = n.kind() == "declaration_command"
                    && keeps_values(keyword, &options, function_of(n).is_some());
                let exports = n.kind() == "declaration_command"
                    && (keyword == "export" && !options.contains(['n', 'f'])
                        || minus.contains('x') && !minus.contains('f'));
                let freezes = keyword == "readonly" || minus.contains('r');
                let assigns = n.kind() != "command"
                    || words
                        .iter()
                        .any(|w| ASSIGNING.contains(&program::program_name(w)));
                if !assigns {
                    continue;
                }
                for (i, w) in words.iter().enumerate() {
                    let name = name_of(w);
                    // a name only known when it runs: the value of an option (`read -p
                    // "$prompt"`) is taken for one too, and printf's arguments after its
                    // format are not names
                    let printf_argument = program::program_name(words[0]) == "printf"
                        && !words[..i].iter().any(|p| p.starts_with("-v"))
                        && !w.starts_with("-v");
                    if !printf_argument && !numbers[i] && (w.contains('$') || w.contains('`')) {
                        k.any = true;
                    }
                    if !name.is_empty() && !name.starts_with('-') && !name.starts_with('+') {
                        k.declared.push((name.clone(), n.start_byte()));
                        if exports {
                            k.exported.insert(name.clone());
                        }
                        let plain = !w.contains(['=', '$', '`', '"', '\'', '\\']);
                        if keeps && plain {
                            if freezes {
                                k.frozen.push((name, n.start_byte()));
                            }
                        } else {
                            if !literals[i] {
                                k.foreign.insert(name.clone());
                            }
                            if !numbers[i] {
                                k.tainted.insert(name);
                            }
                        }
                    }
                }
                let top = n.parent().is_some_and(|p| p.kind() == "program");
                let assoc = words.iter().any(|w| w.starts_with('-') && w.contains('A'));
                if top && assoc && matches!(keyword, "declare" | "typeset" | "local") {
                    for w in words.iter().filter(|w| !w.starts_with('-')) {
                        k.assoc.push((name_of(w), n.start_byte()));
                    }
                }
            }
            "expansion" => {
                // `${x:=text}`, `${x=text}` assign x
                let t = text(n, src);
                let inner = t.strip_prefix("${").unwrap_or(t);
                let end = inner
                    .bytes()
                    .position(|c| !(c.is_ascii_alphanumeric() || c == b'_'))
                    .unwrap_or(inner.len());
                if inner[end..].starts_with('=') || inner[end..].starts_with(":=") {
                    k.tainted.insert(inner[..end].to_string());
                    k.foreign.insert(inner[..end].to_string());
                }
            }
            _ => {}
        }
    }
    let touched = std::mem::take(&mut k.touched);
    let declared = std::mem::take(&mut k.declared);
    k.assoc.retain(|(name, at)| {
        !touched.iter().any(|(t, t_at)| t == name && t_at < at)
            && declared.iter().all(|(d, d_at)| d != name || d_at == at)
    });
    k
}

/// Whether the value `v` of an assignment is a number: a literal integer, or an arithmetic
/// expansion (whose own variables are checked where it is).
fn is_number(v: Node, src: &str) -> bool {
    let t = text(v, src);
    let digits = t.strip_prefix('-').unwrap_or(t);
    v.kind() == "arithmetic_expansion"
        || !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the declaration `d` (`declare`, `typeset`, `local`, `readonly`, `export`) only
/// assigns the values it is given: its options only set attributes that keep a number a
/// number (`-a`, `-g`, `-i`, `-l`, `-r`, `-u`, `-x`, not `-n`, `-A`, `-f`, `-p`), and a
/// `local` sits in a function (elsewhere it fails and assigns nothing).
fn declaration_sets(d: Node, src: &str) -> bool {
    let mut cursor = d.walk();
    let keyword = d.child(0).map(|c| text(c, src)).unwrap_or_default();
    let options_keep_numbers = d.named_children(&mut cursor).all(|c| {
        let w = text(c, src);
        !(w.starts_with('-') || w.starts_with('+'))
            || w.len() > 1 && w[1..].bytes().all(|b| b"agilrux".contains(&b))
    });
    let mut in_function = false;
    let mut up = d.parent();
    while let Some(p) = up {
        in_function |= p.kind() == "function_definition";
        up = p.parent();
    }
    options_keep_numbers
        && matches!(
            keyword,
            "declare" | "typeset" | "local" | "readonly" | "export"
        )
        && (keyword != "local" || in_function)
}

/// Whether a declaration by `keyword` with the option letters `options` (of its `-x` and
/// `+x` words) keeps the value a variable it names without one holds: `export` (`-n`
/// included) and `readonly` always, `declare` and `typeset` outside a function or with `-g`
/// (in a function they make a new local variable without a value), each only with options
/// that keep a number a number (see [`declaration_sets`]); never `local`, which makes a new
/// variable.
fn keeps_values(keyword: &str, options: &str, in_function: bool) -> bool {
    let allowed = if keyword == "export" {
        "agilruxn"
    } else {
        "agilrux"
    };
    options.bytes().all(|b| allowed.as_bytes().contains(&b))
        && match keyword {
            "export" | "readonly" => true,
            "declare" | "typeset" => !in_function || options.contains('g'),
            _ => false,
        }
}

/// The first byte of the innermost function definition holding `node`, if any.
fn function_of(node: Node) -> Option<usize> {
    let mut up = node.parent();
    while let Some(p) = up {
        if p.kind() == "function_definition" {
            return Some(p.start_byte());
        }
        up = p.parent();
    }
    None
}

/// The text the last here-string (`<<< WORD`) or here-document (`<<EOF`) of the command
/// `node` feeds its standard input: the word as bash passes it (quotes removed), or the
/// document's body as written. `None` when it has neither.
fn stdin_text(node: Node, src: &str) -> Option<String> {
    let feeds = |n: Node| matches!(n.kind(), "herestring_redirect" | "heredoc_redirect");
    let mut redirects: Vec<Node> = Vec::new();
    let mut cursor = node.walk();
    redirects.extend(node.children(&mut cursor).filter(|n| feeds(*n)));
    if let Some(parent) = node.parent().filter(|p| p.kind() == "redirected_statement") {
        let mut cursor = parent.walk();
        redirects.extend(parent.children(&mut cursor).filter(|n| feeds(*n)));
    }
    let last = redirects.into_iter().max_by_key(Node::start_byte)?;
    if last.kind() == "herestring_redirect" {
        let n = last.named_child(last.named_child_count().checked_sub(1)?)?;
        return Some(word(n, src).text);
    }
    let mut stack = vec![last];
    while let Some(n) = stack.pop() {
        if n.kind() == "heredoc_body" {
            return Some(text(n, src).to_string());
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    None
}

/// The text the command before `node` in a pipeline writes, when it is literal: `echo`'s
/// words joined (without options), `cat`'s here-string or here-document, `printf`'s format
/// when it has no conversion (`echo 'touch x' | bash`, `cat <<EOF | sh`, `printf 'touch
/// x\n' | sh`). `None` for anything else.
fn piped_text(node: Node, src: &str) -> Option<String> {
    let mut at = node;
    if at
        .parent()
        .is_some_and(|p| p.kind() == "redirected_statement")
    {
        at = at.parent()?;
    }
    let pipeline = at.parent()?;
    if pipeline.kind() != "pipeline" {
        return None;
    }
    // `cat <<EOF | bash`: the grammar puts the rest of the pipeline inside the here-document's
    // redirect, whose statement's body is the command before it
    let nested = pipeline
        .parent()
        .filter(|p| p.kind() == "heredoc_redirect" && pipeline.named_child(0) == Some(at))
        .and_then(|r| r.parent())
        .and_then(|stmt| stmt.child_by_field_name("body"));
    let mut before = match nested {
        Some(body) => body,
        None => at.prev_named_sibling()?,
    };
    if before.kind() == "redirected_statement" {
        before = before.named_child(0)?;
    }
    literal_output(before, src)
}

/// The text the command `before` writes when it is literal (see [`piped_text`]).
fn literal_output(before: Node, src: &str) -> Option<String> {
    if before.kind() != "command" {
        return None;
    }
    let mut cursor = before.walk();
    let words: Vec<Word> = before
        .children(&mut cursor)
        .filter_map(|c| match c.kind() {
            "command_name" => Some(word(c.named_child(0).unwrap_or(c), src)),
            "variable_assignment"
            | "file_redirect"
            | "heredoc_redirect"
            | "herestring_redirect" => None,
            _ if c.is_named() => Some(word(c, src)),
            _ => None,
        })
        .collect();
    match words.first().map(|w| w.text.as_str()) {
        Some("echo") if words.iter().all(|w| w.literal) => {
            let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
            let start = args.iter().take_while(|a| a.starts_with('-')).count();
            let raw = args[start..].join(" ");
            // `echo -e`, and a plain echo under `shopt -s xpg_echo` or dash's, decode escapes
            // (`\x63`, `\0143`): both texts are read
            Some(match echo_decoded(&raw).filter(|d| *d != raw) {
                Some(decoded) => format!("{raw}\n{decoded}"),
                None => raw,
            })
        }
        Some("cat") if words.len() == 1 => stdin_text(before, src),
        // `printf 'touch x\n' | sh`, `printf 'tou\143h x' | sh`, `printf 'tou%sh x' c | sh`:
        // the format with its escapes and conversions read, as printf writes it
        Some("printf") if words.iter().all(|w| w.literal) => {
            // `printf -- FORMAT ...`
            let at = if words.get(1).is_some_and(|w| w.text == "--") {
                2
            } else {
                1
            };
            let format = words.get(at).filter(|f| !f.text.starts_with('-'))?;
            let args: Vec<&str> = words[at + 1..].iter().map(|w| w.text.as_str()).collect();
            Some(printf_output(&format.text, &args))
        }
        _ => None,
    }
}

/// `text` with the escapes `echo -e` decodes (`\n`, `\x63`, `\0143`), or `None` when one
/// cannot be read.
fn echo_decoded(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    // echo's octal escapes are `\0NNN`; `$'...'`'s are `\NNN`
    unescape_ansi_c(&format!(
        "$'{}'",
        text.replace("\\0", "\\").replace('\'', "\\'")
    ))
}

/// What `printf FORMAT ARGS...` writes, as far as the analysis reads it: the format's escapes
/// decoded and `%s`, `%b`, `%c`, `%d`, `%q` (flags and widths ignored) given the arguments in
/// order, the format used again while arguments remain (as bash's printf does, at most 64
/// times).
fn printf_output(format: &str, args: &[&str]) -> String {
    let decode = |t: &str| echo_decoded(t).unwrap_or_else(|| t.to_string());
    let format = decode(format);
    let mut args = args.iter().peekable();
    let mut out = String::with_capacity(format.len());
    for _ in 0..64 {
        printf_once(&format, &mut args, &decode, &mut out);
        if args.peek().is_none() || !format.contains('%') {
            break;
        }
    }
    out
}

/// One use of `format` (escapes decoded) by printf, taking arguments from `args`.
fn printf_once<'a>(
    format: &str,
    args: &mut std::iter::Peekable<std::slice::Iter<'a, &'a str>>,
    decode: &dyn Fn(&str) -> String,
    out: &mut String,
) {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        while chars
            .peek()
            .is_some_and(|d| !d.is_ascii_alphabetic() && *d != '%')
        {
            chars.next();
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('b') => out.push_str(&decode(args.next().copied().unwrap_or_default())),
            Some('c') => out.extend(args.next().and_then(|a| a.chars().next())),
            Some(_) => out.push_str(args.next().copied().unwrap_or_default()),
            None => {}
        }
    }
}

/// The literal output ([`literal_output`]) of the command in the first process substitution
/// `<(...)` among the words of the command `node`, which a shell or `source` given it as its
/// script reads.
fn substituted_script(node: Node, src: &str) -> Option<String> {
    let mut cursor = node.walk();
    let sub = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "process_substitution" && text(*c, src).starts_with("<("))?;
    let mut inner = sub.named_child(0)?;
    if inner.kind() == "redirected_statement" {
        inner = inner.named_child(0)?;
    }
    literal_output(inner, src)
}

/// Whether the command `words` reads the commands it runs from its standard input: a shell
/// with neither `-c` nor a script operand (or with `-s`), or `source` / `.` of the standard
/// input (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`).
fn reads_commands_from_input(words: &[Word]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let name = program::program_name(&first.text);
    if matches!(name, "source" | ".") {
        return words.get(1).is_some_and(|w| {
            matches!(
                w.text.as_str(),
                "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
            )
        });
    }
    if !program::is_shell(name) {
        return false;
    }
    let mut stdin = false;
    for w in &words[1..] {
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            break;
        }
        match t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            Some(flags) if !t.starts_with("--") => {
                if t.starts_with('-') && flags.contains('c') {
                    return false;
                }
                stdin |= t.starts_with('-') && flags.contains('s');
            }
            Some(_) => {}
            // a script operand, unless `-s` makes the operands arguments
            None => return stdin,
        }
    }
    true
}

/// Where bash evaluates `node`, which starts at or holds byte `at`: a here-document's body
/// follows the lines after its command (`cat <<EOF; x=1` newline `$((x))`) but is expanded
/// when the command starts, so its position is that of its `<<`.
fn evaluated_at(node: Node, at: usize) -> usize {
    let mut up = Some(node);
    while let Some(p) = up {
        if p.kind() == "heredoc_body" {
            if let Some(redirect) = p.parent() {
                return redirect.start_byte();
            }
        }
        up = p.parent();
    }
    at
}

/// Until which byte the assignment statement `stmt` has surely run when bash evaluates
/// anything after it: the end of the line for a statement of the line; the end of the
/// subshell, loop body or function body holding it (a subshell's variables end with it, a
/// function's `local`s with its body; a loop body may run no time); through a group
/// `{ ..; }`, which runs in the shell itself; through an `&&` list, whose later commands run
/// only when it succeeded; never past a command run in the background (`x=1 &`), in a
/// pipeline, after `||`, or anywhere else the statement may not have run (`None` when not
/// past itself).
fn ran_until(stmt: Node, src: &str) -> Option<usize> {
    let mut cur = stmt;
    // whether stmt has run whenever `cur` has (else: whenever `cur` succeeded)
    let mut always = true;
    while let Some(p) = cur.parent() {
        let background = cur.next_sibling().is_some_and(|s| text(s, src) == "&");
        match p.kind() {
            "program" | "compound_statement" | "subshell" | "do_group" => {
                if !always || background || text(p, src).starts_with("((") {
                    break;
                }
                let group = p.kind() == "compound_statement"
                    && p.parent().is_none_or(|g| g.kind() != "function_definition");
                if p.kind() == "program" {
                    return Some(usize::MAX);
                }
                if !group {
                    return Some(p.end_byte());
                }
            }
            "list" => {
                let mut cursor = p.walk();
                let or = p.children(&mut cursor).any(|c| text(c, src) == "||");
                let left = p.named_child(0).is_some_and(|c| c.id() == cur.id());
                match (left, or) {
                    // the right side runs after the left; an `||` one only when it failed
                    (true, false) => {}
                    (true, true) if always => {}
                    // the list succeeded: its right side ran, and succeeded
                    (false, false) => always = false,
                    _ => break,
                }
            }
            "if_statement" | "elif_clause" | "while_statement" | "until_statement"
                if always && !background =>
            {
                let mut cursor = p.walk();
                let children: Vec<Node> = p.children(&mut cursor).collect();
                let then = children
                    .iter()
                    .find(|c| matches!(text(**c, src), "then" | "do") && !c.is_named())
                    .or_else(|| children.iter().find(|c| c.kind() == "do_group"));
                if then.is_none_or(|t| cur.start_byte() > t.start_byte()) {
                    // a branch's body: its statements run one after another, up to the
                    // next branch
                    let next = children.iter().find(|c| {
                        c.start_byte() >= cur.end_byte()
                            && (matches!(c.kind(), "elif_clause" | "else_clause")
                                || !c.is_named() && matches!(text(**c, src), "fi" | "done"))
                    });
                    return Some(next.map_or(p.end_byte(), |n| n.start_byte()));
                }
                if p.kind() == "elif_clause" {
                    // a condition runs whenever its clause does, and the rest of the
                    // `if` runs after it
                    return p.parent().map(|i| i.end_byte());
                }
                // the condition of an `if` or a loop runs whenever it does, at least once
            }
            "else_clause" | "case_item" if always && !background => return Some(p.end_byte()),
            _ => break,
        }
        cur = p;
    }
    (cur.end_byte() > stmt.end_byte()).then_some(cur.end_byte())
}

/// Whether `node` sits in an arithmetic expression (`$((..))`, `((..))`, the header of
/// `for ((..))`) rather than in a command inside one.
fn in_arithmetic(node: Node, src: &str) -> bool {
    let mut child = node;
    while let Some(p) = child.parent() {
        match p.kind() {
            "arithmetic_expansion" => return true,
            "c_style_for_statement" => return child.kind() != "do_group",
            "compound_statement" => return text(p, src).starts_with("(("),
            "command"
            | "command_substitution"
            | "process_substitution"
            | "do_group"
            | "subshell"
            | "program"
            | "function_definition"
            | "declaration_command" => return false,
            _ => child = p,
        }
    }
    false
}

/// The name of a `variable_assignment` node (without a subscript) and its value as bash
/// reads it (`None` when it holds an expansion).
fn assignment_parts(node: Node, src: &str) -> (String, Option<String>) {
    let name = node
        .child_by_field_name("name")
        .map(|n| text(n, src))
        .unwrap_or_default();
    let name = name.split('[').next().unwrap_or(name).to_string();
    let value = match node.child_by_field_name("value") {
        None => Some(String::new()),
        Some(v) => {
            let w = word(v, src);
            w.literal.then_some(w.text)
        }
    };
    (name, value)
}

/// Why bash evaluates more than a variable's value in the parameter expansion `t`
/// (`${...}`), running any command substitution it holds: prompt expansion (`${x@P}`), an
/// indirect expansion (`${!x}`, where `x` may hold `a[$(cmd)]`), or a substring whose offset
/// or length names a variable (`${x:y}`: arithmetic, evaluating the text of `y`). `None` for
/// the expansions that only read a value.
fn expansion_evaluates(t: &str) -> Option<&'static str> {
    let inner = t.strip_prefix("${")?.strip_suffix('}')?;
    if let Some(rest) = inner.strip_prefix('!') {
        // `${!prefix*}`, `${!prefix@}`, `${!a[@]}` and `${!a[*]}` list names or keys
        if rest.ends_with('*') || rest.ends_with('@') || rest.ends_with("[@]") {
            return None;
        }
        return Some(
            "an indirect expansion `${!name}`, which evaluates the subscript held by the \
             variable it names (`a[$(cmd)]` runs cmd)",
        );
    }
    let body = match inner.strip_prefix('#') {
        Some(b) if !b.is_empty() => b,
        _ => inner,
    };
    let b = body.as_bytes();
    let mut end = match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => b
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .unwrap_or(b.len()),
        Some(c) if c.is_ascii_digit() => b
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(b.len()),
        Some(_) => 1,
        None => 0,
    };
    if b.get(end) == Some(&b'[') {
        end = body[end..].find(']').map_or(b.len(), |c| end + c + 1);
    }
    let rest = body.get(end..).unwrap_or_default();
    if rest.starts_with("@P") {
        return Some(
            "a prompt expansion `${name@P}`, which runs the command substitutions in the \
             variable's text",
        );
    }
    let offset = rest.strip_prefix(':')?;
    let arithmetic = !offset.starts_with(['-', '=', '?', '+'])
        && offset
            .bytes()
            .any(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'$' | b'`'));
    arithmetic.then_some(
        "arithmetic on variables in a substring expansion `${name:offset:length}` (bash \
         evaluates their text, which can run commands)",
    )
}

/// The strings replaced by arguments when a command run by `xargs` or `find -exec` runs:
/// find's `{}`, and xargs's `-I STR` (`-i`, `--replace`: `{}`).
fn placeholders(wrappers: &[Vec<String>]) -> Vec<String> {
    let mut out = vec!["{}".to_string()];
    for w in wrappers.iter().filter(|w| {
        w.first()
            .is_some_and(|p| program::program_name(p) == "xargs")
    }) {
        for (i, a) in w.iter().enumerate() {
            let value = match a.as_str() {
                "-I" => w.get(i + 1).map(String::as_str),
                _ => a
                    .strip_prefix("--replace=")
                    .or_else(|| a.strip_prefix("-I"))
                    .or_else(|| a.strip_prefix("-i")),
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// Whether a compound array assignment (`a=([i]=x)`) has a subscript that names a variable:
/// an indexed array's subscripts are arithmetic, evaluating that variable's text.
fn array_subscripts_evaluate(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts_element = i == 0 || matches!(b[i - 1], b'(' | b' ' | b'\t' | b'\n');
        if b[i] == b'[' && starts_element {
            let end = t[i..].find(']').map_or(b.len(), |e| i + e);
            if t[i + 1..end]
                .bytes()
                .any(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'$' | b'`'))
            {
                return true;
            }
            i = end;
        }
        i += 1;
    }
    false
}

/// The variables `read`, `printf -v`, `getopts`, `mapfile` and `readarray` assign.
fn assigned_names<'a>(name: &str, argv: &'a [String]) -> Vec<&'a str> {
    let with_value: &[&str] = match name {
        "read" => &["-d", "-i", "-n", "-N", "-p", "-t", "-u"],
        "mapfile" | "readarray" => &["-d", "-n", "-O", "-s", "-u", "-C", "-c"],
        _ => &[],
    };
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        match (name, a) {
            ("printf", "-v") | ("read", "-a") => {
                if let Some(n) = argv.get(i + 1) {
                    out.push(n.as_str());
                }
                i += 2;
                continue;
            }
            ("printf", _) => return out,
            ("getopts", _) => {
                if let Some(n) = argv.get(2) {
                    out.push(n.as_str());
                }
                return out;
            }
            (_, "--") => {}
            _ if a.starts_with('-') && a.len() > 1 => {
                i += if with_value.contains(&a) { 2 } else { 1 };
                continue;
            }
            _ => out.push(a),
        }
        i += 1;
    }
    out
}

/// Whether only blanks (or escaped newlines) separate the children of `node`: the words of
/// one simple command or redirection never hold anything else between them, so anything else
/// means the grammar joined what bash runs as separate commands (it does so with some
/// newlines inside `$( )` and after process substitutions).
fn blank_gaps(node: Node, src: &str) -> bool {
    let mut cursor = node.walk();
    let mut end: Option<usize> = None;
    for child in node.children(&mut cursor) {
        if let Some(gap) = end.and_then(|e| src.get(e..child.start_byte())) {
            if !gap
                .replace("\\\n", "")
                .bytes()
                .all(|b| b == b' ' || b == b'\t')
            {
                return false;
            }
        }
        end = Some(child.end_byte());
    }
    true
}

fn text<'a>(node: Node, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or_default()
}

fn has_descendant(node: Node, kinds: &[&str]) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.id() != node.id() && kinds.contains(&n.kind()) {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}

/// The words of a node's named children (for declarations).
fn node_words(node: Node, src: &str) -> Vec<String> {
    let mut out = vec![node
        .child(0)
        .map(|c| text(c, src).to_string())
        .unwrap_or_default()];
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        out.push(word(child, src).text);
    }
    out
}

/// One word as bash reads it after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Word {
    text: String,
    /// Holds no expansion: `text` is exactly what bash passes.
    literal: bool,
    /// Holds an unquoted glob character (`*`, `?`, `[`).
    glob: bool,
    /// Holds an unquoted brace pattern (`{a,b}`, `{1..3}`).
    brace: bool,
    /// Holds a quoted part (a quoted `if` is a command name, not a reserved word).
    quoted: bool,
    /// Holds an unquoted parameter expansion or command substitution, whose text bash splits
    /// into words (an arithmetic expansion gives one number).
    split: bool,
    /// What begins it (for a word holding an expansion: whether it may be an option).
    lead: Lead,
    /// As written, it may name the run's home ([`reaches_home`]).
    home: bool,
}

/// What begins a word holding an expansion, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Lead {
    /// Literal text that does not start with `-` (`"./$f"`), or nothing.
    #[default]
    Plain,
    /// Literal text naming a long option, then its value (`--key="$k"`).
    Named,
    /// Literal text starting with `-` whose option the expansion after it completes
    /// (`-n"$x"`, `--$x`).
    Dash,
    /// The value of a variable (`$x`, `"${x}"`).
    Var(String),
    /// An arithmetic expansion: a number.
    Number,
    /// Anything else only known when it runs (`$(cmd)`, `$1`, `${x:-y}`).
    Unknown,
}

impl Lead {
    /// What literal text `t` begins a word with (`None` when empty: what follows does).
    fn literal(t: &str) -> Option<Lead> {
        if t.is_empty() {
            None
        } else if t.starts_with("--") && t.contains('=') {
            Some(Lead::Named)
        } else if t.starts_with('-') {
            Some(Lead::Dash)
        } else {
            Some(Lead::Plain)
        }
    }

    /// What the expansion `n` begins a word with.
    fn expansion(n: Node, src: &str) -> Lead {
        let t = text(n, src);
        let ident = |s: &str| {
            s.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        };
        let name = match n.kind() {
            "simple_expansion" => t.strip_prefix('$'),
            "expansion" => t.strip_prefix("${").and_then(|r| r.strip_suffix('}')),
            "arithmetic_expansion" => return Lead::Number,
            _ => None,
        };
        match name {
            Some(name) if ident(name) => Lead::Var(name.to_string()),
            _ => Lead::Unknown,
        }
    }

    /// What the double-quoted string `n`, holding expansions, begins a word with.
    fn string(n: Node, src: &str) -> Option<Lead> {
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            match c.kind() {
                "\"" => {}
                "string_content" => {
                    if let Some(lead) = Lead::literal(&unescape_double(text(c, src))) {
                        return Some(lead);
                    }
                }
                _ if c.is_named() => return Some(Lead::expansion(c, src)),
                _ => return Some(Lead::Unknown),
            }
        }
        None
    }
}

fn word(node: Node, src: &str) -> Word {
    let mut w = Word {
        literal: true,
        ..Word::default()
    };
    let mut lead: Option<Lead> = None;
    let mut unquoted = String::new();
    // an explicit stack keeps deep concatenations off the native stack
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let raw = text(n, src);
        match n.kind() {
            "word" | "number" | "command_name" | "special_variable_name"
                if n.named_child_count() == 0 =>
            {
                unquoted.push_str(raw);
                let t = unescape_unquoted(raw);
                lead = lead.or_else(|| Lead::literal(&t));
                w.text.push_str(&t);
            }
            "raw_string" => {
                w.quoted = true;
                let t = raw
                    .strip_prefix('\'')
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or(raw);
                lead = lead.or_else(|| Lead::literal(t));
                w.text.push_str(t);
            }
            "ansi_c_string" => match unescape_ansi_c(raw) {
                Some(s) => {
                    w.quoted = true;
                    lead = lead.or_else(|| Lead::literal(&s));
                    w.text.push_str(&s);
                }
                None => {
                    w.literal = false;
                    lead = lead.or(Some(Lead::Unknown));
                    w.text.push_str(raw);
                }
            },
            "string" | "translated_string" => {
                w.quoted = true;
                if has_descendant(
                    n,
                    &[
                        "simple_expansion",
                        "expansion",
                        "command_substitution",
                        "arithmetic_expansion",
                    ],
                ) {
                    w.literal = false;
                    lead = lead.or_else(|| Lead::string(n, src));
                    w.text.push_str(raw);
                } else {
                    let inner = raw.trim_start_matches('$');
                    let inner = inner
                        .strip_prefix('"')
                        .and_then(|r| r.strip_suffix('"'))
                        .unwrap_or(inner);
                    let t = unescape_double(inner);
                    lead = lead.or_else(|| Lead::literal(&t));
                    w.text.push_str(&t);
                }
            }
            "concatenation" | "command_name" => {
                let mut cursor = n.walk();
                let children: Vec<Node> = n.children(&mut cursor).collect();
                for c in children.into_iter().rev() {
                    stack.push(c);
                }
            }
            _ => {
                w.literal = false;
                w.split |= matches!(
                    n.kind(),
                    "simple_expansion" | "expansion" | "command_substitution"
                );
                lead = lead.or_else(|| Some(Lead::expansion(n, src)));
                w.text.push_str(raw);
            }
        }
    }
    w.lead = lead.unwrap_or_default();
    w.glob = unquoted.contains(['*', '?', '[']);
    w.brace = unquoted.contains('{')
        && unquoted.contains('}')
        && (unquoted.contains(',') || unquoted.contains(".."));
    w.home = reaches_home(text(node, src));
    w
}

/// An unquoted word after quote removal: `\x` becomes `x`, `\` newline disappears.
fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A double-quoted string's content: `\` keeps its meaning only before `$`, `` ` ``, `"`,
/// `\` and newline.
fn unescape_double(raw: &str) -> String {
    unescape_before(raw, true)
}

/// `raw` with each backslash before `$`, `` ` ``, `\\` (and `"` when `quote`) removed, and
/// each one before a newline removed with it; any other backslash kept.
fn unescape_before(raw: &str, quote: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '\\') => out.push(chars.next().unwrap_or('\\')),
                Some('"') if quote => out.push(chars.next().unwrap_or('\\')),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `$'...'` decoded as bash does, or `None` for an escape this does not read (`\cX`).
fn unescape_ansi_c(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            _ => return None,
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max + usize::from(radix == 8) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.push(chars.next()?),
                _ => break,
            }
        }
        let v = u32::from_str_radix(&digits, radix).ok()?;
        out.push(char::from_u32(v)?);
    }
    Some(out)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
