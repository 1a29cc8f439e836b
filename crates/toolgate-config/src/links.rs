//! Deny and ask rules over paths that name a symbolic link cover what the link leads to.
//!
//! The policy matches a file tool's path as written and as the guard resolved it (links
//! followed), so `deny path:.env` refuses `read_file .env` where `.env -> config/prod.env`.
//! But the rule names the link, and the operator means what it holds: without more,
//! `read_file config/prod.env` (the same file under its own name) was served. So when the
//! configuration is loaded, the workspace is walked once for links a deny or ask rule's path
//! pattern matches (the link itself, or a path through a linked directory: `deny
//! path:keys/*.pem` where `keys -> vault/keys`), and for each one leading to another path in
//! the workspace the rule is repeated for that path ([`add_aliases`]), under the same label and
//! reason, so the refusal names the operator's rule.
//!
//! What it does not see: links made after the load (the next load sees them), and links
//! beyond the walk's bounds ([`MAX_ENTRIES`] entries, [`MAX_DEPTH`] levels, the directories
//! run_shell's protected-entry look skips too: `node_modules`, `target`, ...), logged when
//! reached. run_shell's sandbox covers what a named link leads to at each run on its own.

use crate::rules::CompiledRule;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use toolgate_core::pattern::{MatchMode, PathPattern, ResourcePattern};
use toolgate_core::Decision;

/// The most directory entries the walk reads.
pub(crate) const MAX_ENTRIES: usize = 100_000;
/// The deepest directory the walk reads, counted from the root (and through linked
/// directories).
pub(crate) const MAX_DEPTH: usize = 16;

/// Adds to `rules`, after each deny or ask rule over paths, the same rule over each path in
/// the workspace at `root` that a link its pattern matches leads to (see the module docs).
/// Does nothing (and walks nothing) when no such rule exists.
pub(crate) fn add_aliases(root: &Path, rules: &mut Vec<CompiledRule>) {
    let restricting: Vec<usize> = (0..rules.len())
        .filter(|&i| {
            rules[i].decision != Decision::Allow
                && matches!(rules[i].resource, Some(ResourcePattern::Path(_)))
        })
        .collect();
    if restricting.is_empty() {
        return;
    }
    let Ok(root) = std::fs::canonicalize(root) else {
        return;
    };
    let patterns: Vec<&PathPattern> = restricting
        .iter()
        .filter_map(|&i| match &rules[i].resource {
            Some(ResourcePattern::Path(p)) => Some(p),
            _ => None,
        })
        .collect();
    let found = aliased(&root, &patterns);
    if found.iter().all(Vec::is_empty) {
        return;
    }
    let mut out = Vec::with_capacity(rules.len() + found.iter().map(Vec::len).sum::<usize>());
    let mut next = restricting.iter().zip(found).peekable();
    for (i, rule) in std::mem::take(rules).into_iter().enumerate() {
        let extra = match next.peek() {
            Some((&at, _)) if at == i => next.next().map(|(_, targets)| targets),
            _ => None,
        };
        let template = extra
            .as_ref()
            .filter(|t| !t.is_empty())
            .map(|_| rule.clone());
        out.push(rule);
        let (Some(template), Some(targets)) = (template, extra) else {
            continue;
        };
        for target in targets {
            let Some(text) = target.to_str() else {
                continue;
            };
            let Ok(pattern) = PathPattern::parse(
                &format!("/{}", crate::rules::globset_escape(text)),
                MatchMode::Restrict,
            ) else {
                continue;
            };
            let mut alias = template.clone();
            alias.resource = Some(ResourcePattern::Path(pattern));
            alias.via_link = true;
            out.push(alias);
        }
    }
    *rules = out;
}

