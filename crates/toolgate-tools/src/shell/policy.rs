//! Allow, ask and deny rules over every command a shell call would run: [`CommandRules`], and
//! the [`ShellPolicy`] that applies them in the pipeline's authorize stage.
//!
//! The sequence for a call to a shell tool:
//!
//! 1. the inner policy decides first; its deny is final;
//! 2. the command is [analyzed](super::parse::analyze) into every simple command it runs
//!    (those that wrappers, shells, `find -exec`, `sed`'s `e`, ... run included);
//! 3. a line that would undo the sandbox's git settings (`GIT_CONFIG_COUNT=...`, `env -i`,
//!    `git -c core.fsmonitor=...`) is denied (`shell.pinned`), whatever the rules say;
//! 4. each simple command gets the highest decision of the rules that match it (deny over
//!    ask over allow), and `ask` when none does; any denied command denies the call, and the
//!    verdict names it (`git clean -fd`). Deny and ask rules match every spelling: global
//!    options removed (`git -C . tag`), the words of its wrappers (`sudo`, `timeout 5`), the
//!    arguments of a program the grammar does not know;
//! 5. an uncertain analysis asks (it is never allowed by rules), every time: no approval grant
//!    over resources answers it, since what it runs cannot be named
//!    ([`Verdict::ask_each_time`]); a command line that runs no command asks too;
//! 6. a command that runs code the grammar cannot read (`python3 x.py`, `sed 's/x/y/e'`,
//!    `tar --to-command=...`) is allowed only by a rule that names it up to the word that
//!    carries the code (`allow command:python3 -m pytest`); otherwise it asks
//!    (`shell.runs_code`);
//! 7. when every command is allowed, the rules replace the inner policy's tool-wide default
//!    (by default `DefaultPolicy`'s `destructive_asks` and `dangerous_asks`); any other
//!    inner `ask` (a path rule on a redirection target, say) still asks.
//!
//! Patterns are [`CommandPattern`]s from `toolgate_core::pattern`, the same matcher as the
//! configuration's `command:` resource rules and approval grants: the leading words of a
//! command (`git push` matches `git push origin`, not `git pushx`), read through the command
//! grammar ([`toolgate_core::pattern::program`]).
//!
//! Rules never make a write safe: the sandbox confines what an allowed command writes
//! (`git log --output=../x` is allowed by `git log*` and still cannot write outside).

use super::parse::{analyze, CommandAnalysis, SimpleCommand};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use toolgate_core::{Decision, Policy, PolicyInput, ToolSpec, Verdict};

