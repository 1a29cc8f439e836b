//! `sed` and `awk`: programs whose script is data until it runs a command. A `sed` script's
//! `e COMMAND` is a shell line (read by the caller); `e` alone and `s///e` run the pattern
//! space, and a script this cannot read (or one from a file) is code that cannot be read. An
//! `awk` program that calls `system`, opens a pipe (`|`, `|&`) or loads an extension is code
//! that cannot be read, unless `--sandbox` forbids all of that.

use super::{Reading, Run};

/// Reads `words` when `name` is sed or awk: `true` when it is (the reading is in `r`).
pub(super) fn read(name: &str, words: &[&str], r: &mut Reading) -> bool {
    match name {
        "sed" | "gsed" => sed(words, r),
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => awk(name, words, r),
        _ => return false,
    }
    true
}

/// The scripts of a sed command line (each with the index of the word holding it), or the
/// index of a word naming a script file.
fn sed(words: &[&str], r: &mut Reading) {
    let sandbox = words.contains(&"--sandbox");
    let mut scripts: Vec<(usize, &str)> = Vec::new();
    let mut i = 1;
    let mut from_options = false;
    let mut positional = None;
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            if !from_options && positional.is_none() && i + 1 < words.len() {
                positional = Some(i + 1);
            }
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (opt, value) = match long.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (long, None),
            };
            // getopt takes a long option's unambiguous prefix (`--expr`, `--fi`)
            const LONG: [&str; 3] = ["expression", "file", "line-length"];
            let opt = match LONG
                .iter()
                .filter(|l| l.starts_with(opt))
                .collect::<Vec<_>>()[..]
            {
                [only] if !opt.is_empty() => *only,
                _ => opt,
            };
            match (opt, value) {
                ("expression", Some(v)) => {
                    scripts.push((i, v));
                    from_options = true;
                }
                ("expression", None) => {
                    if let Some(v) = words.get(i + 1) {
                        scripts.push((i + 1, v));
                    }
                    from_options = true;
                    i += 1;
                }
                ("file", v) => {
                    let at = if v.is_some() { i } else { i + 1 };
                    r.code_at(at.min(words.len()), "sed reads its script from a file");
                    from_options = true;
                    i += usize::from(v.is_none());
                }
                ("line-length", None) => i += 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            // a cluster of short options: `-n`, `-ne SCRIPT`, `-i.bak`, `-l 80`
            let cluster = &w[1..];
            for (k, c) in cluster.char_indices() {
                let rest = &cluster[k + c.len_utf8()..];
                match c {
                    'e' | 'f' | 'l' => {
                        let (at, value) = if rest.is_empty() {
                            i += 1;
                            (i, words.get(i).copied())
                        } else {
                            (i, Some(rest))
                        };
                        match c {
                            'e' => {
                                if let Some(v) = value {
                                    scripts.push((at, v));
                                }
                                from_options = true;
                            }
                            'f' => {
                                r.code_at(at.min(words.len()), "sed reads its script from a file");
                                from_options = true;
                            }
                            _ => {}
                        }
                        break;
                    }
                    'i' => break, // the rest is the backup suffix
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        if !from_options && positional.is_none() {
            positional = Some(i);
        }
        i += 1;
    }
    if !from_options {
        match positional {
            Some(at) => scripts.push((at, words[at])),
            None => return,
        }
    }
    for (at, script) in scripts {
        if let Err(why) = sed_script(script, &mut r.runs) {
            if !sandbox {
                r.code_at(at, why);
            }
        }
    }
    if sandbox {
        r.runs.clear();
    }
}

/// Reads a GNU sed script: every `e COMMAND` becomes a [`Run::Line`]; `Err` says why it runs
/// what cannot be read (`e` alone, `s///e`) or could not be read.
fn sed_script(script: &str, runs: &mut Vec<Run>) -> Result<(), &'static str> {
    const UNREAD: &str = "sed's script holds a command toolgate cannot read";
    let s: Vec<char> = script.chars().collect();
    let mut p = 0;
    let to_eol = |p: &mut usize| {
        let start = *p;
        while *p < s.len() && s[*p] != '\n' {
            *p += 1;
        }
        start
    };
    loop {
        while p < s.len() && (s[p].is_whitespace() || s[p] == ';') {
            p += 1;
        }
        if p >= s.len() {
            return Ok(());
        }
        address(&s, &mut p)?;
        while p < s.len() && (s[p] == ' ' || s[p] == '\t') {
            p += 1;
        }
        if p < s.len() && s[p] == ',' {
            p += 1;
            if p < s.len() && (s[p] == '+' || s[p] == '~') {
                p += 1;
            }
            address(&s, &mut p)?;
        }
        while p < s.len() && (s[p] == ' ' || s[p] == '\t' || s[p] == '!') {
            p += 1;
        }
        let Some(&cmd) = s.get(p) else {
            return Err(UNREAD);
        };
        p += 1;
        match cmd {
            '{' => continue,
            '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => {}
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' => {
                // text or a file name to the end of the line (`a\` continues on the next)
                loop {
                    to_eol(&mut p);
                    if p > 0 && s[p - 1] == '\\' && p < s.len() {
                        p += 1;
                        continue;
                    }
                    break;
                }
                continue;
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while p < s.len() && s[p] != '\n' && s[p] != ';' {
                    p += 1;
                }
                continue;
            }
            'l' | 'L' | 'q' | 'Q' => {
                while p < s.len() && (s[p] == ' ' || s[p].is_ascii_digit()) {
                    p += 1;
                }
            }
            'e' => {
                let start = to_eol(&mut p);
                let line: String = s[start..p].iter().collect();
                let line = line.trim();
                if line.is_empty() {
                    return Err("sed's `e` command runs the pattern space as a shell command");
                }
                runs.push(Run::Line(line.to_string()));
                continue;
            }
            's' | 'y' => {
                let delim = *s.get(p).ok_or(UNREAD)?;
                if delim == '\n' || delim == '\\' {
                    return Err(UNREAD);
                }
                p += 1;
                for _ in 0..2 {
                    delimited(&s, &mut p, delim).ok_or(UNREAD)?;
                }
                if cmd == 's' {
                    while let Some(&f) = s.get(p) {
                        match f {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => p += 1,
                            'e' => {
                                return Err(
                                    "sed's `s///e` runs the pattern space as a shell command",
                                )
                            }
                            'w' => {
                                to_eol(&mut p);
                                break;
                            }
                            _ => break,
                        }
                    }
                }
            }
            _ => return Err(UNREAD),
        }
        while p < s.len() && (s[p] == ' ' || s[p] == '\t') {
            p += 1;
        }
        match s.get(p) {
            None | Some(';' | '\n' | '}' | '#') => {}
            Some(_) => return Err(UNREAD),
        }
    }
}

