//! The command rules over whole analyses: each class of spelling, as a table.

use super::*;
use pretty_assertions::assert_eq;

fn cmd(line: &str) -> SimpleCommand {
    let mut a = analyze(line);
    assert_eq!(a.commands.len(), 1, "{line}");
    a.commands.remove(0)
}

#[test]
fn patterns_match_the_leading_words_of_each_command() {
    // the matcher itself is toolgate_core::pattern::CommandPattern (tested there); here,
    // that it sees the words the analysis found, wrappers and prefixes removed
    let table: &[(&str, &str, bool, bool)] = &[
        // pattern, command, matches as allow, matches as deny
        ("git status", "git status -s", true, true),
        ("git status", "LC_ALL=C git status", true, true),
        ("git status", "timeout 5 git status", true, true),
        ("git status", "git statusx", false, false),
        ("curl", "/usr/bin/curl -s x", false, true),
        ("curl", "env curl x", true, true),
    ];
    for (pattern, line, allow, deny) in table {
        let p = CommandPattern::parse(pattern).unwrap();
        let c = cmd(line);
        assert_eq!(p.matches_argv(&c.argv, false), *allow, "{pattern} / {line}");
        assert_eq!(p.matches_argv(&c.argv, true), *deny, "{pattern} / {line}");
    }
    let xargs = &analyze("ls | xargs git status").commands[1];
    assert!(xargs.open_args);
    assert!(CommandPattern::parse("git status")
        .unwrap()
        .matches_argv(&xargs.argv, false));
}

#[test]
fn deny_beats_ask_beats_allow_on_every_segment() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "git status*"),
        (Decision::Deny, "git clean*"),
        (Decision::Allow, "echo *"),
        (Decision::Ask, "echo secret*"),
        (Decision::Deny, "curl*"),
    ])
    .unwrap();
    let v = rules.verdict(&analyze("git status && git clean -fd"));
    assert_eq!(v.decision, Decision::Deny);
    assert!(v.reason.contains("`git clean -fd`"), "{}", v.reason);
    assert_eq!(v.rule, "shell.deny:git clean*");
    for line in [
        "LC_ALL=C curl -s x",
        "echo $(curl x)",
        "bash -c 'curl x'",
        "timeout 5 curl x",
        "echo ok | xargs curl",
        "echo x > >(curl y)",
        "$CMD; curl x",
    ] {
        assert_eq!(
            rules.verdict(&analyze(line)).decision,
            Decision::Deny,
            "{line}"
        );
    }
    assert_eq!(
        rules.verdict(&analyze("git status; echo hi")).decision,
        Decision::Allow
    );
    let v = rules.verdict(&analyze("echo secret stuff"));
    assert_eq!(
        (v.decision, v.rule.as_ref()),
        (Decision::Ask, "shell.ask:echo secret*")
    );
    let v = rules.verdict(&analyze("echo ok; ls"));
    assert_eq!(
        (v.decision, v.rule.as_ref()),
        (Decision::Ask, "shell.unlisted")
    );
    assert!(v.reason.contains("`ls`"));
    let v = rules.verdict(&analyze("echo \"$(touch pwned)\""));
    assert_eq!(v.decision, Decision::Ask, "the substitution is not allowed");
    let v = rules.verdict(&analyze("echo $((x))"));
    assert_eq!(
        (v.decision, v.rule.as_ref()),
        (Decision::Ask, "shell.uncertain")
    );
    assert!(
        !v.grantable,
        "no grant over resources may answer what cannot be read"
    );
    // the reason names the variable and how to rewrite the line
    assert!(
        v.reason.contains("`x`") && v.reason.contains("(`x=0`)"),
        "{}",
        v.reason
    );
    let v = rules.verdict(&analyze("x=0; echo $((x + 1))"));
    assert_eq!(v.decision, Decision::Allow, "{}", v.reason);
    assert_eq!(rules.verdict(&analyze("")).decision, Decision::Ask);
    assert_eq!(
        CommandRules::new().verdict(&analyze("ls")).decision,
        Decision::Ask
    );
}

/// The decision and rule name of `line` under `rules`.
fn decided(rules: &CommandRules, line: &str) -> (Decision, String) {
    let v = rules.verdict(&analyze(line));
    (v.decision, v.rule.into_owned())
}

