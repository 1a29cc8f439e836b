//! The programs the grammar knows, besides wrappers, sed and awk, and programs with
//! subcommands: shells, interpreters, programs with options that name a program, programs
//! that run what their arguments name, editors that read commands from their input, and
//! programs that run nothing else.

use super::{listed, Lexicon, Reading, Run};

/// Shells whose `-c` line is read with bash's grammar (POSIX shells).
const POSIX_SHELLS: &str = "bash sh dash rbash ash posh";
/// Shells whose language differs (zsh's glob qualifiers run code, fish and csh have their
/// own syntax): their `-c` line is code that cannot be read.
const OTHER_SHELLS: &str = "zsh ksh ksh93 mksh yash fish csh tcsh elvish nu";

/// Interpreters: every argument but an information flag picks the code they run.
static INTERPRETERS: Lexicon = Lexicon::new(
    "perl ruby irb node nodejs deno bun php lua luajit Rscript R julia tclsh wish guile \
     racket osascript pwsh powershell groovy jshell erl escript elixir iex ghci runghc \
     runhaskell scala java dc expect xonsh ipython jupyter gdb lldb sqlite3",
);

/// Programs that run the program or code their arguments name, in ways not read here: a
/// rule must name their arguments up to the program (`allow command:strace -f ls`).
static RUNNERS: Lexicon = Lexicon::new(
    "strace ltrace valgrind perf tmux screen parallel systemd-run xvfb-run dbus-run-session \
     ssh-agent nsenter unshare setpriv capsh firejail bwrap entr xdg-open open \
     sensible-browser x-www-browser run-mailcap crontab pkexec sudoedit let",
);

/// Whether `name` is one of [`POSIX_SHELLS`] or [`OTHER_SHELLS`].
pub(crate) fn shell_name(name: &str) -> bool {
    listed(POSIX_SHELLS, name) || listed(OTHER_SHELLS, name)
}

/// Whether `name` is one of [`RUNNERS`].
pub(crate) fn runner(name: &str) -> bool {
    RUNNERS.has(name)
}

/// Whether `name` is one of [`INTERACTIVE`].
pub(crate) fn interactive(name: &str) -> bool {
    INTERACTIVE.has(name)
}

/// Programs that read commands from their input (keystrokes included, when it is not a
/// terminal): no rule can name what they run.
static INTERACTIVE: Lexicon = Lexicon::new(
    "vim vi nvim view vimdiff ex gvim rvim rview evim gview nvi emacs nano pico ed at batch",
);

/// Programs that run nothing else, whatever their arguments. Not here, for what they run:
/// `curl` (`--engine PATH` loads a library, `-K` a configuration that may), `diff3` and
/// `sdiff` (`--diff-program`), `cmake-format` (a `.py` configuration is run as Python).
static INERT: Lexicon = Lexicon::new(
    ": [ basename base32 base64 bc cat cd chgrp chmod chown cksum clear cmp column comm cp \
     csplit cut date dd df diff dirname du echo egrep expand expr factor false \
     fgrep file fmt fold free getconf grep groups gunzip gzip bzip2 bunzip2 xz unxz zstd \
     unzstd lz4 zcat bzcat xzcat head hexdump hostname iconv id jq join kill link ln locale \
     logname ls lsblk lscpu md5sum mkdir mkfifo mktemp more mv nl nproc numfmt od paste \
     pathchk pgrep pidof pinky pr printenv printf ps ptx pwd read readlink realpath rev rm \
     rmdir seq sha1sum sha224sum sha256sum sha384sum sha512sum shasum shred shuf sleep stat \
     strings sum sync tac tail tee test touch tput tr tree true truncate tsort tty type umask \
     uname unexpand uniq unlink unzip uptime users wait wc which who whoami xxd yes zgrep \
     getopts mapfile readarray unset shift exit return break continue true jobs \
     ulimit shopt set pushd popd dirs caller times help history fc disown bg fg suspend \
     logout local declare typeset export readonly compgen complete compopt",
);

/// Whether `name` is a program that runs nothing else, whatever its arguments (`cat`, `echo`,
/// `wc`, `rm`, ...): words put in its arguments when the line runs cannot make it run a
/// command.
pub(crate) fn inert(name: &str) -> bool {
    INERT.has(name)
}

