//! Process setup shared by `toolgate` and the `serve_echo` example (which includes this file):
//! the default SIGPIPE action and the stderr log.

/// Restores the default SIGPIPE action, so a reader that goes away (`toolgate call ... |
/// head`) ends the process quietly, as it does any Unix filter, instead of a panic on the next
/// print; then logs to stderr at the level `TOOLGATE_LOG` sets (`warn` when unset or invalid).
pub fn init() {
    sigpipe::reset();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
}
