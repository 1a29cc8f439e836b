//! What an approval question shows of a call, and what a scoped answer to it grants: [`Asked`].
//!
//! The person answering approves what the question shows, so the question shows every
//! resource the call touches (every command a shell line runs, every path, every URL), each
//! in full, up to [`MAX_SHOWN`] lines of at most [`MAX_LINE_CHARS`] characters. When more
//! is left out, the question says how much, and only this one call can be approved: a
//! `session` or `always` answer is not offered.
//!
//! A scoped answer grants the tool for exactly the resources asked about, by the patterns that
//! name them ([`Asked::patterns`]): a path by itself (`path:/src/a.rs`, anchored, its glob
//! characters escaped; a directory with what lies below it), a command by all its words
//! (`command:python3 -m unittest`, which also covers the same command with more arguments,
//! never another command), a URL by its host (`host:api.example.com`). A later call is covered
//! only when every resource it touches matches one of them. What cannot be named exactly is
//! not granted beyond this call: a command word whose value is only known when it runs (`$X`,
//! `*.py`, `~`, `{a,b}`), a word with white space, the workspace root itself. A call that
//! touches no resource is granted as the whole tool, and the question says so.
//!
//! A call the policy cannot name (a shell line it cannot read with certainty: not
//! [`crate::ApprovalRequest::grantable`]) may run more than its resources show (`bash <<EOF`
//! shows only `bash`), so its question also shows the call's arguments in full
//! ([`Asked::text`]), within the same bounds, saying what is left out.

use crate::tool::ResolvedResource;

/// The most resource lines a question shows.
pub const MAX_SHOWN: usize = 200;
/// The longest resource line shown, in characters.
pub const MAX_LINE_CHARS: usize = 2000;
/// The most patterns one grant holds.
pub const MAX_PATTERNS: usize = 64;

/// What an approval question about one call shows, and what a scoped answer grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// One line per resource, in the call's order (`read src/a.rs`, `write out.txt`,
    /// `command cargo test -q`, `url https://example.com/x`), at most [`MAX_SHOWN`], each cut
    /// to [`MAX_LINE_CHARS`] characters (ending `...`). The text is as the call has it: escape
    /// it for the medium it is shown in.
    pub lines: Vec<String>,
    /// Resources past [`MAX_SHOWN`], not shown.
    pub not_shown: usize,
    /// Lines cut short.
    pub cut: usize,
    /// The resource patterns a `session` or `always` answer grants (empty: the call touches
    /// no resource, and the whole tool is granted), or why no such answer can be offered.
    pub patterns: Result<Vec<String>, String>,
    /// For a call the policy cannot name ([`Asked::of_request`] of a request that is not
    /// grantable): its arguments in full, one line per line of text, each top-level argument
    /// starting `name: ` (`command: bash <<EOF`, `touch pwned`, `EOF`); at most [`MAX_SHOWN`]
    /// lines, each cut to [`MAX_LINE_CHARS`] characters (ending `...`, counted in
    /// [`Asked::cut`]). Empty otherwise. As the call has it: redact and escape it for the
    /// medium it is shown in.
    pub text: Vec<String>,
    /// Lines of the arguments past [`MAX_SHOWN`], not shown in [`Asked::text`].
    pub text_not_shown: usize,
}

impl Asked {
    /// What the question `request` shows and may grant: [`Asked::of`] its resources, granting
    /// nothing beyond the call when the request is not grantable
    /// ([`crate::ApprovalRequest::grantable`]).
    pub fn of_request(request: &crate::ApprovalRequest<'_>) -> Asked {
        let mut asked = Asked::of(request.resources);
        if request.grantable {
            return asked;
        }
        if asked.patterns.is_ok() {
            asked.patterns = Err(format!(
                "the policy cannot name what this call does ({}), so only this call can be \
                 approved",
                request.rule
            ));
        }
        asked.show_text(request.arguments);
        asked
    }

