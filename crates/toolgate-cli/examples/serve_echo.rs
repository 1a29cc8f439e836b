//! `serve_echo`: `toolgate serve` with one more tool, `echo {text}`, for the benchmark against
//! a bare rmcp server that exposes the same call (`bench/mcp_vs_bare.sh`). The built-in
//! registry has no echo tool, and should not: this example is the place for it.
//!
//! Everything else is what `toolgate serve` runs with its defaults: the built-in tools, the
//! default policy, approval requests sent to the MCP client, and audit records written to
//! the workspace's store (`<workspace>/.toolgate/toolgate.db`, SQLite) by its writer thread.
//! Same flags as `toolgate serve` (see `toolgate_mcp::cli::ServeArgs`).
//!
//! `echo` is read-only, so the default policy allows it without asking; its result is
//! `{"text": TEXT}` as structured content with its JSON text in `content`.

#[path = "../src/logging.rs"]
mod logging;

use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use toolgate_core::{AuditSink, Registry};
use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};
use toolgate_test_support::tools::Echo;

#[derive(Parser)]
#[command(name = "serve_echo")]
struct Cli {
    #[command(flatten)]
    serve: toolgate_mcp::cli::ServeArgs,
}

/// `echo`: read-only, risk `read`; returns `{"text": TEXT}`.
const ECHO: Echo = Echo {
    title: Some("Echo"),
    ..Echo::named("echo", "Echoes the given text back.")
};

fn main() -> ExitCode {
    logging::init();
    let cli = Cli::parse();
    match serve(cli.serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve_echo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: toolgate_mcp::cli::ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let builder = toolgate_tools::register_read_only(Registry::builder());
    let builder = toolgate_tools::register_write_tools(builder);
    let registry =
        toolgate_tools::register_shell(builder, toolgate_tools::shell::ShellConfig::default())
            .tool(ECHO)
            .build()?;
    let workspace = args.open_workspace()?;
    let store = Store::open(workspace.state_dir(".toolgate")?.join("toolgate.db"))?;
    let audit = Arc::new(SqliteAuditSink::new(&store)?);
    let pipeline = toolgate_mcp::pipeline_builder(registry)
        .audit(audit.clone() as Arc<dyn AuditSink>)
        .results(Arc::new(SqliteResultStore::new(store)))
        .build();
    let served = toolgate_mcp::cli::run(args, pipeline, workspace);
    let flushed = audit.flush_checked();
    served?;
    flushed?;
    Ok(())
}
