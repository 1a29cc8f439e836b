//! Patterns over tools and the resources a call touches, shared by the policy rules of the
//! configuration and by approval grants ("always for this pattern").
//!
//! - [`ToolPattern`]: a glob over tool names (`read_file`, `*`, `fs_*`).
//! - [`ResourcePattern`]: written `kind:pattern`:
//!   - `path:<glob>` ([`PathPattern`]): a glob over the canonical workspace-relative path,
//!     gitignore-style (`path:.env`, `path:secrets`, `path:src/**/*.rs`);
//!   - `host:<pattern>` ([`HostPattern`]): the host of a URL (`host:example.com`,
//!     `host:*.example.com`, `host:10.0.0.0/8`);
//!   - `command:<prefix>` ([`CommandPattern`]): the leading words of one simple command
//!     (`command:git push` matches `git push origin` but not `git pushx`);
//!   - `recipient:<address>` ([`RecipientPattern`]): a recipient of a message
//!     (`recipient:boss@company.com`, `recipient:*@company.com`, `recipient:*@*.company.com`).
//!
//! Every pattern parses from text with a clear [`PatternError`] and displays as it was
//! written, so `parse(p.to_string())` gives `p` back.
//!
//! A pattern matches in one of two [`MatchMode`]s. A pattern that grants (an allow rule, an
//! approval grant) matches exactly what it says; a pattern that restricts (deny and ask rules)
//! matches every spelling that may name the same thing: paths ignore case and file-system
//! aliases, commands are compared by the name of the program whatever directory it is run from.
//! Denying too much is recoverable; allowing too much is not.
//!
//! ```
//! use toolgate_core::pattern::{MatchMode, ResourcePattern};
//! let deny = ResourcePattern::parse_with("path:.env", MatchMode::Restrict).unwrap();
//! # let dir = tempfile::tempdir().unwrap();
//! # let ws = toolgate_core::Workspace::open(dir.path()).unwrap();
//! let env = toolgate_core::ResolvedResource::Path {
//!     path: ws.resolve("app/.ENV").unwrap(),
//!     access: toolgate_core::Access::Read,
//! };
//! assert!(deny.matches(&env));
//! assert_eq!(deny.to_string(), "path:.env");
//! ```

mod command;
mod host;
mod path;
pub mod program;
mod recipient;
mod shell_glob;
mod tool;

pub use command::{split_command, CommandPattern, CommandPatternError};
pub use host::HostPattern;
pub use path::{PathPattern, PathPatternSet};
pub use recipient::{normalize_address, RecipientPattern};
pub use tool::ToolPattern;

use crate::policy::Decision;
use crate::tool::ResolvedResource;
use std::fmt;

/// How a pattern matches: exactly as written, or every spelling of the same thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatchMode {
    /// For patterns that grant (allow rules, approval grants): paths compare case-sensitively
    /// and as written; a command's name must be written as the command writes it.
    #[default]
    Grant,
    /// For patterns that restrict (deny and ask rules): paths compare ignoring case and the
    /// aliases of case-insensitive and alias-folding file systems (see [`PathPattern`]); a
    /// command's name compares by its last path component (`curl` matches `/usr/bin/curl`).
    Restrict,
}

impl MatchMode {
    /// The mode for a rule that decides `decision`: `Restrict` for deny and ask, `Grant` for
    /// allow.
    pub fn for_decision(decision: Decision) -> MatchMode {
        match decision {
            Decision::Allow => MatchMode::Grant,
            Decision::Ask | Decision::Deny => MatchMode::Restrict,
        }
    }
}

/// Why a pattern was refused. Messages quote the pattern and say what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// No pattern after the kind.
    #[error("a {kind} pattern must not be empty")]
    Empty {
        /// `tool`, `path`, `host`, `command` or `recipient`.
        kind: &'static str,
    },
    /// A resource pattern without a known `kind:` prefix.
    #[error(
        "resource pattern {pattern:?} must start with path:, host:, command: or recipient: (for \
         example path:.env, host:*.example.com, command:git push, recipient:*@company.com)"
    )]
    Kind {
        /// The pattern as written.
        pattern: String,
    },
    /// A glob that does not parse.
    #[error("glob {pattern:?} does not parse: {message}")]
    Glob {
        /// The glob as written.
        pattern: String,
        /// What globset said.
        message: String,
    },
    /// A path glob that can never match a canonical path.
    #[error(
        "path pattern {pattern:?} has a `.` or `..` component, an empty component or a NUL; \
         patterns match canonical paths relative to the workspace root, which have none"
    )]
    PathNotCanonical {
        /// The glob as written.
        pattern: String,
    },
    /// A host pattern that does not parse.
    #[error("host pattern {pattern:?}: {why}")]
    Host {
        /// The pattern as written.
        pattern: String,
        /// What is wrong.
        why: String,
    },
    /// A character that no tool name or glob over tool names has.
    #[error("tool pattern {pattern:?} contains {found:?}; tool names are like read_file, globs like fs_*")]
    ToolName {
        /// The pattern as written.
        pattern: String,
        /// The offending character.
        found: char,
    },
    /// A recipient pattern that does not parse.
    #[error("recipient pattern {pattern:?}: {why}")]
    Recipient {
        /// The pattern as written.
        pattern: String,
        /// What is wrong.
        why: String,
    },
    /// A command pattern that does not parse.
    #[error(transparent)]
    Command(#[from] CommandPatternError),
}

