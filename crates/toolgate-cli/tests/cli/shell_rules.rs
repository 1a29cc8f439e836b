//! run_shell's command rules through the `toolgate` binary and the real sandbox: programs that
//! run other programs, variables that name programs, git's global options, and a deny that
//! a standing grant cannot beat (issue 12, items 1-3; security cases shell-ansi-c-deny-72,
//! shell-find-exec-73, shell-sed-e-74, shell-git-env-config-76). Each spelling is checked to
//! create nothing, and the audit to name the rule that decided.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// A workspace in a fresh tree with `toolgate.toml` holding `rules` (`(decision, resource)`).
fn workspace(rules: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tree();
    let ws = t.path().join("ws");
    let mut toml = String::new();
    for (decision, resource) in rules {
        toml.push_str(&format!(
            "[[rules]]\ndecision = \"{decision}\"\nresource = \"{resource}\"\n"
        ));
    }
    std::fs::write(ws.join("toolgate.toml"), toml).unwrap();
    std::fs::write(ws.join("f.txt"), "line one\n").unwrap();
    (t, ws)
}

/// `toolgate call run_shell` in `ws`, with `--yes` when `yes`, nobody at a terminal.
fn shell(ws: &Path, command: &str, yes: bool) -> Output {
    let args = serde_json::json!({ "command": command }).to_string();
    let mut argv = vec!["call", "run_shell", &args, "-w", ws.to_str().unwrap()];
    if yes {
        argv.push("--yes");
    }
    toolgate(&argv, ws)
}

/// The newest audit record of the workspace's store.
fn last_record(ws: &Path) -> Value {
    let out = toolgate(&["audit", "--json", "-w", ws.to_str().unwrap()], ws);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .max_by_key(|r| r["seq"].as_u64())
        .expect("an audit record")
}

/// Runs `command` and checks it was refused with `kind` by `rule` (as the result's error and
/// the audit record say), and that it created nothing named `pwned*` in the workspace.
fn refused(ws: &Path, command: &str, yes: bool, kind: &str, rule: &str) {
    let out = shell(ws, command, yes);
    let v = json(&out);
    assert_eq!(v["error"]["kind"], kind, "{command}: {v}");
    assert_eq!(out.status.code(), Some(4), "{command}: {v}");
    let record = last_record(ws);
    assert_eq!(
        (record["rule"].as_str(), record["error_kind"].as_str()),
        (Some(rule), Some(kind)),
        "{command}: {record}"
    );
    let made: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(made.is_empty(), "{command} created {made:?}");
}

/// Runs `command` and checks the guard refused it before approval with `unsafe_input` and
/// `reason` (in the result and the audit record), creating nothing.
fn refused_before_approval(ws: &Path, command: &str, yes: bool, reason: &str) {
    let out = shell(ws, command, yes);
    let v = json(&out);
    assert_eq!(
        (v["error"]["kind"].as_str(), v["error"]["reason"].as_str()),
        (Some("unsafe_input"), Some(reason)),
        "{command}: {v}"
    );
    assert_eq!(out.status.code(), Some(3), "{command}: {v}");
    let record = last_record(ws);
    assert_eq!(
        (
            record["error_kind"].as_str(),
            record["error_reason"].as_str()
        ),
        (Some("unsafe_input"), Some(reason)),
        "{command}: {record}"
    );
    assert!(!ws.join("pwned").exists(), "{command} created pwned");
}

/// Runs `command` and checks it ran, allowed by the rules without asking.
fn ran(ws: &Path, command: &str) -> Value {
    let out = shell(ws, command, false);
    let v = json(&out);
    assert_eq!(out.status.code(), Some(0), "{command}: {v}");
    let record = last_record(ws);
    assert_eq!(record["decision"], "allow", "{command}: {record}");
    v
}

