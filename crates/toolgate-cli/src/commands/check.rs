//! `toolgate check [--config F] [--workspace DIR]`: validates the configuration, printing each
//! problem at `file:line:column` (and each bad row of `[mail]`'s contacts files at
//! `file:line:`); a valid one is recorded as the configuration in force in the
//! workspace (see [`super::in_force`]). Then what the sandbox can enforce here and the
//! effective profiles and rules. `--print-schema` prints the configuration's JSON Schema
//! instead.

use crate::exit::Exit;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `toolgate check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The configuration (default: `<workspace>/toolgate.toml` when it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// Print the JSON Schema of toolgate.toml and exit.
    #[arg(long)]
    print_schema: bool,
}

/// Runs the command: exit 0 when the configuration is valid, 1 when it has problems.
pub fn run(args: Args) -> anyhow::Result<Exit> {
    let mut out = std::io::stdout().lock();
    if args.print_schema {
        out.write_all(toolgate_config::schema::schema_json().as_bytes())?;
        return Ok(Exit::Success);
    }
    let workspace = super::open_workspace(args.workspace.as_deref())?;
    let names = super::nameable_names();
    let loaded = toolgate_config::locate(workspace.root(), args.config.as_deref())
        .map_err(|p| vec![p])
        .and_then(|located| {
            toolgate_config::load(workspace.root(), args.config.as_deref(), &names).and_then(|c| {
                match super::store_problem(&c, workspace.root()) {
                    Some(p) => Err(vec![p]),
                    None => Ok((located, c)),
                }
            })
        });
    let (located, config) = match loaded {
        Ok(c) => c,
        Err(problems) => {
            for p in &problems {
                writeln!(out, "{p}")?;
            }
            writeln!(
                out,
                "toolgate: {} problem{} in the configuration",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )?;
            return Ok(Exit::HostError);
        }
    };
    // what the file cannot show: the credentials' variables in this environment
    let missing = config.missing_credentials();
    if !missing.is_empty() {
        for p in &missing {
            writeln!(out, "{p}")?;
        }
        writeln!(
            out,
            "toolgate: {} problem{} in the configuration",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" }
        )?;
        return Ok(Exit::HostError);
    }
    let rows = contacts_problems(&config, workspace.root());
    if !rows.is_empty() {
        for p in &rows {
            writeln!(out, "{p}")?;
        }
        writeln!(
            out,
            "toolgate: {} problem{} in the contacts files of [mail]: `serve` and `call` skip \
             such rows (logging each) and send only to the others; fix or remove them",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )?;
        return Ok(Exit::HostError);
    }
    match config.file() {
        Some(f) => writeln!(out, "configuration {}: ok", f.display())?,
        None => writeln!(
            out,
            "no configuration (no {} in {}): toolgate's defaults",
            toolgate_config::CONFIG_FILE,
            workspace.root().display()
        )?,
    }
    super::in_force::record(&workspace, args.config.as_deref(), &located)?;
    writeln!(
        out,
        "in force: calls in this workspace run under {} from now on",
        match config.file() {
            Some(f) => f.display().to_string(),
            None => "toolgate's defaults".to_string(),
        }
    )?;
    if let Some(var) = config.token_env_configured() {
        if std::env::var(var).map_or(true, |v| v.is_empty()) {
            writeln!(
                out,
                "server: WARNING: token_env names {var}, which is not set here: `serve --http` \
                 would serve with a random token made for that start instead"
            )?;
        }
    }
    let report = toolgate_tools::shell::sandbox_report();
    let shell = config.shell_config();
    let missing = report.missing_for(!shell.allow_network);
    writeln!(
        out,
        "sandbox: landlock ABI {}, mount namespace {}, network namespace {}, pid namespace {}, \
         RLIMIT_NPROC {}",
        report.landlock_abi,
        yes(report.mount_namespace),
        yes(report.network_namespace),
        yes(report.pid_namespace),
        // "process limit no" read as "no bound on processes" above a line giving the
        // cgroup's; the kernel never applies RLIMIT_NPROC to root, which says why
        if report.process_limit {
            "yes"
        } else if report.root {
            "no (never applied to root)"
        } else {
            "no"
        }
    )?;
    if missing.is_empty() {
        writeln!(out, "sandbox: run_shell runs fully sandboxed here")?;
    } else if shell.allow_unsandboxed {
        writeln!(
            out,
            "sandbox: run_shell runs WITHOUT part of its sandbox (shell.allow_unsandboxed): missing {}",
            missing.join("; ")
        )?;
    } else {
        writeln!(
            out,
            "sandbox: run_shell refuses to run here: missing {}",
            missing.join("; ")
        )?;
    }
    writeln!(
        out,
        "shell: network {}, unix sockets {}",
        if shell.allow_network { "on" } else { "off" },
        if shell.allow_unix_sockets {
            "allowed ([shell] unix_sockets)"
        } else {
            "refused (seccomp; [shell] unix_sockets = true allows them)"
        }
    )?;
    writeln!(out, "{}", process_bound(&report, &shell.limits))?;
    sandbox_paths(
        &mut out,
        &workspace,
        &config,
        &shell,
        report.mount_namespace,
    )?;
    let specs = super::nameable_specs()?;
    let specs: Vec<&toolgate_core::ToolSpec> = specs.iter().collect();
    for line in config.summary(&specs) {
        writeln!(out, "{line}")?;
    }
    Ok(Exit::Success)
}

/// Which bound holds a run's processes and memory here: its cgroup (where and what limits),
/// `RLIMIT_NPROC` for a caller that is not root, or the timeout alone.
fn process_bound(
    report: &toolgate_tools::shell::SandboxReport,
    limits: &toolgate_tools::shell::ShellLimits,
) -> String {
    let limit = |v: Option<u64>, what: &str| match v {
        Some(n) => format!("at most {n} {what}"),
        None => format!("no limit on {what}"),
    };
    match &report.cgroup {
        Some(site) => format!(
            "processes: each run in a cgroup of its own, {}: {} at once{} \
             ([shell] max_processes, max_memory_bytes); every process of a run is killed \
             through it at its end",
            site.describe(),
            limit(limits.run_processes, "processes"),
            match (&site.memory, limits.run_memory_bytes) {
                (Some(_), Some(b)) => format!(
                    ", at most {b} bytes ({}) of memory together",
                    toolgate_tools::shell::bytes_text(b)
                ),
                (Some(_), None) => ", no memory cap".to_string(),
                (None, _) => ", memory not capped (no memory controller)".to_string(),
            }
        ),
        None if report.root => "processes: WARNING: timeout only, as root: RLIMIT_NPROC does \
             not apply to uid 0 and this machine gives toolgate no cgroup (cgroup v1 pids \
             hierarchy, or a delegated cgroup v2 subtree with the pids controller), so a fork \
             bomb or many processes' memory is bounded only by the run's timeout"
            .to_string(),
        None => format!(
            "processes: RLIMIT_NPROC, {} of this user at once (no cgroup for the runs here: \
             [shell] max_processes and max_memory_bytes do not apply)",
            limit(limits.processes, "processes")
        ),
    }
}

/// The problems of `[mail]`'s contacts files as `serve` would read them, each at
/// `file:line:` (the file relative to the workspace `root`): a file that does not parse, and
/// every row left out of the book (an empty name, an address that cannot be sent to, a line
/// break in a name).
fn contacts_problems(config: &toolgate_config::Config, root: &std::path::Path) -> Vec<String> {
    if config.mail().is_none() {
        return Vec::new();
    }
    let shown = |p: &std::path::Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    match toolgate_mail::ContactBook::load(&config.mail_contacts(root)) {
        Ok(book) => book
            .skipped()
            .iter()
            .map(|r| format!("{}:{}: {}", shown(&r.path), r.line, r.problem))
            .collect(),
        Err(toolgate_mail::MailError::Contacts { path, message }) => {
            vec![format!("{}: {message}", shown(&path))]
        }
        Err(e) => vec![e.to_string()],
    }
}

/// What run_shell's sandbox enforces of the path rules, the store and the configuration file
/// in this workspace, and what it cannot.
fn sandbox_paths(
    out: &mut dyn Write,
    workspace: &toolgate_core::Workspace,
    config: &toolgate_config::Config,
    shell: &toolgate_tools::shell::ShellConfig,
    mount_namespace: bool,
) -> anyhow::Result<()> {
    use toolgate_config::SandboxEnforces;
    if !mount_namespace {
        writeln!(
            out,
            "sandbox: without a mount namespace run_shell cannot hide the store nor the paths \
             deny rules cover, nor keep the configuration from being changed"
        )?;
        return Ok(());
    }
    let covered = match toolgate_tools::shell::covered(workspace.root(), shell) {
        Ok(c) => c,
        Err(e) => {
            writeln!(out, "sandbox: run_shell refuses to run here: {e}")?;
            return Ok(());
        }
    };
    writeln!(
        out,
        "sandbox: the store (.toolgate{}) is hidden from run_shell",
        match config.store_path(workspace.root()) {
            Some(p) => format!(", {}", p.display()),
            None => String::new(),
        }
    )?;
    if let Some(rel) = config.file_in_workspace() {
        writeln!(
            out,
            "sandbox: the configuration {} is read-only in run_shell: it cannot be changed, \
             removed, renamed or replaced, nor the directories above it moved",
            rel.display()
        )?;
    }
    protected_paths(out, &covered)?;
    let count = |paths: &[std::path::PathBuf], p: &toolgate_core::pattern::PathPattern| {
        paths.iter().filter(|x| p.matches(x)).count()
    };
    for r in config.sandbox_rules() {
        let head = if r.via_link {
            format!(
                "sandbox: rule {} (path:{}, where a link the rule names leads)",
                r.rule, r.pattern
            )
        } else {
            format!("sandbox: rule {} (path:{})", r.rule, r.pattern)
        };
        let (n, verb, how) = match r.enforced {
            SandboxEnforces::Hidden => (count(&covered.hidden, r.pattern), "read", "hidden"),
            SandboxEnforces::ReadOnly => {
                (count(&covered.read_only, r.pattern), "write", "read-only")
            }
            SandboxEnforces::Nothing(why) => {
                writeln!(out, "{head}: not enforced in run_shell: {why}")?;
                continue;
            }
        };
        if n == 0 {
            writeln!(
                out,
                "{head}: matches nothing in the workspace now, so run_shell is kept from \
                 nothing; a file created later is covered only in runs that start after it \
                 exists"
            )?;
        } else {
            writeln!(
                out,
                "{head}: run_shell cannot {verb} the {n} path{} it matches now ({how} in its \
                 mount namespace); what it matches later is covered from the next run on",
                if n == 1 { "" } else { "s" },
            )?;
        }
    }
    Ok(())
}

/// The protected entries (the names the write tools refuse) run_shell keeps read-only in
/// this workspace now, and what happens to one a run creates.
fn protected_paths(
    out: &mut dyn Write,
    covered: &toolgate_tools::shell::Covered,
) -> anyhow::Result<()> {
    use toolgate_tools::shell::{MAX_PROTECTED_DEPTH, MAX_PROTECTED_ENTRIES, SKIPPED_DIRS};
    const SHOWN: usize = 20;
    let mut names: Vec<String> = covered
        .protected
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    if covered.protected.len() > SHOWN {
        names.push(format!("and {} more", covered.protected.len() - SHOWN));
    }
    if names.is_empty() {
        writeln!(
            out,
            "sandbox: no protected path (.git, .vscode, .envrc, ...) exists in the workspace now"
        )?;
    } else {
        writeln!(
            out,
            "sandbox: protected paths run_shell cannot change, remove or move (the names the \
             write tools refuse; of a git directory its config, config.worktree and hooks, and \
             those of its submodules and worktrees): {}",
            names.join(", ")
        )?;
    }
    writeln!(
        out,
        "sandbox: protected paths are looked for when each run starts, {MAX_PROTECTED_DEPTH} \
         levels deep, outside {}; one a run creates is listed in its result and, in a \
         directory that existed, moved aside into .toolgate/quarantine/ (a new repository's \
         .git is left alone)",
        SKIPPED_DIRS.join(", ")
    )?;
    if covered.protected_cut {
        writeln!(
            out,
            "sandbox: the workspace has more than {MAX_PROTECTED_ENTRIES} entries to look at \
             for protected paths (outside the directories above): run_shell refuses to run \
             until there are fewer, since those past them could not be kept read-only"
        )?;
    }
    Ok(())
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
