//! `toolgate ledger`: the idempotency ledger in the workspace's store.
//!
//! - `list [--state in_progress|unknown|succeeded|failed] [--key KEY] [--json]`: entries,
//!   oldest first; `unknown` are the calls that ended without recording whether they acted
//!   (a crash, a SIGKILL, a timeout), which nothing runs again until they are settled
//! - `resolve KEY --done|--not-done [--principal P] [--note TEXT]`: the operator settles an
//!   unknown entry: `--done` (the effect happened; a call sent again with the key is told so
//!   and does not run) or `--not-done` (it did not; the key is free and the call may run).
//!   Each resolution is an audit record (profile `operator`, `ledger` `resolved_done` or
//!   `resolved_not_done`), committed before the command ends.

use super::store::{clip, clip_name, format_time, StoreArgs};
use crate::exit::Exit;
use anyhow::{bail, Context};
use std::io::Write;
use std::time::SystemTime;
use toolgate_core::audit::now_us;
use toolgate_core::ledger::{
    Ledger, LedgerEntry, LedgerFilter, LedgerState, Recorded, Settled, Settlement,
};
use toolgate_core::{AuditRecord, AuditSink, LedgerEvent};
use toolgate_store::SqliteAuditSink;

/// The longest `--note` kept, in bytes.
const MAX_NOTE_BYTES: usize = 4096;

/// Arguments of `toolgate ledger`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// List ledger entries, oldest first (`--state unknown`: the calls waiting to be
    /// settled).
    List(ListArgs),
    /// Settle an unknown entry: its effect happened (--done) or did not (--not-done).
    Resolve(ResolveArgs),
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Only entries in this state: in_progress, unknown, succeeded or failed.
    #[arg(long, value_parser = parse_state)]
    state: Option<LedgerState>,
    /// Only entries with this key.
    #[arg(long)]
    key: Option<String>,
    /// One JSON object per entry per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("resolution").required(true).args(["done", "not_done"])))]
struct ResolveArgs {
    /// The idempotency key (from `toolgate ledger list` or the call's error message).
    key: String,
    /// The call's effect happened: a call sent again with the key is told so and does not
    /// run.
    #[arg(long)]
    done: bool,
    /// The call's effect did not happen: the key is free, and the call may run again.
    #[arg(long)]
    not_done: bool,
    /// The principal the key belongs to, when keys of several principals have it.
    #[arg(long)]
    principal: Option<String>,
    /// Why, kept in the audit record.
    #[arg(long)]
    note: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
}

