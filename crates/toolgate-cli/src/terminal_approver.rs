//! The approver of `toolgate call` at a terminal: the question and the answer go through the
//! controlling terminal (`/dev/tty`), never stdin, which may carry data.
//!
//! The question shows the tool, the rule that asked and why, every resource the call touches
//! (every command a shell line runs, every path: [`Asked`], secrets redacted), for a call the
//! policy cannot name (a shell line it cannot read with certainty) the call's arguments in
//! full, one `call:` line per line ([`Asked::text`]), what a
//! `session` or `always` answer would cover, a summary of its arguments (secrets redacted,
//! each value cut to [`MAX_VALUE_CHARS`], at most [`MAX_ARGUMENT_LINES`] lines) and, when the
//! tool gives one, what the call would change (a unified diff for `write_file` and
//! `edit_file`, at most [`MAX_PREVIEW_LINES`] lines). Everything that came from the model is
//! escaped ([`escape`]): control characters, ANSI escape sequences and bidirectional overrides
//! are shown as `\u{..}`, so arguments cannot redraw or forge the prompt. The answers:
//!
//! - `y` approves this call (once); `s` this call and the rest of the session's calls of the
//!   tool on the same commands and paths (for the configured session expiry); `a` always
//!   (asking for the tool pattern, the resource patterns, offering the call's own, and an
//!   expiry, offering the configured one and refusing one past the configured maximum:
//!   [`GrantExpiry`]). `s` and `a` are offered only when the question shows everything the
//!   call touches and each can be named in a grant ([`Asked::scopable`]); the whole tool is
//!   granted only when the call touches nothing, or the person types `*` for the resources;
//! - `n` rejects it (fatal `approval_rejected`), `f` rejects it with feedback for the model
//!   (recoverable `approval_corrected`);
//! - anything else is asked again, up to [`MAX_TRIES`] times; end of input (Ctrl-D) or no
//!   valid answer rejects the call.

use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::sync::Arc;
use toolgate_config::{span_text, GrantExpiry};
use toolgate_core::grant::{check_patterns, Asked};
use toolgate_core::{ApprovalAnswer, ApprovalRequest, Approver, GrantRequest, GrantScope};

/// Longest argument value shown, in characters.
pub const MAX_VALUE_CHARS: usize = 160;
/// Most argument lines shown.
pub const MAX_ARGUMENT_LINES: usize = 20;
/// Lines of the call's preview (a unified diff for the file tools) shown, at most.
pub const MAX_PREVIEW_LINES: usize = 60;
/// Bytes of the call's preview shown, about.
pub const MAX_PREVIEW_BYTES: usize = 6 << 10;
/// Invalid answers before the call is rejected.
pub const MAX_TRIES: usize = 5;
/// Longest answer line read, in bytes (the rest of a longer line is dropped).
pub const MAX_LINE_BYTES: usize = 4096;

/// Asks at the controlling terminal. One question at a time.
pub struct TerminalApprover {
    tty: Arc<Mutex<File>>,
    expiry: GrantExpiry,
}

impl TerminalApprover {
    /// The approver when toolgate runs attached to a terminal: stderr is a terminal and the
    /// controlling terminal opens. `None` otherwise (a pipe, a CI job, a service), where the
    /// non-interactive answer applies. `expiry` says how long the grants of `session` and
    /// `always` answers hold, and the longest an answer may ask for.
    pub fn open(expiry: GrantExpiry) -> Option<Self> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(TerminalApprover {
            tty: Arc::new(Mutex::new(tty)),
            expiry,
        })
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        let question = Question::new(request, self.expiry);
        let tty = self.tty.clone();
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || {
                let mut tty = tty.lock();
                let reader = tty.try_clone();
                match reader {
                    Ok(r) => converse(&mut BufReader::new(r), &mut *tty, &question),
                    Err(e) => ApprovalAnswer::Rejected {
                        reason: format!("the terminal cannot be read: {e}"),
                    },
                }
            })
            .await;
            asked.unwrap_or_else(|e| ApprovalAnswer::Rejected {
                reason: format!("the terminal prompt failed: {e}"),
            })
        })
    }

    fn name(&self) -> &str {
        "terminal"
    }
}

/// What the prompt needs, owned (it runs on a blocking thread).
pub struct Question {
    text: String,
    tool: String,
    expiry: GrantExpiry,
    /// The resource patterns a scoped answer grants, when one is offered.
    scoped: Option<Vec<String>>,
}

