//! Whether a word of a command line that is a bash glob pattern (`t[o]uch`, `/usr/bin/tou?h`,
//! `*ouch`) can become a given word when bash expands it.
//!
//! Bash replaces an unquoted word holding `*`, `?` or `[` by the names of the files it matches
//! (bash manual, 3.5.8 "Filename Expansion"), so `/usr/bin/t[o]uch x` runs `/usr/bin/touch x`,
//! and `t[o]uch x` runs `touch` once a file named `touch` exists in the working directory (the
//! line can make one first). Which files exist when the line runs is not known when it is
//! judged, so a rule that restricts treats such a word as every word the pattern matches.
//! The match is bash's (3.5.8.1 "Pattern Matching") over one word: `*` any text, `?` one
//! character, `[...]` one character of a set, with `!` or `^` negating it, ranges and the
//! POSIX classes; a class the matcher does not know (`[[=a=]]`, `[[.a.]]`, an unknown
//! `[[:x:]]`) matches any character, so the answer errs towards "can". A line may turn on
//! `extglob` and `nocaseglob` first: an extended group (`@(..)`, `+(..)`, `!(..)`, `?(..)`,
//! `*(..)`) is taken as any text, and letters match in either case.

/// Whether `word` holds a character bash's filename expansion reads (`*`, `?`, `[`), or an
/// extended glob group (`@(`, `+(`, `!(`).
pub(crate) fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
        || word.contains("@(")
        || word.contains("+(")
        || word.contains("!(")
}

/// Whether the glob `pattern` matches `text` (`prefix == false`), or matches some text that
/// starts with `text` (`prefix == true`: `c?rl*` and `c?r` can both become a word starting
/// with `curl`; `c?r` cannot). Linear in `text` times `pattern` at worst: one backtracking point, the last
/// `*`, as shell matchers keep.
pub(crate) fn could_match(pattern: &str, text: &str, prefix: bool) -> bool {
    let pat = compile(pattern);
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pat.get(p) {
            Some(Elem::Star) => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some(e) if e.matches(text[t]) => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                // the last `*` takes one more character
                star = Some((sp, st + 1));
                p = sp + 1;
                t = st + 1;
            }
            None => return false,
        }
    }
    // the text is used up: what is left of the pattern can match more text (prefix), or
    // must match none
    prefix || pat[p..].iter().all(|e| matches!(e, Elem::Star))
}

/// One element of a pattern.
enum Elem {
    /// `*`.
    Star,
    /// `?`.
    Any,
    /// A literal character.
    Char(char),
    /// `[...]`: the set, and whether it is negated.
    Set(Vec<Item>, bool),
}

/// One member of a bracket expression.
enum Item {
    Char(char),
    Range(char, char),
    /// A POSIX class, by its test; an unknown class or an equivalence class matches any.
    Class(fn(char) -> bool),
}

impl Elem {
    /// Whether the element matches `c`, letters in either case (`nocaseglob`).
    fn matches(&self, c: char) -> bool {
        let cases = [c, lower(c), upper(c)];
        match self {
            Elem::Star => true,
            Elem::Any => true,
            Elem::Char(x) => cases.contains(x) || lower(*x) == lower(c),
            Elem::Set(items, negated) => {
                let hit = cases.iter().any(|&c| {
                    items.iter().any(|i| match i {
                        Item::Char(x) => *x == c,
                        Item::Range(a, b) => (*a..=*b).contains(&c),
                        Item::Class(test) => test(c),
                    })
                });
                hit != *negated
            }
        }
    }
}

/// `c` in lower case when that is one character.
fn lower(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// `c` in upper case when that is one character.
fn upper(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// The elements of `pattern`; a `[` that opens no complete bracket expression is a literal
/// `[`, as in bash.
fn compile(pattern: &str) -> Vec<Elem> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if matches!(chars[i], '@' | '+' | '!' | '?' | '*') && chars.get(i + 1) == Some(&'(') {
            // an extended glob group, up to its matching `)`: any text
            let mut depth = 0usize;
            let close = (i + 1..chars.len()).find(|&j| {
                match chars[j] {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            if let Some(j) = close {
                if !matches!(out.last(), Some(Elem::Star)) {
                    out.push(Elem::Star);
                }
                i = j + 1;
                continue;
            }
        }
        match chars[i] {
            '*' => {
                if !matches!(out.last(), Some(Elem::Star)) {
                    out.push(Elem::Star);
                }
                i += 1;
            }
            '?' => {
                out.push(Elem::Any);
                i += 1;
            }
            '[' => match bracket(&chars, i + 1) {
                Some((set, next)) => {
                    out.push(set);
                    i = next;
                }
                None => {
                    out.push(Elem::Char('['));
                    i += 1;
                }
            },
            c => {
                out.push(Elem::Char(c));
                i += 1;
            }
        }
    }
    out
}

/// The bracket expression whose text starts at `chars[start]` (after its `[`), and the index
/// after its `]`; `None` when no `]` closes it.
fn bracket(chars: &[char], start: usize) -> Option<(Elem, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let first = i;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && i > first {
            return Some((Elem::Set(items, negated), i + 1));
        }
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            let kind = chars[i + 1];
            // `[:alpha:]`, `[=a=]`, `[.a.]`: up to the matching `:]`, `=]` or `.]`
            let close = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == kind && chars[j + 1] == ']');
            if let Some(j) = close {
                let name: String = chars[i + 2..j].iter().collect();
                items.push(Item::Class(if kind == ':' {
                    class(&name)
                } else {
                    |_| true
                }));
                i = j + 2;
                continue;
            }
        }
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            items.push(Item::Range(c, chars[i + 2]));
            i += 3;
        } else {
            items.push(Item::Char(c));
            i += 1;
        }
    }
}

