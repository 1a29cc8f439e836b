//! Programs with subcommands: their global options ([`Subcommand`]) and what their
//! subcommands run (`git bisect run`, `git rebase --exec`, `npm exec`, aliases and plugins).

use super::{listed, Global, Lexicon, Reading, Run, Subcommand};

/// The global options of one program (each a list of words separated by spaces).
pub(super) struct Globals {
    /// Options taking a value that change nothing of what runs (`git -C DIR`).
    pub value: &'static str,
    /// Options taking a value that name a program or code (`cargo --config`).
    pub code: &'static str,
    /// Flags that change nothing of what runs.
    pub flags: &'static str,
}

const CARGO: Globals = Globals {
    value: "-C --color -Z --explain",
    code: "",
    flags: "-v -vv --verbose -q --quiet --frozen --locked --offline --list -V --version -h --help",
};

/// cargo's own subcommands, and those rustup ships (`clippy`, `fmt`, `miri`); any other is an
/// external `cargo-NAME` program or an alias from a `.cargo/config.toml` the agent can write.
static CARGO_COMMANDS: Lexicon = Lexicon::new(
    "add b bench build c check clean clippy config d doc fetch fix fmt generate-lockfile \
     git-checkout help info init install locate-project login logout metadata miri new owner \
     package pkgid publish r read-manifest remove report rm run rustc rustdoc search t test \
     tree uninstall update vendor verify-project version yank",
);

/// Whether `cargo --config KEY=VALUE` sets a key that runs nothing.
fn cargo_key_is_harmless(kv: &str) -> bool {
    let key = kv.split('=').next().unwrap_or_default().trim();
    (key.starts_with("term.") || key.starts_with("profile.") && !key.contains("rustflags"))
        || matches!(key, "net.offline" | "build.jobs" | "build.incremental")
}

const NPM_VALUE: &str = "--prefix -w --workspace --loglevel --registry --cache --tag --otp";
/// npm options (anywhere on the line) whose value is a program, code, or a file of
/// settings that names them.
const NPM_CODE: &str =
    "--userconfig --globalconfig --script-shell --node-options --shell --editor --browser \
     --git --viewer --init-module -c --call";
const NPM: Globals = Globals {
    value: NPM_VALUE,
    code: NPM_CODE,
    flags: "-g --global -s --silent -q --quiet -d --verbose --json -ws --workspaces \
         --offline --no-color -v --version -h --help",
};

const PNPM: Globals = Globals {
    value: "-C --dir --filter -F --reporter --loglevel --workspace-concurrency",
    code: NPM_CODE,
    flags: "-r --recursive -w --workspace-root -s --silent --color --no-color \
         --aggregate-output --stream --parallel --if-present -v --version -h --help",
};

/// pnpm's own commands; any other runs the package script, or the program, of that name.
static PNPM_COMMANDS: Lexicon = Lexicon::new(
    "add i install update up upgrade remove rm uninstall un link ln unlink import rebuild rb \
     prune fetch install-test it patch patch-commit patch-remove audit list ls outdated why \
     licenses run run-script test t tst start exec dlx create init publish pack root bin \
     store config c get set env deploy doctor setup server recursive m multi approve-builds \
     ignored-builds self-update help dedupe list la ll",
);

const YARN: Globals = Globals {
    value: "--cwd",
    code: NPM_CODE,
    flags: "-s --silent --verbose --offline --frozen-lockfile --no-color -v --version -h --help",
};

/// yarn's own commands; any other runs the package script, or the program, of that name.
static YARN_COMMANDS: Lexicon = Lexicon::new(
    "add bin cache check config create dlx exec generate-lock-entry global help import info \
     init install licenses link list login logout node outdated owner pack plugin policies \
     publish rebuild remove run set tag team test start unlink unplug up upgrade \
     upgrade-interactive version versions why workspace workspaces explain npm patch \
     patch-commit search stage constraints dedupe",
);

const DOCKER: Globals = Globals {
    value: "-H --host -c --context -l --log-level --tlscacert --tlscert --tlskey \
         --connection --url --identity --root --runroot --storage-driver --storage-opt \
         --cgroup-manager --events-backend",
    code: "--config --runtime --conmon --network-cmd-path --hooks-dir --ssh",
    flags: "-D --debug --tls --tlsverify --remote -r -v --version -h --help",
};