/// shell-ansi-c-deny-72: a deny rule holds for every spelling of the command's name and of the
/// programs that run it, even when the call is approved in advance.
#[test]
fn shell_ansi_c_deny_72_every_spelling_of_a_denied_command_is_denied() {
    let (_t, ws) = workspace(&[("deny", "command:touch")]);
    for command in [
        "$'\\x74ouch' pwned",
        "$'\\164ouch' pwned",
        "$'\\u0074ouch' pwned",
        "t\\ouch pwned",
        "\"tou\"ch pwned",
        "/usr/bin/touch pwned",
        "env touch pwned",
        "timeout 5 nice -n 1 touch pwned",
        "sudo -u nobody touch pwned",
        "bash -c 'touch pwned'",
        "echo pwned | xargs touch",
        "find . -maxdepth 0 -exec touch pwned \\;",
        "sed -n '1e touch pwned' f.txt",
        "git rebase --exec 'touch pwned' main",
        "ls; $'\\x74ouch' pwned",
        "tou\\\nch pwned",
        "jobs -x touch pwned",
        "script -qc 'touch pwned' /dev/null",
        "eval 'touch pwned'",
        "eval t\\ouch pwned",
        "command eval -- \"\\$'\\x74ouch' pwned\"",
        "git -c alias.x='!touch pwned' x",
        "git -c filter.f.smudge='touch pwned' checkout .",
        // another shell's line, env's split string, a trap, sg, and the runners that take
        // a program among their words (strace, valgrind, nsenter, unshare)
        "zsh -c 'touch pwned'",
        "env -S 'touch pwned'",
        "env -S'touch pwned'",
        "trap 'touch pwned' EXIT; true",
        "sg root -c 'touch pwned'",
        "strace -o /dev/null touch pwned",
        "valgrind -q touch pwned",
        "nsenter -t 1 touch pwned",
        "unshare --fork -- touch pwned",
        // a shell fed a literal line, and a variable whose line a program runs
        "bash <<< 'touch pwned'",
        "echo 'touch pwned' | sh",
        "cat <<'EOF' | bash\ntouch pwned\nEOF",
        ". /dev/stdin <<< 'touch pwned'",
        "PROMPT_COMMAND='touch pwned' bash -i < /dev/null",
        "shopt -s expand_aliases; alias t=touch\nt pwned",
        "hash -p /usr/bin/touch ls; ls pwned",
        // brace expansion makes the words bash runs
        "{touch,pwned}",
        "tou{ch,} pwned",
        "ls; /usr/bin/{touch,pwned}",
        // a backquoted command inside `${...}`, which the grammar reads as text
        "echo ${x:-`touch pwned`}",
        // a script a process substitution writes
        "bash <(echo touch pwned)",
        "source <(echo touch pwned)",
        // a glob bash expands to the program's path, or to a file the line made
        "/usr/bin/t[o]uch pwned",
        "/usr/bin/tou?h pwned",
        "/usr/bin/*ouch pwned",
        "timeout 5 /usr/bin/t[[:alpha:]]uch pwned",
        ": > touch; t[o]uch pwned",
        // a program the rules cannot read, which is a shell, given the line
        "cp /bin/bash ./mysh; ./mysh -c 'touch pwned'",
        "/bin/ba?h -c 'touch pwned'",
        "strace -f -o /dev/null bash -c 'touch pwned'",
        // a name known only when it runs, made of text the line holds
        "$(echo touch) pwned",
        "c=touch; $c pwned",
        "a=(touch pwned); \"${a[@]}\"",
        "printf -v c touch; $c pwned",
        "${PWD:0:0}touch pwned",
        "eval \"$(echo touch pwned)\"",
        "IFS=,; c=touch,pwned; $c",
        // an interpreter's code that spells the command out
        "python3 -c 'import os; os.system(\"touch pwned\")'",
        "awk 'BEGIN{system(\"touch pwned\")}'",
        "perl -e 'system q(touch pwned)'",
        "echo x | awk '{ print | \"touch pwned\" }'",
        "sqlite3 :memory: '.shell touch pwned'",
        "echo touch pwned | xargs env",
        "printf 'touch\\0pwned\\0' | xargs -0 timeout 5",
        "gdb -batch -ex 'shell touch pwned'",
        "vim -es -c '!touch pwned' -c q",
        "make -f /dev/stdin <<< $'all:\\n\\ttouch pwned'",
        // text bash evaluates later: a prompt, a subscript, a transformation, a hash table
        "PS4='$(touch pwned)'; set -x; :",
        "x='$(touch pwned)'; echo \"${x@P}\"",
        "declare 'a[$(touch pwned)]=1'",
        "a=(); unset 'a[$(touch pwned)]'",
        "x='a[$(touch pwned)]'; echo $((x))",
        "BASH_CMDS[ls]=/usr/bin/touch; ls pwned",
        "printf 'touch pwned' > f; bash f",
        // backquotes inside backquotes, extended and case-blind globs, braces past the bound,
        // a copy, link or descriptor of the program
        "echo `echo \\`touch pwned\\``",
        "shopt -s extglob\n/usr/bin/@(tou)ch pwned",
        "shopt -s nocaseglob\n/usr/bin/TOU[C]H pwned",
        "tou{c,c}{h,h}{,}{,}{,}{,}{,}{,}{,} pwned",
        "ln -s /usr/bin/touch ./t; ./t pwned",
        "exec 3</usr/bin/touch; /proc/self/fd/3 pwned",
        // C escapes in the text a name is made of, `$(...)` in a `${...}` pattern
        "c=$'\\x74ouch'; $c pwned",
        "printf -v c '\\164ouch'; $c pwned",
        "echo ${PWD#$(touch pwned)}",
        // `$'..'` and a line continuation inside a word the name is made of
        "c=tou$'c'h; $c pwned",
        // an interpreter's code on its input or after other options; a long option's prefix
        "python3 <<< 'import os; os.system(\"touch pwned\")'",
        "python3 -W ignore -c 'import os; os.system(\"touch pwned\")'",
        "sed --expr='1e touch pwned' f.txt",
        "c=tou\\\nch; $c pwned",
    ] {
        refused(&ws, command, true, "permission_denied", "rules[0]");
    }
    // a name whose quoting cannot be decoded asks (rejected: nobody at a terminal)
    refused(
        &ws,
        "$'\\cT'ouch pwned",
        false,
        "approval_rejected",
        "shell.uncertain",
    );
}

