//! `toolgate upstream`: the operator's review of upstream tool definitions: `list` (each
//! tool's pin, and why a blocked one is blocked), `diff NAME` (what changed, as a unified
//! diff with invisible characters made visible), `approve NAME [TOOL]`. Each is recorded in
//! the audit log as a call of the operator's (tool `toolgate.upstream.<command>`).

use super::store::{clip, format_time, StoreArgs};
use crate::exit::Exit;
use std::io::Write;
use std::sync::Arc;
use toolgate_core::{AuditRecord, AuditSink, CallId};
use toolgate_store::{Pin, Store};

/// Arguments of `toolgate upstream`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Every upstream tool's pin: pinned, changed or quarantined, and why.
    List {
        /// Only this upstream's tools.
        name: Option<String>,
        /// One JSON object per tool per line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// What a blocked tool's definition would change, as a unified diff.
    Diff {
        /// The upstream.
        name: String,
        /// Only this tool (the upstream's own name for it).
        tool: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Approve the definitions seen of an upstream's blocked tools (or of one tool).
    Approve {
        /// The upstream.
        name: String,
        /// Only this tool (the upstream's own name for it).
        tool: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<Exit> {
    match a.command {
        Command::List { name, json, store } => {
            let store = store.open_existing()?;
            let pins = store.pins(name.as_deref())?;
            audit(&store, "list", serde_json::json!({ "upstream": name }))?;
            let rows: Vec<serde_json::Value> = pins.iter().map(row).collect();
            super::print_rows(&rows, json, |out, _| table(out, &pins))?;
            Ok(Exit::Success)
        }
        Command::Diff { name, tool, store } => {
            let store = store.open_existing()?;
            let pins = blocked(&store, &name, tool.as_deref())?;
            audit(
                &store,
                "diff",
                serde_json::json!({ "upstream": name, "tool": tool }),
            )?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            if pins.is_empty() {
                writeln!(out, "nothing of {name} waits for approval")?;
            }
            for p in &pins {
                writeln!(
                    out,
                    "# {}/{}: {}{}",
                    p.upstream,
                    p.tool,
                    p.state.as_str(),
                    p.reason
                        .as_deref()
                        .map(|r| format!(" ({})", toolgate_gateway::quarantine::visible(r)))
                        .unwrap_or_default()
                )?;
                out.write_all(toolgate_gateway::review::diff(p).as_bytes())?;
            }
            out.flush()?;
            Ok(Exit::Success)
        }
        Command::Approve { name, tool, store } => {
            let store = store.open_existing()?;
            let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
            let approved = store.approve_pins(&name, tool.as_deref(), now)?;
            let tools: Vec<&str> = approved.iter().map(|p| p.tool.as_str()).collect();
            audit(
                &store,
                "approve",
                serde_json::json!({ "upstream": name, "tool": tool, "approved": tools }),
            )?;
            if approved.is_empty() {
                println!("nothing of {name} waited for approval");
            }
            for p in &approved {
                println!(
                    "approved {}/{} (definition {}); a running gateway serves it when the upstream lists its tools again or restarts",
                    p.upstream,
                    p.tool,
                    &p.seen_hash[..12]
                );
            }
            Ok(Exit::Success)
        }
    }
}

fn blocked(store: &Store, name: &str, tool: Option<&str>) -> anyhow::Result<Vec<Pin>> {
    let pins = store.pins(Some(name))?;
    if pins.is_empty() {
        anyhow::bail!(
            "the store has no tool of an upstream named {name:?} (see `toolgate upstream list`)"
        );
    }
    Ok(pins
        .into_iter()
        .filter(|p| !p.is_served() && tool.is_none_or(|t| p.tool == t))
        .collect())
}

fn row(p: &Pin) -> serde_json::Value {
    serde_json::json!({
        "upstream": p.upstream,
        "tool": p.tool,
        "state": p.state,
        "served": p.is_served(),
        "reason": p.reason,
        "pinned_hash": p.pinned_hash,
        "seen_hash": p.seen_hash,
        "first_seen_us": p.first_seen_us,
        "approved_us": p.approved_us,
    })
}

fn table(out: &mut dyn Write, pins: &[Pin]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<16} {:<28} {:<12} {:<20} REASON",
        "UPSTREAM", "TOOL", "STATE", "SINCE"
    )?;
    for p in pins {
        let reason = p
            .reason
            .as_deref()
            .map(toolgate_gateway::quarantine::visible)
            .unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "{:<16} {:<28} {:<12} {:<20} {}",
            clip(&p.upstream, 16),
            clip(&p.tool, 28),
            p.state.as_str(),
            format_time(p.updated_us),
            reason
        )?;
    }
    Ok(())
}

/// One audit record of the operator's command.
fn audit(store: &Store, command: &str, arguments: serde_json::Value) -> anyhow::Result<()> {
    let sink = Arc::new(toolgate_store::SqliteAuditSink::new(store)?);
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    sink.record(AuditRecord {
        attempts: 1,
        ..AuditRecord::event(
            now,
            "operator".into(),
            "operator".into(),
            format!("toolgate.upstream.{command}").into(),
            CallId::from(format!("upstream-{now}")),
            arguments,
        )
    });
    sink.flush();
    Ok(())
}