/// Programs no option of which writes a file it would not write otherwise, sets a shell
/// variable or runs anything: [`INERT`] without `curl` (`-o`), `dd` (`of=`), `tree` (`-o`),
/// `file` (`-C`), `iconv` (`-o`), `shuf` (`-o`), `date` (`-s`), `hostname`, the builtins that
/// set variables or run callbacks (`printf -v`, `read`, `mapfile -C`, `compgen -C`, `set`,
/// `shopt`, `declare`, ...) and the rest of the bookkeeping builtins.
static OPTIONS_HARMLESS: Lexicon = Lexicon::new(
    ": [ basename base32 base64 bc cat cd chgrp chmod chown cksum clear cmp column comm cp \
     csplit cut df diff dirname du echo egrep expand expr factor false fgrep fmt fold \
     free getconf grep groups gunzip gzip bzip2 bunzip2 xz unxz zstd unzstd lz4 zcat bzcat \
     xzcat head hexdump id jq join kill link ln locale logname ls lsblk lscpu md5sum mkdir \
     mkfifo mktemp more mv nl nproc numfmt od paste pathchk pgrep pidof pinky pr printenv ps \
     ptx pwd readlink realpath rev rm rmdir seq sha1sum sha224sum sha256sum sha384sum \
     sha512sum shasum shred sleep stat strings sum sync tac tail tee test touch tput tr true \
     truncate tsort tty uname unexpand uniq unlink unzip uptime users wc which who whoami xxd \
     yes zgrep",
);

/// See [`super::subcommand_options_harmless`].
pub(crate) fn subcommand_options_harmless(name: &str, sub: &str) -> bool {
    match name {
        "git" => listed(
            "add rm mv status checkout switch restore blame ls-files",
            sub,
        ),
        _ => false,
    }
}

/// Whether no option of `name` changes what it may do (see [`OPTIONS_HARMLESS`]).
pub(crate) fn options_harmless(name: &str) -> bool {
    OPTIONS_HARMLESS.has(name)
}

/// Whether `option` of `name` takes the next word as a value that neither names a file the
/// program would not write otherwise nor code (see [`super::takes_value`]).
pub(crate) fn takes_value(name: &str, option: &str) -> bool {
    let options = match name {
        "git" => {
            "-m --message -F --file -C --author --date --grep --since --until --after --before \
             -n --max-count --skip --format --pretty -b -B --branch -S -G -X \
             --strategy-option -s --strategy --onto -o --origin --depth --shallow-since -e \
             --reason --git-dir --work-tree --namespace"
        }
        "find" | "gfind" => {
            "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname \
             -type -xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer \
             -user -group -uid -gid -perm -maxdepth -mindepth -links -inum -samefile -used \
             -fstype -regextype -printf"
        }
        "sort" => "-k --key -t --field-separator -S --buffer-size --parallel --batch-size",
        "rg" | "ripgrep" => {
            "-e --regexp -g --glob --iglob -t --type -T --type-not -f --file -m --max-count \
             -A --after-context -B --before-context -C --context -j --threads -M \
             --max-columns -d --max-depth"
        }
        "tar" | "gtar" | "bsdtar" => {
            "-f --file -C --directory -T --files-from -X --exclude-from --exclude -b \
             --blocking-factor -N --newer --owner --group --mode --mtime"
        }
        "rsync" => "--exclude --include --exclude-from --include-from --files-from --chmod",
        "curl" => {
            "-H --header -d --data --data-raw --data-binary --data-urlencode -X --request -u \
             --user -A --user-agent -e --referer -b --cookie -m --max-time --connect-timeout \
             --retry -F --form --url"
        }
        "sed" | "gsed" => "-l --line-length",
        "awk" | "gawk" | "mawk" => "-F --field-separator",
        "xargs" => "-I -i -n -L -d -P -s -E -a",
        "make" | "gmake" => "-C --directory -j --jobs",
        _ => return false,
    };
    listed(options, option)
}