/// A redirection into a git directory is refused before anything runs: a `commondir` made
/// there sends git to a configuration the line wrote (the sandbox holds read-only only what
/// exists in `.git`).
#[test]
fn a_redirection_into_a_git_directory_is_refused() {
    let (_t, ws) = workspace(&[("allow", "command:echo")]);
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    for command in ["echo ../g > .git/commondir", "echo x >> sub/.git/config"] {
        refused_before_approval(&ws, command, true, "protected_path");
    }
    assert!(!ws.join(".git/commondir").exists());
}

/// A command naming git metadata that does not exist yet is refused before anything runs
/// (`cp -r g sub/.git && git -C sub status` had git read a configuration the line copied in);
/// naming what exists, or making a repository with git itself, still runs.
#[test]
fn a_command_making_git_metadata_by_its_operands_is_refused() {
    let (_t, ws) = workspace(&[
        ("allow", "command:cp"),
        ("allow", "command:find"),
        ("allow", "command:ls"),
        ("allow", "command:mkdir"),
        ("allow", "command:dd"),
        ("allow", "command:cd"),
        ("allow", "command:git"),
        ("allow", "command:cat"),
    ]);
    git_repo(&ws);
    std::fs::create_dir_all(ws.join("src/g")).unwrap();
    std::fs::write(ws.join("src/g/config"), "[core]\n\tbare = false\n").unwrap();
    for command in [
        "mkdir sub && cp -r src/g sub/.git && git -C sub status",
        "cp -r src/g sub/.GIT",
        "cp src/g/config .git/config.worktree && git status",
        "dd if=src/g/config of=.git/commondir",
        "cp --target-directory=sub/.git src/g/config",
        "cd src && cp -r g .git",
    ] {
        refused_before_approval(&ws, command, false, "protected_path");
    }
    assert!(!ws.join("sub/.git").exists() && !ws.join("sub/.GIT").exists());
    assert!(!ws.join(".git/commondir").exists() && !ws.join("src/.git").exists());
    ran(&ws, "cat .git/config");
    ran(&ws, "git init -q sub2 && cat sub2/.git/HEAD");
    // patterns that match or leave out git directories name nothing to write
    for command in [
        "find . -name '*.txt' -not -path './.git/*'",
        "find . -path '*/.git' -prune -o -type f -print",
        "cp -r src src2 && ls src2",
    ] {
        ran(&ws, command);
    }
}

