//! Commits made in a run have an author: the identity read from the operator's git
//! configuration (here a `.gitconfig` in a temporary `HOME`, read by a real git), and nothing
//! else of that configuration reaches the run; `false` gives none, and the run's own
//! environment wins over it.

use super::shell_support::*;
use toolgate_tools::shell::{GitIdentity, Identity, ShellConfig};

/// A `.gitconfig` with an identity and settings that must not reach the run: a pager that
/// would create a file, a default branch, signed commits (which would fail without a key).
const GITCONFIG: &str = "[user]\n\tname = Ada Operator\n\temail = ada@example.invalid\n\
[core]\n\tpager = touch PAGER-RAN\n[init]\n\tdefaultBranch = from-global-config\n\
[commit]\n\tgpgsign = true\n[alias]\n\tci = commit\n";

const COMMIT: &str = "git init -q . && git commit -q --allow-empty -m first && \
git log -1 --format='%an <%ae> / %cn <%ce>' && git -p log -1 --format=%s && \
git symbolic-ref --short HEAD && (git ci -m x 2>&1 | head -1)";

fn shell_with(identity: GitIdentity, env: &[(&str, &str)]) -> Shell {
    let mut config = ShellConfig::default();
    config.git_identity = identity;
    for (k, v) in env {
        config.env.insert((*k).to_string(), (*v).to_string());
    }
    Shell::with(ShellSetup {
        config,
        ..ShellSetup::default()
    })
}

#[tokio::test]
async fn commits_are_by_the_operator_and_nothing_else_of_their_config_enters() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".gitconfig"), GITCONFIG).unwrap();
    let identity = Identity::from_global_config(Some(home.path().as_os_str()))
        .expect("git reads the identity of the .gitconfig");
    let s = shell_with(GitIdentity::Fixed(identity), &[]);
    let o = s.run(COMMIT).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "Ada Operator <ada@example.invalid> / Ada Operator <ada@example.invalid>"
    );
    // the pager is the sandbox's (cat), the branch git's own default, the alias unknown
    assert_eq!(lines[1], "first");
    assert_ne!(lines[2], "from-global-config");
    assert!(lines[3].contains("'ci' is not a git command"), "{lines:?}");
    assert!(!exists(s.ws().join("PAGER-RAN")));
}

#[tokio::test]
async fn no_identity_when_turned_off_and_the_runs_environment_wins() {
    let s = shell_with(GitIdentity::Off, &[]);
    let o = s
        .run("echo \"${GIT_AUTHOR_NAME-unset} ${GIT_COMMITTER_EMAIL-unset}\"")
        .await;
    assert_eq!(o.stdout, "unset unset\n");
    let fixed = Identity::new("Ada Operator", "ada@example.invalid").unwrap();
    let s = shell_with(
        GitIdentity::Fixed(fixed),
        &[("GIT_AUTHOR_NAME", "Set For Runs")],
    );
    let o = s
        .run("git init -q . && git commit -q --allow-empty -m first && git log -1 --format='%an <%ae> / %cn'")
        .await;
    assert_eq!(
        o.stdout, "Set For Runs <ada@example.invalid> / Ada Operator\n",
        "{o:?}"
    );
}