impl Question {
    /// The question about `request`.
    pub fn new(request: &ApprovalRequest<'_>, expiry: GrantExpiry) -> Self {
        let tool = &request.tool.name;
        let asked = Asked::of_request(request);
        let mut text = String::from("\ntoolgate: a tool call needs your approval\n");
        text.push_str(&format!("  tool:      {}", escape(tool, 80)));
        if let Some(t) = &request.tool.title {
            text.push_str(&format!(" ({})", escape(t, 80)));
        }
        text.push('\n');
        text.push_str(&format!("  rule:      {}\n", escape(request.rule, 120)));
        text.push_str(&format!("  reason:    {}\n", escape(request.reason, 200)));
        for line in &asked.lines {
            text.push_str(&format!("  resource:  {}\n", shown(line)));
        }
        for line in &asked.text {
            text.push_str(&format!("  call:      {}\n", shown(line)));
        }
        if let Some(left_out) = asked.left_out() {
            text.push_str(&format!("  NOT SHOWN: {left_out}\n"));
        }
        text.push_str(&format!("  scope:     {}\n", shown(&asked.coverage(tool))));
        text.push_str("  arguments:\n");
        text.push_str(&summarize(request.arguments));
        if let Some(preview) = request.preview {
            text.push_str("  change:\n");
            for line in
                toolgate_core::show_preview(preview, MAX_PREVIEW_LINES, MAX_PREVIEW_BYTES).lines()
            {
                text.push_str("    ");
                text.push_str(line);
                text.push('\n');
            }
        }
        Question {
            text,
            tool: tool.to_string(),
            expiry,
            scoped: asked.scopable().map(<[String]>::to_vec),
        }
    }
}

/// A line of the question from the call's resources: secrets redacted, escaped, whole
/// ([`Asked`] bounds it).
fn shown(line: &str) -> String {
    let redacted = toolgate_core::redact::redact_str(line);
    escape(
        redacted.as_deref().unwrap_or(line),
        toolgate_core::grant::MAX_LINE_CHARS + 3,
    )
}

/// One line per top-level argument, `name: value`, secrets redacted, everything escaped.
pub fn summarize(arguments: &Value) -> String {
    let mut redacted = arguments.clone();
    toolgate_core::redact::redact(&mut redacted);
    let Value::Object(map) = &redacted else {
        return format!("    {}\n", value_text(&redacted));
    };
    if map.is_empty() {
        return "    (none)\n".into();
    }
    let mut out = String::new();
    for (i, (k, v)) in map.iter().enumerate() {
        if i == MAX_ARGUMENT_LINES {
            out.push_str(&format!(
                "    ... and {} more\n",
                map.len() - MAX_ARGUMENT_LINES
            ));
            break;
        }
        out.push_str(&format!("    {}: {}\n", escape(k, 60), value_text(v)));
    }
    out
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            let mut t = format!("\"{}\"", escape(s, MAX_VALUE_CHARS));
            if n > MAX_VALUE_CHARS {
                t.push_str(&format!(" ({n} characters)"));
            }
            t
        }
        other => escape(&other.to_string(), MAX_VALUE_CHARS),
    }
}

/// `s` cut to `max` characters (with `...` when cut), every character that could move the
/// cursor, change colours or reorder text shown as an escape, and `\` doubled: the escaping
/// every operator view shares ([`toolgate_core::escape::operator`]).
pub fn escape(s: &str, max: usize) -> String {
    toolgate_core::escape::operator(s, max).into_owned()
}

/// One conversation: writes the question to `out`, reads answers from `input` until one is
/// valid, and returns it. End of input rejects.
pub fn converse<R: BufRead, W: Write + ?Sized>(
    input: &mut R,
    out: &mut W,
    q: &Question,
) -> ApprovalAnswer {
    let say = |out: &mut W, text: &str| {
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    };
    say(out, &q.text);
    let mut tries = 0;
    while tries < MAX_TRIES {
        say(
            out,
            if q.scoped.is_some() {
                "Allow? [y]es once / [s]ession / [a]lways / [n]o / [f]eedback: "
            } else {
                "Allow? [y]es once / [n]o / [f]eedback: "
            },
        );
        let Some(line) = read_line(input) else {
            say(out, "\n");
            return end_of_input();
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return ApprovalAnswer::Approved,
            "s" | "session" | "a" | "always" if q.scoped.is_none() => {
                tries += 1;
                say(
                    out,
                    "  only this call can be approved (see scope above): type y, n or f and \
                     press Enter\n",
                );
            }
            "s" | "session" => {
                return ApprovalAnswer::ApprovedFor {
                    grant: GrantRequest {
                        expires_in_secs: q.expiry.session.map(|d| d.as_secs().max(1)),
                        ..GrantRequest::on(GrantScope::Session, q.scoped.as_deref().unwrap_or(&[]))
                    },
                }
            }
            "a" | "always" => match always(input, out, q, &mut tries) {
                Some(answer) => return answer,
                None => continue,
            },
            "n" | "no" => {
                return ApprovalAnswer::Rejected {
                    reason: "rejected at the terminal".into(),
                }
            }
            "f" | "feedback" => {
                say(out, "Feedback for the agent (empty to go back): ");
                let Some(text) = read_line(input) else {
                    say(out, "\n");
                    return end_of_input();
                };
                let feedback = text.trim();
                if !feedback.is_empty() {
                    return ApprovalAnswer::Corrected {
                        feedback: feedback.chars().take(2000).collect(),
                    };
                }
            }
            other => {
                tries += 1;
                say(
                    out,
                    &format!(
                        "  {:?} is not an answer: type y, s, a, n or f and press Enter\n",
                        escape(other, 40)
                    ),
                );
            }
        }
    }
    ApprovalAnswer::Rejected {
        reason: format!("no valid answer at the terminal after {MAX_TRIES} tries"),
    }
}

