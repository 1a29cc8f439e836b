//! run_shell and the protected paths of `fs::protected`: what the write tools refuse, the
//! sandbox keeps read-only wherever it exists when a run starts (root and nested), and what a
//! run creates is reported and, in a directory that existed, moved aside.

use super::shell_support::*;
use serde_json::json;
use std::time::Instant;
use toolgate_core::TypedTool;
use toolgate_tools::shell::run_shell::{RunShellArgs, RunShellOutput};
use toolgate_tools::shell::{RunShell, ShellConfig};

/// Runs `command` through the handler alone (no guard, no policy), default configuration.
async fn direct(s: &Shell, command: &str) -> RunShellOutput {
    let args: RunShellArgs = serde_json::from_value(json!({ "command": command })).unwrap();
    RunShell::new(ShellConfig::default())
        .call(args, s.ctx())
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

/// Runs each of `attacks`, which must fail (a non-zero exit: the sandbox refused a write).
async fn fail_each(s: &Shell, attacks: &[&str]) {
    for attack in attacks {
        let o = direct(s, attack).await;
        assert_ne!(o.exit_code, Some(0), "{attack}: {o:?}");
    }
}

/// The per-run cost in a workspace with a 100,000-entry `node_modules` and a 10,000-file
/// source tree: measured, printed, and bounded loosely (`--ignored`, it builds 110k files).
#[tokio::test]
#[ignore = "builds a 110k-entry tree; run by hand to measure"]
async fn per_run_cost_with_a_large_tree() {
    let s = Shell::new();
    s.setup(
        "git init -q && for p in $(seq 1 1000); do mkdir -p node_modules/pkg$p/lib && \
         (cd node_modules/pkg$p/lib && touch $(seq -f f%g.js 1 98)); done && \
         for d in $(seq 1 500); do mkdir -p src/m$((d % 20))/d$d && \
         (cd src/m$((d % 20))/d$d && touch $(seq -f s%g.rs 1 20)); done && \
         mkdir -p node_modules/pkg1/.vscode src/m1/.vscode",
    );
    // the machine may be shared: the median wall time, and the CPU time of this process
    // (the looks before and after a run, the spawn, reading the pipes), which load does not
    // inflate. Cold: a new tool each run (no earlier look); warm: one tool, as a server runs.
    let warm = RunShell::new(ShellConfig::default());
    let args: RunShellArgs = serde_json::from_value(json!({ "command": "true" })).unwrap();
    for cold in [true, false] {
        let _ = warm.call(args.clone(), s.ctx()).await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let mut walls = Vec::new();
        let cpu_before = process_cpu();
        for _ in 0..20 {
            let started = Instant::now();
            let o = if cold {
                direct(&s, "true").await
            } else {
                warm.call(args.clone(), s.ctx()).await.unwrap()
            };
            walls.push(started.elapsed());
            assert_eq!(o.exit_code, Some(0), "{o:?}");
        }
        let cpu = (process_cpu() - cpu_before) / 20;
        walls.sort();
        eprintln!(
            "per run ({}): median {:?} wall, {cpu:?} CPU in toolgate",
            if cold { "cold" } else { "warm" },
            walls[10]
        );
        assert!(walls[10].as_secs() < 2, "{walls:?}");
    }
    let cpu_before = process_cpu();
    for _ in 0..20 {
        toolgate_tools::shell::covered(&s.ws(), &ShellConfig::default()).unwrap();
    }
    let plan = (process_cpu() - cpu_before) / 20;
    eprintln!("planning alone (cold): {plan:?} CPU");
}

/// The user and system CPU time of this process so far (`/proc/self/stat`, in clock ticks
/// of 10 ms: enough over 20 runs).
fn process_cpu() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // the fields after the command name, which is in parentheses and may hold spaces
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    std::time::Duration::from_millis(ticks * 10)
}

/// `git` with an identity, for set-up outside the sandbox and commands inside it.
const GIT: &str = "git -c user.name=t -c user.email=t@example.invalid";

