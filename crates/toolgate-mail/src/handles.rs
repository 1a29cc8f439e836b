//! Handles: what `search_files` and `generate_email_draft` give out, and the only way
//! `send_email` takes an attachment or a draft.
//!
//! A handle (`file_` or `draft_` and 16 random hex digits) is bound to the session that got
//! it: another session's handle is refused as if it were unknown to it, so a model cannot
//! attach a file it was never shown. A file handle is also bound to the file's identity when
//! it was given out (device, inode, size, modification time and status-change time, read
//! without following a link): a file changed, replaced or swapped for a link since is refused
//! as stale, so what is sent is what was found. The status-change time (`st_ctime`) is set by
//! the kernel on every write and cannot be set back by the file's owner, so a change whose
//! modification time was restored (`touch -d`, `utimes`) is stale too. A file with more than
//! one hard link has no identity (its other names may be outside the workspace or under a
//! denied path) unless the operator lets such files be read there (`[files]
//! read_hard_links`), the rule `read_file` and `search_code` follow. At most [`MAX_HANDLES`]
//! of each kind are kept; the oldest go first.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use toolgate_core::{ToolError, Workspace};

/// At most this many file handles and this many draft handles are kept.
pub const MAX_HANDLES: usize = 10_000;

/// What a file was when its handle was given out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    /// The identity of the regular file at `rel` (relative to the workspace root), read
    /// without following a link; `None` for a link, a directory, a device, a missing file, or
    /// a file with more than one hard link where the workspace does not read such files
    /// ([`Workspace::reads_hard_link`]).
    pub fn of(ws: &Workspace, rel: &Path) -> Option<Identity> {
        let meta = ws.dir().symlink_metadata(rel).ok()?;
        Identity::of_metadata(ws, rel, &meta)
    }

    /// The identity of `rel` from metadata already read (by `symlink_metadata`, or by `fstat`
    /// on a handle opened without following a link); `None` as for [`Identity::of`].
    pub fn of_metadata(
        ws: &Workspace,
        rel: &Path,
        meta: &cap_std::fs::Metadata,
    ) -> Option<Identity> {
        use cap_std::fs::MetadataExt;
        if !meta.is_file() || (meta.nlink() > 1 && !ws.reads_hard_link(rel)) {
            return None;
        }
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A file a session was given a handle to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHandle {
    /// The session it was given to.
    pub session: String,
    /// The file, relative to the workspace root.
    pub rel: PathBuf,
    /// The file's name (its last component).
    pub name: String,
    /// Its MIME type, by its extension.
    pub mime: String,
    /// What it was.
    pub identity: Identity,
}

/// A draft a session composed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    /// The session it was composed in.
    pub session: String,
    /// The recipients it was written for.
    pub to: Vec<String>,
    /// Its subject.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body (its text escaped).
    pub html: String,
}

/// The handles given out, shared by the tools of one toolset.
#[derive(Debug, Default)]
pub struct Handles {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    files: HashMap<String, FileHandle>,
    file_order: VecDeque<String>,
    drafts: HashMap<String, Draft>,
    draft_order: VecDeque<String>,
    /// SHA-256 of files' contents by what the file was when read.
    digests: HashMap<(PathBuf, Identity), [u8; 32]>,
}

fn new_id(prefix: &str) -> String {
    let n: u64 = rand::random();
    format!("{prefix}{n:016x}")
}

impl Handles {
    /// Gives out a handle to `file`.
    pub fn add_file(&self, file: FileHandle) -> String {
        let id = new_id("file_");
        let mut g = self.inner.lock();
        if g.file_order.len() >= MAX_HANDLES {
            if let Some(old) = g.file_order.pop_front() {
                g.files.remove(&old);
            }
        }
        g.files.insert(id.clone(), file);
        g.file_order.push_back(id.clone());
        id
    }

    /// Gives out a handle to `draft`.
    pub fn add_draft(&self, draft: Draft) -> String {
        let id = new_id("draft_");
        let mut g = self.inner.lock();
        if g.draft_order.len() >= MAX_HANDLES {
            if let Some(old) = g.draft_order.pop_front() {
                g.drafts.remove(&old);
            }
        }
        g.drafts.insert(id.clone(), draft);
        g.draft_order.push_back(id.clone());
        id
    }

