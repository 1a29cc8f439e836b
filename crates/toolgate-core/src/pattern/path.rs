//! [`PathPattern`]: a glob over canonical workspace-relative paths.

use super::{MatchMode, PatternError};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// A glob over canonical paths relative to the workspace root (globset syntax: `*` and `?`
/// stay within one component, `**` spans any number, `{a,b}` and `[ab]` as usual).
///
/// The conventions are gitignore's:
/// - a pattern without `/` matches a name at any depth (`.env` matches `.env` and
///   `app/.env`); a pattern with a `/` is anchored at the workspace root (`src/*.rs`), and a
///   leading `/` anchors a name too (`/.env` is only the root's);
/// - a pattern that matches a directory covers everything below it (`secrets` covers
///   `secrets/sub/key.pem`, `.git` covers `.git/config`); a trailing `/` is allowed.
///
/// Paths are the canonical paths the guard stage resolved (symlinks followed, no `.` or `..`),
/// so a pattern holds for every spelling of the same file: `innocent/key.pem` where
/// `innocent -> secrets/sub` is matched as `secrets/sub/key.pem`.
///
/// In [`MatchMode::Restrict`] the match also ignores ASCII and Unicode case, characters HFS+
/// ignores in names (U+200C to U+200F, U+202A to U+202E, U+206A to U+206F, U+FEFF) and trailing
/// dots and spaces of a component (which NTFS drops), so a deny holds for the spellings a
/// case-insensitive or alias-folding file system takes for the same entry.
#[derive(Debug, Clone)]
pub struct PathPattern {
    text: String,
    /// The glob and the glob of everything below it, for [`PathPatternSet`].
    globs: [globset::Glob; 2],
    set: globset::GlobSet,
    mode: MatchMode,
}

impl PathPattern {
    /// Parses a path glob (the text after `path:`).
    ///
    /// # Errors
    /// [`PatternError::Empty`], [`PatternError::Glob`] for a glob that does not parse,
    /// [`PatternError::PathNotCanonical`] for a pattern with a `.` or `..` component or a NUL
    /// (canonical paths have none, so it would never match).
    pub fn parse(text: &str, mode: MatchMode) -> Result<PathPattern, PatternError> {
        let original = text.trim();
        let anchored = original.starts_with('/');
        let body = original.trim_start_matches('/').trim_end_matches('/');
        let body = body.strip_prefix("./").unwrap_or(body);
        if body.is_empty() {
            return Err(PatternError::Empty { kind: "path" });
        }
        if body.contains('\0')
            || body
                .split('/')
                .any(|c| c == "." || c == ".." || c.is_empty())
        {
            return Err(PatternError::PathNotCanonical {
                pattern: original.to_string(),
            });
        }
        let base = if anchored || body.contains('/') || body.starts_with("**") {
            body.to_string()
        } else {
            format!("**/{body}")
        };
        let glob = |g: &str| {
            globset::GlobBuilder::new(g)
                .literal_separator(true)
                .case_insensitive(mode == MatchMode::Restrict)
                .backslash_escape(true)
                .build()
                .map_err(|e| PatternError::Glob {
                    pattern: original.to_string(),
                    message: e.kind().to_string(),
                })
        };
        let globs = [glob(&base)?, glob(&format!("{base}/**"))?];
        let set = globset::GlobSetBuilder::new()
            .add(globs[0].clone())
            .add(globs[1].clone())
            .build()
            .map_err(|e| PatternError::Glob {
                pattern: original.to_string(),
                message: e.to_string(),
            })?;
        Ok(PathPattern {
            text: original.to_string(),
            globs,
            set,
            mode,
        })
    }