/// A path rule that keeps a file from being read holds for its committed copies that a git
/// command names (`git show HEAD:a.txt` printed the denied file from git's objects); other
/// files and commands naming none still run.
#[test]
fn a_denied_file_is_not_read_from_git_objects_by_name() {
    let (_t, ws) = workspace(&[("deny", "path:a.txt"), ("allow", "command:git")]);
    git_repo(&ws);
    std::fs::write(ws.join("b.txt"), "b\n").unwrap();
    for command in [
        "git show HEAD:a.txt",
        "git --no-pager show HEAD~0:./a.txt",
        "git cat-file -p :a.txt",
        "git show :0:a.txt",
        "git log -p a.txt",
        "git log -p -- a.txt",
        "git -C . grep a HEAD -- a.txt",
    ] {
        refused(&ws, command, false, "permission_denied", "rules[0]");
    }
    let v = ran(&ws, "git log --oneline");
    assert!(
        v["structured_content"]["stdout"]
            .as_str()
            .unwrap()
            .contains("init"),
        "{v}"
    );
    ran(&ws, "git diff -- b.txt");
}

/// `allow command:echo` does not cover a command in backquotes inside backquotes, which bash
/// runs and the grammar reads as an escaped word: it ran with no question.
#[test]
fn a_command_in_nested_backquotes_is_not_allowed_by_the_outer_rule() {
    let (_t, ws) = workspace(&[("allow", "command:echo")]);
    for command in [
        "echo `echo \\`touch pwned\\``",
        "echo \"`echo \\`touch pwned\\``\"",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.unlisted");
    }
    let v = json(&shell(&ws, "echo `echo ok`", false));
    assert_eq!(v["is_error"], false, "{v}");
}

/// `allow command:echo` does not cover a command in backquotes inside `${...}`, which the
/// grammar reads as text and bash runs (it ran without a question, and deleted `.git` as
/// `rm -rf .git`): the line is uncertain, and asks.
#[test]
fn a_backquoted_command_inside_a_parameter_expansion_is_not_allowed_by_the_outer_rule() {
    let (_t, ws) = workspace(&[("allow", "command:echo")]);
    for command in [
        "echo ${x:-`touch pwned`}",
        "echo \"${x:-`touch pwned`}\"",
        "echo ${x=`touch pwned`}",
        "echo ${x:-${y:-`touch pwned`}}",
        "echo ${PWD#$(touch pwned)}",
        "x=abc; echo ${x^^$(touch pwned)}",
        // single quotes bash takes as characters inside a double-quoted `${...}`
        "echo \"${x:-'$(touch pwned)'}\"",
        // a here-document whose delimiter is an expansion: bash expands the body
        "echo <<$x\n$(touch pwned)\n$x",
        // an expansion in a pattern the grammar reads as text
        "y='a[$(touch pwned)]'; echo ${PWD#${!y}}",
        "y='a[$(touch pwned)]'; [[ x =~ ${!y} ]]; echo",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.uncertain");
    }
    let v = json(&shell(&ws, "echo ${x:-ok}", false));
    assert_eq!(v["is_error"], false, "{v}");
    for ok in [
        "echo \"${x:-'a b'}\"",
        "echo ${PWD#/}",
        "echo ${x:-${y:-z}}",
    ] {
        let v = json(&shell(&ws, ok, false));
        assert_eq!(v["is_error"], false, "{ok}: {v}");
    }
    // a carriage return, which bash keeps in a word and the grammar takes for white space
    let v = json(&shell(&ws, "echo x\r#$(touch pwned)", false));
    assert_eq!(v["error"]["kind"], "invalid_arguments", "{v}");
    assert!(!ws.join("pwned").exists());
}

/// shell-find-exec-73: `allow command:find` does not cover what `-exec` runs.
#[test]
fn shell_find_exec_73_find_does_not_allow_what_it_executes() {
    let (_t, ws) = workspace(&[("allow", "command:find")]);
    for command in [
        "find . -maxdepth 0 -exec touch pwned {} +",
        "find . -maxdepth 0 -exec sh -c 'touch pwned' \\;",
        "find . -maxdepth 0 -execdir touch pwned \\;",
        "find . -maxdepth 0 -ok touch pwned \\;",
        "find . -maxdepth 0 -okdir touch pwned \\;",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.unlisted");
        let out = shell(&ws, command, false);
        let v = json(&out);
        assert!(
            v["error"]["details"]["asked"]
                .as_str()
                .is_some_and(|m| m.contains("`touch pwned")),
            "{command}: the question names what -exec runs: {v}"
        );
    }
    let v = ran(&ws, "find . -name f.txt");
    assert_eq!(v["structured_content"]["stdout"], "./f.txt\n");
}

