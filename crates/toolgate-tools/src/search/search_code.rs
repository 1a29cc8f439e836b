//! `search_code`: lines matching a regular expression (or a literal) across the workspace.
//!
//! The sequence: the pattern is compiled with `grep-regex` (an invalid one is
//! `invalid_arguments` at `/pattern`), the `glob` filter with `ignore`'s override globs (as
//! `rg -g`), the base path is resolved inside the workspace; the workspace-confined parallel
//! walk (see `src/walk.rs`) hands each regular file to one of its threads, which opens it
//! through the workspace's directory handle (cap-std; a file swapped for a link that leads out
//! cannot be opened) and searches it with that thread's own `grep-searcher` `Searcher`,
//! quitting at the first NUL byte (binary files are skipped); each thread keeps its best
//! `max_matches` matches by `(path, line)` and counts the rest; the threads' matches are
//! merged and sorted. A cancelled call (or one whose deadline passed) stops the walk.
//!
//! One match is reported per matching line, with the 1-based byte column of the first match
//! on it, as `rg -n --column` does.

use super::collect::{FileSink, Found};
use crate::blocking;
use crate::fs::glob::names_hidden;
use crate::fs::lookup;
use crate::topk::TopK;
use crate::walk::{host_path, Unreadable, Walk, WalkOptions};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tokio_util::sync::CancellationToken;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    Access, ArgumentFault, Effects, ErrorKind, Resource, Risk, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool, Workspace, WsPath,
};

/// Matches returned when the call does not say.
pub const DEFAULT_MAX_MATCHES: u32 = 200;
/// The most matches one call may ask for.
pub const MAX_MATCHES: u32 = 5000;
/// The most context lines one call may ask for, before and after each match.
pub const MAX_CONTEXT: u32 = 10;
/// A line longer than this many bytes stops the search of its file (64 MiB), bounding the
/// searcher's buffer.
const HEAP_LIMIT: usize = 64 << 20;
/// The most a compiled pattern may take (10 MiB, as ripgrep's `--regex-size-limit`): a
/// pattern past it (`\w{5000}`, `(\w{1000}){1000}`) is refused as soon as its compilation
/// passes it, instead of after seconds of building 100 MiB.
const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// Arguments of `search_code`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeArgs {
    /// What to search for: a regular expression in Rust regex syntax (as ripgrep takes it,
    /// for example `fn\s+main` or `TODO|FIXME`), or exact text when `literal` is true. It is
    /// matched within single lines.
    #[schemars(length(min = 1, max = 4096))]
    pub pattern: String,
    /// The file or directory to search, relative to the workspace root (default `.`, the
    /// whole workspace).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub path: Option<String>,
    /// Only search files matching this glob, as ripgrep's `-g`: `*.rs` matches file names at
    /// any depth, a glob with `/` (such as `src/**/*.ts`) is relative to `path`, a leading `!`
    /// excludes (`!*_test.go`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 1024))]
    pub glob: Option<String>,
    /// Search for `pattern` as exact text instead of a regular expression (default false).
    #[serde(default)]
    pub literal: bool,
    /// Match upper and lower case exactly (default true); false ignores case.
    #[serde(default = "yes")]
    pub case_sensitive: bool,
    /// Lines of context to return before and after each match (default 0, at most 10).
    #[serde(default)]
    #[schemars(range(max = 10))]
    pub context: u32,
    /// The most matches to return (default 200, at most 5000); all matches are counted in
    /// `total_matches` either way.
    #[serde(default = "default_max_matches")]
    #[schemars(range(min = 1, max = 5000))]
    pub max_matches: u32,
}

fn yes() -> bool {
    true
}

fn default_max_matches() -> u32 {
    DEFAULT_MAX_MATCHES
}

/// One line of context around a match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextLine {
    /// The 1-based line number.
    pub line: u64,
    /// The line without its line ending, cut after 500 characters.
    pub text: String,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeMatch {
    /// The file, relative to the workspace root with `/` separators.
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The 1-based byte column where the first match on the line starts.
    pub column: u64,
    /// The line without its line ending; lines over 500 characters are cut with
    /// `[... line cut: N more bytes]`, and shown from a little before the match (after
    /// `[... N bytes before ...]`) when it lies past their start.
    pub text: String,
    /// Context lines before the match (only when `context` was set). A line between two
    /// close matches is given once, as after-context of the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<ContextLine>,
    /// Context lines after the match (only when `context` was set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<ContextLine>,
}

/// The result of `search_code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchCodeOutput {
    /// The first `max_matches` matching lines, sorted by path and line.
    pub matches: Vec<CodeMatch>,
    /// How many lines matched in all, those left out included.
    pub total_matches: u64,
    /// Whether matching lines past `max_matches` were left out.
    pub truncated: bool,
    /// How many files were searched.
    pub files_searched: u64,
    /// How many files had at least one matching line.
    pub files_with_matches: u64,
    /// How many files were skipped as binary (a NUL byte); matches found before the NUL
    /// byte are kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub binary_files_skipped: u64,
    /// Parts of the tree that were skipped, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The `search_code` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchCode;