/// Item 1 of the class: a rule for a program does not cover what the program runs. What it
/// runs that can be read is decided by the rules (a denied `touch` denies the line); what it
/// runs that cannot be read asks, unless a rule names the command up to that word.
#[test]
fn a_rule_for_a_program_does_not_cover_what_it_runs() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "sed"),
        (Decision::Allow, "awk"),
        (Decision::Allow, "find"),
        (Decision::Allow, "fd"),
        (Decision::Allow, "xargs"),
        (Decision::Allow, "env"),
        (Decision::Allow, "python3"),
        (Decision::Allow, "perl"),
        (Decision::Allow, "ruby"),
        (Decision::Allow, "node"),
        (Decision::Allow, "bash"),
        (Decision::Allow, "sh"),
        (Decision::Allow, "zsh"),
        (Decision::Allow, "tar"),
        (Decision::Allow, "rsync"),
        (Decision::Allow, "ssh"),
        (Decision::Allow, "less"),
        (Decision::Allow, "vim"),
        (Decision::Allow, "man"),
        (Decision::Allow, "make"),
        (Decision::Allow, "git"),
        (Decision::Allow, "cargo"),
        (Decision::Allow, "npm"),
        (Decision::Allow, "npx"),
        (Decision::Allow, "rg"),
        (Decision::Allow, "sort"),
        (Decision::Allow, "watch"),
        (Decision::Allow, "su"),
        (Decision::Allow, "flock"),
        (Decision::Allow, "strace"),
        (Decision::Allow, "mytool"),
        (Decision::Allow, "echo"),
        (Decision::Allow, "ls"),
        (Decision::Deny, "touch"),
    ])
    .unwrap();
    let deny = (Decision::Deny, "shell.deny:touch".to_string());
    let code = (Decision::Ask, "shell.runs_code".to_string());
    let unlisted = (Decision::Ask, "shell.unlisted".to_string());
    let uncertain = (Decision::Ask, "shell.uncertain".to_string());
    let allow = (Decision::Allow, "shell.allow".to_string());
    let table: &[(&str, &(Decision, String))] = &[
        // what they run is read, and decided by the rules
        ("sed -n '1e touch pwned' f.txt", &deny),
        ("sed '1e touch x; false' f", &deny),
        ("sed -e p -e '$e touch x' f", &deny),
        ("find . -maxdepth 0 -exec touch pwned {} +", &deny),
        ("find . -exec sh -c 'touch x' \\;", &deny),
        ("find . -execdir touch x \\;", &deny),
        ("find . -ok touch x \\;", &deny),
        ("find . -okdir /usr/bin/touch x \\;", &deny),
        ("fd -x touch", &deny),
        ("ls | xargs touch", &deny),
        ("ls | xargs -I{} sh -c 'touch {}'", &deny),
        ("env touch x", &deny),
        ("timeout 5 touch x", &deny),
        ("nice -n 1 nohup stdbuf -oL setsid touch x", &deny),
        ("bash -c 'touch x'", &deny),
        ("sh -c \"echo ok; touch x\"", &deny),
        ("su -c 'touch x'", &deny),
        ("flock /tmp/l -c 'touch x'", &deny),
        ("watch -n 1 touch x", &deny),
        ("git rebase --exec 'touch x' main", &deny),
        ("git bisect run touch x", &deny),
        ("git submodule foreach 'touch x'", &deny),
        ("mytool 10 touch x", &deny),
        // a line in another shell's language, env's split string, trap's line and sg's
        // command are read with bash's grammar for the rules that restrict
        ("zsh -c 'touch x'", &deny),
        ("ksh -c 'echo ok; touch x'", &deny),
        ("env -S 'touch x'", &deny),
        ("env --split-string='touch x'", &deny),
        ("trap 'touch x' EXIT", &deny),
        ("trap -- 'echo ok; touch x' INT TERM", &deny),
        ("sg staff -c 'touch x'", &deny),
        ("sg staff 'touch x'", &deny),
        // a runner's words are searched for the program a restricting rule names
        ("strace -f touch x", &deny),
        ("strace -o /dev/null -e trace=open touch x", &deny),
        ("valgrind --tool=memcheck touch x", &deny),
        ("nsenter -t 1 -m touch x", &deny),
        ("unshare --fork -- /usr/bin/touch x", &deny),
        ("parallel touch ::: x", &deny),
        // what a shell reads from a literal here-string, here-document or echo, and the line
        // a variable hands a program to run
        ("echo 'touch x' | bash", &deny),
        ("printf 'echo ok\\ntouch x\\n' | sh", &deny),
        ("bash <(echo touch x)", &deny),
        ("source <(printf 'touch x')", &deny),
        ("bash <<< 'touch x'", &deny),
        ("bash -s a b <<< 'echo ok; touch x'", &deny),
        ("sh <<'EOF'\ntouch x\nEOF", &deny),
        ("cat <<EOF | bash\ntouch x\nEOF", &deny),
        (". /dev/stdin <<< 'touch x'", &deny),
        ("GIT_EXTERNAL_DIFF='touch x' git diff", &deny),
        ("env GIT_SSH_COMMAND='touch x' git fetch", &deny),
        ("PROMPT_COMMAND='touch x' bash -i", &deny),
        // what an alias or a hashed path makes a later word run
        ("shopt -s expand_aliases; alias t='touch'\nt x", &deny),
        ("hash -p /usr/bin/touch ls; ls x", &deny),
        // a backquoted command inside `${...}`
        ("echo ${x:-`touch x`}", &deny),
        ("echo \"${x:-${y:-`touch x`}}\"", &deny),
        // brace expansion's words
        ("{touch,x}", &deny),
        ("tou{ch,} x", &deny),
        ("/usr/bin/{touch,x}", &deny),
        // code that spells out the denied command in its text: the deny holds (the code's
        // words are read for the rules that restrict)
        ("sed 's/.*/touch pwned2/e' f.txt", &deny),
        ("awk 'BEGIN{system(\"touch x\")}'", &deny),
        ("python3 -c 'import os; os.system(\"touch x\")'", &deny),
        (
            "python3 -c \"import subprocess; subprocess.run(['touch', 'x'])\"",
            &deny,
        ),
        ("perl -e 'system q(touch x)'", &deny),
        ("ruby -e 'system(\"touch x\")'", &deny),
        ("ssh -o ProxyCommand='touch x' h", &deny),
        ("less '+!touch x' f", &deny),
        ("make CC='touch x'", &deny),
        // xargs adding the program a wrapper runs, or the subcommand, from its input
        // git configuration the line sets and then uses
        (
            "git init -q s && cd s && git config alias.t '!touch x' && git t",
            &deny,
        ),
        ("git config filter.f.clean 'touch x' && git status", &deny),
        // a file the line writes, then runs or has a build tool read by its name
        ("printf 'all:\\n\\ttouch x\\n' > Makefile; make", &deny),
        (
            "echo '{\"scripts\":{\"t\":\"touch x\"}}' > package.json; npm run t",
            &deny,
        ),
        ("printf 'touch x' > s.sh; chmod +x s.sh; ./s.sh", &deny),
        ("echo 'touch x' > f; bash < f", &deny),
        (
            "echo 'import os; os.system(\"touch x\")' > m.py; python3 -m m",
            &deny,
        ),
        // a copy of the program's file made by reading it
        ("cat /usr/bin/touch > t; chmod +x t; ./t x", &deny),
        ("dd if=/usr/bin/touch of=t; ./t x", &deny),
        ("base64 /usr/bin/touch | base64 -d > t; ./t x", &deny),
        ("cat < /usr/bin/touch > t; ./t x", &deny),
        ("cp /usr/bin/tou* t; ./t x", &deny),
        ("f=/usr/bin/touch; cp \"$f\" t; ./t x", &deny),
        // bash's history running earlier words again
        ("set -o history\n: touch x\nfc -s :=", &deny),
        ("set -o history\nhistory -s 'touch x'\nfc -s", &deny),
        ("set -o history -H\necho touch x\n!!:1-2", &deny),
        ("echo touch x | xargs env", &deny),
        ("echo touch x | xargs timeout 5", &deny),
        ("echo touch x | xargs -I{} sh -c {}", &deny),
        ("echo touch x | xargs -n2 stdbuf -o0", &deny),
        ("printf 'touch\\0x\\0' | xargs -0 env", &deny),
        // a program's own language that runs a shell line: its code options and words
        ("sqlite3 :memory: '.shell touch x'", &deny),
        ("sqlite3 -cmd '.system touch x' db .quit", &deny),
        ("gdb -batch -ex 'shell touch x'", &deny),
        ("gdb -batch --eval-command='!touch'", &deny),
        ("vim -es -c '!touch' -c q", &deny),
        ("vi -es '+silent !touch x' +q", &deny),
        ("php -r 'system(\"touch x\");'", &deny),
        // code given as standard input to a program reading its code from a file
        ("make -f /dev/stdin <<< $'all:\n\ttouch x'", &deny),
        ("printf 'all:\\n\\ttouch x' | make -f -", &deny),
        // what they run cannot be read: asks
        ("sed 's/.*/echo/e' f.txt", &code),
        ("sed -f script.sed f", &code),
        ("awk 'BEGIN{system(\"ls\")}'", &code),
        ("awk '{print | \"sh\"}' f", &code),
        ("awk -f prog.awk f", &code),
        ("python3 -c 'import os; os.system(\"ls\")'", &code),
        ("python3 x.py", &code),
        ("python3 -m http.server", &code),
        ("node -e 'require(\"fs\")'", &code),
        ("bash build.sh", &code),
        ("zsh -c 'echo ok'", &code),
        ("env -S 'echo ok'", &code),
        ("tar --to-command='sh -c id' -xf a.tar", &code),
        ("tar --use-compress-program=./x -xf a.tar", &code),
        ("tar -I ./x -xf a.tar", &code),
        ("rsync -e 'sh -c id' a b", &code),
        ("man -P 'sh -c id' ls", &code),
        // an alias's shell line is read: the rule over what it runs decides
        (
            "git -c alias.st='!touch x' st",
            &(Decision::Deny, "shell.deny:touch".to_string()),
        ),
        ("git -c alias.st='!./x' st", &code),
        ("git frobnicate", &code),
        ("git difftool", &code),
        ("git grep -O./x pattern", &code),
        ("git clone -u 'touch x' a b", &deny),
        ("git clone -u 'ls x' a b", &code),
        ("cargo --config 'target.x.runner=\"touch\"' run", &deny),
        ("cargo --config 'target.x.runner=\"valgrind\"' run", &code),
        ("cargo nextest run", &code),
        ("npx cowsay", &code),
        ("npm exec cowsay", &code),
        ("rg --pre ./x pattern", &code),
        ("sort --compress-program=./x f", &code),
        ("strace -f ls", &code),
        // an unknown program's argument that reads as a line may be run as one: the
        // denied command in it is denied (`mytool` may be a shell)
        ("mytool --exec 'touch x'", &deny),
        ("mytool 'a; touch x'", &deny),
        ("mytool --exec 'ls x'", &code),
        // what cannot be read at all
        ("echo \"$X\" | bash", &uncertain),
        ("vim -c '!ls x' f", &uncertain),
        ("echo ls | xargs env", &uncertain),
        // words of xargs's input may be options of a program whose options run programs
        ("ls | xargs -0 sort -o out", &uncertain),
        // a written file only named by other commands is data, not run
        (
            "echo '# use touch to download' > README.md && git add README.md",
            &allow,
        ),
        ("echo 'x * y' > f.txt; ls f.txt", &allow),
        ("echo status | xargs git", &uncertain),
        // the run's home holds startup files programs read: a line reaching it is uncertain
        ("echo 'shell ls' > ~/.gdbinit; gdb -batch", &uncertain),
        ("cp g ~/.lesskey", &uncertain),
        ("cp g \"$HOME/.gdbinit\"", &uncertain),
        ("cd; ls", &uncertain),
        ("vim -c '!touch x' f", &deny),
        ("env -S \"$CMD\"", &uncertain),
        // a wrapper no rule allows
        ("sudo ls", &(Decision::Allow, "shell.allow".to_string())),
        ("unknown-runner ls", &unlisted),
    ];
    for (line, want) in table {
        assert_eq!(decided(&rules, line), **want, "{line}");
    }
    // the same programs used plainly run without asking
    for line in [
        "sed -n 1p f.txt",
        "sed 's/a/b/g' f",
        "awk '{print $1}' f",
        "find . -name x",
        "ls | xargs echo",
        "python3 --version",
        "tar -xzf a.tgz",
        "rsync -a a b",
        "ssh h",
        "less -R f",
        "man ls",
        "make -j4",
        "git status",
        "git -C sub log",
        "git -c color.ui=always log",
        "cargo test",
        "cargo +nightly build",
        "npm run build",
        "rg -n x",
        "sort f",
        "mytool --format json",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Allow, "shell.allow".to_string()),
            "{line}"
        );
    }
}

