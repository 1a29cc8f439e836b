//! `read_file`: the lines of one text file, numbered, a window at a time.
//!
//! The sequence: the path is resolved inside the workspace (the guard stage did it once for
//! the policy; the handler does it again, so a direct call is confined too), the file is
//! opened relative to the workspace's directory handle (non-blocking, so a FIFO cannot hang
//! the call), refused unless it is a regular file of at most [`MAX_FILE_BYTES`], read whole,
//! refused when its first [`BINARY_SNIFF_BYTES`] hold a NUL byte, and cut to the requested
//! window of lines and to [`MAX_CONTENT_BYTES`] of content.

use super::lookup;
use crate::blocking;
use crate::text::{push_cut, trim_eol};
use crate::walk::read_options;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Read;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    ArgumentFault, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool, Workspace, WsPath,
};

/// Files larger than this are refused with `unsafe_input` / `limit_exceeded` (10 MiB).
pub const MAX_FILE_BYTES: u64 = 10 << 20;
/// A NUL byte in this many first bytes marks a file as binary (8 KiB).
pub const BINARY_SNIFF_BYTES: usize = 8 << 10;
/// Lines longer than this many characters are cut with a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// Lines returned when the call does not say.
pub const DEFAULT_LIMIT: u32 = 2000;
/// The most lines one call may ask for.
pub const MAX_LIMIT: u32 = 10_000;
/// The content of one result stops at the first line past this many bytes (48 KiB), with
/// `truncated` and `next_offset` set, so a page fits the default result cap of 64 KiB.
pub const MAX_CONTENT_BYTES: usize = 48 << 10;

/// Arguments of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file to read, relative to the workspace root (for example `src/main.rs`); an
    /// absolute path inside the workspace is accepted too.
    #[schemars(length(min = 1, max = 4096))]
    pub path: String,
    /// The 1-based number of the first line to return (default 1). Use the `next_offset` of
    /// a previous result to read on.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to return at most (default 2000, at most 10000). Fewer are returned
    /// when the content would pass 48 KiB.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    pub limit: Option<u32>,
}

/// The result of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileOutput {
    /// The file read, relative to the workspace root with `/` separators (symbolic links
    /// inside the workspace resolved).
    pub path: String,
    /// The lines, each as its number right-aligned in 6 columns, a tab, and the line without
    /// its line ending (`     1\tfn main() {`), joined by `\n`. Invalid UTF-8 is shown as
    /// U+FFFD; lines longer than 2000 characters end with `[... line cut: N more bytes]`.
    pub content: String,
    /// The number of the first line in `content` (1-based).
    pub start_line: u64,
    /// How many lines `content` holds.
    pub lines_returned: u64,
    /// How many lines the file has.
    pub total_lines: u64,
    /// Whether lines after the returned ones were left out.
    pub truncated: bool,
    /// The `offset` that reads on from here, when `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

/// The `read_file` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

const DESCRIPTION: &str = "Read a text file in the workspace and return its lines with line \
numbers. Use it to look at a file whose path you know; for a long file, read a window with \
`offset` (1-based first line) and `limit` (lines, default 2000) and go on with `next_offset`. \
Do not use it to list a directory (use list_dir), to find files by name (use glob) or to find \
text across files (use search_code). Returns {path, content, start_line, lines_returned, \
total_lines, truncated, next_offset}: content holds one line per row as the line number, a tab \
and the text (`    12\\tlet x = 1;`); lines over 2000 characters are cut with a marker; a page \
stops at about 48 KiB, with truncated true and next_offset set. Fails with reason \
binary_file for binary files (a NUL byte in the first 8 KiB), is_a_directory for directories, \
not_found for missing files (naming near paths), and unsafe_input/limit_exceeded for files over 10 MiB (use \
search_code to find lines in those).";

impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    type Output = ReadFileOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("read_file")
            .title("Read file")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("fs")
            .example(
                "Read a whole (short) file",
                serde_json::json!({"path": "src/lib.rs"}),
            )
            .example(
                "Read lines 120 to 169",
                serde_json::json!({"path": "src/lib.rs", "offset": 120, "limit": 50}),
            )
    }

    fn guard(&self, args: &ReadFileArgs, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        Ok(vec![Resource::read(&args.path)])
    }

    /// Only when a policy asks about a read: a missing file or a directory fails before anyone
    /// is asked (the guard does no I/O: reads are the hot path and rarely asked about).
    fn preview(&self, args: &ReadFileArgs, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let path = ctx.resolve(&args.path)?;
        lookup::expect(ctx.require_workspace()?, &path, lookup::Kind::File).map(|()| None)
    }

    async fn call(
        &self,
        args: ReadFileArgs,
        ctx: ToolContext,
    ) -> Result<ReadFileOutput, ToolError> {
        let path = ctx.resolve(&args.path)?;
        let ws = ctx.require_workspace()?.clone();
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        blocking::run(move || {
            let bytes = read_bytes(&ws, &path)?;
            window(&path.display(), &bytes, offset, limit)
        })
        .await
    }
}

