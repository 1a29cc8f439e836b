//! The grammar's tables, spelled many ways.

use super::*;
use crate::pattern::CommandPattern;
use pretty_assertions::assert_eq;

fn words(line: &str) -> Vec<String> {
    crate::pattern::split_command(line)
}

fn code(line: &str) -> Option<usize> {
    read(&words(line)).code.map(|c| c.at)
}

fn lines(line: &str) -> Vec<String> {
    read(&words(line))
        .runs
        .into_iter()
        .filter_map(|r| match r {
            Run::Line(l) => Some(l),
            Run::Words { .. } => None,
        })
        .collect()
}

fn inner_words(line: &str) -> Vec<String> {
    let w = words(line);
    read(&w)
        .runs
        .into_iter()
        .filter_map(|r| match r {
            Run::Words { start, end, .. } => Some(w[start..end].join(" ")),
            Run::Line(_) => None,
        })
        .collect()
}

/// Commands that run code nothing here can read, and the index of the word that carries it.
#[test]
fn code_is_found_at_the_word_that_carries_it() {
    let table: &[(&str, usize)] = &[
        // sed: `s///e`, `e` alone, a script file, scripts it cannot read
        ("sed 's/.*/touch pwned2/e' f.txt", 1),
        ("sed -n 's/x/y/gpe' f", 2),
        ("sed -e p -e 's|a|b|e' f", 4),
        ("sed --expression='1e' f", 1),
        ("sed -ne '$e' f", 2),
        ("sed -f script.sed f", 2),
        ("sed --file=script.sed f", 1),
        ("sed -i.bak -f s.sed f", 3),
        ("gsed 'Z' f", 1),
        ("sed -E '/a/{s/b/c/e}' f", 2),
        // awk: system, pipes, extensions, program files
        ("awk 'BEGIN{system(\"touch x\")}'", 1),
        ("awk -F: '{print | \"sh\"}' /etc/passwd", 2),
        ("gawk '{ \"date\" | getline d }'", 1),
        ("awk '{print |& \"cat\"}'", 1),
        ("mawk -v x=1 'BEGIN { system(\"id\") }'", 3),
        ("awk -f prog.awk data", 2),
        ("gawk -e 'BEGIN{system(\"id\")}'", 2),
        ("gawk --source='@load \"x\"; BEGIN{}'", 1),
        ("gawk -l ./evil.so 'BEGIN{}'", 2),
        ("gawk -i inc.awk 'BEGIN{}'", 2),
        // interpreters: the first argument picks the code
        ("python3 -c 'import os'", 1),
        ("python3 -m http.server", 1),
        ("python3 x.py", 1),
        ("python3.12 -u x.py", 1),
        ("/usr/bin/python x.py", 1),
        ("pypy3 -c x", 1),
        ("perl -e 'system(\"id\")'", 1),
        ("perl -ne 'print' f", 1),
        ("ruby -e 'exec(\"id\")'", 1),
        ("node -e 'require(\"child_process\")'", 1),
        ("node --eval x", 1),
        ("nodejs -p x", 1),
        ("php -r 'system(\"id\");'", 1),
        ("lua5.4 -e x", 1),
        ("Rscript -e x", 1),
        ("deno eval x", 1),
        ("bun -e x", 1),
        ("java -jar x.jar", 1),
        ("dc -e '!id'", 1),
        ("python3", 1),
        // shells: scripts, stdin, other languages
        ("bash build.sh", 1),
        ("sh -x build.sh", 2),
        ("bash", 1),
        ("bash -s", 2),
        ("bash -i", 2),
        ("zsh -c 'ls **/*(e:\"touch x\":)'", 2),
        ("fish -c 'id'", 2),
        ("csh -c id", 2),
        ("bash --rcfile evil -c id", 2),
        // options naming programs
        ("tar --to-command=sh -xf a.tar", 1),
        ("tar -xf a.tar --to-command 'sh -c id'", 4),
        ("tar --use-compress-program='sh -c id' -xf a.tar", 1),
        ("tar -I 'sh -c id' -xf a.tar", 2),
        ("tar -xIzstd -f a.tar", 1),
        ("tar xIf zstd a.tar", 1),
        ("tar -cF script.sh -f a.tar .", 1),
        (
            "tar --checkpoint=1 --checkpoint-action=exec=id -cf a.tar .",
            2,
        ),
        ("tar --rsh-command=/bin/sh -xf h:a.tar", 1),
        ("rsync -e 'sh -c id' a b", 2),
        ("rsync -avze ssh a b", 2),
        ("rsync --rsh='sh -c id' a b", 1),
        ("rsync --rsync-path='id;' a h:b", 1),
        ("ssh -o ProxyCommand='sh -c id' h", 2),
        ("ssh -oProxyCommand=id h", 1),
        ("ssh -o 'LocalCommand id' -o PermitLocalCommand=yes h", 4),
        ("ssh -F ./cfg h", 2),
        ("scp -S ./prog a h:b", 2),
        ("less '+!id' f", 1),
        ("less -k keys f", 2),
        ("man -P 'sh -c id' ls", 2),
        ("man --pager='sh -c id' ls", 1),
        ("man -H ls", 2),
        ("make CC='sh -c id'", 1),
        ("make --eval='x:; id' x", 1),
        ("make -f /dev/stdin", 2),
        ("cmake -E env A=1 id", 2),
        ("cmake -P x.cmake", 2),
        ("sort --compress-program=./x f", 1),
        ("split --filter='sh -c id' f", 1),
        ("rg --pre ./x pattern", 2),
        ("rg --pre=./x pattern", 1),
        ("zip -TT 'sh -c id' a.zip f", 2),
        ("wget -e 'use_askpass=./x' u", 2),
        ("go test -exec ./x ./...", 3),
        ("go build -toolexec=./x", 2),
        ("gcc -wrapper sh,-c,id x.c", 2),
        ("cc -B./evil x.c", 1),
        ("clang -fplugin=./x.so x.c", 1),
        ("rustc -C linker=./x main.rs", 1),
        ("rustc -Clinker=./x main.rs", 1),
        ("hg --config hooks.pre-status=id status", 2),
        // runners and readers of their input
        ("strace -f ls", 1),
        ("parallel id ::: a", 1),
        ("xdg-open f.html", 1),
        ("let 'a[$(id)]=1'", 1),
        ("vim f.txt", 2),
        ("vi -c '!id' f", 4),
        ("ed f", 2),
        ("nano f", 2),
        ("emacs --batch --eval x", 4),
        ("at now", 2),
        // wrappers that run what cannot be read
        ("env -S 'id x'", 1),
        ("env -S'id x'", 1),
        ("env -vS'id x'", 1),
        ("sudo -Es id", 1),
        ("sudo -s id", 1),
        ("sudo -e /etc/x", 1),
        ("su", 1),
        ("su root", 1),
        ("chroot /", 2),
        ("script", 1),
        // names whose subscripts bash evaluates
        ("read 'a[$(id)]'", 1),
        ("printf -v 'a[`id`]' x", 2),
        ("unset 'a[$(id)]'", 1),
        ("test -v 'a[$(id)]'", 2),
        // subcommands that are aliases, plugins, scripts or package programs
        ("git frobnicate", 1),
        ("git -C . st", 3),
        ("git difftool", 1),
        ("git mergetool -t x", 1),
        ("git filter-branch --tree-filter id", 1),
        ("git grep -Oid x", 2),
        ("git grep --open-files-in-pager=id x", 2),
        ("git clone -u 'sh -c id' a b", 3),
        ("git clone --upload-pack='id;' a b", 2),
        ("git ls-remote --upload-pack id h", 3),
        ("git fetch --upload-pack=id o", 2),
        ("git push --receive-pack=id o", 2),
        ("git archive --exec=id --remote=x", 2),
        ("git send-email --sendmail-cmd=id p", 2),
        ("git help --web log", 2),
        // a long option's prefix, which getopt and git take for the option
        ("git ls-remote --upload='touch x' .", 2),
        ("git fetch --upl x o", 2),
        ("git push --exe='touch x' . HEAD", 2),
        ("git grep --no-index --open='touch x' p", 3),
        ("tar -cf x.tar --use-compress-prog='touch x' f", 3),
        ("sort --compress-prog=bash f", 1),
        ("zip -TT'touch x' -T z.zip f", 1),
        ("git clone -c filter.x.smudge=id a b", 3),
        ("cargo nextest run", 1),
        ("cargo +nightly frob", 2),
        ("cargo rustc -- -C linker=./x", 3),
        ("npx cowsay hi", 1),
        ("npx -p pkg bin", 3),
        ("npx -c 'id'", 2),
        ("npm exec -- eslint .", 3),
        ("npm x eslint", 2),
        ("npm explore pkg -- id", 1),
        ("npm edit pkg", 1),
        ("npm --script-shell=./x run test", 1),
        ("npm run test --node-options='--require ./x.js'", 3),
        ("pnpm build", 1),
        ("pnpm -C sub lint", 3),
        ("pnpm dlx cowsay", 2),
        ("yarn build", 1),
        ("yarn node x.js", 2),
        ("yarn workspace a run b", 1),
        ("kubectl krew list", 1),
        ("kubectl --kubeconfig ./k get pods", 2),
        ("kubectl get pods --kubeconfig=./k", 3),
        ("docker --config ./d ps", 2),
        ("uv run pytest", 2),
        ("uvx ruff", 1),
        ("poetry run pytest -x", 2),
        ("bundle exec rake", 2),
        ("rustup toolchain link x ./t", 2),
        // programs toolgate does not know: shapes that may run code
        ("mytool --exec 'id'", 2),
        ("mytool --pre-command=id", 1),
        ("mytool --on-run-hook x", 2),
        ("mytool -c 'id'", 2),
        ("mytool -qe id", 2),
        ("mytool 'a; id'", 1),
        ("mytool 'x' '$(id)'", 2),
        ("mytool run sh -c id", 4),
        ("mytool run pytest tests/", 2),
        ("mytool --verbose exec make", 3),
        ("just run", 1),
        ("mytool 10 python3 x.py", 2),
        ("./run.sh --shell=bash", 1),
        // git config keys through which a later git command runs a program
        ("git config diff.external 'touch pwned'", 2),
        ("git -C sub config --add filter.x.clean 'touch pwned'", 5),
        ("git config set alias.st '!touch pwned'", 3),
        ("git config --file sub/.git/config gpg.program x", 4),
        // subscripts naming a variable, which bash evaluates
        ("unset 'a[y]'", 1),
        ("read -r 'a[i]'", 2),
        ("printf -v 'a[n]' %s 1", 2),
        ("test -v 'a[y]'", 2),
        // bash builtins that run commands
        ("compgen -C 'touch pwned' x", 2),
        ("compgen -aC 'touch pwned' x", 2),
        ("compgen -W '$(touch pwned)' x", 2),
        ("compgen -F f x", 2),
        ("mapfile -C 'touch pwned' -c 1 arr", 2),
        ("readarray -tC'touch pwned' arr", 1),
        ("fc -e 'touch pwned'", 1),
        ("fc -s", 1),
    ];
    for (line, at) in table {
        assert_eq!(code(line), Some(*at), "{line}: {:?}", read(&words(line)));
    }
}

