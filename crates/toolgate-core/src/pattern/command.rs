//! [`CommandPattern`]: a word-prefix pattern over the argv of one simple command.

use super::program::{self, Reading, Subcommand};
use super::shell_glob;
use std::fmt;

/// A command pattern: words matched against the leading words of a simple command's argv.
///
/// The match is by word prefix, as codex's `prefix_rule` does: `git push` matches `git push`
/// and `git push origin main`, but not `git pushx` nor `git`. A last word ending in `*` matches
/// any word with that prefix (`git clean*` matches `git clean -fd` and `git clean-x`,
/// `curl*` every command whose name starts with `curl`); a last word that is only `*` adds
/// nothing (`git log *` is `git log`), and `*` alone matches every command.
///
/// The first word is compared with the command's name. A pattern used to restrict (deny and
/// ask rules) compares it by its last path component, so `curl` also matches `/usr/bin/curl`
/// and `./curl`; a pattern used to grant (allow rules, approval grants) matches only the name
/// as the command writes it.
///
/// The command's words are read by the command grammar ([`super::program`]) first:
///
/// - a restricting pattern matches every spelling: also the command with its global options
///   removed (`git tag` matches `git -C . tag v6`), every command of a program whose global
///   options can change the subcommand (`git tag` matches `git -c alias.t=tag t`), the
///   command a wrapper runs, and, for a program the grammar does not know, its arguments
///   from any word naming the pattern's program; a word holding `*`, `?` or `[` is taken
///   for every word it matches as a glob, since bash replaces it by the names of files that
///   may exist when the line runs (`/usr/bin/t[o]uch x` runs `/usr/bin/touch x`; a quoted
///   word with such characters is taken so too, which only restricts more);
/// - a granting pattern matches the command as written or with the global options that
///   change nothing of what runs removed (`git status` covers `git -C sub status`), and
///   only when it reaches the first word through which the command runs code the grammar
///   cannot read ([`super::program::Code`]): `python3 -m pytest` covers `python3 -m pytest
///   -x`, `python3` does not, and `*` covers no such command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    text: String,
    words: Vec<String>,
    /// The last word's prefix match (`clean` of `clean*`), or `None`.
    prefix: Option<String>,
}

/// Why a command pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandPatternError {
    /// The pattern has no word.
    #[error("a command pattern must not be empty")]
    Empty,
    /// A `*` stands elsewhere than at the end of the last word.
    #[error("command pattern {0:?}: `*` may only end the last word")]
    Star(String),
}

impl CommandPattern {
    /// Parses a pattern: words separated by white space, see the type's docs.
    ///
    /// # Errors
    /// [`CommandPatternError::Empty`] for a blank pattern, [`CommandPatternError::Star`] for a
    /// `*` that does not end the last word.
    pub fn parse(pattern: &str) -> Result<CommandPattern, CommandPatternError> {
        let mut words: Vec<String> = pattern.split_whitespace().map(str::to_string).collect();
        let last = words.pop().ok_or(CommandPatternError::Empty)?;
        let star = || CommandPatternError::Star(pattern.to_string());
        if words.iter().any(|w| w.contains('*')) {
            return Err(star());
        }
        let prefix = if last == "*" {
            None
        } else if let Some(p) = last.strip_suffix('*') {
            if p.contains('*') {
                return Err(star());
            }
            Some(p.to_string())
        } else if last.contains('*') {
            return Err(star());
        } else {
            words.push(last);
            None
        };
        Ok(CommandPattern {
            text: pattern.split_whitespace().collect::<Vec<_>>().join(" "),
            words,
            prefix,
        })
    }

    /// The pattern as written (white space collapsed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How many leading words the pattern fixes (the prefix word included).
    fn fixed(&self) -> usize {
        self.words.len() + usize::from(self.prefix.is_some())
    }

    /// Whether a simple command with words `argv` matches; `by_name` compares the command's
    /// name by its last path component and matches every spelling (for restricting rules).
    /// Reads `argv` with the command grammar; [`CommandPattern::matches_read`] takes a
    /// reading made once for many patterns.
    pub fn matches_argv<S: AsRef<str>>(&self, argv: &[S], by_name: bool) -> bool {
        self.matches_read(argv, &program::read(argv), by_name)
    }

    /// [`CommandPattern::matches_argv`] with `reading`, the grammar's reading of `argv`.
    pub fn matches_read<S: AsRef<str>>(
        &self,
        argv: &[S],
        reading: &Reading,
        by_name: bool,
    ) -> bool {
        if by_name {
            self.restricts(argv, reading, 0)
        } else {
            self.grants(argv, reading)
        }
    }

