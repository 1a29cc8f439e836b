//! Environment variables a command line sets: which are harmless, which change what a
//! program runs, and which would undo the sandbox's own settings. The analysis
//! ([`super::analyze`]) asks it about every variable a line sets.
//!
//! Many programs run a program, or load code, named by a variable: `GIT_PAGER`,
//! `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, `PAGER`,
//! `EDITOR`, `LD_PRELOAD`, `BASH_ENV`, `PYTHONSTARTUP`, `NODE_OPTIONS`, ... So a variable set
//! for a command (`VAR=value cmd`, `env VAR=value cmd`, `export VAR=...` earlier in the line)
//! makes the line uncertain unless it is one of [`HARMLESS`] (or a locale's `LC_*`), or a
//! name in lower case set to a literal number (`export n=5`): programs read their settings
//! from upper-case names, the few lower-case ones they read ([`LOWER_CASE_READ`]: proxies,
//! npm's settings, zsh's paths) stay uncertain, and a number names no program or code.
//!
//! The sandbox pins git's settings through its environment (see [`super::env`]: hooks,
//! fsmonitor, pagers, editors, ssh, credential helpers). Git reads `git -c` and
//! `GIT_CONFIG_PARAMETERS` after `GIT_CONFIG_COUNT`, so a command line could undo them; one
//! that sets, unsets or clears a pinned variable (`GIT_CONFIG_COUNT=...`, `unset GIT_PAGER`,
//! `env -i`, `env -u GIT_CONFIG_COUNT`), sets `GIT_CONFIG_PARAMETERS`, or sets a pinned key
//! with `git -c`/`--config-env` (or includes a file that could, `-c include.path=...`) is
//! refused, whatever the rules say. Setting a pinned variable or key to the value the sandbox
//! gives it already (`GIT_PAGER=cat`, `PAGER=`) changes nothing and is allowed.

use std::sync::LazyLock;

/// Variables that change no program's choice of what to run: locale, time zone, colour,
/// terminal size, Rust's backtraces and logs, and a few build and test switches.
pub const HARMLESS: &str = "LANG LANGUAGE TZ NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE \
     COLORTERM TERM COLUMNS LINES CI DEBIAN_FRONTEND SOURCE_DATE_EPOCH RUST_BACKTRACE \
     RUST_LIB_BACKTRACE RUST_LOG RUST_LOG_STYLE RUST_TEST_THREADS RUST_TEST_NOCAPTURE \
     CARGO_TERM_COLOR CARGO_TERM_VERBOSE CARGO_TERM_QUIET CARGO_TERM_PROGRESS_WHEN \
     CARGO_INCREMENTAL CARGO_BUILD_JOBS CARGO_TARGET_DIR PYTHONUNBUFFERED \
     PYTHONDONTWRITEBYTECODE PYTHONHASHSEED PYTHONIOENCODING PYTHONUTF8 PYTHONFAULTHANDLER \
     NODE_ENV GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME \
     GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE";

/// Lower-case variables programs read (`*_proxy` by curl, wget, git and Python; every
/// `npm_*` by npm, pnpm, yarn and bun, `npm_config_script_shell` naming the shell scripts run
/// in; zsh's arrays tied to its search paths): a number set to one is not read as harmless.
pub const LOWER_CASE_READ: &str = "path fpath cdpath module_path manpath mailpath fignore psvar";
/// Prefixes and suffixes of [`LOWER_CASE_READ`] names (compared ignoring case).
const LOWER_CASE_READ_AFFIXES: ([&str; 4], [&str; 1]) =
    (["npm_", "pnpm_", "yarn_", "bun_"], ["_proxy"]);