/// The same programs used in ways that run nothing else.
#[test]
fn plain_uses_run_no_code() {
    for line in [
        "sed -n 1p f.txt",
        "sed -n '1,/x/p' f",
        "sed 's/a/b/g' f",
        "sed -e 's|a|b|' -e 's,c,d,2' f",
        "sed -i.bak 's/a/b/w out.txt' f",
        "sed -E 's/(a|b)+/c/I' f",
        "sed '/^#/d;/^$/d' f",
        "sed -n '/start/,/end/{p;q}' f",
        "sed '1i\\\nheader' f",
        "sed 'a text; more' f",
        "sed -n '$=' f",
        "sed 'y/abc/xyz/' f",
        "sed ':a;N;$!ba;s/\\n/ /g' f",
        "sed --sandbox 's/x/y/e' f",
        "sed 's/x/e/' f",
        "awk '{print $1}' f",
        "awk -F, 'NR>1 && $2 > 3 {n++} END {print n}' f",
        "awk -v x=1 '$1 == x || $2 == x' f",
        "gawk --sandbox 'BEGIN{system(\"id\")}'",
        "python3 --version",
        "node -v",
        "perl -v",
        "bash --version",
        "tar -xzf a.tgz",
        "tar czf a.tgz src",
        "tar --exclude=.git -cf a.tar .",
        "rsync -avz --exclude=.git a b",
        "ssh -o ConnectTimeout=5 h",
        "less -R f",
        "man 3 printf",
        "make -j4 test",
        "make -C sub",
        "sort -k2 -n f",
        "rg -n --type rust pattern",
        "go test ./...",
        "gcc -O2 -o x x.c",
        "rustc -C opt-level=3 main.rs",
        "find . -name '*.rs'",
        "git status",
        "git -C sub log --oneline",
        "git -c color.ui=always diff",
        "git -c user.name=t -c user.email=t@x commit -m m",
        "git -c Color.UI=never status",
        "git grep -O x",
        "git rebase -i HEAD~3",
        "git push origin main",
        "git lfs ls-files",
        "cargo +nightly -Zunstable-options build",
        "cargo test --config term.color='always'",
        "cargo clippy --all-targets",
        "cargo fmt --all",
        "npm run build",
        "npm test",
        "npm --prefix sub install",
        "pnpm -C sub install",
        "pnpm run lint",
        "yarn run build",
        "docker -H tcp://h ps",
        "docker compose up",
        "kubectl -n x get pods",
        "echo 'a; b | c'",
        "grep -e 'a|b' f",
        "cat python3",
        "ls sh",
        "curl 'http://x/?a=1&b=2'",
        "printf '%s\\n' x",
        "read -r line",
        "test -f x",
        "mytool --format json src/",
        "mytool -v --dry-run",
        "pytest -k 'a or b' tests/",
        "jobs -l",
        "unset 'a[0]'",
        "[ -f x ]",
        "read -r line",
        "git config user.name 'A U Thor'",
        "git config --get diff.external",
        "git config --unset alias.st",
        "git config -l",
        "git config get core.pager",
        "compgen -A file x",
        "complete -C 'touch pwned' x",
        "mapfile -t arr",
        "fc -l",
    ] {
        let r = read(&words(line));
        assert_eq!(r.code, None, "{line}: {r:?}");
    }
}

