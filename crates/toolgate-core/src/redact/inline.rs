//! Secrets inside a longer string: a command line, a header, a `.env` file's content.
//!
//! [`redact_inline`] finds each of these shapes and replaces the secret part with
//! [`REDACTED`], leaving the rest of the text as it was:
//!
//! 1. PEM private key blocks (`-----BEGIN ... PRIVATE KEY-----` to its `END` line, or to the
//!    end of the text; an `END` line without its `BEGIN` from the start of the text), and
//!    OpenPGP's (`-----BEGIN PGP PRIVATE KEY BLOCK-----`);
//! 2. keys with a well-known prefix ([`SECRET_PREFIXES`]: `sk-`, `ghp_`, `AKIA`, ...) as a
//!    word of at least 16 characters, and JSON Web Tokens (`eyJ...` in three dotted parts);
//!    a word right after a `\n`, `\t` or `\r` escape is read without the escape's letter
//!    too (`printf "a\nghp_..."`), for every shape;
//! 3. assignments to a name that names a secret ([`is_secret_key`]): `OPENAI_API_KEY=...`,
//!    `--password=...`, `password: ...`, `"api_key": "..."`, `X-Api-Key: ...` and
//!    `Authorization: Bearer ...` (the scheme word is kept), `?access_token=...` in a URL,
//!    and with blanks around the separator or another one: a config file's `password =
//!    ...` (INI, TOML, `.properties`), `password : ...`, pretty JSON's `"password" : "..."`,
//!    Ruby's and PHP's `"password" => "..."`, Go's `token := ...`; the value is a quoted
//!    string up to its closing quote, or a word (after `=` without blanks) or the rest of the
//!    line (after `:`, `=>`, `:=` or a spaced `=`); a value that is a reference (`$TOKEN`)
//!    is kept; a one-word value that is a scheme word gives way to the credential after it
//!    (`Authorization=Bearer [REDACTED]`); a name ending in `_KEY` (`ENCRYPTION_KEY` aside)
//!    loses a value that looks generated;
//! 4. a flag naming a secret followed by its value (`--password hunter2`, `--token "x y"`),
//!    curl's `-u`/`--user name:password` (the part after the colon), the short password
//!    options of the programs in [`PASSWORD_FLAGS`] (`mysql -phunter2`, `docker login -p
//!    hunter2`, `redis-cli -a hunter2`, `smbclient -U bob%hunter2`, `az login -p hunter2`; the
//!    program named inside a quoted argument too), `vault login TOKEN`, openssl's `pass:hunter2`,
//!    and a bare name of a secret followed by a value that looks generated (`aws configure
//!    set aws_secret_access_key wJalr...`);
//! 5. URL userinfo: the password of `scheme://user:password@host`, and a user name that
//!    looks like a key (`https://0123456789abcdef0123@host`); the path of a webhook URL
//!    ([`WEBHOOKS`]: Slack's, Discord's);
//! 6. `Bearer` and `Basic` credentials that look like keys (a digit, mixed case or
//!    punctuation, at least 8 characters);
//! 7. each of these inside percent-encoded text (`?next=https%3A%2F%2Fa.com%2Fcb%3F
//!    access_token%3DSECRET`): [`super::percent`];
//! 8. each of these inside backslash-escaped text, JSON carried in a string escaped once or
//!    twice (`curl -d "{\"password\":\"SECRET\"}"`, `\u0070assword=SECRET`):
//!    [`super::escaped`].
//!
//! Denying too much is recoverable, showing too much is not: a name that merely contains
//! `token` (`--max-tokens=100`) loses its value too.

use super::{ends_in_key, is_jwt, is_secret_key, looks_generated, SECRET_PREFIXES};
use std::borrow::Cow;
use std::ops::Range;

use super::REDACTED;

/// `s` with every secret found inside it replaced by [`REDACTED`] (see the module docs);
/// borrowed when nothing was found.
pub fn redact_inline(s: &str) -> Cow<'_, str> {
    let mut found = Vec::new();
    find(s, &mut found);
    super::percent::encoded_secrets(s, &mut found);
    super::escaped::escaped_secrets(s, &mut found);
    if found.is_empty() {
        return Cow::Borrowed(s);
    }
    found.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    let mut any = false;
    for r in found {
        // a range that overlaps or touches the last one (the same secret found as written
        // and decoded) extends it under the same marker
        if any && r.start <= at {
            at = at.max(r.end);
            continue;
        }
        out.push_str(&s[at..r.start]);
        out.push_str(REDACTED);
        at = r.end;
        any = true;
    }
    out.push_str(&s[at..]);
    Cow::Owned(out)
}

/// Adds to `found` the range of each secret of `s` by the shapes of the module docs (1 to
/// 6), as `s` is written (its percent-encoded runs are [`super::percent`]'s).
pub(super) fn find(s: &str, found: &mut Vec<Range<usize>>) {
    pem_blocks(s, found);
    xml_elements(s, found);
    Scan::new(s, found).run();
}

/// The text of XML elements whose name names a secret (`<password>hunter2</password>`,
/// `<ns:ApiKey>...</ns:ApiKey>`), up to the element's closing tag.
fn xml_elements(s: &str, found: &mut Vec<Range<usize>>) {
    if !s.contains("</") {
        return;
    }
    let b = s.as_bytes();
    for open in memchr::memchr_iter(b'<', b) {
        let name_end = b[open + 1..]
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':' | b'.')))
            .map_or(b.len(), |n| open + 1 + n);
        if name_end == open + 1 || b.get(name_end) != Some(&b'>') {
            continue;
        }
        let name = &s[open + 1..name_end];
        let local = name.rsplit(':').next().unwrap_or(name);
        if !is_secret_key(local) {
            continue;
        }
        let close = format!("</{name}>");
        if let Some(end) = s[name_end + 1..].find(&close) {
            let (from, to) = (name_end + 1, name_end + 1 + end);
            if to > from {
                found.push(from..to);
            }
        }
    }
}

/// The ranges of PEM private key blocks, and of OpenPGP's armored ones (`-----BEGIN PGP
/// PRIVATE KEY BLOCK-----`).
fn pem_blocks(s: &str, found: &mut Vec<Range<usize>>) {
    const KEY: &str = "PRIVATE KEY";
    let finder = memchr::memmem::Finder::new(KEY);
    let mut from = 0;
    while let Some(i) = finder.find(&s.as_bytes()[from..]) {
        let mark = from + i;
        // the whole marker: `PRIVATE KEY-----` or `PRIVATE KEY BLOCK-----`
        let tail = ["-----", " BLOCK-----"]
            .into_iter()
            .find(|t| s[mark + KEY.len()..].starts_with(t));
        let Some(tail) = tail else {
            from = mark + KEY.len();
            continue;
        };
        let full = &s[mark..mark + KEY.len() + tail.len()];
        let line_start = s[..mark].rfind('\n').map_or(0, |n| n + 1);
        let line = &s[line_start..mark];
        let after = mark + full.len();
        if let Some(b) = line.find("-----BEGIN") {
            let start = line_start + b;
            // the block ends with the END line's marker, or runs to the end of the text
            let end = memchr::memmem::find(&s.as_bytes()[after..], full.as_bytes())
                .map_or(s.len(), |j| after + j + full.len());
            found.push(start..end);
            from = end;
        } else {
            if line.contains("-----END") {
                found.push(0..after);
            }
            from = after;
        }
        if from >= s.len() {
            break;
        }
    }
}