/// The test of the POSIX class `name`; any character for a name bash does not know.
fn class(name: &str) -> fn(char) -> bool {
    match name {
        "alpha" => char::is_alphabetic,
        "digit" => |c| c.is_ascii_digit(),
        "alnum" => char::is_alphanumeric,
        "upper" => char::is_uppercase,
        "lower" => char::is_lowercase,
        "space" => char::is_whitespace,
        "blank" => |c| c == ' ' || c == '\t',
        "punct" => |c| c.is_ascii_punctuation(),
        "xdigit" => |c| c.is_ascii_hexdigit(),
        "cntrl" => char::is_control,
        "word" => |c| c.is_alphanumeric() || c == '_',
        "graph" => |c| !c.is_control() && !c.is_whitespace(),
        "print" => |c| !c.is_control(),
        _ => |_| true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_bash_would() {
        let table: &[(&str, &str, bool)] = &[
            ("t[o]uch", "touch", true),
            ("tou?h", "touch", true),
            ("*ouch", "touch", true),
            ("*", "touch", true),
            ("t*h", "touch", true),
            ("t*h", "touche", false),
            ("[!t]ouch", "touch", false),
            ("[^t]ouch", "touch", false),
            ("[!x]ouch", "touch", true),
            ("[a-z]ouch", "touch", true),
            // letters match in either case (`shopt -s nocaseglob`)
            ("[A-Z]ouch", "touch", true),
            ("Touc[h]", "touch", true),
            ("TOU[C]H", "touch", true),
            ("[!T]ouch", "touch", false),
            ("[0-9]ouch", "touch", false),
            // extended groups (`shopt -s extglob`) are any text
            ("@(tou)ch", "touch", true),
            ("tou!(x)ch", "touch", true),
            ("+(t)ouch", "touch", true),
            ("@(t|x)ouch", "touch", true),
            ("@(to|xx)@(uc|yy)h", "touch", true),
            ("@(a)b", "touch", false),
            ("@(unclosed", "touch", false),
            ("t[[:alpha:]]uch", "touch", true),
            ("t[[:digit:]]uch", "touch", false),
            ("t[[=o=]]uch", "touch", true),
            ("t[[:nonsense:]]uch", "touch", true),
            ("t[]o]uch", "touch", true),
            ("t[]]uch", "touch", false),
            ("[touch", "[touch", true),
            ("t[ouch", "touch", false),
            ("**h", "touch", true),
            ("*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("?", "", false),
            ("*", "", true),
            ("ß?", "ßa", true),
        ];
        for (pattern, text, want) in table {
            assert_eq!(
                could_match(pattern, text, false),
                *want,
                "{pattern} / {text}"
            );
        }
    }

    proptest::proptest! {
        /// Any pattern against any text answers (no panic, no slice out of bounds); a
        /// pattern with no special character matches exactly itself (letters in either case).
        #[test]
        fn any_pattern_answers(pattern in "[a-z\\[\\]!^*?@+()|:=.-]{0,24}", text in "[a-zA-Z.-]{0,16}") {
            let _ = could_match(&pattern, &text, false);
            let _ = could_match(&pattern, &text, true);
            if !pattern.contains(['*', '?', '[', '(']) {
                proptest::prop_assert_eq!(
                    could_match(&pattern, &text, false),
                    pattern.eq_ignore_ascii_case(&text)
                );
            }
        }
    }

    #[test]
    fn a_glob_can_start_with_a_prefix() {
        assert!(could_match("c?r*", "curl", true));
        assert!(!could_match("c?r", "curl", true));
        assert!(could_match("c?rl-x", "curl", true));
        assert!(could_match("?", "c", true));
        assert!(!could_match("?", "curl", true));
        assert!(!could_match("x*", "curl", true));
        assert!(!could_match("c?x", "curl", true));
    }
}
