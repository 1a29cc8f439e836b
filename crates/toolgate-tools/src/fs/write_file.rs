//! `write_file`: create a file or replace its whole content, atomically.
//!
//! The sequence:
//!
//! 1. guard (before the policy and the approver see the call): the content is at most
//!    [`MAX_CONTENT_BYTES`]; the path is resolved inside the workspace (symbolic links
//!    followed: a link inside the workspace is written *at its resolved target*, the link
//!    itself is left as it is; one that leads out is refused with `path_outside_workspace`);
//!    the resolved path is not the root and not protected ([`super::protected`]); what the
//!    write would find is looked at without changing anything (`probe`): a directory at the
//!    path, a file on the way to it, a FIFO or device, a hard-linked file fail the call here,
//!    before anyone is asked to approve it; the call declares the path as a write resource;
//! 2. when the call is put to an approver, the question's preview is a unified diff of the
//!    file as it is against `content` ([`toolgate_core::Tool::preview`]);
//! 3. the handler resolves and checks the path again (a direct call is confined too, and
//!    the tree may have changed while a person thought);
//! 4. [`super::atomic`] opens the parent by a no-follow walk from the workspace root,
//!    creating missing directories, refuses a target that is a directory, FIFO, socket,
//!    device or hard-linked file, and replaces the target through a temporary file in the
//!    same directory, renamed over it once written and synced. An existing file keeps its
//!    permission bits.
//!
//! The content is written as sent: line endings and a byte-order mark are the caller's
//! (the pipeline keeps control characters in `content`; NUL is refused by the sanitize
//! stage, and text that is not valid Unicode never parses as JSON).

use super::atomic::{Base, Parents, Target, WriteError};
use super::diff;
use super::protected;
use crate::blocking;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool,
    Workspace, WsPath,
};

/// Content larger than this many bytes is refused with `unsafe_input` / `limit_exceeded`
/// (10 MiB).
pub const MAX_CONTENT_BYTES: u64 = 10 << 20;

/// Arguments of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The file to create or replace, relative to the workspace root (for example
    /// `src/config.rs`); an absolute path inside the workspace is accepted too. Missing
    /// parent directories are created.
    #[schemars(length(min = 1, max = 4096))]
    pub path: String,
    /// The whole new content of the file, written exactly as sent (UTF-8, at most 10 MiB).
    pub content: String,
}

/// The result of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteFileOutput {
    /// The file written, relative to the workspace root with `/` separators (symbolic links
    /// inside the workspace resolved).
    pub path: String,
    /// How many bytes the file now has.
    pub bytes_written: u64,
    /// Whether the file was created (`false`: an existing file was replaced).
    pub created: bool,
}

/// The `write_file` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile {
    allow_protected: bool,
}

impl WriteFile {
    /// The tool with protected paths refused (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool allowed to write protected paths ([`super::protected`]: `.git`, `.toolgate`,
    /// `toolgate.toml`, editor and agent settings, hook and shell start-up files), for a host
    /// whose operator configured that explicitly. Every other check stays.
    pub fn allow_protected_paths(mut self) -> Self {
        self.allow_protected = true;
        self
    }
}

const DESCRIPTION: &str = "Create a file in the workspace, or replace the whole content of \
an existing one, with `content` written exactly as sent. Use it for new files and for rewriting \
a file completely; to change part of an existing file use edit_file, which needs no copy of the \
rest. Missing parent directories are created. The write is atomic: readers see the old file or \
the new one, never a part. Returns {path, bytes_written, created}. Refused: paths outside the \
workspace or through links that lead out (unsafe_input/path_outside_workspace), protected paths \
such as .git/ and .toolgate/ (unsafe_input/protected_path), files with several hard links \
(unsafe_input/hard_link), content over 10 MiB (unsafe_input/limit_exceeded), directories \
(is_a_directory) and FIFOs or devices (not_a_regular_file).";