/// Builtins whose arguments name variables: a name with a subscript holding an expansion
/// (`read 'a[$(id)]'`), or naming a variable whose text is evaluated (`read 'a[y]'`), makes
/// bash run it.
static NAMES_VARIABLES: Lexicon = Lexicon::new(
    "read printf unset test [ mapfile readarray getopts wait declare typeset local export \
     readonly",
);

/// Options whose value names a program or code, per program (`--opt VALUE`, `--opt=VALUE`,
/// and for one-letter options `-oVALUE`).
fn program_options(name: &str) -> &'static [&'static str] {
    match name {
        "tar" | "gtar" | "bsdtar" => &[
            "--to-command",
            "--use-compress-program",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
            "--rmt-command",
            "-I",
            "-F",
        ],
        "rsync" => &["-e", "--rsh", "--rsync-path"],
        "diff3" | "sdiff" => &["--diff-program"],
        "curl" => &["--engine", "-K", "--config"],
        "openssl" => &["-engine", "-provider-path", "-provider", "-keygen_engine"],
        "ssh-keygen" => &["-D"],
        "ssh-add" => &["-s", "-S", "-e"],
        "ssh" | "slogin" => &["-F"],
        "scp" | "sftp" => &["-F", "-S", "-D"],
        "less" => &["-k", "--lesskey-file", "--lesskey-src"],
        "man" => &["-P", "--pager", "-H", "--html", "-C", "--config-file"],
        "make" | "gmake" | "remake" | "bmake" | "pmake" => {
            &["--eval", "-E", "-f", "--file", "--makefile"]
        }
        "cmake" => &["-P", "-E", "-C"],
        "sort" => &["--compress-program"],
        "split" => &["--filter"],
        "rg" | "ripgrep" => &["--pre"],
        "zip" => &["-TT", "--unzip-command"],
        "install" => &["--strip-program"],
        "wget" => &["--use-askpass", "-e", "--execute"],
        "hg" => &["--config"],
        "go" => &[
            "-exec",
            "--exec",
            "-toolexec",
            "--toolexec",
            "-vettool",
            "--vettool",
        ],
        "rustc" | "rustdoc" => &[],
        _ if is_c_compiler(name) => &["-wrapper", "-B", "-specs", "--specs", "--ld-path"],
        _ => &[],
    }
}

/// Whether `name` is a C or C++ compiler driver (`cc`, `gcc-13`, `clang++`).
fn is_c_compiler(name: &str) -> bool {
    let base = name.split('-').next().unwrap_or(name);
    matches!(
        base,
        "cc" | "c++" | "gcc" | "g++" | "clang" | "clang++" | "cpp"
    )
}

/// Whether `name` is a Python (`python`, `python3`, `python3.12`, `pypy3`).
fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// Whether `name` is an interpreter (with version suffixes: `perl5.36`, `lua5.4`, `ruby3.2`).
fn is_interpreter(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    is_python(name) || INTERPRETERS.has(name) || INTERPRETERS.has(base)
}

/// Whether the grammar knows `name` as a program that runs other programs or code (shells,
/// interpreters, wrappers, runners): an unknown program given such a name as an argument
/// may run it.
pub(super) fn runs_others(name: &str) -> bool {
    listed(POSIX_SHELLS, name)
        || listed(OTHER_SHELLS, name)
        || is_interpreter(name)
        || RUNNERS.has(name)
        || INTERACTIVE.has(name)
        || matches!(
            name,
            "env"
                | "nice"
                | "timeout"
                | "nohup"
                | "setsid"
                | "exec"
                | "command"
                | "sudo"
                | "doas"
                | "xargs"
                | "stdbuf"
                | "ionice"
                | "taskset"
                | "chrt"
                | "flock"
                | "chroot"
                | "su"
                | "sg"
                | "runuser"
                | "script"
                | "watch"
                | "busybox"
                | "toybox"
                | "find"
                | "fd"
                | "fdfind"
                | "sed"
                | "awk"
                | "gawk"
                | "make"
                | "eval"
                | "source"
                | "."
        )
}

