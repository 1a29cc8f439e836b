//! [`ToolPattern`]: a glob over tool names.

use super::PatternError;
use std::fmt;

/// A glob over tool names: an exact name (`read_file`), `*` for every tool, or a glob such as
/// `fs_*`, `*_file` or `read_{file,result}` (globset syntax; names have no `/`, so `*` and `**`
/// are the same). Case-sensitive, as tool names are.
#[derive(Debug, Clone)]
pub struct ToolPattern {
    text: String,
    kind: ToolKind,
}

#[derive(Debug, Clone)]
enum ToolKind {
    Any,
    Exact,
    /// `fs_*`: the text before the `*`.
    Prefix(usize),
    /// `*_file`: the text after the `*`.
    Suffix,
    Glob(globset::GlobMatcher),
}

impl ToolPattern {
    /// Parses a tool pattern.
    ///
    /// # Errors
    /// [`PatternError::Empty`] for a blank pattern, [`PatternError::Glob`] for a glob that
    /// does not parse (`fs_[`), [`PatternError::ToolName`] for characters no tool name or
    /// glob has (white space, `/`).
    pub fn parse(text: &str) -> Result<ToolPattern, PatternError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(PatternError::Empty { kind: "tool" });
        }
        if let Some(c) = text
            .chars()
            .find(|c| c.is_whitespace() || *c == '/' || c.is_control())
        {
            return Err(PatternError::ToolName {
                pattern: text.to_string(),
                found: c,
            });
        }
        let kind = if text == "*" || text == "**" {
            ToolKind::Any
        } else if !text.contains(['*', '?', '[', '{', '\\']) {
            ToolKind::Exact
        } else if let Some(kind) = affix(text) {
            kind
        } else {
            let glob = globset::GlobBuilder::new(text)
                .literal_separator(false)
                .build()
                .map_err(|e| PatternError::Glob {
                    pattern: text.to_string(),
                    message: e.kind().to_string(),
                })?;
            ToolKind::Glob(glob.compile_matcher())
        };
        Ok(ToolPattern {
            text: text.to_string(),
            kind,
        })
    }

    /// Whether the pattern matches the tool named `name`.
    pub fn matches(&self, name: &str) -> bool {
        match &self.kind {
            ToolKind::Any => true,
            ToolKind::Exact => self.text == name,
            ToolKind::Prefix(n) => name.starts_with(&self.text[..*n]),
            ToolKind::Suffix => name.ends_with(&self.text[1..]),
            ToolKind::Glob(g) => g.is_match(name),
        }
    }

    /// Whether the pattern is a plain name (no wildcard), which then must name a tool.
    pub fn is_exact(&self) -> bool {
        matches!(self.kind, ToolKind::Exact)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// `prefix*` or `*suffix` with no other metacharacter (names have no `/`, so `*` is any
/// text): matched as a string prefix or suffix, as the glob would.
fn affix(text: &str) -> Option<ToolKind> {
    let meta = |s: &str| s.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if let Some(prefix) = text.strip_suffix('*') {
        if !prefix.is_empty() && !meta(prefix) {
            return Some(ToolKind::Prefix(prefix.len()));
        }
    }
    if let Some(suffix) = text.strip_prefix('*') {
        if !suffix.is_empty() && !meta(suffix) {
            return Some(ToolKind::Suffix);
        }
    }
    None
}

impl PartialEq for ToolPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for ToolPattern {}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for ToolPattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolPattern::parse(s)
    }
}
