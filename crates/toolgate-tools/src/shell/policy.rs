//! Allow, ask and deny rules over every command a shell call would run: [`CommandRules`], and
//! the [`ShellPolicy`] that applies them in the pipeline's authorize stage.
//!
//! The sequence for a call to a shell tool:
//!
//! 1. the inner policy decides first; its deny is final;
//! 2. the command is [analyzed](super::parse::analyze) into every simple command it runs;
//! 3. each simple command gets the highest decision of the rules that match it (deny over
//!    ask over allow), and `ask` when none does; any denied command denies the call, and the
//!    verdict names it (`git clean -fd`);
//! 4. an uncertain analysis asks (it is never allowed by rules), as does a command line that
//!    runs no command;
//! 5. when every command is allowed, the rules replace the inner policy's tool-wide default
//!    (by default `DefaultPolicy`'s `destructive_asks` and `dangerous_asks`); any other
//!    inner `ask` (a path rule on a redirection target, say) still asks.
//!
//! Rules never make a write safe: the sandbox confines what an allowed command writes
//! (`git log --output=../x` is allowed by `git log*` and still cannot write outside).

use super::parse::{analyze, CommandAnalysis, SimpleCommand};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use toolgate_core::{Decision, Policy, PolicyInput, Verdict};

/// A command pattern: words matched against a command's argv.
///
/// `git status` matches exactly `git status`; a last word ending in `*` matches any word
/// with that prefix followed by any further arguments (`git clean*` matches `git clean -fd`,
/// `curl*` matches every `curl`), and a last word that is only `*` matches any further
/// arguments (`git log *`, or `*` alone for every command). The first word is compared with
/// the command's name; for deny and ask rules a path is reduced to its last component
/// (`/usr/bin/curl` is `curl`), for allow rules it must be written as the command writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    text: String,
    words: Vec<String>,
    /// The last word's prefix match (`clean` of `clean*`), or `None` for exact words.
    prefix: Option<String>,
    /// The pattern is `... *`: anything may follow the words.
    any_rest: bool,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern has no word.
    #[error("a command pattern must not be empty")]
    Empty,
    /// A `*` stands elsewhere than at the end of the last word.
    #[error("command pattern {0:?}: `*` may only end the last word")]
    Star(String),
}

