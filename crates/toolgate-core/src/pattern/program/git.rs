//! git: its global options, its own subcommands (any other is an alias or an external
//! program), the keys `git -c` may set without running anything, and the subcommands that
//! run commands (`bisect run`, `rebase --exec`, `submodule foreach`) or programs.

use super::subcommands::{globals, Globals};
use super::{Lexicon, Reading, Run};

pub(super) const GIT: Globals = Globals {
    value: "-C --git-dir --work-tree --namespace --super-prefix --list-cmds --attr-source",
    code: "--config-env",
    flags: "-p --paginate -P --no-pager --no-replace-objects --no-lazy-fetch \
         --no-optional-locks --no-advice --bare --literal-pathspecs --glob-pathspecs \
         --noglob-pathspecs --icase-pathspecs --html-path --man-path --info-path \
         --exec-path --version -v --help -h",
};

/// git's own subcommands (`git --list-cmds=main`); any other is an alias or an external
/// `git-NAME` program.
static GIT_COMMANDS: Lexicon = Lexicon::new(
    "add am annotate apply archimport archive bisect blame branch bugreport bundle cat-file \
     check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry \
     cherry-pick citool clean clone column commit commit-graph commit-tree config \
     count-objects credential cvsexportcommit cvsimport cvsserver daemon describe diagnose \
     diff diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack \
     filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects gc \
     get-tar-commit-id grep gui hash-object help hook http-backend imap-send index-pack init \
     init-db instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit \
     maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool \
     mktag mktree multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs \
     patch-id prune prune-packed pull push quiltimport range-diff read-tree rebase \
     receive-pack reflog refs remote repack replace replay request-pull rerere reset restore \
     rev-list rev-parse revert rm send-email send-pack shell shortlog show show-branch \
     show-index show-ref sparse-checkout stage stash status stripspace submodule svn switch \
     symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info \
     upload-archive upload-pack var verify-commit verify-pack verify-tag version web--browse \
     whatchanged worktree write-tree lfs",
);

/// git subcommands that run programs from their configuration or arguments, whatever
/// their options.
static GIT_RUNNERS: Lexicon = Lexicon::new(
    "difftool mergetool filter-branch instaweb web--browse shell p4 svn cvsimport archimport \
     quiltimport gui",
);

/// Configuration keys (lower case) that `git -c` may set without running anything:
/// exact keys, and sections whose every key is harmless.
static GIT_HARMLESS_KEYS: Lexicon = Lexicon::new(
    "user.name user.email user.signingkey core.quotepath core.autocrlf core.safecrlf core.eol \
     core.abbrev core.filemode core.ignorecase core.precomposeunicode core.longpaths \
     core.whitespace init.defaultbranch diff.renames diff.renamelimit diff.noprefix \
     diff.mnemonicprefix diff.algorithm diff.colormoved diff.context diff.interhunkcontext \
     diff.relative diff.statgraphwidth pull.rebase pull.ff merge.ff merge.conflictstyle \
     fetch.prune rebase.autosquash rebase.autostash commit.gpgsign tag.gpgsign log.date \
     log.decorate log.follow status.short status.branch status.showuntrackedfiles column.ui \
     grep.linenumber protocol.version safe.directory gc.auto maintenance.auto \
     checkout.defaultremote push.default push.autosetupremote",
);
const GIT_HARMLESS_SECTIONS: [&str; 3] = ["color.", "advice.", "i18n."];

/// Whether `git -c KEY=...` sets a key that runs nothing (section and key compared without
/// case, as git does).
pub fn git_key_is_harmless(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    GIT_HARMLESS_KEYS.has(&key) || GIT_HARMLESS_SECTIONS.iter().any(|s| key.starts_with(s))
}

/// The settings (`key=value`, key in lower case) toolgate's shell sandbox pins in every
/// run's environment: `git -c` giving a key the very value the sandbox gives it changes
/// nothing (`git -c core.pager=cat log`). Kept equal to the sandbox's `GIT_CONFIG` by a test
/// in toolgate-tools.
pub const GIT_PINNED_SETTINGS: [(&str, &str); 9] = [
    ("core.hookspath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshcommand", "false"),
    ("credential.helper", ""),
    ("protocol.ext.allow", "never"),
    ("uploadpack.packobjectshook", ""),
    ("safe.barerepository", "explicit"),
];

