//! `toolgate export --format F [--strict] [--profile P]`: the tool definitions a profile
//! lists, in a provider's shape (the value of the request's `tools`; for MCP a `tools/list`
//! result), on stdout as JSON. Deferred tools are left out (`search_tools` finds them).
//! With `--definitions FILE` the definitions come from a file (any dialect `validate` reads)
//! instead of the built-in tools. Every change the provider's rules forced (names,
//! strict-mode rewrites, what Gemini's schema cannot say) is counted on stderr, and listed
//! with `--warnings`.

use crate::exit::Exit;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use toolgate_core::import::{self, Dialect, ImportOptions};
use toolgate_core::provider::{export, export_profile, ExportOptions, Provider};

/// Arguments of `toolgate export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The provider's shape: mcp, openai (Chat Completions), openai-responses, anthropic,
    /// gemini.
    #[arg(long, value_name = "FORMAT")]
    format: Provider,
    /// OpenAI's strict mode: schemas rewritten for it and "strict": true (a tool strict
    /// mode cannot express is sent with "strict": false, with a warning).
    #[arg(long)]
    strict: bool,
    /// The agent profile whose listed tools to export (default: every tool).
    #[arg(long, short)]
    profile: Option<String>,
    /// Export the definitions in this file instead of the built-in tools.
    #[arg(long, value_name = "FILE")]
    definitions: Option<PathBuf>,
    /// The dialect of --definitions (default: detected per definition).
    #[arg(long, default_value = "auto", requires = "definitions")]
    dialect: Dialect,
    /// List every change on stderr, one a line.
    #[arg(long)]
    warnings: bool,
    /// The workspace whose toolgate.toml defines the profiles (default: the current
    /// directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let options = ExportOptions::default().with_strict(args.strict);
    let out = match &args.definitions {
        Some(path) => {
            if args.profile.is_some() {
                anyhow::bail!("--profile selects built-in tools; it cannot go with --definitions");
            }
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let imported =
                import::import_definitions(&text, args.dialect, &ImportOptions::default())
                    .with_context(|| format!("importing definitions from {}", path.display()))?;
            if imported.is_empty() {
                anyhow::bail!(no_definitions(path));
            }
            export(imported.iter().map(|i| &i.spec), args.format, options)
        }
        None => {
            let workspace = super::open_workspace(args.workspace.as_deref())?;
            let config =
                super::load_config(&workspace, args.config.as_deref(), super::ConfigUse::Show)?;
            let registry = super::builtin_registry(&config, &workspace)?;
            export_profile(&registry, args.profile.as_deref(), args.format, options)?
        }
    };
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, &out.request_tools())?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    if args.warnings {
        for w in &out.warnings {
            eprintln!("toolgate: {}: {w}", args.format);
        }
    } else if !out.warnings.is_empty() {
        eprintln!(
            "toolgate: {} tools exported for {}, {} changes (--warnings lists them)",
            out.tools.len(),
            args.format,
            out.warnings.len()
        );
    }
    Ok(Exit::Success)
}

/// The error of a definitions file that holds none (an empty file, `[]`).
pub(crate) fn no_definitions(path: &std::path::Path) -> String {
    format!(
        "{} holds no definitions; give a file of tool definitions (a JSON array, JSON lines, \
         or a tools/list result)",
        path.display()
    )
}
