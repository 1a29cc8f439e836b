//! The per-thread side of `search_code`: a [`Sink`] that keeps the best matches by
//! `(path, line)` and counts the rest.
//!
//! Memory stays bounded however many lines match: each thread keeps at most `max_matches`
//! matches in a [`TopK`]; once it is full, a match is built (column, text, context) only when
//! it sorts before the worst one kept, and a file whose path sorts after the worst kept match
//! is only counted.

use super::search_code::{CodeMatch, ContextLine};
use crate::text::{cut, excerpt, trim_eol};
use crate::topk::TopK;
use crate::walk::Unreadable;
use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use std::cmp::Ordering;
use std::io;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Lines shown in a match or context line are cut after this many characters.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// A match kept by a thread, ordered by `(path, line)`.
#[derive(Debug)]
pub(crate) struct Hit {
    pub path: Arc<str>,
    pub line: u64,
    pub column: u64,
    pub text: String,
    pub before: Vec<ContextLine>,
    pub after: Vec<ContextLine>,
}

impl Hit {
    fn cmp_key(&self, path: &str, line: u64) -> Ordering {
        (&*self.path, self.line).cmp(&(path, line))
    }

    pub(crate) fn into_match(self) -> CodeMatch {
        CodeMatch {
            path: self.path.to_string(),
            line: self.line,
            column: self.column,
            text: self.text,
            before: self.before,
            after: self.after,
        }
    }
}

impl PartialEq for Hit {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.line == other.line
    }
}
impl Eq for Hit {}
impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Hit {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_key(&other.path, other.line)
    }
}

/// What one walker thread found.
#[derive(Debug)]
pub(crate) struct Found {
    pub best: TopK<Hit>,
    pub total_matches: u64,
    pub files_searched: u64,
    pub files_with_matches: u64,
    pub binary_files: u64,
    pub unreadable: Unreadable,
}

impl Found {
    pub(crate) fn new(max_matches: usize) -> Self {
        Found {
            best: TopK::new(max_matches),
            total_matches: 0,
            files_searched: 0,
            files_with_matches: 0,
            binary_files: 0,
            unreadable: Unreadable::default(),
        }
    }

    /// Whether no match of file `path` can be kept any more.
    pub(crate) fn file_is_past_best(&self, path: &str) -> bool {
        self.best.worst_if_full().is_some_and(|w| &*w.path < path)
    }
}

/// The sink for one file.
pub(crate) struct FileSink<'a> {
    pub found: &'a mut Found,
    pub matcher: &'a RegexMatcher,
    pub cancel: &'a CancellationToken,
    /// The file's path relative to the workspace root.
    pub rel: &'a str,
    /// The shared copy of `rel`, made at the first kept match.
    pub path: Option<Arc<str>>,
    /// No further match of this file can be kept: count only.
    pub count_only: bool,
    pub matched_any: bool,
    /// The last kept match, still receiving after-context lines.
    pub current: Option<Hit>,
    /// Before-context lines waiting for their match.
    pub before: Vec<ContextLine>,
}

impl<'a> FileSink<'a> {
    pub(crate) fn new(
        found: &'a mut Found,
        matcher: &'a RegexMatcher,
        cancel: &'a CancellationToken,
        rel: &'a str,
    ) -> Self {
        let count_only = found.file_is_past_best(rel);
        FileSink {
            found,
            matcher,
            cancel,
            rel,
            path: None,
            count_only,
            matched_any: false,
            current: None,
            before: Vec::new(),
        }
    }

    /// Hands the pending match to the thread's best matches.
    pub(crate) fn flush(&mut self) {
        if let Some(hit) = self.current.take() {
            self.found.best.push(hit);
        }
    }

    /// Whether a match at `line` of this file can still be kept.
    fn keeps(&self, line: u64) -> bool {
        self.found
            .best
            .worst_if_full()
            .is_none_or(|w| w.cmp_key(self.rel, line) == Ordering::Greater)
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.found.total_matches += 1;
        if !self.matched_any {
            self.matched_any = true;
            self.found.files_with_matches += 1;
        }
        if self.count_only {
            // a file with millions of matching lines still notices a cancelled call
            return Ok(
                !self.found.total_matches.is_multiple_of(4096) || !self.cancel.is_cancelled()
            );
        }
        if self.cancel.is_cancelled() {
            return Ok(false);
        }
        self.flush();
        let line = mat.line_number().unwrap_or(0);
        if !self.keeps(line) {
            // lines only grow within a file: nothing after this can be kept either
            self.count_only = true;
            self.before = Vec::new();
            return Ok(true);
        }
        let bytes = trim_eol(mat.lines().next().unwrap_or(mat.bytes()));
        let start = match self.matcher.find(bytes) {
            Ok(Some(m)) => m.start(),
            _ => 0,
        };
        let path = self.path.get_or_insert_with(|| Arc::from(self.rel)).clone();
        self.current = Some(Hit {
            path,
            line,
            column: start as u64 + 1,
            // a long line is shown around its match, so the match is in what is shown
            text: excerpt(bytes, start, MAX_LINE_CHARS),
            before: std::mem::take(&mut self.before),
            after: Vec::new(),
        });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.count_only {
            return Ok(true);
        }
        let line = ContextLine {
            line: ctx.line_number().unwrap_or(0),
            text: cut(trim_eol(ctx.bytes()), MAX_LINE_CHARS),
        };
        match ctx.kind() {
            SinkContextKind::Before => self.before.push(line),
            SinkContextKind::After => {
                if let Some(hit) = &mut self.current {
                    hit.after.push(line);
                }
            }
            SinkContextKind::Other => {}
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.found.binary_files += 1;
        Ok(false)
    }
}