/// Reads `words` when `name` is a program of these tables: `true` when it is.
pub(super) fn read(name: &str, words: &[&str], r: &mut Reading) -> bool {
    if listed(POSIX_SHELLS, name) || listed(OTHER_SHELLS, name) {
        shell(name, words, r, listed(POSIX_SHELLS, name));
    } else if is_interpreter(name) {
        interpreter(name, words, r);
    } else if RUNNERS.has(name) {
        if words.len() > 1 || name == "let" {
            r.code_at(
                1,
                format!("`{name}` runs what its arguments name, in a way toolgate does not read"),
            );
        }
    } else if INTERACTIVE.has(name) {
        r.code_at(
            words.len(),
            format!("`{name}` reads commands from its input, which cannot be seen here"),
        );
    } else if builtin_runs(name, words, r) {
    } else if name == "find" {
        exec_regions(words, &["-exec", "-execdir", "-ok", "-okdir"], r);
        if words.contains(&"-delete") {
            // find removes what it finds as `-exec rm {} ;` would: read as that command, so
            // the rules about rm decide it (an allow rule for find does not cover it)
            r.runs.push(Run::Line("rm -- {}".to_string()));
        }
    } else if name == "fd" || name == "fdfind" {
        exec_regions(words, &["-x", "--exec", "-X", "--exec-batch"], r);
    } else if !program_options(name).is_empty()
        || name == "rustc"
        || name == "rustdoc"
        || is_c_compiler(name)
    {
        options(name, words, r);
    } else if !INERT.has(name) {
        return false;
    }
    if NAMES_VARIABLES.has(name) {
        // `declare -A m=([a]=1)`: an associative array's keys are strings, not arithmetic
        let associative = matches!(name, "declare" | "typeset" | "local")
            && words
                .iter()
                .skip(1)
                .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('A'));
        for (i, w) in words.iter().enumerate().skip(1) {
            if associative && !w.contains(['$', '`']) {
                continue;
            }
            // an indexed array's subscript is arithmetic: a name in it is a variable whose
            // text is evaluated in turn (`y='x[$(id)]'; unset 'a[y]'` runs id)
            let subscript = w
                .split_once('[')
                .map(|(_, rest)| rest.rsplit_once(']').map_or(rest, |(inside, _)| inside));
            if subscript.is_some_and(|s| {
                s.bytes()
                    .any(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'`'))
            }) {
                r.code_at(
                    i,
                    format!("`{name}` evaluates the subscript of `{w}`, which can run commands"),
                );
            }
        }
    }
    true
}

/// A shell: `-c LINE` is read again (POSIX shells) or is code; a script file, or commands
/// from standard input, are code that cannot be read.
fn shell(name: &str, words: &[&str], r: &mut Reading, posix: bool) {
    let mut i = 1;
    let mut line = false;
    // the shell's own settings that change what its line's commands get (`bash -kc`, `-ac`,
    // `-o allexport`, `-o keyword`): put before the line as the commands that set them, so
    // the line is read as it runs (after `set -k`, NAME=value arguments are assignments)
    let mut settings: Vec<String> = Vec::new();
    while i < words.len() {
        let a = words[i];
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        match a {
            "--version" | "--help" => return,
            "-o" | "+o" | "-O" | "+O" => {
                if let Some(option @ ("allexport" | "keyword")) = words.get(i + 1).copied() {
                    if a == "-o" {
                        settings.push(format!("set -o {option}"));
                    }
                }
                i += 2;
                continue;
            }
            "--rcfile" | "--init-file" => {
                r.code_at(i + 1, format!("`{name} {a}` runs a startup file"));
                i += 2;
                continue;
            }
            _ => {}
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) {
            if a.starts_with('-') && flags.contains('c') {
                line = true;
            }
            if a.starts_with('-') && flags.contains(['a', 'k']) {
                let set: String = flags.chars().filter(|c| matches!(c, 'a' | 'k')).collect();
                settings.push(format!("set -{set}"));
            }
            if a.starts_with('-') && (flags.contains('s') || flags.contains('i')) && !line {
                r.code_at(
                    words.len(),
                    format!("`{name}` reads the commands it runs from its input"),
                );
            }
            i += 1;
            continue;
        }
        break;
    }
    let with_settings = |string: &str| {
        if settings.is_empty() {
            string.to_string()
        } else {
            format!("{}\n{string}", settings.join("; "))
        }
    };
    match (words.get(i), line) {
        (Some(string), true) if posix => r.runs.push(Run::Line(with_settings(string))),
        (Some(string), true) => {
            // read with bash's grammar all the same, so a deny or ask rule holds for the
            // commands it names (`zsh -c 'touch x'`); the line stays code no rule grants
            r.runs.push(Run::Line(with_settings(string)));
            r.code_at(
                i,
                format!("`{name} -c` runs a line in a language toolgate does not read"),
            );
        }
        (None, true) => r.code_at(i, format!("`{name} -c` without its command line")),
        (Some(script), false) => {
            r.code_at(i, format!("`{name}` runs the script `{script}`"));
        }
        (None, false) => r.code_at(
            words.len(),
            format!("`{name}` reads the commands it runs from its input"),
        ),
    }
}

