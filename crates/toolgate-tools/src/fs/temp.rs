//! toolgate's own temporary files: their names, hiding them from the tools, and removing the
//! ones a crash left behind.
//!
//! [`super::atomic`] writes a file's new content to `.toolgate-<16 hex digits>.tmp` beside
//! it and renames that over the file. A process killed between the two leaves the temporary
//! file. So:
//!
//! - `list_dir`, `glob` and `search_code` never show a name of that exact shape
//!   ([`is_temp_name`]);
//! - [`sweep`] removes stale ones from the whole workspace (`toolgate serve` runs it when it
//!   starts, on a thread of its own), and every write sweeps the directory it writes in
//!   (`sweep_dir`), which also covers `toolgate call`.
//!
//! What a sweep removes: only entries whose name is exactly toolgate's temporary name, that
//! are regular files (looked at with `AT_SYMLINK_NOFOLLOW`; a link of that name is left
//! alone), and that were not modified for [`STALE_AFTER`] (a write in progress keeps its
//! temporary file for the seconds it takes to write and sync it). Directories are opened one
//! at a time from the workspace root's handle with `O_NOFOLLOW | O_DIRECTORY` and entries
//! removed with `unlinkat` relative to that handle, so no link leads a sweep out of the
//! workspace and nothing outside it is ever removed; `.git` and `.toolgate` are not entered.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, SystemTime};

/// How long a temporary file must have gone unmodified before a sweep removes it: 15 minutes.
pub const STALE_AFTER: Duration = Duration::from_secs(15 * 60);

/// Deepest directory a workspace sweep enters, below the root.
const MAX_DEPTH: usize = 256;

const PREFIX: &[u8] = b".toolgate-";
const SUFFIX: &[u8] = b".tmp";
const HEX_DIGITS: usize = 16;

/// A fresh temporary name, `.toolgate-<16 lowercase hex digits>.tmp`.
pub(crate) fn temp_name(random: u64) -> OsString {
    OsString::from(format!(".toolgate-{random:016x}.tmp"))
}

/// Whether `name` is exactly the shape of toolgate's temporary names (see `temp_name`).
pub fn is_temp_name(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.len() == PREFIX.len() + HEX_DIGITS + SUFFIX.len()
        && b.starts_with(PREFIX)
        && b.ends_with(SUFFIX)
        && b[PREFIX.len()..PREFIX.len() + HEX_DIGITS]
            .iter()
            .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Stale temporary files removed.
    pub removed: u64,
    /// Directories looked in.
    pub dirs: u64,
    /// Directories or files that could not be read or removed (skipped).
    pub errors: u64,
}

/// Removes the stale temporary files of the whole workspace whose root directory handle is
/// `root` (see the module docs), as of `now`. Never fails: what cannot be read is counted in
/// [`Swept::errors`] and skipped.
pub fn sweep(root: BorrowedFd<'_>, now: SystemTime) -> Swept {
    let mut swept = Swept::default();
    let Ok(top) = open_dir(root, OsStr::new(".")) else {
        swept.errors += 1;
        return swept;
    };
    let mut stack: Vec<(OwnedFd, usize)> = vec![(top, 0)];
    while let Some((dir, depth)) = stack.pop() {
        swept.dirs += 1;
        let subdirs = match sweep_entries(dir.as_fd(), now, &mut swept) {
            Ok(subdirs) => subdirs,
            Err(_) => {
                swept.errors += 1;
                continue;
            }
        };
        if depth >= MAX_DEPTH {
            continue;
        }
        for name in subdirs {
            match open_dir(dir.as_fd(), &name) {
                Ok(fd) => stack.push((fd, depth + 1)),
                // a link, or gone since: not entered
                Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {}
                Err(_) => swept.errors += 1,
            }
        }
    }
    swept
}

/// Removes the stale temporary files directly in the directory `dir` (a handle, `O_PATH` or
/// not), as of `now`; what a write runs in the directory it wrote in.
pub(crate) fn sweep_dir(dir: BorrowedFd<'_>, now: SystemTime) -> Swept {
    let mut swept = Swept {
        dirs: 1,
        ..Swept::default()
    };
    let result = open_dir(dir, OsStr::new(".")).and_then(|fd| {
        sweep_entries(fd.as_fd(), now, &mut swept)?;
        Ok(())
    });
    if result.is_err() {
        swept.errors += 1;
    }
    swept
}