/// Short options whose value is a password, by the programs that read them so: the letter,
/// whether it may stand alone with its value in the next word (`mysql -p` alone asks for
/// the password, and its next word is the database), and the programs.
const PASSWORD_FLAGS: &[(u8, bool, &[&str])] = &[
    (
        b'p',
        false,
        &[
            "mysql",
            "mariadb",
            "mysqldump",
            "mariadb-dump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
        ],
    ),
    (
        b'p',
        true,
        &[
            "docker",
            "podman",
            "buildah",
            "skopeo",
            "nerdctl",
            "sshpass",
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            // `az login -u name -p password`
            "az",
        ],
    ),
    (b'a', true, &["redis-cli", "valkey-cli"]),
    // `zip -P pw`, `unzip -P pw`, `ssh-keygen -N pw` / `-P pw`, `openssl enc -k pw`, `7z -ppw`
    (b'P', true, &["zip", "unzip", "zipcloak", "ssh-keygen"]),
    (b'N', true, &["ssh-keygen"]),
    (b'k', true, &["openssl"]),
    (b'p', false, &["7z", "7za", "7zr"]),
    (b'P', true, &["sqlcmd", "bcp"]),
    (b'U', true, &["smbclient", "rpcclient", "smbmap"]),
    // curl's cookies (`-b 'session=abc'`; a cookie jar's file name goes too)
    (b'b', true, &["curl"]),
];

/// Whether the command text `cmd` (one pipeline stage) reads a password from its standard
/// input: `sudo -S` (`--stdin`), `chpasswd`, `passwd --stdin`, `--password-stdin`
/// (`docker login`, `helm registry login`), `htpasswd -i`.
fn reads_password_from_stdin(cmd: &str) -> bool {
    let words: Vec<&str> = cmd.split_ascii_whitespace().collect();
    let program = |name: &str| words.iter().any(|w| w.rsplit('/').next() == Some(name));
    let short = |letter: char| {
        words.iter().any(|w| {
            w.len() > 1
                && w.starts_with('-')
                && !w.starts_with("--")
                && w[1..].chars().all(|c| c.is_ascii_alphabetic())
                && w.contains(letter)
        })
    };
    words.contains(&"--password-stdin")
        || program("chpasswd")
        || (program("sudo") && (short('S') || words.contains(&"--stdin")))
        || (program("passwd") && words.contains(&"--stdin"))
        || (program("htpasswd") && short('i'))
}

/// The words an `Authorization` value starts with that name its scheme, not its secret: the
/// IANA HTTP Authentication Scheme Registry's, and `Token` (GitHub, Django REST framework).
const AUTH_SCHEMES: &[&str] = &[
    "basic",
    "bearer",
    "concealed",
    "digest",
    "dpop",
    "gnap",
    "hoba",
    "mutual",
    "negotiate",
    "ntlm",
    "oauth",
    "privatetoken",
    "scram-sha-1",
    "scram-sha-256",
    "token",
    "vapid",
];

/// Webhook URLs whose path is their secret (anyone holding it can post): the host and the
/// path's start, after which the rest of the URL is redacted.
const WEBHOOKS: &[(&str, &str)] = &[
    ("hooks.slack.com", "/services/"),
    ("hooks.slack.com", "/workflows/"),
    ("hooks.slack.com", "/triggers/"),
    ("discord.com", "/api/webhooks/"),
    ("discordapp.com", "/api/webhooks/"),
];

/// Characters of a name or a key (`OPENAI_API_KEY`, `--password`, `sk-proj-abc.def`).
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Characters that end an unquoted value after `=`, or a flag's value.
fn ends_word(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'\'' | b'"' | b'`' | b'&' | b';' | b'|' | b'<' | b'>')
}

/// Whether `t` looks like a generated credential rather than a word: at least 8 characters
/// with a digit, both cases, or key punctuation.
fn looks_random(t: &str) -> bool {
    let b = t.as_bytes();
    if b.len() < 8 {
        return false;
    }
    let digit = b.iter().any(u8::is_ascii_digit);
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let punct = b
        .iter()
        .any(|c| matches!(c, b'+' | b'/' | b'=' | b'_' | b'-' | b'.'));
    digit || (upper && lower) || punct
}

struct Scan<'a, 'f> {
    s: &'a str,
    b: &'a [u8],
    found: &'f mut Vec<Range<usize>>,
}

impl<'a, 'f> Scan<'a, 'f> {
    fn new(s: &'a str, found: &'f mut Vec<Range<usize>>) -> Self {
        Scan {
            s,
            b: s.as_bytes(),
            found,
        }
    }

    /// Walks the words of the text once, trying each shape at each word.
    fn run(&mut self) {
        let b = self.b;
        let mut i = 0;
        while i < b.len() {
            if !is_word(b[i]) || (i > 0 && is_word(b[i - 1])) {
                i += 1;
                continue;
            }
            let mut end = i;
            while end < b.len() && is_word(b[end]) {
                end += 1;
            }
            // `printf "user=bob\nghp_..."`, `{\"a\":\"x\npass=y\"}`: the letter of a `\n`,
            // `\t` or `\r` escape is glued to the word after it; the word without it is tried
            // first, the word as written if that finds nothing (`C:\temp\token=x`)
            if i > 0 && b[i - 1] == b'\\' && matches!(b[i], b'n' | b't' | b'r') && end > i + 1 {
                let before = self.found.len();
                let next = self.word(i + 1..end);
                if self.found.len() > before {
                    i = next.max(end);
                    continue;
                }
            }
            i = self.word(i..end).max(end);
        }
    }

    fn push(&mut self, r: Range<usize>) {
        if r.start < r.end {
            self.found.push(r);
        }
    }