    /// Fills [`Asked::text`] with `arguments` in full (see there).
    fn show_text(&mut self, arguments: &serde_json::Value) {
        let mut push = |line: String| {
            if self.text.len() == MAX_SHOWN {
                self.text_not_shown += 1;
            } else if line.chars().count() > MAX_LINE_CHARS {
                self.cut += 1;
                let mut short: String = line.chars().take(MAX_LINE_CHARS).collect();
                short.push_str("...");
                self.text.push(short);
            } else {
                self.text.push(line);
            }
        };
        let mut argument = |name: Option<&str>, v: &serde_json::Value| {
            let whole;
            let text = match v {
                serde_json::Value::String(s) => s.as_str(),
                other => {
                    whole = other.to_string();
                    whole.as_str()
                }
            };
            for (i, line) in text.split('\n').enumerate() {
                match name {
                    Some(name) if i == 0 => push(format!("{name}: {line}")),
                    _ => push(line.to_string()),
                }
            }
        };
        match arguments {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    argument(Some(k), v);
                }
            }
            other => argument(None, other),
        }
    }

    /// What a question about a call touching `resources` shows and may grant.
    pub fn of(resources: &[ResolvedResource]) -> Asked {
        let mut lines = Vec::new();
        let mut cut = 0;
        for r in resources.iter().take(MAX_SHOWN) {
            let line = line(r);
            if line.chars().count() > MAX_LINE_CHARS {
                cut += 1;
                let mut short: String = line.chars().take(MAX_LINE_CHARS).collect();
                short.push_str("...");
                lines.push(short);
            } else {
                lines.push(line);
            }
        }
        let not_shown = resources.len().saturating_sub(MAX_SHOWN);
        let patterns = if not_shown > 0 || cut > 0 {
            Err(format!(
                "the question cannot show everything the call touches ({}), so only this call \
                 can be approved",
                left_out(not_shown, cut)
            ))
        } else {
            patterns(resources)
        };
        Asked {
            lines,
            not_shown,
            cut,
            patterns,
            text: Vec::new(),
            text_not_shown: 0,
        }
    }

    /// Whether every resource (and every line of [`Asked::text`]) is shown in full.
    pub fn is_complete(&self) -> bool {
        self.not_shown == 0 && self.cut == 0 && self.text_not_shown == 0
    }

    /// The patterns a scoped answer grants, when one may be offered.
    pub fn scopable(&self) -> Option<&[String]> {
        self.patterns.as_deref().ok()
    }

    /// A sentence saying what is not shown (`3 more resources are not shown`), when anything
    /// is left out.
    pub fn left_out(&self) -> Option<String> {
        if self.is_complete() {
            return None;
        }
        let mut said = if self.not_shown > 0 || self.cut > 0 {
            left_out(self.not_shown, self.cut)
        } else {
            String::new()
        };
        if self.text_not_shown > 0 {
            if !said.is_empty() {
                said.push_str(", and ");
            }
            let n = self.text_not_shown;
            said.push_str(&format!(
                "{n} more {} of the call's arguments {} not shown",
                if n == 1 { "line" } else { "lines" },
                if n == 1 { "is" } else { "are" }
            ));
        }
        Some(said)
    }

    /// A sentence saying what a `session` or `always` answer covers for `tool`, or why it is
    /// not offered.
    pub fn coverage(&self, tool: &str) -> String {
        match &self.patterns {
            Ok(p) if p.is_empty() => format!(
                "a session or always approval covers every call of {tool} (this call touches \
                 no resource a grant could name)"
            ),
            Ok(p) => format!(
                "a session or always approval covers {tool} on {} only",
                p.join(", ")
            ),
            Err(why) => format!("a session or always approval is not offered: {why}"),
        }
    }
}

fn left_out(not_shown: usize, cut: usize) -> String {
    let plural = |n: usize, one: &str, many: &str| if n == 1 { one } else { many }.to_string();
    match (not_shown, cut) {
        (0, c) => format!("{c} {} cut short", plural(c, "line is", "lines are")),
        (n, 0) => format!(
            "{n} more {} not shown",
            plural(n, "resource is", "resources are")
        ),
        (n, c) => format!(
            "{n} more {} not shown and {c} {} cut short",
            plural(n, "resource is", "resources are"),
            plural(c, "line is", "lines are")
        ),
    }
}

/// A resource as one line of a question.
pub fn line(r: &ResolvedResource) -> String {
    match r {
        ResolvedResource::Path { path, access } => format!(
            "{} {}",
            match access {
                crate::Access::Read => "read",
                crate::Access::Write => "write",
            },
            path.display()
        ),
        ResolvedResource::Url(u) => format!("url {u}"),
        ResolvedResource::Command(c) => format!("command {c}"),
        ResolvedResource::PossibleCommand(c) => format!("may run command {c}"),
        ResolvedResource::Recipient(a) => format!("recipient {a}"),
    }
}

