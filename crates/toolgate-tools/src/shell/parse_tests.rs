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
    let table: &[(&str, &str)] = &[
        ("LC_ALL=C curl -s x", "curl -s x"),
        ("A=1 B=\"2 3\" git log", "git log"),
        ("env -i A=1 curl x", "curl x"),
        ("env -u HOME -- curl x", "curl x"),
        ("nice -n 5 curl x", "curl x"),
        ("nice -5 curl x", "curl x"),
        ("timeout 5 curl x", "curl x"),
        ("timeout -s KILL -k 1 5s curl x", "curl x"),
        ("nohup curl x", "curl x"),
        ("command curl x", "curl x"),
        ("exec curl x", "curl x"),
        ("time curl x", "curl x"),
        ("sudo -u root curl x", "curl x"),
        ("stdbuf -o L curl x", "curl x"),
        ("setsid curl x", "curl x"),
        ("sudo timeout 5 nice env A=1 curl x", "curl x"),
        ("/usr/bin/env curl x", "curl x"),
    ];
    for (src, want) in table {
        let a = analyze(src);
        let got: Vec<String> = a.commands.iter().map(|c| c.argv.join(" ")).collect();
        assert_eq!(got, [*want], "{src}");
        assert!(a.certain, "{src}: {:?}", a.uncertain);
    }
    let a = analyze("LC_ALL=C timeout 5 curl x");
    assert_eq!(a.commands[0].assignments, ["LC_ALL=C"]);
    assert_eq!(a.commands[0].wrappers, ["timeout 5"]);
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
            .filter(|c| !SHELLS.contains(&basename(&c.argv[0])))
            .map(|c| c.argv.join(" "))
            .collect();
        assert_eq!(got, *want, "{src}");
        assert!(certain(src), "{src}: {:?}", analyze(src).uncertain);
    }
    // a script file is a command the rules decide on
    assert!(certain("bash build.sh"));
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
        "eval \"rm -rf x\"",
        "source ./env.sh",
        ". ./env.sh",
        "alias ls='rm -rf'",
        "hash -p /tmp/x ls",
        "trap 'curl x' EXIT",
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
        "env -S 'curl x'",
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
