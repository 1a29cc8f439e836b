//! The parser's table: every construct it reads, and input it must refuse to be sure of.

use super::*;
use pretty_assertions::assert_eq;

/// The argv lists of every command `src` runs, as single lines.
fn lines(src: &str) -> Vec<String> {
    analyze(src)
        .commands
        .iter()
        .map(|c| c.argv.join(" "))
        .collect()
}

fn certain(src: &str) -> bool {
    analyze(src).certain
}

#[test]
fn every_segment_of_lists_and_pipelines_is_a_command() {
    let table: &[(&str, &[&str])] = &[
        ("git status", &["git status"]),
        (
            "git status && git clean -fd",
            &["git status", "git clean -fd"],
        ),
        ("a || b; c", &["a", "b", "c"]),
        ("a | b |& c & d", &["a", "b", "c", "d"]),
        ("a\nb\n\nc", &["a", "b", "c"]),
        ("(cd sub; make) && { ls; }", &["cd sub", "make", "ls"]),
        (
            "if true; then rm x; else touch y; fi",
            &["true", "rm x", "touch y"],
        ),
        (
            "while read l; do echo $l; done < in.txt",
            &["read l", "echo $l"],
        ),
        ("for f in *.rs; do wc -l $f; done", &["wc -l $f"]),
        ("case $x in a) rm a;; esac", &["rm a"]),
        ("f() { curl x; }; f", &["curl x", "f"]),
        ("! grep -q x f", &["grep -q x f"]),
        ("# just a comment", &[]),
    ];
    for (src, want) in table {
        assert_eq!(lines(src), *want, "{src}");
        assert!(certain(src), "{src}: {:?}", analyze(src).uncertain);
    }
}

#[test]
fn substitutions_are_commands_too() {
    let table: &[(&str, &[&str])] = &[
        (
            "echo \"$(touch pwned)\"",
            &["echo \"$(touch pwned)\"", "touch pwned"],
        ),
        ("echo `id`", &["echo `id`", "id"]),
        (
            "diff <(ls a) <(ls b)",
            &["diff <(ls a) <(ls b)", "ls a", "ls b"],
        ),
        ("echo ok > >(touch pwned)", &["echo ok", "touch pwned"]),
        ("x=$(whoami)", &["whoami"]),
        ("echo ${x:-$(rm y)}", &["echo ${x:-$(rm y)}", "rm y"]),
        ("cat <<EOF\n$(rm x)\nEOF", &["cat", "rm x"]),
        (
            "echo $(echo $(echo $(id)))",
            &[
                "echo $(echo $(echo $(id)))",
                "echo $(echo $(id))",
                "echo $(id)",
                "id",
            ],
        ),
    ];
    for (src, want) in table {
        assert_eq!(lines(src), *want, "{src}");
    }
}

#[test]
fn quotes_and_escapes_are_removed_from_words() {
    for src in [
        "curl x",
        "c'ur'l x",
        "\"curl\" x",
        "\\curl x",
        "cu\\rl x",
        "$'\\x63url' x",
        "$'\\143url' x",
        "$'cu\\u0072l' x",
        "\"c\"'u'rl x",
    ] {
        assert_eq!(lines(src), ["curl x"], "{src}");
        assert!(certain(src), "{src}");
    }
    assert_eq!(lines("echo 'a b' \"c\\\"d\""), ["echo a b c\"d"]);
    assert_eq!(analyze("echo 'a b'").commands[0].display(), "echo 'a b'");
}

#[test]
fn prefixes_and_wrappers_are_stripped() {
    // line, the command it runs, whether the line is certain (a variable not known to be
    // harmless makes it uncertain; one the sandbox pins, refused)
    let table: &[(&str, &str, bool)] = &[
        ("LC_ALL=C curl -s x", "curl -s x", true),
        ("LANG=C TZ=UTC NO_COLOR=1 git log", "git log", true),
        ("A=1 B=\"2 3\" git log", "git log", false),
        ("env LC_ALL=C curl x", "curl x", true),
        ("env -i A=1 curl x", "curl x", false),
        ("env -u HOME -- curl x", "curl x", true),
        ("nice -n 5 curl x", "curl x", true),
        ("nice -5 curl x", "curl x", true),
        ("timeout 5 curl x", "curl x", true),
        ("timeout -s KILL -k 1 5s curl x", "curl x", true),
        ("nohup curl x", "curl x", true),
        ("command curl x", "curl x", true),
        ("exec curl x", "curl x", true),
        ("time curl x", "curl x", true),
        ("sudo -u root curl x", "curl x", true),
        ("stdbuf -o L curl x", "curl x", true),
        ("setsid curl x", "curl x", true),
        ("sudo timeout 5 nice env LC_ALL=C curl x", "curl x", true),
        ("sudo timeout 5 nice env A=1 curl x", "curl x", false),
        ("/usr/bin/env curl x", "curl x", true),
        (
            "ionice -c 3 taskset -c 0 chrt -f 1 flock /tmp/l curl x",
            "curl x",
            true,
        ),
    ];
    for (src, want, certain) in table {
        let a = analyze(src);
        let got: Vec<String> = a.commands.iter().map(|c| c.argv.join(" ")).collect();
        assert_eq!(got, [*want], "{src}");
        assert_eq!(a.certain, *certain, "{src}: {:?}", a.uncertain);
    }
    let a = analyze("LC_ALL=C timeout 5 curl x");
    assert_eq!(a.commands[0].assignments, ["LC_ALL=C"]);
    assert_eq!(a.commands[0].wrappers, [["timeout", "5"]]);
    let a = analyze("find . -name '*.o' | xargs -n 1 rm -f");
    assert_eq!(
        lines("find . -name '*.o' | xargs -n 1 rm -f"),
        ["find . -name *.o", "rm -f"]
    );
    assert!(a.commands[1].open_args && !a.commands[0].open_args);
    assert_eq!(lines("command -v git"), ["command -v git"]);
    assert_eq!(lines("env"), ["env"]);
}

