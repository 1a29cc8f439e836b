//! The Landlock ruleset of one run: what the command may read and write.
//!
//! Landlock can only grant: a process under a ruleset may do, beneath a directory, exactly
//! what some rule on that directory or one of its ancestors grants. So:
//!
//! - reads and execution are granted beneath `/`, except for the paths the configuration
//!   denies; a denied path is carved out by granting its siblings instead of its parent, on
//!   every level from `/` down ([`grant_except`], opened once: [`ReadGrants`]). The
//!   directories on the way to a denied path can then not be listed, but everything else in
//!   them can still be read;
//! - everything is granted beneath the workspace and beneath the run's private temporary
//!   directory, and writing (not creating) `/dev/null`, `/dev/zero` and `/dev/full`;
//! - nothing else: no write anywhere else on the file system.
//!
//! Paths inside the workspace that must stay read-only even while they do not exist yet
//! (`.toolgate`, `.git/hooks`, `.git/config`) cannot be carved out of a grant on the workspace
//! without also forbidding new files in the workspace root, so they are not handled here but
//! by read-only bind mounts in the run's private mount namespace (see `sandbox.rs`).
//!
//! Rights the kernel does not know (an older Landlock ABI) are left out (best effort); the
//! caller refuses to run when the ABI is older than [`MIN_ABI`].

use landlock::{
    Access, AccessFs, PathBeneath, PathFd, PathFdError, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetError, Scope, ABI,
};
use std::path::{Path, PathBuf};

/// The oldest Landlock ABI run_shell accepts: 3 (Linux 6.2), the first to control truncation.
pub const MIN_ABI: i32 = 3;

/// The newest ABI this code asks for; the kernel's own may be older.
const TARGET: ABI = ABI::V10;

/// What one run may touch.
#[derive(Debug, Default)]
pub(crate) struct FsRules<'a> {
    /// Directories (or files) beneath which everything is allowed.
    pub writable: Vec<PathBuf>,
    /// The read grants (opened once per configuration, see [`ReadGrants`]).
    pub reads: Option<&'a ReadGrants>,
}

/// The read grants on `/` with the denied paths carved out, as opened path descriptors: the
/// walk down to each denied path opens one descriptor per sibling on the way, so it is done
/// once per configuration and reused by every run (entries created later under a carved
/// directory are not readable until toolgate restarts).
#[derive(Debug, Default)]
pub(crate) struct ReadGrants {
    grants: Vec<(PathFd, landlock::BitFlags<AccessFs>)>,
}

impl ReadGrants {
    /// Opens the grants for `deny_read` (paths that do not exist are left out).
    pub(crate) fn new(deny_read: &[PathBuf]) -> ReadGrants {
        let deny: Vec<PathBuf> = deny_read
            .iter()
            .filter(|p| p.symlink_metadata().is_ok())
            .cloned()
            .collect();
        let mut grants = Vec::new();
        grant_except(
            &mut grants,
            Path::new("/"),
            &deny,
            AccessFs::from_read(TARGET),
            0,
        );
        ReadGrants { grants }
    }

    /// How many rules the grants add.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.grants.len()
    }
}

/// Why a ruleset could not be built.
#[derive(Debug)]
pub(crate) enum BuildError {
    /// The kernel or the landlock crate refused a rule.
    Ruleset(RulesetError),
    /// A writable path could not be opened.
    Path(PathBuf, PathFdError),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Ruleset(e) => write!(f, "{e}"),
            BuildError::Path(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl From<RulesetError> for BuildError {
    fn from(e: RulesetError) -> Self {
        BuildError::Ruleset(e)
    }
}

/// Builds the ruleset (in the parent; the child only applies it).
///
/// # Errors
/// A rule the kernel refuses, or a writable path that cannot be opened.
pub(crate) fn build(rules: &FsRules<'_>) -> Result<RulesetCreated, BuildError> {
    let all = AccessFs::from_all(TARGET);
    let file_write = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    let mut ruleset = Ruleset::default()
        .handle_access(all)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        .create()?;
    match rules.reads {
        Some(reads) => {
            for (fd, access) in &reads.grants {
                ruleset = ruleset.add_rule(PathBeneath::new(fd, *access))?;
            }
        }
        None => {
            let fd = PathFd::new("/").map_err(|e| BuildError::Path("/".into(), e))?;
            ruleset = ruleset.add_rule(PathBeneath::new(fd, AccessFs::from_read(TARGET)))?;
        }
    }
    for dir in &rules.writable {
        let fd = PathFd::new(dir).map_err(|e| BuildError::Path(dir.clone(), e))?;
        ruleset = ruleset.add_rule(PathBeneath::new(fd, all))?;
    }
    for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
        if let Ok(fd) = PathFd::new(dev) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, file_write | AccessFs::IoctlDev))?;
        }
    }
    Ok(ruleset)
}

/// The access bits granted on a fresh `/proc` mounted in the child: reading and executing,
/// all of ABI 1, so every kernel with Landlock handles them.
pub(crate) fn proc_access() -> u64 {
    AccessFs::from_read(ABI::V1).bits()
}

/// The access bits granted on the private `/dev/shm`: everything of ABI 3, the oldest ABI
/// run_shell uses, so the kernel handles every bit.
pub(crate) fn shm_access() -> u64 {
    AccessFs::from_all(ABI::V3).bits()
}

/// How deep [`grant_except`] descends towards a denied path.
const MAX_DEPTH: usize = 32;

/// Collects the grants of `access` beneath `root` except beneath every path of `excluded`:
/// when an excluded path lies under `root`, the entries of `root` are granted one by one
/// instead (recursively for the ones leading to an excluded path). Entries that cannot be
/// opened are skipped.
fn grant_except(
    out: &mut Vec<(PathFd, landlock::BitFlags<AccessFs>)>,
    root: &Path,
    excluded: &[PathBuf],
    access: landlock::BitFlags<AccessFs>,
    depth: usize,
) {
    let inside: Vec<PathBuf> = excluded
        .iter()
        .filter(|e| e.starts_with(root))
        .cloned()
        .collect();
    if inside.iter().any(|e| e == root) {
        return;
    }
    let is_dir = root.symlink_metadata().map(|m| m.is_dir()).unwrap_or(false);
    if inside.is_empty() || !is_dir || depth >= MAX_DEPTH {
        if let Ok(fd) = PathFd::new(root) {
            let access = if is_dir {
                access
            } else {
                access & AccessFs::from_file(TARGET)
            };
            out.push((fd, access));
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        grant_except(out, &entry.path(), &inside, access, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rulesets_build_with_and_without_carve_outs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/secret")).unwrap();
        std::fs::write(dir.path().join("a/file"), "x").unwrap();
        let reads = ReadGrants::new(&[dir.path().join("a/secret"), "/nonexistent/x".into()]);
        assert!(reads.len() > 1, "the carve-out grants siblings one by one");
        let rules = FsRules {
            writable: vec![dir.path().to_path_buf()],
            reads: Some(&reads),
        };
        assert!(build(&rules).is_ok());
        assert!(build(&FsRules::default()).is_ok());
        assert_eq!(
            ReadGrants::new(&[]).len(),
            1,
            "nothing denied: one grant on /"
        );
    }

    #[test]
    fn a_missing_writable_path_is_an_error() {
        let rules = FsRules {
            writable: vec!["/nonexistent/toolgate/ws".into()],
            reads: None,
        };
        assert!(build(&rules).is_err());
    }
}
