//! Protected paths: places in a workspace that no tool writes by default, because writing
//! them hands over control of something beyond the file.
//!
//! | what | where | why |
//! |---|---|---|
//! | git internals | a component named `.git`, at any depth, and everything below it | `.git/config` (`core.fsmonitor`, `core.pager`), `.git/hooks/*` and a planted `.git` file (`gitdir: ...`) run code the next time anyone runs git |
//! | toolgate's store | a component named `.toolgate`, at any depth, and everything below it | the audit log, spilled results, grants and the policy live there |
//! | toolgate's configuration | a file named `toolgate.toml`, at any depth | it sets the policy the agent runs under |
//! | editor and agent settings | a component named `.vscode`, `.idea`, `.zed`, `.claude`, `.cursor`, `.gemini`, `.codex`, `.windsurf`, `.continue`, `.roo`, `.kiro`, `.amazonq` or `.opencode`, and everything below it; a file named `.mcp.json`, `opencode.json` (or `.jsonc`), `.aider.conf.yml` (or `.yaml`), or ending in `.code-workspace` | they start commands (VS Code `tasks.json` on folder open, an MCP server a project config declares, aider's `test-cmd`) or lift the approvals of the next agent run (`chat.tools.autoApprove`, CVE-2025-53773; `.cursor/mcp.json`, CVE-2025-54135; opencode's `permission`) |
//! | hook and shell start-up files | a component named `.husky`; a file named `.gitconfig`, `.pre-commit-config.yaml` (or `.yml`), `lefthook.yml` (also `.yaml`, with a leading dot, or `-local`), or a start-up file of bash, zsh, ksh or csh (`.bashrc`, `.bash_profile`, `.bash_login`, `.bash_logout`, `.profile`, `.zshenv`, `.zshrc`, `.zprofile`, `.zlogin`, `.zlogout`, `.kshrc`, `.cshrc`, `.tcshrc`, `.login`, `.logout`) | they run code at the next commit, checkout or shell start (a hook manager's configuration names the commands its installed git hook runs; a workspace may be a home directory, and zsh reads `.zshenv` for every script it runs) |
//! | ssh's directory | a component named `.ssh` | `config` runs commands at the next ssh (`ProxyCommand`, `LocalCommand`), `authorized_keys` lets a key in (a workspace may be a home directory) |
//! | directory environments | a file named `.envrc`; a component named `.devcontainer` | direnv runs `.envrc` when a shell enters the directory; a dev container's `devcontainer.json` runs `postCreateCommand` and the like when an editor opens the folder |
//! | user configuration under `.config` | a component named `git`, `fish` or `direnv` directly under one named `.config` | in a home directory, `.config/git/config` is git's global configuration (`core.fsmonitor`, `core.pager`, filters run code, as `.gitconfig`'s do), `.config/fish/config.fish` fish's start-up file, `.config/direnv/direnvrc` runs for every `.envrc` |
//!
//! All of them are protected at every depth, not only at the root: a directory of this
//! workspace may be the root of another session's workspace, or of a project an editor
//! opens.
//!
//! Names are compared the way the file systems a workspace may live on compare them, so a
//! spelling that names the same entry is caught too: ASCII case is ignored (`.GIT/config` on a
//! case-insensitive volume), characters HFS+ ignores in names (zero-width joiners and
//! direction marks, U+200C to U+200F, U+202A to U+202E, U+206A to U+206F, U+FEFF) are
//! dropped, trailing dots and spaces are dropped (NTFS drops them), what follows a colon is
//! dropped (`.git::$INDEX_ALLOCATION` is `.git`'s own directory stream on NTFS), and the NTFS
//! short name `GIT~1` counts as `.git`. This is the same set of aliases git itself refuses in paths.
//!
//! The check runs on the canonical resolved path ([`WsPath`], symbolic links already
//! followed), so a link named `innocent` that points at `.git/config` is caught as
//! `.git/config`.
//!
//! `run_shell` cannot be checked path by path, so its sandbox applies the same table
//! ([`protected_name`]) to what exists when a run starts: see `shell/binds.rs`.
//!
//! The store (`.toolgate`) is also hidden from the read tools ([`resolve_for_read`], and the
//! walks of `glob`, `search_code` and `list_resources` skip it), as `run_shell`'s sandbox
//! hides it: it holds the audit log, the stored results and the grants of every session, so
//! reading it would show one session what another ran and got back. A read tool's guard
//! refuses a path argument naming it ([`guard_read`], before the policy is asked, without
//! I/O), so a read of this workspace's store and one of a store nested deeper (another
//! workspace's) are both the recoverable `unsafe_input` / `protected_path`, each with a
//! message saying which it is.