/// A rule that names the command up to the word that carries its code allows it; shorter
/// ones (and `*`) do not.
#[test]
fn only_a_rule_naming_the_exact_form_allows_code() {
    let table: &[(&str, &str, bool)] = &[
        // rule, line, allowed
        ("python3 -m pytest", "python3 -m pytest -x tests", true),
        ("python3 -m pytest", "python3 -m http.server", false),
        ("python3 -m", "python3 -m http.server", true),
        ("python3", "python3 -m pytest", false),
        ("python3 -c", "python3 -c 'print(1)'", true),
        ("bash scripts/test.sh", "bash scripts/test.sh --fast", true),
        ("bash", "bash scripts/test.sh", false),
        ("sed -n 1e*", "sed -n '1e touch x' f", true),
        ("sed", "sed -n '1e touch x' f", true),
        ("sed", "sed s/a/b/e f", false),
        ("sed s/a/b/e", "sed s/a/b/e f", true),
        ("*", "python3 x.py", false),
        ("*", "ls -la", true),
        ("git st", "git st", true),
        ("npx prettier", "npx prettier --check .", true),
        ("npx", "npx prettier --check .", false),
        ("cargo nextest", "cargo nextest run", true),
        ("tar --to-command=./x", "tar --to-command=./x -xf a", true),
    ];
    for (rule, line, allowed) in table {
        let rules =
            CommandRules::from_pairs([(Decision::Allow, *rule), (Decision::Allow, "touch")])
                .unwrap();
        assert_eq!(
            rules.verdict(&analyze(line)).decision == Decision::Allow,
            *allowed,
            "{rule} / {line}: {:?}",
            rules.verdict(&analyze(line))
        );
    }
}

