//! `search_files`: workspace files by name and text content, age and kind, returned as
//! handles `send_email` can attach.
//!
//! The walk: from the workspace root, links never followed, hidden files and what
//! `.gitignore`/`.ignore` exclude left out; each file is kept only when the policy lets the
//! session read it ([`ToolContext::permits`]: protected paths and path rules hold as for
//! every file tool); contents are read through the workspace's directory handle, at most
//! [`MAX_CONTENT_BYTES`] of a file, only for text files. At most [`MAX_VISITED`] entries are
//! looked at and [`MAX_RESULTS`] returned.

use crate::handles::{FileHandle, Identity};
use crate::text::fold;
use crate::MailState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use toolgate_core::{
    Access, Effects, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool, Workspace,
};

/// Contents past this many bytes of a file are not searched (1 MiB).
pub const MAX_CONTENT_BYTES: u64 = 1 << 20;
/// At most this many directory entries are looked at.
pub const MAX_VISITED: usize = 50_000;
/// At most this many files are returned.
pub const MAX_RESULTS: usize = 50;

/// Arguments of `search_files`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesArgs {
    /// Text to find in file names, or in the content of text files (ignoring case and
    /// accents); empty matches every file (with `kind` or `modified_within`).
    #[schemars(length(max = 200))]
    pub query: String,
    /// Only files modified within this span before now, as `7d`, `36h`, `1week`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 40))]
    pub modified_within: Option<String>,
    /// Only files of this kind: an extension (`pdf`, `.xlsx`), a MIME type
    /// (`application/pdf`) or a MIME family (`image`, `text`, `application`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 100))]
    pub kind: Option<String>,
    /// At most this many files, most recently modified first (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// One file found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileInfo {
    /// The handle (`file_...`) to attach it with send_email, valid in this session while the
    /// file is unchanged.
    pub handle: String,
    /// The file's name.
    pub name: String,
    /// Its path relative to the workspace root (for the user; send_email takes the handle).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its MIME type, by its extension.
    #[serde(rename = "type")]
    pub mime_type: String,
    /// When it was last modified (RFC 3339, UTC).
    pub modified: String,
    /// Whether the query matched its content rather than its name.
    pub matched_content: bool,
}

/// The result of `search_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchFilesOutput {
    /// The files found, most recently modified first.
    pub files: Vec<FileInfo>,
    /// Whether more files matched than were returned, or the walk stopped at its limit.
    pub truncated: bool,
}

/// The `search_files` tool.
#[derive(Debug)]
pub struct SearchFiles(Arc<MailState>);

impl SearchFiles {
    pub(crate) fn new(state: Arc<MailState>) -> Self {
        SearchFiles(state)
    }
}

const DESCRIPTION: &str = "Find files in the workspace to attach to an email: by text in \
their name or (for text files) their content, by age (`modified_within`: \"7d\", \"36h\") and \
by kind (an extension such as \"pdf\", a MIME type, or a family such as \"image\"). Returns \
{files: [{handle, name, path, size, type, modified, matched_content}], truncated}, most recent \
first. Attach a file by sending its `handle` (file_...) in send_email's `attachments`; paths \
are refused there, and a handle works only in this session and only while the file is \
unchanged. Hidden and ignored files, and files the policy does not let you read, are not \
listed.";

impl TypedTool for SearchFiles {
    type Args = SearchFilesArgs;
    type Output = SearchFilesOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("search_files")
            .title("Search files")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("mail")
            .example(
                "Last week's analysis report",
                serde_json::json!({"query": "analysis", "modified_within": "7d", "kind": "pdf"}),
            )
    }

    fn guard(
        &self,
        args: &SearchFilesArgs,
        ctx: &ToolContext,
    ) -> Result<Vec<toolgate_core::Resource>, ToolError> {
        ctx.require_workspace()?;
        if let Some(span) = &args.modified_within {
            parse_span(span)?;
        }
        if let Some(kind) = &args.kind {
            KindFilter::parse(kind)?;
        }
        Ok(Vec::new())
    }

    async fn call(
        &self,
        args: SearchFilesArgs,
        ctx: ToolContext,
    ) -> Result<SearchFilesOutput, ToolError> {
        let ws = ctx.require_workspace()?.clone();
        let state = self.0.clone();
        tokio::task::spawn_blocking(move || search(&state, &ws, &args, &ctx))
            .await
            .map_err(|_| ToolError::internal("the file search stopped unexpectedly"))?
    }
}

fn parse_span(text: &str) -> Result<Duration, ToolError> {
    humantime::parse_duration(text.trim()).map_err(|e| {
        ToolError::invalid_input(format!(
            "modified_within {text:?} is not a span ({e}); send one such as \"7d\", \"36h\" or \
             \"2weeks\""
        ))
        .with_reason("invalid_span")
    })
}

/// The MIME families `kind` accepts (RFC 6838 section 4.2's top-level types).
const FAMILIES: [&str; 7] = [
    "text",
    "image",
    "audio",
    "video",
    "application",
    "font",
    "model",
];

/// What `kind` asks for, lower-cased: an extension, a MIME type or a MIME family.
enum KindFilter {
    Extension(String),
    Mime(String),
    Family(String),
}