/// For each pattern, the workspace-relative canonical paths that links it matches lead to
/// (where the pattern does not match them already), each once.
fn aliased(root: &Path, patterns: &[&PathPattern]) -> Vec<Vec<PathBuf>> {
    let mut found: Vec<Vec<PathBuf>> = vec![Vec::new(); patterns.len()];
    let mut seen: Vec<HashSet<PathBuf>> = vec![HashSet::new(); patterns.len()];
    let mut entries = 0usize;
    // (the path as written under the root, its canonical path relative to the root, depth)
    let mut stack: Vec<(PathBuf, PathBuf, usize)> = vec![(PathBuf::new(), PathBuf::new(), 0)];
    let mut cut = false;
    while let Some((logical, real, depth)) = stack.pop() {
        let Ok(dir) = std::fs::read_dir(root.join(&real)) else {
            continue;
        };
        for entry in dir.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                cut = true;
                break;
            }
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let logical = logical.join(&name);
            let mut real = real.join(&name);
            let linked = kind.is_symlink();
            if linked {
                // where it leads, when that is inside the workspace
                let Ok(target) = std::fs::canonicalize(root.join(&real)) else {
                    continue;
                };
                let Ok(rel) = target.strip_prefix(root) else {
                    continue;
                };
                if rel.as_os_str().is_empty() {
                    continue;
                }
                real = rel.to_path_buf();
            }
            if logical != real {
                for (k, p) in patterns.iter().enumerate() {
                    if p.matches(&logical) && !p.matches(&real) && seen[k].insert(real.clone()) {
                        found[k].push(real.clone());
                    }
                }
            }
            let is_dir = if linked {
                root.join(&real).is_dir()
            } else {
                kind.is_dir()
            };
            let skipped = name
                .to_str()
                .is_some_and(|n| toolgate_tools::shell::SKIPPED_DIRS.contains(&n));
            // a linked directory inside the directory it is in would be walked without end
            let cycle = linked && logical_parent_reaches(&real, &logical);
            if is_dir && !skipped && !cycle {
                if depth + 1 > MAX_DEPTH {
                    cut = true;
                } else {
                    stack.push((logical, real, depth + 1));
                }
            }
        }
        if entries > MAX_ENTRIES {
            break;
        }
    }
    if cut {
        tracing::warn!(
            root = %root.display(),
            "looking for links that deny or ask rules name stopped at {MAX_ENTRIES} entries or \
             {MAX_DEPTH} levels: what links past that lead to is not covered by those rules"
        );
    }
    found
}

/// Whether the directory `real` (canonical, relative) is the root or an ancestor of the
/// canonical place of the link at `logical`, whose walk would then not end.
fn logical_parent_reaches(real: &Path, logical: &Path) -> bool {
    real.as_os_str().is_empty() || logical.starts_with(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn pattern(text: &str) -> PathPattern {
        PathPattern::parse(text, MatchMode::Restrict).unwrap()
    }

    #[test]
    fn links_a_pattern_names_lead_to_their_targets_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["config", "vault/keys", "src", "loop"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("config/prod.env"), "S").unwrap();
        std::fs::write(root.join("vault/keys/a.pem"), "K").unwrap();
        std::fs::write(root.join("vault/keys/readme"), "R").unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        symlink("config/prod.env", root.join(".env")).unwrap();
        symlink("vault/keys", root.join("keys")).unwrap();
        symlink("../src/main.rs", root.join("config/main.rs")).unwrap();
        symlink("/etc/hostname", root.join("outside")).unwrap();
        symlink("..", root.join("loop/up")).unwrap();
        symlink("nowhere", root.join("dangling.env")).unwrap();

        let (env, pem, outside, dangling) = (
            pattern(".env"),
            pattern("keys/*.pem"),
            pattern("outside"),
            pattern("*.env"),
        );
        let found = aliased(&root, &[&env, &pem, &outside, &dangling]);
        assert_eq!(found[0], vec![PathBuf::from("config/prod.env")]);
        assert_eq!(found[1], vec![PathBuf::from("vault/keys/a.pem")]);
        assert!(
            found[2].is_empty(),
            "a link out of the workspace: {found:?}"
        );
        // `*.env` matches config/prod.env itself already; the dangling link leads nowhere
        assert!(found[3].is_empty(), "{found:?}");
    }

    #[test]
    fn a_workspace_without_restricting_path_rules_is_not_walked() {
        let mut rules = Vec::new();
        add_aliases(Path::new("/nonexistent/for/sure"), &mut rules);
        assert!(rules.is_empty());
    }
}