fn parse_state(s: &str) -> Result<LedgerState, String> {
    LedgerState::parse(s).ok_or_else(|| {
        format!("{s:?} is not a state: send in_progress, unknown, succeeded or failed")
    })
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<Exit> {
    match a.command {
        Sub::List(a) => list(a),
        Sub::Resolve(a) => resolve(a),
    }
}

fn list(a: ListArgs) -> anyhow::Result<Exit> {
    let store = a.store.open_existing()?;
    let now = now_us(SystemTime::now());
    let entries = Ledger::list(
        &store,
        &LedgerFilter {
            state: a.state,
            key: a.key,
        },
        now,
    )
    .context("reading the idempotency ledger")?;
    super::print_rows(&entries, a.json, table)?;
    Ok(Exit::Success)
}

fn resolve(a: ResolveArgs) -> anyhow::Result<Exit> {
    if let Some(n) = &a.note {
        if n.len() > MAX_NOTE_BYTES || n.contains('\0') {
            bail!("--note must be at most {MAX_NOTE_BYTES} bytes, without NUL");
        }
    }
    let store = a.store.open_existing()?;
    let now = now_us(SystemTime::now());
    let entries = store.ledger_entries(&a.key, now)?;
    let principals: Vec<Option<&str>> = entries.iter().map(|e| e.principal.as_deref()).collect();
    let principal = match (&a.principal, principals.as_slice()) {
        (_, []) => bail!(
            "there is no ledger entry with key {:?} (see `toolgate ledger list`)",
            a.key
        ),
        (Some(p), found) => {
            if !found.contains(&Some(p.as_str())) {
                bail!("no entry with key {:?} belongs to principal {p:?}", a.key);
            }
            Some(p.as_str())
        }
        (None, [one]) => *one,
        (None, many) => bail!(
            "{} entries have key {:?}; name the principal with --principal ({})",
            many.len(),
            a.key,
            many.iter()
                .map(|p| p.unwrap_or("(local)"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let result = Recorded::settled_json("operator", now);
    let settlement = if a.done {
        Settlement::Done {
            result: &result,
            by: "operator",
        }
    } else {
        Settlement::NotDone
    };
    let before = match Ledger::settle(&store, principal, &a.key, settlement, now)
        .context("settling the ledger entry")?
    {
        Settled::Settled(before) => before,
        Settled::Missing => bail!("the entry with key {:?} is gone (pruned meanwhile)", a.key),
        Settled::NotUnsettled(e) => bail!("{}", not_unsettled(&e, now)),
    };
    let (event, resolution) = if a.done {
        (LedgerEvent::ResolvedDone, "done")
    } else {
        (LedgerEvent::ResolvedNotDone, "not_done")
    };
    let sink = SqliteAuditSink::new(&store)?;
    sink.record(AuditRecord {
        idempotency_key: Some(a.key.as_str().into()),
        ledger: Some(event),
        ..AuditRecord::event(
            now,
            before.session.as_str().into(),
            "operator".into(),
            before.tool.as_str().into(),
            format!("ledger-resolve-{now}").into(),
            serde_json::json!({
                "key": a.key,
                "principal": principal,
                "resolution": resolution,
                "call_id": before.call_id,
                "note": a.note,
            }),
        )
    });
    sink.flush_checked().context("writing the audit record")?;
    if a.done {
        println!(
            "settled {:?} as done: a call of {} sent again with this key is told its effect \
             happened, and does not run",
            a.key, before.tool
        );
    } else {
        println!(
            "settled {:?} as not done: the key is free, and a call of {} sent again with it \
             runs",
            a.key, before.tool
        );
    }
    Ok(Exit::Success)
}

/// Why an entry that is not unknown cannot be settled.
fn not_unsettled(e: &LedgerEntry, now: u64) -> String {
    match e.state {
        LedgerState::InProgress => format!(
            "the call holding {:?} ({} of session {}) may still be running, until {} (in {}s): \
             settle it after that, if it is then unknown",
            e.key,
            e.call_id,
            e.session,
            e.lease_until_us.map(format_time).unwrap_or_default(),
            e.lease_until_us.unwrap_or(now).saturating_sub(now) / 1_000_000
        ),
        state => format!(
            "the call with key {:?} ended ({state}, at {}): there is nothing to settle",
            e.key,
            format_time(e.updated_us)
        ),
    }
}

fn table(out: &mut dyn Write, rows: &[LedgerEntry]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<36} {:<11} {:<16} {:<20} {:<20} {:<20} ARGUMENTS",
        "KEY", "STATE", "TOOL", "SESSION", "CALL", "SINCE"
    )?;
    for e in rows {
        let state = match (e.state, &e.settled_by) {
            (LedgerState::Succeeded, Some(by)) => format!("done ({by})"),
            (s, _) => s.to_string(),
        };
        let since = match e.state {
            LedgerState::InProgress => format!(
                "until {}",
                e.lease_until_us.map(format_time).unwrap_or_default()
            ),
            LedgerState::Unknown => format_time(e.created_us),
            _ => format_time(e.updated_us),
        };
        writeln!(
            out,
            "{:<36} {:<11} {:<16} {:<20} {:<20} {:<20} {}",
            clip(&e.key, 36),
            clip(&state, 11),
            clip_name(&e.tool, 16),
            clip(&e.session, 20),
            clip(&e.call_id, 20),
            since,
            clip(&e.arguments, 80),
        )?;
    }
    Ok(())
}
