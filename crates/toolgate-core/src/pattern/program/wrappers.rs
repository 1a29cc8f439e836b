//! Wrappers: programs that run the command after their own options (`timeout 5 CMD`), and
//! those that run a command line given to an option (`su -c LINE`, `flock F -c LINE`).

use super::{Reading, Run};

/// How one wrapper's arguments read.
struct Spec {
    /// Options that take the next word as their value (`-n 5`).
    with_value: &'static [&'static str],
    /// Positional words between the options and the command (`timeout`'s duration).
    positional: usize,
    /// Options that mean there is no command to run (`command -v`, `ionice -p`).
    no_command: &'static [&'static str],
    /// Options whose value is a command line (`flock -c`, `su -c`).
    line: &'static [&'static str],
    /// Options that make it run something that cannot be read (`env -S`, `sudo -s`).
    opaque: &'static [&'static str],
    /// Whether, without a command, it runs an interactive shell (`chroot DIR`, `su`).
    bare_shell: bool,
}

const NONE: &[&str] = &[];

fn spec(name: &str) -> Option<Spec> {
    let s = |with_value, positional, no_command, line, opaque, bare_shell| Spec {
        with_value,
        positional,
        no_command,
        line,
        opaque,
        bare_shell,
    };
    Some(match name {
        // `-S STRING` splits STRING into the command and its arguments (with quotes and
        // escapes of its own, and `${VAR}`): read as a shell line for the rules that restrict,
        // and code no rule grants
        "env" => s(
            &["-u", "--unset", "-C", "--chdir"],
            0,
            NONE,
            &["-S", "--split-string"],
            &["-S", "--split-string"],
            false,
        ),
        "nice" => s(&["-n", "--adjustment"], 0, NONE, NONE, NONE, false),
        "timeout" => s(
            &["-s", "--signal", "-k", "--kill-after"],
            1,
            NONE,
            NONE,
            NONE,
            false,
        ),
        "nohup" | "setsid" | "builtin" | "unbuffer" => s(NONE, 0, NONE, NONE, NONE, false),
        "time" => s(
            &["-f", "--format", "-o", "--output"],
            0,
            NONE,
            NONE,
            NONE,
            false,
        ),
        "command" => s(NONE, 0, &["-v", "-V"], NONE, NONE, false),
        "sudo" => s(
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-U",
                "--other-user",
                "-C",
                "--close-from",
                "-D",
                "--chdir",
                "-h",
                "--host",
                "-p",
                "--prompt",
                "-r",
                "--role",
                "-t",
                "--type",
                "-T",
                "--command-timeout",
                "-R",
                "--chroot",
            ],
            0,
            &[
                "-l",
                "--list",
                "-v",
                "--validate",
                "-k",
                "-K",
                "-V",
                "--version",
            ],
            NONE,
            &["-s", "--shell", "-i", "--login", "-e", "--edit"],
            false,
        ),
        "doas" => s(&["-u", "-C"], 0, NONE, NONE, &["-s"], false),
        "xargs" => s(
            &[
                "-I",
                "-L",
                "-n",
                "-P",
                "-d",
                "-E",
                "-s",
                "-a",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-lines",
                "--max-chars",
                "--replace",
                "--eof",
                "--process-slot-var",
            ],
            0,
            NONE,
            NONE,
            NONE,
            false,
        ),
        "stdbuf" => s(&["-i", "-o", "-e"], 0, NONE, NONE, NONE, false),
        "ionice" => s(
            &["-c", "--class", "-n", "--classdata"],
            0,
            &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
            NONE,
            NONE,
            false,
        ),
        "taskset" => s(NONE, 1, &["-p", "--pid"], NONE, NONE, false),
        "chrt" => s(
            &["-T", "-P", "-D"],
            1,
            &["-p", "--pid", "-m", "--max"],
            NONE,
            NONE,
            false,
        ),
        "flock" => s(
            &["-w", "--timeout", "-E", "--conflict-exit-code"],
            1,
            NONE,
            &["-c", "--command"],
            NONE,
            false,
        ),
        "chroot" => s(&["--userspec", "--groups"], 1, NONE, NONE, NONE, true),
        "script" => s(
            &[
                "-E",
                "--echo",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
                "-T",
                "--log-timing",
                "-m",
                "--logging-format",
                "-o",
                "--output-limit",
            ],
            0,
            NONE,
            &["-c", "--command"],
            NONE,
            true,
        ),
        _ => return None,
    })
}