    /// Tries every shape at the word `w`; returns where scanning goes on.
    fn word(&mut self, w: Range<usize>) -> usize {
        let s = self.s;
        let b = self.b;
        let text = &s[w.clone()];
        if (w.len() >= 16 && SECRET_PREFIXES.iter().any(|p| text.starts_with(p))) || is_jwt(text) {
            self.push(w.clone());
            return w.end;
        }
        let name = text.trim_start_matches('-');
        // `name=value`, `name: value`, `"name": "value"`, `name = value`, `"name" : "value"`,
        // `"name" => "value"`
        let mut sep = w.end;
        if matches!(b.get(sep), Some(b'"' | b'\'')) {
            sep += 1;
        }
        if b.get(sep) == Some(&b':') && b[sep + 1..].starts_with(b"//") {
            return self.url(sep + 3);
        }
        // `pass:` right after a word is openssl's way to give a password (below), not a
        // name and the rest of the line
        let openssl_pass =
            sep == w.end && b.get(sep) == Some(&b':') && name.eq_ignore_ascii_case("pass");
        if let Some((at, line)) =
            assignment(b, sep).filter(|_| !openssl_pass && is_secret_key(name))
        {
            if let Some(v) = self.value(at, line) {
                let v = if line {
                    self.keep_scheme(v)
                } else {
                    self.scheme_then_token(v)
                };
                let end = v.end;
                self.push(v);
                return end;
            }
            return at;
        }
        // `ENCRYPTION_KEY=...`, `sort_key: ...`: a key when its value looks generated
        // (the cheap test of the name first: most words name no key)
        if let Some((at, line)) = ends_in_key(name).then(|| assignment(b, sep)).flatten() {
            if let Some(v) = self.value(at, line) {
                if looks_generated(&s[v.clone()]) {
                    let end = v.end;
                    self.push(v);
                    return end;
                }
            }
        }
        if b.get(sep) == Some(&b'=') && matches!(text, "--user" | "-u") {
            return self.user_password(sep + 1);
        }
        if self.short_password_flag(text, w.start, true) {
            // `mysql -phunter2`, `sshpass -phunter2`, `smbclient -Ubob%hunter2`
            if text.as_bytes()[1] != b'U' {
                // the value runs past `=` and other non-word characters (`-bsid=abc`)
                let end = word_end(b, w.end);
                self.push(w.start + 2..end);
                return end;
            }
            // `%` ends the word: the password runs from after it to the value's end
            if b.get(w.end) == Some(&b'%') {
                let end = word_end(b, w.end + 1);
                self.push(w.end + 1..end);
                return end;
            }
            return w.end;
        }
        if matches!(text, "echo" | "printf") {
            // `echo hunter2 | sudo -S cmd`, `printf 'u:pw' | chpasswd`
            let end = self.stage_end(w.end);
            if b.get(end) == Some(&b'|')
                && b.get(end + 1) != Some(&b'|')
                && reads_password_from_stdin(&s[end + 1..self.stage_end(end + 1)])
            {
                let mut from = skip_blanks(b, w.end);
                // `echo -n`, `echo -e`: options, not the text
                while b.get(from) == Some(&b'-') {
                    from = skip_blanks(b, word_end(b, from));
                }
                let mut to = end;
                while to > from && b[to - 1].is_ascii_whitespace() {
                    to -= 1;
                }
                // one quoted argument keeps its quotes
                if to > from + 1 && matches!(b[from], b'"' | b'\'') && b[to - 1] == b[from] {
                    (from, to) = (from + 1, to - 1);
                }
                self.push(from..to);
                return end;
            }
        }
        if matches!(
            text,
            "sudo" | "chpasswd" | "passwd" | "htpasswd" | "docker" | "podman"
        ) {
            // `sudo -S cmd <<< hunter2`
            let end = self.stage_end(w.end);
            let stage = &s[w.start..end];
            if let Some(h) = stage
                .find("<<<")
                .filter(|_| reads_password_from_stdin(stage))
            {
                let at = skip_blanks(b, w.start + h + 3);
                if let Some(v) = self.value(at, false) {
                    let v_end = v.end;
                    self.push(v);
                    return v_end;
                }
            }
        }
        if text == "htpasswd" {
            return self.htpasswd(w.end);
        }
        if text == "vault" {
            return self.vault_login(w.end);
        }
        if text.eq_ignore_ascii_case("pass") && b.get(w.end) == Some(&b':') {
            // openssl's `-passin pass:hunter2` (`env:VAR` and `file:PATH` name no secret)
            let end = word_end(b, w.end + 1);
            self.push(w.end + 1..end);
            return end;
        }
        let space = w.end < b.len() && b[w.end].is_ascii_whitespace() && b[w.end] != b'\n';
        if space {
            let next = skip_blanks(b, w.end);
            if self.short_password_flag(text, w.start, false) {
                // `docker login -p hunter2`, `redis-cli -a hunter2`, `smbclient -U bob%pw`
                if let Some(v) = self.value(next, false) {
                    let end = v.end;
                    match (text, self.s[v.clone()].find('%')) {
                        ("-U", Some(pct)) => self.push(v.start + pct + 1..end),
                        ("-U", None) => {}
                        _ => self.push(v),
                    }
                    return end;
                }
            } else if !text.starts_with('-') && is_secret_key(text) {
                // `aws configure set aws_secret_access_key wJalr...`: a name and a value that
                // looks generated (so prose such as `password is required` keeps its words)
                if let Some(v) = self.value(next, false) {
                    if looks_random(&self.s[v.clone()]) {
                        let end = v.end;
                        self.push(v);
                        return end;
                    }
                }
            } else if text.starts_with('-')
                && name.len() > 1
                && is_secret_key(name)
                // `--password-stdin` takes no value
                && !name.ends_with("-stdin")
            {
                // `--password hunter2`
                if let Some(v) = self.value(next, false) {
                    let end = v.end;
                    self.push(v);
                    return end;
                }
            } else if matches!(text, "-u" | "--user") {
                return self.user_password(next);
            } else if text.eq_ignore_ascii_case("bearer") || text.eq_ignore_ascii_case("basic") {
                let end = word_end(b, next);
                if looks_random(&s[next..end]) {
                    self.push(next..end);
                    return end;
                }
            }
        }
        w.end
    }

    /// Whether `flag` (a word at `at`) is a short option that takes a password in the program
    /// its command runs (see [`PASSWORD_FLAGS`]): with its value in the word (`attached`:
    /// `-pVALUE`, the value from its third byte) or in the next word (`-p VALUE`).
    fn short_password_flag(&self, flag: &str, at: usize, attached: bool) -> bool {
        let f = flag.as_bytes();
        if f.len() < 2 || f[0] != b'-' || f[1] == b'-' || attached == (f.len() == 2) {
            return false;
        }
        let segment = self.segment_before(at);
        // a program inside a quoted argument or an option's value runs too: `sh -c 'mysql
        // -pX'`, `ssh -o 'ProxyCommand=sshpass -p X ssh h'`
        let runs = |program: &&str| {
            segment
                .split(|c: char| c.is_ascii_whitespace() || matches!(c, '\'' | '"' | '='))
                .any(|word| word.rsplit('/').next() == Some(*program))
        };
        PASSWORD_FLAGS
            .iter()
            .filter(|(letter, alone, _)| *letter == f[1] && (attached || *alone))
            .any(|(_, _, programs)| programs.iter().any(runs))
    }

    /// Where the pipeline stage holding `at` ends: the next `|`, `;`, `&` or line end.
    fn stage_end(&self, at: usize) -> usize {
        self.b[at..]
            .iter()
            .position(|c| matches!(c, b';' | b'|' | b'&' | b'\n'))
            .map_or(self.b.len(), |p| at + p)
    }

    /// `htpasswd -b FILE USER PASSWORD` (`-nb USER PASSWORD` without a file): the password
    /// is the last operand of batch mode. Returns where scanning goes on.
    fn htpasswd(&mut self, from: usize) -> usize {
        let b = self.b;
        let end = self.stage_end(from);
        let mut batch = false;
        let mut no_file = false;
        let mut operands = Vec::new();
        let mut at = skip_blanks(b, from);
        while at < end {
            let Some(v) = self.value(at, false) else {
                at = skip_blanks(b, word_end(b, at) + 1);
                continue;
            };
            let quoted = matches!(b[at], b'"' | b'\'');
            let next = skip_blanks(b, v.end + usize::from(quoted));
            let word = &self.s[v.clone()];
            if !quoted && word.starts_with('-') && word.len() > 1 {
                batch |= word.contains('b');
                no_file |= word.contains('n');
            } else {
                operands.push(v);
            }
            at = next;
        }
        let wanted = if no_file { 2 } else { 3 };
        if batch && operands.len() >= wanted {
            let v = operands[wanted - 1].clone();
            self.push(v);
        }
        end
    }

    /// `vault login [flags] TOKEN`: the token is its first operand (`vault login -method=userpass
    /// username=bob` takes none; `-` reads it from standard input). Returns where scanning
    /// goes on.
    fn vault_login(&mut self, from: usize) -> usize {
        let b = self.b;
        let at = skip_blanks(b, from);
        if !b[at..].starts_with(b"login")
            || b.get(at + 5).is_some_and(|&c| !c.is_ascii_whitespace())
        {
            return from;
        }
        let end = self.stage_end(at);
        let mut at = skip_blanks(b, at + 5);
        while at < end {
            let Some(v) = self.value(at, false) else {
                return at;
            };
            let quoted = matches!(b[at], b'"' | b'\'');
            let word = &self.s[v.clone()];
            if !quoted && word.starts_with('-') {
                if word.trim_start_matches('-').starts_with("method") {
                    return v.end;
                }
                at = skip_blanks(b, v.end);
                continue;
            }
            if word.contains('=') && !quoted {
                return at;
            }
            let v_end = v.end;
            self.push(v);
            return v_end;
        }
        at
    }