    /// The file behind handle `id` for `session`, checked against the file as it is now in
    /// `ws`.
    ///
    /// # Errors
    /// `invalid_input` with reason `not_a_handle` (a path or anything not `file_...`),
    /// `unknown_handle` (never given out, or evicted), `foreign_handle` (given to another
    /// session) or `stale_handle` (the file changed, was replaced or removed since).
    pub fn file(&self, id: &str, session: &str, ws: &Workspace) -> Result<FileHandle, ToolError> {
        if !id.starts_with("file_") {
            return Err(ToolError::invalid_input(format!(
                "attachment {id:?} is not a file handle: attachments are handles (file_...) that \
                 search_files gave this session, never paths; call search_files to find the \
                 file and send its handle"
            ))
            .with_reason("not_a_handle"));
        }
        let handle = self.inner.lock().files.get(id).cloned();
        let handle = match handle {
            Some(h) if h.session == session => h,
            Some(_) => {
                return Err(ToolError::invalid_input(format!(
                    "file handle {id} was not given to this session; call search_files here and \
                     send the handle it returns"
                ))
                .with_reason("foreign_handle"))
            }
            None => {
                return Err(ToolError::invalid_input(format!(
                    "no file handle {id} was given out (or it expired); call search_files and \
                     send a handle it returns"
                ))
                .with_reason("unknown_handle"))
            }
        };
        if Identity::of(ws, &handle.rel) != Some(handle.identity) {
            return Err(ToolError::invalid_input(format!(
                "file handle {id} ({}) is stale: the file was changed, replaced or removed \
                 since search_files found it; call search_files again and send the new handle",
                handle.name
            ))
            .with_reason("stale_handle"));
        }
        Ok(handle)
    }

    /// SHA-256 of the content of `file`'s file, read through the workspace's handle (once per
    /// file as it is: kept while the file is unchanged, for at most [`MAX_HANDLES`] files).
    ///
    /// # Errors
    /// `invalid_input` with reason `stale_handle` when the file is not what the handle was
    /// given for (before or after the read); an I/O error reading it.
    pub fn digest(&self, ws: &Workspace, file: &FileHandle) -> Result<[u8; 32], ToolError> {
        use sha2::{Digest, Sha256};
        let key = (file.rel.clone(), file.identity);
        if let Some(d) = self.inner.lock().digests.get(&key) {
            return Ok(*d);
        }
        let stale = || {
            ToolError::invalid_input(format!(
                "the file {} changed since search_files found it; call search_files again and \
                 send the new handle",
                file.name
            ))
            .with_reason("stale_handle")
        };
        if Identity::of(ws, &file.rel) != Some(file.identity) {
            return Err(stale());
        }
        let io = |e: std::io::Error| toolgate_core::workspace::io_error(&file.name, &e);
        let mut reader = ws.dir().open(&file.rel).map_err(io)?.into_std();
        let mut hasher = Sha256::new();
        let read = std::io::copy(
            &mut std::io::Read::take(&mut reader, file.identity.size() + 1),
            &mut hasher,
        )
        .map_err(io)?;
        if read != file.identity.size() || Identity::of(ws, &file.rel) != Some(file.identity) {
            return Err(stale());
        }
        let digest: [u8; 32] = hasher.finalize().into();
        let mut g = self.inner.lock();
        if g.digests.len() >= MAX_HANDLES {
            g.digests.clear();
        }
        g.digests.insert(key, digest);
        Ok(digest)
    }

    /// The draft behind handle `id` for `session`.
    ///
    /// # Errors
    /// `invalid_input` with reason `unknown_handle` or `foreign_handle`.
    pub fn draft(&self, id: &str, session: &str) -> Result<Draft, ToolError> {
        match self.inner.lock().drafts.get(id) {
            Some(d) if d.session == session => Ok(d.clone()),
            Some(_) => Err(ToolError::invalid_input(format!(
                "draft handle {id} was not given to this session; call generate_email_draft \
                 here and send the handle it returns"
            ))
            .with_reason("foreign_handle")),
            None => Err(ToolError::invalid_input(format!(
                "no draft handle {id} was given out (or it expired); call generate_email_draft \
                 and send the handle it returns, or send `body` instead"
            ))
            .with_reason("unknown_handle")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_handles_are_bound_to_their_session_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("report.pdf"), b"%PDF-1.4 one").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let rel = PathBuf::from("report.pdf");
        let h = Handles::default();
        let id = h.add_file(FileHandle {
            session: "s1".into(),
            rel: rel.clone(),
            name: "report.pdf".into(),
            mime: "application/pdf".into(),
            identity: Identity::of(&ws, &rel).unwrap(),
        });
        assert!(id.starts_with("file_") && id.len() == 21);
        assert_eq!(h.file(&id, "s1", &ws).unwrap().name, "report.pdf");
        let reason = |r: Result<FileHandle, ToolError>| r.unwrap_err().reason.unwrap().to_string();
        assert_eq!(reason(h.file(&id, "s2", &ws)), "foreign_handle");
        assert_eq!(
            reason(h.file("file_0000000000000000", "s1", &ws)),
            "unknown_handle"
        );
        assert_eq!(reason(h.file("report.pdf", "s1", &ws)), "not_a_handle");
        // replaced by another file of the same size: a new inode
        std::fs::write(dir.path().join("other.pdf"), b"%PDF-1.4 two").unwrap();
        std::fs::rename(dir.path().join("other.pdf"), dir.path().join("report.pdf")).unwrap();
        assert_eq!(reason(h.file(&id, "s1", &ws)), "stale_handle");
    }
}