/// Item 3 of the class: deny and ask rules on a subcommand match it after global options,
/// and every subcommand when an option can change which one runs.
#[test]
fn deny_rules_on_subcommands_match_every_spelling() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "git"),
        (Decision::Allow, "cargo"),
        (Decision::Allow, "npm"),
        (Decision::Allow, "pnpm"),
        (Decision::Allow, "yarn"),
        (Decision::Allow, "docker"),
        (Decision::Allow, "kubectl"),
        (Decision::Deny, "git tag"),
        (Decision::Deny, "git push"),
        (Decision::Deny, "cargo publish"),
        (Decision::Deny, "npm publish"),
        (Decision::Deny, "pnpm publish"),
        (Decision::Deny, "yarn publish"),
        (Decision::Deny, "docker rm"),
        (Decision::Deny, "kubectl delete"),
        (Decision::Ask, "git reset"),
        (Decision::Deny, "sudo"),
    ])
    .unwrap();
    for line in [
        "git tag v5",
        "git -C . tag v6",
        "git -c a.b=c tag v7",
        "git --git-dir=.git --work-tree=. tag v8",
        "git --no-pager -P tag",
        "/usr/bin/git -C sub tag",
        "git --exec-path=/usr/lib/git-core tag",
        "git -c alias.t=tag t v9",
        "git -c alias.p=push p origin",
        "git config alias.p push && git p origin",
        "git config set alias.p 'push --force' && git p",
        "/usr/lib/git-core/git-push r HEAD",
        "git-push r",
        "git send-pack r.git HEAD:refs/heads/x",
        "git clone -q --config alias.p=push . c && git -C c p r",
        "git -C . http-push r",
        "git --bogus tag",
        "git --bogus value tag",
        "timeout 5 git -C . push",
        "bash -c 'git -C x push origin'",
        "cargo +nightly publish",
        "cargo -Zunstable-options --locked publish",
        "cargo --config alias.p=publish p",
        "npm --prefix sub publish",
        "pnpm -C sub --filter a publish",
        "yarn --cwd sub publish",
        "docker -H tcp://h --context c rm x",
        "kubectl -n ns --context c delete pod x",
        "sudo ls",
        "sudo -u root timeout 5 ls",
        "env sudo ls",
    ] {
        assert_eq!(
            rules.verdict(&analyze(line)).decision,
            Decision::Deny,
            "{line}"
        );
    }
    for line in ["git -C . reset --hard", "git --no-pager reset"] {
        let v = rules.verdict(&analyze(line));
        assert_eq!(
            (v.decision, v.rule.as_ref()),
            (Decision::Ask, "shell.ask:git reset"),
            "{line}"
        );
    }
    for line in [
        "git status",
        "git -C sub log",
        "git -c color.ui=never status",
        "cargo +nightly build",
        "npm --prefix sub test",
        "docker -H h ps",
        "kubectl -n ns get pods",
    ] {
        assert_eq!(
            rules.verdict(&analyze(line)).decision,
            Decision::Allow,
            "{line}"
        );
    }
}

