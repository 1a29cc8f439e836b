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
//! 3. wrappers are unwrapped to the command they run: `env`, `nice`, `timeout`, `nohup`,
//!    `command`, `exec`, `time`, `sudo`, `xargs`, `stdbuf`, `setsid`; `bash -c STRING` (and
//!    `sh`, `dash`, `zsh`, `ksh`) is analyzed again from its string; `find -exec ... ;` adds
//!    the command it runs.
//!
//! Redirections become [`Redirect`]s (their targets are paths the call reads or writes);
//! file-descriptor duplications (`2>&1`) and the standard devices (`/dev/null`, ...) are not
//! paths.
//!
//! Whatever cannot be read with certainty makes the analysis uncertain, with a reason:
//! syntax errors, a command name that is an expansion or holds glob or brace patterns,
//! `eval`, `source`, `.`, `alias`, `hash`, `enable`, `trap`, a shell reading commands from
//! stdin, assignments to variables that change what runs (`PATH`, `LD_PRELOAD`, `BASH_ENV`,
//! `IFS`, ...), arithmetic on variables (bash evaluates a variable's text as an expression,
//! which can run a command substitution), brace expansion, redirection targets holding
//! expansions, input larger than [`MAX_INPUT`], nesting deeper than [`MAX_DEPTH`], or a parse
//! slower than [`PARSE_BUDGET`].

use std::time::{Duration, Instant};
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
}

/// One command bash would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The words after assignments and wrappers: `["git", "clean", "-fd"]`. A word holding an
    /// expansion keeps its source text (`$HOME/x`).
    pub argv: Vec<String>,
    /// The `VAR=value` prefixes stripped before matching, as written.
    pub assignments: Vec<String>,
    /// The wrappers unwrapped to reach `argv`, outermost first (`["timeout 5", "nice"]`).
    pub wrappers: Vec<String>,
    /// Whether more arguments are added when it runs (the command of `xargs`, `find -exec`).
    pub open_args: bool,
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
    let mut out = CommandAnalysis {
        commands: a.commands,
        redirects: a.redirects,
        certain: a.uncertain.is_empty(),
        uncertain: a.uncertain,
    };
    out.uncertain.dedup();
    out
}

#[derive(Default)]
struct Analyzer {
    commands: Vec<SimpleCommand>,
    redirects: Vec<Redirect>,
    uncertain: Vec<String>,
}

