//! [`Problem`]: one thing wrong with a configuration, with its location in the file.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};

/// One problem, located at `file:line:column` (1-based; the column counts characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The configuration file.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
    /// The key it is about, as a path (`rules[2].resource`), or empty for the file.
    pub key: String,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Renders a key path as `rules[2].resource`.
pub fn key_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Finds spans in the source of a configuration, and turns them into problems.
pub struct Locator<'a> {
    file: &'a Path,
    source: &'a str,
    root: Option<toml::Spanned<DeTable<'a>>>,
}

impl<'a> Locator<'a> {
    /// A locator over `source`, read from `file`.
    pub fn new(file: &'a Path, source: &'a str) -> Locator<'a> {
        Locator {
            file,
            source,
            root: DeTable::parse(source).ok(),
        }
    }

    /// The parsed document, when it parses.
    pub fn root(&self) -> Option<&DeTable<'a>> {
        self.root.as_ref().map(|r| r.get_ref())
    }

    /// The span of the value at `path` (or of the deepest part of it that exists).
    pub fn span(&self, path: &[Seg]) -> Range<usize> {
        let Some(root) = &self.root else {
            return 0..0;
        };
        let mut span = 0..0;
        let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
        let mut value: Option<&DeValue<'_>> = None;
        for seg in path {
            let next = match (seg, table, value) {
                (Seg::Key(k), Some(t), _) => {
                    t.iter().find(|(key, _)| key.get_ref() == k).map(|(_, v)| v)
                }
                (Seg::Index(i), _, Some(DeValue::Array(a))) => a.get(*i),
                _ => None,
            };
            let Some(v) = next else { break };
            span = v.span();
            value = Some(v.get_ref());
            table = match v.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            };
        }
        span
    }

    /// `path` extended down through the tables and arrays of its value, as far as a key or
    /// element whose value holds byte `offset` (the location of an error inside the value).
    pub fn deepest(&self, path: &[Seg], offset: usize) -> Vec<Seg> {
        let mut out = path.to_vec();
        let Some(root) = &self.root else {
            return out;
        };
        let mut value: Option<&DeValue<'_>> = None;
        let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
        for seg in path {
            let next = match (seg, table, value) {
                (Seg::Key(k), Some(t), _) => {
                    t.iter().find(|(key, _)| key.get_ref() == k).map(|(_, v)| v)
                }
                (Seg::Index(i), _, Some(DeValue::Array(a))) => a.get(*i),
                _ => None,
            };
            let Some(v) = next else { return out };
            value = Some(v.get_ref());
            table = match v.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            };
        }
        loop {
            let holds =
                |span: Range<usize>| span.start <= offset && offset < span.end.max(span.start + 1);
            let next = match value {
                Some(DeValue::Table(t)) => t
                    .iter()
                    .find(|(k, v)| holds(v.span()) || holds(k.span()))
                    .map(|(k, v)| (Seg::Key(k.get_ref().to_string()), v)),
                Some(DeValue::Array(a)) => a
                    .iter()
                    .enumerate()
                    .find(|(_, v)| holds(v.span()))
                    .map(|(i, v)| (Seg::Index(i), v)),
                _ => None,
            };
            let Some((seg, v)) = next else { return out };
            out.push(seg);
            value = Some(v.get_ref());
        }
    }

    /// `key` with an upstream's index named (`upstreams[1].timeout_ms` as
    /// `upstreams["web"].timeout_ms`), when the entry at that index has a `name` of text;
    /// `None` for any other key.
    pub fn named(&self, key: &str) -> Option<String> {
        let rest = key.strip_prefix("upstreams[")?;
        let (index, rest) = rest.split_once(']')?;
        let index: usize = index.parse().ok()?;
        let (_, upstreams) = self
            .root()?
            .iter()
            .find(|(k, _)| k.get_ref() == "upstreams")?;
        let DeValue::Array(entries) = upstreams.get_ref() else {
            return None;
        };
        let name_of = |entry: &DeValue<'_>| match entry {
            DeValue::Table(t) => {
                t.iter()
                    .find(|(k, _)| k.get_ref() == "name")
                    .and_then(|(_, v)| match v.get_ref() {
                        DeValue::String(name) if !name.is_empty() => Some(name.to_string()),
                        _ => None,
                    })
            }
            _ => None,
        };
        let name = name_of(entries.get(index)?.get_ref())?;
        // two entries of one name (itself a problem) are told apart by their places
        let same = entries
            .iter()
            .filter(|e| name_of(e.get_ref()).as_ref() == Some(&name))
            .count();
        (same == 1).then(|| format!("upstreams[{name:?}]{rest}"))
    }

    /// A problem at the value of `path`.
    pub fn at(&self, path: &[Seg], message: impl Into<String>) -> Problem {
        self.at_span(self.span(path), key_path(path), message)
    }

    /// A problem at a byte span.
    pub fn at_span(&self, span: Range<usize>, key: String, message: impl Into<String>) -> Problem {
        let (line, column) = line_column(self.source, span.start);
        Problem {
            file: self.file.to_path_buf(),
            line,
            column,
            key,
            message: message.into(),
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `source`.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}
