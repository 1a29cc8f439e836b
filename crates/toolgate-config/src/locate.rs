//! Finding the configuration file, and refusing one that must not be read.
//!
//! A configuration sets the policy the agent runs under, and the agent can reach the workspace
//! it lives in (run_shell writes there). So a file is read only when it is what it claims to
//! be, and a configuration that is not is an error, never "the defaults":
//!
//! - it must be a regular file, reached directly or through links (a directory, a FIFO that
//!   would block the read, a device, a socket are refused);
//! - a link must lead somewhere: a dangling link or a loop of links is refused;
//! - a configuration inside the workspace (the workspace's `toolgate.toml`, or a `--config`
//!   under the root) must stay inside it: a link out of the workspace is refused;
//! - without `--config`, no `toolgate.toml` in the root (not even a dangling link) is the
//!   defaults ([`Located::Absent`]). Whether that is what the operator wants is for the
//!   caller to tell apart (the `toolgate` binary remembers which configuration was in force).

use crate::problem::Problem;
use std::path::{Path, PathBuf};

/// Where the configuration of a workspace is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// No `--config` and no `toolgate.toml` (nor a link of that name) in the root.
    Absent,
    /// A file to read.
    File {
        /// The path as given (`--config`) or `<root>/toolgate.toml`.
        path: PathBuf,
        /// Where it leads: the canonical path of the regular file read.
        target: PathBuf,
        /// The target relative to the workspace root, when it lies inside the workspace.
        in_workspace: Option<PathBuf>,
    },
}

/// Finds the configuration of the workspace at `root`: `explicit` (`--config`) when given,
/// else `<root>/toolgate.toml` (see the module docs).
///
/// # Errors
/// One problem, at 1:1 of the file, saying what the file is and what to do instead: it does
/// not exist (for `--config`), is a dangling link or a loop, leads out of the workspace, or is
/// not a regular file.
pub fn locate(root: &Path, explicit: Option<&Path>) -> Result<Located, Problem> {
    let path = match explicit {
        Some(p) => absolute(p),
        None => root.join(crate::CONFIG_FILE),
    };
    let problem = |message: String| Problem {
        file: path.clone(),
        line: 1,
        column: 1,
        key: String::new(),
        message,
    };
    let link = match std::fs::symlink_metadata(&path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
            return Ok(Located::Absent)
        }
        Err(e) => return Err(problem(format!("cannot read the configuration: {e}"))),
    };
    let target = std::fs::canonicalize(&path).map_err(|e| {
        problem(if link {
            format!(
                "the configuration is a link that leads nowhere ({e}); toolgate does not fall \
                 back to its defaults: restore the file it named, or remove the link"
            )
        } else {
            format!("cannot read the configuration: {e}")
        })
    })?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let given_inside = path
        .parent()
        .and_then(|dir| std::fs::canonicalize(dir).ok())
        .is_some_and(|dir| dir.starts_with(&root));
    let in_workspace = target.strip_prefix(&root).ok().map(Path::to_path_buf);
    if given_inside && in_workspace.is_none() {
        return Err(problem(format!(
            "the configuration is a link that leads out of the workspace (to {}); a \
             configuration in the workspace must be a file in it",
            target.display()
        )));
    }
    let meta = std::fs::metadata(&target)
        .map_err(|e| problem(format!("cannot read the configuration: {e}")))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, a device or a socket)"
        };
        return Err(problem(format!(
            "the configuration is {what}; it must be a regular TOML file"
        )));
    }
    Ok(Located::File {
        path,
        target,
        in_workspace,
    })
}

/// `p` made absolute against the current directory (not resolved).
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Every shape of a configuration that is not a regular file in reach is refused with a
    /// problem naming it, never taken for the defaults.
    #[test]
    fn what_is_not_a_configuration_file_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(t.path().join("outside.toml"), "").unwrap();
        std::fs::write(root.join("sub/real.toml"), "").unwrap();
        let cfg = root.join("toolgate.toml");
        assert_eq!(locate(&root, None).unwrap(), Located::Absent);
        let cases: &[(&str, &dyn Fn(), &str)] = &[
            (
                "dangling",
                &|| symlink("nowhere.toml", &cfg).unwrap(),
                "leads nowhere",
            ),
            (
                "loop",
                &|| symlink("toolgate.toml", &cfg).unwrap(),
                "leads nowhere",
            ),
            (
                "out",
                &|| symlink("../outside.toml", &cfg).unwrap(),
                "leads out of the workspace",
            ),
            ("dir", &|| std::fs::create_dir(&cfg).unwrap(), "a directory"),
            (
                "fifo",
                &|| {
                    let c = std::ffi::CString::new(cfg.as_os_str().as_encoded_bytes()).unwrap();
                    rustix::fs::mknodat(
                        rustix::fs::CWD,
                        c.as_c_str(),
                        rustix::fs::FileType::Fifo,
                        rustix::fs::Mode::from_raw_mode(0o600),
                        0,
                    )
                    .unwrap();
                },
                "not a regular file",
            ),
            (
                "link to a dir",
                &|| symlink("sub", &cfg).unwrap(),
                "a directory",
            ),
        ];
        for (name, make, says) in cases {
            make();
            let p = locate(&root, None).expect_err(name);
            assert!(p.message.contains(says), "{name}: {}", p.message);
            assert_eq!(p.file, cfg, "{name}");
            let _ = std::fs::remove_file(&cfg).or_else(|_| std::fs::remove_dir(&cfg));
        }
        // a link inside the workspace is read where it leads
        symlink("sub/real.toml", &cfg).unwrap();
        match locate(&root, None).unwrap() {
            Located::File {
                target,
                in_workspace,
                ..
            } => {
                assert!(target.ends_with("sub/real.toml"));
                assert_eq!(in_workspace, Some(PathBuf::from("sub/real.toml")));
            }
            other => panic!("{other:?}"),
        }
        // --config: absent is an error; outside the workspace, a link is the operator's
        let p = locate(&root, Some(&root.join("missing.toml"))).unwrap_err();
        assert!(p.message.contains("cannot read"), "{}", p.message);
        symlink(t.path().join("outside.toml"), t.path().join("op.toml")).unwrap();
        assert!(matches!(
            locate(&root, Some(&t.path().join("op.toml"))).unwrap(),
            Located::File {
                in_workspace: None,
                ..
            }
        ));
        symlink("../../outside.toml", root.join("sub/out.toml")).unwrap();
        let p = locate(&root, Some(&root.join("sub/out.toml"))).unwrap_err();
        assert!(p.message.contains("leads out"), "{}", p.message);
    }
}