/// Reads `words` when `name` is a wrapper: `true` when it is one (the reading is in `r`).
pub(super) fn read(name: &str, words: &[&str], r: &mut Reading) -> bool {
    match name {
        "busybox" | "toybox" => {
            if words.get(1).is_some_and(|w| !w.starts_with('-')) {
                r.wraps = Some(1);
            }
            return true;
        }
        "watch" => {
            watch(words, r);
            return true;
        }
        "su" | "runuser" => {
            su(name, words, r);
            return true;
        }
        "sg" => {
            sg(words, r);
            return true;
        }
        "exec" => {
            exec(words, r);
            return true;
        }
        _ => {}
    }
    let Some(spec) = spec(name) else {
        return false;
    };
    let mut i = 1;
    let mut positional = spec.positional;
    let mut line = None;
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            i += 1;
            break;
        }
        if name == "env" && w == "-" {
            i += 1;
            continue;
        }
        let option = w.len() > 1 && w.starts_with('-');
        if !option {
            if name == "env" && w.contains('=') {
                i += 1;
                continue;
            }
            if positional > 0 {
                positional -= 1;
                i += 1;
                continue;
            }
            break;
        }
        if !w.starts_with("--") && w.len() > 2 {
            // a cluster of one-letter options, the last of which may hold its value:
            // `-vS'CMD'`, `-qc CMD`, `-n5`, `-I{}` read letter by letter, as getopt does
            match cluster(name, &spec, words, i, r) {
                Cluster::NoCommand => return true,
                Cluster::Line(v, used) => {
                    line = Some(v);
                    i += used;
                }
                Cluster::Next(used) => i += used,
            }
            continue;
        }
        let (flag, attached) = match w.split_once('=') {
            Some((f, _)) if w.starts_with("--") => (f, true),
            _ => (w, false),
        };
        if spec.no_command.contains(&flag) {
            return true;
        }
        if spec.opaque.contains(&flag) {
            r.code_at(
                i,
                format!("`{name} {flag}` runs something the rules cannot read"),
            );
        }
        if spec.line.contains(&flag) {
            let value = if attached {
                w.split_once('=').map(|(_, v)| v)
            } else {
                words.get(i + 1).copied()
            };
            match value {
                Some(v) => line = Some(v.to_string()),
                None => r.code_at(i, format!("`{name} {flag}` without its command")),
            }
            i += if attached { 1 } else { 2 };
            continue;
        }
        i += if !attached && spec.with_value.contains(&flag) {
            2
        } else {
            1
        };
    }
    if let Some(line) = line {
        r.runs.push(Run::Line(line));
        return true;
    }
    if i < words.len() && positional == 0 {
        r.wraps = Some(i);
    } else if spec.bare_shell {
        r.code_at(
            words.len(),
            format!("`{name}` without a command runs an interactive shell"),
        );
    }
    true
}

/// bash's `exec [-cl] [-a NAME] COMMAND`: wraps the command; with `-a NAME` the program runs
/// with NAME as its `argv[0]`, which picks what a program of many names does (git runs its
/// builtin `git-push` for `exec -a git-push git ...`, busybox the applet): read as code no
/// rule grants, and the line `NAME ARGS...` is read too, for the rules that restrict (`deny
/// command:git push` holds). `-c` (the environment cleared) is the shell's to judge.
fn exec(words: &[&str], r: &mut Reading) {
    let mut i = 1;
    let mut argv0 = None;
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            i += 1;
            break;
        }
        if w.len() < 2 || !w.starts_with('-') {
            break;
        }
        let mut used = 1;
        if let Some(k) = w[1..].find('a') {
            let rest = &w[k + 2..];
            if rest.is_empty() {
                argv0 = words.get(i + 1).map(|a| (i + 1, *a));
                used = 2;
            } else {
                argv0 = Some((i, rest));
            }
        }
        i += used;
    }
    if i >= words.len() {
        return;
    }
    let Some((at, name)) = argv0 else {
        r.wraps = Some(i);
        return;
    };
    // both readings: the command as written, and as the name makes it run
    r.runs.push(Run::Words {
        start: i,
        end: words.len(),
        open: false,
    });
    {
        r.code_at(
            at,
            "`exec -a NAME` runs the program under the name NAME, which picks what a program of \
             many names does",
        );
        // git runs its builtin `git-X` as `git X` would
        let program: Vec<&str> = match super::git_builtin(name) {
            Some(sub) => vec!["git", sub],
            None => vec![name],
        };
        let line: Vec<String> = program
            .into_iter()
            .chain(words[i + 1..].iter().copied())
            .map(single_quoted)
            .collect();
        r.runs.push(Run::Line(line.join(" ")));
    }
}