/// shell-sed-e-74: sed's `e` command runs a shell command, which the rules decide (`touch` is
/// denied); `s///e` runs one that cannot be read, which asks.
#[test]
fn shell_sed_e_74_sed_scripts_that_run_commands_are_not_allowed_by_sed() {
    let (_t, ws) = workspace(&[("allow", "command:sed"), ("deny", "command:touch")]);
    for command in [
        "sed -n '1e touch pwned' f.txt",
        "sed -e p -e '$e touch pwned' f.txt",
        "sed --expression='1e touch pwned' f.txt",
        "sed -ne'0~1 e touch pwned' f.txt",
        "sed -s -n '$!{$!e touch pwned\n}' f.txt",
        // the `e` flag runs the pattern space, here spelled out in the replacement
        "sed 's/.*/touch pwned2/e' f.txt",
        "sed -n 's/line/touch pwned3/ep' f.txt",
    ] {
        refused(&ws, command, false, "permission_denied", "rules[1]");
    }
    for command in [
        "sed 's/.*/echo/e' f.txt",
        "sed '1e' f.txt",
        "sed --expr='1e' f.txt",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.runs_code");
    }
    let v = ran(&ws, "sed -n 1p f.txt");
    assert_eq!(v["structured_content"]["stdout"], "line one\n");
}

/// A git repository in `ws` with one commit.
fn git_repo(ws: &Path) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(ws)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        out
    };
    git(&["init", "-q", "."]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&["add", "a.txt"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.invalid",
        "commit",
        "-qm",
        "init",
    ]);
}

/// shell-git-env-config-76: variables that undo the sandbox's git settings are refused even
/// when approved (by run_shell's guard: recoverable `unsafe_input`, `protected_setting`);
/// other variables that name programs ask.
#[test]
fn shell_git_env_config_76_the_sandboxs_git_settings_cannot_be_undone() {
    let (_t, ws) = workspace(&[
        ("allow", "command:git status"),
        ("allow", "command:git diff"),
    ]);
    git_repo(&ws);
    std::fs::write(ws.join("a.txt"), "b\n").unwrap();
    for command in [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned; false' git status --short",
        "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch pwned; false'\" git status --short",
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned; false' git status",
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned; false'; git status",
        "git -c core.fsmonitor='touch pwned; false' status --short",
        "git --config-env=core.fsmonitor=X status",
        "GIT_PAGER='touch pwned' git -p diff",
        "env -i git status",
        "unset GIT_CONFIG_COUNT; git status",
    ] {
        // approved in advance: still refused, before the policy is asked
        refused_before_approval(&ws, command, true, "protected_setting");
    }
    for command in [
        "GIT_EXTERNAL_DIFF='touch pwned' git diff",
        "GIT_SSH_COMMAND='touch pwned' git status",
        "EDITOR='touch pwned' git status",
        "LD_PRELOAD=./pwned.so git status",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.uncertain");
    }
    let v = ran(&ws, "git status --short -uno");
    assert_eq!(v["structured_content"]["stdout"], " M a.txt\n");
    ran(&ws, "LC_ALL=C GIT_PAGER=cat git diff --stat");
}