    /// The text of the command `at` is in, from the last command separator before it.
    fn segment_before(&self, at: usize) -> &'a str {
        let start = self.b[..at]
            .iter()
            .rposition(|c| matches!(c, b';' | b'|' | b'&' | b'\n' | b'(' | b'`'))
            .map_or(0, |p| p + 1);
        &self.s[start..at]
    }

    /// A value starting at `at` (blanks skipped after a colon): a quoted string's inside, or
    /// an unquoted word (after `=`) or the rest of the line (after `:`). `None` when empty or
    /// a reference (`$VAR`, `${VAR}`).
    fn value(&self, at: usize, colon: bool) -> Option<Range<usize>> {
        let b = self.b;
        let at = if colon { skip_blanks(b, at) } else { at };
        // bash's `$'...'` and `$"..."` are quoted strings, not a reference (`$TOKEN`)
        let at = if b.get(at) == Some(&b'$') && matches!(b.get(at + 1), Some(b'\'' | b'"')) {
            at + 1
        } else {
            at
        };
        let r = match b.get(at) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = at + 1;
                let mut end = start;
                while end < b.len() && b[end] != q && b[end] != b'\n' {
                    if q == b'"' && b[end] == b'\\' {
                        end += 1;
                    }
                    end += 1;
                }
                start..end.min(b.len())
            }
            Some(_) if colon => {
                let mut end = at;
                while end < b.len() && !matches!(b[end], b'\n' | b'\r' | b'\'' | b'"' | b'`') {
                    end += 1;
                }
                // the backslashes of an escaped closing quote, trailing blanks and a
                // JSON/YAML separator stay
                if matches!(b.get(end), Some(b'"' | b'\'')) {
                    while end > at && b[end - 1] == b'\\' {
                        end -= 1;
                    }
                }
                while end > at && matches!(b[end - 1], b' ' | b'\t' | b',' | b'}') {
                    end -= 1;
                }
                at..end
            }
            Some(_) => at..word_end(b, at),
            None => return None,
        };
        let v = &self.s[r.clone()];
        if v.is_empty() || v.starts_with('$') || v == REDACTED {
            return None;
        }
        // the backslashes of an escaped quote (`password=\"x\"`, `"token\": \"x\"`, JSON
        // in a string) open a quoted value, read in the decoded text by super::escaped; inside
        // quotes they are part of the value (`password="\"x"`)
        let backslashes = v.bytes().take_while(|&c| c == b'\\').count();
        if backslashes > 0
            && !matches!(b[at], b'"' | b'\'')
            && matches!(b.get(r.start + backslashes), Some(b'"' | b'\''))
        {
            return None;
        }
        Some(r)
    }

    /// `Bearer abc` after `Authorization:` keeps `Bearer`; a scheme alone (the credential
    /// follows outside the quotes, `'Bearer '$TOKEN`) leaves nothing to redact. Only the
    /// words of [`AUTH_SCHEMES`] are kept: the first word of any other value is part of the
    /// secret (`passphrase = correct horse battery staple`).
    fn keep_scheme(&self, v: Range<usize>) -> Range<usize> {
        let text = &self.s[v.clone()];
        let is_scheme = |w: &str| AUTH_SCHEMES.iter().any(|s| w.eq_ignore_ascii_case(s));
        if is_scheme(text) {
            return v.start..v.start;
        }
        match text.split_once(' ') {
            Some((scheme, rest)) if is_scheme(scheme) && !rest.trim().is_empty() => {
                let skip = scheme.len() + 1 + (rest.len() - rest.trim_start().len());
                v.start + skip..v.end
            }
            _ => v,
        }
    }

    /// A one-word value that is a scheme word followed by a blank and a credential
    /// (`Authorization=Bearer abc` in an INI file or a command line): the credential, the
    /// scheme kept as after `Authorization: `. Any other value as it is (a scheme word alone
    /// stays the value: `TOKEN=Bearer` loses it).
    fn scheme_then_token(&self, v: Range<usize>) -> Range<usize> {
        let b = self.b;
        if !matches!(b.get(v.end), Some(b' ' | b'\t'))
            || !AUTH_SCHEMES
                .iter()
                .any(|s| self.s[v.clone()].eq_ignore_ascii_case(s))
        {
            return v;
        }
        match self.value(skip_blanks(b, v.end), false) {
            // a flag is the command's next word, not a credential
            Some(t) if b[t.start] != b'-' => t,
            _ => v,
        }
    }

    /// curl's `-u name:password`: the part after the first colon.
    fn user_password(&mut self, at: usize) -> usize {
        let Some(v) = self.value(at, false) else {
            return at;
        };
        let end = v.end;
        if let Some(c) = self.s[v.clone()].find(':') {
            self.push(v.start + c + 1..end);
        }
        end
    }

    /// The authority of a URL starting at `at` (after `://`): its password, or a user name
    /// that looks like a key.
    fn url(&mut self, at: usize) -> usize {
        let b = self.b;
        let mut end = at;
        while end < b.len()
            && !b[end].is_ascii_whitespace()
            && !matches!(
                b[end],
                b'/' | b'?' | b'#' | b'\'' | b'"' | b'`' | b'<' | b'>'
            )
        {
            end += 1;
        }
        let authority = &self.s[at..end];
        let host = authority.rsplit('@').next().unwrap_or(authority);
        if let Some(&(_, path)) = WEBHOOKS
            .iter()
            .find(|(h, p)| host.eq_ignore_ascii_case(h) && b[end..].starts_with(p.as_bytes()))
        {
            // the path after it is the webhook's secret
            let from = end + path.len();
            let to = word_end(b, from);
            self.push(from..to);
            return to;
        }
        let Some(atsign) = authority.rfind('@') else {
            return at;
        };
        let userinfo = &authority[..atsign];
        match userinfo.find(':') {
            Some(c) => self.push(at + c + 1..at + atsign),
            None if userinfo.len() >= 16 && looks_random(userinfo) => self.push(at..at + atsign),
            None => {}
        }
        at + atsign + 1
    }
}

fn skip_blanks(b: &[u8], mut at: usize) -> usize {
    while at < b.len() && matches!(b[at], b' ' | b'\t') {
        at += 1;
    }
    at
}

/// The separator of an assignment starting at `at` (after a name and its closing quote):
/// `=`, `:`, `=>` or `:=`, with blanks (spaces, tabs) before or after it or not. Returns where
/// its value starts and whether the value runs to the line's end (after a colon, an arrow or
/// a spaced `=`: a config file's `password = two words`, `"password" : "x"`) rather than
/// being one word (`KEY=value` in a command line). `None` for anything else, and for `==`
/// (a comparison) or `::` after a blank.
fn assignment(b: &[u8], at: usize) -> Option<(usize, bool)> {
    let op = skip_blanks(b, at);
    let rest = b.get(op..)?;
    let len = match rest {
        [b'=', b'>', ..] | [b':', b'=', ..] => 2,
        [b'=', b'=', ..] | [b':', b':', ..] if op > at => return None,
        [b'=' | b':', ..] => 1,
        _ => return None,
    };
    let value = op + len;
    let spaced = op > at || matches!(b.get(value), Some(b' ' | b'\t'));
    Some((value, spaced || rest[0] == b':' || len == 2))
}