/// Item 2 of the class: lines that would undo the sandbox's git settings are denied, whatever
/// the rules allow; other variables not known to be harmless ask.
#[test]
fn the_sandboxs_pins_win_over_every_rule() {
    let rules = CommandRules::from_pairs([(Decision::Allow, "*")]).unwrap();
    for line in [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned; false' git status --short",
        "env GIT_PAGER='touch x' git log",
        "env -i git status",
        "git -c core.fsmonitor='touch x' status",
        "unset GIT_CONFIG_COUNT; git status",
    ] {
        let v = rules.verdict(&analyze(line));
        assert_eq!((v.decision, v.rule.as_ref()), (Decision::Deny, "shell.pinned"), "{line}");
    }
    for line in [
        "GIT_EXTERNAL_DIFF='touch x' git diff",
        "GIT_SSH_COMMAND='touch x' git fetch",
        "EDITOR='touch x' git commit",
        "LD_PRELOAD=./x.so ls",
        "PYTHONSTARTUP=./x.py python3 -V",
        "NODE_OPTIONS='--require ./x.js' node -v",
        "export BASH_ENV=./x; ls",
    ] {
        let v = rules.verdict(&analyze(line));
        assert_eq!(
            (v.decision, v.rule.as_ref()),
            (Decision::Ask, "shell.uncertain"),
            "{line}"
        );
    }
    assert_eq!(
        rules
            .verdict(&analyze("LC_ALL=C GIT_PAGER=cat git log"))
            .decision,
        Decision::Allow
    );
}

