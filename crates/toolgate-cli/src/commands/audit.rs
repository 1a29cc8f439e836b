//! `toolgate audit`: query the audit log; `toolgate audit verify`: walk its hash chain.

use super::store::{clip, format_time, format_us, since_arg, StoreArgs};
use crate::exit::Exit;
use std::io::Write;
use toolgate_core::Outcome;
use toolgate_store::{AuditQuery, StoredRecord, Verification};

/// Arguments of `toolgate audit`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    query: QueryArgs,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Walk the hash chain: exit 0 when every record is in place, 3 with the first edited,
    /// deleted or reordered record's sequence number otherwise.
    Verify(VerifyArgs),
}

/// Filters and output of the query.
#[derive(Debug, clap::Args)]
struct QueryArgs {
    /// Only calls of this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only calls of this session.
    #[arg(long)]
    session: Option<String>,
    /// Only calls made for this principal (the subject of an OAuth access token).
    #[arg(long, value_name = "SUBJECT")]
    principal: Option<String>,
    /// Only calls that ended this way.
    #[arg(long, value_enum)]
    outcome: Option<OutcomeArg>,
    /// Only calls since TIME: RFC 3339 (`2026-01-31T12:00:00Z`, `...+02:00`) or a span back
    /// from now (`30m`, `1h`, `2d`).
    #[arg(long, value_name = "TIME", value_parser = since_arg)]
    since: Option<u64>,
    /// Show the most recent N matching records (0: all).
    #[arg(long, default_value_t = 100, value_name = "N")]
    limit: usize,
    /// One JSON object per line (every field, arguments redacted) instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    /// Print the verdict as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum OutcomeArg {
    /// Success.
    Ok,
    /// An error the model can act on.
    #[value(name = "recoverable_error", alias = "recoverable")]
    RecoverableError,
    /// An error that stops the agent loop.
    #[value(name = "fatal_error", alias = "fatal")]
    FatalError,
    /// Not run yet: the call asked its MCP client for input (an approval question on a
    /// 2026-07-28 request) and comes again with the answer.
    #[value(name = "input_required")]
    InputRequired,
    /// Started with no record of its end: the process stopped while the call ran, so
    /// whether it acted is unknown (the intent records nothing completed).
    Started,
}

impl From<OutcomeArg> for Outcome {
    fn from(o: OutcomeArg) -> Self {
        match o {
            OutcomeArg::Ok => Outcome::Ok,
            OutcomeArg::RecoverableError => Outcome::RecoverableError,
            OutcomeArg::FatalError => Outcome::FatalError,
            OutcomeArg::InputRequired => Outcome::InputRequired,
            OutcomeArg::Started => Outcome::Started,
        }
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    match args.command {
        Some(Sub::Verify(v)) => verify(v),
        None => query(args.query),
    }
}

fn query(a: QueryArgs) -> anyhow::Result<Exit> {
    let since_us = a.since;
    let store = a.store.open_existing()?;
    let records = store.audit_records(&AuditQuery {
        tool: a.tool,
        session: a.session,
        principal: a.principal,
        outcome: a.outcome.map(Into::into),
        since_us,
        until_us: None,
        limit: (a.limit > 0).then_some(a.limit),
    })?;
    super::print_rows(&records, a.json, |out, rows| table(out, rows))?;
    Ok(Exit::Success)
}

fn table(out: &mut dyn Write, records: &[StoredRecord]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:>7}  {:<20}  {:<16}  {:<16}  {:<14}  {:<24}  {:<17}  {:<24}  {:>9}  ARGUMENTS",
        "SEQ", "TIME", "SESSION", "PRINCIPAL", "TOOL", "DECISION", "OUTCOME", "ERROR", "DURATION"
    )?;
    for s in records {
        let r = &s.record;
        // what the idempotency ledger did, when it did more than run the call
        let outcome = match r.ledger {
            None | Some(toolgate_core::LedgerEvent::Executed) => r.outcome.as_str().to_string(),
            Some(event) => format!("{}:{}", r.outcome.as_str(), event.as_str()),
        };
        let error = match (&r.error_kind, &r.error_reason) {
            (Some(k), Some(reason)) => format!("{k}/{reason}"),
            (Some(k), None) => k.to_string(),
            _ => "-".into(),
        };
        writeln!(
            out,
            "{:>7}  {:<20}  {:<16}  {:<16}  {:<14}  {:<24}  {:<17}  {:<24}  {:>9}  {}",
            s.seq,
            format_time(r.time_us),
            clip(&r.session, 16),
            clip(r.principal.as_ref().map_or("-", |p| &*p.subject), 16),
            clip(&r.tool, 14),
            clip(&decision(r), 24),
            clip(&outcome, 17),
            clip(&error, 24),
            format_us(r.duration_us),
            clip(&r.arguments.to_string(), 60),
        )?;
    }
    Ok(())
}

/// The decision in a few words: `allow`, `deny`, `ask:rejected`, `ask:approved/once`,
/// `ask:approved/session#3` (the answer created grant 3), `ask:granted/always#2` (grant 2
/// answered without asking); `-` when the call did not get that far.
fn decision(r: &toolgate_core::AuditRecord) -> String {
    let Some(d) = r.decision else {
        return "-".into();
    };
    let mut text = enum_text(&d);
    if let Some(a) = &r.approval {
        text.push(':');
        text.push_str(&enum_text(a));
    }
    if let Some(scope) = r.scope {
        text.push('/');
        text.push_str(scope.as_str());
    }
    if let Some(g) = r.grant {
        text.push_str(&format!("#{g}"));
    }
    text
}

fn enum_text<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".into(),
    }
}

fn verify(a: VerifyArgs) -> anyhow::Result<Exit> {
    let store = a.store.open_existing()?;
    let v = store.verify_audit()?;
    if a.json {
        println!("{}", serde_json::to_string(&v)?);
    } else {
        match &v {
            Verification::Intact {
                records,
                head,
                unfinished,
            } => {
                let head = head
                    .as_ref()
                    .map(|h| format!(", head {h}"))
                    .unwrap_or_default();
                println!("audit log intact: {records} records{head}");
                if *unfinished > 0 {
                    println!(
                        "{unfinished} calls started with no record of their end (the process \
                         stopped while they ran; `toolgate audit --outcome started` lists them)"
                    );
                }
            }
            Verification::Broken {
                seq,
                kind,
                verified,
            } => println!(
                "audit log broken at record {seq}: {kind}; {verified} records before it verified"
            ),
        }
    }
    Ok(if v.is_intact() {
        Exit::Success
    } else {
        Exit::Recoverable
    })
}