/// Shells whose `-c STRING` is analyzed again.
const SHELLS: [&str; 6] = ["bash", "sh", "dash", "zsh", "ksh", "rbash"];
/// Builtins that run code the analysis cannot see.
const OPAQUE: [&str; 8] = [
    "eval", "source", ".", "alias", "hash", "enable", "trap", "coproc",
];
/// Variables whose assignment changes which program runs or what the shell does.
const DANGEROUS_VARS: [&str; 10] = [
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "CDPATH",
    "GLOBIGNORE",
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
    fn doubt(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.uncertain.contains(&why) {
            self.uncertain.push(why);
        }
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
    }

    fn visit(&mut self, node: Node, src: &str, nesting: usize) {
        match node.kind() {
            "command" => self.command(node, src, nesting),
            "declaration_command" | "unset_command" => {
                let argv = node_words(node, src);
                self.commands.push(SimpleCommand {
                    argv,
                    ..SimpleCommand::default()
                });
            }
            "variable_assignment" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| text(n, src))
                    .unwrap_or_default();
                self.assignment(name);
            }
            "file_redirect" => self.redirect(node, src),
            "arithmetic_expansion" | "subscript" | "arithmetic_statement"
                if has_descendant(node, &["simple_expansion", "expansion", "variable_name"]) =>
            {
                self.doubt(
                    "arithmetic on variables (bash evaluates their text, which can run commands)",
                );
            }
            "compound_statement"
                if text(node, src).starts_with("((")
                    && has_descendant(
                        node,
                        &["simple_expansion", "expansion", "variable_name"],
                    ) =>
            {
                self.doubt(
                    "arithmetic on variables (bash evaluates their text, which can run commands)",
                );
            }
            "test_command" => {
                let t = text(node, src);
                let arith = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]
                    .iter()
                    .any(|op| t.contains(op));
                if t.starts_with("[[") && arith && t.contains('$') {
                    self.doubt("an arithmetic test on variables inside [[ ]]");
                }
            }
            "brace_expression" => self.doubt("brace expansion"),
            "ERROR" => self.doubt("the command has a syntax error"),
            _ if node.is_missing() => self.doubt("the command is incomplete"),
            _ => {}
        }
    }

    fn assignment(&mut self, name: &str) {
        if DANGEROUS_VARS.contains(&name)
            || name.starts_with("LD_")
            || name.starts_with("BASH_FUNC")
        {
            self.doubt(format!("an assignment to {name}, which changes what runs"));
        }
    }

    fn command(&mut self, node: Node, src: &str, nesting: usize) {
        let mut assignments = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut cursor = node.walk();
        if !blank_gaps(node, src) {
            self.doubt("the grammar read separate commands as one");
        }
        for child in node.children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => assignments.push(text(child, src).to_string()),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {}
                "command_name" => match child.named_child(0) {
                    Some(inner) => words.push(word(inner, src)),
                    None => words.push(word(child, src)),
                },
                _ if child.is_named() => words.push(word(child, src)),
                _ => {}
            }
        }
        let Some(name) = words.first() else {
            return;
        };
        if !name.literal {
            self.doubt(format!(
                "the command name `{}` is only known when it runs",
                name.text
            ));
        } else if RESERVED.contains(&name.text.as_str()) && !name.quoted {
            // the grammar read a compound command (`! if ...`) as a simple one
            self.doubt(format!(
                "the reserved word `{}` stands where a command name should",
                name.text
            ));
        } else if name.glob {
            self.doubt(format!(
                "the command name `{}` is a glob pattern",
                name.text
            ));
        }
        if words.iter().any(|w| w.brace) {
            self.doubt("brace expansion, which can add words");
        }
        let argv: Vec<String> = words.into_iter().map(|w| w.text).collect();
        self.unwrap(
            SimpleCommand {
                argv,
                assignments,
                wrappers: Vec::new(),
                open_args: false,
            },
            nesting,
        );
    }

    /// Unwraps wrappers and records the command they run.
    fn unwrap(&mut self, mut cmd: SimpleCommand, nesting: usize) {
        let mut found = None;
        for _ in 0..16 {
            let Some(first) = cmd.argv.first() else {
                return;
            };
            let name = basename(first).to_string();
            if OPAQUE.contains(&name.as_str()) {
                self.doubt(format!("`{name}` runs code the analysis cannot see"));
            }
            if SHELLS.contains(&name.as_str()) {
                self.shell(&cmd, nesting);
            }
            if name == "find" {
                found = Some(cmd.clone());
            }
            let Some(skip) = wrapper_args(&name, &cmd.argv[1..]) else {
                break;
            };
            if skip.opaque {
                self.doubt(format!(
                    "`{name}` is used in a way the analysis cannot read"
                ));
            }
            let inner_at = 1 + skip.skip;
            if inner_at >= cmd.argv.len() {
                // a wrapper with nothing to run (`env`, `exec 3>f`, `xargs` alone)
                if name == "xargs" {
                    cmd.open_args = true;
                }
                break;
            }
            for a in &cmd.argv[1..inner_at] {
                if let Some((var, _)) = a.split_once('=') {
                    if !var.is_empty() && !var.starts_with('-') {
                        self.assignment(var);
                    }
                }
            }
            cmd.wrappers.push(cmd.argv[..inner_at].join(" "));
            cmd.argv.drain(..inner_at);
            cmd.open_args |= name == "xargs";
        }
        self.commands.push(cmd);
        if let Some(find) = found {
            self.find_exec(&find, nesting);
        }
    }

    /// `bash -c STRING`: STRING analyzed again; `bash` reading stdin is uncertain.
    fn shell(&mut self, cmd: &SimpleCommand, nesting: usize) {
        let mut args = cmd.argv[1..].iter();
        while let Some(a) = args.next() {
            if a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains('c')) {
                match args.next() {
                    Some(script) => self.source(script, nesting + 1),
                    None => self.doubt("`bash -c` without a command string"),
                }
                return;
            }
            if a == "-o" || a == "+o" || a == "--rcfile" || a == "--init-file" {
                args.next();
                continue;
            }
            if a == "-s" || a == "--" {
                break;
            }
            if !a.starts_with('-') && !a.starts_with('+') {
                // runs a script file: the rules decide on `bash FILE`
                return;
            }
        }
        self.doubt(format!(
            "`{}` reads the commands it runs from its input",
            cmd.argv[0]
        ));
    }

    /// `find ... -exec CMD ... ;` (and `-execdir`, `-ok`, `-okdir`): CMD is a command too.
    fn find_exec(&mut self, cmd: &SimpleCommand, nesting: usize) {
        let argv = &cmd.argv;
        let mut i = 1;
        while i < argv.len() {
            if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let end = argv[start..]
                    .iter()
                    .position(|a| a == ";" || a == "+")
                    .map_or(argv.len(), |p| start + p);
                if start < end {
                    let inner = SimpleCommand {
                        argv: argv[start..end].to_vec(),
                        assignments: Vec::new(),
                        wrappers: vec![argv[..start].join(" ")],
                        open_args: true,
                    };
                    self.unwrap(inner, nesting);
                }
                i = end;
            }
            i += 1;
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
        let dup = matches!(op.as_str(), ">&" | "<&" | ">&-" | "<&-")
            && (target.text.bytes().all(|b| b.is_ascii_digit()) || target.text == "-");
        if dup {
            return;
        }
        if !target.literal {
            self.doubt(format!(
                "the redirection target `{}` is only known when it runs",
                target.text
            ));
            return;
        }
        if target.glob || target.brace {
            self.doubt(format!(
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
        if op == "<>" {
            self.redirects.push(Redirect {
                path: path.clone(),
                access: Access::Read,
            });
        }
        self.redirects.push(Redirect { path, access });
    }
}

/// How many arguments of wrapper `name` precede the command it runs, or `None` when `name`
/// is not a wrapper.
struct Skip {
    skip: usize,
    /// The wrapper takes options the analysis does not read (`env -S`).
    opaque: bool,
}

fn wrapper_args(name: &str, args: &[String]) -> Option<Skip> {
    // options taking a separate value, per wrapper
    let with_value: &[&str] = match name {
        "env" => &["-u", "--unset", "-C", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "nohup" | "time" | "setsid" => &[],
        "command" | "builtin" => &[],
        "exec" => &["-a"],
        "sudo" | "doas" => &["-u", "-g", "-U", "-C", "-D", "-h", "-p", "-r", "-t", "-T"],
        "xargs" => &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-d",
            "-E",
            "-s",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--replace",
        ],
        "stdbuf" => &["-i", "-o", "-e"],
        _ => return None,
    };
    let mut i = 0;
    let mut opaque = false;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if name == "command" && (a == "-v" || a == "-V") {
            // `command -v x` looks x up, it runs nothing
            return None;
        }
        if name == "env" && (a == "-S" || a.starts_with("--split-string")) {
            opaque = true;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += if with_value.contains(&a) { 2 } else { 1 };
            continue;
        }
        if name == "env" && a.contains('=') {
            i += 1;
            continue;
        }
        break;
    }
    if name == "timeout" && i < args.len() {
        // the duration
        i += 1;
    }
    Some(Skip {
        skip: i.min(args.len()),
        opaque,
    })
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

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
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
}

fn word(node: Node, src: &str) -> Word {
    let mut w = Word {
        literal: true,
        ..Word::default()
    };
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
                w.text.push_str(&unescape_unquoted(raw));
            }
            "raw_string" => {
                w.quoted = true;
                w.text.push_str(
                    raw.strip_prefix('\'')
                        .and_then(|r| r.strip_suffix('\''))
                        .unwrap_or(raw),
                );
            }
            "ansi_c_string" => match unescape_ansi_c(raw) {
                Some(s) => {
                    w.quoted = true;
                    w.text.push_str(&s);
                }
                None => {
                    w.literal = false;
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
                    w.text.push_str(raw);
                } else {
                    let inner = raw.trim_start_matches('$');
                    let inner = inner
                        .strip_prefix('"')
                        .and_then(|r| r.strip_suffix('"'))
                        .unwrap_or(inner);
                    w.text.push_str(&unescape_double(inner));
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
                w.text.push_str(raw);
            }
        }
    }
    w.glob = unquoted.contains(['*', '?', '[']);
    w.brace = unquoted.contains('{')
        && unquoted.contains('}')
        && (unquoted.contains(',') || unquoted.contains(".."));
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
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or('\\')),
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
