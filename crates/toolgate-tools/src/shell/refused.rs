//! Writes a run tried on the entries it had bound read-only, read from its output, and what
//! the model is told about them (`protected_refused` in the result).
//!
//! The sandbox binds every protected entry read-only (`binds.rs`), so a command that writes
//! one fails with the kernel's error: `git config user.name x` and `git submodule add` print
//! `could not write config file .git/config: Device or resource busy` (git renames its lock
//! file over the mount point), `echo {} > .vscode/settings.json` prints `Read-only file
//! system`. Nothing in that tells the model why, or that trying again cannot work. So each
//! stream is read once, as it arrives, by a [`RefusedScan`] beside its capture (the output
//! may be large: no second pass): a line holding a write error (`Device or resource busy`,
//! `Read-only file system`, `Permission denied`, `Operation not permitted`, or `EBUSY`,
//! `EROFS`, `EACCES`, `EPERM` as Node and others spell them) is split into words, and a word
//! that names a read-only entry of the run, or a path below one, makes a note
//! ([`ProtectedRefused`]): which entry, that toolgate binds it read-only during runs, and what
//! to do instead.
//!
//! A word is read as a path against the run's working directory (`cwd`), an absolute one
//! against the workspace root; one that leads nowhere there (`../.git/hooks/x` after a `cd`)
//! is matched by its end: its leading components must be the last components of an entry,
//! holding the entry's protected name (`.git/config` is an entry's end, `config` alone is
//! not). A line is looked at up to its first [`MAX_LINE`] bytes. A mere mention of an entry
//! (`echo .git/config`) gets no note, nor a refused write elsewhere (`/etc`, `/proc`).

use crate::fs::protected;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::sync::Arc;

/// The most bytes of one output line looked at (error messages are short).
pub const MAX_LINE: usize = 4096;

/// A write the sandbox refused on an entry the run had bound read-only (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProtectedRefused {
    /// The entry, relative to the workspace root (`.git/config`, `.vscode`).
    pub path: String,
    /// Why it is protected (as the write tools say), or that the configuration keeps it
    /// read-only.
    pub protected: String,
    /// The error the output showed: `EBUSY`, `EROFS`, `EACCES` or `EPERM`.
    pub error: String,
    /// What happened and what to do instead, for the model.
    pub note: String,
}

/// The entries a run has bound read-only, and where it starts.
#[derive(Debug, Default)]
pub(crate) struct Watched {
    /// Each entry's components, from the workspace root.
    entries: Vec<Vec<String>>,
    /// The workspace root on the host, as an absolute path with no trailing `/`.
    root: String,
    /// The run's working directory's components, from the root.
    cwd: Vec<String>,
}

impl Watched {
    /// `entries` (paths relative to the root, `/`-separated) of a run in `cwd` (relative to
    /// the root) of the workspace at `root`.
    pub(crate) fn new(entries: Vec<String>, root: &str, cwd: &str) -> Watched {
        Watched {
            entries: entries.iter().map(|e| components(e)).collect(),
            root: root.trim_end_matches('/').to_string(),
            cwd: components(cwd),
        }
    }

    /// The index of the entry `word` names (or names a path below), if any.
    fn entry_of(&self, word: &str) -> Option<usize> {
        let word = word.trim_end_matches('.');
        if word.is_empty() {
            return None;
        }
        let rel = if let Some(abs) = word.strip_prefix('/') {
            let under = abs.strip_prefix(self.root.trim_start_matches('/'))?;
            under.strip_prefix('/')?.to_string()
        } else {
            word.to_string()
        };
        if !word.starts_with('/') {
            let mut at = self.cwd.clone();
            if let Some(path) = resolve(&mut at, &rel) {
                if let Some(i) = self.under(&path) {
                    return Some(i);
                }
            }
        } else if let Some(path) = resolve(&mut Vec::new(), &rel) {
            return self.under(&path);
        }
        self.by_end(&rel)
    }

