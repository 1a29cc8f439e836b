//! `edit_file`: replace an exact piece of text in a file, keeping its line endings and
//! byte-order mark, and return a unified diff.
//!
//! The sequence:
//!
//! 1. guard (before the policy and the approver see the call): `old_string` is not empty and
//!    differs from `new_string` (with `\r\n` read as `\n`: otherwise `invalid_arguments`);
//!    each string is at most 10 MiB; the path is resolved inside the workspace (a link inside
//!    it is edited at its resolved target, one that leads out is refused with
//!    `path_outside_workspace`), is not the root and is not protected
//!    ([`super::protected`]); and steps 3 and 4 run without writing, so a call that would
//!    fail (`not_found`, `no_match`, `ambiguous_match`, `not_utf8`, `hard_link`, a file over
//!    the limit) fails here, before anyone is asked to approve it, where the policy lets the
//!    call read and write the file outright (elsewhere what the file holds is not told
//!    before the policy decides: the guard runs first); the call declares the path as a
//!    write resource, and as a read resource too where the policy does not let it read the
//!    file outright (an edit reads the file: `deny path:.env access="read"` denies editing
//!    it);
//! 2. when the call is put to an approver, steps 3 to 5 run without writing and the diff is
//!    the question's preview ([`toolgate_core::Tool::preview`]), where the policy lets the
//!    call read the file outright (a failed preview goes back to the model);
//! 3. the handler checks everything again (the file may have changed while a person
//!    thought; a direct call is held to the checks too): [`super::atomic`] opens the parent
//!    by a no-follow walk from the workspace root (it must exist) and reads the file: a
//!    regular file with one link, at most [`MAX_FILE_BYTES`];
//! 4. the exact-match engine (`fs/replace.rs`) decodes it (UTF-8, or `tool_failed` /
//!    `not_utf8`), finds `old_string` exactly (`no_match`, or `ambiguous_match` with the
//!    count and lines when it is not unique and `replace_all` is not set) and builds the new
//!    content;
//! 5. the diff is taken (`fs/diff.rs`, on `similar`), and the new content replaces the file
//!    atomically, only if the file is still the one read (`file_changed` otherwise). A
//!    failed edit changes nothing.

use super::atomic::{Base, Existing, Parents, Target, WriteError};
use super::diff;
use super::replace::{self, MatchError, Text};
use super::write_file::{check_size, resolve_for_write};
use crate::blocking;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Access, ArgumentFault, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool, Workspace, WsPath,
};

/// Files larger than this, before or after the edit, are refused with `unsafe_input` /
/// `limit_exceeded` (10 MiB).
pub const MAX_FILE_BYTES: u64 = 10 << 20;

/// Arguments of `edit_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file to edit, relative to the workspace root (for example `src/lib.rs`); an
    /// absolute path inside the workspace is accepted too. It must exist.
    #[schemars(length(min = 1, max = 4096))]
    pub path: String,
    /// The exact text to replace, as in the file (whitespace and indentation included,
    /// without read_file's line-number prefixes). `\n` matches the file's line endings,
    /// CRLF or LF. It must occur exactly once unless `replace_all` is true.
    #[schemars(length(min = 1))]
    pub old_string: String,
    /// The text to put in its place (may be empty to delete). Its newlines are written in
    /// the file's own line-ending style.
    pub new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring exactly one (default
    /// false).
    #[serde(default)]
    pub replace_all: bool,
}

/// A file's line-ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    /// `\n`.
    Lf,
    /// `\r\n`.
    Crlf,
    /// `\r` alone (classic Mac OS: a file with `\r` and no `\n`).
    Cr,
}

/// The result of `edit_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditFileOutput {
    /// The file edited, relative to the workspace root with `/` separators (symbolic links
    /// inside the workspace resolved).
    pub path: String,
    /// How many occurrences were replaced (1 unless `replace_all`).
    pub replacements: u64,
    /// A unified diff of the change (`--- a/PATH`, `+++ b/PATH`, hunks with 3 lines of
    /// context), with line endings shown as `\n`; cut at 32 KiB.
    pub diff: String,
    /// Whether the diff was cut.
    pub diff_truncated: bool,
    /// The file's line-ending style, used for the new text.
    pub line_ending: LineEnding,
    /// Whether the file starts with a UTF-8 byte-order mark (kept).
    pub bom: bool,
}

/// The `edit_file` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile {
    allow_protected: bool,
}

impl EditFile {
    /// The tool with protected paths refused (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool allowed to edit protected paths ([`super::protected`]: `.git`, `.toolgate`,
    /// `toolgate.toml`, editor and agent settings, hook and shell start-up files), for a host
    /// whose operator configured that explicitly. Every other check stays.
    pub fn allow_protected_paths(mut self) -> Self {
        self.allow_protected = true;
        self
    }
}