/// Bash builtins that look like bookkeeping but run commands: `jobs -x CMD` runs its words;
/// `compgen -C CMD` (and `-F FUNC`) runs a command, and its `-W WORDLIST` goes through every
/// expansion, command substitution included; `mapfile -C CALLBACK` (`readarray`) evaluates
/// the callback with each line read appended; `fc` (but `fc -l`) runs commands from the
/// history, through an editor it names. `true` when `name` is one of them (the reading is in
/// `r`), so that an allow rule for the bookkeeping does not cover what they run, and a deny
/// rule on `touch` holds for `jobs -x touch x`.
fn builtin_runs(name: &str, words: &[&str], r: &mut Reading) -> bool {
    // the option clusters before the first operand, with their indices
    let options = || {
        words
            .iter()
            .enumerate()
            .skip(1)
            .take_while(|(_, w)| w.len() > 1 && w.starts_with('-') && **w != "--")
    };
    // the word holding the value of the one-letter option `flag` in a cluster (glued or next)
    let value_of = |i: usize, w: &str, flag: char| -> Option<usize> {
        let at = w.find(flag)?;
        Some(if at + 1 < w.len() { i } else { i + 1 })
    };
    match name {
        "jobs" => {
            if options().any(|(_, w)| w.contains('x')) {
                let start = options().last().map_or(1, |(i, _)| i + 1);
                if start < words.len() {
                    r.runs.push(Run::Words {
                        start,
                        end: words.len(),
                        open: false,
                    });
                }
            }
        }
        "compgen" | "complete" => {
            let mut i = 1;
            while i < words.len() {
                let w = words[i];
                if w == "--" || !w.starts_with('-') || w.len() < 2 {
                    break;
                }
                // options with a value: the value may start with `-`, so skip it
                let mut skip = 0;
                for (flag, why) in [
                    ('C', "runs the command its `-C` option names"),
                    ('F', "calls the function its `-F` option names"),
                    (
                        'W',
                        "expands its `-W` word list, command substitutions included",
                    ),
                ] {
                    if let Some(at) = value_of(i, w, flag) {
                        if name == "compgen" {
                            r.code_at(at.min(words.len()), format!("`{name}` {why}"));
                        }
                        skip = at - i;
                    }
                }
                if ["A", "G", "P", "S", "X", "o"]
                    .iter()
                    .any(|f| w.ends_with(f))
                {
                    skip = 1;
                }
                i += 1 + skip;
            }
        }
        "mapfile" | "readarray" => {
            for (i, w) in options() {
                if let Some(at) = value_of(i, w, 'C') {
                    r.code_at(
                        at.min(words.len()),
                        format!("`{name} -C` evaluates its callback with each line read"),
                    );
                }
            }
        }
        "fc" => {
            if !options().any(|(_, w)| w.contains('l')) {
                r.code_at(
                    1.min(words.len()),
                    "`fc` runs commands from the history, through the editor it names",
                );
            }
        }
        _ => return false,
    }
    true
}

