//! The command grammar: what the words of one simple command do beyond naming its program
//! ([`read`] gives a [`Reading`]).
//!
//! A rule that names a program (`allow command:sed`) is about that program. Many programs can
//! also run another program, or code, named in their arguments: `sed '1e touch x'`,
//! `awk 'BEGIN{system("id")}'`, `find -exec`, `xargs`, `timeout`, `python3 -c`,
//! `tar --to-command`, `git -c core.pager=...`. The grammar knows, for the programs in its
//! tables, which words do that, and sorts them three ways:
//!
//! 1. **a wrapped command** ([`Reading::wraps`]): the program only changes how the command
//!    after its own options runs (`env`, `timeout 5`, `nice`, `nohup`, `stdbuf`, `setsid`,
//!    `sudo`, `xargs`, ...); that command is the one the rules decide;
//! 2. **commands it runs that can be read** ([`Reading::runs`]): the words of `find -exec`,
//!    `fd -x`, `git bisect run`, `pnpm exec`, and the command lines of `sh -c`, `su -c`,
//!    `flock -c`, `watch`, `sed`'s `e COMMAND` and `git rebase --exec`; a caller that knows
//!    the shell's grammar (run_shell's analysis) decides each by the rules too;
//! 3. **code it cannot read** ([`Reading::code`]): the last word through which the command
//!    runs code or a program that nothing here can see: an interpreter's script, module or
//!    inline code (`python3 x.py`, `python3 -c`, `node -e`, `bash x.sh`), a `sed` script
//!    with `s///e`, an `awk` program that calls `system` or opens a pipe, an option naming a
//!    program (`tar --to-command`, `rsync -e`, `ssh -o ProxyCommand=`, `rg --pre`,
//!    `sort --compress-program`, `less +!cmd`, `vim -c`, `man -P`, `make VAR=value`,
//!    `git -c key=value`, `cargo --config`), a subcommand that is an alias or a plugin
//!    (`git frobnicate`, `cargo nextest`, `pnpm build`).
//!
//! A granting pattern (an allow rule, an approval grant) covers a command with such a word
//! only when it reaches that word: it names the command's words up to and including it
//! (`allow command:python3 -m pytest` covers `python3 -m pytest -x`, `allow command:python3`
//! does not). A restricting pattern (deny, ask) is not limited by it.
//!
//! **Programs the grammar does not know** are read by their arguments' shape, to the safe
//! side ([`Reading::known`] is false): an option named like one that takes a program or code
//! (`--exec`, `--command`, `--shell`, `--pager`, `--eval`, `--plugin`, ..., and the short `-c`,
//! `-e`, `-x`), a word holding shell syntax (`;`, `|`, `&`, `` ` ``, `$(`, a newline), a word
//! naming a shell, interpreter or wrapper (`sh`, `python3`, `env`, `xargs`, ...), and the word
//! after a first argument `run`, `exec`, `x` or `dlx` (`uv run pytest`) are code it cannot
//! read. A restricting pattern also matches such a program's arguments from any word
//! that names the pattern's program (`deny command:rm` matches `unknown-wrapper -q rm -rf x`).
//!
//! **Programs with subcommands** (`git`, `cargo`, `npm`, `pnpm`, `yarn`, `docker`, `podman`,
//! `kubectl`, `oc`) have their global options read ([`Reading::subcommand`]): a restricting
//! pattern also matches the command with every global option removed (`deny command:git tag`
//! matches `git -C . tag v6`), and a granting one with the options that change nothing of
//! what runs removed (`allow command:git status` covers `git -C sub status`, not
//! `git -c alias.status=... status`). A global option that can make the program run another
//! subcommand than the one written (`git -c` with a key that is not known to be harmless,
//! `git --exec-path=`, `cargo --config`) makes every restricting pattern of that program
//! match ([`Subcommand::any`]).

mod git;
mod scripts;
mod subcommands;
mod tables;
mod wrappers;

pub use git::{git_setting_is_harmless, GIT_PINNED_SETTINGS};

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::OnceLock;

