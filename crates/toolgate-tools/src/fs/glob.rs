//! `glob`: files whose path matches a glob pattern, found by a workspace-confined walk.
//!
//! The sequence: the pattern is refused when it is absolute or has a `..` component (it is
//! matched only against paths the walk finds inside the workspace, so it can never test
//! whether a path outside exists); the base directory is resolved inside the workspace; the
//! walk (see `src/walk.rs`) respects ignore files and never follows links; each file's path
//! relative to the base is matched; the [`MAX_RESULTS`] first matches in byte order are kept,
//! and each one's parent directory is resolved again through the workspace before it is shown,
//! so a directory swapped for a link during the walk cannot put an outside name in the result.

use super::lookup;
use crate::blocking;
use crate::text::rel_display;
use crate::topk::TopK;
use crate::walk::{Unreadable, Walk, WalkOptions};
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path};
use tokio_util::sync::CancellationToken;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    Access, ArgumentFault, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool, Workspace, WsPath,
};

/// At most this many paths are returned; `truncated` says when more matched.
pub const MAX_RESULTS: usize = 1000;

/// Arguments of `glob`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The glob matched against each file's path relative to `path`, with `/` separators:
    /// `*` and `?` stay within one path component, `**` spans directories, `{a,b}` is either,
    /// `[ab]` a character class. Examples: `**/*.rs`, `src/**/mod.rs`, `*.{toml,md}` (top
    /// level only). Relative, with no `..` component.
    #[schemars(length(min = 1, max = 1024))]
    pub pattern: String,
    /// The directory to search under, relative to the workspace root (default `.`, the root).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub path: Option<String>,
}

/// The result of `glob`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GlobOutput {
    /// The matching files (and symbolic links), relative to the workspace root with `/`
    /// separators, sorted in byte order; at most 1000.
    pub paths: Vec<String>,
    /// How many files matched, those left out included.
    pub total_matches: u64,
    /// Whether matches past the first 1000 were left out.
    pub truncated: bool,
    /// Parts of the tree that were skipped, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The `glob` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

const DESCRIPTION: &str = "Find files in the workspace whose path matches a glob pattern, \
for example `**/*.rs` or `src/**/test_*.py`. Use it to locate files by name or extension; to \
find text inside files use search_code; to see one directory use list_dir. The pattern is \
matched against paths relative to `path` (default the workspace root): `*` does not cross `/`, \
`**` does, so `*.rs` matches only the top level and `**/*.rs` every level. Files ignored by \
.gitignore or .ignore, hidden files and `.git` are skipped, except that hidden ones are \
included when the pattern names one (a component starting with `.`, such as `.github/**`). \
Directories are not listed, symbolic links are listed but not followed. Returns {paths, \
total_matches, truncated, warnings}: paths relative to the workspace root, sorted, at most \
1000. Absolute patterns and patterns with `..` are refused with \
unsafe_input/path_outside_workspace. A result past the result size limit keeps its first paths \
and adds a `truncation` member naming the read_result handle and offset that read the rest.";

impl TypedTool for Glob {
    type Args = GlobArgs;
    type Output = GlobOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("glob")
            .title("Find files by pattern")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("fs")
            .example("Every Rust file", serde_json::json!({"pattern": "**/*.rs"}))
            .example(
                "Markdown files under docs",
                serde_json::json!({"pattern": "**/*.md", "path": "docs"}),
            )
    }

    fn guard(&self, args: &GlobArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        check_pattern(&args.pattern)?;
        let path = args.path.as_deref().unwrap_or(".");
        crate::fs::protected::guard_read(ctx, path)?;
        Ok(vec![Resource::read(path)])
    }

    /// Only when a policy asks: a pattern that does not compile, or a base that is missing
    /// or not a directory, fails first.
    fn preview(&self, args: &GlobArgs, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        compile(&args.pattern)?;
        let base =
            crate::fs::protected::resolve_for_read(ctx, args.path.as_deref().unwrap_or("."))?;
        lookup::expect(ctx, &base, lookup::Kind::Dir).map(|()| None)
    }

    async fn call(&self, args: GlobArgs, ctx: ToolContext) -> Result<GlobOutput, ToolError> {
        let matcher = compile(&args.pattern)?;
        let base =
            crate::fs::protected::resolve_for_read(&ctx, args.path.as_deref().unwrap_or("."))?;
        ctx.check_judged(&base, toolgate_core::Access::Read)?;
        let ws = ctx.require_workspace()?.clone();
        let hidden = names_hidden(&args.pattern);
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        blocking::run(move || find(&ws, &base, &matcher, hidden, &cancel, &ctx)).await
    }
}

/// Refuses a pattern that could name a path outside the workspace.
///
/// # Errors
/// `unsafe_input` / `path_outside_workspace` for an absolute pattern or one with a `..`
/// component.
pub fn check_pattern(pattern: &str) -> Result<(), ToolError> {
    let p = Path::new(pattern);
    let escapes = pattern.starts_with('/')
        || p.is_absolute()
        || pattern.split(['/', '\\']).any(|c| c == "..")
        || p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        });
    if escapes {
        return Err(ToolError::unsafe_input(
            "path_outside_workspace",
            "glob patterns are matched inside the workspace only: send a relative pattern without \
             '..' components, and set `path` to search under a subdirectory",
        ));
    }
    Ok(())
}