/// Whether `git -c SETTING` (`key=value`) runs nothing: a harmless key
/// (`git_key_is_harmless`), or a pinned key given the sandbox's own value.
pub fn git_setting_is_harmless(setting: &str) -> bool {
    let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
    let lower = key.to_ascii_lowercase();
    git_key_is_harmless(key)
        || GIT_PINNED_SETTINGS
            .iter()
            .any(|(k, v)| *k == lower && *v == value)
}

/// The shell line a `git -c` setting (`key=value`) makes git run, when its value is one:
/// an alias starting with `!`, a filter's `clean`, `smudge` or `process`, a diff driver's
/// `textconv` or `command`, a merge driver, a diff or merge tool's `cmd`,
/// `sendemail.sendmailcmd` (git runs each with `sh -c`). Keys compared without case.
pub fn git_setting_shell_line(setting: &str) -> Option<&str> {
    let (key, value) = setting.split_once('=')?;
    let key = key.to_ascii_lowercase();
    let (section, name) = key.split_once('.')?;
    let last = name.rsplit('.').next().unwrap_or(name);
    let line = match (section, last) {
        ("alias", _) => value.strip_prefix('!')?,
        ("filter", "clean" | "smudge" | "process")
        | ("diff", "textconv" | "command")
        | ("merge", "driver")
        | ("difftool" | "mergetool", "cmd")
            if name.contains('.') =>
        {
            value
        }
        ("sendemail", "sendmailcmd") => value,
        _ => return None,
    };
    (!line.trim().is_empty()).then_some(line)
}

pub(super) fn git(words: &[&str], r: &mut Reading) {
    let at = globals("git", words, r, &GIT);
    let Some(&sub) = words.get(at) else {
        return;
    };
    if !GIT_COMMANDS.has(sub) {
        r.code_at(
            at,
            format!("`git {sub}` is an alias or an external git command"),
        );
        return;
    }
    if GIT_RUNNERS.has(sub) {
        r.code_at(
            at,
            format!("`git {sub}` runs programs from its configuration"),
        );
        return;
    }
    let rest = at + 1;
    match sub {
        "bisect" if words.get(rest) == Some(&"run") && rest + 1 < words.len() => {
            r.runs.push(Run::Words {
                start: rest + 1,
                end: words.len(),
                open: false,
            });
        }
        "submodule" => {
            if let Some(f) = words[rest..].iter().position(|w| *w == "foreach") {
                let mut start = rest + f + 1;
                while words
                    .get(start)
                    .is_some_and(|w| matches!(*w, "--recursive" | "-q" | "--quiet" | "--"))
                {
                    start += 1;
                }
                if start < words.len() {
                    r.runs.push(Run::Line(words[start..].join(" ")));
                }
            }
        }
        "rebase" => {
            let mut i = rest;
            while i < words.len() {
                let w = words[i];
                if w == "--" {
                    break;
                }
                let line = match w {
                    "-x" | "--exec" => {
                        i += 1;
                        words.get(i).copied()
                    }
                    _ => w
                        .strip_prefix("--exec=")
                        .or_else(|| w.strip_prefix("-x").filter(|v| !v.is_empty())),
                };
                if let Some(line) = line {
                    r.runs.push(Run::Line(line.to_string()));
                }
                i += 1;
            }
        }
        "config" => config(words, rest, r),
        _ => {
            let opts: &[&str] = match sub {
                "grep" => &["--open-files-in-pager"],
                "clone" => &["-u", "--upload-pack", "-c", "--config"],
                "ls-remote" => &["-u", "--upload-pack"],
                "fetch" | "pull" | "fetch-pack" => &["--upload-pack", "--exec"],
                "push" | "send-pack" => &["--receive-pack", "--exec"],
                "archive" => &["--exec"],
                "send-email" => &[
                    "--sendmail-cmd",
                    "--smtp-server",
                    "--to-cmd",
                    "--cc-cmd",
                    "--header-cmd",
                ],
                "help" => &["-w", "--web"],
                _ => &[],
            };
            for (i, w) in words.iter().enumerate().skip(rest) {
                if *w == "--" {
                    break;
                }
                let hit = opts.iter().any(|o| {
                    w == o
                        || w.starts_with(o)
                            && (w.as_bytes().get(o.len()) == Some(&b'=') || o.len() == 2)
                        // git takes a long option's unambiguous prefix (`--upload=x`)
                        || super::abbreviates(w, o).is_some()
                }) || (sub == "grep" && w.starts_with("-O") && w.len() > 2);
                if hit {
                    let at = if opts.contains(w) && !matches!(*w, "-w" | "--web") {
                        (i + 1).min(words.len() - 1)
                    } else {
                        i
                    };
                    r.code_at(at, format!("`git {sub} {w}` names a program it runs"));
                    // `git clone --config alias.p=push`: the new repository's setting, read
                    // as `git -c` is for what it makes git run later in the line
                    if sub == "clone" {
                        let value = match *w {
                            "-c" | "--config" => words.get(i + 1).copied(),
                            _ => w
                                .strip_prefix("--config=")
                                .or_else(|| w.strip_prefix("-c").filter(|v| !v.is_empty())),
                        };
                        if let Some(line) = value.and_then(setting_runs) {
                            r.runs.push(Run::Line(line));
                        }
                    }
                }
            }
        }
    }
}

