//! `git commit` in run_shell has the operator's identity, through the `toolgate` binary and
//! the real sandbox: toolgate, started with a `HOME` holding a `.gitconfig`, reads its
//! `user.name` and `user.email` at start (a real git) and nothing else of it (its pager, its
//! default branch, its signed commits and aliases do not reach the run); `[shell]
//! git_identity` sets another or none.

use super::{json, toolgate};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const GITCONFIG: &str = "[user]\n\tname = Ada Operator\n\temail = ada@example.invalid\n\
[core]\n\tpager = touch PAGER-RAN\n[init]\n\tdefaultBranch = from-global-config\n\
[commit]\n\tgpgsign = true\n";

const COMMIT: &str = "git init -q . && git commit -q --allow-empty -m first && \
git -p log -1 --format='%an <%ae> / %cn <%ce>' && git symbolic-ref --short HEAD";

/// `toolgate call run_shell` approving itself (`--yes`), started with `home` as `HOME`.
fn run_shell(ws: &Path, home: &Path, command: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "run_shell"])
        .arg(serde_json::json!({ "command": command }).to_string())
        .arg("-w")
        .arg(ws)
        .arg("--yes")
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .output()
        .expect("running toolgate");
    json(&out)
}

fn stdout(v: &Value) -> Vec<String> {
    assert_eq!(v["is_error"], false, "{v}");
    v["structured_content"]["stdout"]
        .as_str()
        .unwrap_or_else(|| panic!("no stdout: {v}"))
        .lines()
        .map(str::to_string)
        .collect()
}

/// A fresh workspace under `t`, with `config` as its `toolgate.toml` when given.
fn workspace(t: &Path, name: &str, config: Option<&str>) -> std::path::PathBuf {
    let ws = t.join(name);
    std::fs::create_dir_all(&ws).unwrap();
    if let Some(config) = config {
        std::fs::write(ws.join("toolgate.toml"), config).unwrap();
    }
    ws
}

#[test]
fn run_shell_commits_as_the_operator_and_as_the_configuration_says() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".gitconfig"), GITCONFIG).unwrap();

    let ws = workspace(t.path(), "operator", None);
    let lines = stdout(&run_shell(&ws, &home, COMMIT));
    assert_eq!(
        lines[0],
        "Ada Operator <ada@example.invalid> / Ada Operator <ada@example.invalid>"
    );
    assert_ne!(lines[1], "from-global-config");
    assert!(!ws.join("PAGER-RAN").exists());

    // an explicit identity replaces the operator's
    let ws = workspace(
        t.path(),
        "explicit",
        Some("[shell]\ngit_identity = { name = \"Build Bot\", email = \"bot@example.invalid\" }\n"),
    );
    let lines = stdout(&run_shell(&ws, &home, COMMIT));
    assert_eq!(
        lines[0],
        "Build Bot <bot@example.invalid> / Build Bot <bot@example.invalid>"
    );

    // turned off: no identity in the run
    let ws = workspace(t.path(), "off", Some("[shell]\ngit_identity = false\n"));
    let lines = stdout(&run_shell(
        &ws,
        &home,
        "echo \"${GIT_AUTHOR_NAME-unset} ${GIT_COMMITTER_EMAIL-unset}\"",
    ));
    assert_eq!(lines, ["unset unset"]);

    // a bad setting is a located problem
    let ws = workspace(t.path(), "bad", Some("[shell]\ngit_identity = \"me\"\n"));
    let out = toolgate(&["check", "-w", ws.to_str().unwrap()], &ws);
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("toolgate.toml:2:"), "{text}");
    assert!(text.contains("git_identity"), "{text}");
}