/// The patterns naming exactly `resources`, deduplicated, or why they cannot be named.
fn patterns(resources: &[ResolvedResource]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    // a command the call may run needs no grant (and none covers it)
    for r in resources.iter().filter(|r| !r.only_restricted()) {
        let p = pattern(r)?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.len() > MAX_PATTERNS {
        return Err(format!(
            "the call touches more than {MAX_PATTERNS} different resources"
        ));
    }
    Ok(out)
}

/// The pattern naming exactly `r` (see the module docs).
fn pattern(r: &ResolvedResource) -> Result<String, String> {
    match r {
        ResolvedResource::Path { path, .. } => {
            let rel = path.display();
            if rel.is_empty() || rel == "." {
                return Err("the call touches the workspace root itself".into());
            }
            if rel.contains(['\n', '\r']) {
                return Err(format!("the path {rel:?} cannot be named in a grant"));
            }
            Ok(format!("path:/{}", glob_escape(&rel)))
        }
        ResolvedResource::Command(line) => {
            let words = crate::pattern::split_command(line);
            if words.is_empty() {
                return Err("the call runs an empty command".into());
            }
            let program = words[0].rsplit('/').next().unwrap_or_default();
            if words.iter().any(|w| !nameable(w)) {
                return Err(format!(
                    "a command of `{program}` has a word a grant cannot name exactly (its value \
                     is only known when it runs, or it holds white space)"
                ));
            }
            let text = words.join(" ");
            if crate::redact::redact_str(&text).is_some() {
                return Err(format!(
                    "a command of `{program}` holds a secret, which a grant would keep"
                ));
            }
            Ok(format!("command:{text}"))
        }
        ResolvedResource::Url(u) => match url::Url::parse(u).ok().and_then(|u| {
            u.host_str()
                .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_string())
        }) {
            Some(host) if !host.is_empty() => Ok(format!("host:{host}")),
            _ => Err(format!("the URL {u:?} has no host a grant can name")),
        },
        ResolvedResource::PossibleCommand(_) => {
            Err("a command the call may run is not named in a grant".into())
        }
        ResolvedResource::Recipient(a) => {
            if a.contains(['*', '\n', '\r']) || a.chars().any(char::is_whitespace) {
                Err(format!("the recipient {a:?} cannot be named in a grant"))
            } else {
                Ok(format!("recipient:{a}"))
            }
        }
    }
}

/// Whether a command word can be named in a pattern as the very word that runs.
fn nameable(w: &str) -> bool {
    !w.is_empty()
        && !w.contains(|c: char| {
            c.is_whitespace() || matches!(c, '$' | '`' | '*' | '?' | '[' | '{' | '~' | '\\')
        })
}