/// Whether `name` is in lower (or mixed) case, read by no program we know of, and `value` is
/// a literal integer.
fn lower_case_number(name: &str, value: Option<&str>) -> bool {
    let lower = name.to_ascii_lowercase();
    let (prefixes, suffixes) = LOWER_CASE_READ_AFFIXES;
    let digits = value.map(|v| v.strip_prefix('-').unwrap_or(v));
    name.bytes().any(|b| b.is_ascii_lowercase())
        && !listed(LOWER_CASE_READ, name)
        && !prefixes.iter().any(|p| lower.starts_with(p))
        && !suffixes.iter().any(|s| lower.ends_with(s))
        && digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Variables whose assignment changes what the shell itself runs or how it reads the line:
/// `BASH_CMDS` is the table of paths commands are found at (`BASH_CMDS[ls]=/usr/bin/touch`
/// makes `ls` run touch, as `hash -p` does) and `BASH_ALIASES` the aliases.
const SHELL_VARS: &str = "PATH BASH_ENV ENV IFS PROMPT_COMMAND SHELLOPTS BASHOPTS PS4 CDPATH \
     GLOBIGNORE BASH_CMDS BASH_ALIASES EXECIGNORE";

/// Whether assigning `name` (an array's element: `BASH_CMDS[ls]`) changes what the shell
/// itself runs or how it reads the line (`PATH`, `IFS`, `PS4`, `PROMPT_COMMAND`,
/// `BASH_CMDS`, `BASH_ALIASES`, `BASH_ENV`, an exported function `BASH_FUNC_*`).
pub(crate) fn changes_the_shell(name: &str) -> bool {
    let name = name.split('[').next().unwrap_or(name);
    listed(SHELL_VARS, name) || name.starts_with("BASH_FUNC")
}

/// Variables whose value a program runs as a shell command line (git through `sh -c`, bash
/// before each prompt, less for its input filter, man for its pager): besides making the line
/// uncertain as every such variable does, a literal value is read with the shell's grammar
/// so the rules that restrict hold for what it runs (`GIT_EXTERNAL_DIFF='touch x' git diff`
/// for `deny command:touch`).
const LINE_VARS: &str = "GIT_EXTERNAL_DIFF GIT_SSH_COMMAND GIT_SSH GIT_PROXY_COMMAND \
     GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_PAGER GIT_ASKPASS EDITOR VISUAL PAGER MANPAGER \
     SYSTEMD_PAGER PSQL_PAGER LESSOPEN LESSCLOSE PROMPT_COMMAND BROWSER SUDO_ASKPASS \
     SSH_ASKPASS FCEDIT RSYNC_RSH CVS_RSH SVN_SSH FZF_DEFAULT_COMMAND";

/// The command line a program runs from the variable `name` set to `value` (see
/// [`LINE_VARS`]; less's `|` or `||` before its filter is not part of it), `None` for any other
/// variable or an empty value.
pub(crate) fn line_of(name: &str, value: &str) -> Option<String> {
    let name = name.split('[').next().unwrap_or(name);
    if !listed(LINE_VARS, name) {
        return None;
    }
    let line = value.trim_start_matches('|').trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// Variables the sandbox sets besides its git pins (an assignment without a command changes
/// them for every later command, since they are exported).
const EXPORTED: &str = "PATH LANG LC_ALL TERM TZ USER HOME TMPDIR RUSTUP_HOME CARGO_HOME";

/// Whether `word` is one of the words of `list`.
fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

/// What setting one variable means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Var {
    /// Changes nothing of what runs.
    Harmless,
    /// May change what a program runs: the line is uncertain, for this reason.
    Changes(String),
    /// Would undo a setting the sandbox pins: the line is refused, for this reason.
    Pinned(String),
}

/// The sandbox's pinned variables and their values (from [`super::env::git_env`]).
static PINS: LazyLock<Vec<(String, String)>> = LazyLock::new(super::env::git_env);

/// What setting `name` to `value` means for the commands that see it (`value` is `None`
/// when it cannot be known: `read NAME`, `for NAME in`, a value holding an expansion).
pub(crate) fn judge(name: &str, value: Option<&str>) -> Var {
    // an element of an array is judged as the array (`BASH_CMDS[ls]`)
    let name = name.split('[').next().unwrap_or(name);
    if let Some(v) = pinned(name, value) {
        return v;
    }
    if name.starts_with("LC_") || listed(HARMLESS, name) {
        return Var::Harmless;
    }
    if changes_the_shell(name) {
        return Var::Changes(format!("an assignment to {name}, which changes what runs"));
    }
    if lower_case_number(name, value) {
        return Var::Harmless;
    }
    Var::Changes(format!(
        "an assignment to {name}, which the programs it runs may read (variables that \
         name programs or code: GIT_PAGER, LD_PRELOAD, NODE_OPTIONS, ...); only known \
         harmless ones (LANG, LC_*, TZ, NO_COLOR, RUST_BACKTRACE, ...) and lower-case names \
         set to a number (`export n=5`) are read as certain"
    ))
}

/// What setting `name` to a number the line gave it means, when which number is not known
/// here (`x=$((..)); export x`): as [`judge`] with a number. A pinned name is judged by its
/// exact value, so one given a number not known exactly undoes its pin.
pub(crate) fn judge_number(name: &str) -> Var {
    let name = name.split('[').next().unwrap_or(name);
    if is_pinned(name) {
        return Var::Pinned(format!(
            "it sets {name}, which the sandbox pins to keep git from running programs, to a \
             number only known when the line runs; run the command without it"
        ));
    }
    judge(name, Some("0"))
}

/// What an assignment without a command means: the shell variable changes for later
/// commands only when it is exported already (the sandbox's own) or shapes the shell.
pub(crate) fn judge_shell_variable(name: &str, value: Option<&str>) -> Var {
    let name = name.split('[').next().unwrap_or(name);
    if let Some(v) = pinned(name, value) {
        return v;
    }
    if listed(EXPORTED, name) || listed(SHELL_VARS, name) || name.starts_with("BASH_FUNC") {
        return judge(name, value);
    }
    Var::Harmless
}

/// What unsetting `name` (or `export -n`) means.
pub(crate) fn judge_unset(name: &str) -> Var {
    if is_pinned(name) {
        Var::Pinned(format!(
            "it unsets {name}, which the sandbox sets to keep git from running programs"
        ))
    } else {
        Var::Harmless
    }
}

/// Whether the sandbox pins `name` (or git reads it after the sandbox's pins).
pub(crate) fn is_pinned(name: &str) -> bool {
    name == "GIT_CONFIG_PARAMETERS"
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || PINS.iter().any(|(k, _)| k == name)
}

fn pinned(name: &str, value: Option<&str>) -> Option<Var> {
    if !is_pinned(name) {
        return None;
    }
    let same = PINS
        .iter()
        .any(|(k, v)| k == name && value == Some(v.as_str()))
        || (matches!(name, "GIT_PAGER" | "PAGER") && value == Some(""));
    Some(if same {
        Var::Harmless
    } else {
        Var::Pinned(format!(
            "it sets {name}, which the sandbox pins to keep git from running programs \
             (hooks, fsmonitor, pagers, editors, ssh); run the command without it"
        ))
    })
}

/// What `git -c KEY=VALUE` (or `--config-env=KEY=...`, `value` `None`) means for the
/// sandbox's pinned git keys: `Some` when it would override one (or include a file that
/// could).
pub(crate) fn judge_git_key(key: &str, value: Option<&str>) -> Option<Var> {
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("include.") || lower.starts_with("includeif.") {
        return Some(Var::Pinned(format!(
            "`git -c {key}` includes a file that could override the sandbox's git settings"
        )));
    }
    let (_, pin) = super::env::GIT_CONFIG
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))?;
    if value == Some(pin) {
        return None;
    }
    Some(Var::Pinned(format!(
        "`git -c {key}` overrides a git setting the sandbox pins ({key}={pin:?}) to keep git \
         from running programs; run the command without it"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn variables_are_harmless_changing_or_pinned() {
        for (name, value) in [
            ("LC_ALL", "C"),
            ("LC_MESSAGES", "C"),
            ("LANG", "C.UTF-8"),
            ("TZ", "UTC"),
            ("NO_COLOR", "1"),
            ("RUST_BACKTRACE", "1"),
            ("GIT_PAGER", "cat"),
            ("PAGER", ""),
            ("GIT_CONFIG_COUNT", "9"),
            ("GIT_CONFIG_KEY_1", "core.fsmonitor"),
            ("GIT_CONFIG_VALUE_1", "false"),
        ] {
            assert_eq!(judge(name, Some(value)), Var::Harmless, "{name}={value}");
        }
        for name in [
            "GIT_EXTERNAL_DIFF",
            "GIT_SSH_COMMAND",
            "EDITOR",
            "VISUAL",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "BASH_ENV",
            "PROMPT_COMMAND",
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "NODE_OPTIONS",
            "PATH",
            "HOME",
            "RUSTFLAGS",
            "MAKEFLAGS",
            "LESSOPEN",
            "MANPAGER",
            "GIT_EXEC_PATH",
            "FOO",
        ] {
            assert!(matches!(judge(name, Some("x")), Var::Changes(_)), "{name}");
        }
        for (name, value) in [
            ("GIT_CONFIG_COUNT", Some("1")),
            ("GIT_CONFIG_KEY_0", Some("core.fsmonitor")),
            ("GIT_CONFIG_VALUE_0", Some("touch x; false")),
            ("GIT_CONFIG_KEY_42", Some("x")),
            ("GIT_CONFIG_PARAMETERS", Some("'core.pager'='id'")),
            ("GIT_PAGER", Some("less")),
            ("PAGER", Some("sh -c id")),
            ("GIT_EDITOR", Some("vim")),
            ("GIT_ASKPASS", None),
            ("GIT_CONFIG_GLOBAL", Some("./evil")),
            ("GIT_CONFIG_NOSYSTEM", Some("0")),
        ] {
            assert!(
                matches!(judge(name, value), Var::Pinned(_)),
                "{name}={value:?}"
            );
        }
    }

    #[test]
    fn variables_that_hold_a_command_line_give_it() {
        assert_eq!(
            line_of("GIT_EXTERNAL_DIFF", "touch x").as_deref(),
            Some("touch x")
        );
        assert_eq!(
            line_of("LESSOPEN", "|| lesspipe %s").as_deref(),
            Some("lesspipe %s")
        );
        assert_eq!(line_of("PROMPT_COMMAND", " ").as_deref(), None);
        assert_eq!(line_of("LANG", "C").as_deref(), None);
        assert_eq!(line_of("FOO", "touch x").as_deref(), None);
    }

    #[test]
    fn shell_variables_matter_only_when_exported() {
        assert_eq!(judge_shell_variable("files", Some("x")), Var::Harmless);
        assert_eq!(judge_shell_variable("FOO", Some("x")), Var::Harmless);
        assert!(matches!(
            judge_shell_variable("HOME", Some("/x")),
            Var::Changes(_)
        ));
        assert!(matches!(
            judge_shell_variable("IFS", Some("/")),
            Var::Changes(_)
        ));
        assert!(matches!(
            judge_shell_variable("GIT_PAGER", Some("id")),
            Var::Pinned(_)
        ));
        for name in ["BASH_CMDS", "BASH_CMDS[ls]", "BASH_ALIASES[x]", "PATH[0]"] {
            assert!(
                matches!(
                    judge_shell_variable(name, Some("/usr/bin/touch")),
                    Var::Changes(_)
                ),
                "{name}"
            );
        }
        assert!(matches!(judge_unset("GIT_CONFIG_COUNT"), Var::Pinned(_)));
    }

    #[test]
    fn lower_case_names_set_to_numbers_are_harmless() {
        for (name, value) in [("x", "5"), ("count", "-1"), ("myVar", "0")] {
            assert_eq!(judge(name, Some(value)), Var::Harmless, "{name}={value}");
        }
        for (name, value) in [
            ("x", Some("abc")),
            ("x", Some("5 ")),
            ("x", Some("")),
            ("x", None),
            ("X", Some("5")),
            ("FOO_BAR", Some("1")),
            ("http_proxy", Some("1")),
            ("HTTPS_proxy", Some("1")),
            ("no_proxy", Some("1")),
            ("npm_config_script_shell", Some("1")),
            ("pnpm_config_x", Some("1")),
            ("yarn_x", Some("1")),
            ("path", Some("1")),
            ("fpath", Some("1")),
            ("PATH", Some("1")),
            ("IFS", Some("1")),
            ("GIT_PAGER", Some("1")),
        ] {
            assert!(
                !matches!(judge(name, value), Var::Harmless),
                "{name}={value:?}"
            );
        }
        assert_eq!(judge_unset("FOO"), Var::Harmless);
    }

    #[test]
    fn git_keys_the_sandbox_pins_cannot_be_overridden() {
        for (key, value) in [
            ("core.fsmonitor", Some("touch x")),
            ("core.fsMonitor", Some("true")),
            ("CORE.PAGER", Some("less")),
            ("core.hooksPath", Some(".githooks")),
            ("core.sshCommand", Some("id")),
            ("credential.helper", Some("!id")),
            ("protocol.ext.allow", Some("always")),
            ("core.editor", None),
            ("include.path", Some("./x")),
            ("includeIf.onbranch:main.path", Some("./x")),
        ] {
            assert!(
                matches!(judge_git_key(key, value), Some(Var::Pinned(_))),
                "{key}"
            );
        }
        assert_eq!(judge_git_key("core.pager", Some("cat")), None);
        assert_eq!(judge_git_key("color.ui", Some("always")), None);
        assert_eq!(judge_git_key("alias.x", Some("!id")), None);
    }
}