/// The whole content of a regular file of at most [`MAX_FILE_BYTES`], refused when binary.
fn read_bytes(ws: &Workspace, path: &WsPath) -> Result<Vec<u8>, ToolError> {
    let shown = path.display();
    if path.is_root() {
        return Err(is_a_directory(&shown));
    }
    let file = ws
        .dir()
        .open_with(path.as_path(), &read_options())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => lookup::not_found(ws, path),
            _ => io_error(&shown, &e),
        })?;
    let meta = file.metadata().map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(is_a_directory(&shown));
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "{shown:?} is not a regular file (a FIFO, socket or device); read_file reads regular files only"
        ))
        .with_reason("not_a_regular_file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(&shown, meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&shown, &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(&shown, bytes.len() as u64));
    }
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if let Some(at) = memchr::memchr(0, sniff) {
        return Err(ToolError::failed(format!(
            "{shown:?} looks like a binary file (a NUL byte at offset {at}); read_file shows text \
             files only"
        ))
        .with_reason("binary_file"));
    }
    Ok(bytes)
}

fn is_a_directory(shown: &str) -> ToolError {
    ToolError::failed(format!(
        "{shown:?} is a directory, not a file; use list_dir to see its entries"
    ))
    .with_reason("is_a_directory")
}

fn too_large(shown: &str, len: u64) -> ToolError {
    ToolError::unsafe_input(
        "limit_exceeded",
        format!(
            "{shown:?} is {len} bytes, more than read_file reads ({MAX_FILE_BYTES} bytes); use \
             search_code with `path` set to this file to find the lines you need"
        ),
    )
}

/// Cuts lines `offset..offset + limit` (1-based) out of `bytes` and numbers them.
///
/// # Errors
/// `invalid_arguments` at `/offset` when the offset is past the last line.
fn window(shown: &str, bytes: &[u8], offset: u64, limit: u32) -> Result<ReadFileOutput, ToolError> {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    let total_lines = newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    if offset > total_lines.max(1) {
        return Err(ToolError::invalid_arguments(
            format!(
                "offset {offset} is past the end of {shown:?}, which has {total_lines} lines; \
                 send an offset from 1 to {}",
                total_lines.max(1)
            ),
            vec![ArgumentFault {
                pointer: "/offset".into(),
                message: format!("must be at most {}", total_lines.max(1)),
            }],
        ));
    }
    let mut content = String::new();
    let mut returned = 0u64;
    let mut number = 0u64;
    let mut start = 0usize;
    while start < bytes.len() && returned < u64::from(limit) {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
        number += 1;
        if number >= offset {
            if returned > 0 && content.len() >= MAX_CONTENT_BYTES {
                break;
            }
            if returned > 0 {
                content.push('\n');
            }
            let _ = write!(content, "{number:>6}\t");
            push_cut(&mut content, trim_eol(&bytes[start..end]), MAX_LINE_CHARS);
            returned += 1;
        }
        start = end;
    }
    let last = offset + returned.saturating_sub(1);
    let truncated = returned > 0 && last < total_lines;
    Ok(ReadFileOutput {
        path: shown.to_string(),
        content,
        start_line: offset,
        lines_returned: returned,
        total_lines,
        truncated,
        next_offset: truncated.then_some(last + 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn out(
        content: &str,
        start: u64,
        returned: u64,
        total: u64,
        next: Option<u64>,
    ) -> ReadFileOutput {
        ReadFileOutput {
            path: "f".into(),
            content: content.into(),
            start_line: start,
            lines_returned: returned,
            total_lines: total,
            truncated: next.is_some(),
            next_offset: next,
        }
    }

    #[test]
    fn windows_are_numbered_and_report_what_is_left() {
        let text = b"a\r\nb\nc";
        assert_eq!(
            window("f", text, 1, 10).unwrap(),
            out("     1\ta\n     2\tb\n     3\tc", 1, 3, 3, None)
        );
        assert_eq!(
            window("f", text, 2, 1).unwrap(),
            out("     2\tb", 2, 1, 3, Some(3))
        );
        assert_eq!(
            window("f", text, 3, 5).unwrap(),
            out("     3\tc", 3, 1, 3, None)
        );
        assert_eq!(window("f", b"", 1, 5).unwrap(), out("", 1, 0, 0, None));
        assert_eq!(
            window("f", b"x\n\n", 2, 5).unwrap(),
            out("     2\t", 2, 1, 2, None)
        );
    }

    #[test]
    fn offset_past_the_end_points_at_offset() {
        let e = window("f", b"a\nb\n", 3, 5).unwrap_err();
        assert_eq!(e.kind, toolgate_core::ErrorKind::InvalidArguments);
        assert_eq!(e.faults[0].pointer, "/offset");
        assert!(window("f", b"", 2, 5).is_err());
    }

    #[test]
    fn content_stops_near_its_byte_budget() {
        let line = "x".repeat(1000);
        let text = format!("{line}\n").repeat(200);
        let o = window("f", text.as_bytes(), 1, 10_000).unwrap();
        assert!(o.truncated);
        assert!(o.content.len() < MAX_CONTENT_BYTES + 2000);
        assert_eq!(o.next_offset, Some(o.lines_returned + 1));
    }
}