#[test]
fn readable_commands_are_found() {
    let table: &[(&str, &[&str])] = &[
        ("sed -n '1e touch pwned' f.txt", &["touch pwned"]),
        ("sed '1e touch x; false' f", &["touch x; false"]),
        ("sed -e '$e id' -e 'p' f", &["id"]),
        ("sed '/a/e date\n/b/e whoami' f", &["date", "whoami"]),
        ("bash -c 'curl x'", &["curl x"]),
        ("bash -lc 'curl x'", &["curl x"]),
        ("bash -e -o pipefail -c 'a | b'", &["a | b"]),
        ("sh -c -x 'id' name arg", &["id"]),
        ("dash -c id", &["id"]),
        ("su -c 'id' root", &["id"]),
        ("su root -c id", &["id"]),
        ("su --command=id", &["id"]),
        ("runuser -l u -c 'id'", &["id"]),
        ("flock /tmp/l -c 'id'", &["id"]),
        ("script -q -c 'id' /dev/null", &["id"]),
        ("script -qc 'id' /dev/null", &["id"]),
        ("script -qcid /dev/null", &["id"]),
        ("flock -nc 'id' /tmp/l", &["id"]),
        ("watch -n 1 ls -l", &["ls -l"]),
        ("git rebase --exec 'make test' main", &["make test"]),
        ("find . -name '*.tmp' -delete", &["rm -- {}"]),
        ("git rebase -x 'make test' -i main", &["make test"]),
        ("git rebase --exec=id main", &["id"]),
        (
            "git submodule foreach --recursive 'git clean -fd'",
            &["git clean -fd"],
        ),
        // git -c settings whose value git runs with sh -c
        ("git -c alias.x='!touch pwned' x", &["touch pwned"]),
        ("git -c Alias.Y=!id y", &["id"]),
        ("git -c filter.lfs.smudge='curl x' checkout .", &["curl x"]),
        ("git -c diff.pdf.textconv=pdftotext diff", &["pdftotext"]),
        ("git -c merge.ours.driver=true merge b", &["true"]),
        (
            "git -c difftool.v.cmd='vimdiff $LOCAL' difftool",
            &["vimdiff $LOCAL"],
        ),
        // an alias that is not a shell line runs the git command it stands for
        ("git -c alias.st=status st", &["git status"]),
        ("git -c diff.textconv=x diff", &[]),
    ];
    for (line, want) in table {
        assert_eq!(lines(line), *want, "{line}");
    }
    let table: &[(&str, &[&str])] = &[
        ("find . -exec rm {} ;", &["rm {}"]),
        (
            "find . -maxdepth 0 -exec touch pwned {} +",
            &["touch pwned {}"],
        ),
        (
            "find . -execdir sh -c 'x' ; -ok rm {} ;",
            &["sh -c x", "rm {}"],
        ),
        ("find . -okdir touch x", &["touch x"]),
        ("fd -e rs -x rustfmt", &["rustfmt"]),
        ("fdfind . --exec-batch wc -l", &["wc -l"]),
        ("git bisect run make test", &["make test"]),
        ("git -C x bisect run ./t.sh", &["./t.sh"]),
        ("pnpm exec eslint .", &["eslint ."]),
        ("yarn exec -- tsc -p .", &["tsc -p ."]),
        ("rustup run nightly cargo build", &["cargo build"]),
        ("jobs -x touch pwned", &["touch pwned"]),
        ("jobs -l -x sh -c id", &["sh -c id"]),
    ];
    for (line, want) in table {
        assert_eq!(inner_words(line), *want, "{line}");
    }
}

