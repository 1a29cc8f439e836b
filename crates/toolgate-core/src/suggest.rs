//! "Did you mean": the known name closest to one a model sent (an argument, a tool, a file).

/// How near `sent` is to `known`, from 0 to 2, when it is near enough to be a likely slip:
/// the same once case, `_` and `-` are ignored (`timeoutMs` for `timeout_ms`: 2), one a
/// prefix of the other (`timeout`: above 1), within a small edit distance, transpositions
/// counted as one edit (1 for short names, 2 from 6 characters: `scr` for `src`, `timout_ms`),
/// or alike by Jaro-Winkler similarity (at least 0.85). `None` otherwise.
pub fn nearness(sent: &str, known: &str) -> Option<f64> {
    let (a, b) = (fold(sent), fold(known));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    if a == b {
        return Some(2.0);
    }
    if other_meaning(&a, &b) || other_meaning(&b, &a) {
        return None;
    }
    let jw = strsim::jaro_winkler(&a, &b);
    if b.starts_with(&a) || a.starts_with(&b) {
        return Some(1.0 + jw / 10.0);
    }
    let edits = strsim::damerau_levenshtein(&a, &b);
    let allowed = if a.chars().count().max(b.chars().count()) >= 6 {
        2
    } else {
        1
    };
    (edits <= allowed || jw >= 0.85).then_some(jw.max(0.85))
}

/// The name of `known` nearest to `name` ([`nearness`]), when one is near.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .filter_map(|k| nearness(name, k).map(|n| (n, k)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// Prefixes that make a name say something else than the name without them: a negation
/// (`no_verify`, `unsafe`, `disable_tls`, `skip_checks`), or a blind copy (`bcc`).
const OTHER_MEANING: [&str; 8] = ["no", "not", "non", "un", "dis", "disable", "skip", "b"];

/// Whether `a` (folded) is `b` (folded) behind a prefix that changes what it means: a model
/// that sent `bcc` must not be steered to `cc` (its blind copies would go to every
/// recipient), nor one that sent `no_verify` to `verify`. Only for names of two characters
/// or more, so a slip of one letter (`rread_file`) is still a slip.
fn other_meaning(a: &str, b: &str) -> bool {
    b.len() >= 2
        && a.strip_suffix(b)
            .is_some_and(|prefix| OTHER_MEANING.contains(&prefix))
}

fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn slips_find_their_name_and_strangers_find_none() {
        let known = [
            "read_file",
            "read_result",
            "write_file",
            "list_dir",
            "timeout_ms",
            "src",
            "cc",
        ];
        for (sent, want) in [
            ("readFile", Some("read_file")),
            ("read-file", Some("read_file")),
            ("read_fil", Some("read_file")),
            ("rread_file", Some("read_file")),
            ("raed_file", Some("read_file")),
            ("timeout", Some("timeout_ms")),
            ("timout_ms", Some("timeout_ms")),
            ("listdir", Some("list_dir")),
            ("scr", Some("src")),
            ("SRC", Some("src")),
            ("delete_everything", None),
            // a prefix that changes the meaning is no slip
            ("bcc", None),
            ("no_src", None),
            ("un-src", None),
            ("disable_timeout_ms", None),
            ("lib", None),
            ("", None),
        ] {
            assert_eq!(closest(sent, known), want, "{sent}");
        }
    }
}
