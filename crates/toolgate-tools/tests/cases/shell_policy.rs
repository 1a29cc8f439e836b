//! The run_shell cases of `shared/cases/security.jsonl` that the command policy decides,
//! through the whole pipeline with a [`ShellPolicy`] over `DefaultPolicy`, each generalized
//! to its class (chained, substituted, prefixed and wrapped commands).

use super::shell_support::*;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{ApprovalAnswer, Decision, DefaultPolicy, ErrorKind, ResolvedResource};
use toolgate_test_support::ScriptedApprover;
use toolgate_tools::shell::{CommandRules, ShellConfig, ShellPolicy};

fn rejecting() -> Arc<ScriptedApprover> {
    Arc::new(ScriptedApprover::always(ApprovalAnswer::Rejected {
        reason: "the test rejects".into(),
    }))
}
/// Calls each of `commands`, which the approver must refuse (each asked about, and the test
/// approver says no), then `check`s the command and its error: what the question said, what
/// must not have happened.
async fn each_refused(
    s: &Shell,
    commands: &[&str],
    check: impl Fn(&str, &toolgate_core::ToolError),
) {
    for command in commands {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(e.kind, ErrorKind::ApprovalRejected, "{command}: {e}");
        check(command, e);
    }
}

/// A fixture whose policy is `rules` over the default policy, and whose approver rejects.
fn with_rules(rules: &[(Decision, &str)]) -> (Shell, Arc<ScriptedApprover>) {
    let approver = rejecting();
    let rules = CommandRules::from_pairs(rules.iter().copied()).unwrap();
    let shell = Shell::with(ShellSetup {
        policy: Some(Arc::new(ShellPolicy::new(Arc::new(DefaultPolicy), rules))),
        approver: approver.clone(),
        ..ShellSetup::default()
    });
    (shell, approver)
}

/// shell-chain-deny-29 (permission_bypass_shell): every segment split on `&&`, `||`, `;`,
/// `|`, `|&`, `&` and newlines is checked, any deny wins, the error names the denied
/// segment, and nothing runs.
#[tokio::test]
async fn shell_chain_deny_29_any_denied_segment_denies_the_call() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "git status*"),
        (Decision::Deny, "git clean*"),
    ]);
    s.setup("git init -q && touch keep.txt");
    for command in [
        "git status && git clean -fd",
        "git status || git clean -fd",
        "git status; git clean -fd",
        "git status | git clean -fd",
        "git status |& git clean -fd",
        "git status & git clean -fd",
        "git status\ngit clean -fd",
        "(git status; (git clean -fd))",
        "git status && bash -c 'git clean -fd'",
        "git status && timeout 5 git clean -fd",
        "git status && /usr/bin/git clean -fd",
    ] {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(e.kind, ErrorKind::PermissionDenied, "{command}: {e}");
        assert!(
            e.message.contains("git clean -fd`"),
            "{command}: {}",
            e.message
        );
        assert!(exists(s.ws().join("keep.txt")));
    }
    assert!(
        approver.asked().is_empty(),
        "a deny never reaches the approver"
    );
    // the allowed segment alone runs without asking
    let r = s.call(json!({"command": "git status --short"})).await;
    assert_eq!(output(&r).exit_code, Some(0));
    assert!(approver.asked().is_empty());
}

/// shell-substitution-31 (permission_bypass_shell): `$( )`, backticks, `<( )` and `>( )`
/// run commands of their own, so an allow rule for `echo *` does not approve them: the call
/// asks, the approver denies, and nothing was created.
#[tokio::test]
async fn shell_substitution_31_substitutions_are_not_auto_approved() {
    let (s, approver) = with_rules(&[(Decision::Allow, "echo *")]);
    let commands = [
        "echo ok > >(touch pwned)",
        "echo \"$(touch pwned)\"",
        "echo `touch pwned`",
        "echo <(touch pwned)",
        "echo ${x:-$(touch pwned)}",
        "echo ok; touch pwned",
        "echo $((x)) && touch pwned",
        "cat <<EOF\n$(touch pwned)\nEOF",
    ];
    each_refused(&s, &commands, |_, _| {}).await;
    assert_eq!(approver.asked().len(), commands.len());
    assert!(!exists(s.ws().join("pwned")));
    let r = s.call(json!({"command": "echo plain"})).await;
    assert_eq!(output(&r).stdout, "plain\n");
    assert_eq!(
        approver.asked().len(),
        commands.len(),
        "allowed without asking"
    );
}