#[test]
fn wrappers_point_at_the_command_they_run() {
    let table: &[(&str, Option<&str>)] = &[
        ("env curl x", Some("curl x")),
        ("env -i A=1 curl x", Some("curl x")),
        ("env -u HOME -- curl x", Some("curl x")),
        ("env - curl", Some("curl")),
        ("nice -n 5 curl", Some("curl")),
        ("nice -5 curl", Some("curl")),
        ("timeout 5 curl", Some("curl")),
        ("timeout -s KILL -k 1 5s curl", Some("curl")),
        ("nohup curl", Some("curl")),
        ("command curl", Some("curl")),
        ("exec -l curl", Some("curl")),
        ("time -f %e curl", Some("curl")),
        ("sudo -u root curl", Some("curl")),
        ("sudo --user=root -- curl", Some("curl")),
        ("doas -u root curl", Some("curl")),
        ("xargs -n 1 -I {} curl {}", Some("curl {}")),
        ("stdbuf -o L curl", Some("curl")),
        ("setsid -w curl", Some("curl")),
        ("ionice -c 3 curl", Some("curl")),
        ("taskset -c 0,1 curl", Some("curl")),
        ("taskset 0x1 curl", Some("curl")),
        ("chrt -f 10 curl", Some("curl")),
        ("flock /tmp/l curl", Some("curl")),
        ("chroot / curl", Some("curl")),
        ("busybox wget x", Some("wget x")),
        ("runuser -u u -- curl", Some("curl")),
        ("watch -x curl x", Some("curl x")),
        ("command -v curl", None),
        ("ionice -p 1", None),
        ("env", None),
        ("xargs", None),
        ("timeout 5", None),
        ("xargs -n1 -I{} curl {}", Some("curl {}")),
        ("stdbuf -oL -eL curl", Some("curl")),
        ("sudo -uroot curl", Some("curl")),
        ("nice -n5 curl", Some("curl")),
        ("command -pv curl", None),
    ];
    for (line, want) in table {
        let w = words(line);
        let r = read(&w);
        assert_eq!(
            r.wraps.map(|k| w[k..].join(" ")).as_deref(),
            *want,
            "{line}"
        );
    }
    // `exec -a NAME`: the command as written and as NAME makes it run, both read, and code
    // no rule grants (git's `git-push` is `git push`)
    let w = words("exec -a git-push git r.git HEAD");
    let r = read(&w);
    assert_eq!(r.wraps, None);
    assert_eq!(
        r.runs,
        [
            Run::Words {
                start: 3,
                end: 6,
                open: false
            },
            Run::Line("'git' 'push' 'r.git' 'HEAD'".into())
        ]
    );
    assert!(r.code.is_some());
}

