//! `[store] path`: a store path is checked at load the way `serve` will use it, so `check`
//! does not accept a path `serve` cannot open, and no command creates a directory a path
//! names. Relative paths are from the workspace root.
//!
//! The path must name a file (not end in `/`, `.` or `..`) whose directory exists, is a
//! directory and can be written by this user (toolgate creates no directory for a store
//! given by path, a typo would otherwise create one anywhere, except the workspace's own
//! `.toolgate`, which it makes confined to the workspace); a file already there must be
//! a regular file this user can read and write, not a link (the store is opened without
//! following links), a directory or a device.

use crate::model::ConfigFile;
use crate::problem::{Locator, Problem, Seg};
use rustix::fs::Access;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path};

/// Adds a problem at `store.path` for each way the configured path cannot hold a store.
pub(crate) fn check(loc: &Locator<'_>, root: &Path, raw: &ConfigFile, problems: &mut Vec<Problem>) {
    let Some(text) = &raw.store.path else {
        return;
    };
    let at = [Seg::Key("store".into()), Seg::Key("path".into())];
    if let Err(message) = why_not(root, text) {
        problems.push(loc.at(&at, message));
    }
}

/// Why `text` (relative to `root`) cannot be a store path, if it cannot.
fn why_not(root: &Path, text: &str) -> Result<(), String> {
    if text.trim().is_empty() || text.contains('\0') {
        return Err("the store path must be a file path".into());
    }
    let path = Path::new(text);
    let names_a_file =
        !text.ends_with('/') && matches!(path.components().next_back(), Some(Component::Normal(_)));
    if !names_a_file {
        return Err(format!(
            "{text:?} does not name a file: give the store file's path, such as \
             \".toolgate/toolgate.db\""
        ));
    }
    let full = root.join(path);
    let dir = full.parent().unwrap_or(root);
    match std::fs::metadata(dir) {
        // the workspace's own state directory is made by toolgate, confined to the workspace
        Err(_) if dir == root.join(".toolgate") => return Ok(()),
        Err(_) => {
            return Err(format!(
                "the store's directory {} does not exist: create it first (toolgate creates no \
                 directory for a store given by path)",
                dir.display()
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(format!(
                "the store's directory {} is not a directory",
                dir.display()
            ))
        }
        Ok(_) => {}
    }
    match std::fs::symlink_metadata(&full) {
        Err(_) => {
            if !accessible(dir, Access::WRITE_OK | Access::EXEC_OK) {
                return Err(format!(
                    "this user cannot create the store in {}: choose a writable directory",
                    dir.display()
                ));
            }
        }
        Ok(m) => {
            let t = m.file_type();
            let kind = if t.is_symlink() {
                Some("a symbolic link (the store is opened without following links: give the path it points to)")
            } else if t.is_dir() {
                Some("a directory")
            } else if t.is_fifo() || t.is_socket() || t.is_char_device() || t.is_block_device() {
                Some("a FIFO, socket or device")
            } else {
                None
            };
            if let Some(kind) = kind {
                return Err(format!("{} is {kind}, not a store file", full.display()));
            }
            if !accessible(&full, Access::READ_OK | Access::WRITE_OK) {
                return Err(format!(
                    "this user cannot read and write {}",
                    full.display()
                ));
            }
        }
    }
    Ok(())
}

/// Whether this user may access `path` for `mode` (`access(2)`).
fn accessible(path: &Path, mode: Access) -> bool {
    rustix::fs::access(path, mode).is_ok()
}