impl TypedTool for WriteFile {
    type Args = WriteFileArgs;
    type Output = WriteFileOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("write_file")
            .title("Write file")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: false,
                destructive: true,
                idempotent: true,
                open_world: false,
                concurrency_safe: false,
            })
            .risk(Risk::Write)
            .tag("fs")
            .tag("write")
            .verbatim_argument("content")
            .example(
                "Create a new source file",
                serde_json::json!({"path": "src/greet.rs", "content": "pub fn greet() -> &'static str {\n    \"hello\"\n}\n"}),
            )
    }

    fn guard(&self, args: &WriteFileArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        check_size("content", args.content.len())?;
        let path = resolve_for_write(ctx, &args.path, self.allow_protected)?;
        // what is on the way (`.env/x`: a component is a file) is told before the policy,
        // except where the policy denies reading: of a file the caller may not read, the
        // denial answers, not whether it exists
        if !ctx.denies(path.as_path(), toolgate_core::Access::Read) {
            probe(ctx.require_workspace()?, &path)?;
        }
        Ok(vec![Resource::write(&args.path)])
    }

    fn preview(
        &self,
        args: &WriteFileArgs,
        ctx: &ToolContext,
    ) -> Result<Option<String>, ToolError> {
        let path = resolve_for_write(ctx, &args.path, self.allow_protected)?;
        let ws = ctx.require_workspace()?;
        probe(ws, &path)?;
        Ok(preview(ws, &path, &args.content))
    }

    async fn call(
        &self,
        args: WriteFileArgs,
        ctx: ToolContext,
    ) -> Result<WriteFileOutput, ToolError> {
        check_size("content", args.content.len())?;
        let path = resolve_for_write(&ctx, &args.path, self.allow_protected)?;
        ctx.check_judged(&path, toolgate_core::Access::Write)?;
        let ws = ctx.require_workspace()?.clone();
        let (cancel, _stop_on_drop) = blocking::call_token(&ctx);
        blocking::run(move || write(&ws, &path, args.content.as_bytes(), &cancel)).await
    }
}

/// Writes `content` to `path` (step 4 of the module docs).
fn write(
    ws: &Workspace,
    path: &WsPath,
    content: &[u8],
    cancel: &CancellationToken,
) -> Result<WriteFileOutput, ToolError> {
    let shown = path.display();
    let err = |e: WriteError| e.into_tool_error(&shown);
    let target = Target::open(ws.writable_dir()?, path, Parents::Create).map_err(err)?;
    let existing = target.existing().map_err(err)?;
    target
        .replace(
            content,
            existing.map(|e| e.permissions),
            Base::Current,
            cancel,
        )
        .map_err(err)?;
    Ok(WriteFileOutput {
        bytes_written: content.len() as u64,
        created: existing.is_none(),
        path: shown,
    })
}

/// What a write to `path` would find, looked at without changing anything: the parents that
/// exist walked without following links, and the target, if there is one, checked as
/// [`Target::existing`] does. Missing parents are fine (the write creates them).
///
/// # Errors
/// `tool_failed` / `is_a_directory`, `not_a_directory` (a file on the way),
/// `not_a_regular_file`; `unsafe_input` / `hard_link`, `path_outside_workspace` (a link on
/// the way).
pub(crate) fn probe(ws: &Workspace, path: &WsPath) -> Result<(), ToolError> {
    let err = |e: WriteError| e.into_tool_error(&path.display());
    match Target::open(ws.writable_dir()?, path, Parents::MustExist) {
        Ok(target) => target.existing().map(drop).map_err(err),
        Err(WriteError::NotFound) => Ok(()),
        Err(e) => Err(err(e)),
    }
}

