//! `toolgate-mcp-test-server`: `toolgate serve` with four more tools, for toolgate-mcp's tests
//! with real MCP clients. Same flags as `toolgate serve`.
//!
//! - `slow {seconds}`: read-only; sleeps up to 60 s in small steps, stopping when cancelled
//! - `destructive_echo {text}`: destructive, so the default policy asks for approval; echoes
//!   the text as `{"text": TEXT}` when approved (approval grants are kept in memory, for this
//!   process)
//! - `steps {count}`: read-only; reports its own progress, step `i` of `count`, 50 ms apart
//! - `forbidden_echo {text}`: read-only, but the test server's policy denies it (the default
//!   policy otherwise)
//!
//! and flags of its own: `--write-tools` adds write_file, edit_file and run_shell (the
//! default policy asks about each); `--max-calls N` is every session's call budget.

use clap::Parser;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{
    Effects, JsonlAuditSink, MemoryGrantStore, Registry, Risk, ToolContext, ToolError, ToolSpec,
    ToolSpecBuilder, TypedTool,
};
use toolgate_test_support::policy::DenyTool;
use toolgate_test_support::tools::Echo;

#[derive(Parser)]
#[command(name = "toolgate-mcp-test-server")]
struct Cli {
    #[command(flatten)]
    serve: toolgate_mcp::cli::ServeArgs,
    /// Also serve write_file, edit_file and run_shell.
    #[arg(long)]
    write_tools: bool,
    /// Every session's budget of calls.
    #[arg(long, value_name = "N")]
    max_calls: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SlowArgs {
    /// How long to run, in seconds (at most 60).
    seconds: f64,
}

#[derive(Serialize, JsonSchema)]
struct Slept {
    /// How long it ran, in milliseconds.
    slept_ms: u64,
}

struct Slow;

impl TypedTool for Slow {
    type Args = SlowArgs;
    type Output = Slept;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("slow")
            .title("Slow")
            .description("Runs for the given number of seconds, then says how long it ran.")
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .timeout(Duration::from_secs(90))
    }
    async fn call(&self, a: SlowArgs, ctx: ToolContext) -> Result<Slept, ToolError> {
        let total = Duration::from_secs_f64(a.seconds.clamp(0.0, 60.0));
        let started = std::time::Instant::now();
        tokio::select! {
            _ = tokio::time::sleep(total) => {}
            _ = ctx.cancellation().cancelled() => {}
        }
        Ok(Slept {
            slept_ms: started.elapsed().as_millis() as u64,
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepsArgs {
    /// How many steps (at most 100).
    count: u32,
}

#[derive(Serialize, JsonSchema)]
struct Stepped {
    /// Steps whose progress reached the client.
    reported: u32,
}

struct Steps;

impl TypedTool for Steps {
    type Args = StepsArgs;
    type Output = Stepped;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("steps")
            .title("Steps")
            .description("Runs the given number of 50 ms steps, reporting progress after each.")
            .effects(Effects::read_only())
            .risk(Risk::Read)
    }
    async fn call(&self, a: StepsArgs, _ctx: ToolContext) -> Result<Stepped, ToolError> {
        let count = a.count.min(100);
        let mut reported = 0;
        for i in 1..=count {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let message = Some(format!("step {i} of {count}"));
            if toolgate_mcp::request::report_progress(f64::from(i), Some(f64::from(count)), message)
                .await
            {
                reported += 1;
            }
        }
        Ok(Stepped { reported })
    }
}

/// `destructive_echo`: destructive, so the default policy asks for approval.
const DESTRUCTIVE_ECHO: Echo = Echo {
    title: Some("Destructive echo"),
    effects: Effects::side_effecting(),
    risk: Risk::Write,
    ..Echo::named(
        "destructive_echo",
        "Echoes the text. Marked destructive, so it needs approval.",
    )
};

/// `forbidden_echo`: read-only, but [`TEST_POLICY`] denies it.
const FORBIDDEN_ECHO: Echo = Echo {
    title: Some("Forbidden echo"),
    ..Echo::named(
        "forbidden_echo",
        "Echoes the text, but the test server's policy denies every call.",
    )
};

/// The default policy, and a deny for `forbidden_echo`.
const TEST_POLICY: DenyTool = DenyTool {
    tool: "forbidden_echo",
    rule: "test.forbidden_echo",
    reason: "the test server forbids this tool",
};

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    cli.serve.budgets.max_calls = cli.max_calls;
    match serve(cli.serve, cli.write_tools) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolgate-mcp-test-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Audit records go to `<workspace>/.toolgate/audit.jsonl`, where the tests read them.
fn serve(args: toolgate_mcp::cli::ServeArgs, write_tools: bool) -> Result<(), toolgate_mcp::Error> {
    let mut builder = toolgate_tools::register_read_only(Registry::builder())
        .tool(Slow)
        .tool(DESTRUCTIVE_ECHO)
        .tool(Steps)
        .tool(FORBIDDEN_ECHO);
    if write_tools {
        builder = toolgate_tools::register_shell(
            toolgate_tools::register_write_tools(builder),
            toolgate_tools::shell::ShellConfig::default(),
        );
    }
    let registry = builder.build()?;
    let workspace = args.open_workspace()?;
    let log = workspace.root().join(".toolgate").join("audit.jsonl");
    let audit = JsonlAuditSink::open(&log)
        .map_err(|e| toolgate_mcp::Error::Config(format!("opening {}: {e}", log.display())))?;
    // grants live in memory: a scoped answer holds for this process only
    let pipeline = toolgate_mcp::pipeline_builder(registry)
        .policy(Arc::new(TEST_POLICY))
        .audit(Arc::new(audit))
        .grants(Arc::new(MemoryGrantStore::new()))
        .build();
    let result = toolgate_mcp::cli::run(args, pipeline.clone(), workspace);
    pipeline.audit().flush();
    result
}