const DESCRIPTION: &str = "Search file contents in the workspace for a regular expression \
(Rust regex syntax, like ripgrep) or, with literal true, for exact text. Use it to find where \
something is defined or used; to find files by name use glob; to read a file use read_file. \
Narrow the search with `path` (a file or directory) and `glob` (a file filter such as `*.rs`, \
or `!*.min.js` to exclude). Files ignored by .gitignore or .ignore, hidden files (unless `glob` \
names one) and binary files are skipped; symbolic links are not followed. Returns {matches, \
total_matches, truncated, files_searched, files_with_matches}: one match per matching line as \
{path, line, column, text} (line and byte column 1-based, text cut to 500 characters around \
the match), with `before`/`after` context lines when `context` is set, sorted by path and \
line; at most `max_matches` (default 200), truncated true when more lines matched. A result \
past the result size limit keeps its first matches and adds a `truncation` member naming the \
read_result handle and offset that read the rest. An invalid regular expression fails with \
invalid_arguments at /pattern: fix it, or set literal true.";

impl TypedTool for SearchCode {
    type Args = SearchCodeArgs;
    type Output = SearchCodeOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("search_code")
            .title("Search code")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("search")
            .example(
                "Where a function is defined, in Rust files",
                serde_json::json!({"pattern": "fn\\s+parse_args", "glob": "*.rs"}),
            )
            .example(
                "Exact text, any case, with 2 lines of context",
                serde_json::json!({"pattern": "todo!(", "literal": true, "case_sensitive": false, "context": 2}),
            )
    }

    fn guard(&self, args: &SearchCodeArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let path = args.path.as_deref().unwrap_or(".");
        crate::fs::protected::guard_read(ctx, path)?;
        Ok(vec![Resource::read(path)])
    }

    /// Only when a policy asks: a path that does not exist fails first. (The pattern is
    /// compiled by the handler, off the runtime and under the timeout: some take seconds.)
    fn preview(
        &self,
        args: &SearchCodeArgs,
        ctx: &ToolContext,
    ) -> Result<Option<String>, ToolError> {
        let base =
            crate::fs::protected::resolve_for_read(ctx, args.path.as_deref().unwrap_or("."))?;
        lookup::expect(ctx, &base, lookup::Kind::Any).map(|()| None)
    }

    async fn call(
        &self,
        args: SearchCodeArgs,
        ctx: ToolContext,
    ) -> Result<SearchCodeOutput, ToolError> {
        let base =
            crate::fs::protected::resolve_for_read(&ctx, args.path.as_deref().unwrap_or("."))?;
        ctx.check_judged(&base, toolgate_core::Access::Read)?;
        let ws = ctx.require_workspace()?.clone();
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        // compiling a pattern can take seconds (`\w{5000}`): off the runtime, under the timeout
        blocking::run(move || {
            let matcher = compile(&args)?;
            search(&ws, &base, &args, &matcher, &cancel, &ctx)
        })
        .await
    }
}

/// The matcher for the arguments.
///
/// # Errors
/// `invalid_arguments` (reason `invalid_regex`) at `/pattern`.
fn compile(args: &SearchCodeArgs) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(!args.case_sensitive)
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(args.literal)
        .line_terminator(Some(b'\n'))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build(&args.pattern)
        .map_err(|e| {
            let why = regex_error(args, &e);
            let hint = if args.literal {
                ""
            } else {
                "; to search for the text as it is, set literal true"
            };
            ToolError::invalid_arguments(
                format!("the pattern is not a valid regular expression: {why}{hint}"),
                vec![ArgumentFault {
                    pointer: "/pattern".into(),
                    message: why,
                }],
            )
            .with_reason("invalid_regex")
        })
}