#[test]
fn shell_strings_are_analyzed_again() {
    let table: &[(&str, &[&str])] = &[
        ("bash -c 'git clean -fd'", &["git clean -fd"]),
        ("sh -c \"ls && rm -rf x\"", &["ls", "rm -rf x"]),
        ("bash -lc 'curl x'", &["curl x"]),
        ("bash -e -o pipefail -c 'a | b'", &["a", "b"]),
        ("bash -c 'bash -c \"sh -c id\"'", &["id"]),
        // what eval runs is read first, then eval itself
        ("eval 'touch pwned'", &["touch pwned", "eval touch pwned"]),
        // in double quotes `$'` is literal; eval's own parse then decodes it
        (
            "eval -- touch \"$'\\x70'wned\"",
            &["touch pwned", "eval -- touch $'\\x70'wned"],
        ),
        (
            "command eval 'eval \"git clean -fd\"'",
            &[
                "git clean -fd",
                "eval git clean -fd",
                "eval eval \"git clean -fd\"",
            ],
        ),
        ("find . -exec rm {} \\;", &["find . -exec rm {} ;", "rm {}"]),
        (
            "find . -name x -execdir sh -c 'curl y' \\;",
            &["find . -name x -execdir sh -c curl y ;", "curl y"],
        ),
    ];
    for (src, want) in table {
        let got: Vec<String> = analyze(src)
            .commands
            .iter()
            .filter(|c| !["bash", "sh"].contains(&program::program_name(&c.argv[0])))
            .map(|c| c.argv.join(" "))
            .collect();
        assert_eq!(got, *want, "{src}");
        assert!(certain(src), "{src}: {:?}", analyze(src).uncertain);
    }
    // a script file is a command the rules decide on, running code they cannot read
    assert!(certain("bash build.sh"));
    assert_eq!(
        analyze("bash build.sh").commands[0]
            .reading
            .code
            .as_ref()
            .map(|c| c.at),
        Some(1)
    );
}

#[test]
fn redirections_are_paths_and_duplications_are_not() {
    let a = analyze("cmd < in.txt > out.txt 2>> err.log &> both && exec 3> rw 2>&1 >&2 2>/dev/null >/dev/stdout");
    let got: Vec<(&str, Access)> = a
        .redirects
        .iter()
        .map(|r| (r.path.as_str(), r.access))
        .collect();
    assert_eq!(
        got,
        [
            ("in.txt", Access::Read),
            ("out.txt", Access::Write),
            ("err.log", Access::Write),
            ("both", Access::Write),
            ("rw", Access::Write),
        ]
    );
    assert!(a.certain, "{:?}", a.uncertain);
    assert_eq!(
        analyze("echo x > '../outside/a b'").redirects[0].path,
        "../outside/a b"
    );
    assert_eq!(analyze("echo x >& file").redirects[0].path, "file");
    // the grammar does not read `<>`: uncertain, never silently ignored
    assert!(!certain("exec 3<> rw"));
}