    /// The entry `path` (components from the root) is or lies below, the deepest one.
    fn under(&self, path: &[String]) -> Option<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.is_empty() && path.starts_with(e))
            .max_by_key(|(_, e)| e.len())
            .map(|(i, _)| i)
    }

    /// The entry whose last components begin `rel` (its leading `.` and `..` dropped), those
    /// components holding a protected name; the longest such match.
    fn by_end(&self, rel: &str) -> Option<usize> {
        let words: Vec<&str> = rel
            .split('/')
            .filter(|c| !c.is_empty())
            .skip_while(|c| matches!(*c, "." | ".."))
            .collect();
        if words.iter().any(|c| matches!(*c, "." | "..")) {
            return None;
        }
        let mut best: Option<(usize, usize)> = None;
        for (i, e) in self.entries.iter().enumerate() {
            for k in (1..=e.len().min(words.len())).rev() {
                let end = &e[e.len() - k..];
                let same = end.iter().zip(&words).all(|(a, b)| a == b);
                let named = (e.len() - k..e.len()).any(|j| {
                    let parent = j.checked_sub(1).map(|p| OsStr::new(&e[p]));
                    protected::protected_entry(parent, OsStr::new(&e[j])).is_some()
                });
                if same && named {
                    if best.is_none_or(|(_, bk)| k > bk) {
                        best = Some((i, k));
                    }
                    break;
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// The entry at `i`, as a path relative to the root.
    fn path(&self, i: usize) -> String {
        self.entries.get(i).map(|e| e.join("/")).unwrap_or_default()
    }
}

/// The components of a relative path (empty ones and `.` dropped).
fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

/// `rel` read from `at` (components from the root): `None` when it climbs above the root.
fn resolve(at: &mut Vec<String>, rel: &str) -> Option<Vec<String>> {
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                at.pop()?;
            }
            _ => at.push(c.to_string()),
        }
    }
    Some(std::mem::take(at))
}

/// The write errors looked for, as programs print them, and their names.
const ERRORS: [(&str, &str); 12] = [
    ("Device or resource busy", "EBUSY"),
    ("resource busy", "EBUSY"),
    ("EBUSY", "EBUSY"),
    ("Read-only file system", "EROFS"),
    ("read-only file system", "EROFS"),
    ("EROFS", "EROFS"),
    ("Permission denied", "EACCES"),
    ("permission denied", "EACCES"),
    ("EACCES", "EACCES"),
    ("Operation not permitted", "EPERM"),
    ("operation not permitted", "EPERM"),
    ("EPERM", "EPERM"),
];

/// The automaton that finds the texts of [`ERRORS`] (pattern `i` is `ERRORS[i].0`), built at
/// its first use.
fn error_texts() -> &'static aho_corasick::AhoCorasick {
    static TEXTS: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| {
        aho_corasick::AhoCorasick::new(ERRORS.iter().map(|(text, _)| text))
            .expect("a dozen short literal patterns build")
    })
}

/// Reads one output stream as it arrives, for refused writes on watched entries (see the
/// module docs): [`RefusedScan::push`] each chunk, [`RefusedScan::finish`] at the end.
#[derive(Debug)]
pub(crate) struct RefusedScan {
    watched: Arc<Watched>,
    /// The current line's first bytes (at most [`MAX_LINE`]).
    line: Vec<u8>,
    /// Each entry hit (its index) with the first error seen for it, in the order found.
    hits: Vec<(usize, &'static str)>,
}

impl RefusedScan {
    /// A scan for the entries of `watched`.
    pub(crate) fn new(watched: Arc<Watched>) -> RefusedScan {
        RefusedScan {
            watched,
            line: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// Reads the next bytes of the stream.
    ///
    /// One pass over the chunk for the error texts (an Aho-Corasick automaton built once):
    /// only the lines holding one, and the line the chunk goes on from the chunk before, are
    /// looked at further, so an output of millions of short lines costs a search, not a scan
    /// per line.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.watched.entries.is_empty() {
            return;
        }
        let Some(first) = memchr::memchr(b'\n', bytes) else {
            self.extend(bytes);
            return;
        };
        // the line in progress ends here
        self.extend(&bytes[..first]);
        self.scan_line();
        let rest = &bytes[first + 1..];
        let Some(last) = memchr::memrchr(b'\n', rest) else {
            self.extend(rest);
            return;
        };
        // the chunk's whole lines: those with an error text in their first MAX_LINE bytes
        let whole = &rest[..last];
        let mut next_line = 0;
        for m in error_texts().find_iter(whole) {
            if m.start() < next_line {
                continue;
            }
            let start = memchr::memrchr(b'\n', &whole[..m.start()]).map_or(0, |p| p + 1);
            let end =
                memchr::memchr(b'\n', &whole[m.start()..]).map_or(whole.len(), |p| m.start() + p);
            self.extend(&whole[start..end]);
            self.scan_line();
            next_line = end + 1;
        }
        // the last line goes on in the next chunk
        self.extend(&rest[last + 1..]);
    }