/// `text` with glob metacharacters escaped.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grant::covers;
    use crate::{Access, Workspace};
    use pretty_assertions::assert_eq;

    fn cmd(c: &str) -> ResolvedResource {
        ResolvedResource::Command(c.into())
    }

    /// A grant made from what was asked covers the same call and calls of the same commands
    /// and paths, never another command or path.
    #[test]
    fn scoped_answers_grant_exactly_what_was_asked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/[x]")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let path = |p: &str, access| ResolvedResource::Path {
            path: ws.resolve(p).unwrap(),
            access,
        };
        let asked = [
            cmd("python3 -m unittest"),
            cmd("echo ok"),
            path("src/a.rs", Access::Write),
            path("src/[x]/b*.rs", Access::Read),
        ];
        let a = Asked::of(&asked);
        assert!(a.is_complete());
        let patterns = a.scopable().unwrap().to_vec();
        assert_eq!(
            patterns,
            [
                "command:python3 -m unittest",
                "command:echo ok",
                "path:/src/a.rs",
                "path:/src/\\[x\\]/b\\*.rs"
            ]
        );
        let covered =
            |resources: &[ResolvedResource]| covers("run_shell", &patterns, "run_shell", resources);
        assert!(covered(&asked));
        assert!(covered(&[cmd("python3 -m unittest -v")]));
        // a command the call may run is shown, and neither named nor needed by a grant
        let may = [
            cmd("./tool -q"),
            ResolvedResource::PossibleCommand("a b".into()),
        ];
        let a = Asked::of(&may);
        assert_eq!(a.lines[1], "may run command a b");
        assert_eq!(a.scopable().unwrap(), ["command:./tool -q"].as_slice());
        assert!(covered(&[cmd("echo ok"), path("src/a.rs", Access::Read)]));
        for other in [
            vec![cmd("rm -rf x")],
            vec![cmd("python3 -m unittest"), cmd("rm -rf x")],
            vec![cmd("python3 -c 'import os'")],
            vec![cmd("echo okx")],
            vec![path("src/b.rs", Access::Write)],
            vec![path("src/[x]/bb.rs", Access::Read)],
            vec![],
        ] {
            assert!(!covered(&other), "{other:?}");
        }
    }

    #[test]
    fn what_cannot_be_named_is_not_granted_beyond_the_call() {
        for line in [
            "ls $X",
            "cat *.py",
            "cp ~/a b",
            "echo {a,b}",
            "git commit -m 'a b'",
            "echo a\\\\b",
            "curl -u admin:hunter2 x",
            "export OPENAI_API_KEY=sk-proj-0123456789abcdef",
        ] {
            let a = Asked::of(&[cmd(line)]);
            assert!(a.scopable().is_none(), "{line}");
            assert!(a.coverage("run_shell").contains("not offered"), "{line}");
        }
        let a = Asked::of(&[]);
        assert_eq!(a.scopable(), Some(&[][..]));
        assert!(a.coverage("t").contains("every call of t"));
        let a = Asked::of(&[ResolvedResource::Url(
            "https://api.example.com/v1?x=1".into(),
        )]);
        assert_eq!(a.scopable().unwrap(), ["host:api.example.com"]);
    }

    /// A call the policy cannot name shows its arguments in full, line by line, so what the
    /// resources do not show (the body of `bash <<EOF`) is in the question; past the bounds
    /// the question says how many lines are left out. A nameable call shows only resources.
    #[test]
    fn a_call_the_policy_cannot_name_shows_its_arguments_in_full() {
        let spec = crate::ToolSpec::builder("run_shell").build().unwrap();
        let id = crate::CallId::from("c1");
        let mut body: Vec<String> = (0..40).map(|i| format!("echo {i}")).collect();
        body.push("touch pwned".into());
        let command = format!("bash <<EOF\n{}\nEOF", body.join("\n"));
        let args = serde_json::json!({"command": command, "timeout_ms": 5000});
        let resources = [cmd("bash")];
        let request = |arguments, grantable| crate::ApprovalRequest {
            tool: &spec,
            call_id: &id,
            session_id: "s1",
            profile: "default",
            arguments,
            resources: &resources,
            rule: "shell.uncertain",
            reason: "the command cannot be read with certainty",
            preview: None,
            grantable,
        };
        let a = Asked::of_request(&request(&args, false));
        assert_eq!(a.lines, ["command bash"]);
        assert_eq!(a.text.len(), 44, "{:?}", a.text);
        assert_eq!(a.text[0], "command: bash <<EOF");
        assert_eq!(a.text[41], "touch pwned");
        assert_eq!(a.text[42], "EOF");
        assert_eq!(a.text[43], "timeout_ms: 5000");
        assert!(a.is_complete() && a.scopable().is_none());
        assert!(a.coverage("run_shell").contains("shell.uncertain"));
        // a nameable call: its resources say everything
        let a = Asked::of_request(&request(&args, true));
        assert!(a.text.is_empty() && a.scopable().is_some());
        // past the bounds: every line up to the bound, each cut, and what is left out said
        let huge = format!(
            "{}\n{}",
            "y".repeat(MAX_LINE_CHARS + 1),
            "x\n".repeat(MAX_SHOWN + 5)
        );
        let args = serde_json::json!({ "command": huge });
        let a = Asked::of_request(&request(&args, false));
        assert_eq!(a.text.len(), MAX_SHOWN);
        assert!(a.text[0].ends_with("...") && a.cut == 1);
        assert_eq!(a.text_not_shown, 7);
        assert_eq!(
            a.left_out().unwrap(),
            "1 line is cut short, and 7 more lines of the call's arguments are not shown"
        );
    }

    /// A line of 21 harmless commands and `touch x` shows all 22; past the bounds the
    /// question says what is left out and offers only this call.
    #[test]
    fn every_resource_is_shown_or_the_question_says_what_is_not() {
        let mut line: Vec<ResolvedResource> = (0..21).map(|i| cmd(&format!("echo {i}"))).collect();
        line.push(cmd("touch x"));
        let a = Asked::of(&line);
        assert_eq!(a.lines.len(), 22);
        assert_eq!(a.lines[21], "command touch x");
        assert!(a.is_complete() && a.scopable().is_some());
        let many: Vec<ResolvedResource> = (0..MAX_SHOWN + 3)
            .map(|i| cmd(&format!("echo {i}")))
            .collect();
        let a = Asked::of(&many);
        assert_eq!((a.lines.len(), a.not_shown), (MAX_SHOWN, 3));
        assert_eq!(a.left_out().unwrap(), "3 more resources are not shown");
        assert!(a.scopable().is_none());
        let long = cmd(&format!("echo {}", "x".repeat(MAX_LINE_CHARS)));
        let a = Asked::of(&[long]);
        assert_eq!(a.cut, 1);
        assert!(a.lines[0].ends_with("..."));
        assert_eq!(a.left_out().unwrap(), "1 line is cut short");
        assert!(a.scopable().is_none());
    }
}