/// One sed address at `p` (a line number, `$`, `first~step`, `/re/` or `\cREc` with its
/// `I`/`M` flags), or none.
fn address(s: &[char], p: &mut usize) -> Result<(), &'static str> {
    const BAD: &str = "sed's script has an address toolgate cannot read";
    match s.get(*p) {
        Some(c) if c.is_ascii_digit() => {
            while *p < s.len() && (s[*p].is_ascii_digit() || s[*p] == '~') {
                *p += 1;
            }
        }
        Some('$') => *p += 1,
        Some('/') => {
            *p += 1;
            delimited(s, p, '/').ok_or(BAD)?;
            while *p < s.len() && (s[*p] == 'I' || s[*p] == 'M') {
                *p += 1;
            }
        }
        Some('\\') => {
            let delim = *s.get(*p + 1).ok_or(BAD)?;
            *p += 2;
            delimited(s, p, delim).ok_or(BAD)?;
            while *p < s.len() && (s[*p] == 'I' || s[*p] == 'M') {
                *p += 1;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Moves `p` past the next unescaped `delim` (the end of a regex or replacement).
fn delimited(s: &[char], p: &mut usize, delim: char) -> Option<()> {
    while *p < s.len() {
        let c = s[*p];
        *p += 1;
        if c == '\\' {
            *p += 1;
        } else if c == delim {
            return Some(());
        }
    }
    None
}

/// An awk command line: code that cannot be read when the program (or a file of it) can run
/// a command.
fn awk(name: &str, words: &[&str], r: &mut Reading) {
    if words.contains(&"--sandbox") {
        return;
    }
    let mut programs: Vec<(usize, &str)> = Vec::new();
    let mut from_options = false;
    let mut i = 1;
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        let (opt, attached) = if let Some(long) = w.strip_prefix("--") {
            match long.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (long, None),
            }
        } else if w.len() > 2 {
            (&w[1..2], Some(&w[2..]))
        } else {
            (&w[1..], None)
        };
        let value_at = if attached.is_some() { i } else { i + 1 };
        let value = attached.or_else(|| words.get(i + 1).copied());
        let takes_value = matches!(
            opt,
            "F" | "v"
                | "f"
                | "e"
                | "E"
                | "i"
                | "l"
                | "W"
                | "field-separator"
                | "assign"
                | "file"
                | "source"
                | "exec"
                | "include"
                | "load"
        );
        match opt {
            "f" | "file" | "E" | "exec" | "i" | "include" | "l" | "load" => {
                r.code_at(
                    value_at.min(words.len()),
                    format!("{name} runs a program from a file or an extension"),
                );
                from_options = true;
            }
            "e" | "source" => {
                if let Some(v) = value {
                    programs.push((value_at, v));
                }
                from_options = true;
            }
            "W" if value.is_some_and(|v| v.starts_with('e') || v.starts_with("ex")) => {
                r.code_at(
                    value_at,
                    format!("{name} -W exec runs a program from a file"),
                );
                from_options = true;
            }
            _ => {}
        }
        i += if takes_value && attached.is_none() {
            2
        } else {
            1
        };
    }
    if !from_options {
        if let Some(p) = words.get(i) {
            programs.push((i, p));
        }
    }
    for (at, program) in programs {
        if awk_runs(program) {
            r.code_at(
                at,
                format!("the {name} program can run a command (`system`, a pipe or an extension)"),
            );
        }
    }
}

/// Whether an awk program can run a command: `system(`, a pipe (`|` that is not `||`), or
/// `@load`/`@include`.
fn awk_runs(program: &str) -> bool {
    if program.contains("system") || program.contains('@') {
        return true;
    }
    let b = program.as_bytes();
    b.iter()
        .enumerate()
        .any(|(k, &c)| c == b'|' && b.get(k + 1) != Some(&b'|') && (k == 0 || b[k - 1] != b'|'))
}