use std::ffi::OsStr;
use std::path::Component;
use toolgate_core::{ToolContext, ToolError, WsPath};

/// Why the store is protected, in words for the model.
const STORE: &str = "toolgate's own store and configuration (.toolgate)";

/// Why `path` is protected, in words for the model (for example `"git internals (.git)"`),
/// or `None` when it is not. See the module docs for the list and the name comparison.
pub fn is_protected(path: &WsPath) -> Option<&'static str> {
    let mut parent = None;
    for component in path.as_path().components() {
        let Component::Normal(name) = component else {
            parent = None;
            continue;
        };
        if let Some(why) = protected_entry(parent, name) {
            return Some(why);
        }
        parent = Some(name);
    }
    None
}

/// Why the entry `name` in a directory named `parent` (`None` at the root, or when the
/// directory's name is not known) is protected: [`protected_name`], or a user configuration
/// directory under `.config` (see the module docs).
pub fn protected_entry(parent: Option<&OsStr>, name: &OsStr) -> Option<&'static str> {
    if let Some(why) = protected_name(name) {
        return Some(why);
    }
    use std::os::unix::ffi::OsStrExt;
    let parent = parent.filter(|p| p.as_bytes().first() == Some(&b'.'))?;
    if fold(parent).as_deref() != Some(".config") {
        return None;
    }
    matches!(fold(name).as_deref(), Some("git" | "fish" | "direnv")).then_some(
        "a program's user configuration under .config (git's global configuration, fish's \
         start-up file, direnv's rc), which runs code at the next git command or shell start",
    )
}

/// The error for a write to a protected path: `unsafe_input` with reason `protected_path`.
/// `shown` is the path as shown to the model, `why` what [`is_protected`] said.
pub fn protected_error(shown: &str, why: &str) -> ToolError {
    ToolError::unsafe_input(
        "protected_path",
        format!(
            "{shown:?} is a protected path ({why}); toolgate's tools do not write there. Change \
             files elsewhere in the workspace, or ask the operator to make this change"
        ),
    )
    .with_details(serde_json::json!({"protected": why}))
}

/// Checks `path` against the protected paths.
///
/// # Errors
/// `unsafe_input` with reason `protected_path` (see [`protected_error`]).
pub fn check(path: &WsPath) -> Result<(), ToolError> {
    match is_protected(path) {
        Some(why) => Err(protected_error(&path.display(), why)),
        None => Ok(()),
    }
}

/// Whether `name` names toolgate's store (`.toolgate`, compared as the module docs say).
pub fn is_store_name(name: &OsStr) -> bool {
    protected_name(name) == Some(STORE)
}

/// Resolves a path argument of a read tool (see [`ToolContext::resolve`]) and refuses a path
/// in toolgate's store.
///
/// # Errors
/// What [`ToolContext::resolve`] returns; `unsafe_input` / `protected_path` for the store.
pub fn resolve_for_read(ctx: &ToolContext, path: &str) -> Result<WsPath, ToolError> {
    let resolved = ctx.resolve(path)?;
    let names: Vec<&OsStr> = resolved
        .as_path()
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    match store_error(&names) {
        Some(e) => Err(e),
        None => Ok(resolved),
    }
}

/// A read tool's guard: refuses a path argument that names toolgate's store once `.` and `..`
/// are taken as written (`.toolgate/audit.jsonl`, `sub/.TOOLGATE/x`, `a/../.toolgate`, the
/// root's absolute path before any of them), without I/O. A spelling through a link is
/// refused when the handler resolves it ([`resolve_for_read`]).
///
/// # Errors
/// `unsafe_input` / `protected_path`, saying whether the store is this workspace's (at the
/// root) or another toolgate workspace's nested in it.
pub fn guard_read(ctx: &ToolContext, path: &str) -> Result<(), ToolError> {
    let mut p = std::path::Path::new(path);
    if p.is_absolute() {
        match ctx
            .workspace()
            .and_then(|ws| p.strip_prefix(ws.root()).ok())
        {
            Some(rel) => p = rel,
            // outside the root, or no workspace: resolving the path refuses it
            None => return Ok(()),
        }
    }
    let mut names: Vec<&OsStr> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(name) => names.push(name),
            Component::ParentDir => {
                names.pop();
            }
            _ => {}
        }
    }
    match store_error(&names) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The error for a read of the path `names` (relative to the root) when it lies in a store.