/// shell-env-prefix-32 (permission_bypass_shell): leading `VAR=value` assignments and
/// wrappers are stripped before matching, so `deny curl*` catches every spelling; the canary
/// server gets no hit.
#[tokio::test]
async fn shell_env_prefix_32_prefixes_and_wrappers_do_not_hide_a_denied_command() {
    let (s, approver) = with_rules(&[(Decision::Allow, "echo *"), (Decision::Deny, "curl*")]);
    let canary = Canary::start();
    let url = canary.url("env-prefix");
    for command in [
        format!("LC_ALL=C curl -s {url}"),
        format!("A=1 B=2 curl {url}"),
        format!("env -u HOME curl {url}"),
        format!("env LC_ALL=C curl {url}"),
        format!("nice -n 5 curl {url}"),
        format!("timeout 5 curl {url}"),
        format!("nohup curl {url}"),
        format!("command curl {url}"),
        format!("exec curl {url}"),
        format!("sudo curl {url}"),
        format!("echo {url} | xargs curl"),
        format!("sh -c 'curl {url}'"),
        format!("c'ur'l {url}"),
        format!("\\curl {url}"),
        format!("$'\\x63url' {url}"),
        format!("/usr/bin/curl {url}"),
        format!("echo $(curl {url})"),
    ] {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(e.kind, ErrorKind::PermissionDenied, "{command}: {e}");
    }
    // `env -i` would also clear the sandbox's git settings: refused before the policy
    let r = s
        .call(json!({ "command": format!("env -i curl {url}") }))
        .await;
    let e = r.error.as_ref().expect("env -i ran");
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::UnsafeInput, Some("protected_setting"))
    );
    assert!(approver.asked().is_empty());
    assert_eq!(canary.hits(), 0);
}

/// sandbox-redirect-35 through the pipeline: a written target the parser reads is a path
/// resource, refused as outside the workspace before anything runs; a target it cannot read
/// asks, and once approved still meets the sandbox.
#[tokio::test]
async fn sandbox_redirect_35_targets_are_path_resources() {
    let (s, _) = with_rules(&[(Decision::Allow, "echo *")]);
    for command in [
        "echo BYPASS > ../outside/escape.txt",
        "echo BYPASS >> ../outside/escape.txt",
        "echo BYPASS &> ../outside/escape.txt",
        "cat < ../outside/secret.txt",
    ] {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::UnsafeInput, Some("path_outside_workspace")),
            "{command}"
        );
    }
    let r = s
        .call(json!({"command": "echo ok > out.txt 2>/dev/null", "cwd": "."}))
        .await;
    assert_eq!(output(&r).exit_code, Some(0));
    assert!(exists(s.ws().join("out.txt")));
    // approved by the operator, an unreadable target still meets the sandbox
    let s = Shell::new();
    let r = s
        .call(json!({"command": "d=../outside; echo BYPASS > $d/escape.txt"}))
        .await;
    assert_ne!(output(&r).exit_code, Some(0));
    assert!(!exists(s.t.join("outside/escape.txt")));
}

