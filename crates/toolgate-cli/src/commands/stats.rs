//! `toolgate stats`: per-tool figures from the audit log.

use super::store::{clip, clip_name, format_us, since_arg, StoreArgs};
use crate::exit::Exit;
use std::io::Write;
use toolgate_store::{AuditQuery, ToolStats};

/// Arguments of `toolgate stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only calls of this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only calls of this session.
    #[arg(long)]
    session: Option<String>,
    /// Only calls since TIME: RFC 3339 or a span back from now (`30m`, `1h`, `2d`).
    #[arg(long, value_name = "TIME", value_parser = since_arg)]
    since: Option<u64>,
    /// One JSON object per tool per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<Exit> {
    let since_us = a.since;
    let store = a.store.open_existing()?;
    let stats = store.tool_stats(&AuditQuery {
        tool: a.tool,
        session: a.session,
        since_us,
        ..AuditQuery::default()
    })?;
    super::print_rows(&stats, a.json, |out, rows| table(out, rows))?;
    // the gateway's upstreams, as last recorded by a running toolgate
    let health = store.upstream_health()?;
    if !health.is_empty() {
        super::print_rows(&health, a.json, |out, rows| upstream_table(out, rows))?;
    }
    Ok(Exit::Success)
}

fn upstream_table(
    out: &mut dyn Write,
    health: &[toolgate_store::UpstreamHealth],
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{:<16} {:<20} {:>8} {:>8} {:>8} {:<20} DETAIL",
        "UPSTREAM", "STATE", "RESTARTS", "FAILURES", "DROPPED", "UPDATED"
    )?;
    for h in health {
        writeln!(
            out,
            "{:<16} {:<20} {:>8} {:>8} {:>8} {:<20} {}",
            clip(&h.upstream, 16),
            clip(&h.state, 20),
            h.restarts,
            h.failures,
            h.dropped,
            super::store::format_time(h.updated_us),
            h.detail
                .as_deref()
                .map(|d| clip(d, 200))
                .unwrap_or_else(|| "-".into())
        )?;
    }
    Ok(())
}

fn table(out: &mut dyn Write, stats: &[ToolStats]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<16} {:>8} {:>7} {:>7} {:>6} {:>8} {:>6} {:>9} {:>9} {:>9}  ERRORS BY KIND",
        "TOOL", "CALLS", "ERRORS", "DENIED", "ASKED", "GRANTED", "TRUNC", "P50", "P95", "P99"
    )?;
    for s in stats {
        let errors: u64 = s.errors.values().sum();
        let kinds = if s.errors.is_empty() {
            "-".to_string()
        } else {
            s.errors
                .iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(
            out,
            "{:<16} {:>8} {:>7} {:>7} {:>6} {:>8} {:>6} {:>9} {:>9} {:>9}  {}",
            clip_name(&s.tool, 16),
            s.calls,
            errors,
            s.denials,
            s.approvals_asked,
            s.approvals_granted,
            s.truncations,
            format_us(s.latency.p50_us),
            format_us(s.latency.p95_us),
            format_us(s.latency.p99_us),
            kinds
        )?;
    }
    Ok(())
}