fn read(s: &Shell, rel: &str) -> String {
    std::fs::read_to_string(s.ws().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// What the write tools refuse, run_shell cannot write either, at the root and nested, in any
/// spelling: editor and agent settings (`chat.tools.autoApprove`, CVE-2025-53773;
/// `.cursor/mcp.json`, CVE-2025-54135), hooks, shell start-up files, `.envrc` and
/// `.devcontainer`, a nested `toolgate.toml`; nor can it move them or their directories away
/// and put new ones in their place. The rest of the workspace stays writable.
#[tokio::test]
async fn existing_protected_entries_stay_read_only_at_any_depth() {
    let s = Shell::new();
    let files = [
        ".vscode/settings.json",
        ".cursor/mcp.json",
        ".claude/settings.json",
        ".husky/pre-commit",
        ".devcontainer/devcontainer.json",
        ".idea/workspace.xml",
        ".bashrc",
        ".profile",
        ".zshenv",
        ".ssh/config",
        "opencode.json",
        ".mcp.json",
        ".envrc",
        ".gitconfig",
        "app/.vscode/settings.json",
        "app/web/.husky/pre-commit",
        "svc/.VSCode/tasks.json",
        "svc/.Envrc",
        "nested/project/toolgate.toml",
    ];
    for f in files {
        let p = s.ws().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "ORIGINAL\n").unwrap();
    }
    fail_each(&s, &[        "printf '{\"chat.tools.autoApprove\": true}' > .vscode/settings.json",
        "echo '{\"mcpServers\":{\"x\":{\"command\":\"touch\",\"args\":[\"pwned\"]}}}' > .cursor/mcp.json",
        "echo '{\"hooks\":{}}' > .claude/settings.json",
        "echo 'touch pwned' >> .husky/pre-commit",
        "echo '{\"postCreateCommand\":\"touch pwned\"}' > .devcontainer/devcontainer.json",
        "echo x > .idea/workspace.xml",
        "echo 'touch pwned' >> .bashrc",
        "cp .bashrc .profile",
        "echo 'touch pwned' >> .zshenv",
        "echo 'ProxyCommand touch pwned' >> .ssh/config",
        "echo '{\"permission\":\"allow\"}' > opencode.json",
        "python3 -c \"open('.mcp.json','w').write('{}')\"",
        "echo 'touch pwned' > .envrc",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .gitconfig",
        "echo x > app/.vscode/settings.json",
        "echo x >> app/web/.husky/pre-commit",
        "echo x > svc/.VSCode/tasks.json",
        "echo x > svc/.Envrc",
        "echo x > nested/project/toolgate.toml",
        "rm -rf .vscode",
        "mv .vscode .vs-old && mkdir .vscode && echo x > .vscode/settings.json",
        "mv app app-old && mkdir -p app/.vscode && echo x > app/.vscode/settings.json",
        "rm -f .envrc && echo 'touch pwned' > .envrc",
        "touch .vscode/tasks.json",
        "ln .bashrc hard-link",
    ])
    .await;
    for f in files {
        assert_eq!(read(&s, f), "ORIGINAL\n", "{f}");
    }
    assert!(!exists(s.ws().join("pwned")) && !exists(s.ws().join(".vscode/tasks.json")));
    assert!(!exists(s.ws().join("app-old")) && !exists(s.ws().join(".vs-old")));
    let o = direct(
        &s,
        "echo ok > app/main.rs && mkdir -p app/web/src && mv app/main.rs app/web/src/ && cat app/web/src/main.rs",
    )
    .await;
    assert_eq!((o.exit_code, o.stdout.as_str()), (Some(0), "ok\n"), "{o:?}");
    assert!(o.protected_created.is_empty(), "{o:?}");
}

/// A nested repository's and a submodule's `config` and `hooks` are as read-only as the
/// root's (`core.fsmonitor` and `diff.external` run code at the next git command, and `git
/// status` recurses into submodules), and so are `.git/config.worktree` and a linked
/// worktree's; while `git commit`, `checkout`, `init`, `clone` and a submodule's own commits
/// keep working, and a new repository is not reported as a created protected path.
#[tokio::test]
async fn nested_and_submodule_git_directories_keep_config_and_hooks_read_only() {
    let s = Shell::new();
    let outside = s.t.join("outside");
    s.setup(&format!(
        "set -e; {GIT} init -q && echo a > a && {GIT} add a && {GIT} commit -q -m a && \
         {GIT} init -q sub && (cd sub && echo b > b && {GIT} add b && {GIT} commit -q -m b) && \
         {GIT} init -q {o}/lib && (cd {o}/lib && echo l > l && {GIT} add l && {GIT} commit -q -m l) && \
         {GIT} -c protocol.file.allow=always submodule -q add {o}/lib lib && {GIT} commit -q -m lib && \
         {GIT} worktree add -q {o}/wt && touch .git/config.worktree .git/worktrees/wt/config.worktree",
        o = outside.display()
    ));
    assert!(exists(s.ws().join(".git/modules/lib/config")));
    let watched = [
        "sub/.git/config",
        ".git/modules/lib/config",
        ".git/config.worktree",
        ".git/worktrees/wt/config.worktree",
        ".git/config",
    ];
    let before: Vec<String> = watched.iter().map(|f| read(&s, f)).collect();
    fail_each(&s, &[        "git -C sub config core.fsmonitor 'touch pwned'",
        "printf '[diff]\\n\\texternal = touch pwned\\n' >> sub/.git/config",
        "echo 'touch pwned' > sub/.git/hooks/pre-commit",
        "mv sub/.git/hooks sub/.git/hooks-old && mkdir sub/.git/hooks && touch sub/.git/hooks/post-checkout",
        "mv sub/.git sub/.git-old && mkdir sub/.git",
        "git -C lib config core.fsmonitor 'touch pwned'",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/modules/lib/config",
        "touch .git/modules/lib/hooks/post-checkout",
        "echo x >> .git/config.worktree",
        "echo x >> .git/worktrees/wt/config.worktree",
        "echo 'gitdir: ../evil' > lib/.git",
    ])
    .await;
    let after: Vec<String> = watched.iter().map(|f| read(&s, f)).collect();
    assert_eq!(before, after);
    assert!(!exists(s.ws().join("sub/.git/hooks/pre-commit")));
    assert!(!exists(s.ws().join(".git/modules/lib/hooks/post-checkout")));
    let o = direct(
        &s,
        &format!(
            "set -e; echo c > c && {GIT} add c && {GIT} commit -q -m c && {GIT} checkout -q -b topic && \
             (cd sub && echo d > d && {GIT} add d && {GIT} commit -q -m d) && \
             (cd lib && echo m > m && {GIT} add m && {GIT} commit -q -m m) && {GIT} status --short && \
             {GIT} init -q fresh && (cd fresh && echo e > e && {GIT} add e && {GIT} commit -q -m e && git config user.name t) && \
             {GIT} clone -q sub cloned && {GIT} -C cloned log --oneline | wc -l"
        ),
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_eq!(o.stdout, " M lib\n?? sub/\n2\n", "{o:?}");
    assert!(o.protected_created.is_empty(), "{o:?}");
    assert!(exists(s.ws().join("fresh/.git")) && exists(s.ws().join("cloned/.git")));
    // from the next run on, the new repositories' configuration is read-only too
    let o = direct(&s, "git -C fresh config core.fsmonitor 'touch pwned'").await;
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert!(!exists(s.ws().join("pwned")));
}

/// A protected path the command creates is never left unsaid: in a directory that existed
/// when the run started it is moved aside whole into `.toolgate/quarantine/` (nothing is
/// deleted) and the result says where; in a directory the run created it is left and listed;
/// a new repository is neither. From the next run on, what was left is read-only.
#[tokio::test]
async fn created_protected_entries_are_reported_and_moved_aside() {
    let s = Shell::new();
    s.setup("mkdir app");
    let o = direct(
        &s,
        "mkdir .vscode && echo '{\"chat.tools.autoApprove\": true}' > .vscode/settings.json && \
         echo 'touch pwned' > .envrc && mkdir -p app/.cursor && echo '{}' > app/.cursor/mcp.json && \
         mkdir -p made/.husky && echo hook > made/.husky/pre-commit && git init -q repo && \
         git init -q trap && git -C trap config core.fsmonitor 'touch pwned' && \
         mkdir -p planted && echo 'gitdir: ../trap/.git' > planted/.git && echo done",
    )
    .await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "done\n"),
        "{o:?}"
    );
    let mut paths: Vec<(&str, bool)> = o
        .protected_created
        .iter()
        .map(|c| (c.path.as_str(), c.moved_to.is_some()))
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            (".envrc", true),
            (".vscode", true),
            ("app/.cursor", true),
            ("made/.husky", false),
            ("planted/.git", false),
            ("trap/.git", false)
        ],
        "{o:?}"
    );
    for c in &o.protected_created {
        assert!(c.note.contains(&format!("{:?}", c.path)), "{c:?}");
        match &c.moved_to {
            Some(dest) => {
                assert!(dest.starts_with(".toolgate/quarantine/"), "{c:?}");
                assert!(dest.ends_with(&c.path), "{c:?}");
                assert!(exists(s.ws().join(dest)), "{c:?}");
                assert!(!exists(s.ws().join(&c.path)), "{c:?}");
                assert!(c.note.contains("moved it to"), "{c:?}");
            }
            None => assert!(c.note.contains("left in place"), "{c:?}"),
        }
        if c.path == "trap/.git" || c.path == "planted/.git" {
            assert!(c.note.contains("core.fsmonitor"), "{c:?}");
        }
    }
    let vscode = o
        .protected_created
        .iter()
        .find(|c| c.path == ".vscode")
        .unwrap();
    let kept = s
        .ws()
        .join(vscode.moved_to.as_ref().unwrap())
        .join("settings.json");
    assert!(std::fs::read_to_string(kept)
        .unwrap()
        .contains("autoApprove"));
    // the quarantine is out of the command's reach, and what was left is read-only now
    let o = direct(&s, "ls .toolgate; echo x >> made/.husky/pre-commit").await;
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
    assert_eq!(read(&s, "made/.husky/pre-commit"), "hook\n");
    // the same through the whole pipeline: the model reads it in the result
    let r = s.call(json!({"command": "echo x > .bashrc"})).await;
    let out = output(&r);
    assert_eq!(out.protected_created.len(), 1, "{out:?}");
    assert!(r.text().contains(".bashrc"), "{}", r.text());
    assert!(!exists(s.ws().join(".bashrc")));
}