const KUBECTL: Globals = Globals {
    value: "--context --cluster --user -n --namespace -s --server --token --as --as-group \
         --as-uid --certificate-authority --client-certificate --client-key --cache-dir \
         --request-timeout -v --v --vmodule --tls-server-name --username --password \
         --profile --profile-output --log-file",
    code: "--kubeconfig",
    flags: "--insecure-skip-tls-verify --match-server-version --warnings-as-errors \
         --disable-compression -h --help",
};

/// kubectl's own commands; any other is a `kubectl-NAME` plugin.
static KUBECTL_COMMANDS: Lexicon = Lexicon::new(
    "annotate api-resources api-versions apply attach auth autoscale certificate cluster-info \
     completion config cordon cp create debug delete describe diff drain edit events exec \
     explain expose get kustomize label logs options patch plugin port-forward proxy replace \
     rollout run scale set taint top uncordon version wait alpha help",
);

/// Package runners: the word after their options names the package whose program runs.
const PACKAGE_RUNNERS: [&str; 3] = ["npx", "bunx", "pnpx"];

/// `PROGRAM SUBCOMMAND COMMAND...` pairs that run the command after the subcommand (and its
/// options, which are not read here): the command must be named.
const RUN_SUBCOMMANDS: [(&str, &str); 14] = [
    ("uv", "run"),
    ("uv", "tool"),
    ("uvx", ""),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("conda", "run"),
    ("mamba", "run"),
    ("bundle", "exec"),
    ("mise", "exec"),
    ("mise", "x"),
    ("asdf", "exec"),
    ("direnv", "exec"),
];

/// Reads `words` when `name` has subcommands: `true` when it has.
pub(super) fn read(name: &str, words: &[&str], r: &mut Reading) -> bool {
    match name {
        "git" => super::git::git(words, r),
        "cargo" => cargo(words, r),
        "npm" => npm(words, r),
        "pnpm" => node_runner(name, words, r, &PNPM, &PNPM_COMMANDS),
        "yarn" => node_runner(name, words, r, &YARN, &YARN_COMMANDS),
        "docker" | "podman" => {
            globals(name, words, r, &DOCKER);
        }
        "kubectl" | "oc" => {
            let at = globals(name, words, r, &KUBECTL);
            code_options(name, words, "--kubeconfig", r);
            if at < words.len() && !KUBECTL_COMMANDS.has(words[at]) {
                r.code_at(at, format!("`{name} {}` is a plugin", words[at]));
            }
        }
        "rustup" => rustup(words, r),
        _ if PACKAGE_RUNNERS.contains(&name) => package(name, words, 1, r),
        _ => {
            let Some(&(_, sub)) = RUN_SUBCOMMANDS.iter().find(|(p, _)| *p == name) else {
                return false;
            };
            let at = if sub.is_empty() {
                Some(0)
            } else {
                words.iter().position(|w| {
                    RUN_SUBCOMMANDS
                        .iter()
                        .any(|(p, s)| *p == name && !s.is_empty() && w == s)
                })
            };
            if let Some(at) = at {
                r.code_at(
                    (at + 1).min(words.len()),
                    format!("`{name}` runs the command its arguments name"),
                );
            }
        }
    }
    true
}

