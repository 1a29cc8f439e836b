//! Files for the sandbox modules' unit tests.

use std::path::Path;

/// Writes `x` to `rel` under `root`, creating the directories on the way.
pub(super) fn touch(root: &Path, rel: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "x").unwrap();
}