/// An interpreter: its first argument that is not an information flag picks the code.
fn interpreter(name: &str, words: &[&str], r: &mut Reading) {
    let info = |w: &str| {
        matches!(w, "--version" | "-V" | "--help" | "-h" | "-version")
            || (w == "-v" && matches!(name, "node" | "nodejs" | "perl" | "php" | "deno" | "bun"))
    };
    if matches!(name, "gdb" | "gdb-multiarch" | "lldb") {
        // a debugger's flags (`-batch`, `-q`, `-nx`) come before what it runs: the code is
        // the first command option's value (`-ex`, `-x`, lldb's `-o`) or the program
        let code = |w: &str| {
            matches!(
                w,
                "-ex"
                    | "--ex"
                    | "-iex"
                    | "--iex"
                    | "-x"
                    | "--x"
                    | "-ix"
                    | "--ix"
                    | "-command"
                    | "--command"
                    | "-eval-command"
                    | "--eval-command"
                    | "-init-eval-command"
                    | "--init-eval-command"
                    | "-o"
                    | "-O"
                    | "-s"
                    | "-S"
                    | "--one-line"
                    | "--source"
                    | "--one-line-before-file"
                    | "--source-before-file"
            ) || w.starts_with("--eval-command=")
                || w.starts_with("-eval-command=")
                || w.starts_with("--command=")
                || !w.starts_with('-')
        };
        let at = words
            .iter()
            .skip(1)
            .position(|w| code(w) && !info(w))
            .map_or(words.len(), |p| p + 1);
        r.code_at(
            at,
            format!("`{name}` runs the program or the commands its arguments name"),
        );
        return;
    }
    let at = words.iter().skip(1).position(|w| !info(w)).map_or(
        if words.len() > 1 {
            None
        } else {
            Some(words.len())
        },
        |p| Some(p + 1),
    );
    if let Some(at) = at {
        r.code_at(
            at,
            format!("`{name}` runs the script, module or code its arguments name"),
        );
    }
}

/// `find ... -exec CMD ... ;` (and the other `flags`): each command is read by the caller; a
/// region without its end runs to the last word.
fn exec_regions(words: &[&str], flags: &[&str], r: &mut Reading) {
    let mut i = 1;
    while i < words.len() {
        if flags.contains(&words[i]) {
            let start = i + 1;
            let end = words[start..]
                .iter()
                .position(|a| *a == ";" || *a == "+")
                .map_or(words.len(), |p| start + p);
            if start < end {
                r.runs.push(Run::Words {
                    start,
                    end,
                    open: true,
                });
            }
            i = end;
        }
        i += 1;
    }
}