/// What the words of one simple command do beyond naming its program; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reading {
    /// Whether the grammar knows the program (else its arguments were read by their shape).
    pub known: bool,
    /// For a wrapper: the index of the word where the command it runs starts (`timeout 5 git
    /// status`: 2). `None` when the program wraps nothing (or has nothing to run).
    pub wraps: Option<usize>,
    /// Further commands it runs that a caller can read.
    pub runs: Vec<Run>,
    /// The last word through which it runs code that cannot be read.
    pub code: Option<Code>,
    /// For a program with subcommands: its global options and where the subcommand is.
    pub subcommand: Option<Subcommand>,
}

/// A command run by another, readable by a caller.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Run {
    /// `words[start..end]` run as a command (`find -exec CMD ;`).
    Words {
        /// The index of its first word.
        start: usize,
        /// The index after its last word.
        end: usize,
        /// Whether more arguments are added when it runs (`find -exec ... +`, `fd -x`).
        open: bool,
    },
    /// A command line run by a shell (`sh -c LINE`, `sed` `e LINE`); one in another shell's
    /// language (`zsh -c LINE`, `env -S STRING`) is read with bash's grammar as well, for the
    /// patterns that restrict, beside the [`Code`] that keeps any pattern from granting it.
    Line(String),
}

/// A word through which a command runs code that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// Its index in the words (the number of words when the code comes from standard input).
    pub at: usize,
    /// What it is, for the operator (`python3 runs the script or code its arguments name`).
    pub why: Cow<'static, str>,
}

/// The global options of a program with subcommands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Subcommand {
    /// The index of the subcommand's word (the number of words when there is none).
    pub at: usize,
    /// The global options before it.
    pub globals: Vec<Global>,
    /// Whether a global option can make the program run another subcommand than the one
    /// written (so every restricting pattern of the program matches).
    pub any: bool,
}

/// One global option: its words, and whether it changes nothing of what runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Global {
    /// The index of the option's first word.
    pub start: usize,
    /// How many words it takes (2 for `-C dir`, 1 for `--git-dir=x` or a flag).
    pub len: usize,
    /// Whether it changes nothing of which program or subcommand runs (`-C`, `--no-pager`).
    pub harmless: bool,
    /// An option the grammar does not know: it may also take the next word as its value.
    pub unknown: bool,
}

impl Reading {
    /// Records code at `at`, keeping the last such word (a pattern must reach them all).
    pub(crate) fn code_at(&mut self, at: usize, why: impl Into<Cow<'static, str>>) {
        if self.code.as_ref().is_none_or(|c| at > c.at) {
            self.code = Some(Code {
                at,
                why: why.into(),
            });
        }
    }
}

/// Whether the program `name` (see [`program_name`]) runs nothing else whatever its arguments
/// (`cat`, `echo`, `wc`, `rm`, `cd`, ...), so no option put in them can make it run a command.
/// `false` for every other program, known or not (`find` runs `-exec`, `sort` its
/// `--compress-program`, `git` its `-c core.pager`).
pub fn runs_nothing_else(name: &str) -> bool {
    tables::inert(name)
}

/// Whether `name` runs the program or code its arguments name in a way the grammar does not
/// read (`strace`, `valgrind`, `nsenter`, `unshare`, `parallel`, `systemd-run`, ...): as for
/// a program the grammar does not know, a restricting pattern matches its words from any word
/// that names the pattern's program (`deny command:touch` matches `strace -f touch x`).
pub fn runs_its_arguments(name: &str) -> bool {
    tables::runner(name)
}

/// Whether `name` is an editor or another program that reads commands from its input
/// (`vim`, `ex`, `emacs`, `ed`, `at`, ...), whose own command language can run a shell line.
pub fn is_interactive(name: &str) -> bool {
    tables::interactive(name)
}

/// Whether the grammar knows `name` as a program that runs other programs or code: a shell,
/// an interpreter, a wrapper (`env`, `timeout`, `nice`, `sudo`, ...), a runner (`strace`,
/// `parallel`, ...) or an editor that reads commands.
pub fn runs_other_programs(name: &str) -> bool {
    tables::runs_others(name)
}