/// A variable the line gave a number and then exports (`x=5; export x`) is allowed as
/// `export x=5` is; one from the environment, from text, or named only when the line runs
/// asks every time.
#[test]
fn exporting_a_number_the_line_set_is_allowed_and_anything_else_asks() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "make"),
        (Decision::Allow, "export"),
        (Decision::Allow, "readonly"),
        (Decision::Allow, "declare"),
    ])
    .unwrap();
    for line in [
        "x=5; export x; make",
        "x=5; readonly x; make",
        "x=5; declare -x x; make",
        "x=5 y=6; export x y; make",
        "x=5; export x; export -n x; make",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Allow, "shell.allow".to_string()),
            "{line}"
        );
    }
    for line in [
        "export x; make",
        "export \"$y\"; make",
        "export $(cat names); make",
        "x=abc; export x; make",
        "x=5; export x y; make",
        "export x=5; x=$(cat f); make",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Ask, "shell.uncertain".to_string()),
            "{line}"
        );
    }
}

/// A word only known when the line runs that may be an option of a program whose options
/// write files or run code asks every time, even under a rule that allows the program; the
/// same program with a value the line gives, after `--`, or in an option's value, is allowed.
#[test]
fn a_word_that_may_be_an_option_is_not_covered_by_a_rule_for_the_program() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "sort"),
        (Decision::Allow, "grep"),
        (Decision::Allow, "cat"),
        (Decision::Allow, "find"),
        (Decision::Allow, "git commit"),
        (Decision::Allow, "git log"),
    ])
    .unwrap();
    for line in [
        "sort \"$x\" a.txt",
        "find . \"$x\"",
        "git log \"$range\"",
        "x=$(cat f); sort \"$x\"",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Ask, "shell.uncertain".to_string()),
            "{line}"
        );
    }
    for line in [
        "file=notes.txt; sort \"$file\"",
        "sort -- \"$x\"",
        "grep -r \"$pattern\" src",
        "cat -- \"$x\"",
        "find . -name \"$p\"",
        "git commit -m \"$msg\"",
        "git log -- \"$f\"",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Allow, "shell.allow".to_string()),
            "{line}"
        );
    }
}

/// What a program the rules cannot read may run (its arguments that read as command lines,
/// the words of a line the grammar misreads, a glob that may name the program) is denied and
/// asked about by the rules that restrict, and needs no allow rule: the program's own rule
/// still allows it.
#[test]
fn what_a_program_may_run_is_restricted_and_needs_no_allow() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "./tool"),
        (Decision::Deny, "touch"),
        (Decision::Ask, "git push"),
    ])
    .unwrap();
    let table: &[(&str, Decision, &str)] = &[
        (
            "./tool --note 'touch x'",
            Decision::Deny,
            "shell.deny:touch",
        ),
        (
            "./tool --note 'echo a; git push origin'",
            Decision::Ask,
            "shell.ask:git push",
        ),
        (
            "./tool --note 'fix the bug'",
            Decision::Allow,
            "shell.allow",
        ),
        (
            "./tool --note 'a b' 'touch x'",
            Decision::Deny,
            "shell.deny:touch",
        ),
        (
            "strace -f bash -c 'touch x'",
            Decision::Deny,
            "shell.deny:touch",
        ),
        ("/usr/bin/t[o]uch x", Decision::Deny, "shell.deny:touch"),
        ("/usr/bin/tou?h x", Decision::Deny, "shell.deny:touch"),
        (": > touch; t[o]uch x", Decision::Deny, "shell.deny:touch"),
        ("/usr/bin/[!t]ouch x", Decision::Ask, "shell.uncertain"),
    ];
    for (line, decision, rule) in table {
        assert_eq!(
            decided(&rules, line),
            (*decision, rule.to_string()),
            "{line}"
        );
    }
}

/// What the deny rules read beyond the commands (what a program may run, the words of a
/// line that cannot be read) does not deny ordinary lines that only mention a denied
/// program as data (from a helper's run of 399 developer commands): they run when allowed,
/// and ask otherwise.
#[test]
fn data_naming_a_denied_program_is_not_denied() {
    let rules = CommandRules::from_pairs([
        (Decision::Deny, "curl"),
        (Decision::Deny, "git push"),
        (Decision::Deny, "rm -rf"),
        (Decision::Allow, "python3 -m pytest"),
        (Decision::Allow, "echo"),
        (Decision::Allow, "cargo test"),
        (Decision::Allow, "grep"),
    ])
    .unwrap();
    for line in [
        "python3 -m pytest -k curl",
        "python3 -m pytest -k 'not curl' tests/curl",
        "echo 'we never git push from here'",
        "grep -rn 'rm -rf' src",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Allow, "{line}");
    }
    for line in [
        "gh pr create --title 'Replace curl with reqwest'",
        "gh pr create --body 'Run git push after review'",
        "./build.sh --note 'no curl'",
        ": 'curl note'",
        "FOO=1 cargo test; echo 'no curl'",
        "for d in src tests; do find $d -name '*curl*'; done",
        "sh build.sh && echo 'no curl needed'",
        "python3 -c 'print(1)'; echo 'skip curl'",
        ". .venv/bin/activate; python3 -m pytest tests | grep -i curl",
        "make test ARGS=curl",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Ask, "{line}");
    }
}