/// Reads the global options before the subcommand into `r.subcommand`; returns the
/// subcommand's index (the number of words when there is none).
pub(super) fn globals(name: &str, words: &[&str], r: &mut Reading, spec: &Globals) -> usize {
    let mut sub = Subcommand::default();
    let mut i = 1;
    while i < words.len() {
        let w = words[i];
        if name == "cargo" && i == 1 && w.starts_with('+') {
            sub.globals.push(Global {
                start: i,
                len: 1,
                harmless: true,
                unknown: false,
            });
            i += 1;
            continue;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        if w == "--" {
            i += 1;
            break;
        }
        let (opt, attached) = split_option(w, spec);
        let global = |len, harmless, unknown| Global {
            start: i,
            len,
            harmless,
            unknown,
        };
        let len = if attached { 1 } else { 2 };
        let git_dir = (name == "git" && opt == "--git-dir").then(|| {
            if attached {
                w.split_once('=').map_or("", |(_, v)| v)
            } else {
                words.get(i + 1).copied().unwrap_or_default()
            }
        });
        // a directory named `.git` is one the sandbox holds the configuration of read-only
        let foreign =
            git_dir.is_some_and(|d| d.trim_end_matches('/').rsplit('/').next() != Some(".git"));
        if foreign {
            // another git directory's configuration, which the sandbox does not hold
            // read-only unless it is named `.git`, can make git run programs (a filter's
            // `clean`, `core.hooksPath`): as `-c` with a key not known to be harmless
            r.code_at(
                (i + len - 1).min(words.len() - 1),
                "`git --git-dir` reads the configuration of the git directory it names, which \
                 can make git run programs (filters, hooks)"
                    .to_string(),
            );
            sub.globals
                .push(global(len.min(words.len() - i), false, false));
            i += len;
        } else if listed(spec.value, opt) {
            sub.globals
                .push(global(len.min(words.len() - i), true, false));
            i += len;
        } else if listed(spec.code, opt) {
            r.code_at(
                (i + len - 1).min(words.len() - 1),
                format!("`{name} {opt}` names a program or code it runs"),
            );
            sub.globals
                .push(global(len.min(words.len() - i), false, false));
            i += len;
        } else if name == "git" && (opt == "-c" || (opt == "--exec-path" && attached)) {
            let value_at = (i + len - 1).min(words.len() - 1);
            let value = if !attached {
                words.get(i + 1).copied().unwrap_or_default()
            } else if w.starts_with("--") {
                w.split_once('=').map_or("", |(_, v)| v)
            } else {
                &w[2..]
            };
            let harmless = opt == "-c" && super::git::git_setting_is_harmless(value);
            if !harmless {
                r.code_at(
                    value_at,
                    format!("`git {opt} {value}` can make git run a program or another subcommand"),
                );
                sub.any = true;
                // a shell line it may run is a command of its own too, for the rules to decide
                if let Some(line) = (opt == "-c")
                    .then(|| super::git::setting_runs(value))
                    .flatten()
                {
                    r.runs.push(Run::Line(line));
                }
            }
            sub.globals
                .push(global(len.min(words.len() - i), harmless, false));
            i += len;
        } else if name == "cargo" && opt == "--config" {
            let value = if attached {
                w.split_once('=').map_or("", |(_, v)| v)
            } else {
                words.get(i + 1).copied().unwrap_or_default()
            };
            let harmless = cargo_key_is_harmless(value);
            sub.globals
                .push(global(len.min(words.len() - i), harmless, false));
            i += len;
        } else if listed(spec.flags, w) {
            sub.globals.push(global(1, true, false));
            i += 1;
        } else {
            sub.globals.push(global(1, false, !attached));
            i += 1;
        }
    }
    sub.at = i.min(words.len());
    let at = sub.at;
    r.subcommand = Some(sub);
    at
}

/// The option name of `w` and whether its value is attached (`--git-dir=x`, `-C.`, `-Zflag`).
fn split_option<'w>(w: &'w str, spec: &Globals) -> (&'w str, bool) {
    if w.starts_with("--") {
        return match w.split_once('=') {
            Some((o, _)) => (o, true),
            None => (w, false),
        };
    }
    if w.len() > 2 {
        let short = &w[..2];
        if listed(spec.value, short) || listed(spec.code, short) || short == "-c" {
            return (short, true);
        }
    }
    (w, false)
}

/// Records code for each of `opts` found anywhere before `--` (options a program accepts
/// after its subcommand too).
fn code_options(name: &str, words: &[&str], opts: &str, r: &mut Reading) {
    for (i, w) in words.iter().enumerate().skip(1) {
        if *w == "--" {
            break;
        }
        for opt in opts.split_ascii_whitespace() {
            if *w == opt || w.starts_with(opt) && w.as_bytes().get(opt.len()) == Some(&b'=') {
                let at = if *w == opt {
                    (i + 1).min(words.len() - 1)
                } else {
                    i
                };
                r.code_at(
                    at,
                    format!("`{name} {opt}` names a program or code it runs"),
                );
            }
        }
    }
}

