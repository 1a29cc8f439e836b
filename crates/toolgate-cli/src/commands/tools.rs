//! `toolgate tools`: list tool definitions.

use crate::exit::Exit;
use clap::ValueEnum;

/// Arguments of `toolgate tools`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Agent profile whose tools to list (default: every tool).
    #[arg(long, short)]
    profile: Option<String>,
    /// The workspace whose toolgate.toml defines the profiles (default: the current
    /// directory).
    #[arg(long, short)]
    workspace: Option<std::path::PathBuf>,
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// One line per tool: name, effects, description's first line.
    Text,
    /// A JSON array of full definitions (name, title, description, inputSchema, outputSchema,
    /// effects, risk, timeoutMs, maxResultBytes, tags, version).
    Json,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let workspace = super::open_workspace(args.workspace.as_deref())?;
    let config = super::load_config(&workspace, args.config.as_deref(), super::ConfigUse::Show)?;
    let shell = config.shell_config();
    let gateway = super::gateway::start(&config, &workspace, None, shell.clone())?;
    let registry = super::gateway::registry(&config, &workspace, shell, gateway.as_ref())?;
    if let Some(g) = gateway {
        g.stop();
    }
    let specs = registry.list(args.profile.as_deref())?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&specs)?),
        Format::Text => {
            for s in specs {
                let e = s.effects;
                let mut flags = Vec::new();
                for (on, name) in [
                    (e.read_only, "read_only"),
                    (e.destructive && !e.read_only, "destructive"),
                    (e.idempotent, "idempotent"),
                    (e.open_world, "open_world"),
                    (e.concurrency_safe, "concurrency_safe"),
                ] {
                    if on {
                        flags.push(name);
                    }
                }
                let first = first_sentence(&s.description);
                println!(
                    "{:<14} {:<9} [{}] {}",
                    s.name,
                    s.risk.as_str(),
                    flags.join(","),
                    first
                );
            }
        }
    }
    Ok(Exit::Success)
}

/// The description up to its first sentence end (". "), for the one-line listing.
fn first_sentence(description: &str) -> &str {
    let line = description.lines().next().unwrap_or("");
    match line.find(". ") {
        Some(i) => &line[..=i],
        None => line,
    }
}