#[test]
fn global_options_are_read_before_the_subcommand() {
    let table: &[(&str, usize, bool)] = &[
        // line, subcommand index, any subcommand
        ("git tag v5", 1, false),
        ("git -C . tag v6", 3, false),
        ("git -C. tag", 2, false),
        ("git --git-dir=.git --work-tree=. tag", 3, false),
        ("git -c a.b=c tag v7", 3, true),
        ("git -ca.b=c tag", 2, true),
        ("git -c color.ui=never tag", 3, false),
        ("git --no-pager -P -p tag", 4, false),
        ("git --exec-path=./x tag", 2, true),
        ("git --exec-path", 2, false),
        ("git --config-env=core.pager=X tag", 2, false),
        ("git --frobnicate tag", 2, false),
        ("cargo +nightly -Z x --locked publish", 5, false),
        ("cargo --config alias.b='publish' b", 3, true),
        ("cargo build --config 'target.x.runner=\"sh\"'", 1, true),
        ("npm --prefix sub publish", 3, false),
        ("pnpm -C sub --filter a publish", 5, false),
        ("yarn --cwd sub publish", 3, false),
        ("docker -H h --context c rm x", 5, false),
        ("kubectl -n ns --context c delete pod x", 5, false),
        ("git", 1, false),
    ];
    for (line, at, any) in table {
        let r = read(&words(line));
        let sub = r.subcommand.unwrap_or_else(|| panic!("{line}"));
        assert_eq!((sub.at, sub.any), (*at, *any), "{line}: {sub:?}");
    }
    assert!(read(&words("ls -la")).subcommand.is_none());
}

