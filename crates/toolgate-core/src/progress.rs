//! Progress of a running call, for the caller that asked for it (an MCP client that sent a
//! `progressToken` gets each report as a `notifications/progress`).
//!
//! A host that wants progress dispatches with
//! [`Pipeline::dispatch_with_progress`](crate::Pipeline::dispatch_with_progress) and a
//! [`ProgressSink`]; the handler reports through its [`ToolContext`](crate::ToolContext)
//! ([`ToolContext::report_progress`](crate::ToolContext::report_progress)), which is a no-op
//! when nobody listens. Messages are made safe there, whatever the tool sends: control
//! characters other than `\n` and `\t` become visible escapes and a message is cut to
//! [`MAX_MESSAGE_BYTES`]. Tools that report often must bound their own rate (run_shell sends
//! at most a few reports a second, see `toolgate_tools::shell::stream`).

use std::sync::Arc;

/// The longest progress message passed on, in bytes (longer ones are cut at a character
/// boundary and end with `…`).
pub const MAX_MESSAGE_BYTES: usize = 8 << 10;

/// One progress report of a running call (MCP's `notifications/progress` without the token).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressReport {
    /// How far the call is; grows from one report to the next (its unit is the tool's: steps,
    /// bytes, ...).
    pub progress: f64,
    /// The value `progress` reaches when the call is done, when known.
    pub total: Option<f64>,
    /// What is happening, for a person (already made safe, at most [`MAX_MESSAGE_BYTES`]).
    pub message: Option<String>,
}

/// Where a running call's progress reports go.
///
/// [`report`](ProgressSink::report) is called from the handler's task or from any thread
/// it hands the context to, while the call runs; it must not block (queue the report, or drop
/// it when the queue is full: progress is advice, the call's result is what counts).
pub trait ProgressSink: Send + Sync {
    /// Takes one report.
    fn report(&self, report: ProgressReport);
}

impl<F: Fn(ProgressReport) + Send + Sync> ProgressSink for F {
    fn report(&self, report: ProgressReport) {
        self(report)
    }
}

/// A shared sink.
pub type SharedProgress = Arc<dyn ProgressSink>;

/// `message` made safe to show: controls escaped ([`crate::sanitize::clean_output`]), cut to
/// [`MAX_MESSAGE_BYTES`].
pub(crate) fn clean_message(message: String) -> String {
    let mut clean = match crate::sanitize::clean_output(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(s) => s,
    };
    if clean.len() > MAX_MESSAGE_BYTES {
        let cut = crate::results::floor_char_boundary(&clean, MAX_MESSAGE_BYTES - '…'.len_utf8());
        clean.truncate(cut);
        clean.push('…');
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_escaped_and_bounded() {
        assert_eq!(clean_message("a\x1b[31mb\n".into()), "a\\x1b[31mb\n");
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        let cut = clean_message(long);
        assert!(cut.len() <= MAX_MESSAGE_BYTES, "{}", cut.len());
        assert!(cut.ends_with('…'));
        assert_eq!(clean_message("plain".into()), "plain");
    }
}