/// The unified diff of the file at `path` as it is against `content` (a new file against
/// nothing), for an approval question; a file that is not UTF-8 text, or too large to read,
/// is summarised instead. `None` when the file cannot be looked at.
fn preview(ws: &Workspace, path: &WsPath, content: &str) -> Option<String> {
    let shown = path.display();
    let target = match Target::open(ws.writable_dir().ok()?, path, Parents::MustExist) {
        Ok(t) => Some(t),
        Err(WriteError::NotFound) => None,
        Err(_) => return None,
    };
    let old = match &target {
        Some(t) => match t.read(MAX_CONTENT_BYTES) {
            Ok((bytes, _)) => Some(bytes),
            Err(WriteError::NotFound) => None,
            Err(WriteError::TooLarge { len, .. }) => {
                return Some(format!(
                    "{shown}: the existing file ({len} bytes) would be replaced whole by {} bytes",
                    content.len()
                ))
            }
            Err(_) => return None,
        },
        None => None,
    };
    let Some(old) = old else {
        let d = diff::whole(&shown, "", content);
        return Some(
            d.text
                .replacen(&format!("--- a/{shown}\n"), "--- /dev/null\n", 1),
        );
    };
    match std::str::from_utf8(&old) {
        Ok(old) if old == content => Some(format!("{shown}: the content is the same as now")),
        Ok(old) => Some(diff::whole(&shown, old, content).text),
        Err(_) => Some(format!(
            "{shown}: the existing file ({} bytes) is not UTF-8 text; it would be replaced whole \
             by {} bytes",
            old.len(),
            content.len()
        )),
    }
}

/// Resolves a path argument of a write tool: without control, invisible or bidirectional
/// characters, inside the workspace, not the root or a path ending in `/`, not protected
/// (unless `allow_protected`).
///
/// # Errors
/// `invalid_input` / `forbidden_characters` at `/path`; what [`ToolContext::resolve`]
/// returns; `tool_failed` / `is_a_directory` for the root or
/// a trailing `/`;
/// `unsafe_input` / `protected_path`.
pub(crate) fn resolve_for_write(
    ctx: &ToolContext,
    path: &str,
    allow_protected: bool,
) -> Result<WsPath, ToolError> {
    // a name holding a line break, a terminal control or a direction override fakes what a
    // person reads in a listing, a diff or a log (`invoice\u{202e}fdp.exe` shows as
    // `invoiceexe.pdf`); the read tools show such names escaped, the write tools make none
    if let Some(c) = path
        .chars()
        .find(|&c| c.is_control() || toolgate_core::sanitize::is_invisible(c))
    {
        let mut e = ToolError::invalid_input(format!(
            "the path contains U+{:04X}, a control, invisible or bidirectional character; the \
             write tools do not create or change files whose names hold one: send a path \
             without it",
            c as u32
        ))
        .with_reason("forbidden_characters");
        e.faults = vec![toolgate_core::ArgumentFault {
            pointer: "/path".into(),
            message: format!("contains U+{:04X}", c as u32),
        }];
        return Err(e);
    }
    // `a.txt/.` names a directory as `a.txt/` does (POSIX: ENOTDIR for a file); resolving
    // drops the `.`, so it is looked at here, not to write `a.txt` for it
    if path.ends_with('/') || path.ends_with("/.") {
        return Err(ToolError::failed(format!(
            "{path:?} ends with '/' or '/.', which names a directory; send the path of a file"
        ))
        .with_reason("is_a_directory"));
    }
    let resolved = ctx.resolve(path)?;
    if resolved.is_root() {
        return Err(WriteError::IsADirectory.into_tool_error(&resolved.display()));
    }
    if !allow_protected {
        protected::check(&resolved)?;
    }
    Ok(resolved)
}

/// Refuses an argument of more than [`MAX_CONTENT_BYTES`].
///
/// # Errors
/// `unsafe_input` / `limit_exceeded` naming the argument.
pub(crate) fn check_size(argument: &str, len: usize) -> Result<(), ToolError> {
    if len as u64 > MAX_CONTENT_BYTES {
        // no built-in tool appends, so "write it in parts" would be advice nobody can follow
        let instead = if argument == "content" {
            "no tool appends to a file, so a file this large cannot be written by write_file: \
             write a smaller file, or generate a large one with a command if run_shell is \
             available"
        } else {
            "send a shorter piece of text"
        };
        return Err(ToolError::unsafe_input(
            "limit_exceeded",
            format!(
                "`{argument}` is {len} bytes, more than the {MAX_CONTENT_BYTES} bytes (10 MiB) \
                 one call takes; {instead}"
            ),
        ));
    }
    Ok(())
}
