//! `toolgate eval retrieval --tools FILE --queries FILE`: how well `search_tools` finds the
//! tools that answer a set of requests, as one JSON object on stdout:
//! `{"tools", "queries", "hit@1", "hit@5", "hit@10", "all@5", "all@10", "mrr@10"}`.
//!
//! `--tools` holds definitions in any dialect `validate` reads (BFCL's included); `--queries`
//! is JSON lines `{"query": "...", "relevant": ["tool name", ...]}` (other keys ignored), the
//! shape of BFCL's tool-retrieval set. Every tool is searched, as a profile that sees all.

use crate::exit::Exit;
use anyhow::Context;
use std::path::PathBuf;
use toolgate_core::import::{self, Dialect, ImportOptions};
use toolgate_core::search::eval::{evaluate, Query};
use toolgate_core::search::{SearchIndex, SearchOptions};

/// Arguments of `toolgate eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Tool search quality on a set of requests with the tools that answer them.
    Retrieval(RetrievalArgs),
}

#[derive(Debug, clap::Args)]
struct RetrievalArgs {
    /// Tool definitions: a JSON array, or JSON lines, in any dialect.
    #[arg(long, value_name = "FILE")]
    tools: PathBuf,
    /// Requests: JSON lines {"query": ..., "relevant": [tool names]}.
    #[arg(long, value_name = "FILE")]
    queries: PathBuf,
    /// The dialect of the tool definitions (default: detected per definition).
    #[arg(long, default_value = "auto")]
    dialect: Dialect,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let What::Retrieval(args) = args.what;
    let text = std::fs::read_to_string(&args.tools)
        .with_context(|| format!("reading {}", args.tools.display()))?;
    let imported = import::import_definitions(&text, args.dialect, &ImportOptions::default())
        .with_context(|| format!("importing tools from {}", args.tools.display()))?;
    let queries = read_queries(&args.queries)?;
    let known: std::collections::HashSet<&str> = imported.iter().map(|i| &*i.spec.name).collect();
    for (i, q) in queries.iter().enumerate() {
        if let Some(missing) = q.relevant.iter().find(|r| !known.contains(r.as_str())) {
            anyhow::bail!(
                "{} line {}: relevant tool {missing:?} is not in {}",
                args.queries.display(),
                i + 1,
                args.tools.display()
            );
        }
    }
    let index = SearchIndex::build(
        imported.iter().map(|i| (&i.spec, u64::MAX)),
        &SearchOptions::default(),
    );
    let scores = evaluate(&index, &queries);
    let mut out = serde_json::to_value(scores)?;
    out["tools"] = imported.len().into();
    println!("{}", serde_json::to_string(&out)?);
    Ok(Exit::Success)
}

/// The requests of a JSON lines file; a line that is not one is an error naming it.
fn read_queries(path: &std::path::Path) -> anyhow::Result<Vec<Query>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: Query = serde_json::from_str(line).with_context(|| {
            format!(
                "{} line {}: expected {{\"query\": \"...\", \"relevant\": [\"tool name\", ...]}}",
                path.display(),
                i + 1
            )
        })?;
        if q.relevant.is_empty() {
            // no tool can be found for it: it would count as a miss, and as found by all@k
            anyhow::bail!(
                "{} line {}: \"relevant\" is empty; list the tools that answer the request",
                path.display(),
                i + 1
            );
        }
        out.push(q);
    }
    if out.is_empty() {
        anyhow::bail!("{} holds no request", path.display());
    }
    Ok(out)
}
