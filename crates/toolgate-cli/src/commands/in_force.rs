//! Which configuration is in force in a workspace, remembered between runs, so one that
//! disappeared, was replaced by another file, or appeared where none was is refused instead of
//! silently changing the policy.
//!
//! The agent cannot write a configuration (tools refuse it, run_shell's sandbox binds it
//! read-only and pins its directory entry), but it can create `toolgate.toml` where there was
//! none, and a link to a configuration can be removed from the directory it lives in. So the
//! workspace's `.toolgate/configuration.json` (in toolgate's state directory, which no tool
//! reaches) records, for each configuration path (`toolgate.toml` for the workspace's own,
//! the absolute path of a `--config`), the file it led to when a call last ran, or `null` when
//! it ran on the defaults. A later `toolgate call` or `toolgate serve` refuses to run when:
//!
//! - the workspace ran on the defaults and a `toolgate.toml` appeared since;
//! - a configuration was in force and is gone;
//! - the path now leads to another file (a link changed or replaced).
//!
//! The operator says which configuration is meant with `toolgate check`, which validates it
//! and records it as in force (the defaults too, when there is no file). A change of the
//! file's content is not a change of configuration: the operator edits it in place.

use anyhow::Context;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use toolgate_config::Located;
use toolgate_core::Workspace;

/// The file, inside the workspace's `.toolgate`.
pub const MARKER: &str = "configuration.json";

/// What a configuration path led to when calls last ran: a canonical file, or `None` for the
/// defaults.
type Recorded = BTreeMap<String, Option<String>>;

/// The key of a configuration path in the record.
fn key(explicit: Option<&Path>, located: &Located) -> String {
    match (explicit, located) {
        (None, _) => toolgate_config::CONFIG_FILE.to_string(),
        (Some(_), Located::File { path, .. }) => path.display().to_string(),
        (Some(p), Located::Absent) => p.display().to_string(),
    }
}

fn target(located: &Located) -> Option<String> {
    match located {
        Located::Absent => None,
        Located::File { target, .. } => Some(target.display().to_string()),
    }
}

fn marker_path(workspace: &Workspace) -> PathBuf {
    workspace.root().join(".toolgate").join(MARKER)
}

/// The record, when there is one to read (a `.toolgate` that is a real directory).
fn read(workspace: &Workspace) -> anyhow::Result<Recorded> {
    let dir = workspace.root().join(".toolgate");
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        _ => return Ok(Recorded::new()),
    }
    let path = marker_path(workspace);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{} is damaged; remove it and run `toolgate check` to record the configuration \
                 in force",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Recorded::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Refuses a configuration that is not the one in force (see the module docs).
///
/// # Errors
/// What changed, and how the operator puts the configuration found in force.
pub fn check(
    workspace: &Workspace,
    explicit: Option<&Path>,
    located: &Located,
) -> anyhow::Result<()> {
    let recorded = read(workspace)?;
    let key = key(explicit, located);
    let Some(was) = recorded.get(&key) else {
        return Ok(());
    };
    let now = target(located);
    if *was == now {
        return Ok(());
    }
    let how = "if this is what you want, run `toolgate check` (it validates the configuration \
               and puts it in force)";
    anyhow::bail!(match (was, now) {
        (None, Some(now)) => format!(
            "{key} appeared (leading to {now}) since toolgate last ran on its defaults in this \
             workspace; a command an agent ran may have written it, so toolgate does not take \
             it as the policy: {how}"
        ),
        (Some(was), None) => format!(
            "the configuration {key} that was in force (leading to {was}) is gone; toolgate \
             does not fall back to its defaults: restore it, or {how}"
        ),
        (Some(was), Some(now)) => format!(
            "the configuration {key} now leads to {now} instead of {was}; toolgate does not \
             take a replaced configuration as the policy: restore it, or {how}"
        ),
        (None, None) => unreachable!("equal"),
    })
}

/// Records `located` as the configuration in force at `explicit` (`None`: the workspace's
/// own), creating `.toolgate` when absent. A workspace that cannot be written (the record
/// cannot be kept) is a warning, not an error: nothing there can be written by a tool either.
pub fn record(
    workspace: &Workspace,
    explicit: Option<&Path>,
    located: &Located,
) -> anyhow::Result<()> {
    let mut recorded = read(workspace)?;
    let key = key(explicit, located);
    let now = target(located);
    if recorded.get(&key) == Some(&now) {
        return Ok(());
    }
    recorded.insert(key, now);
    let dir = match workspace.state_dir(".toolgate") {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "cannot record the configuration in force");
            return Ok(());
        }
    };
    let text = serde_json::to_vec_pretty(&recorded)?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("writing {}", dir.join(MARKER).display()))?;
    tmp.write_all(&text)?;
    tmp.as_file().sync_all()?;
    tmp.persist(dir.join(MARKER))
        .with_context(|| format!("writing {}", dir.join(MARKER).display()))?;
    Ok(())
}
