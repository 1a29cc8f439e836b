//! `read_file`: the lines of one text file, numbered, a window at a time.
//!
//! The sequence: the path is resolved inside the workspace (the guard stage did it once for
//! the policy; the handler does it again, so a direct call is confined too), the file is
//! opened relative to the workspace's directory handle (non-blocking, so a FIFO cannot hang
//! the call) and refused unless it is a regular file with one name (a hard link is the same
//! file as its other names, which may be outside the workspace: `ln ~/.ssh/id_rsa notes.txt`
//! passes every path check, so its content is not shown, as the write tools do not change
//! it); its first [`BINARY_SNIFF_BYTES`] are read and a NUL byte among them refuses it as
//! binary (a leading UTF-8 byte-order mark is left out of line 1, as `edit_file` sets it
//! aside and keeps it; and when they hold `\r` but no `\n`, the file has classic Mac OS line
//! endings and each `\r` ends a line, as `edit_file` reads it too); then it is read once,
//! from start to end in 64 KiB chunks, as it was when opened (a file growing meanwhile is
//! read to its size then): the lines before the window are only counted, the window's lines
//! are kept (each one at most [`MAX_LINE_CHARS`] characters, so a line of megabytes costs a
//! few KiB) until `limit` lines or [`MAX_CONTENT_BYTES`] of content, and the rest is only
//! counted for `total_lines`, unless more than [`MAX_COUNTED_AFTER`] bytes follow the window:
//! a window of a file of gigabytes (a log, a sparse file) then ends at once with
//! `total_lines` a lower bound (`total_lines_at_least`), instead of reading the whole file for
//! a count and running into the call's timeout. A file of any size can be read by windows;
//! only the window is held in memory. A cancelled call (or one past its deadline) stops
//! between chunks.

use super::lookup;
use crate::blocking;
use crate::text::push_cut_of;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use tokio_util::sync::CancellationToken;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    ArgumentFault, Effects, ErrorKind, Resource, Risk, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool, Workspace, WsPath,
};

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
/// Bytes of a line kept to show its first [`MAX_LINE_CHARS`] characters (each at most 4).
const LINE_KEEP: usize = MAX_LINE_CHARS * 4 + 4;
/// The size of one read.
const CHUNK: usize = 64 << 10;
/// The most bytes read after the window only to count lines (64 MiB): past it, the count
/// stops and `total_lines` is a lower bound.
pub const MAX_COUNTED_AFTER: u64 = 64 << 20;

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
    /// How many lines the file has; when `total_lines_at_least` is set, how many lines it
    /// has at least.
    pub total_lines: u64,
    /// Whether `total_lines` is a lower bound: more than 64 MiB followed the returned lines,
    /// and they were not read to count them (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_lines_at_least: bool,
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
`offset` (1-based first line) and `limit` (lines, default 2000) and go on with `next_offset`: \
a file of any size can be read this way. Do not use it to list a directory (use list_dir), to \
find files by name (use glob) or to find text across files (use search_code, which also finds \
the line numbers to read around in a large file). Returns the lines as text, one per row as \
the line number, a tab and the line (`    12\\tlet x = 1;`); lines over 2000 characters are \
cut with a marker; a page stops at about 48 KiB. When lines follow the page, a last row in \
brackets says which lines were shown and the offset to read on from \
(`[lines 1-2000 of 5000 shown; call read_file with offset 2001 to read on]`); an empty file \
is said to be empty. The structured content holds the same as {path, content, start_line, \
lines_returned, total_lines, truncated, next_offset}. Fails \
with reason binary_file for binary files (a NUL byte in the first 8 KiB), is_a_directory for \
directories, not_a_regular_file for FIFOs and devices, unsafe_input/hard_link for files with \
several hard links, and not_found for missing files (naming near paths).";

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

    fn guard(&self, args: &ReadFileArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        crate::fs::protected::guard_read(ctx, &args.path)?;
        Ok(vec![Resource::read(&args.path)])
    }

    /// Only when a policy asks about a read: a missing file or a directory fails before anyone
    /// is asked (the guard does no I/O: reads are the hot path and rarely asked about).
    fn preview(&self, args: &ReadFileArgs, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let path = crate::fs::protected::resolve_for_read(ctx, &args.path)?;
        lookup::expect(ctx, &path, lookup::Kind::File).map(|()| None)
    }

    /// The numbered lines as `content` holds them, then, when lines follow, one row saying
    /// which were shown and the offset to read on from; a sentence for an empty file.
    fn text(&self, output: &ReadFileOutput) -> Option<String> {
        Some(render(output))
    }

    async fn call(
        &self,
        args: ReadFileArgs,
        ctx: ToolContext,
    ) -> Result<ReadFileOutput, ToolError> {
        let path = crate::fs::protected::resolve_for_read(&ctx, &args.path)?;
        ctx.check_judged(&path, toolgate_core::Access::Read)?;
        let ws = ctx.require_workspace()?.clone();
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        blocking::run(move || {
            let visible = |rel: &std::path::Path| ctx.permits(rel, toolgate_core::Access::Read);
            let (reader, size) = open_text(&ws, &path, &visible)?;
            let mut window = Window::new(offset, limit, size);
            window.read(reader, &cancel, &path.display())?;
            window.finish(&path.display())
        })
        .await
    }
}