#[test]
fn what_cannot_be_read_with_certainty_is_uncertain() {
    for src in [
        "$CMD arg",
        "${CMD} arg",
        "$(echo rm) -rf x",
        "`echo rm` x",
        "\"$x\" y",
        "c*rl x",
        "/usr/bin/cur? x",
        "eval \"$CMD\"",
        "eval rm \"$x\"",
        "eval 'rm *'  x*",
        "eval -x 'rm x'",
        "source ./env.sh",
        ". ./env.sh",
        "alias ls='rm -rf'",
        "hash -p /tmp/x ls",
        "trap \"$HANDLER\" EXIT",
        "echo ${x:-`rm y`}",
        "echo \"${x:=`rm y`}\"",
        "echo ${x:-${y:-`rm y`}}",
        "echo ${x#`rm y`}",
        "trap -p",
        "PATH=.:$PATH git status",
        "LD_PRELOAD=./x.so ls",
        "env PATH=. git status",
        "IFS=/ ls",
        "echo {a,b}",
        "rm {-i,-rf} x",
        "echo $((x + 1))",
        "echo $((a[$(id)]))",
        "(( x++ ))",
        "[[ $x -eq 1 ]]",
        "echo x > $HOME/f",
        "echo x > \"$(mktemp)\"",
        "curl x | bash",
        "bash < script.sh",
        "bash -c \"$CMD\"",
        "env -S \"$CMD\"",
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(unclosed",
        "if true; then",
        "a &&",
        "| b",
        "))((",
        "! if echo ok; then ls; fi",
        "echo x > /dev/tcp/127.0.0.1/80",
        // found by the fuzzer: the grammar joins these two lines into one command
        "echo $(timeout 5 curl 'q w'; echo `id` | xargs id | xargs curl --opt=1\nenv A=1 nice -n 3 /usr/bin/wc \"d e\" && while while while ls; do ls; done; do ls; done; do ls; done); ls",
        "exec 3<>/dev/tcp/example.org/80",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
        assert!(!a.uncertain.is_empty());
    }
}

#[test]
fn huge_and_deep_input_is_uncertain_not_a_crash() {
    let huge = "echo x; ".repeat(MAX_INPUT / 8 + 1);
    let a = analyze(&huge);
    assert!(!a.certain && a.commands.is_empty());
    let long_ok = "echo x; ".repeat(1000);
    assert_eq!(analyze(&long_ok).commands.len(), 1000);
    let deep = format!("{}id{}", "$(echo ".repeat(2000), ")".repeat(2000));
    let a = analyze(&deep);
    assert!(!a.certain);
    let deep_shells = format!("{}id{}", "bash -c \"".repeat(20), "\"".repeat(20));
    assert!(!analyze(&deep_shells).certain);
    let parens = format!("{}true{}", "(".repeat(5000), ")".repeat(5000));
    assert!(!analyze(&parens).certain);
    for bad in [
        "",
        "\0",
        "\u{feff}ls",
        "ls\u{0}rm",
        "\\",
        "'",
        "\"",
        "$(",
        "`",
        "<<",
        "<<EOF",
        "${",
        "$((",
        "\u{202e}ls",
        "\r\n",
    ] {
        let _ = analyze(bad);
    }
}

#[test]
fn ansi_c_strings_decode_or_refuse() {
    assert_eq!(unescape_ansi_c("$'a\\tb'").as_deref(), Some("a\tb"));
    assert_eq!(
        unescape_ansi_c("$'\\x41\\101\\u00e9'").as_deref(),
        Some("AAé")
    );
    assert_eq!(unescape_ansi_c("$'\\cA'"), None);
    assert_eq!(unescape_ansi_c("$'\\U110000'"), None);
    assert_eq!(unescape_ansi_c("'x'"), None);
}

/// Variables set for the commands of a line: harmless ones are certain, the rest uncertain,
/// and those that would undo the sandbox's git settings refused (`pinned`), in every place a
/// line can set, export, unset or clear them.
#[test]
fn variables_are_read_wherever_they_are_set() {
    let certain_lines = [
        "LC_ALL=C LANG=C.UTF-8 TZ=UTC git status",
        "NO_COLOR=1 RUST_BACKTRACE=1 cargo test",
        "env LC_ALL=C git log",
        "GIT_PAGER=cat git log",
        "PAGER= git log",
        "export LC_ALL=C; git status",
        "x=1; echo $x",
        "files=$(ls); echo $files",
        "FOO=bar; echo $FOO",
        "for f in a b; do echo $f; done",
        "read -r line < f",
        "export GIT_PAGER; git log",
        "readonly GIT_PAGER PAGER; git log",
        "unset FOO",
        "unset -f git",
        "declare x=1",
        "git -c core.pager=cat log",
        "git -c color.ui=always -c user.name=t log",
        "env -u FOO git status",
    ];
    for src in certain_lines {
        let a = analyze(src);
        assert!(a.certain && a.pinned.is_empty(), "{src}: {a:?}");
    }
    let uncertain_lines = [
        "FOO=1 git status",
        "EDITOR=vim git commit",
        "GIT_EXTERNAL_DIFF=./x git diff",
        "GIT_SSH_COMMAND='sh -c id' git fetch",
        "LD_PRELOAD=./x.so ls",
        "BASH_ENV=./x bash -c ls",
        "PROMPT_COMMAND=id bash -i",
        "PYTHONSTARTUP=./x.py python3 -c 1",
        "NODE_OPTIONS='--require ./x.js' node -v",
        "PATH=.:$PATH git status",
        "env EDITOR=vim git commit",
        "env PATH=. git status",
        "sudo env LESSOPEN='|id %s' less f",
        "export NODE_OPTIONS=--require=./x.js; node -v",
        "export FOO; ls",
        "declare -x RUSTFLAGS='-C linker=./x'; cargo build",
        "typeset -x MAKEFLAGS=--eval=x; make",
        "local -x PAGER_X=1",
        "HOME=/tmp/x; git status",
        "RUSTUP_HOME=./t; cargo build",
        "read HOME < f; git status",
        "for PATH in . ; do ls; done",
        "printf -v HOME x; ls",
        "declare -n r=PATH; r=.",
        "set -a; FOO=1; ls",
        "set -o allexport",
        "export -f git; bash -c 'git status'",
        "builtin export EDITOR=vim",
        "IFS=/ ls",
    ];
    for src in uncertain_lines {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
        assert!(a.pinned.is_empty(), "{src}: {:?}", a.pinned);
    }
    let pinned_lines = [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch x; false' git status",
        "GIT_CONFIG_PARAMETERS=\"'core.pager'='id'\" git log",
        "GIT_PAGER=less git log",
        "PAGER='sh -c id' git log",
        "GIT_EDITOR=vim git commit",
        "GIT_CONFIG_GLOBAL=./evil git status",
        "env GIT_CONFIG_COUNT=1 git status",
        "env -i git status",
        "env - git status",
        "env -iv git status",
        "env -u GIT_CONFIG_COUNT git status",
        "env --unset=GIT_PAGER git log",
        "export GIT_CONFIG_COUNT=0; git status",
        "GIT_CONFIG_COUNT=0; git status",
        "unset GIT_CONFIG_COUNT; git status",
        "unset -v GIT_PAGER PAGER",
        "export -n GIT_PAGER",
        "f() { local GIT_PAGER; git log; }; f",
        "declare -x GIT_CONFIG_KEY_0=core.pager",
        "read GIT_PAGER <<< id; git log",
        "for GIT_PAGER in id; do git log; done",
        "printf -v GIT_CONFIG_VALUE_0 x",
        "GIT_PAGER+=x git log",
        "git -c core.fsmonitor='touch x' status",
        "git -c core.fsMonitor=true status",
        "git -ccore.pager=id log",
        "git -c core.hooksPath=.hooks commit -m x",
        "git -c core.sshCommand=id fetch",
        "git -c credential.helper='!id' fetch",
        "git -c include.path=./x status",
        "git --config-env=core.pager=X log",
        "git --config-env core.editor=X commit",
        "sudo git -c core.pager=id log",
        "bash -c 'GIT_PAGER=id git log'",
        "timeout 5 env -i git status",
        "echo $(unset GIT_CONFIG_COUNT)",
    ];
    for src in pinned_lines {
        let a = analyze(src);
        assert!(!a.pinned.is_empty(), "{src} undoes no pin: {a:?}");
    }
}

/// Expansions and tests where bash evaluates a variable's text, not only reads it: a value
/// `a[$(cmd)]` (set literally, or read from a file) runs cmd there, so they are uncertain;
/// the forms that only read a value stay certain.
#[test]
fn expansions_that_evaluate_a_variables_text_are_uncertain() {
    for src in [
        "x='$(touch pwned)'; echo ${x@P}",
        "echo \"${x@P}\"",
        "echo ${a[@]@P}",
        "y='a[$(touch pwned)]'; echo ${!y}",
        "echo \"${!y}\"",
        "y='a[$(touch pwned)]'; x=abc; echo ${x:y}",
        "echo ${x:0:y}",
        "echo ${x:$n}",
        "y='a[$(touch pwned)]'; [[ y -eq 0 ]] && echo ok",
        "[[ 1 -lt n ]] && echo ok",
        "declare -i n=y; echo ok",
        "local -i n; n=y",
        "typeset -ix n=y",
        "echo $[y]",
        "[[ -v a[y] ]] && echo ok",
        "echo \"$[y + 1]\"",
        "for ((i=0; i<n; i++)); do echo $i; done",
        "a=([y]=1); echo ok",
        "declare -a a=([$n]=1)",
        "echo touch pwned | xargs -I% sh -c %",
        "echo touch pwned | xargs -I{} bash -c '{}'",
        "ls | xargs --replace=F sh -c 'cat F'",
        "find . -exec sh -c 'echo {}' \\;",
        "echo > ou\\\nt",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
    for src in [
        "echo ${x:-default} ${x:=a} ${x:+b} ${x:?c}",
        "echo ${x: -1} ${x:1:2} ${#x} ${#} ${!prefix*} ${!prefix@}",
        "echo ${x@Q} ${x/a/b} ${x%.rs} ${x^^}",
        "[[ 1 -eq 1 ]] && echo ok",
        "[[ -f x ]] && echo ok",
        "declare -r n=1; echo '$[y]'",
        "find . -exec sh -c 'echo \"$1\"' _ {} \\;",
        "echo x | xargs sh -c 'echo \"$@\"' _",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
}

/// A line continuation with no blank around it joins two words, as bash removes it before
/// splitting words: `tou\<newline>ch` runs touch.
#[test]
fn line_continuations_inside_a_word_join_it() {
    assert_eq!(lines("tou\\\nch pwned"), ["touch pwned"]);
    assert_eq!(
        lines("/usr/bin/tou\\\n\\\nch \"pw\"\\\nned"),
        ["/usr/bin/touch pwned"]
    );
    assert_eq!(lines("git status \\\n  --short"), ["git status --short"]);
    assert!(certain("tou\\\nch pwned"));
}

/// Arithmetic over variables the line itself set from numbers (and loop counters of
/// `for ((..))`), literal subscripts, `IFS=` before `read` and the look-up builtins are
/// ordinary bash: certain. The same forms over variables whose text may come from outside
/// the line (`read`, `mapfile`, `for x in`, a command substitution, the environment, a
/// later assignment of text) stay uncertain.
#[test]
fn arithmetic_over_numbers_the_line_set_is_certain() {
    for src in [
        "count=0; for f in *.md; do count=$((count+1)); done",
        "i=0; i=$((i+1))",
        "i=0; i=$((i+1)); echo $i",
        "arr=(a b c); echo ${arr[1]}",
        "arr=(a b c); printf '%s\\n' \"${arr[@]}\"",
        "files=(*.rs); echo ${#files[@]} ${arr[-1]} ${arr[*]}",
        "find . | while IFS= read -r f; do echo \"$f\"; done",
        "while IFS=, read -r a b; do echo $a; done < f.csv",
        "x=5; [[ $x -eq 5 ]]",
        "x=5; [[ \"$x\" -lt 6 && -f y ]] && echo ok",
        "n=3; for ((i=0;i<n;i++)); do echo $i; done",
        "for ((i=0;i<3;i++)); do echo $i; done",
        "mapfile -t l < f; echo ${#l[@]}",
        "declare -A m; m[k]=v; echo ${m[k]}",
        "hash git",
        "command -v git",
        "type -t ls git",
        "a=1 b=2; echo $((a + b * 16#ff + 0x1f))",
        "true; [[ $? -eq 0 ]] && echo ok",
        "n=0; ((n++)); echo $n",
        "x=5; echo $((x)) & wait",
        "x=5\necho $((x))",
        "mapfile -t l < f; echo $(( ${#l[@]} + ${#l} - 1 ))",
        "mapfile -t l < f; [[ ${#l[@]} -gt 1 ]] && echo many",
        "n=0; for f in *; do n=$((n+1)); printf '%s %d\\n' \"$f\" $n; done",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
    for src in [
        "read n < f; echo $((n + 1))",
        "read -r n; i=0; i=$((i+n))",
        "mapfile -t l < f; echo $((l))",
        "for n in $(cat f); do echo $((n+1)); done",
        "for n in *; do [[ $n -eq 1 ]]; done",
        "n=$(cat f); echo $((n))",
        "echo $((n))",
        "n=0; n=abc; echo $((n))",
        "n='a[$(touch pwned)]'; echo $((n))",
        "echo $((n)); n=0",
        "while true; do echo $((n)); n=0; done",
        "n=0; while read n; do echo $((n)); done",
        "n=0; printf -v n '%s' x; echo $((n))",
        "n=0; echo ${n:=x}; echo $((n))",
        "n=0; f() { local n=x; echo $((n)); }; f",
        "true && n=0; echo $((n))",
        "(n=0); echo $((n))",
        "read x; echo ${arr[x]}",
        "echo ${arr[i]}",
        "m[k]=v",
        "declare -A m; read k; echo $((m[$k]))",
        "IFS=/ ls",
        "IFS=/ read -r a b; IFS=/ ls",
        "IFS=$x read -r a",
        "hash -p /tmp/x ls",
        "echo $(( $(cat f) + 1 ))",
        "i=0; for ((; i<n; i++)); do echo; done",
        "for ((i=0; i<3; i++)); do read i; done",
        "[[ $1 -eq 0 ]]",
        "m=(1); declare -A m; m[k]=v",
        "declare -A m; unset m; m[k]=v",
        "declare -A m; f() { local m; m[k]=v; }; f",
        "echo $(( ${l[0]} + 1 ))",
        "x=5 & echo $((x))",
        "x=5 y=1 & echo $((x))",
        "x=5 &\necho $((x))",
        "echo $(( ${#l[$(id)]} ))",
        "REPLY=0; read < f; echo $((REPLY))",
        "BASH_REMATCH=0; [[ $s =~ (.*) ]]; echo $((BASH_REMATCH))",
        "PWD=0; cd \"$d\"; echo $((PWD))",
        "n=0; let n=y; echo $((n))",
        "n=0; v=n; printf -v \"$v\" '%s' x; echo $((n))",
        "n=0; v=n; read -r \"$v\" < f; echo $((n))",
        "n=0; v=n; declare \"$v=x\"; echo $((n))",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
}

/// A number assigned where it has surely run before the evaluation is as known as one set
/// by a statement of the line: in an `&&` list, a group, a subshell, a loop or function body
/// (`local`, `declare`, `readonly`, `export` with a number too), appended to (`x+=1`), or
/// with the integer attribute given a number; a lower-case variable exported with a number.
/// Its neighbours, where the number may not have been assigned (after `||`, past a subshell,
/// a pipeline, a background `&`, a failed `local` outside a function, a function called
/// later) or text was (from a file, a substitution, `$1`, the environment), still ask.
#[test]
fn numbers_assigned_where_they_surely_ran_are_known() {
    for src in [
        "export x=5; echo $x",
        "export x=5; echo $((x + 1))",
        "x=5 cargo test",
        "x=0; x+=$((1)); echo $((x))",
        "x=0; x+=1; echo $((x))",
        "declare -i n=3",
        "declare -i n=3; echo $((n * 2))",
        "declare -i n=3; n=$((n+1)); n=7; echo $n",
        "typeset -ir n=3; echo $((n))",
        "f() { local x=1; echo $((x+1)); }; f",
        "f() { local -i n=0; n=$((n+1)); echo $n; }; f",
        "f() { readonly x=1; echo $((x)); }; f",
        "readonly x=1; echo $((x))",
        "declare x=1; echo $((x))",
        "a && x=1 && echo $((x))",
        "x=1 || echo $((x))",
        "x=1 && a || echo $((x))",
        "{ x=1; echo $((x)); }",
        "{ x=1; }; echo $((x))",
        "(x=1; echo $((x)))",
        "while read -r l; do n=0; echo $((n+1)); done < f",
        "if a; then n=0; echo $((n+1)); fi",
        "if x=1; then echo $((x)); else echo $((x+1)); fi; echo $((x))",
        "if a; then :; elif x=1; then echo $((x)); else echo $((x)); fi",
        "if a; then :; else n=2; echo $((n)); fi",
        "while x=1; a; do echo $((x)); done; echo $((x))",
        "case $v in a) n=0; echo $((n));; esac",
        "f() { local i=0; for ((i=0;i<3;i++)); do echo $i; done; }; f",
        "x=1; cat <<EOF\n$((x+1))\nEOF",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
    for src in [
        // text from outside the line
        "x=$(cat f); echo $((x))",
        "read x; echo $((x))",
        "x=$1; echo $((x))",
        "export x=$(cat f); echo $((x))",
        "x=$(cat f); $x",
        "read x; $x arg",
        "x=$1; bash -c \"$x\"",
        "export x=5; $x",
        // appending to the environment's text, or a variable's own old value
        "x+=5; echo $((x))",
        "n=$((n+1))",
        "n=0; n+=y; echo $((n))",
        "n=0; n+=$x; echo $((n))",
        // the integer attribute with text
        "declare -i n=3; n=y",
        "declare -i n=3; read n",
        "declare -i n=3; for n in $(cat f); do :; done",
        "declare -i n=$x",
        "declare -i n",
        // a declaration expands all its words before it assigns
        "declare x=1 y=$((x))",
        // the assignment may not have run, or ran elsewhere
        "a && x=1; echo $((x))",
        "a || x=1 && echo $((x))",
        "a || x=1 || echo $((x))",
        "a && x=1 || echo $((x))",
        "(x=1); echo $((x))",
        "echo $(x=1); echo $((x))",
        "x=1 | echo $((x))",
        "echo | x=1; echo $((x))",
        "{ x=1 & echo $((x)); }",
        "{ x=1; } > out; echo $((x))",
        "x=1 echo $((x))",
        "if a; then x=1; fi; echo $((x))",
        "if a; then x=1; else echo $((x)); fi",
        "if a; then x=1; elif echo $((x)); then :; fi",
        "if a; then :; elif x=1; then :; fi; echo $((x))",
        "if a; then x=1 & echo $((x)); fi",
        "case $v in a) x=1;; b) echo $((x));; esac",
        "case $v in a) x=1;& b) echo $((x));; esac",
        "while echo $((x)); x=1; do :; done",
        "while a; do x=1; done; echo $((x))",
        "local x=1; echo $((x))",
        "(local x=1; echo $((x)))",
        "f() { local x=1; }; f; echo $((x))",
        "f() { local x=1; g() { echo $((x)); }; }; f; g",
        "f() { echo $((x)); }; x=1; f",
        "declare -n r=x; r=1; echo $((x))",
        // a here-document is expanded before the commands after its `<<`, and the
        // grammar reads its `$((..))` as a command substitution
        "cat <<EOF && x=1\n$((x))\nEOF",
        "ls='a[$(touch pwned)]'; cat <<EOF\n$((ls))\nEOF",
        // exported: upper case, text, or a lower-case name programs read
        "export X=5; git status",
        "export x=abc; ./build.sh",
        "export http_proxy=1; curl x",
        "npm_config_foreground_scripts=1 npm test",
        "export path=1; zsh -c ls",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
}

/// A command a wrapper, `find -exec` or `xargs` runs is a command name like the first word of
/// a line: one that holds an expansion (`timeout 5 $x`, with `x` from a file, `$1` or even a
/// literal earlier in the line) or a glob pattern is uncertain there too, as `$x` is, so no
/// allow rule covers it and no deny rule is dodged; expansions in a wrapper's own options and
/// in the arguments stay certain.
#[test]
fn a_wrapped_command_named_by_an_expansion_is_uncertain() {
    for src in [
        "x=$(cat f); timeout 5 $x -rf victim",
        "x=rm; timeout 5 $x -rf victim",
        "read -r x < f; find . -exec $x {} \\;",
        "find . -exec \"$x\" {} +",
        "x=$(cat f); env $x ls",
        "x=$1; xargs $x",
        "sudo \"$cmd\" -rf x",
        "nohup $x &",
        "exec $x",
        "timeout 5 r? -rf x",
        "nice c*rl x",
        "sudo timeout 5 nice $x",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
    for src in [
        "timeout 5 cat \"$url\"",
        "find . -name \"$p\" -exec rm {} \\;",
        "sudo -u \"$u\" ls",
        "nice -n \"$n\" make",
        "env LC_ALL=\"$l\" ls",
        "ls | xargs -n 1 rm -f",
        "x=$(cat f); echo $x | xargs -n 1 echo",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
}

/// An unquoted expansion becomes words only known when the line runs, options included
/// (`find . $x` with x='-exec rm -rf y ;'): in the arguments of a program that can run
/// commands it is uncertain; in those of one that runs nothing else (`cat`, `wc`, `echo`,
/// `rm`), and quoted, it stays certain (a quoted one is one word).
#[test]
fn unquoted_expansions_in_arguments_of_programs_that_run_commands_are_uncertain() {
    for src in [
        "x=$(cat f); find . $x",
        "find . $(cat f)",
        "find . `cat f`",
        "sort $opts a.txt",
        "git log $range",
        "tar czf out.tgz $files",
        "timeout 5 sort $x",
        "find . -exec sort $x {} \\;",
        "mytool $x",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
    for src in [
        "for f in *.rs; do wc -l $f; done",
        "cat $f",
        "echo $x ${y:-z}",
        "rm -f $f",
        "x=5; head -n $((x)) f",
        "find \"./$d\" -name \"$p\"",
        "sort -- \"$x\" a.txt",
        "git log -- \"$range\"",
        "ls $d | wc -l",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
}

/// `export x`, `readonly x`, `declare -x x` and `export -n x` without a value keep the value
/// the variable has: one the line gave a number stays a number for the commands it runs and
/// for arithmetic after; one from the environment, from text, or from a name only known when
/// the line runs stays unknown.
#[test]
fn a_declaration_without_a_value_keeps_what_the_variable_holds() {
    for src in [
        "x=5; export x; ./build.sh",
        "x=5; export x; echo $((x + 1))",
        "x=5; readonly x; echo $((x))",
        "x=5; readonly x; export x; ./build.sh",
        "x=5; declare -x x; make",
        "x=5; typeset -x x; make",
        "x=5; declare -gx x; echo $((x))",
        "x=5 y=7; export x y; make",
        "x=5; y=$((x * 2)); export x y; make",
        "x=5; export x; export -n x; echo $((x))",
        "export x=5; export -n x; echo $((x))",
        "n=$((2 * 3)); export n; ./run.sh",
        "f() { x=5; export x; echo $((x)); }; f",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
    for src in [
        // from the environment, or a name only known when the line runs
        "export x; ./build.sh",
        "export x; echo $((x))",
        "export \"$y\"; make",
        "export $(cat names); make",
        "x=5; export x y; make",
        "declare -x x; make",
        // text, an upper-case name, a lower-case name programs read
        "x=abc; export x; ./build.sh",
        "X=5; export X; make",
        "http_proxy=1; export http_proxy; curl x",
        // the assignment may not have run
        "a && x=5; export x; make",
        "(x=5); export x; make",
        // an assignment after `readonly` fails: the value is the environment's
        "readonly x; x=5; echo $((x))",
        "declare -r x; x=5; echo $((x))",
        // in a function `declare` makes a new local variable, without the value
        "f() { x=5; declare -x x; echo $((x)); }; f",
        // an exported variable given text later hands that text to the commands after
        "export x=5; x=$(cat f); ./build.sh",
        "x=5; export x; read x < f; ./build.sh",
        "x=5; export x; for x in a b; do ./run.sh; done",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
        assert!(a.pinned.is_empty(), "{src}: {:?}", a.pinned);
    }
}

/// A word only known when the line runs that could start with `-` may be one option, quoted
/// or not (`sort "$x"` with x='-o/some/file' writes that file): in the arguments of a program
/// whose options can write files or run code it is uncertain, unless it stands where the
/// program takes an option's value (`git commit -m "$msg"`, `find . -name "$p"`) or after
/// `--`. A value the line gives the variable is judged by that value; a word with a literal
/// start other than `-` (`"./$f"`) or an arithmetic expansion is no option.
#[test]
fn a_word_that_may_be_an_option_is_uncertain_where_options_matter() {
    for src in [
        "sort \"$x\" a.txt",
        "sort \"$(cat f)\"",
        "sort \"${x}\"",
        "sort -n\"$x\" a.txt",
        "find \"$d\" -name x",
        "find . \"$x\"",
        "tar czf out.tgz \"$dir\"",
        "git \"$x\" log",
        "git -c \"$kv\" log",
        "git log \"$range\"",
        "git grep \"$p\"",
        "git diff \"$f\"",
        "git show \"$rev\"",
        // the global options before the subcommand still matter, and a subcommand only known
        // when it runs is none
        "git \"$x\" add f",
        "git -C d \"$x\" add f",
        "s=add; git \"$s\" \"$f\"",
        "git diff add \"$f\"",
        "rsync \"$opts\" a b",
        "ls | xargs sort \"$x\"",
        "sed \"$x\" f",
        "sed -n \"$x\" f",
        "env \"$x\" ls",
        "curl \"$url\"",
        "tree \"$x\"",
        "printf \"$fmt\" x",
        "mytool \"$x\"",
        "timeout 5 sort \"$x\"",
        "find . -exec sort \"$x\" {} \\;",
        // the line's own value starts with `-`, or the variable comes from elsewhere too
        "x=-o/tmp/out; sort \"$x\" a.txt",
        "x=notes.txt; read x; sort \"$x\"",
        "x=notes.txt; x=$1; sort \"$x\"",
        "a && x=notes.txt; sort \"$x\"",
        "x=; x+=-o; sort \"$x\"",
    ] {
        let a = analyze(src);
        assert!(!a.certain, "{src} was read as certain: {a:?}");
    }
    for src in [
        "grep -r \"$pattern\" src",
        "cat -- \"$x\"",
        "cat \"$x\"",
        "file=notes.txt; sort \"$file\"",
        "declare file=notes.txt; sort \"$file\" a.txt",
        "printf '%s\\n' \"$x\" \"${a[@]}\"",
        "f=a.txt; if [ -n \"$1\" ]; then f=b.txt; fi; sort \"$f\"",
        "sort -- \"$x\"",
        "sort \"./$x\"",
        "sort \"src/$x\"",
        "n=5; sort -k \"$n\" a.txt",
        "git commit -m \"$msg\"",
        "git commit -m \"$(cat <<'EOF'\nfix: x\nEOF\n)\"",
        "git log -- \"$f\"",
        "for f in *.py; do git add \"$f\"; done",
        "git checkout \"$branch\"",
        "git -C sub switch \"$b\"",
        "git rm --cached \"$f\"",
        "git mv \"$a\" \"$b\"",
        "git status \"$d\"",
        "find . -name \"$p\" -type f",
        "n=3; git log \"$((n))\"",
        "echo \"$x\"",
        "rm -f \"$f\"",
        "wc -l \"$f\" \"$g\"",
        "head -n \"$n\" \"$f\"",
        "cp \"$a\" \"$b\"",
        "sort --key=\"$k\" a.txt",
        "d=build; mkdir -p \"$d\" && tar czf out.tgz \"$d\"",
    ] {
        let a = analyze(src);
        assert!(a.certain, "{src} was read as uncertain: {:?}", a.uncertain);
    }
}

/// Brace expansion is bash's, word for word, within its bounds: alternatives, nesting,
/// numeric and letter sequences with a step; what is not a brace pattern stays as it is.
#[test]
fn brace_expansion_makes_the_words_bash_makes() {
    let expand = |t: &str| {
        let (mut out, mut budget) = (Vec::new(), MAX_BRACE_WORDS);
        assert!(expand_braces(t, &mut out, &mut budget), "{t}");
        out
    };
    assert_eq!(expand("{touch,x}"), ["touch", "x"]);
    assert_eq!(expand("tou{ch,}"), ["touch", "tou"]);
    assert_eq!(expand("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
    assert_eq!(expand("{1..3}"), ["1", "2", "3"]);
    assert_eq!(expand("{3..1}"), ["3", "2", "1"]);
    assert_eq!(expand("{1..10..4}"), ["1", "5", "9"]);
    assert_eq!(expand("{a..c}"), ["a", "b", "c"]);
    assert_eq!(expand("{x}"), ["{x}"]);
    assert_eq!(expand("{a,b"), ["{a,b"]);
    assert_eq!(
        expand("{-9223372036854775808..9223372036854775807..9223372036854775807}"),
        ["-9223372036854775808", "-1", "9223372036854775806"]
    );
    // past the bound: not expanded (the line stays uncertain)
    let (mut out, mut budget) = (Vec::new(), MAX_BRACE_WORDS);
    assert!(!expand_braces(&"{a,b}".repeat(10), &mut out, &mut budget));
    assert_eq!(sequence("1..100000"), None);
    // the command a brace expansion makes is read
    assert!(lines("{touch,x}").contains(&"touch x".to_string()));
    assert!(!certain("{touch,x}"));
}

/// The words of each possible command of `src` ([`CommandAnalysis::possible`]), as lines.
fn possible(src: &str) -> Vec<String> {
    analyze(src)
        .possible
        .iter()
        .map(|c| c.argv.join(" "))
        .collect()
}

/// [`possible`] without the words kept of unread lines and of code.
fn possible_lines(src: &str) -> Vec<String> {
    possible(src)
        .into_iter()
        .filter(|l| !l.starts_with("(unparsed) ") && !l.starts_with("(code) "))
        .collect()
}

/// A program the grammar cannot read (an unknown one, a runner, a name that is a glob or an
/// expansion) may be a shell: its literal arguments that read as lines are read as what it
/// may run, for the rules that restrict; the line's certainty is what it was.
#[test]
fn what_a_program_not_known_may_run_is_read_as_possible_commands() {
    let table: &[(&str, &[&str])] = &[
        ("./mysh -c 'touch x'", &["touch x"]),
        ("./mysh -c 'a; b | c'", &["a", "b", "c"]),
        ("strace -f -o /dev/null bash -c 'touch x'", &["touch x"]),
        (
            "./mysh -c \"./mysh -c 'touch x'\"",
            &["./mysh -c touch x", "touch x"],
        ),
        ("timeout 5 ./mysh -c 'touch x'", &["touch x"]),
        // a known program's arguments are its grammar's business, a word is no line
        ("echo 'touch x'", &[]),
        ("grep -e 'touch x' f", &[]),
        ("./mysh touch", &[]),
        // a word known only when it runs is not read
        ("./mysh -c \"$x y\"", &[]),
    ];
    for (src, want) in table {
        assert_eq!(possible_lines(src), *want, "{src}");
    }
    assert!(certain("./mysh -c 'touch x'"));
    assert!(lines("./mysh -c 'touch x'") == ["./mysh -c touch x"]);
    // a name that is a glob: uncertain, and its arguments read
    let a = analyze("/bin/ba?h -c 'touch x'");
    assert!(!a.certain);
    assert_eq!(a.possible[0].argv, ["touch", "x"]);
}

/// Past the budget of parsed lines the arguments are kept split into words, under the
/// program, which the grammar does not know, so a restricting rule still reads them.
#[test]
fn lines_past_the_budget_keep_their_words() {
    let many: String = (0..40)
        .map(|i| format!("'echo {i}'"))
        .chain(["'touch x'".to_string()])
        .collect::<Vec<_>>()
        .join(" ");
    let a = analyze(&format!("./mysh {many}"));
    assert_eq!(a.possible[40].argv, ["./mysh", "touch", "x"]);
    assert_eq!(a.possible[0].argv, ["echo", "0"]);
    assert!(!a.possible[40].reading.known);
}

/// A line the analysis cannot read with certainty, or that runs code it cannot read, keeps
/// its words (quotes and backslashes out, split at white space, operators, assignments and
/// expansions) as one possible command of a program the grammar does not know: what it runs
/// is made of text it holds. A line read with certainty keeps nothing more.
#[test]
fn an_unread_line_keeps_its_words() {
    let table: &[(&str, &[&str])] = &[
        ("c=touch; $c x", &["(unparsed) c touch c x"]),
        ("$(echo touch) x", &["(unparsed) echo touch x"]),
        ("c=\"tou\"ch; $c x", &["(unparsed) c touch c x"]),
        ("${PWD:0:0}touch x", &["(unparsed) PWD 0 0 touch x"]),
        ("eval \"$x\"", &["(unparsed) eval x"]),
        (
            "PS4='$(touch x)'; set -x; :",
            &["(unparsed) PS4 touch x set -x"],
        ),
        (
            "BASH_CMDS[ls]=/usr/bin/touch; ls x",
            // the program's file held in a variable, then the line's words
            &[
                "/usr/bin/touch",
                "(unparsed) BASH_CMDS[ls] /usr/bin/touch ls x",
            ],
        ),
        // `t[o]uch x` at the start of a statement reads as an array element to the grammar
        (": > touch; t[o]uch x", &["(unparsed) touch t[o]uch x"]),
        // a script the line runs
        (
            "printf 'touch x' > f; bash f",
            &["(unparsed) printf touch x f bash f"],
        ),
        // uncertain only for what stays local: a variable set for a command, a word that
        // may be options; a file sourced
        ("FOO=1 cargo test; echo 'no curl'", &[]),
        ("for d in src; do find $d -name '*curl*'; done", &[]),
        (". .venv/bin/activate; echo curl", &[]),
        // a `-v` test on a subscript, which bash evaluates
        (
            "[ -v 'a[$(touch x)]' ]",
            &["(unparsed) [ -v a[ touch x ] ]"],
        ),
        // read with certainty: nothing more
        ("c=touch; echo $c", &[]),
        ("echo '$(touch x)'", &[]),
        ("echo 'touch x'", &[]),
    ];
    for (src, want) in table {
        // each kept as said, then the words holding a split character whole
        let got = possible(src);
        assert!(
            got.len() == want.len() && got.iter().zip(*want).all(|(g, w)| g.starts_with(w)),
            "{src}: {got:?}"
        );
    }
    // a glob the grammar breaks is kept whole too
    let a = analyze("shopt -s extglob\n/usr/bin/@(tou)ch x");
    assert!(
        a.possible
            .iter()
            .any(|c| c.argv.iter().any(|w| w == "/usr/bin/@(tou)ch")),
        "{:?}",
        a.possible
    );
    // nested deeper than the grammar is read
    let deep = format!("{}touch x{}", "(".repeat(600), ")".repeat(600));
    let a = analyze(&deep);
    assert!(!a.certain);
    assert_eq!(
        a.possible.last().map(|c| c.argv[..3].to_vec()),
        Some(vec!["(unparsed)".to_string(), "touch".into(), "x".into()])
    );
}

/// The code an interpreter the grammar knows runs is kept as words (split at whatever cannot
/// be part of a name, path or option), so a command it spells out in a string is read by the
/// rules that restrict (with the line's words: such a line runs code it cannot read).
#[test]
fn an_interpreters_code_keeps_its_words() {
    let table: &[(&str, &[&str])] = &[
        (
            "python3 -c 'import os; os.system(\"touch x\")'",
            &["(code) import os os.system touch x"],
        ),
        (
            "python3 -c \"subprocess.run(['touch', 'x'])\"",
            &["(code) subprocess.run touch x"],
        ),
        (
            "awk 'BEGIN{system(\"touch x\")}'",
            &["(code) BEGIN system touch x"],
        ),
        ("perl -e 'system q(touch x)'", &["(code) system q touch x"]),
        // a subscript bash evaluates as arithmetic, given to a builtin that names variables
        ("declare 'a[$(touch x)]=1'", &["(code) a touch x 1"]),
        ("unset 'a[`touch x`]'", &["(code) a touch x"]),
        // a module or a script and its arguments are not inline code
        ("python3 x.py touch", &[]),
        ("python3 -m pytest -k curl tests/curl", &[]),
        ("cat f", &[]),
    ];
    for (src, want) in table {
        let code: Vec<String> = possible(src)
            .into_iter()
            .filter(|l| !l.starts_with("(unparsed) "))
            .collect();
        assert_eq!(code, *want, "{src}");
    }
}

/// Backquotes inside backquotes (escaped) are a command substitution bash runs: read as bash
/// reads them; a program's path given to cp, ln, ... or opened for reading is read as a
/// command of its own.
#[test]
fn nested_backquotes_and_copies_of_programs_are_read() {
    assert!(lines("echo `echo \\`touch x\\``").contains(&"touch x".to_string()));
    assert!(lines("x=`echo \\`touch x\\``").contains(&"touch x".to_string()));
    assert_eq!(unescape_backquoted("a \\` \\$ \\\\ \\n"), "a ` $ \\ \\n");
    for (src, path) in [
        ("ln -s /usr/bin/touch t", "/usr/bin/touch"),
        ("cp -p ../bin/touch t", "../bin/touch"),
        ("exec 3</usr/bin/touch", "/usr/bin/touch"),
    ] {
        assert!(
            possible(src).contains(&path.to_string()),
            "{src}: {:?}",
            possible(src)
        );
    }
    assert!(possible("cp a.txt b.txt").is_empty());
    // braces past the bound become a glob
    assert_eq!(brace_glob("tou{c,c}{h,h}x"), "tou**x");
    assert_eq!(brace_glob("a{b,{c,d}}e"), "a*e");
}

/// `$(...)` in a `${...}` pattern, which the grammar reads as text, is read as a command of
/// the line; C escapes in a line's text are decoded for its kept words.
#[test]
fn substitutions_in_expansion_patterns_and_escaped_names_are_read() {
    for src in [
        "echo ${PWD#$(touch x)}",
        "echo ${x^^$(touch x)}",
        "echo ${x%%$(touch x)}",
    ] {
        assert!(!certain(src), "{src}");
        assert!(
            lines(src).contains(&"touch x".to_string()),
            "{src}: {:?}",
            lines(src)
        );
    }
    assert!(certain("echo ${PWD#/}"));
    assert_eq!(
        dollar_substitutions("${a#$(b $(c))}${d%$((1))}"),
        ["b $(c)"]
    );
    let kept = possible("c=$'\\x74ouch'; $c x");
    assert!(kept[0].split(' ').any(|w| w == "touch"), "{kept:?}");
}

/// What the grammar reads as text and bash expands is read: single quotes inside a
/// double-quoted `${...}`, the body of a here-document whose delimiter is an expansion, an
/// expansion in a `${...}` pattern or a `[[ =~ ]]` pattern; plain expansions stay certain.
#[test]
fn text_bash_expands_is_read() {
    for src in ["echo \"${x:-'$(touch x)'}\"", "echo <<$x\n$(touch x)\n$x"] {
        assert!(!certain(src), "{src}");
        assert!(
            lines(src).contains(&"touch x".to_string()),
            "{src}: {:?}",
            lines(src)
        );
    }
    for src in ["y=1; echo ${PWD#${!y}}", "y=1; [[ x =~ ${!y} ]]"] {
        assert!(!certain(src), "{src}");
    }
    for src in [
        "echo \"${x:-'a b'}\"",
        "echo ${PWD#/}",
        "echo \"${HOME}/x\"",
        "echo ${x:-${y:-z}}",
        "cat <<'EOF'\n$(touch x)\nEOF",
    ] {
        assert!(certain(src), "{src}: {:?}", analyze(src).uncertain);
    }
}