/// The `always` dialogue: tool pattern, resource pattern, expiry. `None` goes back to the
/// main question (after an invalid entry, counted in `tries`); end of input rejects.
fn always<R: BufRead, W: Write + ?Sized>(
    input: &mut R,
    out: &mut W,
    q: &Question,
    tries: &mut usize,
) -> Option<ApprovalAnswer> {
    let mut ask = |out: &mut W, prompt: &str| -> Option<String> {
        let _ = out.write_all(prompt.as_bytes());
        let _ = out.flush();
        read_line(input).map(|l| l.trim().to_string())
    };
    let tool = ask(out, &format!("  Tool pattern [{}]: ", escape(&q.tool, 80)));
    let Some(tool) = tool else {
        return Some(end_of_input());
    };
    let tool = if tool.is_empty() {
        q.tool.clone()
    } else {
        tool
    };
    let asked = q.scoped.clone().unwrap_or_default();
    let prompt = if asked.is_empty() {
        "  Resource pattern (empty or *: any resource): ".to_string()
    } else {
        format!(
            "  Resource pattern [{}] (Enter: these; *: any resource): ",
            escape(&asked.join(", "), 400)
        )
    };
    let Some(resource) = ask(out, &prompt) else {
        return Some(end_of_input());
    };
    let resources = match resource.as_str() {
        "" => asked,
        "*" => Vec::new(),
        one => vec![one.to_string()],
    };
    let checked = check_patterns(&tool, None).and_then(|()| {
        resources
            .iter()
            .try_for_each(|r| check_patterns(&tool, Some(r)))
    });
    if let Err(e) = checked {
        *tries += 1;
        let _ = writeln!(out, "  {}", escape(&e.to_string(), 200));
        return None;
    }
    let default = span_text(q.expiry.always);
    let prompt = match q.expiry.max {
        None => format!("  Expires after (a span such as 30m, 8h, 7d, or never) [{default}]: "),
        Some(max) => format!(
            "  Expires after (a span such as 30m, 8h or 7d, at most {}) [{default}]: ",
            span_text(Some(max))
        ),
    };
    let Some(expiry) = ask(out, &prompt) else {
        return Some(end_of_input());
    };
    let expires = match expiry.as_str() {
        "" => q.expiry.always,
        span => match toolgate_config::parse_expiry(span) {
            Ok(d) if q.expiry.allows(d) => d,
            Ok(d) => {
                *tries += 1;
                let _ = writeln!(
                    out,
                    "  {} is longer than the longest expiry allowed ({})",
                    span_text(d),
                    span_text(q.expiry.max)
                );
                return None;
            }
            Err(e) => {
                *tries += 1;
                let _ = writeln!(out, "  {}", escape(&e, 200));
                return None;
            }
        },
    };
    Some(ApprovalAnswer::ApprovedFor {
        grant: GrantRequest {
            scope: GrantScope::Always,
            tool: Some(tool),
            resources,
            expires_in_secs: expires.map(|d| d.as_secs().max(1)),
        },
    })
}

fn end_of_input() -> ApprovalAnswer {
    ApprovalAnswer::Rejected {
        reason: "no answer at the terminal (end of input)".into(),
    }
}

/// One line, at most [`MAX_LINE_BYTES`] kept; `None` at end of input or on a read error.
fn read_line<R: BufRead>(input: &mut R) -> Option<String> {
    let mut buf = Vec::new();
    let n = input
        .by_ref()
        .take(MAX_LINE_BYTES as u64)
        .read_until(b'\n', &mut buf)
        .ok()?;
    if n == 0 {
        return None;
    }
    if buf.last() != Some(&b'\n') && n == MAX_LINE_BYTES {
        // drop the rest of an overlong line
        let mut rest = Vec::new();
        let _ = input.read_until(b'\n', &mut rest);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
#[path = "terminal_approver_tests.rs"]
mod tests;
