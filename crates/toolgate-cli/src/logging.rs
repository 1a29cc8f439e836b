//! Process setup shared by `toolgate` and the `serve_echo` example (which includes this file):
//! the default SIGPIPE action and the stderr log.

/// Restores the default SIGPIPE action, so a reader that goes away (`toolgate call ... |
/// head`) ends the process quietly, as it does any Unix filter, instead of a panic on the next
/// print; then logs to stderr at the level `TOOLGATE_LOG` sets (`warn` when unset or invalid),
/// in colour only when stderr is a terminal ([`colour`]).
// toolgate built with the `otel` feature calls `otel::init` instead, which does the same
#[cfg_attr(feature = "otel", allow(dead_code))]
pub fn init() {
    sigpipe::reset();
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_ansi(colour())
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
/// `toolgate_core=trace`), `warn` when unset or invalid.
pub fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
}