/// Whether `name` is a shell: a POSIX one (`bash`, `sh`, `dash`, ...) or one whose language
/// differs (`zsh`, `ksh`, `fish`, ...).
pub fn is_shell(name: &str) -> bool {
    tables::shell_name(name)
}

/// The git command a program of git's own stands for: `git-push` (as a path, a name, or an
/// `argv[0]` given with `exec -a`) is `git push`, so `Some("push")`; `None` for any other
/// program (and for `git-` alone).
pub fn git_builtin(word: &str) -> Option<&str> {
    program_name(word)
        .strip_prefix("git-")
        .filter(|sub| !sub.is_empty())
}

/// The name a command's first word runs: its last path component (`/usr/bin/git`: `git`).
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Reads a command the call may run ([`crate::Resource::PossibleCommand`]) as a rule that
/// restricts reads it: a line read by the grammar as [`read`] says, but a program the
/// grammar does not know is taken as known (its words are not searched for the rule's
/// program: `gh pr create --title "Replace curl"` may run `Replace curl`, which runs no
/// curl); the words kept whole of a line that could not be read, whose first word is a
/// marker in parentheses (`(unparsed)`, `(code)`), are searched from any word.
pub fn read_possible<S: AsRef<str>>(argv: &[S]) -> Reading {
    let mut r = read(argv);
    let marker = argv
        .first()
        .is_some_and(|w| w.as_ref().starts_with('(') && w.as_ref().ends_with(')'));
    if !marker {
        r.known = true;
    }
    r
}

/// Reads the words of one simple command (quotes removed, wrappers not yet stripped); see
/// the module docs. Never fails: words it cannot place are code it cannot read.
pub fn read<S: AsRef<str>>(argv: &[S]) -> Reading {
    let words: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    let Some(first) = words.first() else {
        return Reading {
            known: true,
            ..Reading::default()
        };
    };
    let name = program_name(first);
    let mut r = Reading {
        known: true,
        ..Reading::default()
    };
    if wrappers::read(name, &words, &mut r)
        || subcommands::read(name, &words, &mut r)
        || scripts::read(name, &words, &mut r)
        || tables::read(name, &words, &mut r)
    {
        return r;
    }
    r.known = false;
    unknown(&words, &mut r);
    r
}

/// Whether an option put in the arguments of the program `name` (see [`program_name`]) when
/// the line runs can change what it may do: make it write a file it would not write
/// otherwise, set a shell variable, or run a command or code (`sort -o`, `find -delete`,
/// `tar --to-command`, `git -c`, `rsync -e`, `curl -o`, `printf -v`). `false` only for the
/// programs whose every option reads, or changes how the files its operands name are
/// written (`cat`, `grep`, `ls`, `wc`, `cp`, `rm`, `mkdir`, `tee`, ...); `true` for every
/// other program, known or not.
pub fn options_matter(name: &str) -> bool {
    !tables::options_harmless(name)
}

/// Whether no option of the subcommand `sub` of the program `name` writes a file other than
/// the operands it names, sets a variable or runs code chosen by the option, so the words
/// after the subcommand are judged as operands whatever they hold: `git add`, `rm`, `mv`,
/// `status`, `checkout`, `switch`, `restore`, `blame`, `ls-files` (their options read,
/// choose what to stage or check out, or name a file to read). Not `git diff`, `log` or
/// `show` (`--output=FILE`, `--ext-diff`), `grep` (`--open-files-in-pager=PROGRAM`) and every
/// subcommand not listed.
pub fn subcommand_options_harmless(name: &str, sub: &str) -> bool {
    tables::subcommand_options_harmless(name, sub)
}

/// Whether the option word `option` of the program `name` takes the next word as its value
/// (`git commit -m MSG`, `find -name PATTERN`, `sort -k KEY`), so that word is no option
/// whatever it holds. Only options whose value neither names a file the program would not
/// write otherwise nor code are listed (`sort -o`, `find -fprint`, `git -c` are not): a value
/// there matters as much as an option would.
pub fn takes_value(name: &str, option: &str) -> bool {
    tables::takes_value(name, option)
}