/// A program with options that name a program (see [`program_options`]), plus each one's
/// own forms: tar's short clusters, rsync's `-e` in a cluster, ssh's `-o` keys, less's `+`
/// commands, make's `VAR=value`, the compilers' plugins and linkers.
fn options(name: &str, words: &[&str], r: &mut Reading) {
    let opts = program_options(name);
    let why = |w: &str| format!("`{name} {w}` names a program or code it runs");
    let last = words.len().saturating_sub(1);
    // the one-letter options that name code, for clusters (`-sf FILE`, `-qoProxyCommand=...`)
    // (zip's `-TT` is two letters)
    let shorts: Vec<&str> = opts
        .iter()
        .filter_map(|o| o.strip_prefix('-').filter(|l| matches!(l.len(), 1 | 2)))
        .filter(|l| l.bytes().all(|b| b.is_ascii_alphabetic()))
        .collect();
    for (i, w) in words.iter().enumerate().skip(1) {
        if *w == "--" {
            break;
        }
        // less takes its long options in any case (`--LESSKEY-SRC=x`)
        let lowered;
        let text: &str = if name == "less" && w.starts_with("--") {
            lowered = w.to_ascii_lowercase();
            &lowered
        } else {
            w
        };
        let w = &text;
        // getopt reads `-qsf FILE` as `-q -s -f FILE`: a code option later in a cluster takes
        // the rest of it, or the next word (the letters before it may take values of their
        // own, `-Cdirf`: then this reads too much, which asks rather than passes)
        if w.len() > 2
            && w.starts_with('-')
            && !w.starts_with("--")
            && !matches!(name, "tar" | "gtar" | "bsdtar")
        {
            let found = shorts
                .iter()
                .filter_map(|s| w[2..].find(s).map(|at| (2 + at, *s)))
                .min();
            if let Some((at, short)) = found {
                let value_at = if at + short.len() < w.len() {
                    i
                } else {
                    (i + 1).min(last)
                };
                r.code_at(value_at, why(&format!("-{short}")));
            }
        }
        for opt in opts {
            if w == opt {
                r.code_at((i + 1).min(last), why(opt));
            } else if w.starts_with(opt)
                && (w.as_bytes().get(opt.len()) == Some(&b'=')
                    || (!opt.starts_with("--") && !w.starts_with("--")))
            {
                // `-Icmd`, `-TTcmd`: a short option's value attached
                r.code_at(i, why(opt));
            } else if let Some(attached) = super::abbreviates(w, opt) {
                // `--use-compress-prog=x`: getopt takes a long option's prefix
                let at = if attached { i } else { (i + 1).min(last) };
                r.code_at(at, why(opt));
            }
        }
        let cluster = w.len() > 1 && w.starts_with('-') && !w.starts_with("--");
        match name {
            "tar" | "gtar" | "bsdtar" => {
                let old_style = i == 1 && !w.starts_with('-');
                if (cluster || old_style) && w.contains(['I', 'F']) && !opts.contains(w) {
                    r.code_at(i, why("-I/-F"));
                }
                let action = w.starts_with("--checkpoint-action")
                    || super::abbreviates(w, "--checkpoint-action").is_some()
                        && w.len() > "--checkpoint".len();
                if action && w.contains("exec") {
                    r.code_at(i, why("--checkpoint-action=exec"));
                }
            }
            "rsync" if cluster && w.contains('e') => {
                let at = if w.ends_with('e') {
                    (i + 1).min(last)
                } else {
                    i
                };
                r.code_at(at, why("-e"));
            }
            "ssh" | "slogin" | "scp" | "sftp" => {
                // `-o KEY=V`, `-oKEY=V`, and in a cluster `-qo KEY=V`, `-qoKEY=V`
                let value = if *w == "-o" || (cluster && w.ends_with('o')) {
                    words.get(i + 1).map(|v| (i + 1, *v))
                } else if cluster {
                    w[1..].find('o').map(|p| (i, &w[p + 2..]))
                } else {
                    None
                };
                if let Some((at, v)) = value {
                    // ssh skips blanks and `=` before the keyword and takes it out of quotes
                    let key = v
                        .trim_start_matches([' ', '\t', '='])
                        .replace('"', "")
                        .split(['=', ' ', '\t'])
                        .next()
                        .unwrap_or_default()
                        .to_ascii_lowercase();
                    if matches!(
                        key.as_str(),
                        "proxycommand"
                            | "localcommand"
                            | "permitlocalcommand"
                            | "knownhostscommand"
                            | "match"
                            | "include"
                            | "pkcs11provider"
                            | "securitykeyprovider"
                            | "xauthlocation"
                    ) {
                        r.code_at(at, why(&format!("-o {key}")));
                    }
                }
            }
            "less" if w.starts_with('+') => r.code_at(i, why("+COMMAND")),
            "make" | "gmake" | "remake" | "bmake" | "pmake" => {
                if let Some((var, _)) = w.split_once('=') {
                    if !w.starts_with('-')
                        && !var.is_empty()
                        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        r.code_at(i, why("VAR=value"));
                    }
                }
            }
            "rustc" | "rustdoc" => {
                let value = match *w {
                    "-C" | "--codegen" | "-Z" => words.get(i + 1).copied(),
                    _ => w
                        .strip_prefix("-C")
                        .or_else(|| w.strip_prefix("--codegen="))
                        .or_else(|| w.strip_prefix("-Z")),
                };
                if value.is_some_and(|v| {
                    ["linker", "link-arg", "llvm-args", "codegen-backend"]
                        .iter()
                        .any(|k| v.starts_with(k))
                }) {
                    r.code_at(i, why("-C linker/link-arg"));
                }
            }
            _ if is_c_compiler(name)
                && (w.starts_with("-fplugin")
                    || w.starts_with("-fpass-plugin")
                    || (w.starts_with("-fuse-ld=") && w.contains('/'))
                    || (*w == "-Xclang"
                        && words
                            .get(i + 1)
                            .is_some_and(|n| n.contains("load") || n.contains("plugin")))) =>
            {
                r.code_at(i, why("a plugin or linker"));
            }
            _ => {}
        }
    }
}