/// Restricting patterns match every spelling; granting ones only what they name, and only
/// when they reach the code.
#[test]
fn patterns_read_commands_through_the_grammar() {
    let table: &[(&str, &str, bool, bool)] = &[
        // pattern, command, matches to grant, matches to restrict
        ("git tag", "git tag v5", true, true),
        ("git tag", "git -C . tag v6", true, true),
        ("git tag", "git -c a.b=c tag v7", false, true),
        ("git tag", "git --git-dir=.git tag", true, true),
        ("git tag", "git --git-dir sub/.git/ tag", true, true),
        // another directory's configuration can run programs (a filter's `clean`)
        ("git status", "git --git-dir=g status", false, true),
        ("git status", "git --git-dir g status", false, true),
        ("git tag", "/usr/bin/git -C x tag", false, true),
        ("git tag", "git -c alias.t=tag t v8", false, true),
        ("git tag", "git --exec-path=./x tag", false, true),
        ("git tag", "git --frobnicate x tag", false, true),
        ("git tag", "git -c color.ui=never status", false, false),
        ("git status", "git -C sub status", true, true),
        ("git status", "git --no-pager status", true, true),
        ("git status", "git -c color.ui=always status", true, true),
        ("git status", "git -c core.fsmonitor=x status", false, true),
        ("git status", "git -c alias.status=x status", false, true),
        ("git", "git -c core.pager=x log", false, true),
        ("git -c core.pager=x", "git -c core.pager=x log", true, true),
        ("git log", "git -C . log --oneline", true, true),
        ("git st", "git st", true, true),
        ("git", "git st", false, true),
        ("cargo publish", "cargo +nightly publish", true, true),
        ("cargo publish", "cargo -Zx --locked publish", true, true),
        (
            "cargo publish",
            "cargo --config alias.b=publish b",
            false,
            true,
        ),
        (
            "cargo test",
            "cargo test --config 'target.x.runner=\"sh\"'",
            false,
            true,
        ),
        ("cargo nextest", "cargo nextest run", true, true),
        ("cargo", "cargo nextest run", false, true),
        ("npm publish", "npm --prefix sub publish", true, true),
        ("pnpm publish", "pnpm -C sub --filter a publish", true, true),
        ("docker rm", "docker -H h rm c", true, true),
        ("docker rm", "docker --frob x rm c", false, true),
        ("kubectl delete", "kubectl -n ns delete pod x", true, true),
        ("sed", "sed -n 1p f", true, true),
        ("sed", "sed -n '1e touch x' f", true, true),
        ("sed", "sed 's/a/b/e' f", false, true),
        ("sed -n 1e*", "sed -n '1e touch x' f", true, true),
        ("awk", "awk '{print}' f", true, true),
        ("awk", "awk 'BEGIN{system(\"id\")}'", false, true),
        ("python3", "python3 --version", true, true),
        ("python3", "python3 x.py", false, true),
        ("python3", "python3 -c 'id'", false, true),
        ("python3 -m pytest", "python3 -m pytest -x", true, true),
        ("python3 -c", "python3 -c 'id'", true, true),
        ("python3", "python3", false, true),
        ("bash", "bash build.sh", false, true),
        ("bash build.sh", "bash build.sh --fast", true, true),
        ("tar", "tar -xzf a.tgz", true, true),
        ("tar", "tar --to-command=sh -xf a.tar", false, true),
        ("*", "ls -la", true, true),
        ("*", "python3 x.py", false, true),
        ("vim", "vim f", false, true),
        ("timeout", "timeout 5 curl x", false, true),
        ("timeout 5 curl", "timeout 5 curl x", true, true),
        ("curl", "timeout 5 curl x", false, true),
        ("curl", "sudo -u x timeout 5 curl x", false, true),
        ("rm", "mywrap -q rm -rf x", false, true),
        ("rm -rf", "mywrap rm -rf x", false, true),
        ("rm -rf", "mywrap rm x", false, false),
        ("rm", "grep rm f", false, false),
        ("mytool", "mytool --format json", true, true),
        ("mytool", "mytool --exec id", false, true),
    ];
    for (pattern, line, grant, restrict) in table {
        let p = CommandPattern::parse(pattern).unwrap();
        let w = words(line);
        assert_eq!(
            p.matches_argv(&w, false),
            *grant,
            "grant {pattern} / {line}"
        );
        assert_eq!(
            p.matches_argv(&w, true),
            *restrict,
            "restrict {pattern} / {line}"
        );
    }
}