/// sandbox-option-write-38 through the pipeline: `git log*` is allowed and runs without
/// asking, and its `--output` still cannot write outside.
#[tokio::test]
async fn sandbox_option_write_38_an_allow_rule_grants_no_write() {
    let (s, approver) = with_rules(&[(Decision::Allow, "git log*")]);
    s.setup(
        "git init -q && git -c user.name=t -c user.email=t@example.invalid commit -q \
         --allow-empty -m init",
    );
    let r = s
        .call(json!({"command": "git log --output=../outside/log.txt"}))
        .await;
    assert_ne!(output(&r).exit_code, Some(0));
    assert!(approver.asked().is_empty());
    assert!(!exists(s.t.join("outside/log.txt")));
}

/// The guard declares every command the call runs, for the audit and other policies.
#[tokio::test]
async fn the_guard_declares_commands_and_targets() {
    use toolgate_core::{Policy, PolicyInput, Verdict};
    struct Record(std::sync::Mutex<Vec<ResolvedResource>>);
    impl Policy for Record {
        fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
            self.0
                .lock()
                .unwrap()
                .extend(input.resources.iter().cloned());
            Verdict::deny("test.record", "recorded")
        }
    }
    let record = Arc::new(Record(std::sync::Mutex::new(Vec::new())));
    let s = Shell::with(ShellSetup {
        policy: Some(record.clone()),
        ..ShellSetup::default()
    });
    let _ = s
        .call(json!({"command": "LC_ALL=C git status && echo \"$(id)\" > out.txt"}))
        .await;
    let got = record.0.lock().unwrap().clone();
    let commands: Vec<&str> = got
        .iter()
        .filter_map(|r| match r {
            ResolvedResource::Command(c) => Some(c.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(commands, ["git status", "echo '\"$(id)\"'", "id"]);
    assert!(got.iter().any(|r| matches!(
        r,
        ResolvedResource::Path { path, access: toolgate_core::Access::Write } if path.display() == "out.txt"
    )));
}

/// What the approver was asked, as the error's details give it.
fn asked(e: &toolgate_core::ToolError) -> String {
    e.details
        .as_deref()
        .and_then(|d| d["asked"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// A fixture whose policy is `rules` over the default policy, and whose approver approves
/// every ask (as `--yes` does): only a deny rule can stop a command.
fn approving(rules: &[(Decision, &str)]) -> Shell {
    let rules = CommandRules::from_pairs(rules.iter().copied()).unwrap();
    Shell::with(ShellSetup {
        policy: Some(Arc::new(ShellPolicy::new(Arc::new(DefaultPolicy), rules))),
        ..ShellSetup::default()
    })
}

/// shell-ansi-c-deny-72 and shell-find-exec-73 (permission_bypass_shell), more spellings:
/// with every ask approved, `deny touch*` still holds for a name split by a line
/// continuation (`tou\<newline>ch`), for bash's `jobs -x`, and for a wrapper's clustered
/// options (`script -qc`, `flock -nc`), which hand the command on as a line or as words.
#[tokio::test]
async fn a_deny_holds_through_line_continuations_builtins_and_option_clusters() {
    let s = approving(&[(Decision::Deny, "touch*")]);
    for command in [
        "tou\\\nch pwned",
        "/usr/bin/tou\\\nch pwned",
        "jobs -x touch pwned",
        "jobs -l -x touch pwned",
        "script -qc 'touch pwned' /dev/null",
        "script -qctouch\\ pwned /dev/null",
        "flock -nc 'touch pwned' lock",
    ] {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(e.kind, ErrorKind::PermissionDenied, "{command}: {e}");
        assert!(
            e.message.contains("touch pwned` is denied"),
            "{command}: {e}"
        );
        assert!(!exists(s.ws().join("pwned")), "{command} created pwned");
    }
}

/// shell-chain-deny-29 (permission_bypass_shell): `find -delete` removes files as rm does,
/// so `deny rm*` holds for it while `allow find*` covers plain finds.
#[tokio::test]
async fn find_delete_is_decided_as_rm() {
    let (s, approver) = with_rules(&[(Decision::Allow, "find *"), (Decision::Deny, "rm*")]);
    s.setup("touch keep.txt");
    let r = s
        .call(json!({"command": "find . -name keep.txt -delete"}))
        .await;
    let e = r.error.as_ref().expect("find -delete ran");
    assert_eq!(e.kind, ErrorKind::PermissionDenied, "{e}");
    assert!(exists(s.ws().join("keep.txt")));
    let o = s.run("find . -name keep.txt").await;
    assert_eq!(o.stdout, "./keep.txt\n");
    assert!(approver.asked().is_empty());
}

/// shell-substitution-31 (permission_bypass_shell), more ways in: bash evaluates a variable's
/// text (running the command substitutions in it) in a prompt expansion `${x@P}`, an
/// indirect expansion `${!x}`, and wherever a name is arithmetic (`${x:y}`, `[[ y -eq 0 ]]`,
/// `$[y]`, `for ((...))`, an array subscript, an integer variable). Allowed programs only
/// (`echo`, `declare`), so before none of these asked; now each asks (rejected here), and
/// nothing was created.
#[tokio::test]
async fn evaluated_variables_are_not_auto_approved() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "echo *"),
        (Decision::Allow, "declare *"),
        (Decision::Allow, "compgen *"),
        (Decision::Allow, "mapfile *"),
        (Decision::Allow, "env *"),
    ]);
    s.setup("echo 'line one' > f.txt");
    let set = "y='a[$(touch pwned)]'; x=abc";
    let commands = [
        "x='$(touch pwned)'; echo ${x@P}".to_string(),
        format!("{set}; echo ${{!y}}"),
        format!("{set}; echo ${{x:y}}"),
        format!("{set}; echo ${{x:0:y}}"),
        format!("{set}; [[ y -eq 0 ]]; echo ok"),
        format!("{set}; echo $[y]"),
        format!("{set}; for ((i=0; i<y; i++)); do echo; done"),
        format!("{set}; a=([y]=1); echo ok"),
        format!("{set}; declare -i n=y; echo ok"),
        format!("{set}; a=(1); [[ -v a[y] ]] && echo ok"),
        format!("{set}; a=(1); declare 'a[y]'=1; echo ok"),
        "compgen -C 'touch pwned' x".to_string(),
        "compgen -W '$(touch pwned)' x".to_string(),
        "mapfile -C 'touch pwned' -c 1 a < f.txt".to_string(),
        "env -S'touch pwned'".to_string(),
    ];
    for command in &commands {
        let r = s.call(json!({ "command": command })).await;
        let e = r.error.as_ref().unwrap_or_else(|| panic!("{command} ran"));
        assert_eq!(e.kind, ErrorKind::ApprovalRejected, "{command}: {e}");
        assert!(!exists(s.ws().join("pwned")), "{command} created pwned");
    }
    assert_eq!(approver.asked().len(), commands.len());
    // the plain forms still run without asking
    let o = s.run("x=abc; echo ${x:1} ${x: -1} ${#x} ${x:-d}").await;
    assert_eq!(o.stdout, "bc c 3 abc\n");
    assert_eq!(
        approver.asked().len(),
        commands.len(),
        "allowed without asking"
    );
}

/// shell-find-exec-73 (permission_bypass_shell): a shell line run by `find -exec` or
/// `xargs -I` gets each file name put in for `{}` as code, so a file named
/// `x;touch pwned;.txt` would run touch under rules that allow `find`, `xargs`, `ls`, `sh`
/// and `wc`; such a line asks. Passing the name as an argument (`"$1"`) runs without asking.
#[tokio::test]
async fn placeholders_in_shell_lines_are_not_auto_approved() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "find *"),
        (Decision::Allow, "xargs *"),
        (Decision::Allow, "ls *"),
        (Decision::Allow, "sh *"),
        (Decision::Allow, "wc *"),
        (Decision::Allow, "echo *"),
    ]);
    s.setup("echo a > 'x;touch pwned;.txt'");
    let commands = [
        "find . -name '*.txt' -exec sh -c 'wc -l {}' \\;",
        "ls -1 | xargs -I{} sh -c 'wc -l {}'",
        "ls -1 | xargs -I% sh -c 'echo %'",
        "ls -1 | xargs --replace=F sh -c 'echo F'",
    ];
    each_refused(&s, &commands, |command, e| {
        assert!(
            asked(e).contains("pass it as an argument"),
            "{command}: {e:?}"
        );
    })
    .await;
    assert!(!exists(s.ws().join("pwned")));
    let o = s
        .run("find . -name '*.txt' -exec sh -c 'wc -c \"$1\"' _ {} \\;")
        .await;
    assert_eq!(o.stdout, "2 ./x;touch pwned;.txt\n");
    assert_eq!(
        approver.asked().len(),
        commands.len(),
        "allowed without asking"
    );
    assert!(!exists(s.ws().join("pwned")));
}

