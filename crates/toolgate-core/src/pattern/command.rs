//! [`CommandPattern`]: a word-prefix pattern over the argv of one simple command.

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

    /// Whether a simple command with words `argv` matches; `by_name` compares the command's
    /// name by its last path component (for restricting rules).
    pub fn matches_argv<S: AsRef<str>>(&self, argv: &[S], by_name: bool) -> bool {
        let fixed = self.words.len() + usize::from(self.prefix.is_some());
        if argv.len() < fixed || argv.is_empty() {
            return false;
        }
        let word_at = |i: usize| -> &str {
            let w = argv[i].as_ref();
            if i == 0 && by_name {
                w.rsplit('/').next().unwrap_or(w)
            } else {
                w
            }
        };
        self.words.iter().enumerate().all(|(i, w)| word_at(i) == w)
            && self
                .prefix
                .as_ref()
                .is_none_or(|p| word_at(self.words.len()).starts_with(p.as_str()))
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
            ("*", "anything at all", true, true),
            ("echo 'a b'", "echo 'a b'", false, false),
            ("rm -rf", "rm -rf /", true, true),
            ("rm -rf", "rm -r -f /", false, false),
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