/// `allow command:gdb -batch` does not cover the commands gdb is given: its flags come
/// before its code (`-ex 'shell ...'`, `-ex 'python ...'`), which a rule naming the flag ran.
#[test]
fn a_debuggers_flags_are_not_its_code() {
    let rules = CommandRules::from_pairs([(Decision::Allow, "gdb -batch")]).unwrap();
    for line in [
        "gdb -batch -ex 'shell cp a b'",
        "gdb -batch -ex 'python import os'",
        "gdb -batch -x cmds.gdb",
        "gdb -batch ./prog",
    ] {
        assert_ne!(
            rules.verdict(&analyze(line)).decision,
            Decision::Allow,
            "{line}"
        );
    }
}

/// Round 35's forms: bash options and builtins that change what a command runs or gets in
/// its environment (`set -k`, `exec -a`, `exec -c`, `env` long prefixes and clusters, an
/// exported array), clusters of one-letter options naming code, programs taken off the
/// "runs nothing else" list, the run's home reached through a substitution; and the ordinary
/// lines that must not ask.
#[test]
fn options_that_change_what_runs_are_read_and_ordinary_lines_pass() {
    let rules = CommandRules::from_pairs([
        (Decision::Allow, "set"),
        (Decision::Allow, "shopt"),
        (Decision::Allow, "less"),
        (Decision::Allow, "printf"),
        (Decision::Allow, "git"),
        (Decision::Allow, "make test"),
        (Decision::Allow, "ssh"),
        (Decision::Allow, "scp"),
        (Decision::Allow, "zip"),
        (Decision::Allow, "diff3"),
        (Decision::Allow, "curl"),
        (Decision::Allow, "cp"),
        (Decision::Allow, "echo"),
        (Decision::Allow, "xargs"),
        (Decision::Allow, "sed"),
        (Decision::Allow, "bash"),
        (Decision::Allow, "declare"),
        (Decision::Allow, "cd"),
        (Decision::Allow, "pwd"),
        (Decision::Allow, "cat"),
        (Decision::Allow, "printenv"),
        (Decision::Deny, "touch"),
        (Decision::Deny, "git push"),
    ])
    .unwrap();
    for line in [
        "set -k; less g LESSOPEN='|id > x; cat %s'",
        "set -e -k; less g LESSOPEN='|id > x; cat %s'",
        "set -e -o keyword; less g LESSOPEN='|id > x; cat %s'",
        "set -eo allexport; LESSOPEN='|id > x; cat %s'; less g",
        "shopt -os allexport; LESSOPEN='|id > x; cat %s'; less g",
        "shopt -s -o keyword; less g LESSOPEN='|id'",
        "bash -kc \"less g LESSOPEN='|id > x; cat %s'\"",
        "bash -o keyword -c \"less g LESSOPEN='|id'\"",
        "bash -ac \"LESSOPEN='|id > x; cat %s'; less g\"",
        "bash -o allexport -c \"LESSOPEN='|id'; less g\"",
        "(exec -a git-fetch git status --upload-pack='id > x;:')",
        "exec -a busybox-x git status",
        "make test -sf evil.mk",
        "scp -qS ./p a b",
        "ssh -qF cfg h",
        "ssh -qo ProxyCommand='id > x' h",
        "ssh -qoProxyCommand='id > x' h",
        "zip -T -qTT ./p a.zip f",
        "less -Xk kb g",
        "less --LESSKEY-SRC=src g",
        "diff3 --diff-program=./p a b c",
        "curl -s --engine /tmp/e.so http://127.0.0.1:1/",
        "cp g \"$(echo ~)/.lesskey\"; less g",
        "cp g \"$(printenv HOME)/.lesskey\"; less g",
        "echo ~ | xargs -I{} cp g {}/.lesskey; less g",
        "printenv HOME | xargs -I{} cp g {}/.lesskey; less g",
        "cp g \"$(printenv H\\OME)/.lesskey\"; less g",
        "cp g \"$(printenv H''OME)/.lesskey\"; less g",
        "cp g \"$(cd -P; pwd)/.lesskey\"; less g",
        "(cd -- && cat > .lesskey) < g; less g",
        "ssh -o ' ProxyCommand=id > x' h true",
        "ssh -o '=ProxyCommand=id > x' h true",
        "ssh -o '\"ProxyCommand\"=id > x' h true",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Ask, "{line}");
    }
    for line in [
        "set -k; less g LESSOPEN='|touch x; cat %s'",
        "set -k; git diff GIT_EXTERNAL_DIFF='touch x'",
        "bash -kc \"git diff GIT_EXTERNAL_DIFF='touch x'\"",
        "sh -k -c \"less g LESSOPEN='|touch x; cat %s'\"",
        "(exec -a git-push git r.git HEAD:refs/heads/x)",
        "exec -a git-push git status HEAD:refs/heads/pwn",
        "exec -a git-fetch git status --upload-pack='touch x;:'",
        "ssh -qo ProxyCommand='touch x' h",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Deny, "{line}");
    }
    for line in [
        "(exec -c git commit -qm m)",
        "exec -cl git status",
        "env --ignore-env git commit -qm m",
        "env --uns=GIT_CONFIG_COUNT git commit -qm m",
        "env -vu GIT_CONFIG_COUNT git commit -qm m",
        "env -vuGIT_CONFIG_COUNT git status",
        "env --u=GIT_CONFIG_COUNT git commit -qm m",
        "declare -ax GIT_CONFIG_COUNT; git commit -qm m",
        "declare -A GIT_CONFIG_COUNT; git status",
    ] {
        assert_eq!(
            decided(&rules, line),
            (Decision::Deny, "shell.pinned".into()),
            "{line}"
        );
    }
    for line in [
        "git commit -qm '~30% faster'",
        "git commit -qm \"~30% faster\"",
        "git commit -qam 'handle $HOME'",
        "sed -i 's/$HOME/$XDG/' f",
        "cp f \"~backup\"",
        "for i in 1 2 3; do echo $((i*2)); done",
        "make test -s",
        "ssh -q h true",
        "less -XR g",
        "curl -sS http://127.0.0.1:1/",
        "(exec git status)",
        "env -v git status",
        "set -e; git status",
        "set -euo pipefail; git status",
        "bash -o pipefail -c 'git status'",
        "cd - && git status",
        "git commit -qm 'mention HOME in the docs'",
        "bash -ec 'git status'",
        "declare -a arr=(1 2); git status",
        "declare -A m=([a]=1 [b]=2); echo \"${!m[@]}\"",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Allow, "{line}");
    }
}