/// shell-git-env-config-76 (permission_bypass_shell): a key written to a nested repository's
/// `.git/config` (`diff.external`, `filter.x.clean`, `alias.*`) would run its program at a
/// later `git diff`; `allow git*` does not cover writing such a key (it asks), and does cover
/// harmless ones. The sandbox keeps that file read-only as well (a nested repository's
/// configuration is protected like the root's), so even a harmless key is not written.
#[tokio::test]
async fn git_config_keys_that_name_programs_are_not_auto_approved() {
    let (s, approver) = with_rules(&[(Decision::Allow, "git *")]);
    s.setup(
        "git init -q sub && cd sub && echo a > a.txt && git add a.txt && git -c user.name=t \
         -c user.email=t@example.invalid commit -qm init && echo b > a.txt",
    );
    let commands = [
        "git -C sub config diff.external 'touch pwned' && git -C sub diff",
        "git -C sub config set diff.external 'touch pwned'; git -C sub diff",
        "git -C sub config --add alias.st '!touch pwned' && git -C sub st",
        "git config --file sub/.git/config filter.x.clean 'touch pwned'",
    ];
    each_refused(&s, &commands, |command, e| {
        assert!(
            asked(e).contains("sets a key through which git"),
            "{command}: {e:?}"
        );
    })
    .await;
    assert!(!exists(s.ws().join("pwned")) && !exists(s.ws().join("sub/pwned")));
    let o = s
        .run("git -C sub config user.name t; git -C sub config --get user.name")
        .await;
    assert_ne!(o.exit_code, Some(0), "read-only in the sandbox: {o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
    assert_eq!(
        approver.asked().len(),
        commands.len(),
        "allowed without asking"
    );
}

/// shell-env-prefix-32 (permission_bypass_shell): bash's command table `BASH_CMDS` (what
/// `hash -p` fills) and its aliases `BASH_ALIASES` can be set as variables, by any builtin
/// that assigns one (`printf -v`, `read`, `declare`, an array assignment): `ls` then runs
/// touch. With `ls`, `printf`, `read`, `declare` and `shopt` allowed, each asks (rejected
/// here) and nothing is created.
#[tokio::test]
async fn the_command_table_cannot_be_rewritten_by_variables() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "ls *"),
        (Decision::Allow, "printf *"),
        (Decision::Allow, "read *"),
        (Decision::Allow, "declare *"),
        (Decision::Allow, "shopt *"),
    ]);
    let commands = [
        "printf -v 'BASH_CMDS[ls]' %s /usr/bin/touch; ls pwned",
        "read 'BASH_CMDS[ls]' <<< /usr/bin/touch; ls pwned",
        "declare 'BASH_CMDS[ls]'=/usr/bin/touch; ls pwned",
        "BASH_CMDS[ls]=/usr/bin/touch; ls pwned",
        "declare -A BASH_CMDS=([ls]=/usr/bin/touch); ls pwned",
        "shopt -s expand_aliases\nprintf -v 'BASH_ALIASES[ls]' %s 'touch pwned'\nls",
    ];
    each_refused(&s, &commands, |_, _| {}).await;
    assert!(!exists(s.ws().join("pwned")));
    assert_eq!(approver.asked().len(), commands.len());
    let o = s.run("printf -v files %s x; ls .").await;
    assert_eq!(o.exit_code, Some(0));
    assert_eq!(
        approver.asked().len(),
        commands.len(),
        "allowed without asking"
    );
}

