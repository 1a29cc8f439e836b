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

use clap::Parser;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use std::sync::Arc;
use toolgate_core::{
    AuditSink, Effects, Registry, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool,
};
use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};

#[derive(Parser)]
#[command(name = "serve_echo")]
struct Cli {
    #[command(flatten)]
    serve: toolgate_mcp::cli::ServeArgs,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Echoed {
    /// The text, unchanged.
    text: String,
}

struct Echo;

impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = Echoed;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("echo")
            .title("Echo")
            .description("Echoes the given text back.")
            .effects(Effects::read_only())
            .risk(Risk::Read)
    }
    async fn call(&self, a: EchoArgs, _ctx: ToolContext) -> Result<Echoed, ToolError> {
        Ok(Echoed { text: a.text })
    }
}

fn main() -> ExitCode {
    sigpipe::reset();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
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
            .tool(Echo)
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