const DESCRIPTION: &str = "Replace an exact piece of text in an existing text file of the \
workspace and get back a unified diff. Use it to change part of a file: read the file first, \
then send `old_string` copied exactly from it (whitespace and indentation included, without the \
line-number prefix read_file adds) and `new_string` to put in its place. `old_string` must occur \
exactly once; include a few surrounding lines to make it unique, or set `replace_all` to replace \
every occurrence. There is no fuzzy matching. `\\n` in your strings matches the file's line \
endings (CRLF files stay CRLF) and a byte-order mark is kept. To create a file or rewrite it \
whole, use write_file. Returns {path, replacements, diff, diff_truncated, line_ending, bom}. \
Fails, changing nothing, with tool_failed/no_match (read the file again), \
tool_failed/ambiguous_match (with the count and line numbers), tool_failed/not_utf8, \
tool_failed/not_found, tool_failed/file_changed, unsafe_input/protected_path, \
unsafe_input/path_outside_workspace, unsafe_input/hard_link or unsafe_input/limit_exceeded \
(files over 10 MiB).";

impl TypedTool for EditFile {
    type Args = EditFileArgs;
    type Output = EditFileOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("edit_file")
            .title("Edit file")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: false,
                concurrency_safe: false,
            })
            .risk(Risk::Write)
            .tag("fs")
            .tag("write")
            .verbatim_argument("old_string")
            .verbatim_argument("new_string")
            .example(
                "Rename a function at its definition",
                serde_json::json!({"path": "src/lib.rs", "old_string": "fn old_name(x: u32)", "new_string": "fn new_name(x: u32)"}),
            )
            .example(
                "Rename a variable everywhere in a file",
                serde_json::json!({"path": "src/main.rs", "old_string": "cnt", "new_string": "count", "replace_all": true}),
            )
    }

    fn guard(&self, args: &EditFileArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        check_strings(args)?;
        let path = resolve_for_write(ctx, &args.path, self.allow_protected)?;
        // what would fail the call fails now, before anyone is asked; nothing is written.
        // Only where the policy lets the call read and write the file outright: whether
        // `old_string` is in a file the policy keeps from the call (or asks about) is its
        // content, and the guard runs before the policy is asked
        let rel = path.as_path();
        let readable = ctx.permits(rel, Access::Read);
        if readable && ctx.permits(rel, Access::Write) {
            with_edit(ctx.require_workspace()?, &path, args, |_| Ok(()))?;
        }
        if readable {
            Ok(vec![Resource::write(&args.path)])
        } else {
            // an edit reads the file (it finds `old_string` and shows the lines around it):
            // what the policy says of reading it holds for the edit too
            Ok(vec![
                Resource::read(&args.path),
                Resource::write(&args.path),
            ])
        }
    }

    fn preview(&self, args: &EditFileArgs, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let path = resolve_for_write(ctx, &args.path, self.allow_protected)?;
        if !ctx.permits(path.as_path(), Access::Read) {
            // the question goes to a person, but a preview that fails goes back to the model
            return Ok(Some(format!(
                "{}: the change is not shown: the policy asks before this call may read the \
                 file",
                path.display()
            )));
        }
        with_edit(ctx.require_workspace()?, &path, args, |e| {
            Ok(Some(e.diff().text))
        })
    }

    async fn call(
        &self,
        args: EditFileArgs,
        ctx: ToolContext,
    ) -> Result<EditFileOutput, ToolError> {
        check_strings(&args)?;
        let path = resolve_for_write(&ctx, &args.path, self.allow_protected)?;
        ctx.check_judged(&path, toolgate_core::Access::Write)?;
        let ws = ctx.require_workspace()?.clone();
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        // the edit commits by one rename or not at all: every failure left the file as it
        // was, so the call's key is left free for the same edit sent again
        blocking::run(move || with_edit(&ws, &path, &args, |e| e.commit(&cancel)))
            .await
            .map_err(ToolError::no_effect)
    }
}

/// Refuses an empty `old_string`, one equal to `new_string`, and strings over the size
/// limit.
///
/// # Errors
/// `invalid_arguments` at `/old_string` or `/new_string`; `unsafe_input` /
/// `limit_exceeded`.
fn check_strings(args: &EditFileArgs) -> Result<(), ToolError> {
    if args.old_string.is_empty() {
        return Err(bad_argument(
            "/old_string",
            "old_string is empty; send the exact text to replace (to create a file or write a \
             whole file, use write_file)",
        ));
    }
    check_size("old_string", args.old_string.len())?;
    check_size("new_string", args.new_string.len())?;
    if replace::normalize(&args.old_string) == replace::normalize(&args.new_string) {
        return Err(bad_argument(
            "/new_string",
            "new_string is the same as old_string, so the edit would change nothing; send the \
             text that should replace it",
        ));
    }
    Ok(())
}

fn bad_argument(pointer: &str, message: &str) -> ToolError {
    ToolError::invalid_arguments(
        message,
        vec![ArgumentFault {
            pointer: pointer.into(),
            message: message.into(),
        }],
    )
}

/// An edit worked out against the file as it is, not written yet: what [`with_edit`] hands on.
struct Planned<'a> {
    shown: &'a str,
    target: &'a Target,
    seen: &'a Existing,
    /// The content read, which the commit checks the file still begins with.
    was: &'a [u8],
    text: &'a Text<'a>,
    ranges: &'a [Range<usize>],
    new_bytes: Vec<u8>,
    new_view: String,
}