/// The file as a reader of its bytes (as many as it had when opened) and their number,
/// refused unless it is a regular file whose first [`BINARY_SNIFF_BYTES`] hold no NUL byte.
fn open_text(
    ws: &Workspace,
    path: &WsPath,
    visible: &dyn Fn(&std::path::Path) -> bool,
) -> Result<(impl BufRead, u64), ToolError> {
    let shown = path.display();
    if path.is_root() {
        return Err(is_a_directory(&shown));
    }
    let file = super::open_exact(ws, path, false).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => lookup::not_found(ws, path, visible),
        _ if super::is_changed(&e) => super::changed_error(&shown),
        // a socket cannot be opened (`ENXIO`): not a regular file, like a FIFO or a device
        _ if e.raw_os_error() == Some(libc::ENXIO) => not_regular(&shown),
        _ => io_error(&shown, &e),
    })?;
    let meta = file.metadata().map_err(|e| io_error(&shown, &e))?;
    if meta.is_dir() {
        return Err(is_a_directory(&shown));
    }
    if !meta.is_file() {
        return Err(not_regular(&shown));
    }
    refuse_hard_link(ws, path, std::os::unix::fs::MetadataExt::nlink(&meta))?;
    let mut file = file.take(meta.len());
    let mut sniff = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut sniff)
        .map_err(|e| io_error(&shown, &e))?;
    if let Some(at) = memchr::memchr(0, &sniff) {
        return Err(ToolError::failed(format!(
            "{shown:?} looks like a binary file (a NUL byte at offset {at}); read_file shows text \
             files only"
        ))
        .with_reason("binary_file"));
    }
    let cr_only =
        memchr::memchr(b'\r', &sniff).is_some() && memchr::memchr(b'\n', &sniff).is_none();
    let mut head = std::io::Cursor::new(sniff);
    if head.get_ref().starts_with(BOM) {
        head.set_position(BOM.len() as u64);
    }
    let bytes = CrAsLf {
        inner: head.chain(file),
        cr_only,
    };
    Ok((BufReader::with_capacity(CHUNK, bytes), meta.len()))
}