/// Bad input in the workspace is handled without a panic and without a way around: a
/// protected name that is a link (to outside, or to a directory inside, whose target is then
/// read-only), a file where a directory is expected, a link as a git directory's `config`,
/// a name with HFS-ignorable characters, a protected entry inside a skipped directory.
#[tokio::test]
async fn odd_protected_entries_are_handled() {
    let s = Shell::new();
    s.setup(
        "mkdir -p conf ../outside/vs && echo ORIGINAL > conf/settings.json && \
         ln -s conf .vscode && ln -s ../outside/vs .cursor && echo ORIGINAL > .husky && \
         git init -q && rm -rf .git/hooks && echo ORIGINAL > .git/hooks && \
         mkdir -p sub/.git && echo ORIGINAL > real-config && ln -s ../../real-config sub/.git/config && \
         printf 'ORIGINAL\\n' > \"$(printf '.vs\\342\\200\\214code')\" && \
         mkdir -p node_modules/pkg/.vscode && echo dep > node_modules/pkg/.vscode/x.json && \
         mkdir -p zz/.vscode zz/y && ln -s .. zz/y/.idea && echo ORIGINAL > zz/f",
    );
    fail_each(
        &s,
        &[
            "echo x > .vscode/settings.json",
            "echo x > conf/settings.json",
            "echo x > .cursor/mcp.json",
            "echo x > .husky",
            "echo x > .git/hooks",
            "echo x > sub/.git/config",
            "echo x > real-config",
            "echo x > \"$(printf '.vs\\342\\200\\214code')\"",
            "echo x > zz/y/.idea/f",
            "touch zz/.vscode/new",
        ],
    )
    .await;
    for f in [
        "conf/settings.json",
        ".husky",
        ".git/hooks",
        "real-config",
        "zz/f",
    ] {
        assert_eq!(read(&s, f), "ORIGINAL\n", "{f}");
    }
    assert!(!exists(s.t.join("outside/vs/mcp.json")));
    // dependencies are not looked into: a package manager may replace them
    let o = direct(&s, "rm -rf node_modules/pkg && echo gone").await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "gone\n"),
        "{o:?}"
    );
    // a replaced link is another entry: moved aside like a new one
    let o = direct(&s, "rm .vscode && mkdir .vscode && echo done").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_eq!(o.protected_created.len(), 1, "{o:?}");
    assert!(o.protected_created[0].moved_to.is_some(), "{o:?}");
    assert!(!exists(s.ws().join(".vscode")));
    // so is a link that now leads elsewhere (the file system may reuse the inode number)
    let o = direct(
        &s,
        "mkdir evil && rm .cursor && ln -s evil .cursor && echo done",
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let paths: Vec<&str> = o
        .protected_created
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(paths, [".cursor"], "{o:?}");
    assert!(!exists(s.ws().join(".cursor")) && exists(s.ws().join("evil")));
}