/// What is wrong with the pattern, about the pattern the model sent: grep-regex reports
/// errors on the pattern it builds around it (`(?:...)`), so the pattern is parsed again on
/// its own, with the same flags, for the error's kind and position; an error that is not a
/// parse error (a size limit) is grep-regex's own, on one line.
fn regex_error(args: &SearchCodeArgs, grep: &grep_regex::Error) -> String {
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(!args.case_sensitive)
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .build()
        .parse(&args.pattern);
    let at = |kind: &dyn std::fmt::Display, span: &regex_syntax::ast::Span| {
        let excerpt: String = args.pattern.chars().take(80).collect();
        let more = if args.pattern.chars().count() > 80 {
            "..."
        } else {
            ""
        };
        format!(
            "{kind} (at character {} of {excerpt:?}{more})",
            args.pattern[..span.start.offset.min(args.pattern.len())]
                .chars()
                .count()
                + 1
        )
    };
    match parsed {
        Err(regex_syntax::Error::Parse(e)) => at(e.kind(), e.span()),
        Err(regex_syntax::Error::Translate(e)) => at(e.kind(), e.span()),
        _ => grep
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The `glob` filter, relative to the base directory.
///
/// # Errors
/// `invalid_arguments` (reason `invalid_glob`) at `/glob`.
fn overrides(base_abs: &Path, glob: &str) -> Result<Override, ToolError> {
    let bad = |message: String| {
        ToolError::invalid_arguments(
            format!("the glob filter is not valid: {message}; fix it and call again"),
            vec![ArgumentFault {
                pointer: "/glob".into(),
                message,
            }],
        )
        .with_reason("invalid_glob")
    };
    let mut builder = OverrideBuilder::new(base_abs);
    builder.add(glob).map_err(|e| bad(e.to_string()))?;
    builder.build().map_err(|e| bad(e.to_string()))
}

/// One walker thread: its searcher (buffers reused across files) and what it found.
struct Worker {
    searcher: Searcher,
    found: Found,
    /// Files skipped for having several hard links.
    hard_links: u64,
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .before_context(context)
        .after_context(context)
        .memory_map(MmapChoice::never())
        .heap_limit(Some(HEAP_LIMIT))
        .build()
}

fn search(
    ws: &Workspace,
    base: &WsPath,
    args: &SearchCodeArgs,
    matcher: &RegexMatcher,
    cancel: &CancellationToken,
    ctx: &ToolContext,
) -> Result<SearchCodeOutput, ToolError> {
    let shown = base.display();
    ws.dir()
        .metadata(base.as_path())
        .map_err(|e| io_error(&shown, &e))?;
    let base_abs = host_path(ws, base);
    let overrides = args
        .glob
        .as_deref()
        .map(|g| overrides(&base_abs, g))
        .transpose()?;
    let hidden = args.glob.as_deref().is_some_and(names_hidden);
    let walk = Walk::new(ws, base, WalkOptions { hidden, overrides });
    let max = args.max_matches.clamp(1, MAX_MATCHES) as usize;
    let context = args.context.min(MAX_CONTEXT) as usize;
    let parts = walk.run(
        || Worker {
            searcher: searcher(context),
            found: Found::new(max),
            hard_links: 0,
        },
        |worker, entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    worker.found.unreadable.walk_error(&walk, &e);
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = walk.relative(entry.path()) else {
                return WalkState::Continue;
            };
            // a policy rule on a directory holds for files found by walking into it
            if !ctx.permits(rel, Access::Read) {
                return WalkState::Continue;
            }
            // following no link: a directory swapped for one during the walk is not read
            // through (the walk goes by name)
            let file = match crate::fs::open_exact_rel(ws, rel, false) {
                Ok(f) => f,
                Err(e) => {
                    worker.found.unreadable.file(rel, &e);
                    return WalkState::Continue;
                }
            };
            // a hard link may be a name of a file outside the workspace: not searched, as
            // read_file does not show it (unless the operator lets it be read there)
            match file.metadata() {
                Ok(m)
                    if std::os::unix::fs::MetadataExt::nlink(&m) > 1
                        && !ws.reads_hard_link(rel) =>
                {
                    worker.hard_links += 1;
                    return WalkState::Continue;
                }
                Ok(_) => {}
                Err(e) => {
                    worker.found.unreadable.file(rel, &e);
                    return WalkState::Continue;
                }
            }
            worker.found.files_searched += 1;
            let shown = rel.to_string_lossy();
            let mut sink = FileSink::new(&mut worker.found, matcher, cancel, &shown);
            // the reader checks the token between reads, so a large file that never matches
            // still stops at the deadline
            let reader = CancellableRead {
                inner: file,
                cancel,
            };
            let result = worker.searcher.search_reader(matcher, reader, &mut sink);
            sink.flush();
            if let Err(e) = result {
                worker.found.unreadable.file(rel, &e);
            }
            WalkState::Continue
        },
    );
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorKind::Cancelled,
            "the call was cancelled before it finished",
        ));
    }
    let mut best = TopK::new(max);
    let mut out = SearchCodeOutput {
        matches: Vec::new(),
        total_matches: 0,
        truncated: false,
        files_searched: 0,
        files_with_matches: 0,
        binary_files_skipped: 0,
        warnings: walk.warnings.take(),
    };
    let mut unreadable = Unreadable::default();
    let mut hard_links = 0;
    for Worker {
        found,
        hard_links: linked,
        ..
    } in parts
    {
        hard_links += linked;
        best.merge(found.best);
        out.total_matches += found.total_matches;
        out.files_searched += found.files_searched;
        out.files_with_matches += found.files_with_matches;
        out.binary_files_skipped += found.binary_files;
        unreadable.merge(found.unreadable);
    }
    out.warnings.extend(unreadable.warning());
    if hard_links > 0 {
        out.warnings.push(format!(
            "{hard_links} files with several hard links were skipped: their other names may be \
             outside the workspace (the operator can allow them under given paths: `[files] \
             read_hard_links`)"
        ));
    }
    out.matches = best
        .into_sorted_vec()
        .into_iter()
        .map(|h| h.into_match())
        .collect();
    out.truncated = out.total_matches > out.matches.len() as u64;
    Ok(out)
}

/// A reader that fails once `cancel` is cancelled, checked before every read (each read is
/// one buffer of the searcher, 64 KiB).
struct CancellableRead<'a, R> {
    inner: R,
    cancel: &'a CancellationToken,
}

impl<R: std::io::Read> std::io::Read for CancellableRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(std::io::Error::other("the call was cancelled"));
        }
        self.inner.read(buf)
    }
}