/// Long-option name parts that say the option takes a program or code.
static EXEC_PARTS: Lexicon = Lexicon::new(
    "exec execute command commands cmd shell sh eval script scripts pager editor program prog \
     hook hooks filter rsh proxy wrapper launcher runner plugin plugins preload require \
     interpreter browser helper askpass spawn call system",
);

/// A program the grammar does not know: its arguments read by their shape.
fn unknown(words: &[&str], r: &mut Reading) {
    let why = |what: &str| -> Cow<'static, str> {
        Cow::Owned(format!(
            "`{}` is a program toolgate does not know, and {what}",
            program_name(words[0])
        ))
    };
    if let Some(i) = words.iter().skip(1).position(|w| !w.starts_with('-')) {
        let i = i + 1;
        if matches!(words[i], "run" | "exec" | "x" | "dlx") {
            r.code_at(
                (i + 1).min(words.len() - 1),
                why(&format!("`{}` may run the command after it", words[i])),
            );
        }
    }
    for (i, w) in words.iter().enumerate().skip(1) {
        if *w == "--" {
            continue;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if name
                .split(['-', '_'])
                .any(|p| EXEC_PARTS.has(&p.to_ascii_lowercase()))
            {
                let at = if value {
                    i
                } else {
                    (i + 1).min(words.len() - 1)
                };
                r.code_at(at, why(&format!("its option `{name}` may name a program")));
                continue;
            }
        } else if let Some(short) = w.strip_prefix('-') {
            if !short.is_empty()
                && short.bytes().all(|b| b.is_ascii_alphabetic())
                && short.ends_with(['c', 'e', 'x'])
            {
                let at = (i + 1).min(words.len() - 1);
                r.code_at(at, why(&format!("its option `{w}` may run code")));
                continue;
            }
        }
        if has_shell_syntax(w) {
            r.code_at(i, why("an argument holds shell syntax it may run"));
            continue;
        }
        if tables::runs_others(program_name(w)) {
            r.code_at(i, why(&format!("it may run `{w}`")));
        }
    }
}

/// A list of words (written separated by white space), sorted at its first lookup and then
/// searched by bisection.
pub(crate) struct Lexicon {
    text: &'static str,
    sorted: OnceLock<Vec<&'static str>>,
}

impl Lexicon {
    /// The words of `text`.
    pub(crate) const fn new(text: &'static str) -> Lexicon {
        Lexicon {
            text,
            sorted: OnceLock::new(),
        }
    }

    /// Whether `word` is one of them.
    pub(crate) fn has(&self, word: &str) -> bool {
        self.sorted
            .get_or_init(|| {
                let mut words: Vec<&str> = self.text.split_ascii_whitespace().collect();
                words.sort_unstable();
                words
            })
            .binary_search(&word)
            .is_ok()
    }
}

/// Whether `word` is one of the words of `list` (separated by spaces).
/// Whether the word `w` may be the long option `long` (`--upload-pack`) abbreviated, as
/// GNU getopt and git take any unambiguous prefix (`--upload=x`, `--upl x`): `Some(true)`
/// when its value is attached (`=`), `Some(false)` when it is the next word. A prefix more
/// than one option starts with is taken for each, which only restricts more.
pub(crate) fn abbreviates(w: &str, long: &str) -> Option<bool> {
    let name = w.strip_prefix("--")?;
    let (name, attached) = match name.split_once('=') {
        Some((n, _)) => (n, true),
        None => (name, false),
    };
    let full = long.strip_prefix("--")?;
    (!name.is_empty() && name.len() < full.len() && full.starts_with(name)).then_some(attached)
}

pub(crate) fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

/// Whether `word` holds characters a shell would read as syntax (`;`, `|`, `&`, `` ` ``,
/// `$(`, `<(`, `>(`, a newline).
pub(crate) fn has_shell_syntax(word: &str) -> bool {
    word.contains([';', '|', '&', '`', '\n'])
        || word.contains("$(")
        || word.contains("<(")
        || word.contains(">(")
}