/// One run_shell serving run after run takes the listings of unchanged directories from the
/// last look: what appears between runs (made outside, by the user or an editor) and what a
/// run makes are seen all the same.
#[tokio::test]
async fn runs_in_a_row_see_what_changed_between_them() {
    let s = Shell::new();
    s.setup("mkdir -p app/src lib && echo x > app/src/main.rs");
    let run = |command: &str| {
        let command = command.to_string();
        let s = &s;
        async move { output(&s.call(json!({ "command": command })).await) }
    };
    assert_eq!(run("true").await.exit_code, Some(0));
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    assert_eq!(run("true").await.exit_code, Some(0));
    // made outside between runs: protected from the next run on
    s.setup("mkdir -p app/src/.vscode && echo ORIGINAL > app/src/.vscode/settings.json");
    let o = run("echo x > app/src/.vscode/settings.json").await;
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert_eq!(read(&s, "app/src/.vscode/settings.json"), "ORIGINAL\n");
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    // made by a run in a directory unchanged for a while: moved aside
    let o = run("mkdir lib/.husky && echo x > lib/.husky/pre-commit").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let paths: Vec<&str> = o
        .protected_created
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(paths, ["lib/.husky"], "{o:?}");
    assert!(!exists(s.ws().join("lib/.husky")));
}

