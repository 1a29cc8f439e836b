//! Process setup shared by `toolgate` and the `serve_echo` example (which includes this file):
//! the SIGPIPE action, the stderr log, and notes on stderr that never fail.
//!
//! `serve` keeps SIGPIPE ignored (Rust's default), so a client that stops reading gets
//! `EPIPE` on the next write, which ends its connection, never the process before its audit
//! records are written; and a closed stderr costs log lines, never the process (the log
//! drops what it cannot write, [`note`] too). Every other command is a Unix filter: a reader
//! that goes away (`toolgate audit | head`) ends it quietly, as SIGPIPE does.
//!
//! The log is an operator's view too, and its events carry text a model or client controls
//! (call ids, session ids, error details): every field of an event or span is written with
//! each hidden character escaped ([`toolgate_core::escape::operator`]), so a bidirectional
//! override or a line separator in a call id cannot forge or reorder lines of a log file or a
//! terminal; an event stays one line, in colour or not.

use std::io::Write;

/// Restores the default SIGPIPE action unless the command is a server (`serving`): see the
/// module documentation.
#[allow(dead_code)] // the serve_echo example includes this file without using it
pub fn sigpipe(serving: bool) {
    if !serving {
        sigpipe::reset();
    }
}

/// Logs to stderr at the level `TOOLGATE_LOG` sets (`warn` when unset or invalid), in colour
/// only when stderr is a terminal ([`colour`]); a log line that cannot be written (stderr
/// closed) is dropped.
// toolgate built with the `otel` feature calls `otel::init` instead, which does the same
#[cfg_attr(feature = "otel", allow(dead_code))]
pub fn init() {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .fmt_fields(escaped_fields())
        .with_writer(std::io::stderr)
        .with_ansi(colour())
        .log_internal_errors(false)
        .init();
}

/// Whether the stderr log is in colour: only when stderr is a terminal and `NO_COLOR` is
/// unset or empty (<https://no-color.org>), so a log written to a file or a pipe
/// (`2> serve.log`, a service manager) holds no escape codes.
pub fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The stderr log's filter: `TOOLGATE_LOG` (an `EnvFilter` directive such as `debug` or
/// `toolgate_core=trace`), `warn` when unset or invalid, with the libraries that log message
/// bodies capped at `info` ([`capped`]).
pub fn filter() -> tracing_subscriber::EnvFilter {
    std::env::var("TOOLGATE_LOG")
        .ok()
        .and_then(|d| tracing_subscriber::EnvFilter::try_new(capped(&d)).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("warn"))
}

/// Libraries whose `debug` and `trace` events print what a call carries, unredacted: rmcp
/// every message's body (a `tools/call`'s arguments, its result), grep-regex a search's
/// pattern. The audit redacts the same text.
const BODY_TARGETS: &[&str] = &["rmcp", "grep_regex"];

/// `directives` with each of [`BODY_TARGETS`] capped at `info` when a bare level above it
/// (`debug`, `trace`) would enable its message dumps and the directives do not name it:
/// `TOOLGATE_LOG=debug` keeps rmcp at `info`, `debug,rmcp=debug` gives it `debug`.
fn capped(directives: &str) -> std::borrow::Cow<'_, str> {
    use tracing_subscriber::filter::LevelFilter;
    let mut default = None;
    let mut named = [false; BODY_TARGETS.len()];
    for d in directives.split(',').map(str::trim) {
        let target = d.split(['=', '[']).next().unwrap_or_default();
        if target == d {
            // a bare word: a level for every target, or a target at every level
            if let Ok(level) = target.parse::<LevelFilter>() {
                default = Some(level);
                continue;
            }
        }
        for (t, named) in BODY_TARGETS.iter().zip(&mut named) {
            *named |= target == *t || target.strip_prefix(t).is_some_and(|r| r.starts_with("::"));
        }
    }
    if default.is_none_or(|l| l <= LevelFilter::INFO) || named.iter().all(|&n| n) {
        return directives.into();
    }
    let mut out = directives.to_string();
    for (t, _) in BODY_TARGETS.iter().zip(named).filter(|(_, n)| !n) {
        out.push_str(&format!(",{t}=info"));
    }
    out.into()
}

/// Writes one line to stderr, dropping it when stderr is closed (`eprintln!` would panic).
#[allow(dead_code)] // the serve_echo example includes this file without using it
pub fn note(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The fields of every log event and span, `name=value` separated by spaces (the event's
/// message without its name), each value escaped for an operator's view
/// ([`toolgate_core::escape::operator`]): what a model or client wrote cannot start a line,
/// move the cursor or reorder the text around it.
pub fn escaped_fields(
) -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + Send + Sync + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let text = format!("{value:?}");
        let text = toolgate_core::escape::operator(&text, usize::MAX);
        match field.name() {
            "message" => write!(w, "{text}"),
            name => write!(w, "{name}={text}"),
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use super::capped;

    #[test]
    fn message_dumps_stay_off_unless_named() {
        for (given, want) in [
            ("debug", "debug,rmcp=info,grep_regex=info"),
            ("trace", "trace,rmcp=info,grep_regex=info"),
            (
                "TRACE,toolgate_core=trace",
                "TRACE,toolgate_core=trace,rmcp=info,grep_regex=info",
            ),
            ("debug,rmcp=debug", "debug,rmcp=debug,grep_regex=info"),
            (
                "debug,rmcp::service=trace",
                "debug,rmcp::service=trace,grep_regex=info",
            ),
            ("trace,rmcp,grep_regex=trace", "trace,rmcp,grep_regex=trace"),
            // at `info` and below, or without a bare level, nothing of theirs is enabled
            ("warn", "warn"),
            ("info", "info"),
            ("warn,toolgate_core=debug", "warn,toolgate_core=debug"),
            ("toolgate_core=debug", "toolgate_core=debug"),
            ("", ""),
            // a name that only starts alike is not theirs
            (
                "debug,rmcpx=debug",
                "debug,rmcpx=debug,rmcp=info,grep_regex=info",
            ),
        ] {
            assert_eq!(capped(given), want, "{given:?}");
            assert!(
                tracing_subscriber::EnvFilter::try_new(want).is_ok(),
                "{want}"
            );
        }
    }
}
