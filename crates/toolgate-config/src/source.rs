//! Reading a configuration file, bounded before anything parses it.
//!
//! The file is opened without blocking (`O_NONBLOCK`: a FIFO does not wait for a writer) and
//! what was opened is checked on its handle: a regular file (a link is followed to one; a
//! directory, FIFO, socket or device such as `/dev/zero` is refused unread), of at most
//! [`MAX_CONFIG_BYTES`] (read at most one byte past it, so a file growing under the read
//! cannot grow memory), in UTF-8. Each refusal is a problem at `1:1` saying what was found.
//! Inside the file, TOML's nesting is bounded by the `toml` parser's own recursion limit,
//! Cedar conditions by [`crate::cedar_shape`], and the rules by [`MAX_RULES`].

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest configuration file read: 1 MiB.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The most `[[rules]]` a configuration may hold. Each rule's patterns are compiled at load
/// and consulted on every call: 100,000 path rules took 20 s and 4 GB to load.
pub const MAX_RULES: usize = 1_000;

/// The text of the configuration at `file`.
///
/// # Errors
/// What is wrong, for a problem at 1:1: the file cannot be opened, is not a regular file,
/// is larger than [`MAX_CONFIG_BYTES`], or is not UTF-8.
pub(crate) fn read(file: &Path) -> Result<String, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .map_err(|e| format!("cannot read the configuration: {e}"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read the configuration: {e}"))?;
    let t = meta.file_type();
    let kind = if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    };
    if let Some(kind) = kind {
        return Err(format!(
            "the configuration is {kind}, not a regular file: give the path of a toolgate.toml"
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the configuration: {e}"))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the configuration is not UTF-8 text (an invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn too_large(len: u64) -> String {
    format!(
        "the configuration is {len} bytes or more, larger than the limit of {MAX_CONFIG_BYTES} \
         bytes (1 MiB)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bounded_regular_utf8_file_is_read() {
        let t = tempfile::tempdir().unwrap();
        let ok = t.path().join("ok.toml");
        std::fs::write(&ok, "[budgets]\nmax_calls = 3\n").unwrap();
        assert_eq!(read(&ok).unwrap(), "[budgets]\nmax_calls = 3\n");
        let link = t.path().join("link.toml");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(read(&link).is_ok(), "a link to a file is followed");
        let big = t.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let fifo = t.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let bad = t.path().join("bad.toml");
        std::fs::write(&bad, b"a = \"\xff\"\n").unwrap();
        for (path, says) in [
            (t.path().to_path_buf(), "a directory"),
            (fifo, "a FIFO"),
            (Path::new("/dev/zero").to_path_buf(), "a character device"),
            (
                Path::new("/dev/urandom").to_path_buf(),
                "a character device",
            ),
            (big, "larger than the limit"),
            (bad, "not UTF-8"),
            (t.path().join("missing.toml"), "cannot read"),
        ] {
            let e = read(&path).unwrap_err();
            assert!(e.contains(says), "{}: {e}", path.display());
        }
    }
}