/// Where a word starting at `at` ends: at a character of [`ends_word`], or at the backslashes
/// of an escaped quote that closes a quoted string (`\"Bearer abc\"}` in JSON carried in a
/// string); an escaped quote inside a word (`abc\"def`) is part of it.
fn word_end(b: &[u8], mut at: usize) -> usize {
    while at < b.len() && !ends_word(b[at]) {
        if b[at] != b'\\' {
            at += 1;
            continue;
        }
        let run = b[at..]
            .iter()
            .position(|&c| c != b'\\')
            .map_or(b.len(), |n| at + n);
        match b.get(run) {
            Some(b'"' | b'\'') if b.get(run + 1).is_some_and(|&c| is_word(c)) => at = run + 1,
            Some(b'"' | b'\'') => return at,
            _ => at = run,
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Each spelling with what must be left of it: the secret parts gone, the rest kept.
    #[test]
    fn no_text_of_these_characters_makes_the_scan_panic() {
        // every text of up to 16 pieces the new shapes look at, cut and joined by a fixed
        // generator: flags at the end, `%` and `:` with nothing after, separators anywhere
        const PIECES: &[&str] = &[
            "-p",
            "-U",
            "-a",
            "mysql ",
            "docker",
            " ",
            "%",
            ":",
            "pass",
            ";",
            "'",
            "x",
            "aws_secret_access_key",
            "/",
            "\n",
            "é",
            "%3D",
            "%2",
            " = ",
            "=>",
            "vault",
            " login ",
            "-method",
            "https://hooks.slack.com",
            "/services/",
            "PRIVATE KEY",
            " BLOCK-----",
            "-----BEGIN",
            "\\n",
            "\\",
            "ghp_0123456789abcdef",
            "Bearer ",
            "token=",
            "DB_PASS",
            "_KEY=",
            "az ",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..100_000 {
            let mut text = String::new();
            for _ in 0..(x % 17) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(PIECES[(x % PIECES.len() as u64) as usize]);
            }
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let _ = redact_inline(&text);
        }
    }

    #[test]
    fn secrets_inside_strings_are_cut_out() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                "curl -s -m 1 -H 'Authorization: Bearer ghp_CANARYTOKEN0123456789abcdefABCDEF' http://127.0.0.1:9/ ; echo done",
                format!("curl -s -m 1 -H 'Authorization: Bearer {r}' http://127.0.0.1:9/ ; echo done"),
            ),
            (
                "curl -H 'X-Session: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' https://x/?jwt=eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. ; echo eyJ.not.one",
                format!("curl -H 'X-Session: {r}' https://x/?jwt={r} ; echo eyJ.not.one"),
            ),
            (
                "curl -H \"authorization: token abc123def456\" x",
                format!("curl -H \"authorization: token {r}\" x"),
            ),
            (
                "curl -H 'Authorization:Basic dXNlcjpwYXNzd29yZA==' x",
                format!("curl -H 'Authorization:Basic {r}' x"),
            ),
            (
                "curl -H 'X-Api-Key: k3y-value-9' -H 'Accept: */*' u",
                format!("curl -H 'X-Api-Key: {r}' -H 'Accept: */*' u"),
            ),
            (
                "export OPENAI_API_KEY=sk-proj-CANARY0123456789abcdef && python app.py",
                format!("export OPENAI_API_KEY={r} && python app.py"),
            ),
            (
                "OPENAI_API_KEY=short1 python x.py",
                format!("OPENAI_API_KEY={r} python x.py"),
            ),
            (
                "export GITHUB_TOKEN=\"a b c\"; gh pr list",
                format!("export GITHUB_TOKEN=\"{r}\"; gh pr list"),
            ),
            (
                "mysql --password=hunter2 -u root",
                format!("mysql --password={r} -u root"),
            ),
            (
                "mysql --password hunter2 db",
                format!("mysql --password {r} db"),
            ),
            (
                "mysql -u root -pCANARYpass456 db; sudo /usr/bin/mariadb-dump -phunter2 x",
                format!("mysql -u root -p{r} db; sudo /usr/bin/mariadb-dump -p{r} x"),
            ),
            // `mysql -p` alone asks; `mkdir -p` and `docker run -p` are not passwords
            ("mysql -p db && mkdir -pv d", "mysql -p db && mkdir -pv d".into()),
            (
                "docker run -p 8080:80 x; docker login -p CANARYdocker88 -u me r",
                format!("docker run -p {r} x; docker login -p {r} -u me r"),
            ),
            (
                "sshpass -p 'pw 1' ssh h | redis-cli -a hunter2 ping",
                format!("sshpass -p '{r}' ssh h | redis-cli -a {r} ping"),
            ),
            (
                "smbclient //h/s -U bob%hunter2; smbclient //h/s -Ualice%pw2 -U carol",
                format!("smbclient //h/s -U bob%{r}; smbclient //h/s -Ualice%{r} -U carol"),
            ),
            (
                // `-pass` names a password: its value goes whole
                "openssl enc -aes256 -pass pass:hunter2 -passout PASS:x2 -passin env:PW",
                format!("openssl enc -aes256 -pass {r} -passout PASS:{r} -passin env:PW"),
            ),
            (
                "curl -u alice --pass hunter2 --oauth2-bearer tok123 -b 'sid=abc' https://h",
                format!("curl -u alice --pass {r} --oauth2-bearer {r} -b '{r}' https://h"),
            ),
            (
                "curl -bsid=abc https://h; curl --cookie 'a=b' https://h; mkdir -b x",
                format!("curl -b{r} https://h; curl --cookie '{r}' https://h; mkdir -b x"),
            ),
            (
                "echo hunter2 | sudo -S apt update; echo -n 'pw 2' | sudo -kS id; echo hi | cat",
                format!("echo {r} | sudo -S apt update; echo -n '{r}' | sudo -kS id; echo hi | cat"),
            ),
            (
                "printf 'ann:pw3' | chpasswd; echo tok4 | docker login --password-stdin -u me r",
                format!("printf '{r}' | chpasswd; echo {r} | docker login --password-stdin -u me r"),
            ),
            (
                "sudo -S id <<< hunter2; sudo id <<< notapw",
                format!("sudo -S id <<< {r}; sudo id <<< notapw"),
            ),
            (
                "export PASSWORD=$'hunter2'; mysql --password=$'hunter3' db; TOKEN=$\"t0k\" ./d.sh; echo $PASSWORD",
                format!("export PASSWORD=$'{r}'; mysql --password=$'{r}' db; TOKEN=$\"{r}\" ./d.sh; echo $PASSWORD"),
            ),
            (
                "htpasswd -bc .htpasswd admin hunter2; htpasswd -nbB bob 'pw 5'; htpasswd -c f u",
                format!("htpasswd -bc .htpasswd admin {r}; htpasswd -nbB bob '{r}'; htpasswd -c f u"),
            ),
            (
                "keytool -list -storepass hunter2 -keypass hunter3",
                format!("keytool -list -storepass {r} -keypass {r}"),
            ),
            (
                "zip -P hunter2 a.zip f; unzip -P hunter2 a.zip; 7z a -phunter2 a.7z f",
                format!("zip -P {r} a.zip f; unzip -P {r} a.zip; 7z a -p{r} a.7z f"),
            ),
            (
                "ssh-keygen -t ed25519 -N hunter2 -f k; openssl enc -k hunter2 -in f",
                format!("ssh-keygen -t ed25519 -N {r} -f k; openssl enc -k {r} -in f"),
            ),
            (
                "https://h/x?X-Amz-Signature=abc123&sig=def&jwt=ghi&sessionid=jkl&page=2",
                format!("https://h/x?X-Amz-Signature={r}&sig={r}&jwt={r}&sessionid={r}&page=2"),
            ),
            (
                "Ocp-Apim-Subscription-Key: abc123\nX-Session-Id: s1\nX-Signature: v",
                format!("Ocp-Apim-Subscription-Key: {r}\nX-Session-Id: {r}\nX-Signature: {r}"),
            ),
            (
                "<login><user>ann</user><password>hunter2</password><ns:apiKey>k1</ns:apiKey></login>",
                format!("<login><user>ann</user><password>{r}</password><ns:apiKey>{r}</ns:apiKey></login>"),
            ),
            // short names only as a whole: `compass`, `design`, `spin` keep their values
            (
                "pass=hunter2 pwd=hunter3 compass=north design=flat",
                format!("pass={r} pwd={r} compass=north design=flat"),
            ),
            (
                "gpg --batch --passphrase hunter2 -c f",
                format!("gpg --batch --passphrase {r} -c f"),
            ),
            (
                "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY",
                format!("aws configure set aws_secret_access_key {r}"),
            ),
            // prose keeps its words
            (
                "echo the password is required; the token expired",
                "echo the password is required; the token expired".into(),
            ),
            (
                "tool --api-key 'k e y' --verbose",
                format!("tool --api-key '{r}' --verbose"),
            ),
            (
                "git clone https://alice:s3cret@github.com/o/r.git",
                format!("git clone https://alice:{r}@github.com/o/r.git"),
            ),
            (
                "psql postgres://app:p%40ss@db:5432/x",
                format!("psql postgres://app:{r}@db:5432/x"),
            ),
            (
                "DATABASE_URL=postgres://u:pw@h/db ./run",
                format!("DATABASE_URL=postgres://u:{r}@h/db ./run"),
            ),
            (
                "git push https://ghp_0123456789abcdefghijABCD@github.com/o/r",
                format!("git push https://{r}@github.com/o/r"),
            ),
            ("ssh://git@github.com/o/r", "ssh://git@github.com/o/r".into()),
            (
                "curl -u admin:hunter2 http://x",
                format!("curl -u admin:{r} http://x"),
            ),
            (
                "curl --user=admin:hunter2 http://x",
                format!("curl --user=admin:{r} http://x"),
            ),
            (
                "curl 'https://api.x.com/v1?access_token=abcdef123&page=2'",
                format!("curl 'https://api.x.com/v1?access_token={r}&page=2'"),
            ),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nAWS_REGION=eu-west-1\nSTRIPE=sk_live_0123456789abcdefABCD\n",
                format!("AWS_SECRET_ACCESS_KEY={r}\nAWS_REGION=eu-west-1\nSTRIPE={r}\n"),
            ),
            (
                "{\"user\": \"bob\", \"password\": \"hunter2\", \"n\": 1}",
                format!("{{\"user\": \"bob\", \"password\": \"{r}\", \"n\": 1}}"),
            ),
            (
                "{'api_key': 'abc', 'x': 1}",
                format!("{{'api_key': '{r}', 'x': 1}}"),
            ),
            ("password: hunter2\nuser: bob", format!("password: {r}\nuser: bob")),
            (
                "echo AKIAABCDEFGHIJKLMNOP > creds",
                format!("echo {r} > creds"),
            ),
            (
                "key: xoxb-123456789012-abcdefghij",
                format!("key: {r}"),
            ),
            (
                "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\ny",
                format!("x\n{r}\ny"),
            ),
            (
                "cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow",
                format!("cat <<EOF\n{r}"),
            ),
            (
                "MIIEow\n-----END PRIVATE KEY-----\ntail",
                format!("{r}\ntail"),
            ),
            (
                "curl -H 'Authorization: Bearer '$TOKEN x",
                "curl -H 'Authorization: Bearer '$TOKEN x".into(),
            ),
            ("TOKEN=$GH_TOKEN gh api", "TOKEN=$GH_TOKEN gh api".into()),
            (
                "the bearer of this letter; basic tokens",
                "the bearer of this letter; basic tokens".into(),
            ),
            ("risk-assessment-document-final", "risk-assessment-document-final".into()),
            ("pip install sk-learn", "pip install sk-learn".into()),
            ("cargo test --release", "cargo test --release".into()),
            ("", String::new()),
            ("ünïcödé password=pässwörd ok", format!("ünïcödé password={r} ok")),
            // one secret found by two shapes (a named value, a PEM block) is one marker
            (
                "password: -----BEGIN RSA PRIVATE KEY-----\nMIIEow",
                format!("password: {r}"),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    /// Config files, pretty printers and other languages put blanks around the separator
    /// or use another one: each spelling loses its value, prose and comparisons keep theirs.
    #[test]
    fn assignments_with_blanks_or_arrows_lose_their_values() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            // INI, TOML, .properties
            (
                "[db]\npassword = SECRETE3xyzw\napi_key = SECRETE4xyzw\nhost = db.local\n",
                format!("[db]\npassword = {r}\napi_key = {r}\nhost = db.local\n"),
            ),
            ("db_password = SECRETE1xyzw", format!("db_password = {r}")),
            (
                "spring.datasource.password=s3cret\nspring.datasource.password = s3cret two",
                format!("spring.datasource.password={r}\nspring.datasource.password = {r}"),
            ),
            (
                "password\t=\thunter2\nuser\t=\tbob",
                format!("password\t=\t{r}\nuser\t=\tbob"),
            ),
            ("password= hunter2 x", format!("password= {r}")),
            ("password =hunter2", format!("password ={r}")),
            ("token = \"a b\" # set", format!("token = \"{r}\" # set")),
            (
                "passphrase = correct horse battery staple\nkey_password: open sesame",
                format!("passphrase = {r}\nkey_password: {r}"),
            ),
            // YAML-ish and pretty JSON (Jackson, .NET), a tab before the colon
            (
                "password : hunter2\nuser : bob",
                format!("password : {r}\nuser : bob"),
            ),
            (
                "{\n  \"password\" : \"SECRETE6xyzw\",\n  \"user\" : \"bob\"\n}",
                format!("{{\n  \"password\" : \"{r}\",\n  \"user\" : \"bob\"\n}}"),
            ),
            (
                "{\"password\"\t: \"x1\"}",
                format!("{{\"password\"\t: \"{r}\"}}"),
            ),
            (
                "{'api_key' :'k1', 'n': 1}",
                format!("{{'api_key' :'{r}', 'n': 1}}"),
            ),
            // Ruby and PHP hashes, Go's short declaration
            (
                "{\"password\" => \"hunter2\", \"user\" => \"bob\"}",
                format!("{{\"password\" => \"{r}\", \"user\" => \"bob\"}}"),
            ),
            ("['password'=>'hunter2']", format!("['password'=>'{r}']")),
            (
                "{ :api_key => 'k2', token: 't3' }",
                format!("{{ :api_key => '{r}', token: '{r}' }}"),
            ),
            ("apiToken := \"t4\"", format!("apiToken := \"{r}\"")),
            // the scheme word of a header value is kept, a reference too
            (
                "\"Authorization\" => \"Bearer abc123def\"",
                format!("\"Authorization\" => \"Bearer {r}\""),
            ),
            ("password = $DB_PASSWORD", "password = $DB_PASSWORD".into()),
            // comparisons, paths, prose and names that only look alike keep their words
            (
                "if password == confirm or token === '' then",
                "if password == confirm or token === '' then".into(),
            ),
            ("Password :: Hash", "Password :: Hash".into()),
            (
                "the password is required; compass = north; design : flat",
                "the password is required; compass = north; design : flat".into(),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    /// `NAME=Scheme TOKEN` (an INI file's `Authorization=Bearer ...`, a search pattern, a
    /// command line): the token goes and the scheme word stays, as after `Authorization: `.
    /// Each of these leaked its token before (the scheme word was taken for the value).
    #[test]
    fn a_scheme_word_after_an_equals_sign_loses_the_token_after_it() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                "[api]\nAuthorization=Bearer CANARYE1xyz\nurl=https://x\n",
                format!("[api]\nAuthorization=Bearer {r}\nurl=https://x\n"),
            ),
            (
                "Authorization=Bearer CANARYF1xyz",
                format!("Authorization=Bearer {r}"),
            ),
            (
                "token=Bearer CANARYA7xyz ./run.sh; api_key=Bearer k2 x",
                format!("token=Bearer {r} ./run.sh; api_key=Bearer {r} x"),
            ),
            (
                "Authorization=Basic dXNlcjpwYXNz; Authorization=Token t0k; AUTHORIZATION=bearer\tt1",
                format!("Authorization=Basic {r}; Authorization=Token {r}; AUTHORIZATION=bearer\t{r}"),
            ),
            (
                "Authorization=Bearer 'a b' x",
                format!("Authorization=Bearer '{r}' x"),
            ),
            // a scheme word alone, before a reference, a flag or a command's end is the value
            ("TOKEN=Bearer", format!("TOKEN={r}")),
            ("TOKEN=Bearer\nx", format!("TOKEN={r}\nx")),
            (
                "AUTH=token --verbose; TOKEN=Bearer $T; auth=basic && make",
                format!("AUTH={r} --verbose; TOKEN={r} $T; auth={r} && make"),
            ),
            // quoted, the whole value goes as before
            ("token=\"Bearer abc\" x", format!("token=\"{r}\" x")),
            // names that name no secret keep their values
            (
                "mode=basic setup; scheme=Bearer x; kind=token y",
                "mode=basic setup; scheme=Bearer x; kind=token y".into(),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    /// A key-shaped token or a secret's name right after a `\n`, `\t` or `\r` escape (printf,
    /// `echo -e`, JSON carried in a string) is read without the escape's letter glued to it.
    /// Each of these leaked before.
    #[test]
    fn secrets_right_after_a_control_escape_are_cut_out() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                r#"printf "user=bob\nghp_STRADDLE0123456789abcdefghijklmnopq\n" > creds.txt"#,
                format!(r#"printf "user=bob\n{r}\n" > creds.txt"#),
            ),
            (
                r#"echo -e "line1\nsk-proj-STRADDLEabcdefghijklmnop0123456789""#,
                format!(r#"echo -e "line1\n{r}""#),
            ),
            (
                r"printf 'id\tAKIAIOSFODNN7EXAMPLE\n'",
                format!(r"printf 'id\t{r}\n'"),
            ),
            (
                r"printf 'a\rxoxb-123456789012-abcdefghij\r\nglpat-abcdefghij0123456789'",
                format!(r"printf 'a\r{r}\r\n{r}'"),
            ),
            (
                r#"printf '%s\n' x\ngithub_pat_11ABCDEFG0123456789_abcdefghijklmnop"#,
                format!(r#"printf '%s\n' x\n{r}"#),
            ),
            // short names of a secret after `\n` in JSON carried in a string
            // (a one-word value runs past a control escape: `pass=a\nb` hides `b` too)
            (
                r#"{\"a\": \"A=1\npass=hunter2\", \"b\": \"x\tpwd=hunter3\", \"c\": \"\rpass=h4\"}"#,
                format!(
                    r#"{{\"a\": \"A=1\npass={r}\", \"b\": \"x\tpwd={r}\", \"c\": \"\rpass={r}\"}}"#
                ),
            ),
            (
                r#"printf "host=h\ntoken=t0k" "\tpin=1234""#,
                format!(r#"printf "host=h\ntoken={r}" "\tpin={r}""#),
            ),
            // the word as written is still read when the one without the letter holds nothing
            (r"C:\temp\token=abc x", format!(r"C:\temp\token={r} x")),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
        // ordinary words after an escape keep their letters and their text
        for s in [
            r#"printf "name\nskip\ttask\rnpm install\n""#,
            r#"echo -e "a\nsk-learn\takia\npassing\tpinned\ntokens""#,
            r"dir C:\new\test\repo\npass\tpwdx",
            r#"{\"text\": \"line1\nnpass is a word\ntoken expired\"}"#,
        ] {
            assert_eq!(redact_inline(s), s, "{s:?}");
        }
    }

    /// Names of a secret spelled `PASS`, `PW`, `PWD`, `DSN` as their last part, keys named
    /// `*_KEY` with a generated value, more CLI forms, OpenPGP private key blocks and webhook
    /// URLs. Each of these leaked before.
    #[test]
    fn more_secret_names_forms_and_shapes_are_cut_out() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                "export DB_PASS=CANARYF2xyz; ./deploy.sh",
                format!("export DB_PASS={r}; ./deploy.sh"),
            ),
            (
                "export MYSQL_PWD=c1 SMTP_PASS=c2 DB_PW=c3 ADMIN_PWD=c4 smtpPass=c5 db.pw=c6 --db-pass=c7",
                format!("export MYSQL_PWD={r} SMTP_PASS={r} DB_PW={r} ADMIN_PWD={r} smtpPass={r} db.pw={r} --db-pass={r}"),
            ),
            (
                "PGPASSWORD=c8 psql -h db; pw=c9 x",
                format!("PGPASSWORD={r} psql -h db; pw={r} x"),
            ),
            (
                "ENCRYPTION_KEY=CANARYk1 MASTER_KEY=abc ./app",
                format!("ENCRYPTION_KEY={r} MASTER_KEY={r} ./app"),
            ),
            (
                "SIGNING_SEED_KEY=9f86d081884c7d659a2feaa0c55ad015 sort_key=name cache_key=v1",
                format!("SIGNING_SEED_KEY={r} sort_key=name cache_key=v1"),
            ),
            (
                "SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1 ./run",
                format!("SENTRY_DSN={r} ./run"),
            ),
            ("db:\n  db_pass: CANARYy1\n", format!("db:\n  db_pass: {r}\n")),
            ("https://h/x?a=1&db_pass=CANARYq1&b=2", format!("https://h/x?a=1&db_pass={r}&b=2")),
            (
                "curl -H 'X-Access-Key: CANARYh1' -H 'X-Auth-Key: h2' u",
                format!("curl -H 'X-Access-Key: {r}' -H 'X-Auth-Key: {r}' u"),
            ),
            (
                "az login -u bob@x.com -p CANARYaz1; az group list -o table",
                format!("az login -u bob@x.com -p {r}; az group list -o table"),
            ),
            (
                "vault login hvs.CANARYv1; vault login -no-print 's.CANARYv2'",
                format!("vault login {r}; vault login -no-print '{r}'"),
            ),
            (
                "ssh -o 'ProxyCommand=sshpass -p CANARYs1 ssh h' x; sh -c \"mysql -pCANARYm1 db\"",
                format!("ssh -o 'ProxyCommand=sshpass -p {r} ssh h' x; sh -c \"mysql -p{r} db\""),
            ),
            (
                "x\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\ny",
                format!("x\n{r}\ny"),
            ),
            (
                "curl -X POST https://hooks.slack.com/services/T0001/B0002/CANARYslack123 -d '{}'",
                format!("curl -X POST https://hooks.slack.com/services/{r} -d '{{}}'"),
            ),
            (
                "\"url\": \"https://discord.com/api/webhooks/123/CANARYdisc\"",
                format!("\"url\": \"https://discord.com/api/webhooks/{r}\""),
            ),
            (
                "--pw hunter2 --dsn postgres://u@h/db",
                format!("--pw {r} --dsn {r}"),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
        // words that only contain these names, other programs' options, other keys and
        // other URLs and armored blocks keep their text
        for s in [
            "bypass=1 compass=north surpass=x passage=y",
            "cd $PWD; OLDPWD=/tmp; echo $DB_PASS",
            "sort_key=created_at partition_key=user/2024/01 primary_key=id",
            "git -C /x log -p; tar -c -p f; vault status; vault login -method=userpass username=bob",
            "https://hooks.slack.com/help https://discord.com/channels/1/2 https://h/services/a/b",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQENBF\n-----END PGP PUBLIC KEY BLOCK-----",
            "-----BEGIN PGP SIGNATURE-----\nwsBc\n-----END PGP SIGNATURE-----",
            "the PRIVATE KEY is in a vault; PRIVATE KEY",
        ] {
            assert_eq!(redact_inline(s), s, "{s:?}");
        }
    }

    /// A secret inside percent-encoded text (a URL in another's query, a form value holding
    /// a query, double encoding) is found in the decoded text and cut out of the encoded.
    #[test]
    fn secrets_inside_percent_encoded_text_are_cut_out() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                "https://h/login?next=https%3A%2F%2Fa.com%2Fcb%3Faccess_token%3DSECRET9x%26s%3D1",
                format!(
                    "https://h/login?next=https%3A%2F%2Fa.com%2Fcb%3Faccess_token%3D{r}%26s%3D1"
                ),
            ),
            (
                "u=a%26password%3DSECRET8x&v=2",
                format!("u=a%26password%3D{r}&v=2"),
            ),
            (
                "redirect_uri=https%3a%2f%2fa.com%2f%23access_token%3DSECRET7x%26x%3D1",
                format!("redirect_uri=https%3a%2f%2fa.com%2f%23access_token%3D{r}%26x%3D1"),
            ),
            // double encoding, and a value holding escapes of its own
            (
                "q=a%2526token%253DSECRET6x",
                format!("q=a%2526token%253D{r}"),
            ),
            (
                "u=x%26api_key%3Dab%2Fcd%2Bef%26y",
                format!("u=x%26api_key%3D{r}%26y"),
            ),
            // encoded blanks around the separator, userinfo, a JSON body in a form field
            (
                "d=password%20%3D%20SECRET5x",
                format!("d=password%20%3D%20{r}"),
            ),
            (
                "next=https%3A%2F%2Fbob%3ASECRET4x%40h%2Fp",
                format!("next=https%3A%2F%2Fbob%3A{r}%40h%2Fp"),
            ),
            (
                "curl -d 'j=%7B%22password%22%3A%22SECRET3x%22%7D' https://h",
                format!("curl -d 'j=%7B%22password%22%3A%22{r}%22%7D' https://h"),
            ),
            // escapes that hide nothing are left as they are, non-ASCII ones too
            (
                "https://h/search?q=caf%C3%A9%20au%20lait&next=%2Fhome 100%25 %zz %4",
                "https://h/search?q=caf%C3%A9%20au%20lait&next=%2Fhome 100%25 %zz %4".into(),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    /// A secret inside JSON carried in a string (escaped once or twice, a key spelled with
    /// `\u` escapes) is found in the decoded text and cut out of the escaped one whole,
    /// escapes within it included; the text around it stays as it was written.
    #[test]
    fn secrets_inside_backslash_escaped_text_are_cut_out() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (
                r#"curl -d "{\"password\":\"hunter2\"}" http://x"#,
                format!(r#"curl -d "{{\"password\":\"{r}\"}}" http://x"#),
            ),
            (
                r#"{\"api_key\": \"sk-abc\", \"n\": 1}"#,
                format!(r#"{{\"api_key\": \"{r}\", \"n\": 1}}"#),
            ),
            (r"\u0070assword=hunter2 x", format!(r"\u0070assword={r} x")),
            (
                r#"\u0022token\u0022:\u0022abc\u0022"#,
                format!(r#"\u0022token\u0022:\u0022{r}\u0022"#),
            ),
            (r#""token\":\"abc""#, format!(r#""token\":\"{r}""#)),
            // escaped quotes around the value, escapes inside it
            (
                r#"export PASSWORD=\"hunter2\"; echo ok"#,
                format!(r#"export PASSWORD=\"{r}\"; echo ok"#),
            ),
            (
                r#"{\"secret\": \"a\/b\\c\\\"d\u00e9\", \"path\": \"\/tmp\/x\"}"#,
                format!(r#"{{\"secret\": \"{r}\", \"path\": \"\/tmp\/x\"}}"#),
            ),
            (
                r#"{\"Authorization\": \"Bearer abc123def\"}"#,
                format!(r#"{{\"Authorization\": \"Bearer {r}\"}}"#),
            ),
            (
                r#"{\'password\': \'hunter2\'}"#,
                format!(r#"{{\'password\': \'{r}\'}}"#),
            ),
            // an escaped quote inside a quoted value or a word is part of the value
            (
                r#"PASSWORD="\"pw 1\"" TOKEN=ab\"cd x; {"secret": "\"x\""}"#,
                format!(r#"PASSWORD="{r}" TOKEN={r} x; {{"secret": "{r}"}}"#),
            ),
            // JSON escaped twice, and a value holding an escaped quote
            (
                r#"sh -c "curl -d \"{\\\"password\\\":\\\"hunter2\\\"}\" http://x""#,
                format!(r#"sh -c "curl -d \"{{\\\"password\\\":\\\"{r}\\\"}}\" http://x""#),
            ),
            (
                r#"{\\\"token\\\":\\\"ab\\\\\\\"cd\\\"}"#,
                format!(r#"{{\\\"token\\\":\\\"{r}\\\"}}"#),
            ),
            (
                r#"{\"password\":\"hun\\\"ter2\"}"#,
                format!(r#"{{\"password\":\"{r}\"}}"#),
            ),
            // a PEM key's lines joined by `\n` inside a JSON string, under any key or none
            (
                r#"{\"private_key\": \"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\nBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n\", \"n\": 1}"#,
                format!(r#"{{\"private_key\": \"{r}\", \"n\": 1}}"#),
            ),
            (
                r#"{\"k\": \"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n\"}"#,
                format!(r#"{{\"k\": \"{r}\n\"}}"#),
            ),
            // a value with a control escape is read whole
            (
                r#"{\"password\":\"line1\nline2\"}"#,
                format!(r#"{{\"password\":\"{r}\"}}"#),
            ),
            // escapes inside percent-encoded text, and percent-encoded text inside escaped
            (
                r#"{\"next\":\"https%3A%2F%2Fa.com%2Fcb%3Faccess_token%3DSECRET9x\"}"#,
                format!(r#"{{\"next\":\"https%3A%2F%2Fa.com%2Fcb%3Faccess_token%3D{r}\"}}"#),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    /// Backslashes in ordinary text (paths, regular expressions, escapes in an echo line,
    /// JSON without a secret) hide nothing: the text is kept as it is.
    #[test]
    fn backslashes_in_ordinary_text_are_kept() {
        for s in [
            r"dir C:\new\test\tokens\x.txt",
            r"copy C:\Users\bob\notes.txt D:\backup\",
            r"grep -E '\d{3}-\d{4}\s+\w+' f.txt",
            r"sed 's/\/usr\/local/\/opt/g' f",
            r#"echo "line1\nline2\tcol" | tr '\n' ' '"#,
            r#"printf 'password is required\n'"#,
            r#"echo \"the token expired\""#,
            r#"curl -d "{\"user\":\"bob\",\"n\":1,\"path\":\"C:\\\\new\"}" http://x"#,
            r#"{\"text\": \"caf\u00e9 \ud83d\ude00\", \"count\": 100}"#,
            r"\u0041\u00e9\\\\",
        ] {
            assert_eq!(redact_inline(s), s, "{s:?}");
        }
    }

    /// Malformed escapes (short `\u`, a lone surrogate, a trailing backslash) neither panic
    /// nor hide a secret that follows them.
    #[test]
    fn malformed_escapes_neither_panic_nor_hide_a_secret() {
        let r = REDACTED;
        let table: &[(&str, String)] = &[
            (r"\u12", r"\u12".into()),
            ("x\\", "x\\".into()),
            ("\\", "\\".into()),
            (r"\uD800", r"\uD800".into()),
            (r"\uDC00\uD800\uD800", r"\uDC00\uD800\uD800".into()),
            (r"\ud83d\ude00", r"\ud83d\ude00".into()),
            (
                r#"{\"password\":\"\uD800x\"} \u12 \"token\":\"y\"\"#,
                format!(r#"{{\"password\":\"{r}\"}} \u12 \"token\":\"{r}\"\"#),
            ),
            (
                r"password=\u12 token=\uD800 \",
                format!(r"password={r} token={r} \"),
            ),
        ];
        for (input, expected) in table {
            assert_eq!(&redact_inline(input), expected, "{input:?}");
        }
    }

    proptest::proptest! {
        /// Any text of the characters escapes are made of is redacted without a panic, and
        /// what the redaction keeps is the original's text, in order, between its markers.
        #[test]
        fn any_escaped_text_is_redacted_without_a_panic(
            s in proptest::string::string_regex(
                r#"(\\|\\\\|\\"|\\u|\\uD8|\\uDC00|\\u0070|\\n|\\/|\\'|"|'|:|=| |, |\{|\}|[0-9a-fD]|password|token|Bearer |é|%3D|-----BEGIN PRIVATE KEY-----|\\t|\\r|ghp_0123456789abcdef|=Bearer |_KEY=|vault login |https://hooks\.slack\.com/services/|PRIVATE KEY BLOCK-----){0,24}"#
            ).unwrap()
        ) {
            let out = redact_inline(&s);
            let mut at = 0;
            for kept in out.split(REDACTED) {
                let found = s[at..].find(kept);
                proptest::prop_assert!(found.is_some(), "{:?} kept {:?}", s, out);
                at += found.unwrap_or(0) + kept.len();
            }
            let _ = redact_inline(&out);
        }
    }

    /// Arbitrary text never panics and never grows a secret back: the output of a second pass
    /// is the output of the first.
    #[test]
    fn redaction_is_total_and_idempotent() {
        let pieces = [
            "password=",
            "=",
            ":",
            "'",
            "\"",
            "\\",
            "--token",
            " ",
            "\n",
            "https://",
            "@",
            "a:b@",
            "sk-",
            "0123456789abcdef",
            "Bearer ",
            "-----BEGIN X PRIVATE KEY-----",
            "-----END X PRIVATE KEY-----",
            "é",
            "$",
            "-u",
            "x",
            "%3D",
            "%26token",
            "%25",
            " : ",
            " => ",
            "%C3%A9",
            "\\\"",
            "\\\\\\\"",
            "\\u0070assword",
            "\\uD800",
            "\\u12",
            "\\n",
            "\\/",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..5000 {
            let mut s = String::new();
            for _ in 0..(seed % 12) {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                s.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let once = redact_inline(&s).into_owned();
            assert_eq!(redact_inline(&once), once, "{s:?}");
        }
    }
}