impl Planned<'_> {
    /// The unified diff of the edit (step 5's diff).
    fn diff(&self) -> diff::Diff {
        diff::unified(self.shown, &self.text.view, &self.new_view, self.ranges)
    }

    /// Step 5: the diff, and the file replaced if it is still the one read.
    fn commit(self, cancel: &CancellationToken) -> Result<EditFileOutput, ToolError> {
        let diff = self.diff();
        self.target
            .replace(
                &self.new_bytes,
                Some(self.seen.permissions),
                Base::Unchanged(self.seen, self.was),
                cancel,
            )
            .map_err(|e| e.into_tool_error(self.shown))?;
        Ok(EditFileOutput {
            path: self.shown.to_string(),
            replacements: self.ranges.len() as u64,
            diff: diff.text,
            diff_truncated: diff.truncated,
            line_ending: match self.text.eol {
                replace::Eol::Lf => LineEnding::Lf,
                replace::Eol::Crlf => LineEnding::Crlf,
                replace::Eol::Cr => LineEnding::Cr,
            },
            bom: self.text.bom,
        })
    }
}

/// Steps 3 and 4 of the module docs: the file opened and read, decoded, `old_string` found
/// and the new content built; `f` gets the result. Nothing is written unless `f` commits.
///
/// # Errors
/// What the steps fail with (`not_found`, `not_utf8`, `no_match`, `ambiguous_match`,
/// `limit_exceeded`, `hard_link`, ...), and `f`'s.
fn with_edit<R>(
    ws: &Workspace,
    path: &WsPath,
    args: &EditFileArgs,
    f: impl FnOnce(Planned<'_>) -> Result<R, ToolError>,
) -> Result<R, ToolError> {
    let shown = path.display();
    let err = |e: WriteError| e.into_tool_error(&shown);
    let target = Target::open(ws.writable_dir()?, path, Parents::MustExist).map_err(err)?;
    let (bytes, seen) = target.read(MAX_FILE_BYTES).map_err(err)?;
    let text = Text::decode(&bytes).map_err(|e| {
        ToolError::failed(format!(
            "{shown:?} is not UTF-8 text (the first invalid byte is at offset {}); edit_file \
             edits UTF-8 text files only",
            e.offset
        ))
        .with_reason("not_utf8")
    })?;
    let old = text.normalize(&args.old_string);
    let ranges = replace::find(&text.view, &old, args.replace_all)
        .map_err(|e| match_error(&shown, e, shown_escaped(&args.old_string)))?;
    let (new_bytes, new_view) = text
        .apply(&ranges, &args.new_string, MAX_FILE_BYTES)
        .map_err(|len| {
            err(WriteError::TooLarge {
                len,
                max: MAX_FILE_BYTES,
            })
        })?;
    f(Planned {
        shown: &shown,
        target: &target,
        seen: &seen,
        was: &bytes,
        text: &text,
        ranges: &ranges,
        new_bytes,
        new_view,
    })
}

/// Whether `old_string` holds text that read_file writes for a character it shows escaped
/// (`\u{200b}` for an invisible or bidirectional character, `\x1b` for a control): copied
/// from read_file's text, it names the escape, not the character in the file.
fn shown_escaped(old_string: &str) -> bool {
    old_string.contains("\\u{") || old_string.contains("\\x")
}

fn match_error(shown: &str, e: MatchError, escapes: bool) -> ToolError {
    match e {
        MatchError::NoMatch => ToolError::failed(format!(
            "old_string was not found in {shown:?}; it must match the file exactly, whitespace \
             and indentation included. Read the file again with read_file and copy the text \
             to replace without the line-number prefixes{}",
            if escapes {
                ". read_file shows a control, invisible or bidirectional character as an \
                 escape (\\x1b, \\u{200b}): where old_string copies one, send the character \
                 itself instead (in JSON \"\\u200b\"), or replace the text around it"
            } else {
                ""
            }
        ))
        .with_reason("no_match"),
        MatchError::Ambiguous { count, lines } => {
            let at_least = if count >= replace::MAX_COUNTED {
                "at least "
            } else {
                ""
            };
            let listed: Vec<String> = lines.iter().map(u64::to_string).collect();
            ToolError::failed(format!(
                "old_string occurs {at_least}{count} times in {shown:?} (starting on lines {}{}); \
                 include more of the surrounding lines to pick one, or set replace_all to true \
                 to replace every occurrence",
                listed.join(", "),
                if count > lines.len() { ", ..." } else { "" }
            ))
            .with_reason("ambiguous_match")
            .with_details(serde_json::json!({"count": count, "lines": lines}))
        }
        MatchError::TooMany => ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "old_string occurs more than {} times in {shown:?}; replace_all changes at most \
                 that many at once: use a longer old_string, or rewrite the file with write_file",
                replace::MAX_REPLACEMENTS
            ),
        ),
    }
}