impl CommandPattern {
    /// Parses a pattern.
    ///
    /// # Errors
    /// [`PatternError::Empty`] for a blank pattern, [`PatternError::Star`] for a `*` that does
    /// not end the last word.
    pub fn parse(pattern: &str) -> Result<CommandPattern, PatternError> {
        let mut words: Vec<String> = pattern.split_whitespace().map(str::to_string).collect();
        let last = words.pop().ok_or(PatternError::Empty)?;
        if words.iter().any(|w| w.contains('*')) {
            return Err(PatternError::Star(pattern.to_string()));
        }
        let (prefix, any_rest) = if last == "*" {
            (None, true)
        } else if let Some(p) = last.strip_suffix('*') {
            if p.contains('*') {
                return Err(PatternError::Star(pattern.to_string()));
            }
            (Some(p.to_string()), true)
        } else if last.contains('*') {
            return Err(PatternError::Star(pattern.to_string()));
        } else {
            words.push(last);
            (None, false)
        };
        Ok(CommandPattern {
            text: pattern.trim().to_string(),
            words,
            prefix,
            any_rest,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `command` matches; `by_name` compares the command name by its last path
    /// component (deny and ask rules).
    pub fn matches(&self, command: &SimpleCommand, by_name: bool) -> bool {
        let argv = &command.argv;
        let fixed = self.words.len() + usize::from(self.prefix.is_some());
        if argv.len() < fixed || (!self.any_rest && (argv.len() != fixed || command.open_args)) {
            return false;
        }
        let word_at = |i: usize| -> &str {
            let w = argv[i].as_str();
            if i == 0 && by_name {
                w.rsplit('/').next().unwrap_or(w)
            } else {
                w
            }
        };
        let exact = self.words.iter().enumerate().all(|(i, w)| word_at(i) == w);
        exact
            && self
                .prefix
                .as_ref()
                .is_none_or(|p| word_at(self.words.len()).starts_with(p.as_str()))
    }
}

impl fmt::Display for CommandPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One rule: a decision for the commands a pattern matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRule {
    /// What matching commands get.
    pub decision: Decision,
    /// Which commands.
    pub pattern: CommandPattern,
}

/// Allow, ask and deny rules over simple commands. Deny wins over ask, ask over allow;
/// a command no rule matches asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandRules {
    rules: Vec<CommandRule>,
}

impl CommandRules {
    /// No rules: every command asks.
    pub fn new() -> CommandRules {
        CommandRules::default()
    }

    /// Rules from `(decision, pattern)` pairs.
    ///
    /// # Errors
    /// The first pattern that does not parse.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (Decision, &'a str)>,
    ) -> Result<CommandRules, PatternError> {
        let mut rules = CommandRules::new();
        for (decision, pattern) in pairs {
            rules = rules.rule(decision, pattern)?;
        }
        Ok(rules)
    }

    /// Adds a rule.
    ///
    /// # Errors
    /// The pattern's parse error.
    pub fn rule(mut self, decision: Decision, pattern: &str) -> Result<CommandRules, PatternError> {
        self.rules.push(CommandRule {
            decision,
            pattern: CommandPattern::parse(pattern)?,
        });
        Ok(self)
    }

    /// The rules, in the order added.
    pub fn rules(&self) -> &[CommandRule] {
        &self.rules
    }

    /// The strongest rule matching `command`, or `None` when none does.
    pub fn decide(&self, command: &SimpleCommand) -> Option<&CommandRule> {
        self.rules
            .iter()
            .filter(|r| r.pattern.matches(command, r.decision != Decision::Allow))
            .max_by_key(|r| r.decision)
    }

    /// The verdict over a whole analysis: see the module docs. Rule names start with
    /// `shell.`; reasons name the commands they are about.
    pub fn verdict(&self, analysis: &CommandAnalysis) -> Verdict {
        let mut unlisted: Vec<String> = Vec::new();
        let mut asked: Vec<(String, &CommandRule)> = Vec::new();
        for command in &analysis.commands {
            match self.decide(command) {
                Some(rule) if rule.decision == Decision::Deny => {
                    return Verdict::deny(
                        format!("shell.deny:{}", rule.pattern),
                        format!(
                            "the command `{}` is denied by the rule `{}`",
                            command.display(),
                            rule.pattern
                        ),
                    );
                }
                Some(rule) if rule.decision == Decision::Ask => {
                    asked.push((command.display(), rule));
                }
                Some(_) => {}
                None => unlisted.push(command.display()),
            }
        }
        if !analysis.certain {
            return Verdict::ask(
                "shell.uncertain",
                format!(
                    "the command cannot be read with certainty: {}",
                    analysis.uncertain.join("; ")
                ),
            );
        }
        if let Some((shown, rule)) = asked.first() {
            return Verdict::ask(
                format!("shell.ask:{}", rule.pattern),
                format!("the command `{shown}` asks by the rule `{}`", rule.pattern),
            );
        }
        if !unlisted.is_empty() {
            return Verdict::ask(
                "shell.unlisted",
                format!(
                    "no rule allows {}",
                    unlisted
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if analysis.commands.is_empty() {
            return Verdict::ask("shell.no_command", "the command line runs no command");
        }
        Verdict::allow("shell.allow", "rules allow every command it runs")
    }
}

/// A [`Policy`] that decides calls to shell tools by [`CommandRules`] over every command
/// they run, and leaves every other call to the inner policy (see the module docs).
#[derive(Clone)]
pub struct ShellPolicy {
    inner: Arc<dyn Policy>,
    rules: CommandRules,
    tools: Vec<String>,
    overridable: Vec<Cow<'static, str>>,
}

impl fmt::Debug for ShellPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShellPolicy")
            .field("rules", &self.rules)
            .field("tools", &self.tools)
            .field("overridable", &self.overridable)
            .finish_non_exhaustive()
    }
}

impl ShellPolicy {
    /// `rules` over `run_shell`, on top of `inner`, replacing `DefaultPolicy`'s
    /// `default.destructive_asks` and `default.dangerous_asks` when every command is allowed.
    pub fn new(inner: Arc<dyn Policy>, rules: CommandRules) -> ShellPolicy {
        ShellPolicy {
            inner,
            rules,
            tools: vec!["run_shell".to_string()],
            overridable: vec![
                Cow::Borrowed("default.destructive_asks"),
                Cow::Borrowed("default.dangerous_asks"),
            ],
        }
    }

    /// Also treats `tool` as a shell tool (its `command` argument is analyzed).
    pub fn shell_tool(mut self, tool: impl Into<String>) -> ShellPolicy {
        self.tools.push(tool.into());
        self
    }

    /// Lets allowed commands also replace the inner verdicts of `rule`.
    pub fn overridable(mut self, rule: impl Into<Cow<'static, str>>) -> ShellPolicy {
        self.overridable.push(rule.into());
        self
    }

    /// The rules.
    pub fn rules(&self) -> &CommandRules {
        &self.rules
    }
}

impl Policy for ShellPolicy {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        let inner = self.inner.decide(input);
        if !self.tools.iter().any(|t| **t == *input.tool.name) || inner.decision == Decision::Deny {
            return inner;
        }
        let Some(command) = input.arguments.get("command").and_then(|c| c.as_str()) else {
            return strongest(
                inner,
                Verdict::ask("shell.no_command", "the call has no command to read"),
            );
        };
        let shell = self.rules.verdict(&analyze(command));
        if shell.decision == Decision::Deny || self.overridable.contains(&inner.rule) {
            return shell;
        }
        strongest(inner, shell)
    }
}

/// The higher of two verdicts; the first on a tie.
fn strongest(a: Verdict, b: Verdict) -> Verdict {
    if b.decision > a.decision {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn cmd(line: &str) -> SimpleCommand {
        let mut a = analyze(line);
        assert_eq!(a.commands.len(), 1, "{line}");
        a.commands.remove(0)
    }

    #[test]
    fn patterns_match_words_prefixes_and_rests() {
        let table: &[(&str, &str, bool, bool)] = &[
            // pattern, command, matches as allow, matches as deny
            ("git status", "git status", true, true),
            ("git status", "git status -s", false, false),
            ("git status*", "git status -s", true, true),
            ("git status*", "git statusx", true, true),
            ("git status *", "git status", true, true),
            ("git status *", "git status --short", true, true),
            ("git clean*", "git clean -fd", true, true),
            ("curl*", "/usr/bin/curl -s x", false, true),
            ("curl*", "curly", true, true),
            ("curl *", "curly", false, false),
            ("*", "anything at all", true, true),
            ("git log", "git", false, false),
        ];
        for (pattern, line, allow, deny) in table {
            let p = CommandPattern::parse(pattern).unwrap();
            assert_eq!(p.matches(&cmd(line), false), *allow, "{pattern} / {line}");
            assert_eq!(p.matches(&cmd(line), true), *deny, "{pattern} / {line}");
        }
        let xargs = &analyze("ls | xargs git status").commands[1];
        assert!(xargs.open_args);
        assert!(!CommandPattern::parse("git status")
            .unwrap()
            .matches(xargs, false));
        assert!(CommandPattern::parse("git status*")
            .unwrap()
            .matches(xargs, false));
    }

    #[test]
    fn bad_patterns_are_refused() {
        assert_eq!(CommandPattern::parse("  "), Err(PatternError::Empty));
        for bad in ["git * status", "*git", "git st*tus", "a** b", "**"] {
            assert!(CommandPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deny_beats_ask_beats_allow_on_every_segment() {
        let rules = CommandRules::from_pairs([
            (Decision::Allow, "git status*"),
            (Decision::Deny, "git clean*"),
            (Decision::Allow, "echo *"),
            (Decision::Ask, "echo secret*"),
            (Decision::Deny, "curl*"),
        ])
        .unwrap();
        let v = rules.verdict(&analyze("git status && git clean -fd"));
        assert_eq!(v.decision, Decision::Deny);
        assert!(v.reason.contains("`git clean -fd`"), "{}", v.reason);
        assert_eq!(v.rule, "shell.deny:git clean*");
        for line in [
            "LC_ALL=C curl -s x",
            "echo $(curl x)",
            "bash -c 'curl x'",
            "timeout 5 curl x",
            "echo ok | xargs curl",
            "echo x > >(curl y)",
            "$CMD; curl x",
        ] {
            assert_eq!(
                rules.verdict(&analyze(line)).decision,
                Decision::Deny,
                "{line}"
            );
        }
        assert_eq!(
            rules.verdict(&analyze("git status; echo hi")).decision,
            Decision::Allow
        );
        let v = rules.verdict(&analyze("echo secret stuff"));
        assert_eq!(
            (v.decision, v.rule.as_ref()),
            (Decision::Ask, "shell.ask:echo secret*")
        );
        let v = rules.verdict(&analyze("echo ok; ls"));
        assert_eq!(
            (v.decision, v.rule.as_ref()),
            (Decision::Ask, "shell.unlisted")
        );
        assert!(v.reason.contains("`ls`"));
        let v = rules.verdict(&analyze("echo \"$(touch pwned)\""));
        assert_eq!(v.decision, Decision::Ask, "the substitution is not allowed");
        let v = rules.verdict(&analyze("echo $((x))"));
        assert_eq!(
            (v.decision, v.rule.as_ref()),
            (Decision::Ask, "shell.uncertain")
        );
        assert_eq!(rules.verdict(&analyze("")).decision, Decision::Ask);
        assert_eq!(
            CommandRules::new().verdict(&analyze("ls")).decision,
            Decision::Ask
        );
    }
}