#[test]
fn any_words_read_without_a_panic() {
    for line in [
        "",
        "-",
        "--",
        "git -c",
        "git -C",
        "git --exec-path=",
        "cargo --config",
        "npx -c",
        "sed -e",
        "sed -",
        "sed ''",
        "sed 's",
        "sed 's/a",
        "sed '\\",
        "awk -f",
        "awk -",
        "tar -I",
        "ssh -o",
        "su -c",
        "flock",
        "watch",
        "watch -n",
        "find -exec",
        "fd -x ;",
        "rustup run",
        "env -u",
        "sudo -u",
        "xargs -I",
        "bash -c",
        "bash -o",
        "make =x",
        "pnpm exec",
        "pnpm exec --",
        "yarn",
        "kubectl",
        "git -c=",
        "git -c ''",
    ] {
        let _ = read(&words(line));
        let p = CommandPattern::parse("git tag").unwrap();
        let _ = p.matches_argv(&words(line), true);
        let _ = p.matches_argv(&words(line), false);
    }
}

/// Which programs' options can change what they do, and which options take the next word as
/// a value that names nothing to write or run.
#[test]
fn options_that_matter_and_values_that_do_not() {
    for name in [
        "cat", "grep", "ls", "wc", "cp", "rm", "mkdir", "tee", "head", "echo",
    ] {
        assert!(!options_matter(name), "{name}");
    }
    for name in [
        "sort", "find", "tar", "git", "rsync", "sed", "awk", "curl", "tree", "dd", "printf",
        "xargs", "env", "python3", "mytool",
    ] {
        assert!(options_matter(name), "{name}");
    }
    for (name, option) in [
        ("git", "-m"),
        ("git", "--message"),
        ("find", "-name"),
        ("find", "-maxdepth"),
        ("sort", "-k"),
        ("rg", "-e"),
        ("tar", "-C"),
    ] {
        assert!(takes_value(name, option), "{name} {option}");
    }
    for (name, option) in [
        ("git", "-c"),
        ("git", "--output"),
        ("find", "-fprint"),
        ("find", "-exec"),
        ("sort", "-o"),
        ("tar", "--to-command"),
        ("rsync", "-e"),
        ("sed", "-e"),
        ("cat", "-n"),
        ("mytool", "-m"),
    ] {
        assert!(!takes_value(name, option), "{name} {option}");
    }
    // subcommands whose options only read or choose what to stage or check out
    for sub in ["add", "rm", "mv", "status", "checkout", "switch", "restore"] {
        assert!(subcommand_options_harmless("git", sub), "git {sub}");
    }
    // --output, --ext-diff, --open-files-in-pager, or not known
    for (name, sub) in [
        ("git", "diff"),
        ("git", "log"),
        ("git", "show"),
        ("git", "grep"),
        ("git", "config"),
        ("git", "submodule"),
        ("tar", "add"),
        ("mytool", "add"),
    ] {
        assert!(!subcommand_options_harmless(name, sub), "{name} {sub}");
    }
}