    /// Adds `part` to the current line, up to [`MAX_LINE`] bytes.
    fn extend(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// The entries hit, each with the first error seen for it, in the order found.
    pub(crate) fn finish(mut self) -> Vec<(usize, &'static str)> {
        self.scan_line();
        self.hits
    }

    fn scan_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        // the first error of the list that the line holds
        let error = error_texts()
            .find_overlapping_iter(&line)
            .map(|m| m.pattern().as_usize())
            .min()
            .map(|i| ERRORS[i].1);
        let Some(error) = error else {
            self.line = line;
            self.line.clear();
            return;
        };
        let text = String::from_utf8_lossy(&line);
        let delimiters = |c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | '`'
                        | ':'
                        | ','
                        | ';'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | '='
                )
        };
        for word in text.split(delimiters) {
            if let Some(i) = self.watched.entry_of(word) {
                if !self.hits.iter().any(|(h, _)| *h == i) {
                    self.hits.push((i, error));
                }
            }
        }
        self.line = line;
        self.line.clear();
    }
}

/// The notes for the hits of a run's scans (duplicates across them dropped, the first kept).
pub(crate) fn notes(
    watched: &Watched,
    hits: impl IntoIterator<Item = (usize, &'static str)>,
) -> Vec<ProtectedRefused> {
    let mut seen: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for (i, error) in hits {
        if seen.contains(&i) {
            continue;
        }
        seen.push(i);
        out.push(note(&watched.path(i), error));
    }
    out
}

/// The note for a write refused with `error` on the entry `path`.
fn note(path: &str, error: &str) -> ProtectedRefused {
    let parts = components(path);
    let named = (0..parts.len()).find_map(|j| {
        let parent = j.checked_sub(1).map(|p| OsStr::new(&parts[p]));
        protected::protected_entry(parent, OsStr::new(&parts[j]))
    });
    let in_git = parts.iter().any(|c| protected::is_git_name(OsStr::new(c)));
    let last = parts.last().map(String::as_str).unwrap_or_default();
    // the output is all that is seen: a line quoting such an error (a log, a file printed)
    // reads the same as the command's own, so the note says what it knows and no more
    let head = format!(
        "The output says writing `{path}` failed ({error}); if this command made that write \
         (not text it printed), this is why"
    );
    let note = if in_git && matches!(last, "config" | "config.worktree") {
        format!(
            "{head}: git's configuration, which can make git run programs, is bound read-only \
             during every run_shell run, so `git config`, `git remote add`, `git submodule \
             add`, `git branch --set-upstream-to` and the like fail there (a `git submodule \
             add` may have cloned the submodule and written `.gitmodules` before it failed: \
             check `git status`). Do not retry it or work around it: ask the user to run that \
             git command themselves, outside toolgate. A setting one command needs can be \
             given to it alone with `git -c key=value` (`git -c user.name=... commit`; \
             commits made in run_shell already carry the operator's identity)"
        )
    } else if (in_git && parts.iter().any(|c| c == "hooks")) || last == ".husky" {
        format!(
            "{head}: git hooks run code at the next git command, so toolgate binds them \
             read-only during every run_shell run (`npx husky install`, `pre-commit install`, \
             writing `.git/hooks/*` fail there). Do not retry it or work around it: ask the \
             user to install the hooks themselves, outside toolgate"
        )
    } else if let Some(why) = named {
        format!(
            "{head}: it is a protected path ({why}), which toolgate binds read-only during \
             every run_shell run, and write_file and edit_file refuse it too. Do not retry it \
             or work around it: tell the user what to change there and ask them to make the \
             change themselves, outside toolgate"
        )
    } else {
        format!(
            "{head}: toolgate's configuration keeps it read-only during every run_shell run \
             (a path it denies writing, or a protected entry's target), and the write tools \
             are denied it too. Change files elsewhere, or ask the user to make this change"
        )
    };
    ProtectedRefused {
        path: path.to_string(),
        protected: named
            .unwrap_or("a path toolgate's configuration keeps read-only")
            .to_string(),
        error: error.to_string(),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn watched(cwd: &str) -> Arc<Watched> {
        Arc::new(Watched::new(
            [
                ".git/config",
                ".git/hooks",
                ".vscode",
                "sub/.git/config",
                "app/.envrc",
                "docs/locked",
            ]
            .map(String::from)
            .to_vec(),
            "/w/ws",
            cwd,
        ))
    }

    /// The entries (paths) and errors `chunks`, read in that order, hit.
    fn scan(cwd: &str, chunks: &[&[u8]]) -> Vec<(String, &'static str)> {
        let w = watched(cwd);
        let mut s = RefusedScan::new(w.clone());
        for c in chunks {
            s.push(c);
        }
        s.finish()
            .into_iter()
            .map(|(i, e)| (w.path(i), e))
            .collect()
    }

    #[test]
    fn refused_writes_name_their_entry_wherever_the_line_is_cut() {
        let line: &[u8] =
            b"error: could not write config file .git/config: Device or resource busy\n";
        let want = vec![(".git/config".to_string(), "EBUSY")];
        assert_eq!(scan("", &[line]), want);
        // every cut of the line between two chunks
        for cut in 0..line.len() {
            assert_eq!(
                scan("", &[&line[..cut], &line[cut..]]),
                want,
                "cut at {cut}"
            );
        }
        // byte by byte
        let bytes: Vec<&[u8]> = line.chunks(1).collect();
        assert_eq!(scan("", &bytes), want);
        // the last line without its newline
        assert_eq!(scan("", &[&line[..line.len() - 1]]), want);
    }

    #[test]
    fn paths_are_read_against_the_working_directory_then_by_their_end() {
        /// The working directory, an output line, and the entries and errors it hits.
        type Row<'a> = (&'a str, &'a str, &'a [(&'a str, &'static str)]);
        let table: &[Row] = &[
            (
                "",
                "bash: .vscode/settings.json: Read-only file system",
                &[(".vscode", "EROFS")],
            ),
            (
                "",
                "touch: cannot touch '/w/ws/.vscode/x': Read-only file system",
                &[(".vscode", "EROFS")],
            ),
            (
                "",
                "cp: cannot create regular file './.git/hooks/pre-commit': Permission denied",
                &[(".git/hooks", "EACCES")],
            ),
            (
                "sub",
                "error: could not write config file .git/config: Device or resource busy",
                &[("sub/.git/config", "EBUSY")],
            ),
            (
                "app",
                "bash: ../.git/hooks/x: Read-only file system",
                &[(".git/hooks", "EROFS")],
            ),
            (
                "app",
                "bash: .envrc: Read-only file system",
                &[("app/.envrc", "EROFS")],
            ),
            (
                "",
                "Error: EROFS: read-only file system, open '.vscode/settings.json'",
                &[(".vscode", "EROFS")],
            ),
            (
                "",
                "PermissionError: [Errno 1] Operation not permitted: '.vscode/a'",
                &[(".vscode", "EPERM")],
            ),
            (
                "",
                "rm: cannot remove 'docs/locked/a': Read-only file system",
                &[("docs/locked", "EROFS")],
            ),
            // the end of a path that leads nowhere from the working directory
            (
                "app",
                "could not write config file ../../sub/.git/config: Device or resource busy",
                &[("sub/.git/config", "EBUSY")],
            ),
            (
                "app",
                "could not write config file ../../x/.git/config: Device or resource busy",
                &[],
            ),
            // mentions without an error, errors elsewhere, ends without a protected name
            ("", "wrote .git/config and .vscode/settings.json", &[]),
            ("", "touch: cannot touch '/etc/x': Permission denied", &[]),
            (
                "",
                "touch: cannot touch '/w/wsx/.vscode/x': Read-only file system",
                &[],
            ),
            (
                "",
                "could not write config file config: Device or resource busy",
                &[],
            ),
            ("", "bash: locked/a: Read-only file system", &[]),
            ("", "bash: ../../../.git: Read-only file system", &[]),
        ];
        for (cwd, line, want) in table {
            let want: Vec<(String, &str)> = want.iter().map(|(p, e)| (p.to_string(), *e)).collect();
            let got = scan(cwd, &[line.as_bytes(), b"\n"]);
            assert_eq!(got, want, "{cwd:?}: {line}");
        }
        // each entry once, with the first error seen for it
        assert_eq!(
            scan(
                "",
                &[b"a .vscode/x: Permission denied\nb .vscode/y: EROFS\nc .git/config: EBUSY\n"]
            ),
            [
                (".vscode".to_string(), "EACCES"),
                (".git/config".to_string(), "EBUSY")
            ]
        );
    }

    #[test]
    fn lines_among_many_are_found_however_the_output_is_cut() {
        let mut out = b"a\n\nEPERM elsewhere\n".repeat(40);
        out.extend_from_slice(b"cp: x .vscode/a: EPERM, Permission denied\n");
        out.extend_from_slice(&b"more\n\n".repeat(40));
        out.extend_from_slice(b"touch .git/hooks/h: Read-only file system");
        // the first error of the list the line holds, not the first in the line
        let want = vec![
            (".vscode".to_string(), "EACCES"),
            (".git/hooks".to_string(), "EROFS"),
        ];
        assert_eq!(scan("", &[&out]), want);
        for cut in 0..out.len() {
            let (a, b) = out.split_at(cut);
            assert_eq!(scan("", &[a, b]), want, "cut at {cut}");
            let (b, c) = b.split_at(b.len() / 2);
            assert_eq!(scan("", &[a, b, c]), want, "cuts at {cut} and after");
        }
        let bytes: Vec<&[u8]> = out.chunks(7).collect();
        assert_eq!(scan("", &bytes), want);
    }

    #[test]
    fn long_lines_are_read_up_to_their_first_bytes() {
        let mut long = b"bash: .vscode/x: Read-only file system ".to_vec();
        long.resize(MAX_LINE * 4, b'x');
        long.push(b'\n');
        assert_eq!(scan("", &[&long]), [(".vscode".to_string(), "EROFS")]);
        let mut late = vec![b'x'; MAX_LINE];
        late.extend_from_slice(b" bash: .vscode/x: Read-only file system\n");
        assert_eq!(scan("", &[&late]), []);
        let empty = RefusedScan::new(Arc::new(Watched::default()));
        assert_eq!(empty.finish(), []);
    }

    #[test]
    fn each_kind_of_entry_gets_its_advice() {
        let w = watched("");
        let got = notes(
            &w,
            [
                (0, "EBUSY"),
                (1, "EROFS"),
                (2, "EROFS"),
                (5, "EACCES"),
                (0, "EROFS"),
            ],
        );
        let paths: Vec<(&str, &str)> = got
            .iter()
            .map(|n| (n.path.as_str(), n.error.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                (".git/config", "EBUSY"),
                (".git/hooks", "EROFS"),
                (".vscode", "EROFS"),
                ("docs/locked", "EACCES"),
            ]
        );
        for (n, said) in
            got.iter()
                .zip(["git -c", "install the hooks", "write_file", "configuration"])
        {
            assert!(n.note.contains(said), "{said:?} missing from {:?}", n.note);
            assert!(n.note.contains(&format!("`{}`", n.path)), "{:?}", n.note);
            // only the output is seen: a quoted error (a log printed) reads the same, so the
            // note claims no more than the output shows
            assert!(
                n.note.starts_with("The output says writing")
                    && n.note.contains("if this command made that write"),
                "{:?}",
                n.note
            );
        }
        assert_eq!(got[0].protected, "git internals (.git)");
    }
}