    /// Whether the canonical workspace-relative path `rel` (`.` for the root) matches.
    pub fn matches(&self, rel: &Path) -> bool {
        match self.mode {
            MatchMode::Grant => self.set.is_match(rel),
            MatchMode::Restrict => self.set.is_match(fold(rel).as_ref()),
        }
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How the pattern matches.
    pub fn mode(&self) -> MatchMode {
        self.mode
    }
}

/// Many [`PathPattern`]s matched in one pass over a path: the globs of the
/// [`MatchMode::Restrict`] patterns in one [`globset::GlobSet`] (matched against the path
/// folded once) and those of the [`MatchMode::Grant`] patterns in another, so a policy of N
/// path rules costs two set matches per path instead of N. The answers are those of
/// [`PathPattern::matches`] for each pattern.
#[derive(Debug, Clone)]
pub struct PathPatternSet {
    restrict: globset::GlobSet,
    /// The pattern of each glob of `restrict`.
    restrict_owner: Vec<usize>,
    grant: globset::GlobSet,
    grant_owner: Vec<usize>,
    len: usize,
}

impl PathPatternSet {
    /// The set of `patterns`: the i-th item is pattern i, `None` a slot no path matches (so
    /// a policy can number the patterns by its rules).
    ///
    /// # Errors
    /// [`PatternError::Glob`] when globset cannot build the combined sets (a regex size
    /// limit); each pattern alone still matches with [`PathPattern::matches`].
    pub fn new<'a>(
        patterns: impl IntoIterator<Item = Option<&'a PathPattern>>,
    ) -> Result<PathPatternSet, PatternError> {
        let mut restrict = globset::GlobSetBuilder::new();
        let mut grant = globset::GlobSetBuilder::new();
        let (mut restrict_owner, mut grant_owner) = (Vec::new(), Vec::new());
        let mut len = 0;
        for (i, p) in patterns.into_iter().enumerate() {
            len = i + 1;
            let Some(p) = p else { continue };
            let (builder, owner) = match p.mode {
                MatchMode::Restrict => (&mut restrict, &mut restrict_owner),
                MatchMode::Grant => (&mut grant, &mut grant_owner),
            };
            for g in &p.globs {
                builder.add(g.clone());
                owner.push(i);
            }
        }
        let build = |b: globset::GlobSetBuilder| {
            b.build().map_err(|e| PatternError::Glob {
                pattern: "(the policy's path patterns together)".to_string(),
                message: e.to_string(),
            })
        };
        Ok(PathPatternSet {
            restrict: build(restrict)?,
            restrict_owner,
            grant: build(grant)?,
            grant_owner,
            len,
        })
    }

    /// How many slots the set numbers (the items given to [`PathPatternSet::new`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it numbers none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets bit `i` of `hits` (bit `i % 64` of word `i / 64`) for each pattern `i` that
    /// matches the canonical workspace-relative path `rel`; other bits are left as they are.
    /// `hits` holds at least `len().div_ceil(64)` words (bits past its end are not set).
    pub fn matches_into(&self, rel: &Path, hits: &mut [u64]) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let mut mark = |set: &globset::GlobSet, owner: &[usize], path: &Path, rare: bool| {
                if set.is_empty() {
                    return;
                }
                let candidate = globset::Candidate::new(path);
                // most paths match no restricting pattern (deny and ask rules): a match test
                // stops sooner than collecting every match
                if rare && !set.is_match_candidate(&candidate) {
                    return;
                }
                set.matches_candidate_into(&candidate, &mut scratch);
                for &g in scratch.iter() {
                    let i = owner[g];
                    if let Some(w) = hits.get_mut(i / 64) {
                        *w |= 1 << (i % 64);
                    }
                }
            };
            mark(
                &self.restrict,
                &self.restrict_owner,
                fold(rel).as_ref(),
                true,
            );
            mark(&self.grant, &self.grant_owner, rel, false);
        });
    }
}

impl PartialEq for PathPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.mode == other.mode
    }
}

impl Eq for PathPattern {}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `rel` with HFS+-ignorable characters removed and trailing dots and spaces of each component
/// dropped; borrowed when there is nothing to fold (the common case).
fn fold(rel: &Path) -> Cow<'_, Path> {
    let Some(s) = rel.to_str() else {
        return Cow::Borrowed(rel);
    };
    let needs = s.chars().any(is_hfs_ignorable)
        || s.split('/')
            .any(|c| c.len() > 1 && c != ".." && c.ends_with(['.', ' ']));
    if !needs {
        return Cow::Borrowed(rel);
    }
    let folded: Vec<String> = s
        .split('/')
        .map(|c| {
            let c: String = c.chars().filter(|ch| !is_hfs_ignorable(*ch)).collect();
            match c.trim_end_matches(['.', ' ']) {
                "" => c,
                t => t.to_string(),
            }
        })
        .collect();
    Cow::Owned(folded.join("/").into())
}

/// Code points HFS+ ignores when it compares names (git's `is_hfs_dotgit` list).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}