/// `word` in single quotes, as the shell reads it back.
fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// What a cluster of one-letter options (`-abc`, or `-aVALUE`) of a wrapper means.
enum Cluster {
    /// One of its options means there is no command to run.
    NoCommand,
    /// Its last option names a command line (the line, and the words used).
    Line(String, usize),
    /// Plain options: the number of words used (2 when the last takes the next word).
    Next(usize),
}

/// Reads the cluster `words[i]` of wrapper `name` letter by letter: an option that takes a
/// value takes the rest of the word, or the next word when it is last.
fn cluster(name: &str, spec: &Spec, words: &[&str], i: usize, r: &mut Reading) -> Cluster {
    let w = words[i];
    for (k, c) in w.char_indices().skip(1) {
        let flag = format!("-{c}");
        let rest = &w[k + c.len_utf8()..];
        if spec.no_command.contains(&flag.as_str()) {
            return Cluster::NoCommand;
        }
        if spec.opaque.contains(&flag.as_str()) {
            r.code_at(
                i,
                format!("`{name} {flag}` runs something the rules cannot read"),
            );
        }
        let takes_line = spec.line.contains(&flag.as_str());
        if takes_line || spec.with_value.contains(&flag.as_str()) {
            let (value, used) = if rest.is_empty() {
                (words.get(i + 1).copied(), 2)
            } else {
                (Some(rest), 1)
            };
            if !takes_line {
                return Cluster::Next(used);
            }
            return match value {
                Some(v) => Cluster::Line(v.to_string(), used),
                None => {
                    r.code_at(i, format!("`{name} {flag}` without its command"));
                    Cluster::Next(1)
                }
            };
        }
    }
    Cluster::Next(1)
}

/// `watch [options] COMMAND...`: the words joined are a shell line; `-x` runs them as words.
fn watch(words: &[&str], r: &mut Reading) {
    let mut i = 1;
    let mut exec = false;
    while i < words.len() && words[i].starts_with('-') && words[i].len() > 1 {
        let w = words[i];
        if w == "--" {
            i += 1;
            break;
        }
        if w == "-x" || w == "--exec" {
            exec = true;
        }
        i += if matches!(w, "-n" | "--interval" | "-q" | "--equexit") {
            2
        } else {
            1
        };
    }
    if i >= words.len() {
        return;
    }
    if exec {
        r.wraps = Some(i);
    } else {
        r.runs.push(Run::Line(words[i..].join(" ")));
    }
}

/// `sg [-] [GROUP [-c] COMMAND]`: COMMAND is a line `/bin/sh -c` runs; without one, sg runs
/// the user's shell, which reads what cannot be seen here.
fn sg(words: &[&str], r: &mut Reading) {
    let mut i = 1;
    if words.get(i) == Some(&"-") {
        i += 1;
    }
    // the group
    i += 1;
    if words.get(i) == Some(&"-c") {
        i += 1;
    }
    match words.get(i) {
        Some(line) => r.runs.push(Run::Line((*line).to_string())),
        None => r.code_at(
            words.len(),
            "`sg` without a command runs a shell whose commands cannot be read here",
        ),
    }
}

/// `su [options] [user [args]]`, `runuser -u user [--] command`: `-c LINE` (anywhere: su
/// permutes its arguments) is a shell line; otherwise su runs the user's shell, which reads
/// what cannot be seen here.
fn su(name: &str, words: &[&str], r: &mut Reading) {
    for (i, w) in words.iter().enumerate().skip(1) {
        if *w == "--" {
            break;
        }
        if let Some(v) = w.strip_prefix("--command=") {
            r.runs.push(Run::Line(v.to_string()));
            return;
        }
        if matches!(*w, "-c" | "--command" | "-C" | "--session-command") {
            match words.get(i + 1) {
                Some(v) => r.runs.push(Run::Line((*v).to_string())),
                None => r.code_at(i, format!("`{name} {w}` without its command")),
            }
            return;
        }
    }
    // runuser -u USER [--] COMMAND...
    if name == "runuser" {
        if let Some(u) = words.iter().position(|w| *w == "-u" || *w == "--user") {
            let mut i = u + 2;
            if words.get(i) == Some(&"--") {
                i += 1;
            }
            if i < words.len() {
                r.wraps = Some(i);
                return;
            }
        }
    }
    r.code_at(
        1.min(words.len()),
        format!("`{name}` runs a shell whose commands cannot be read here"),
    );
}