/// Whether a pattern names a hidden file or directory (a component starting with `.`).
pub(crate) fn names_hidden(pattern: &str) -> bool {
    pattern
        .trim_start_matches('!')
        .split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
}

/// Compiles the pattern after [`check_pattern`].
fn compile(pattern: &str) -> Result<GlobMatcher, ToolError> {
    check_pattern(pattern)?;
    let mut pattern = pattern;
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest;
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            ToolError::invalid_arguments(
                format!("the glob pattern is not valid: {e}; fix the pattern and call again"),
                vec![ArgumentFault {
                    pointer: "/pattern".into(),
                    message: e.to_string(),
                }],
            )
            .with_reason("invalid_glob")
        })
}

/// One walker thread's matches.
struct Found {
    first: TopK<String>,
    total: u64,
    unreadable: Unreadable,
}

fn find(
    ws: &Workspace,
    base: &WsPath,
    matcher: &GlobMatcher,
    hidden: bool,
    cancel: &CancellationToken,
    ctx: &ToolContext,
) -> Result<GlobOutput, ToolError> {
    let shown = base.display();
    let meta = ws
        .dir()
        .metadata(base.as_path())
        .map_err(|e| io_error(&shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown:?} is not a directory; set `path` to a directory to search under"
        ))
        .with_reason("not_a_directory"));
    }
    let walk = Walk::new(
        ws,
        base,
        WalkOptions {
            hidden,
            overrides: None,
        },
    );
    let parts = walk.run(
        || Found {
            first: TopK::new(MAX_RESULTS),
            total: 0,
            unreadable: Unreadable::default(),
        },
        |found, entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    found.unreadable.walk_error(&walk, &e);
                    return WalkState::Continue;
                }
            };
            if entry.depth() == 0 || entry.file_type().is_none_or(|t| t.is_dir()) {
                return WalkState::Continue;
            }
            let Ok(under_base) = entry.path().strip_prefix(&walk.base_abs) else {
                return WalkState::Continue;
            };
            if matcher.is_match(under_base) {
                // a policy rule on a directory holds for names found by walking into it
                if let Some(rel) = walk
                    .relative(entry.path())
                    .filter(|rel| ctx.permits(rel, Access::Read))
                {
                    found.total += 1;
                    found.first.push(rel_display(rel).into_owned());
                }
            }
            WalkState::Continue
        },
    );
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            toolgate_core::ErrorKind::Cancelled,
            "the call was cancelled before it finished",
        ));
    }
    let mut first = TopK::new(MAX_RESULTS);
    let (mut total, mut unreadable) = (0u64, Unreadable::default());
    for part in parts {
        first.merge(part.first);
        total += part.total;
        unreadable.merge(part.unreadable);
    }
    let mut warnings = walk.warnings.take();
    warnings.extend(unreadable.warning());
    let mut checked = Checked::default();
    let paths: Vec<String> = first
        .into_sorted_vec()
        .into_iter()
        .filter(|p| checked.parent_inside(ws, p))
        .collect();
    let dropped = (MAX_RESULTS.min(total as usize)).saturating_sub(paths.len());
    if dropped > 0 {
        warnings.push(format!(
            "{dropped} matches were dropped because their directory changed during the walk"
        ));
    }
    Ok(GlobOutput {
        truncated: total > paths.len() as u64,
        paths,
        total_matches: total,
        warnings,
    })
}

/// Checks that a found path's parent directory still resolves to itself inside the
/// workspace (no component was swapped for a link), caching the last answer.
#[derive(Default)]
struct Checked {
    last: Option<(String, bool)>,
}

impl Checked {
    fn parent_inside(&mut self, ws: &Workspace, path: &str) -> bool {
        let parent = match path.rfind('/') {
            Some(i) => &path[..i],
            None => return true,
        };
        if let Some((p, ok)) = &self.last {
            if p == parent {
                return *ok;
            }
        }
        let ok = ws
            .resolve(parent)
            .is_ok_and(|r| r.as_path() == Path::new(parent));
        self.last = Some((parent.to_string(), ok));
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_patterns_are_refused() {
        for bad in [
            "/etc/passwd",
            "../outside/secret.txt",
            "a/../../b",
            "..",
            "**/..",
            "..\\x",
        ] {
            let e = check_pattern(bad).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("path_outside_workspace"), "{bad}");
        }
        for ok in ["**/*.rs", "a..b", "...", "src/**", ".github/*.yml"] {
            assert!(check_pattern(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn hidden_components_are_noticed() {
        assert!(names_hidden(".github/**"));
        assert!(names_hidden("**/.env"));
        assert!(!names_hidden("**/*.rs"));
        assert!(!names_hidden("./src/*.rs"));
    }

    #[test]
    fn bad_globs_point_at_pattern() {
        let e = compile("src/[").unwrap_err();
        assert_eq!(e.faults[0].pointer, "/pattern");
    }
}