    /// A granting match: as written, or without harmless global options, reaching the first
    /// word of code and the command a wrapper runs.
    fn grants<S: AsRef<str>>(&self, argv: &[S], reading: &Reading) -> bool {
        let needed = match (reading.code.as_ref().map(|c| c.at), reading.wraps) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let covers = |reach: usize| needed.is_none_or(|n| n < reach);
        if self.match_form(argv, None, false).is_some_and(covers) {
            return true;
        }
        let Some(sub) = &reading.subcommand else {
            return false;
        };
        if !sub.globals.iter().any(|g| g.harmless) {
            return false;
        }
        let kept = kept_words(argv.len(), sub, |g| g.harmless, false);
        self.match_form(argv, Some(&kept), false)
            .is_some_and(covers)
    }

    /// A restricting match: every spelling (see the type's docs).
    fn restricts<S: AsRef<str>>(&self, argv: &[S], reading: &Reading, depth: usize) -> bool {
        if self.match_form(argv, None, true).is_some() {
            return true;
        }
        let first_matches = |w: &str| {
            let w = program::program_name(w);
            match self.words.first() {
                Some(p) => may_be(w, p),
                None => self.prefix.as_ref().is_none_or(|p| may_start_with(w, p)),
            }
        };
        if let Some(sub) = &reading.subcommand {
            if sub.any && argv.first().is_some_and(|w| first_matches(w.as_ref())) {
                return true;
            }
            if !sub.globals.is_empty() {
                for unknown_takes_value in [false, true] {
                    let kept = kept_words(argv.len(), sub, |_| true, unknown_takes_value);
                    if self.match_form(argv, Some(&kept), true).is_some() {
                        return true;
                    }
                }
            }
        }
        if depth < 8 {
            if let Some(k) = reading.wraps {
                let inner = &argv[k..];
                if self.restricts(inner, &program::read(inner), depth + 1) {
                    return true;
                }
            }
        }
        let scan = !reading.known
            || argv
                .first()
                .is_some_and(|w| program::runs_its_arguments(program::program_name(w.as_ref())));
        if scan {
            for k in 1..argv.len() {
                if first_matches(argv[k].as_ref()) {
                    let kept: Vec<usize> = (k..argv.len()).collect();
                    if self.match_form(argv, Some(&kept), true).is_some() {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether the pattern matches the words of `argv` at `kept` (all of them when `None`):
    /// `Some(reach)`, the index after the last word it covers, when it does.
    fn match_form<S: AsRef<str>>(
        &self,
        argv: &[S],
        kept: Option<&[usize]>,
        by_name: bool,
    ) -> Option<usize> {
        let len = kept.map_or(argv.len(), <[usize]>::len);
        let fixed = self.fixed();
        if len < fixed || len == 0 {
            return None;
        }
        let orig = |i: usize| kept.map_or(i, |k| k[i]);
        let word_at = |i: usize| -> &str {
            let w = argv[orig(i)].as_ref();
            if i == 0 && by_name {
                program::program_name(w)
            } else {
                w
            }
        };
        // restricting: a glob pattern may become any word it matches
        let matches = if by_name {
            self.words
                .iter()
                .enumerate()
                .all(|(i, w)| may_be(word_at(i), w))
                && self
                    .prefix
                    .as_ref()
                    .is_none_or(|p| may_start_with(word_at(self.words.len()), p))
        } else {
            self.words.iter().enumerate().all(|(i, w)| word_at(i) == w)
                && self
                    .prefix
                    .as_ref()
                    .is_none_or(|p| word_at(self.words.len()).starts_with(p.as_str()))
        };
        matches.then(|| if fixed == 0 { 0 } else { orig(fixed - 1) + 1 })
    }

    /// Whether the command line `line` matches: one simple command, as toolgate's shell tools
    /// declare it (words quoted POSIX-style where needed, see [`split_command`]).
    pub fn matches_line(&self, line: &str, by_name: bool) -> bool {
        self.matches_argv(&split_command(line), by_name)
    }
}

impl fmt::Display for CommandPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether the command's word `word` is, or as a glob pattern may become, the pattern's word
/// `want` (bash expands `t[o]uch` to `touch` where such a file exists: see [`shell_glob`]).
fn may_be(word: &str, want: &str) -> bool {
    word == want || shell_glob::is_glob(word) && shell_glob::could_match(word, want, false)
}

/// Whether the command's word `word` starts with `prefix`, or as a glob pattern may become a
/// word that does.
fn may_start_with(word: &str, prefix: &str) -> bool {
    word.starts_with(prefix)
        || shell_glob::is_glob(word) && shell_glob::could_match(word, prefix, true)
}

/// The indices of the words of a command of `len` words outside the global options `drop`
/// selects; an unknown option also drops the word after it when `unknown_takes_value`.
fn kept_words(
    len: usize,
    sub: &Subcommand,
    drop: impl Fn(&program::Global) -> bool,
    unknown_takes_value: bool,
) -> Vec<usize> {
    let mut dropped = vec![false; len];
    for g in sub.globals.iter().filter(|g| drop(g)) {
        for d in dropped.iter_mut().take(g.start + g.len).skip(g.start) {
            *d = true;
        }
        if g.unknown && unknown_takes_value && g.start + 1 < len {
            dropped[g.start + 1] = true;
        }
    }
    (0..len).filter(|i| !dropped[*i]).collect()
}

/// Splits one simple command, as toolgate's shell tools declare it in
/// [`crate::Resource::Command`] (its words joined by spaces, a word single-quoted when it holds
/// anything but plain characters), back into its words with POSIX quoting rules. A line that
/// is not valid POSIX quoting (which toolgate's tools never declare) is split on white space,
/// so a restricting rule still sees its words.
pub fn split_command(line: &str) -> Vec<String> {
    shlex::split(line).unwrap_or_else(|| line.split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, line: &str, by_name: bool) -> bool {
        CommandPattern::parse(pattern)
            .unwrap()
            .matches_line(line, by_name)
    }

    #[test]
    fn patterns_match_by_word_prefix() {
        let table: &[(&str, &str, bool, bool)] = &[
            // pattern, command, matches to grant, matches to restrict
            ("git push", "git push", true, true),
            ("git push", "git push origin main", true, true),
            ("git push", "git pushx", false, false),
            ("git push", "git", false, false),
            ("git push*", "git pushx", true, true),
            ("git log *", "git log", true, true),
            ("git log *", "git log --oneline", true, true),
            ("curl*", "/usr/bin/curl -s x", false, true),
            ("curl", "./curl", false, true),
            ("curl*", "curly", true, true),
            ("curl *", "curly", false, false),
            ("*", "anything goes here", true, true),
            ("echo 'a b'", "echo 'a b'", false, false),
            ("rm -rf", "rm -rf /", true, true),
            ("rm -rf", "rm -r -f /", false, false),
            // a runner's words are searched for the program, as an unknown program's are
            ("touch", "strace -f -o /dev/null touch x", false, true),
            ("touch", "unshare --fork -- /usr/bin/touch x", false, true),
            ("rm -rf", "valgrind -q rm -rf /", false, true),
            ("touch", "strace -f ls", false, false),
            // a glob may become the word bash finds a file for: restricted, never granted
            ("touch", "/usr/bin/t[o]uch x", false, true),
            ("touch", "'/usr/bin/tou?h' x", false, true),
            ("touch", "/usr/bin/*ouch x", false, true),
            ("touch", "t[!t]uch x", false, true),
            ("touch", "[!t]ouch x", false, false),
            ("touch", "timeout 5 /usr/bin/t?uch x", false, true),
            ("touch", "e?v touch x", false, true),
            ("git push", "git p?sh origin", false, true),
            ("git push", "g[i]t push", false, true),
            ("git push", "git p?ll", false, false),
            ("curl*", "/usr/bin/c?r*", false, true),
            ("curl*", "/usr/bin/c?r", false, false),
            ("curl*", "/usr/bin/c?x", false, false),
            ("t[o]uch", "t[o]uch", true, true),
        ];
        for (pattern, line, grant, restrict) in table {
            assert_eq!(m(pattern, line, false), *grant, "{pattern} / {line}");
            assert_eq!(m(pattern, line, true), *restrict, "{pattern} / {line}");
        }
        // quoted words are compared unquoted
        let p = CommandPattern::parse("echo").unwrap();
        assert!(p.matches_line("echo 'a b'", false));
        assert!(!p.matches_argv::<&str>(&[], true));
        assert_eq!(split_command("echo 'it'\\''s'"), vec!["echo", "it's"]);
        assert_eq!(split_command("echo 'open"), vec!["echo", "'open"]);
    }

    #[test]
    fn bad_patterns_are_refused() {
        assert_eq!(CommandPattern::parse("  "), Err(CommandPatternError::Empty));
        for bad in ["git * status", "*git", "git st*tus", "a** b", "**"] {
            assert!(
                matches!(
                    CommandPattern::parse(bad),
                    Err(CommandPatternError::Star(_))
                ),
                "{bad}"
            );
        }
        assert_eq!(
            CommandPattern::parse("git   push ").unwrap().to_string(),
            "git push"
        );
    }
}