/// Item 3: `deny command:git tag` holds for `git -C . tag`, `git -c ... tag` and an alias,
/// and a standing grant for `command:git` does not beat it; what the grant covers runs.
#[test]
fn a_deny_on_a_subcommand_holds_for_every_spelling_and_beats_a_grant() {
    let (_t, ws) = workspace(&[("deny", "command:git tag")]);
    git_repo(&ws);
    let out = toolgate(
        &[
            "approvals",
            "grant",
            "--tool",
            "run_shell",
            "--resource",
            "command:git",
            "-w",
            ws.to_str().unwrap(),
        ],
        &ws,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for command in [
        "git tag v5",
        "git -C . tag v6",
        "git -c a.b=c tag v7",
        "git --git-dir=.git --work-tree=. tag v8",
        "git --no-pager -c color.ui=never tag v9",
        "git -c alias.t=tag t v10",
        "/usr/bin/git -C . tag v11",
        "timeout 5 git -C . tag v12",
    ] {
        refused(&ws, command, false, "permission_denied", "rules[0]");
    }
    let tags = std::process::Command::new("git")
        .args(["tag", "-l"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&tags.stdout), "", "no tag was made");
    // the grant answers what it covers
    let out = shell(&ws, "git -C . log --oneline", false);
    assert_eq!(out.status.code(), Some(0), "{}", json(&out));
    let record = last_record(&ws);
    assert_eq!(record["approval"], "granted", "{record}");
}

/// Item 1 through the binary: with allow rules for each program, what they run that creates a
/// file is refused (denied by rule, or asked and rejected), and nothing is created.
#[test]
fn programs_that_run_programs_do_not_run_them_on_their_own_rule() {
    let (_t, ws) = workspace(&[
        ("allow", "command:sed"),
        ("allow", "command:awk"),
        ("allow", "command:find"),
        ("allow", "command:xargs"),
        ("allow", "command:env"),
        ("allow", "command:timeout"),
        ("allow", "command:nice"),
        ("allow", "command:python3"),
        ("allow", "command:perl"),
        ("allow", "command:bash"),
        ("allow", "command:sh"),
        ("allow", "command:tar"),
        ("allow", "command:make"),
        ("allow", "command:git"),
        ("allow", "command:sort"),
        ("allow", "command:echo"),
        ("allow", "command:ls"),
    ]);
    std::fs::write(ws.join("build.sh"), "touch pwned\n").unwrap();
    std::fs::write(ws.join("Makefile"), "all:\n\t$(CC) --version\n").unwrap();
    let unlisted = [
        "ls | xargs touch pwned",
        "env touch pwned",
        "timeout 5 touch pwned",
        "nice touch pwned",
        "bash -c 'touch pwned'",
        "sh -c 'echo ok; touch pwned'",
        "sed -n '1e touch pwned' f.txt",
        "find . -maxdepth 0 -exec touch pwned \\;",
        "git rebase --exec 'touch pwned' HEAD",
    ];
    for command in unlisted {
        refused(&ws, command, false, "approval_rejected", "shell.unlisted");
    }
    let code = [
        "awk 'BEGIN{system(\"touch pwned\")}'",
        "awk 'BEGIN{print \"x\" | \"touch pwned\"}'",
        "sed 's/.*/touch pwned/e' f.txt",
        "python3 -c 'open(\"pwned\", \"w\")'",
        "perl -e 'open(F, \">pwned\")'",
        "bash build.sh",
        "make CC='touch pwned'",
        "tar -cf /dev/null --use-compress-program='touch pwned' f.txt",
        "git -c alias.x='!touch pwned' x",
        "sort --compress-program='touch pwned' f.txt",
        // read for the rules that restrict (none here), still code no allow rule grants
        "env -S 'touch pwned'",
    ];
    for command in code {
        refused(&ws, command, false, "approval_rejected", "shell.runs_code");
    }
    for command in [
        "echo \"$CMD\" | bash",
        "env -S \"$CMD\"",
        "PYTHONSTARTUP=x python3 -c 1",
    ] {
        refused(&ws, command, false, "approval_rejected", "shell.uncertain");
    }
    for command in [
        "awk '{print $1}' f.txt",
        "sed -n 1p f.txt",
        "python3 --version",
        "ls | xargs echo",
        "env LC_ALL=C ls",
    ] {
        ran(&ws, command);
    }
}

/// A descriptor toolgate got open from whatever started it (here fd 77, a file outside the
/// workspace, opened by the shell that starts toolgate) does not pass into the sandbox:
/// `echo >&77` wrote outside the workspace, which Landlock, checking opens, did not stop.
#[test]
fn descriptors_toolgate_inherited_do_not_reach_the_command() {
    let (t, ws) = workspace(&[("allow", "command:echo")]);
    let outside = t.path().join("outside.txt");
    let args = serde_json::json!({ "command": "echo PWNED >&77" }).to_string();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("exec 77>>\"$1\"; exec \"$2\" call run_shell \"$3\" -w \"$4\"")
        .arg("_")
        .arg(&outside)
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(&args)
        .arg(&ws)
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["is_error"], false, "{v}");
    assert!(
        v["structured_content"]["stderr"]
            .as_str()
            .unwrap()
            .contains("Bad file descriptor"),
        "{v}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "");
}