fn cargo(words: &[&str], r: &mut Reading) {
    let at = globals("cargo", words, r, &CARGO);
    // --config is global: accepted after the subcommand too
    for (i, w) in words.iter().enumerate().skip(1) {
        if *w == "--" {
            break;
        }
        let value = if *w == "--config" {
            words.get(i + 1).map(|v| (i + 1, *v))
        } else {
            w.strip_prefix("--config=").map(|v| (i, v))
        };
        if let Some((value_at, v)) = value {
            if !cargo_key_is_harmless(v) {
                r.code_at(
                    value_at,
                    format!(
                        "`cargo --config {v}` can make cargo run a program or another subcommand"
                    ),
                );
                if let Some(s) = r.subcommand.as_mut() {
                    s.any = true;
                }
            }
        }
    }
    let Some(&sub) = words.get(at) else {
        return;
    };
    if !CARGO_COMMANDS.has(sub) {
        r.code_at(
            at,
            format!("`cargo {sub}` is an external cargo command or an alias"),
        );
        return;
    }
    if matches!(sub, "rustc" | "rustdoc") {
        if let Some(dd) = words[at..].iter().position(|w| *w == "--") {
            if at + dd + 1 < words.len() {
                r.code_at(
                    at + dd + 1,
                    format!(
                        "`cargo {sub} -- ...` passes options to the compiler, which can name a \
                         linker"
                    ),
                );
            }
        }
    }
}

fn npm(words: &[&str], r: &mut Reading) {
    let at = globals("npm", words, r, &NPM);
    code_options("npm", words, NPM_CODE, r);
    let Some(&sub) = words.get(at) else {
        return;
    };
    match sub {
        "exec" | "x" => package("npm exec", words, at + 1, r),
        "explore" | "edit" => r.code_at(at, format!("`npm {sub}` runs a shell or an editor")),
        "config" if words.get(at + 1) == Some(&"edit") => {
            r.code_at(at + 1, "`npm config edit` runs an editor")
        }
        _ => {}
    }
}

/// pnpm and yarn: `exec` runs the command after it; `dlx` a package; any command of their
/// own that is not known runs a package script or a program of that name.
fn node_runner(name: &str, words: &[&str], r: &mut Reading, spec: &Globals, known: &Lexicon) {
    let at = globals(name, words, r, spec);
    code_options(name, words, NPM_CODE, r);
    let Some(&sub) = words.get(at) else {
        return;
    };
    match sub {
        "exec" => {
            let mut start = at + 1;
            while words.get(start).is_some_and(|w| w.starts_with('-')) {
                start += 1;
                if words[start - 1] == "--" {
                    break;
                }
            }
            if start < words.len() {
                r.runs.push(Run::Words {
                    start,
                    end: words.len(),
                    open: false,
                });
            }
        }
        "dlx" => package(&format!("{name} dlx"), words, at + 1, r),
        "node" => r.code_at(
            (at + 1).min(words.len()),
            format!("`{name} node` runs the code its arguments name"),
        ),
        "workspace" | "workspaces" | "recursive" | "m" | "multi" => r.code_at(
            at,
            format!("`{name} {sub}` runs commands in other packages"),
        ),
        _ if !known.has(sub) => r.code_at(
            at,
            format!("`{name} {sub}` runs the package script or the program named `{sub}`"),
        ),
        _ => {}
    }
}

/// A package runner: the first word from `from` that is not an option names the package.
fn package(what: &str, words: &[&str], from: usize, r: &mut Reading) {
    let mut i = from;
    while i < words.len() {
        let w = words[i];
        if matches!(w, "-c" | "--call") || w.starts_with("--call=") {
            r.code_at(
                (i + 1).min(words.len() - 1),
                format!("`{what} {w}` runs a shell line"),
            );
            return;
        }
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') {
            break;
        }
        i += if matches!(w, "-p" | "--package") {
            2
        } else {
            1
        };
    }
    if i < words.len() || what.contains(' ') {
        r.code_at(
            i.min(words.len()),
            format!("`{what}` runs the program of the package it names"),
        );
    }
}

/// `rustup run TOOLCHAIN COMMAND...` runs the command; `rustup toolchain link` adds a
/// toolchain made of any programs.
fn rustup(words: &[&str], r: &mut Reading) {
    let Some(sub) = words
        .iter()
        .skip(1)
        .position(|w| !w.starts_with('-'))
        .map(|p| p + 1)
    else {
        return;
    };
    match words[sub] {
        "run" if sub + 2 < words.len() => r.runs.push(Run::Words {
            start: sub + 2,
            end: words.len(),
            open: false,
        }),
        "toolchain" if words.get(sub + 1) == Some(&"link") => r.code_at(
            sub + 1,
            "`rustup toolchain link` makes a toolchain of any programs",
        ),
        _ => {}
    }
}
