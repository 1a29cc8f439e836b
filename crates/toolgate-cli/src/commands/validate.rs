//! `toolgate validate --definitions FILE --calls FILE`: check recorded calls against imported
//! definitions.
//!
//! Definitions: a JSON array of definitions (MCP, OpenAI or BFCL dialect), or JSON lines, each
//! a definition or a BFCL `{"source", "function"}` wrapper. Calls: JSON lines
//! `{"function_name": ..., "arguments": {...}}` (an optional `source` names the line). Output:
//! one JSON line per call, `{"source", "valid", "errors": [{"pointer", "message"}]}`, then a
//! summary line `{"summary": {"calls", "valid", "invalid", "definitions", "warnings"}}`.

use crate::exit::Exit;
use anyhow::Context;
use serde_json::{json, Value};
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use toolgate_core::import::{self, CallValidator, Dialect, ImportOptions};
use toolgate_core::ArgumentFault;

/// Arguments of `toolgate validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tool definitions: a JSON array, or JSON lines (BFCL `functions.jsonl` works as it is).
    #[arg(long)]
    definitions: PathBuf,
    /// Recorded calls: JSON lines `{"function_name": ..., "arguments": {...}}`.
    #[arg(long)]
    calls: PathBuf,
    /// The dialect of the definitions: mcp, openai (Chat Completions or Responses), bfcl,
    /// anthropic, gemini, or auto (detected per definition).
    #[arg(long, default_value = "auto")]
    dialect: Dialect,
    /// Print the normalisation warnings of each definition to stderr.
    #[arg(long)]
    warnings: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let text = std::fs::read_to_string(&args.definitions)
        .with_context(|| format!("reading {}", args.definitions.display()))?;
    let imported = import::import_definitions(&text, args.dialect, &ImportOptions::default())
        .with_context(|| format!("importing definitions from {}", args.definitions.display()))?;
    if imported.is_empty() {
        anyhow::bail!(super::export::no_definitions(&args.definitions));
    }
    let warnings: usize = imported.iter().map(|i| i.warnings.len()).sum();
    if args.warnings {
        for i in &imported {
            for w in &i.warnings {
                eprintln!(
                    "{}: {}{}: {}",
                    i.spec.name,
                    i.source
                        .as_deref()
                        .map(|s| format!("({s}) "))
                        .unwrap_or_default(),
                    w.pointer,
                    w.message
                );
            }
        }
    }
    let validator =
        CallValidator::from_imported(&imported).context("compiling the imported definitions")?;
    let calls = std::fs::File::open(&args.calls)
        .with_context(|| format!("opening {}", args.calls.display()))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let (mut total, mut valid) = (0usize, 0usize);
    for (i, line) in std::io::BufReader::new(calls).lines().enumerate() {
        let line =
            line.with_context(|| format!("reading {} line {}", args.calls.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        total += 1;
        let (source, errors) = check_line(&validator, &line, i + 1);
        if errors.is_empty() {
            valid += 1;
        }
        let row = Row {
            source: &source,
            valid: errors.is_empty(),
            errors: &errors,
        };
        serde_json::to_writer(&mut out, &row)?;
        out.write_all(b"\n")?;
    }
    let summary = SummaryLine {
        summary: Summary {
            calls: total,
            valid,
            invalid: total - valid,
            definitions: imported.len(),
            warnings,
        },
    };
    serde_json::to_writer(&mut out, &summary)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(if valid == total {
        Exit::Success
    } else {
        Exit::Recoverable
    })
}

/// One output line per call, keys in this order.
#[derive(serde::Serialize)]
struct Row<'a> {
    source: &'a Value,
    valid: bool,
    errors: &'a [ArgumentFault],
}

#[derive(serde::Serialize)]
struct SummaryLine {
    summary: Summary,
}

#[derive(serde::Serialize)]
struct Summary {
    calls: usize,
    valid: usize,
    invalid: usize,
    definitions: usize,
    warnings: usize,
}

/// Checks one line; a line that is not a call is reported as invalid with pointer `""`.
fn check_line(validator: &CallValidator, line: &str, number: usize) -> (Value, Vec<ArgumentFault>) {
    let fallback = Value::String(format!("line {number}"));
    let fault = |message: String| {
        vec![ArgumentFault {
            pointer: String::new(),
            message,
        }]
    };
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return (fallback, fault(format!("the line is not JSON: {e}"))),
    };
    let source = value.get("source").cloned().unwrap_or(fallback);
    let Some(name) = value.get("function_name").and_then(Value::as_str) else {
        return (
            source,
            fault("the line has no string \"function_name\"".into()),
        );
    };
    let arguments = value.get("arguments").cloned().unwrap_or_else(|| json!({}));
    (source, validator.validate(name, &arguments))
}