/// `npm install` keeps working when the packages it installs bring their own `.vscode`,
/// `.husky` or `.git` (dependencies are not looked into), run after run, and so does
/// removing `node_modules`; none of it is reported as a created protected path.
#[tokio::test]
async fn npm_install_of_packages_with_protected_names_works() {
    if std::process::Command::new("npm")
        .arg("--version")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        eprintln!("npm is not installed: skipped");
        return;
    }
    let s = Shell::new();
    s.setup(
        "mkdir -p pkg/.vscode pkg/.husky app && echo '{}' > pkg/.vscode/settings.json && \
         echo hook > pkg/.husky/pre-commit && echo 'module.exports = 42' > pkg/index.js && \
         echo '{\"name\":\"pkg\",\"version\":\"1.0.0\",\"main\":\"index.js\"}' > pkg/package.json && \
         (cd pkg && HOME=$PWD/../.npmhome npm pack --silent >/dev/null) && rm -rf .npmhome && \
         echo '{\"name\":\"app\",\"version\":\"1.0.0\"}' > app/package.json",
    );
    let install = "cd app && npm install --offline --no-audit --no-fund ../pkg/pkg-1.0.0.tgz \
                   >/dev/null 2>&1; node -e 'console.log(require(\"pkg\"))'";
    for _ in 0..2 {
        let o = direct(&s, install).await;
        assert_eq!((o.exit_code, o.stdout.as_str()), (Some(0), "42\n"), "{o:?}");
        assert!(o.protected_created.is_empty(), "{o:?}");
    }
    assert!(exists(
        s.ws().join("app/node_modules/pkg/.vscode/settings.json")
    ));
    let o = direct(&s, "rm -rf app/node_modules && echo gone").await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "gone\n"),
        "{o:?}"
    );
}