/// `git config KEY VALUE` (also `git config set KEY VALUE`, `--add`, `--replace-all`) writes a
/// key that git reads later: one not known to be harmless (`diff.external`,
/// `filter.x.clean`, `alias.st`, `gpg.program`, ...) is code, since a later `git diff` or
/// `git add` in that repository runs the program it names. The sandbox pins some keys by its
/// environment, but a nested repository's own `.git/config` is writable. Reading, listing
/// and unsetting keys run nothing.
fn config(words: &[&str], rest: usize, r: &mut Reading) {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "-l",
        "--list",
        "--unset",
        "--unset-all",
        "--remove-section",
        "--rename-section",
        "--get-color",
        "--get-colorbool",
    ];
    const WITH_VALUE: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
    ];
    let mut operands = Vec::new();
    let mut reads = false;
    let mut i = rest;
    while i < words.len() {
        let w = words[i];
        if WITH_VALUE.contains(&w) {
            i += 2;
            continue;
        }
        if w == "--" {
            operands.extend(i + 1..words.len());
            break;
        }
        if w.starts_with('-') {
            reads |= READS.contains(&w);
        } else {
            operands.push(i);
        }
        i += 1;
    }
    let (key, has_value) = match operands.first().map(|&k| words[k]) {
        Some("set") => (operands.get(1), operands.len() > 2),
        Some("get" | "list" | "unset" | "rename-section" | "remove-section" | "edit") | None => {
            return
        }
        Some(_) => (operands.first(), operands.len() > 1),
    };
    if reads || !has_value {
        return;
    }
    if let Some(&k) = key.filter(|&&k| !git_key_is_harmless(words[k])) {
        r.code_at(
            k,
            format!(
                "`git config {}` sets a key through which git may run a program later",
                words[k]
            ),
        );
        // what the value makes git run later in the line is read for the rules that restrict,
        // as for `git -c`: a shell line (`alias.t '!touch x'`, `filter.f.clean`), or the
        // subcommand an alias stands for (`alias.p push`)
        if let Some(value) = words.get(k + 1) {
            if let Some(line) = setting_runs(&format!("{}={value}", words[k])) {
                r.runs.push(Run::Line(line));
            }
        }
    }
}

/// What a git setting (`key=value`) makes git run when it is used: the shell line
/// ([`git_setting_shell_line`]), or for an alias that is not one, the git command it stands
/// for (`alias.p=push` runs `git push`).
pub(super) fn setting_runs(setting: &str) -> Option<String> {
    if let Some(line) = git_setting_shell_line(setting) {
        return Some(line.to_string());
    }
    let (key, value) = setting.split_once('=')?;
    let alias = key
        .to_ascii_lowercase()
        .strip_prefix("alias.")
        .is_some_and(|name| !name.is_empty());
    (alias && !value.trim().is_empty()).then(|| format!("git {value}"))
}