/// The other side of `evaluated_variables_are_not_auto_approved`: arithmetic over variables
/// the line set from numbers (counters, `for ((..))` loop counters), literal and `@`/`#`
/// subscripts, associative keys, `IFS=` before `read`, and the look-up builtins (`command
/// -v`, `type`, `hash`) are ordinary bash, read with certainty: under rules allowing the
/// commands they run, each runs without asking, with bash's output.
#[tokio::test]
async fn ordinary_arithmetic_arrays_and_lookups_run_without_asking() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "echo *"),
        (Decision::Allow, "printf *"),
        (Decision::Allow, "find *"),
        (Decision::Allow, "read *"),
        (Decision::Allow, "mapfile *"),
        (Decision::Allow, "declare *"),
        (Decision::Allow, "git *"),
        (Decision::Allow, "sort*"),
    ]);
    s.setup("printf '# a\\n' > a.md && printf '# b\\n' > b.md && printf 'x\\ny\\n' > f");
    let cases = [
        (
            "count=0; for f in *.md; do count=$((count+1)); done; echo $count",
            "2\n",
        ),
        ("i=0; i=$((i+1)); echo $i", "1\n"),
        ("arr=(a b c); echo ${arr[1]}", "b\n"),
        ("arr=(a b c); printf '%s,' \"${arr[@]}\"", "a,b,c,"),
        ("files=(*.md); echo ${#files[@]}", "2\n"),
        (
            "find . -name '*.md' | sort | while IFS= read -r f; do echo \"$f\"; done",
            "./a.md\n./b.md\n",
        ),
        ("x=5; [[ $x -eq 5 ]] && echo five", "five\n"),
        ("for ((i=0;i<3;i++)); do echo $i; done", "0\n1\n2\n"),
        ("mapfile -t l < f; echo ${#l[@]}", "2\n"),
        ("declare -A m; m[k]=v; echo ${m[k]}", "v\n"),
        ("hash git; echo ok", "ok\n"),
        ("command -v git >/dev/null && echo found", "found\n"),
        ("type -t echo", "builtin\n"),
    ];
    for (command, expected) in cases {
        let r = s.call(json!({ "command": command })).await;
        if let Some(e) = &r.error {
            panic!("{command} did not run: {e} (asked: {:?})", approver.asked());
        }
        let o = s.run(command).await;
        assert_eq!(o.stdout, expected, "{command}");
    }
    s.setup("git init -q . && git -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m init");
    let o = s.run("git -c core.pager=cat log --format=%s").await;
    assert_eq!(o.stdout, "init\n");
    assert!(approver.asked().is_empty(), "{:?}", approver.asked());
}

