//! `toolgate approvals`: the approval grants in the workspace's store.
//!
//! - `list [--session S] [--all] [--json]`: active grants (of a session and every `always`
//!   grant with `--session`); `--all` adds revoked, expired and spent ones
//! - `revoke ID`: the grant stops applying at once, in every process using the store
//! - `grant --tool PATTERN [--resource PATTERN]... [--scope always|session|once] [--session S]
//!   [--expires SPAN] [--note TEXT]`: an operator's grant made in advance

use super::store::{clip, format_time, StoreArgs};
use crate::exit::Exit;
use anyhow::bail;
use std::io::Write;
use std::time::{Duration, SystemTime};
use toolgate_core::audit::now_us;
use toolgate_core::grant::check_patterns;
use toolgate_store::{Grant, GrantFilter, GrantScope, NewGrant};

/// Arguments of `toolgate approvals`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// List grants: the active ones (default), or all with --all.
    List(ListArgs),
    /// Revoke a grant by its id; it stops applying at once.
    Revoke(RevokeArgs),
    /// Grant approval in advance for calls matching a tool (and resource) pattern.
    Grant(GrantArgs),
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Only grants that hold for this session (its own and every `always` grant).
    #[arg(long)]
    session: Option<String>,
    /// Also revoked, expired and spent grants.
    #[arg(long)]
    all: bool,
    /// One JSON object per grant per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
struct RevokeArgs {
    /// The grant's id (from `toolgate approvals list`).
    id: i64,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, clap::Args)]