/// A pattern over one kind of resource, written `path:<glob>`, `host:<pattern>`,
/// `command:<prefix>` or `recipient:<address>` (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourcePattern {
    /// `path:<glob>`: canonical workspace paths.
    Path(PathPattern),
    /// `host:<pattern>`: hosts of URLs.
    Host(HostPattern),
    /// `command:<prefix>`: simple commands, with the mode they match in.
    Command(CommandPattern, MatchMode),
    /// `recipient:<address>`: recipients of messages.
    Recipient(RecipientPattern),
}

impl ResourcePattern {
    /// Parses a pattern that grants ([`MatchMode::Grant`]).
    ///
    /// # Errors
    /// See [`ResourcePattern::parse_with`].
    pub fn parse(text: &str) -> Result<ResourcePattern, PatternError> {
        ResourcePattern::parse_with(text, MatchMode::Grant)
    }

    /// Parses a pattern that matches in `mode`.
    ///
    /// # Errors
    /// [`PatternError::Kind`] without a known `kind:` prefix, else the kind's own errors
    /// ([`PathPattern::parse`], [`HostPattern::parse`], [`CommandPattern::parse`]).
    pub fn parse_with(text: &str, mode: MatchMode) -> Result<ResourcePattern, PatternError> {
        let text = text.trim();
        let Some((kind, rest)) = text.split_once(':') else {
            return Err(PatternError::Kind {
                pattern: text.to_string(),
            });
        };
        match kind {
            "path" => Ok(ResourcePattern::Path(PathPattern::parse(rest, mode)?)),
            "host" => Ok(ResourcePattern::Host(HostPattern::parse(rest)?)),
            "command" => Ok(ResourcePattern::Command(CommandPattern::parse(rest)?, mode)),
            "recipient" => Ok(ResourcePattern::Recipient(RecipientPattern::parse(
                rest, mode,
            )?)),
            _ => Err(PatternError::Kind {
                pattern: text.to_string(),
            }),
        }
    }

    /// Whether the resolved resource matches: a path pattern a path (whatever its access), a
    /// host pattern a URL, a command pattern a command (and, restricting, a command the call
    /// may run), a recipient pattern a recipient. Resources of another kind never match.
    pub fn matches(&self, resource: &ResolvedResource) -> bool {
        match (self, resource) {
            (ResourcePattern::Path(p), ResolvedResource::Path { path, .. }) => {
                p.matches(path.as_path())
            }
            (ResourcePattern::Host(h), ResolvedResource::Url(url)) => h.matches_url(url),
            (ResourcePattern::Command(c, mode), ResolvedResource::Command(line)) => {
                c.matches_line(line, *mode == MatchMode::Restrict)
            }
            // a command the call may run: restricted, never granted
            (
                ResourcePattern::Command(c, MatchMode::Restrict),
                ResolvedResource::PossibleCommand(line),
            ) => {
                let words = split_command(line);
                c.matches_read(&words, &program::read_possible(&words), true)
            }
            (ResourcePattern::Recipient(p), ResolvedResource::Recipient(address)) => {
                p.matches(address)
            }
            _ => false,
        }
    }

    /// The kind: `path`, `host`, `command` or `recipient`.
    pub fn kind(&self) -> &'static str {
        match self {
            ResourcePattern::Path(_) => "path",
            ResourcePattern::Host(_) => "host",
            ResourcePattern::Command(..) => "command",
            ResourcePattern::Recipient(_) => "recipient",
        }
    }
}

impl fmt::Display for ResourcePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourcePattern::Path(p) => write!(f, "path:{p}"),
            ResourcePattern::Host(h) => write!(f, "host:{h}"),
            ResourcePattern::Command(c, _) => write!(f, "command:{c}"),
            ResourcePattern::Recipient(r) => write!(f, "recipient:{r}"),
        }
    }
}

impl std::str::FromStr for ResourcePattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ResourcePattern::parse(s)
    }
}

#[cfg(test)]
mod tests;
