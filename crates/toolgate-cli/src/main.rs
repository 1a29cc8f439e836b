//! `toolgate`: list tool definitions, dispatch one tool call through the whole pipeline, and
//! validate recorded calls against imported definitions.
//!
//! Exit codes: 0 success; 1 a host error (bad flag value, unreadable file); 2 a usage error;
//! 3 the call ended in a recoverable error (or `validate` found invalid calls); 4 the call
//! ended in a fatal error.

mod commands;
mod exit;
mod logging;
#[cfg(feature = "otel")]
mod otel;
mod terminal_approver;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// toolgate: the gate every tool call of an AI agent passes through.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tool definitions a profile can see.
    Tools(commands::tools::Args),
    /// Dispatch one tool call through the whole pipeline and print the result envelope as JSON.
    Call(commands::call::Args),
    /// Check recorded calls against imported tool definitions, one JSON line per call.
    Validate(commands::validate::Args),
    /// Print tool definitions in a provider's shape (MCP, OpenAI, Anthropic, Gemini).
    Export(commands::export::Args),
    /// Measure tool search on a set of requests (`eval retrieval`).
    Eval(commands::eval::Args),
    /// Query the audit log in the store (`audit verify` checks its hash chain).
    Audit(commands::audit::Args),
    /// Per-tool figures from the audit log: calls, errors by kind, denials, approvals,
    /// truncations, latency percentiles.
    Stats(commands::stats::Args),
    /// List, revoke and make approval grants (`approvals list`, `revoke ID`, `grant`).
    Approvals(commands::approvals::Args),
    /// The idempotency ledger of side-effecting calls: list entries, settle unknown ones
    /// (`ledger list [--state unknown]`, `ledger resolve KEY --done|--not-done`).
    Ledger(commands::ledger::Args),
    /// Serve the tools to MCP clients over stdio, or streamable HTTP with --http ADDR.
    Serve(Box<commands::serve::Args>),
    /// Validate the configuration (toolgate.toml), show what the sandbox can enforce here
    /// and the effective profiles and rules.
    Check(commands::check::Args),
    /// Review the upstream MCP servers' tool definitions (`upstream list`, `diff NAME`,
    /// `approve NAME [TOOL]`).
    Upstream(commands::upstream::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::sigpipe(matches!(cli.command, Command::Serve(_)));
    #[cfg(not(feature = "otel"))]
    logging::init();
    // the same, with the OpenTelemetry export beside the stderr log; dropped when main
    // returns, after the command, it sends the spans still queued
    #[cfg(feature = "otel")]
    let _otel = otel::init();
    let result = match cli.command {
        Command::Tools(a) => commands::tools::run(a),
        Command::Call(a) => commands::call::run(a),
        Command::Validate(a) => commands::validate::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Eval(a) => commands::eval::run(a),
        Command::Audit(a) => commands::audit::run(a),
        Command::Stats(a) => commands::stats::run(a),
        Command::Serve(a) => commands::serve::run(*a),
        Command::Check(a) => commands::check::run(a),
        Command::Approvals(a) => commands::approvals::run(a),
        Command::Ledger(a) => commands::ledger::run(a),
        Command::Upstream(a) => commands::upstream::run(a),
    };
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            logging::note(format_args!("toolgate: {e:#}"));
            exit::Exit::HostError.into()
        }
    }
}