fn store_error(names: &[&OsStr]) -> Option<ToolError> {
    let at = names.iter().position(|n| is_store_name(n))?;
    let shown = display(names);
    let (why, message) = if at == 0 {
        (
            STORE.to_string(),
            format!(
                "{shown:?} is in this workspace's toolgate store (.toolgate), which holds the \
                 audit log, stored results and grants of every session; the read tools do not \
                 show it. Read files elsewhere in the workspace (a stored result of this \
                 session is read with read_result)"
            ),
        )
    } else {
        let store = display(&names[..=at]);
        (
            format!("the toolgate store of a workspace nested in this one ({store})"),
            format!(
                "{shown:?} is in {store}, the toolgate store of another workspace nested in \
                 this one, which holds that workspace's audit log, stored results and grants; \
                 the read tools do not show it. Read files elsewhere in the workspace"
            ),
        )
    };
    Some(
        ToolError::unsafe_input("protected_path", message)
            .with_details(serde_json::json!({ "protected": why })),
    )
}

/// `names` joined by `/`, as paths are shown to the model.
fn display(names: &[&OsStr]) -> String {
    names
        .iter()
        .map(|n| n.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Why one file name is protected, in words for the model, or `None` when it is not
/// (compared as the module docs say: `.VSCode` and `.git.` are protected names).
pub fn protected_name(name: &OsStr) -> Option<&'static str> {
    if is_code_workspace(name) {
        return Some(AGENT);
    }
    if !may_be_protected(name) {
        return None;
    }
    let key = fold(name)?;
    match key.as_str() {
        ".git" | "git~1" => Some("git internals (.git)"),
        ".toolgate" => Some(STORE),
        "toolgate.toml" => Some("toolgate's configuration (toolgate.toml)"),
        ".vscode" | ".idea" | ".zed" | ".claude" | ".cursor" | ".gemini" | ".codex"
        | ".windsurf" | ".continue" | ".roo" | ".kiro" | ".amazonq" | ".opencode" | ".mcp.json"
        | "opencode.json" | "opencode.jsonc" | ".aider.conf.yml" | ".aider.conf.yaml" => {
            Some(AGENT)
        }
        ".husky"
        | ".gitconfig"
        | ".pre-commit-config.yaml"
        | ".pre-commit-config.yml"
        | "lefthook.yml"
        | "lefthook.yaml"
        | ".lefthook.yml"
        | ".lefthook.yaml"
        | "lefthook-local.yml"
        | "lefthook-local.yaml"
        | ".lefthook-local.yml"
        | ".lefthook-local.yaml" => {
            Some("git hooks and configuration, which run code at the next git command")
        }
        ".bashrc" | ".bash_profile" | ".bash_login" | ".bash_logout" | ".profile" | ".zshenv"
        | ".zshrc" | ".zprofile" | ".zlogin" | ".zlogout" | ".kshrc" | ".cshrc" | ".tcshrc"
        | ".login" | ".logout" => {
            Some("a shell start-up file, which runs code at the next shell start")
        }
        ".ssh" => Some(
            "ssh's configuration and keys, which run commands at the next ssh \
             (ProxyCommand) or let a key in (authorized_keys)",
        ),
        ".cargo" | "rust-toolchain" | "rust-toolchain.toml" => Some(
            "cargo's and rustup's settings (.cargo/config.toml names a rustc-wrapper, a linker, \
             aliases; rust-toolchain names the toolchain that runs), which run code at the next \
             cargo or rustc",
        ),
        ".yarnrc" | ".yarnrc.yml" => Some(
            "yarn's settings (yarnPath, yarn-path: the file every yarn command runs), which run \
             code at the next yarn",
        ),
        ".envrc" | ".devcontainer" => Some(
            "a directory environment (direnv's .envrc, a dev container), which runs code when \
             a shell or an editor enters the directory",
        ),
        _ => None,
    }
}

/// Why editor and agent settings are protected, in words for the model.
const AGENT: &str = "editor or agent settings, which can run commands or lift approvals";

/// Whether `name` ends in `.code-workspace` (ASCII case ignored, trailing dots and spaces
/// dropped): a VS Code workspace file carries settings and tasks as `.vscode` does.
fn is_code_workspace(name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const SUFFIX: &[u8] = b".code-workspace";
    let mut b = name.as_bytes();
    if let Some(colon) = b.iter().position(|&c| c == b':') {
        b = &b[..colon];
    }
    while let [rest @ .., b'.' | b' '] = b {
        b = rest;
    }
    b.len() >= SUFFIX.len() && b[b.len() - SUFFIX.len()..].eq_ignore_ascii_case(SUFFIX)
}

/// Whether `name` names git's directory (`.git` or an alias of it, compared as the module
/// docs say), whose content is git's objects and refs as well as its configuration and hooks.
pub fn is_git_name(name: &OsStr) -> bool {
    matches!(fold(name).as_deref(), Some(".git" | "git~1"))
}

/// Whether `name` can fold to a protected name, from its first byte: every protected name
/// starts with `.`, `t` (`toolgate.toml`), `g` (`GIT~1`), `l` (`lefthook.yml`), `o`
/// (`opencode.json`) or `r` (`rust-toolchain`), in either case, possibly after HFS+-ignorable characters (whose UTF-8
/// starts with `0xE2` or `0xEF`).
/// Run on every entry of a workspace walk, so most names are passed over without folding.
fn may_be_protected(name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    matches!(
        name.as_bytes().first(),
        Some(
            b'.' | b't'
                | b'T'
                | b'g'
                | b'G'
                | b'l'
                | b'L'
                | b'o'
                | b'O'
                | b'r'
                | b'R'
                | 0xE2
                | 0xEF
        )
    )
}

/// The longest protected name, in bytes after folding; longer names are not looked at.
const MAX_PROTECTED_LEN: usize = ".pre-commit-config.yaml".len();

/// `name` folded for comparison: HFS+-ignorable characters dropped, ASCII lower-cased, what
/// follows a colon dropped (an NTFS stream of the entry), trailing dots and spaces dropped. `None` when it cannot be a protected name (not UTF-8, or
/// longer than any protected name once folded).
fn fold(name: &OsStr) -> Option<String> {
    let name = name.to_str()?;
    let mut key = String::with_capacity(name.len().min(MAX_PROTECTED_LEN * 4));
    for c in name.chars() {
        if is_hfs_ignorable(c) {
            continue;
        }
        if c == ':' {
            break;
        }
        if key.len() >= MAX_PROTECTED_LEN * 4 {
            return None;
        }
        key.push(c.to_ascii_lowercase());
    }
    let trimmed = key.trim_end_matches(['.', ' ']).len();
    key.truncate(trimmed);
    (key.len() <= MAX_PROTECTED_LEN).then_some(key)
}

/// Code points HFS+ ignores when it compares names (git's `is_hfs_dotgit` list).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Workspace;

    fn ws_path(ws: &Workspace, p: &str) -> WsPath {
        ws.resolve(p).unwrap()
    }

    #[test]
    fn git_toolgate_and_config_are_protected_at_any_depth_in_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        for p in [
            ".git",
            ".git/config",
            ".git/hooks/pre-commit",
            "vendor/lib/.git/config",
            ".GIT/config",
            ".Git/HEAD",
            ".git./config",
            ".git /config",
            ".g\u{200c}it/config",
            "\u{feff}.git/hooks/post-checkout",
            "GIT~1/config",
            ".git::$INDEX_ALLOCATION/config",
            ".git:stream",
            ".mcp.json::$DATA",
            ".toolgate",
            ".toolgate/policy.toml",
            ".TOOLGATE/audit.jsonl",
            "sub/.toolgate/policy.toml",
            "toolgate.toml",
            "TOOLGATE.TOML",
            "nested/project/toolgate.toml",
            ".vscode/settings.json",
            ".VSCode/tasks.json",
            "app/.vscode/settings.json",
            ".idea/workspace.xml",
            ".claude/settings.json",
            ".cursor/mcp.json",
            ".gemini/settings.json",
            ".codex/config.toml",
            ".mcp.json",
            ".zed/settings.json",
            ".windsurf/rules/x.md",
            ".continue/mcpServers/x.yaml",
            ".roo/mcp.json",
            ".kiro/settings/mcp.json",
            ".amazonq/mcp.json",
            ".opencode/agent/x.md",
            "opencode.json",
            "svc/OpenCode.jsonc",
            ".aider.conf.yml",
            "app.code-workspace",
            "x/App.Code-Workspace.",
            ".husky/pre-commit",
            ".pre-commit-config.yaml",
            ".pre-commit-config.yml",
            "lefthook.yml",
            "svc/.Lefthook.yml",
            "lefthook-local.yml",
            ".lefthook-local.yaml",
            ".gitconfig",
            ".bashrc",
            ".Bash_Profile",
            ".zshrc",
            ".zshenv",
            ".ZLogin",
            ".zlogout",
            ".bash_login",
            ".bash_logout",
            ".kshrc",
            ".cshrc",
            ".tcshrc",
            ".login",
            ".profile",
            ".ssh/config",
            ".ssh/authorized_keys",
            ".envrc",
            "app/.ENVRC",
            ".devcontainer/devcontainer.json",
            "svc/.DevContainer/Dockerfile",
            ".cargo/config.toml",
            "crates/x/.cargo/config",
            "rust-toolchain",
            "Rust-Toolchain.toml",
            ".yarnrc.yml",
            "web/.yarnrc",
            ".config/git",
            ".config/git/config",
            ".config/git/attributes",
            ".CONFIG/Git/config",
            ".config./git/config",
            "home/.config/fish/config.fish",
            ".config/direnv/direnvrc",
        ] {
            assert!(is_protected(&ws_path(&ws, p)).is_some(), "{p}");
        }
        for p in [
            ".",
            "src/main.rs",
            ".gitignore",
            ".github/workflows/ci.yml",
            ".gitmodules",
            "git/config",
            "my.git/config",
            ".git-rewrite/x",
            "toolgate.toml.bak",
            "toolgate.tom",
            ".toolgates/x",
            "docs/toolgate/policy.md",
            "\u{e9}.git",
            "vscode/settings.json",
            "mcp.json",
            "docs/.mcp.json.md",
            "code-workspace",
            "app.code-workspace.bak",
            "opencode.json.example",
            "zed/settings.json",
            "ssh/config",
            "git:x",
            "bashrc",
            "envrc",
            ".envrc.example",
            "pre-commit-config.yaml",
            ".pre-commit-hooks.yaml",
            "lefthook.yaml.example",
            "devcontainer/devcontainer.json",
            "cargo/config.toml",
            "rust-toolchain.md",
            "yarnrc.yml",
            ".yarnrc.yml.example",
            "docs/rust-toolchain-notes.txt",
            ".config/nextest.toml",
            ".config/nvim/git",
            "config/git/config",
            ".config",
            "git/.config",
            &"x".repeat(255),
        ] {
            assert_eq!(is_protected(&ws_path(&ws, p)), None, "{p}");
        }
    }

    #[test]
    fn the_check_sees_the_resolved_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(".git/hooks", dir.path().join("innocent")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let p = ws_path(&ws, "innocent/pre-commit");
        let e = check(&p).unwrap_err();
        assert_eq!(e.kind, toolgate_core::ErrorKind::UnsafeInput);
        assert_eq!(e.reason.as_deref(), Some("protected_path"));
        assert!(e.message.contains(".git/hooks/pre-commit"), "{}", e.message);
        assert!(check(&ws_path(&ws, "src/lib.rs")).is_ok());
    }

    #[test]
    fn names_that_are_not_utf8_are_not_protected_names() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(protected_name(OsStr::from_bytes(b".git\xff")), None);
        assert_eq!(fold(OsStr::new(".GiT. . ")).as_deref(), Some(".git"));
        assert_eq!(fold(OsStr::new("..")).as_deref(), Some(""));
        assert!(is_git_name(OsStr::new(".GIT.")) && is_git_name(OsStr::new("git~1")));
        assert!(!is_git_name(OsStr::new(".github")) && !is_git_name(OsStr::new(".vscode")));
    }
}