/// Opens the directory `name` in `dir` for reading its entries, not following a link.
fn open_dir(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Removes the stale temporary files among `dir`'s entries; returns the names of the
/// subdirectories to sweep next (not `.git`, `.toolgate`, `.` or `..`; links are not
/// directories here).
fn sweep_entries(
    dir: BorrowedFd<'_>,
    now: SystemTime,
    swept: &mut Swept,
) -> Result<Vec<OsString>, Errno> {
    let mut subdirs = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let Ok(entry) = entry else {
            swept.errors += 1;
            break;
        };
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        let kind = entry.file_type();
        if is_temp_name(name) {
            if matches!(kind, FileType::RegularFile | FileType::Unknown) {
                match remove_if_stale(dir, name, now) {
                    Ok(true) => swept.removed += 1,
                    Ok(false) => {}
                    Err(_) => swept.errors += 1,
                }
            }
            continue;
        }
        let is_dir = match kind {
            FileType::Directory => true,
            FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory),
            _ => false,
        };
        if is_dir && ![".", "..", ".git", ".toolgate"].contains(&name.to_str().unwrap_or("")) {
            subdirs.push(name.to_os_string());
        }
    }
    Ok(subdirs)
}

/// Removes `name` from `dir` when it is a regular file (not followed) unmodified for
/// [`STALE_AFTER`] at `now`. Whether it was removed.
// the field types of `struct stat` differ between targets
#[allow(clippy::unnecessary_cast)]
fn remove_if_stale(dir: BorrowedFd<'_>, name: &OsStr, now: SystemTime) -> Result<bool, Errno> {
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(e),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Ok(false);
    }
    let mtime = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(
            u64::try_from(st.st_mtime as i64).unwrap_or(0),
        ))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    // a time in the future (a clock set back) is not stale
    if now
        .duration_since(mtime)
        .is_ok_and(|age| age >= STALE_AFTER)
    {
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) => {
                tracing::info!(name = %name.to_string_lossy(), "removed a stale temporary file");
                Ok(true)
            }
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e),
        }
    } else {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::fd::AsFd;
    use std::path::Path;

    fn age(path: &Path, by: Duration) {
        let t = SystemTime::now() - by;
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn only_the_exact_temporary_name_is_recognised() {
        assert!(is_temp_name(&temp_name(0)));
        assert!(is_temp_name(&temp_name(u64::MAX)));
        assert!(is_temp_name(OsStr::new(".toolgate-0123456789abcdef.tmp")));
        for other in [
            ".toolgate-0123456789ABCDEF.tmp",
            ".toolgate-0123456789abcde.tmp",
            ".toolgate-0123456789abcdef0.tmp",
            ".toolgate-0123456789abcdeg.tmp",
            "toolgate-0123456789abcdef.tmp",
            ".toolgate-0123456789abcdef.tmp.bak",
            ".toolgate",
            "",
        ] {
            assert!(!is_temp_name(OsStr::new(other)), "{other}");
        }
    }

    #[test]
    fn a_sweep_removes_stale_temporary_files_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        let outside = t.path().join("outside");
        for d in ["ws/a/b", "ws/.git", "ws/.toolgate", "outside"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let name = |i: u64| temp_name(i).into_string().unwrap();
        let stale = [ws.join(name(1)), ws.join("a/b").join(name(2))];
        let fresh = ws.join("a").join(name(3));
        let not_ours = ws.join(".toolgate-stale.tmp");
        let kept_dirs = [
            ws.join(".git").join(name(4)),
            ws.join(".toolgate").join(name(5)),
        ];
        let outside_file = outside.join(name(6));
        for p in stale
            .iter()
            .chain(&kept_dirs)
            .chain([&fresh, &not_ours, &outside_file])
        {
            std::fs::write(p, "partial").unwrap();
        }
        for p in stale
            .iter()
            .chain(&kept_dirs)
            .chain([&not_ours, &outside_file])
        {
            age(p, STALE_AFTER + Duration::from_secs(60));
        }
        // links with the temporary name, to a stale file outside and to a directory outside,
        // and a directory link: none followed, none removed
        let link = ws.join(name(7));
        std::os::unix::fs::symlink(&outside_file, &link).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("a/out")).unwrap();
        let dir_named = ws.join(name(8));
        std::fs::create_dir(&dir_named).unwrap();

        let root = File::open(&ws).unwrap();
        let swept = sweep(root.as_fd(), SystemTime::now());
        assert_eq!(swept.removed, 2, "{swept:?}");
        assert_eq!(swept.errors, 0, "{swept:?}");
        for p in &stale {
            assert!(!p.exists(), "{}", p.display());
        }
        for p in kept_dirs
            .iter()
            .chain([&fresh, &not_ours, &outside_file, &dir_named])
        {
            assert!(p.exists(), "{}", p.display());
        }
        assert!(link.symlink_metadata().is_ok());
        // a second sweep finds nothing left
        assert_eq!(sweep(root.as_fd(), SystemTime::now()).removed, 0);
        // the fresh one goes once it is stale too, from its own directory
        let a = File::open(ws.join("a")).unwrap();
        assert_eq!(sweep_dir(a.as_fd(), SystemTime::now()).removed, 0);
        let later = SystemTime::now() + STALE_AFTER + Duration::from_secs(1);
        assert_eq!(sweep_dir(a.as_fd(), later).removed, 1);
        assert!(!fresh.exists());
    }
}