/// The same forms over text from outside the line (a file read by `read` or `mapfile`, a
/// command substitution, a `for` word, a variable the line never set) still ask (rejected
/// here), and the `a[$(touch pwned)]` in the file never runs.
#[tokio::test]
async fn arithmetic_over_text_from_outside_the_line_asks() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "echo *"),
        (Decision::Allow, "cat *"),
        (Decision::Allow, "read *"),
        (Decision::Allow, "mapfile *"),
        (Decision::Allow, "ls *"),
    ]);
    s.setup("printf 'a[$(touch pwned)]\\n' > f");
    let commands = [
        "read -r n < f; echo $((n + 1))",
        "i=0; read -r n < f; i=$((i+n)); echo $i",
        "mapfile -t l < f; echo $((l))",
        "n=$(cat f); echo $((n))",
        "for n in $(cat f); do [[ $n -eq 1 ]]; done",
        "read -r n < f; for ((i=0;i<n;i++)); do echo; done",
        "read -r k < f; a=(1); echo ${a[k]}",
        "n=0; while read -r n; do echo $((n)); done < f",
        "echo $(( $(cat f) + 1 ))",
        "IFS=/ ls",
    ];
    each_refused(&s, &commands, |command, _| {
        assert!(!exists(s.ws().join("pwned")), "{command} created pwned");
    })
    .await;
    assert_eq!(approver.asked().len(), commands.len());
}

