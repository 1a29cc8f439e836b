//! Secrets are never kept in the configuration: a key that names one is refused, and a
//! `*_env` key must hold the name of an environment variable, not a value.

use crate::problem::{Locator, Problem, Seg};
use toml::de::{DeTable, DeValue};

/// Key names (lower-cased, `-` as `_`) that hold a secret.
const SECRET_WORDS: [&str; 9] = [
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "private_key",
    "credential",
    "authorization",
];

/// Problems for secret-looking keys anywhere in the document (role attributes included).
pub(crate) fn check(loc: &Locator<'_>, root: &DeTable<'_>, out: &mut Vec<Problem>) {
    walk_table(loc, root, &mut Vec::new(), out);
}

fn walk_table(loc: &Locator<'_>, t: &DeTable<'_>, path: &mut Vec<Seg>, out: &mut Vec<Problem>) {
    for (k, v) in t.iter() {
        let key = k.get_ref().to_string();
        path.push(Seg::Key(key.clone()));
        let norm = key.to_ascii_lowercase().replace('-', "_");
        if norm.ends_with("_env") {
            match v.get_ref() {
                DeValue::String(s) if is_env_name(s) => {}
                _ => out.push(loc.at(
                    path,
                    format!(
                        "{key} names the environment variable that holds the secret (like \
                         TOOLGATE_TOKEN: letters, digits and _), never the secret itself"
                    ),
                )),
            }
        } else if SECRET_WORDS.iter().any(|w| norm.contains(w)) && !is_table(v.get_ref()) {
            out.push(loc.at(
                path,
                format!(
                    "{key} looks like a secret, and secrets are never kept in toolgate.toml: put \
                     it in an environment variable and name the variable instead, as \
                     {norm}_env = \"TOOLGATE_{}\"",
                    norm.to_ascii_uppercase()
                ),
            ));
        }
        walk_value(loc, v.get_ref(), path, out);
        path.pop();
    }
}

fn walk_value(loc: &Locator<'_>, v: &DeValue<'_>, path: &mut Vec<Seg>, out: &mut Vec<Problem>) {
    match v {
        DeValue::Table(t) => walk_table(loc, t, path, out),
        DeValue::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                walk_value(loc, x.get_ref(), path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn is_table(v: &DeValue<'_>) -> bool {
    matches!(v, DeValue::Table(_))
}

/// Whether `s` is a plausible environment variable name.
pub(crate) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 128
}