/// What a shell reads from a pipe is read as printf and echo write it (escapes decoded,
/// conversions given their arguments), and more writers feed the "written, then run" check:
/// find's -fprint family, uniq's and xxd's output, sort -o, split and csplit, a decompressor,
/// an archive extracted (its members, a git directory among them, are only known then).
#[test]
fn piped_text_is_read_decoded_and_every_writer_feeds_what_runs() {
    let rules =
        CommandRules::from_pairs([(Decision::Allow, "*"), (Decision::Deny, "touch")]).unwrap();
    for line in [
        "printf 'tou\\143h x' | bash",
        "echo -e 'tou\\x63h x' | bash",
        "printf '%b' 'tou\\0143h x' | bash",
        "printf 'tou%ch x' c | bash",
        "printf 'tou%sh x' c | bash",
        "echo 'tou\\0143h x' | sh",
        "find . -maxdepth 0 -fprintf s.sh 'touch x\\n'; bash s.sh",
        "echo 'touch x' > a.txt; uniq a.txt s.sh; bash s.sh",
        "echo 'touch x' | sort -o s.sh; bash s.sh",
        "echo 'touch x' | split -l 1 - s_; bash s_aa",
        "echo 'touch x' | csplit -s -f s_ - 1; bash s_01",
        "echo 'touch x' | gzip > s.gz; gunzip s.gz; bash s",
        "printf -- 'touch x' | bash",
        "printf '%s' tou 'ch x' | bash",
        "echo 'touch x' | uniq - s.sh; bash s.sh",
        "echo 'touch x' | sort -uo s.sh; bash s.sh",
        "echo 'touch x' | sort --out s.sh; bash s.sh",
        "echo 'touch x' | sort -o s.sh; . ./s.sh",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Deny, "{line}");
    }
    for line in [
        "printf '74 6f 75 63 68 20 78' | xxd -r -p - s.sh; bash s.sh",
        "find . -maxdepth 0 -fprintf Makefile 'all:\\n\\tid > x\\n'; make",
        "printf 'all:\\n\\tid\\n' > a.txt; uniq a.txt Makefile; make",
        "tar -cf t.tar --transform 's,X,.,' sub/Xgit && tar -xf t.tar && git -C sub diff",
        "unzip -o pkg.zip && make",
        // formats printf cannot finish, read without a panic
        "printf 'tou%' x | bash",
        "printf '\\' | bash",
        "printf '%*.*' | bash",
        "tar xzf r.tgz && cd sub && git diff",
        "printf '/tmp/tc\\n' > rust-toolchain; rustc --version",
        "cp a .cargo/config.toml; cargo fmt",
        "echo 'all: ; id' | uniq - Makefile; make",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Ask, "{line}");
    }
    for line in [
        "tar -czf out.tgz src && git status",
        "tar xzf release.tgz && git status --short",
        "unzip -q release.zip && git diff --stat",
        "sort -u a.txt > b.txt && git diff",
        "gzip -k a.txt && make",
        "echo -e 'a\\tb' | column -t",
    ] {
        assert_eq!(decided(&rules, line).0, Decision::Allow, "{line}");
    }
}