/// Numbers assigned in `&&` lists, groups, subshells, branches and function bodies
/// (`local`, `readonly`, `declare -i`, `export n=5`, `n+=1`) are read with certainty like
/// those set by a statement of the line: under rules allowing the commands, each runs without
/// asking, with bash's output.
#[tokio::test]
async fn numbers_assigned_in_lists_groups_and_functions_run_without_asking() {
    let (s, approver) = with_rules(&[
        (Decision::Allow, "echo *"),
        (Decision::Allow, "true"),
        (Decision::Allow, "f"),
        (Decision::Allow, "export *"),
        (Decision::Allow, "declare *"),
        (Decision::Allow, "local *"),
        (Decision::Allow, "readonly *"),
    ]);
    let cases = [
        ("export x=5; echo $((x + 1))", "6\n"),
        ("x=0; x+=$((1)); echo $((x + 1))", "2\n"),
        ("declare -i n=3; n=$((n * 2)); echo $n", "6\n"),
        ("f() { local x=1; echo $((x + 1)); }; f", "2\n"),
        ("f() { readonly x=4; echo $((x * 2)); }; f", "8\n"),
        ("true && x=1 && echo $((x + 1))", "2\n"),
        ("{ x=1; echo $((x + 2)); }", "3\n"),
        ("(x=1; echo $((x + 3)))", "4\n"),
        ("if true; then n=0; echo $((n + 1)); fi", "1\n"),
    ];
    for (command, expected) in cases {
        let r = s.call(json!({ "command": command })).await;
        if let Some(e) = &r.error {
            panic!("{command} did not run: {e} (asked: {:?})", approver.asked());
        }
        let o = s.run(command).await;
        assert_eq!(o.stdout, expected, "{command}");
    }
    assert!(approver.asked().is_empty(), "{:?}", approver.asked());
}

/// Their neighbours still ask (rejected here) and never run the `a[$(touch pwned)]` they
/// would evaluate: a variable appended to or counted from its value in the environment, a
/// number assigned only in a subshell or after `||`, a function's `local` seen by a function
/// called after it returned, and a here-document's arithmetic (expanded before the commands
/// after its `<<`, and read by the grammar as a command substitution).
#[tokio::test]
async fn numbers_that_may_not_have_been_assigned_still_ask() {
    let approver = rejecting();
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "echo *"),
        (Decision::Allow, "cat *"),
        (Decision::Allow, "ls*"),
        (Decision::Allow, "false"),
        (Decision::Allow, "f"),
        (Decision::Allow, "g"),
        (Decision::Allow, "local *"),
    ])
    .unwrap();
    let mut config = ShellConfig::default();
    config.env.insert("n".into(), "a[$(touch pwned)]".into());
    config.env.insert("x".into(), "a[$(touch pwned)]+".into());
    let s = Shell::with(ShellSetup {
        config,
        policy: Some(Arc::new(ShellPolicy::new(Arc::new(DefaultPolicy), rules))),
        approver: approver.clone(),
    });
    let commands = [
        "x+=5; echo $((x))",
        "n=$((n+1)); echo $n",
        "(n=1); echo $((n))",
        "false || n=1 || echo $((n))",
        "f() { local n=1; g() { echo $((n)); }; }; f; g",
        "cat <<EOF && n=1\n$((n))\nEOF",
        "ls='a[$(touch pwned)]'; cat <<EOF\n$((ls))\nEOF",
    ];
    each_refused(&s, &commands, |command, _| {
        assert!(!exists(s.ws().join("pwned")), "{command} created pwned");
    })
    .await;
    assert_eq!(approver.asked().len(), commands.len());
    // the environment does hold what they would have evaluated
    let o = s.run("echo \"$n\"").await;
    assert_eq!(o.stdout, "a[$(touch pwned)]\n");
}