struct GrantArgs {
    /// The tools it covers: a tool name or pattern.
    #[arg(long, value_name = "PATTERN")]
    tool: String,
    /// The resources it covers (`path:<glob>`, `host:<pattern>`, `command:<prefix>`);
    /// repeat it for several (a call is covered when each resource it touches matches one);
    /// default any resource.
    #[arg(long = "resource", value_name = "PATTERN")]
    resources: Vec<String>,
    /// How long it holds: `always` (every session), `session` or `once` (one call) of
    /// --session.
    #[arg(long, default_value = "always", value_parser = parse_scope)]
    scope: GrantScope,
    /// The session of a `session` or `once` grant.
    #[arg(long)]
    session: Option<String>,
    /// When it stops applying, as a span from now (`30m`, `8h`, `7d`); default never (until
    /// revoked).
    #[arg(long, value_name = "SPAN", value_parser = parse_span)]
    expires: Option<Duration>,
    /// Free text kept with the grant.
    #[arg(long)]
    note: Option<String>,
    /// Print the grant as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

fn parse_scope(s: &str) -> Result<GrantScope, String> {
    s.parse()
        .map_err(|e: toolgate_core::GrantError| e.to_string())
}

/// Parses a positive span such as `90s`, `30m`, `1h`, `7d`, of at most 100 years
/// ([`toolgate_core::grant::MAX_EXPIRY`]).
pub fn parse_span(s: &str) -> Result<Duration, String> {
    let shown: String = s.chars().take(40).collect();
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("{shown:?} is not a span such as 30m, 8h or 7d: {e}"))?;
    if d.is_zero() {
        return Err("a span of zero has already passed".into());
    }
    toolgate_config::check_span(d).map_err(|e| format!("{shown:?} {e}"))?;
    Ok(d)
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<Exit> {
    match a.command {
        Sub::List(a) => list(a),
        Sub::Revoke(a) => revoke(a),
        Sub::Grant(a) => grant(a),
    }
}

fn list(a: ListArgs) -> anyhow::Result<Exit> {
    let store = a.store.open_existing()?;
    let now = now_us(SystemTime::now());
    let grants = store.list_grants(&GrantFilter {
        active_at: (!a.all).then_some(now),
        session: a.session,
    })?;
    let rows: Vec<Row> = grants.into_iter().map(|g| Row::new(g, now)).collect();
    super::print_rows(&rows, a.json, |out, rows| table(out, rows))?;
    Ok(Exit::Success)
}

fn revoke(a: RevokeArgs) -> anyhow::Result<Exit> {
    let store = a.store.open_existing()?;
    let now = now_us(SystemTime::now());
    let g = match store.grant(a.id) {
        Ok(Some(g)) => Some(g),
        Ok(None) => bail!("there is no grant {}", a.id),
        // a damaged row can still be revoked: that is how an operator gets rid of it
        Err(e @ toolgate_store::StoreError::Corrupt { .. }) => {
            eprintln!("toolgate: warning: {e}");
            None
        }
        Err(e) => return Err(e.into()),
    };
    if !store.revoke_grant(a.id, now)? {
        bail!(
            "grant {} was revoked already, at {}",
            a.id,
            g.and_then(|g| g.revoked_us)
                .map(format_time)
                .unwrap_or_default()
        );
    }
    match g {
        Some(g) => println!(
            "revoked grant {}: {} {}",
            a.id,
            g.scope,
            clip(&g.tool_pattern, 80)
        ),
        None => println!("revoked grant {}", a.id),
    }
    Ok(Exit::Success)
}

fn grant(a: GrantArgs) -> anyhow::Result<Exit> {
    check_patterns(&a.tool, None)?;
    for r in &a.resources {
        check_patterns(&a.tool, Some(r))?;
    }
    match (a.scope, &a.session) {
        (GrantScope::Always, Some(_)) => {
            bail!("an always grant holds for every session: leave --session out")
        }
        (GrantScope::Session | GrantScope::Once, None) => {
            bail!("a {} grant needs --session", a.scope)
        }
        _ => {}
    }
    warn_if_no_tool_matches(&a.tool, a.store.workspace.as_deref());
    let store = a.store.open_or_create()?;
    let now = now_us(SystemTime::now());
    // at most 100 years (parse_span): no overflow
    let expires_us = a
        .expires
        .map(|d| now.saturating_add(u64::try_from(d.as_micros()).unwrap_or(u64::MAX)));
    let g = store.insert_grant(&NewGrant {
        tool_pattern: a.tool,
        resource_patterns: a.resources,
        scope: a.scope,
        session: a.session,
        created_us: now,
        expires_us,
        granted_by: Some("operator".into()),
        note: a.note,
        principal: None,
    })?;
    if a.json {
        println!("{}", serde_json::to_string(&Row::new(g, now))?);
    } else {
        println!(
            "granted {}: {} {}{}",
            g.id,
            g.scope,
            clip(&g.tool_pattern, 80),
            g.expires_us
                .map(|e| format!(", until {}", format_time(e)))
                .unwrap_or_default()
        );
    }
    Ok(Exit::Success)
}

/// Warns on stderr when the tool pattern matches none of the tools toolgate serves here (the
/// built-in tools under the workspace's configuration): the grant is stored, but approves
/// nothing until such a tool exists, which is most often a typo (`write-file`). The closest
/// name is suggested.
fn warn_if_no_tool_matches(pattern: &str, workspace: Option<&std::path::Path>) {
    let Ok(parsed) = toolgate_core::pattern::ToolPattern::parse(pattern) else {
        return;
    };
    let config = super::open_workspace(workspace)
        .ok()
        .and_then(|ws| super::load_config(&ws, None, super::ConfigUse::Show).ok())
        .unwrap_or_default();
    let Ok(tools) = super::builtin_tools(&config) else {
        return;
    };
    let names: Vec<&str> = tools.iter().map(|t| &*t.spec().name).collect();
    if names.iter().any(|n| parsed.matches(n)) {
        return;
    }
    let near = toolgate_core::suggest::closest(pattern, names.iter().copied())
        .map(|n| format!("; did you mean {n}?"))
        .unwrap_or_default();
    eprintln!(
        "toolgate: warning: the tool pattern {pattern:?} matches none of the tools here ({}){near} \
         The grant is stored, but approves nothing until a tool of that name exists.",
        names.join(", ")
    );
}

/// A grant as listed: the stored grant and its state now.
#[derive(serde::Serialize)]
struct Row {
    #[serde(flatten)]
    grant: Grant,
    /// `active`, `revoked`, `expired` or `spent`.
    state: &'static str,
}

impl Row {
    fn new(grant: Grant, now: u64) -> Row {
        let state = if grant.revoked_us.is_some() {
            "revoked"
        } else if grant.used_us.is_some() {
            "spent"
        } else if grant.expires_us.is_some_and(|e| e <= now) {
            "expired"
        } else {
            "active"
        };
        Row { grant, state }
    }
}

fn table(out: &mut dyn Write, rows: &[Row]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:>5} {:<8} {:<8} {:<24} {:<24} {:<20} {:<16} {:<20} BY",
        "ID", "STATE", "SCOPE", "TOOL", "RESOURCE", "SESSION", "PRINCIPAL", "EXPIRES"
    )?;
    for r in rows {
        let g = &r.grant;
        writeln!(
            out,
            "{:>5} {:<8} {:<8} {:<24} {:<24} {:<20} {:<16} {:<20} {}",
            g.id,
            r.state,
            g.scope.as_str(),
            clip(&g.tool_pattern, 24),
            clip(
                &if g.resource_patterns.is_empty() {
                    "*".to_string()
                } else {
                    g.resource_patterns.join(", ")
                },
                24
            ),
            clip(g.session.as_deref().unwrap_or("(every)"), 20),
            clip(g.principal.as_ref().map_or("(anyone)", |p| &*p.subject), 16),
            g.expires_us
                .map(format_time)
                .unwrap_or_else(|| "never".into()),
            clip(g.granted_by.as_deref().unwrap_or("-"), 16),
        )?;
    }
    Ok(())
}