pub use toolgate_core::pattern::{CommandPattern, CommandPatternError as PatternError};

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
            .filter(|r| rule_matches(r, command))
            .max_by_key(|r| r.decision)
    }

    /// The verdict over a whole analysis: see the module docs. Rule names start with
    /// `shell.`; reasons name the commands they are about.
    pub fn verdict(&self, analysis: &CommandAnalysis) -> Verdict {
        if !analysis.pinned.is_empty() {
            return Verdict::deny(
                "shell.pinned",
                format!(
                    "the command would undo the sandbox's git settings: {}",
                    analysis.pinned.join("; ")
                ),
            );
        }
        let mut unlisted: Vec<String> = Vec::new();
        let mut code: Vec<String> = Vec::new();
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
                // `command -v git`, `type ls`, `hash git` look names up and run nothing
                None if super::parse::runs_nothing(&command.argv)
                    && command.wrappers.is_empty() => {}
                None => match (&command.reading.code, self.allowed_but_for_code(command)) {
                    (Some(c), true) => code.push(format!(
                        "`{}` ({}; a rule must name it up to `{}`)",
                        command.display(),
                        c.why,
                        command.argv.get(c.at).map_or("its input", String::as_str)
                    )),
                    _ => unlisted.push(command.display()),
                },
            }
        }
        // what a program the rules cannot read may run: the rules that restrict hold for it
        for command in &analysis.possible {
            match self.decide(command) {
                Some(rule) if rule.decision == Decision::Deny => {
                    return Verdict::deny(
                        format!("shell.deny:{}", rule.pattern),
                        format!(
                            "the command `{}`, which the line may run, is denied by the rule \
                             `{}`",
                            command.display(),
                            rule.pattern
                        ),
                    );
                }
                Some(rule) if rule.decision == Decision::Ask => {
                    asked.push((command.display(), rule));
                }
                _ => {}
            }
        }
        if !analysis.certain {
            // what it runs cannot be named, so no grant may answer it
            return Verdict::ask_each_time(
                "shell.uncertain",
                format!(
                    "the command cannot be read with certainty, so no rule can allow it and it \
                     asks every time: {}. Rewrite those parts as said where a way is given, or \
                     split the work into commands the rules can read",
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
        if !code.is_empty() {
            return Verdict::ask(
                "shell.runs_code",
                format!(
                    "the rules allow the program but not the code it runs: {}",
                    code.join(", ")
                ),
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

    /// Whether an allow rule would match `command` if it ran no code it cannot read.
    fn allowed_but_for_code(&self, command: &SimpleCommand) -> bool {
        let mut reading = command.reading.clone();
        reading.code = None;
        self.rules.iter().any(|r| {
            r.decision == Decision::Allow && r.pattern.matches_read(&command.argv, &reading, false)
        })
    }
}

/// Whether `rule` matches `command`: allow rules as they grant, deny and ask rules every
/// spelling, the words of the command's wrappers included (`deny command:sudo` matches
/// `sudo rm x`).
fn rule_matches(rule: &CommandRule, command: &SimpleCommand) -> bool {
    let restrict = rule.decision != Decision::Allow;
    if rule
        .pattern
        .matches_read(&command.argv, &command.reading, restrict)
    {
        return true;
    }
    restrict
        && (0..command.wrappers.len()).any(|i| {
            let words: Vec<&str> = command.wrappers[i..]
                .iter()
                .flatten()
                .chain(&command.argv)
                .map(String::as_str)
                .collect();
            rule.pattern.matches_argv(&words, true)
        })
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
            tools: vec![super::RUN_SHELL.to_string()],
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

    /// The inner policy's: command rules are about shell calls, not the paths a tool walks.
    fn decide_path(
        &self,
        rel: &std::path::Path,
        access: toolgate_core::Access,
        profile: &str,
    ) -> Decision {
        self.inner.decide_path(rel, access, profile)
    }

    /// The inner policy's: command rules are not about recipients.
    fn decide_recipient(&self, sender: &ToolSpec, address: &str, profile: &str) -> Verdict {
        self.inner.decide_recipient(sender, address, profile)
    }

    /// The inner policy's: command rules judge a call's command, never hide a tool.
    fn visible(&self, tool: &toolgate_core::ToolSpec, session: &toolgate_core::Session) -> bool {
        self.inner.visible(tool, session)
    }

    fn decide_url(&self, tool: &toolgate_core::ToolSpec, url: &str, profile: &str) -> Verdict {
        self.inner.decide_url(tool, url, profile)
    }

    fn names_addresses(&self, tool: &toolgate_core::ToolSpec, profile: &str) -> bool {
        self.inner.names_addresses(tool, profile)
    }

    fn decide_address(
        &self,
        tool: &toolgate_core::ToolSpec,
        host: &str,
        address: std::net::IpAddr,
        profile: &str,
    ) -> Option<Verdict> {
        self.inner.decide_address(tool, host, address, profile)
    }
}

/// The higher of two verdicts; the first on a tie, unless only the second cannot be granted
/// (an ask that must be put to the approver every time stays so).
fn strongest(a: Verdict, b: Verdict) -> Verdict {
    if b.decision > a.decision || (b.decision == a.decision && a.grantable && !b.grantable) {
        b
    } else {
        a
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
