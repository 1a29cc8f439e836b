//! Runs one `search_code` call through a full toolgate pipeline and prints what it found.
//!
//! ```text
//! cargo run --release -p toolgate-tools --example search -- WORKSPACE PATTERN [options]
//!   --literal          search for the pattern as exact text
//!   --ignore-case      match case-insensitively
//!   --path P           search under P (relative to WORKSPACE)
//!   --glob G           only files matching G (as rg -g)
//!   --max N            max_matches (default 200)
//!   --json             print the whole result envelope as JSON
//! ```
//!
//! Prints `total_matches files_searched files_with_matches` on one line; exits 1 when the call
//! fails (the error is printed to stderr) and 2 on bad usage. Used by `bench/search_vs_rg.sh`.

use std::process::ExitCode;
use toolgate_core::{Pipeline, Registry, ToolCall, Workspace};

fn usage() -> ExitCode {
    eprintln!(
        "usage: search WORKSPACE PATTERN [--literal] [--ignore-case] [--path P] [--glob G] [--max N] [--json]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(pattern)) = (args.next(), args.next()) else {
        return usage();
    };
    let mut arguments = serde_json::json!({ "pattern": pattern });
    let mut json = false;
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--literal" => arguments["literal"] = true.into(),
            "--ignore-case" => arguments["case_sensitive"] = false.into(),
            "--json" => json = true,
            "--path" | "--glob" | "--max" => {
                let Some(value) = args.next() else {
                    return usage();
                };
                match flag.as_str() {
                    "--path" => arguments["path"] = value.into(),
                    "--glob" => arguments["glob"] = value.into(),
                    _ => match value.parse::<u32>() {
                        Ok(n) => arguments["max_matches"] = n.into(),
                        Err(_) => return usage(),
                    },
                }
            }
            _ => return usage(),
        }
    }
    let workspace = match Workspace::open(&root) {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("cannot open workspace {root}: {e}");
            return ExitCode::from(2);
        }
    };
    let registry = match toolgate_tools::register_read_only(Registry::builder()).build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("registry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pipeline = Pipeline::builder(registry).build();
    let session = match pipeline.session("bench").workspace(workspace).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("session: {e}");
            return ExitCode::FAILURE;
        }
    };
    let call = ToolCall::new("call-1", "search_code", arguments);
    let result = runtime.block_on(pipeline.dispatch(call, &session));
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
    }
    if let Some(error) = &result.error {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    // a result past the byte cap is cut to a preview; the full one is behind its handle
    let full = match (&result.structured_content, &result.truncation) {
        (Some(out), _) => Some(out.clone()),
        (None, Some(t)) => pipeline
            .results()
            .get(session.id(), &t.handle)
            .ok()
            .flatten()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok()),
        (None, None) => None,
    };
    match full {
        Some(out) if !json => println!(
            "{} {} {}",
            out["total_matches"], out["files_searched"], out["files_with_matches"]
        ),
        Some(_) => {}
        None => {
            eprintln!("the result has no structured content");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
