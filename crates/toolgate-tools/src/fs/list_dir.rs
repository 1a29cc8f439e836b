//! `list_dir`: the entries of one directory, with their kind and size.
//!
//! The sequence: the path is resolved inside the workspace, the directory is opened relative
//! to the workspace's directory handle, its entries are read (kinds from the directory itself,
//! never by following a link), the [`MAX_ENTRIES`] first names in byte order are kept, and
//! only regular files among them are `lstat`ed for their size. A symlink is reported as
//! `symlink`, with no size and nothing about its target.

use super::lookup;
use crate::blocking;
use crate::topk::TopK;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use toolgate_core::workspace::io_error;
use toolgate_core::{
    Access, Effects, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool,
    Workspace, WsPath,
};

/// At most this many entries are returned; `truncated` says when there were more.
pub const MAX_ENTRIES: usize = 1000;

/// Arguments of `list_dir`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// The directory to list, relative to the workspace root (default `.`, the root).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub path: Option<String>,
}

/// What a directory entry is, as the directory says (links are not followed).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (its target is not looked at).
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirEntryInfo {
    /// The entry's name (not a path). Names that are not UTF-8 are shown with U+FFFD.
    pub name: String,
    /// What the entry is.
    pub kind: EntryKind,
    /// The size in bytes, for regular files only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// The result of `list_dir`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListDirOutput {
    /// The directory listed, relative to the workspace root (`.` for the root).
    pub path: String,
    /// The entries, sorted by name (byte order), at most 1000.
    pub entries: Vec<DirEntryInfo>,
    /// How many entries the directory has.
    pub total_entries: u64,
    /// Whether entries past the first 1000 were left out.
    pub truncated: bool,
}

/// The `list_dir` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

const DESCRIPTION: &str = "List the entries of one directory in the workspace: name, kind \
(file, dir, symlink, other) and size in bytes for files. Use it to see what a directory holds \
before reading files. Not recursive: to find files by name pattern across directories use glob; \
to find text use search_code. Hidden entries and ignored files are listed too. Symbolic links \
are listed as kind symlink and never followed. Returns {path, entries, total_entries, \
truncated}, entries sorted by name; at most 1000 entries, with truncated true when the \
directory has more. Fails with reason not_a_directory for a file and not_found for a missing \
path. A result past the result size limit keeps its first entries and adds a `truncation` \
member naming the read_result handle and offset that read the rest.";

impl TypedTool for ListDir {
    type Args = ListDirArgs;
    type Output = ListDirOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("list_dir")
            .title("List directory")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("fs")
            .example("List the workspace root", serde_json::json!({}))
            .example("List src", serde_json::json!({"path": "src"}))
    }

    fn guard(&self, args: &ListDirArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let path = args.path.as_deref().unwrap_or(".");
        crate::fs::protected::guard_read(ctx, path)?;
        Ok(vec![Resource::read(path)])
    }

    /// Only when a policy asks: a path that is missing or not a directory fails first.
    fn preview(&self, args: &ListDirArgs, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let path =
            crate::fs::protected::resolve_for_read(ctx, args.path.as_deref().unwrap_or("."))?;
        lookup::expect(ctx, &path, lookup::Kind::Dir).map(|()| None)
    }

    async fn call(&self, args: ListDirArgs, ctx: ToolContext) -> Result<ListDirOutput, ToolError> {
        let path =
            crate::fs::protected::resolve_for_read(&ctx, args.path.as_deref().unwrap_or("."))?;
        ctx.check_judged(&path, toolgate_core::Access::Read)?;
        let ws = ctx.require_workspace()?.clone();
        blocking::run(move || list(&ws, &path, &ctx)).await
    }
}

/// Lists `path`, keeping the first [`MAX_ENTRIES`] names.
fn list(ws: &Workspace, path: &WsPath, ctx: &ToolContext) -> Result<ListDirOutput, ToolError> {
    let shown = path.display();
    let meta = ws
        .dir()
        .metadata(path.as_path())
        .map_err(|e| io_error(&shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown:?} is not a directory; use read_file to read a file"
        ))
        .with_reason("not_a_directory"));
    }
    let dir = super::open_exact(ws, path, true)
        .map(cap_std::fs::Dir::from_std_file)
        .map_err(|e| {
            if super::is_changed(&e) {
                super::changed_error(&shown)
            } else {
                io_error(&shown, &e)
            }
        })?;
    let mut first = TopK::new(MAX_ENTRIES);
    let mut total = 0u64;
    for entry in dir.entries().map_err(|e| io_error(&shown, &e))? {
        let entry = entry.map_err(|e| io_error(&shown, &e))?;
        // a write's temporary file (one a killed process left, until it is swept) is not
        // the workspace's content
        if super::temp::is_temp_name(&entry.file_name()) {
            continue;
        }
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => EntryKind::Symlink,
            Ok(t) if t.is_dir() => EntryKind::Dir,
            Ok(t) if t.is_file() => EntryKind::File,
            Ok(_) => EntryKind::Other,
            // vanished since it was read: not listed
            Err(_) => continue,
        };
        // an entry the policy withholds (a rule on it or above it) is not listed
        let rel = if path.is_root() {
            std::path::PathBuf::from(entry.file_name())
        } else {
            path.as_path().join(entry.file_name())
        };
        if !ctx.permits(&rel, Access::Read) {
            continue;
        }
        total += 1;
        first.push((entry.file_name(), kind));
    }
    let kept: Vec<(OsString, EntryKind)> = first.into_sorted_vec();
    let entries = kept
        .into_iter()
        .map(|(name, kind)| {
            // lstat: a file swapped for a link since is not followed
            let size = match kind {
                EntryKind::File => dir
                    .symlink_metadata(&name)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len()),
                _ => None,
            };
            DirEntryInfo {
                name: name.to_string_lossy().into_owned(),
                kind,
                size,
            }
        })
        .collect();
    Ok(ListDirOutput {
        path: shown,
        entries,
        total_entries: total,
        truncated: total > MAX_ENTRIES as u64,
    })
}