impl KindFilter {
    /// Parses `kind`: a family (`image`), a MIME type of a family (`application/pdf`), or an
    /// extension with or without its dot (`pdf`, `.tar.gz` is `gz`): letters, digits, `_`,
    /// `+` and `-`, at most 16.
    ///
    /// # Errors
    /// `invalid_input` with reason `invalid_kind`, listing what is accepted.
    fn parse(kind: &str) -> Result<KindFilter, ToolError> {
        let k = kind.trim().trim_start_matches('.').to_ascii_lowercase();
        let token = |t: &str, max: usize| {
            !t.is_empty()
                && t.len() <= max
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.'))
                && t.starts_with(|c: char| c.is_ascii_alphanumeric())
        };
        let parsed = if let Some((family, sub)) = k.split_once('/') {
            (FAMILIES.contains(&family) && token(sub, 80)).then(|| KindFilter::Mime(k.clone()))
        } else if FAMILIES.contains(&k.as_str()) {
            Some(KindFilter::Family(k.clone()))
        } else {
            let ext = k.rsplit('.').next().unwrap_or("");
            let tokens = k.split('.').all(|t| token(t, 16) && !t.contains('.'));
            tokens.then(|| KindFilter::Extension(ext.to_string()))
        };
        parsed.ok_or_else(|| {
            ToolError::invalid_input(format!(
                "kind {kind:?} is not a file kind; send an extension (\"pdf\", \".xlsx\"), a \
                 MIME type (\"application/pdf\") or a MIME family ({}), or leave kind out",
                FAMILIES.join(", ")
            ))
            .with_reason("invalid_kind")
        })
    }

    fn matches(&self, path: &Path, mime: &str) -> bool {
        match self {
            KindFilter::Extension(e) => path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| x.eq_ignore_ascii_case(e)),
            KindFilter::Mime(m) => mime == m,
            KindFilter::Family(f) => mime.split('/').next() == Some(f.as_str()),
        }
    }
}

fn search(
    state: &MailState,
    ws: &Workspace,
    args: &SearchFilesArgs,
    ctx: &ToolContext,
) -> Result<SearchFilesOutput, ToolError> {
    let query = fold(&args.query);
    let since = match &args.modified_within {
        Some(s) => Some(SystemTime::now() - parse_span(s)?),
        None => None,
    };
    let kind = args.kind.as_deref().map(KindFilter::parse).transpose()?;
    let limit = args.limit.unwrap_or(20).clamp(1, MAX_RESULTS as u32) as usize;
    let root = ws.root().to_path_buf();
    let walker = ignore::WalkBuilder::new(&root)
        .follow_links(false)
        .hidden(true)
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .build();
    let mut found: Vec<(SystemTime, FileInfo, FileHandle)> = Vec::new();
    let mut visited = 0usize;
    let mut truncated = false;
    for entry in walker {
        if ctx.is_cancelled() {
            return Err(ToolError::new(
                toolgate_core::ErrorKind::Cancelled,
                "the search was cancelled",
            ));
        }
        visited += 1;
        if visited > MAX_VISITED {
            truncated = true;
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&root) else {
            continue;
        };
        if !ctx.permits(rel, Access::Read) {
            continue;
        }
        let Some(identity) = Identity::of(ws, rel) else {
            continue;
        };
        let Ok(meta) = ws.dir().symlink_metadata(rel) else {
            continue;
        };
        let modified = meta
            .modified()
            .map(|m| m.into_std())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if since.is_some_and(|s| modified < s) {
            continue;
        }
        let mime = mime_guess::from_path(rel)
            .first_or_octet_stream()
            .essence_str()
            .to_string();
        if kind.as_ref().is_some_and(|k| !k.matches(rel, &mime)) {
            continue;
        }
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let in_name = query.is_empty() || fold(&rel.to_string_lossy()).contains(&query);
        let in_content =
            !in_name && is_text(&mime) && content_matches(ws, rel, identity.size(), &query);
        if !in_name && !in_content {
            continue;
        }
        let info = FileInfo {
            handle: String::new(),
            name: name.clone(),
            path: rel.to_string_lossy().into_owned(),
            size: identity.size(),
            mime_type: mime.clone(),
            modified: humantime::format_rfc3339_seconds(modified).to_string(),
            matched_content: in_content,
        };
        let handle = FileHandle {
            session: ctx.session_id().to_string(),
            rel: rel.to_path_buf(),
            name,
            mime,
            identity,
        };
        found.push((modified, info, handle));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    if found.len() > limit {
        truncated = true;
        found.truncate(limit);
    }
    let files = found
        .into_iter()
        .map(|(_, mut info, handle)| {
            info.handle = state.handles.add_file(handle);
            info
        })
        .collect();
    Ok(SearchFilesOutput { files, truncated })
}

fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json" | "application/xml" | "application/toml" | "application/x-sh"
        )
}

/// Whether the first [`MAX_CONTENT_BYTES`] of the file, read through the workspace's handle
/// and taken as UTF-8, hold `query`.
fn content_matches(ws: &Workspace, rel: &Path, size: u64, query: &str) -> bool {
    let Ok(file) = ws.dir().open(rel) else {
        return false;
    };
    let mut bytes = Vec::with_capacity(size.min(MAX_CONTENT_BYTES) as usize);
    if file
        .into_std()
        .take(MAX_CONTENT_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return false;
    }
    fold(&String::from_utf8_lossy(&bytes)).contains(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_extensions_mime_types_or_families_and_nothing_else() {
        let ok = |k: &str| KindFilter::parse(k).is_ok();
        for good in [
            "pdf",
            ".PDF",
            "xlsx",
            "tar.gz",
            "image",
            "application/pdf",
            "text/x-c++",
        ] {
            assert!(ok(good), "{good}");
        }
        for bad in [
            "???",
            "",
            ".",
            "pdf files",
            "*.pdf",
            "foo/bar",
            "application/",
            "a/b/c",
        ] {
            let e = KindFilter::parse(bad).err().unwrap();
            assert_eq!(e.reason.as_deref(), Some("invalid_kind"), "{bad}");
            assert!(e.message.contains("image, audio, video"), "{}", e.message);
        }
        let gz = KindFilter::parse("tar.gz").unwrap();
        assert!(gz.matches(Path::new("a.tar.gz"), "application/gzip"));
    }
}