/// A deny rule holds for a command a wrapper runs under a name the line computes: under `deny
/// rm` and `allow *`, `x=rm; timeout 5 $x -rf victim` removed victim (the wrapped `$x` was
/// read as certain, and `*` allowed it); now it asks, as `$x -rf victim` does, and victim stays.
#[tokio::test]
async fn a_wrapped_command_named_by_a_variable_asks() {
    let (s, approver) = with_rules(&[(Decision::Deny, "rm"), (Decision::Allow, "*")]);
    s.setup("mkdir victim && touch victim/keep && printf 'rm\\n' > f");
    let r = s.call(json!({ "command": "rm -rf victim" })).await;
    assert_eq!(
        r.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::PermissionDenied)
    );
    // the name is text the line holds: the deny reads it
    let r = s
        .call(json!({ "command": "x=rm; timeout 5 $x -rf victim" }))
        .await;
    assert_eq!(
        r.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::PermissionDenied)
    );
    assert!(exists(s.ws().join("victim/keep")));
    let commands = [
        "x=$(cat f); timeout 5 $x -rf victim",
        "x=$(cat f); sudo $x -rf victim",
        "read -r x < f; find victim -maxdepth 0 -exec $x -rf {} \\;",
        "x=$(cat f); echo victim | xargs $x -rf",
        "$(cat f) -rf victim",
    ];
    each_refused(&s, &commands, |command, _| {
        assert!(
            exists(s.ws().join("victim/keep")),
            "{command} removed victim"
        );
    })
    .await;
    assert_eq!(approver.asked().len(), commands.len());
}

/// An unquoted expansion in the arguments of a program that can run commands becomes words
/// only known when it runs, options included: under `deny rm` and `allow find *`, `find victim
/// $(cat f)` with f holding `-exec rm -rf victim ;` removed victim. Now such a line asks (a
/// program that runs nothing else, like `cat` or `wc`, still takes one), and a quoted one
/// runs.
#[tokio::test]
async fn unquoted_expansions_cannot_add_options_that_run_commands() {
    let (s, approver) = with_rules(&[
        (Decision::Deny, "rm"),
        (Decision::Allow, "find *"),
        (Decision::Allow, "sort *"),
        (Decision::Allow, "cat *"),
        (Decision::Allow, "wc *"),
    ]);
    s.setup(
        "mkdir victim && touch victim/keep && printf -- '-exec rm -rf victim ;\\n' > f && \
         printf -- '--compress-program=rm\\n' > k && echo a > a.txt",
    );
    let commands = [
        "x=$(cat f); find victim -maxdepth 0 $x",
        "find victim -maxdepth 0 $(cat f)",
        "find victim -maxdepth 0 `cat f`",
        "x=$(cat k); sort $x a.txt",
    ];
    each_refused(&s, &commands, |command, _| {
        assert!(
            exists(s.ws().join("victim/keep")),
            "{command} removed victim"
        );
    })
    .await;
    assert_eq!(approver.asked().len(), commands.len());
    for (command, expected) in [
        ("x=victim; find \"$x\" -name keep", "victim/keep\n"),
        ("f=a.txt; wc -c $f", "2 a.txt\n"),
        ("x=a.txt; cat $x", "a\n"),
    ] {
        let o = s.run(command).await;
        assert_eq!(o.stdout, expected, "{command}");
    }
    assert_eq!(approver.asked().len(), commands.len());
}