/// The error of a path that names a FIFO, socket or device.
fn not_regular(shown: &str) -> ToolError {
    ToolError::failed(format!(
        "{shown:?} is not a regular file (a FIFO, socket or device); read_file reads regular \
         files only"
    ))
    .with_reason("not_a_regular_file")
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Refuses a regular file with more than one hard link, unless the operator lets such files
/// be read where it lies (`[files] read_hard_links`, [`Workspace::reads_hard_link`]); `links`
/// is its link count (`st_nlink`, from the metadata its caller already holds: no second
/// `fstat`).
///
/// # Errors
/// `unsafe_input` / `hard_link`.
pub(crate) fn refuse_hard_link(ws: &Workspace, path: &WsPath, links: u64) -> Result<(), ToolError> {
    if links > 1 && !ws.reads_hard_link(path.as_path()) {
        return Err(ToolError::unsafe_input(
            "hard_link",
            format!(
                "{:?} has {links} hard links; its other names may be outside the workspace, so \
                 toolgate does not show its content. Read another file, or ask the operator to \
                 replace it with a plain copy or to allow hard-linked files there (`[files] \
                 read_hard_links` in toolgate.toml, for a package manager's links such as \
                 pnpm's or uv's)",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// A reader of a file's bytes that, for a file with classic Mac OS line endings
/// (`cr_only`), gives each `\r` as `\n`.
struct CrAsLf<R> {
    inner: R,
    cr_only: bool,
}

impl<R: Read> Read for CrAsLf<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.cr_only {
            for b in &mut buf[..n] {
                if *b == b'\r' {
                    *b = b'\n';
                }
            }
        }
        Ok(n)
    }
}

/// The text a model reads for `out`: `content` as it is, then, when `truncated`, one row
/// `[lines A-B of N shown; call read_file with offset B+1 to read on]` (no line of the file
/// starts with `[`: each starts with its number); for a window without lines (an empty
/// file), a sentence saying so. One copy of the content.
pub fn render(out: &ReadFileOutput) -> String {
    use std::fmt::Write as _;
    if out.lines_returned == 0 {
        return if out.total_lines == 0 {
            format!("[{} is empty: 0 lines]", out.path)
        } else {
            format!(
                "[no lines shown from line {} of {}, which has {} lines]",
                out.start_line, out.path, out.total_lines
            )
        };
    }
    let Some(next) = out.next_offset.filter(|_| out.truncated) else {
        return out.content.clone();
    };
    let mut text = String::with_capacity(out.content.len() + 96);
    text.push_str(&out.content);
    // writing to a String cannot fail
    let _ = write!(
        text,
        "\n[lines {}-{} of {}{} shown; call read_file with offset {next} to read on]",
        out.start_line,
        next - 1,
        if out.total_lines_at_least {
            "at least "
        } else {
            ""
        },
        out.total_lines
    );
    text
}

/// Appends `number` right-aligned in 6 columns (wider when it has more digits) and a tab, as
/// `format!("{number:>6}\t")` would.
fn push_number(out: &mut String, mut number: u64) {
    let mut digits = [b' '; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (number % 10) as u8;
        number /= 10;
        if number == 0 {
            break;
        }
    }
    for &b in &digits[at.min(digits.len() - 6)..] {
        out.push(char::from(b));
    }
    out.push('\t');
}

fn is_a_directory(shown: &str) -> ToolError {
    ToolError::failed(format!(
        "{shown:?} is a directory, not a file; use list_dir to see its entries"
    ))
    .with_reason("is_a_directory")
}

/// Lines `offset..offset + limit` (1-based) of a file read once from start to end.
struct Window {
    offset: u64,
    limit: u32,
    /// Line breaks read so far: the current line is number `newlines + 1`.
    newlines: u64,
    /// Whether the current line has bytes (a last line without a break counts then).
    in_line: bool,
    /// The current line's first [`LINE_KEEP`] bytes, while it is in the window.
    line: Vec<u8>,
    /// The current line's length without its line break.
    line_len: usize,
    /// Whether the current line's last byte so far is `\r`.
    ends_cr: bool,
    content: String,
    /// Bytes to reserve for the content at its first line: the file's size with room for
    /// the line numbers, at most a full page.
    size_hint: usize,
    returned: u64,
    /// The window is complete: the rest is only counted.
    full: bool,
    /// The bytes the file had when opened, and how many of them were taken.
    size: u64,
    taken: u64,
    /// The count stopped after the window, past [`MAX_COUNTED_AFTER`].
    uncounted: bool,
}

impl Window {
    fn new(offset: u64, limit: u32, file_bytes: u64) -> Window {
        let bytes = usize::try_from(file_bytes).unwrap_or(usize::MAX);
        Window {
            size_hint: bytes
                .saturating_add(bytes / 4)
                .saturating_add(16)
                .min(MAX_CONTENT_BYTES + LINE_KEEP + 64),
            offset,
            limit,
            newlines: 0,
            in_line: false,
            line: Vec::new(),
            line_len: 0,
            ends_cr: false,
            content: String::new(),
            returned: 0,
            full: false,
            size: file_bytes,
            taken: 0,
            uncounted: false,
        }
    }

    /// Whether the current line belongs in the window.
    fn collecting(&self) -> bool {
        !self.full && self.newlines + 1 >= self.offset
    }

    /// Reads `reader` to its end.
    fn read(
        &mut self,
        mut reader: impl BufRead,
        cancel: &CancellationToken,
        shown: &str,
    ) -> Result<(), ToolError> {
        loop {
            if cancel.is_cancelled() {
                return Err(ToolError::new(
                    ErrorKind::Cancelled,
                    "the call was cancelled before it finished",
                ));
            }
            let chunk = reader.fill_buf().map_err(|e| io_error(shown, &e))?;
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len();
            self.take(chunk);
            reader.consume(n);
            self.taken += n as u64;
            if self.full && self.size.saturating_sub(self.taken) > MAX_COUNTED_AFTER {
                // bytes remain, so a line follows the window: its count is a lower bound
                self.uncounted = true;
                self.in_line = true;
                return Ok(());
            }
        }
        if self.in_line && self.collecting() {
            self.end_line();
        }
        Ok(())
    }

    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.full {
                self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
                self.in_line = !bytes.ends_with(b"\n");
                return;
            }
            let end = memchr::memchr(b'\n', bytes);
            let part = &bytes[..end.unwrap_or(bytes.len())];
            if self.collecting() {
                if !self.in_line && self.returned > 0 && self.content.len() >= MAX_CONTENT_BYTES {
                    // the page is full at a line's start: the rest is only counted
                    self.full = true;
                    continue;
                }
                if let (Some(i), false) = (end, self.in_line) {
                    // a whole line in this chunk: numbered and copied from it, not staged
                    let len = part.len() - usize::from(part.last() == Some(&b'\r'));
                    self.push_line(&part[..len.min(LINE_KEEP)], len);
                    self.newlines += 1;
                    bytes = &bytes[i + 1..];
                    continue;
                }
                let room = LINE_KEEP.saturating_sub(self.line.len());
                self.line.extend_from_slice(&part[..part.len().min(room)]);
                self.line_len += part.len();
                if let Some(&b) = part.last() {
                    self.ends_cr = b == b'\r';
                }
            }
            self.in_line |= !part.is_empty();
            match end {
                Some(i) => {
                    if self.collecting() {
                        self.end_line();
                    }
                    self.newlines += 1;
                    self.in_line = false;
                    bytes = &bytes[i + 1..];
                }
                None => bytes = &[],
            }
        }
    }

    /// Adds the current (staged) line to the content.
    fn end_line(&mut self) {
        // a `\r` before the break (or the end) belongs to the line ending
        let len = self.line_len - usize::from(self.ends_cr);
        let line = std::mem::take(&mut self.line);
        self.push_line(&line[..line.len().min(len)], len);
        self.line = line;
        self.line.clear();
        self.line_len = 0;
        self.ends_cr = false;
    }

    /// Adds line `newlines + 1`, of `len` bytes of which `kept` are at hand, to the content.
    fn push_line(&mut self, kept: &[u8], len: usize) {
        if self.returned > 0 {
            self.content.push('\n');
        } else {
            self.content.reserve(self.size_hint);
        }
        push_number(&mut self.content, self.newlines + 1);
        push_cut_of(&mut self.content, kept, len, MAX_LINE_CHARS);
        self.returned += 1;
        if self.returned >= u64::from(self.limit) {
            self.full = true;
        }
    }

    /// The result, or the error of an offset past the last line.
    fn finish(self, shown: &str) -> Result<ReadFileOutput, ToolError> {
        let total_lines = self.newlines + u64::from(self.in_line);
        if self.offset > total_lines.max(1) {
            return Err(ToolError::invalid_arguments(
                format!(
                    "offset {} is past the end of {shown:?}, which has {total_lines} lines; \
                     send an offset from 1 to {}",
                    self.offset,
                    total_lines.max(1)
                ),
                vec![ArgumentFault {
                    pointer: "/offset".into(),
                    message: format!("must be at most {}", total_lines.max(1)),
                }],
            ));
        }
        let last = self.offset + self.returned.saturating_sub(1);
        let truncated = self.returned > 0 && last < total_lines;
        Ok(ReadFileOutput {
            path: shown.to_string(),
            content: self.content,
            start_line: self.offset,
            lines_returned: self.returned,
            total_lines,
            total_lines_at_least: self.uncounted,
            truncated,
            next_offset: truncated.then_some(last + 1),
        })
    }
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
            total_lines_at_least: false,
            truncated: next.is_some(),
            next_offset: next,
        }
    }

    /// The window of `bytes`, read in chunks of `chunk` bytes.
    fn window_in(
        bytes: &[u8],
        offset: u64,
        limit: u32,
        chunk: usize,
    ) -> Result<ReadFileOutput, ToolError> {
        let mut w = Window::new(offset, limit, bytes.len() as u64);
        for c in bytes.chunks(chunk.max(1)) {
            w.take(c);
        }
        if w.in_line && w.collecting() {
            w.end_line();
        }
        w.finish("f")
    }

    /// The window, the same whatever the chunks.
    fn window(bytes: &[u8], offset: u64, limit: u32) -> Result<ReadFileOutput, ToolError> {
        let whole = window_in(bytes, offset, limit, bytes.len().max(1));
        for chunk in [1, 2, 3, 7, 64] {
            let pieces = window_in(bytes, offset, limit, chunk);
            match (&whole, &pieces) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "chunks of {chunk}"),
                (Err(a), Err(b)) => assert_eq!(a.message, b.message),
                _ => panic!("chunks of {chunk} differ"),
            }
        }
        whole
    }

    #[test]
    fn windows_are_numbered_and_report_what_is_left() {
        let text = b"a\r\nb\nc";
        assert_eq!(
            window(text, 1, 10).unwrap(),
            out("     1\ta\n     2\tb\n     3\tc", 1, 3, 3, None)
        );
        assert_eq!(
            window(text, 2, 1).unwrap(),
            out("     2\tb", 2, 1, 3, Some(3))
        );
        assert_eq!(window(text, 3, 5).unwrap(), out("     3\tc", 3, 1, 3, None));
        assert_eq!(window(b"", 1, 5).unwrap(), out("", 1, 0, 0, None));
        assert_eq!(
            window(b"x\n\n", 2, 5).unwrap(),
            out("     2\t", 2, 1, 2, None)
        );
        assert_eq!(
            window(b"x\r", 1, 5).unwrap(),
            out("     1\tx", 1, 1, 1, None)
        );
        assert_eq!(
            window(b"\n\n\n", 3, 5).unwrap(),
            out("     3\t", 3, 1, 3, None)
        );
    }

    #[test]
    fn the_text_is_the_numbered_lines_and_says_how_to_read_on() {
        let text = b"a\nb\nc\n";
        let whole = window(text, 1, 10).unwrap();
        assert_eq!(render(&whole), "     1\ta\n     2\tb\n     3\tc");
        let first = window(text, 1, 2).unwrap();
        assert_eq!(
            render(&first),
            "     1\ta\n     2\tb\n[lines 1-2 of 3 shown; call read_file with offset 3 to read on]"
        );
        let middle = window(text, 2, 1).unwrap();
        assert_eq!(
            render(&middle),
            "     2\tb\n[lines 2-2 of 3 shown; call read_file with offset 3 to read on]"
        );
        assert_eq!(render(&window(text, 3, 5).unwrap()), "     3\tc");
        assert_eq!(render(&window(b"", 1, 5).unwrap()), "[f is empty: 0 lines]");
        // a window without lines in a file that has some is said in words too
        assert_eq!(
            render(&out("", 4, 0, 3, None)),
            "[no lines shown from line 4 of f, which has 3 lines]"
        );
    }

    /// A page cut at its byte budget says so the same way, with the offset after its last line.
    #[test]
    fn a_full_page_names_the_offset_to_read_on_from() {
        let text = format!("{}\n", "y".repeat(1000)).repeat(100);
        let o = window(text.as_bytes(), 1, 10_000).unwrap();
        let next = o.next_offset.unwrap();
        let shown = render(&o);
        assert_eq!(
            shown,
            format!(
                "{}\n[lines 1-{} of 100 shown; call read_file with offset {next} to read on]",
                o.content,
                next - 1
            )
        );
    }

    #[test]
    fn offset_past_the_end_points_at_offset() {
        let e = window(b"a\nb\n", 3, 5).unwrap_err();
        assert_eq!(e.kind, toolgate_core::ErrorKind::InvalidArguments);
        assert_eq!(e.faults[0].pointer, "/offset");
        assert!(e.message.contains("from 1 to 2"), "{}", e.message);
        assert!(window(b"", 2, 5).is_err());
        assert!(window(b"a", u64::MAX, 5).is_err());
    }

    #[test]
    fn content_stops_near_its_byte_budget() {
        let line = "x".repeat(1000);
        let text = format!("{line}\n").repeat(200);
        let o = window(text.as_bytes(), 1, 10_000).unwrap();
        assert!(o.truncated);
        assert!(o.content.len() < MAX_CONTENT_BYTES + 2000);
        assert_eq!(o.next_offset, Some(o.lines_returned + 1));
        assert_eq!(o.total_lines, 200);
    }

    /// A line of megabytes is cut to its first 2000 characters, counting the bytes left out,
    /// its line break included or not.
    #[test]
    fn a_huge_line_keeps_its_start_and_counts_the_rest() {
        for (eol, next) in [("", ""), ("\n", "next\n"), ("\r\n", "next")] {
            let text = format!(
                "{}NEEDLE{}{eol}{next}",
                "A".repeat(5_000_000),
                "B".repeat(100)
            );
            let o = window_in(text.as_bytes(), 1, 1, CHUNK).unwrap();
            assert_eq!(o, window_in(text.as_bytes(), 1, 1, 4097).unwrap());
            let more = 5_000_000 + 6 + 100 - MAX_LINE_CHARS;
            assert_eq!(
                o.content,
                format!(
                    "     1\t{} [... line cut: {more} more bytes]",
                    "A".repeat(MAX_LINE_CHARS)
                ),
                "{eol:?}"
            );
            let lines = if next.is_empty() { 1 } else { 2 };
            assert_eq!(
                (o.total_lines, o.next_offset),
                (lines, (lines == 2).then_some(2))
            );
        }
    }

    #[test]
    fn line_numbers_are_right_aligned_in_six_columns() {
        for n in [
            0,
            1,
            9,
            10,
            99_999,
            999_999,
            1_000_000,
            12_345_678_901,
            u64::MAX,
        ] {
            let mut s = String::new();
            push_number(&mut s, n);
            assert_eq!(s, format!("{n:>6}\t"));
        }
    }
}
