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
                }) || (sub == "grep" && w.starts_with("-O") && w.len() > 2);
                if hit {
                    let at = if opts.contains(w) && !matches!(*w, "-w" | "--web") {
                        (i + 1).min(words.len() - 1)
                    } else {
                        i
                    };
                    r.code_at(at, format!("`git {sub} {w}` names a program it runs"));
                }
            }
        }
    }
}
