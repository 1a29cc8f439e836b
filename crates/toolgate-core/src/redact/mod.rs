//! Redaction of secrets in arguments before they are recorded or shown.
//!
//! [`redact`] replaces with `"[REDACTED]"`:
//!
//! - a value whose key names a secret (password, token, secret, authorization, api key,
//!   cookie, credential, private key, ...: [`is_secret_key`]);
//! - a string that as a whole looks like a credential (a bearer token, a PEM private key, or
//!   a key with a well-known prefix such as `sk-`, `ghp_`, `xoxb-`, `AKIA`:
//!   [`looks_like_secret`]);
//! - inside any other string, each secret it holds ([`redact_inline`]): keys of those shapes,
//!   `KEY=value` assignments to secret-looking names (`password = ...`, `"password" : ...`
//!   and `=>` too), `--password=...`, URL userinfo, `Authorization:` headers in command
//!   lines, PEM and OpenPGP private key blocks in a file's content, webhook URLs, and each of
//!   those inside percent-encoded text
//!   (a URL in another URL's query) and inside backslash-escaped text (JSON carried in a
//!   string, escaped once or twice).
//!
//! [`for_audit`] is what the audit keeps: the redacted arguments with each string cut to a
//! bounded head and tail around its length and SHA-256, and each argument's JSON bounded
//! (see [`bound`](for_audit)). Both audit writers (the JSON-lines file and the SQLite store)
//! apply it on their own thread, off the caller's path.

mod bound;
mod escaped;
mod inline;
mod percent;

pub use bound::{
    for_audit, HEAD_BYTES, MAX_ARGUMENTS_BYTES, MAX_ARGUMENT_BYTES, MAX_STRING_BYTES, TAIL_BYTES,
};
pub use inline::redact_inline;

use serde_json::Value;
use std::borrow::Cow;

/// The start of the marker a bounded string carries where bytes were left out:
/// `…[toolgate: N bytes, sha256 HEX, M left out]…`.
pub const MARKER_PREFIX: &str = "toolgate: ";

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

const SECRET_KEY_PARTS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "authorization",
    "apikey",
    "api_key",
    "cookie",
    "credential",
    "private_key",
    "privatekey",
    "session_key",
    "access_key",
    "encryption_key",
    "master_key",
    "auth_key",
    "hmac_key",
    "license_key",
    "sessionid",
    "session_id",
    "signature",
    "signing_key",
    "signingkey",
    "subscription_key",
    "bearer",
    "storepass",
    "keypass",
    "card_number",
    "cardnumber",
    "mfa_code",
    "otp_code",
    "jwt",
];

/// Names of a secret as a whole (ASCII case ignored, leading dashes dropped): too short to
/// look for inside longer names (`pass` is in `compass`, `sig` in `design`).
const SECRET_KEYS: &[&str] = &[
    "pass", "pw", "pwd", "otp", "sig", "cvv", "cvc", "auth", "pin", "dsn",
];

/// Names of a secret as the last part of a longer name, after `_`, `-` or `.` or as its last
/// capitalized word (`DB_PASS`, `MYSQL_PWD`, `db.pw`, `smtpPass`, `SENTRY_DSN`: a DSN's URL
/// holds its key), never inside a word (`bypass`, `compass`).
const SECRET_LAST_PARTS: &[&str] = &["pass", "pw", "pwd", "dsn", "otp"];

/// The last part of a name (see [`SECRET_LAST_PARTS`]): after its last `_`, `-` or `.`, and
/// there from its last capital that follows a small letter (`smtpPass`); `None` when the name
/// is one part.
fn last_part(name: &str) -> Option<&str> {
    let b = name.as_bytes();
    let seg = b
        .iter()
        .rposition(|c| matches!(c, b'_' | b'-' | b'.'))
        .map_or(0, |p| p + 1);
    let camel = (seg + 1..b.len())
        .rev()
        .find(|&i| b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase());
    let from = camel.unwrap_or(seg);
    // `seg` and `camel` are positions of ASCII bytes or just past one: boundaries
    (from > 0).then(|| &name[from..])
}

/// Whether `name` ends in a part `key` after another part (`ENCRYPTION_KEY`, `sort_key`,
/// `appKey`): a key, or an index or a path. Its value is one when it looks generated
/// ([`looks_generated`]).
pub(crate) fn ends_in_key(name: &str) -> bool {
    last_part(name.trim_start_matches('-')).is_some_and(|p| p.eq_ignore_ascii_case("key"))
}

/// Whether `v` looks like a generated key rather than a name, a path or a number: at least 16
/// characters of base64 or hex (`+/=_-` too), with a letter and a digit.
pub(crate) fn looks_generated(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 16
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-'))
        && b.iter().any(u8::is_ascii_digit)
        && b.iter().any(u8::is_ascii_alphabetic)
}

/// Prefixes of well-known key formats (OpenAI and Stripe, GitHub, GitLab, Slack, AWS, Google,
/// Hugging Face, npm, PyPI).
pub(crate) const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "ya29.",
    "hf_",
    "npm_",
    "pypi-",
];

/// Whether `t` is a JSON Web Token (a session or API credential that no prefix marks):
/// three base64url parts joined by dots, the first starting `eyJ` (`{"` encoded), at least
/// 24 characters; the signature may be empty (`alg: none`).
pub(crate) fn is_jwt(t: &str) -> bool {
    // the cheap tests first, and no allocation: every string of a call's arguments is asked
    if t.len() < 24
        || !t.starts_with("eyJ")
        || !t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return false;
    }
    let mut parts = t.split('.');
    let (_, payload, signature) = (parts.next(), parts.next(), parts.next());
    payload.is_some_and(|p| !p.is_empty()) && signature.is_some() && parts.next().is_none()
}

/// Whether a key names a secret (case-insensitive).
pub fn is_secret_key(key: &str) -> bool {
    // ASCII case-insensitive substring search without a lowercase copy (the audit writers run
    // this on every key of every record): the parts are lowercase ASCII, so a window matches
    // exactly where the lowercased key contains the part
    let whole = key.trim_start_matches('-');
    if SECRET_KEYS.iter().any(|k| whole.eq_ignore_ascii_case(k))
        || last_part(whole)
            .is_some_and(|p| SECRET_LAST_PARTS.iter().any(|k| p.eq_ignore_ascii_case(k)))
    {
        return true;
    }
    // `_`, `-` and `.` are one separator (`X-Access-Key`, `api.key`, `session-id`)
    let key = key.as_bytes();
    SECRET_KEY_PARTS.iter().any(|p| {
        key.windows(p.len()).any(|w| {
            w.iter()
                .zip(p.as_bytes())
                .all(|(&a, &b)| a.eq_ignore_ascii_case(&b) || b == b'_' && matches!(a, b'-' | b'.'))
        })
    })
}

/// Whether a string value looks like a credential.
pub fn looks_like_secret(s: &str) -> bool {
    let t = s.trim();
    if t.contains("PRIVATE KEY-----") || t.contains("PRIVATE KEY BLOCK-----") {
        return true;
    }
    // the first 7 characters, lowercased, are "bearer " or start with "basic ": both are
    // ASCII, so comparing bytes ignoring ASCII case is the same test without a copy
    let head = t.as_bytes();
    let starts = |p: &[u8]| {
        head.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    if starts(b"bearer ") || starts(b"basic ") {
        return true;
    }
    is_jwt(t)
        || t.len() >= 16
            && !t.contains(char::is_whitespace)
            && SECRET_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Whether `path` names a file that holds secrets by its name: a dotenv file (`.env`,
/// `.env.local`, ...), a private key or keystore (`*.pem`, `*.key`, `*.p12`, `*.pfx`,
/// `*.keystore`, `id_rsa`, `id_ed25519`, `id_ecdsa`, `id_dsa`), or a credentials file
/// (`.npmrc`, `.pypirc`, `.netrc`, `.git-credentials`, `.htpasswd`, `credentials`,
/// `credentials.json`). ASCII case is ignored; the last path component is compared.
pub fn is_secrets_file(path: &str) -> bool {
    // compared without allocating: it runs for every side-effecting call's ledger preview
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let name = name.trim_end_matches(['.', ' ']);
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    let ends = |e: &str| {
        name.len() >= e.len()
            && name.is_char_boundary(name.len() - e.len())
            && name[name.len() - e.len()..].eq_ignore_ascii_case(e)
    };
    is(".env")
        || (name.len() > 5 && name.is_char_boundary(5) && name[..5].eq_ignore_ascii_case(".env."))
        || [".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"]
            .iter()
            .any(|e| ends(e))
        || [
            "id_rsa",
            "id_ed25519",
            "id_ecdsa",
            "id_dsa",
            ".npmrc",
            ".pypirc",
            ".netrc",
            ".git-credentials",
            ".htpasswd",
            "credentials",
            "credentials.json",
        ]
        .iter()
        .any(|n| is(n))
}

/// The arguments of a call whose `path` names a secrets file ([`is_secrets_file`]) with every
/// other top-level string redacted line by line: a `KEY=value` or `key: value` line keeps its
/// key (`DB_PASSWORD=[REDACTED]`), any other non-blank line becomes [`REDACTED`]: the text
/// written to or replaced in such a file (`write_file`'s `content`, `edit_file`'s
/// `old_string` and `new_string`) is its secrets, whatever their names. `None` for any other
/// call.
pub fn secrets_file_arguments(arguments: &Value) -> Option<Value> {
    let map = arguments.as_object()?;
    let path = map.get("path")?.as_str()?;
    if !is_secrets_file(path) {
        return None;
    }
    let mut out = map.clone();
    for (k, v) in out.iter_mut() {
        if k == "path" {
            continue;
        }
        if let Value::String(s) = v {
            // its size kept, its text beyond the first 64 KiB left out (all of it would be
            // redacted): the redaction costs the same whatever was sent
            let len = s.len();
            let shown = &s[..crate::results::floor_char_boundary(s, SECRETS_FILE_TEXT_BYTES)];
            let mut redacted = shown
                .split('\n')
                .map(|line| {
                    if line.trim().is_empty() {
                        return line.to_string();
                    }
                    match line.find(['=', ':']) {
                        Some(at) if at > 0 => format!("{}{REDACTED}", &line[..=at]),
                        _ => REDACTED.to_string(),
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            if len > shown.len() {
                redacted.push_str(&format!(
                    "\n[{MARKER_PREFIX}{len} bytes of a secrets file's text, {} left out]",
                    len - shown.len()
                ));
            }
            *s = redacted;
        }
    }
    Some(Value::Object(out))
}

/// The most bytes of a secrets file's text [`secrets_file_arguments`] reads.
const SECRETS_FILE_TEXT_BYTES: usize = 64 * 1024;

/// Whether `map` is a name and value pair whose name names a secret (`{"name":
/// "DB_PASSWORD", "value": "..."}`: Kubernetes' `env`, ECS task definitions, CloudFormation's
/// `ParameterKey`/`ParameterValue`), so its value field is one.
pub(crate) fn names_a_secret(map: &serde_json::Map<String, Value>) -> bool {
    map.len() <= 8
        && map.iter().any(|(k, v)| {
            matches!(
                k.as_str(),
                "name" | "Name" | "key" | "Key" | "ParameterKey" | "variable"
            ) && v.as_str().is_some_and(is_secret_key)
        })
}

/// Whether `key` is the value field of a name and value pair ([`names_a_secret`]).
pub(crate) fn is_value_field(key: &str) -> bool {
    matches!(key, "value" | "Value" | "ParameterValue")
}

/// Whether the value `v` under the key `k` is a secret by its key: the key names a secret
/// ([`is_secret_key`]), or it names a key (`ENCRYPTION_KEY`, `cacheKey`: [`ends_in_key`]) and
/// `v` is a string that looks generated.
pub(crate) fn is_secret_field(k: &str, v: &Value) -> bool {
    is_secret_key(k) || ends_in_key(k) && v.as_str().is_some_and(looks_generated)
}

/// Redacts secrets in place, at every depth (see the module docs).
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let named = names_a_secret(map);
            for (k, v) in map.iter_mut() {
                if (is_secret_field(k, v) || named && is_value_field(k)) && !v.is_null() {
                    *v = Value::String(REDACTED.into());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) => {
            if let Some(r) = redact_str(s) {
                *s = r;
            }
        }
        _ => {}
    }
}

/// The redacted form of one string, or `None` when it holds no secret: [`REDACTED`] when it
/// looks like a credential as a whole, else with each secret inside it replaced.
pub fn redact_str(s: &str) -> Option<String> {
    if looks_like_secret(s) {
        return Some(REDACTED.into());
    }
    match redact_inline(s) {
        Cow::Borrowed(_) => None,
        Cow::Owned(r) => Some(r),
    }
}

/// The idempotency key as the audit keeps it: [`redact_str`] of it, borrowed when it holds no
/// secret (a caller may send any text as a key, a token too). The ledger keeps the key itself,
/// so replays and `toolgate ledger` find their entry by it; only the audit's copy is redacted.
pub fn idempotency_key(key: &str) -> Cow<'_, str> {
    match redact_str(key) {
        Some(r) => Cow::Owned(r),
        None => Cow::Borrowed(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_by_key_and_by_look() {
        let mut v = json!({
            "path": "src/main.rs",
            "password": "hunter2",
            "headers": {"Authorization": "Basic abc", "X-Api-Key": "k"},
            "nested": [{"GITHUB_TOKEN": "x"}, "sk-abcdefghijklmnop1234", "Bearer abc.def"],
            "pem": "-----BEGIN RSA PRIVATE KEY-----\nMII...",
            "note": "sk- is a prefix",
            "session": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "dotted": "eyJ.a.b"
        });
        redact(&mut v);
        assert_eq!(
            v,
            json!({
                "path": "src/main.rs",
                "password": REDACTED,
                "headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED},
                "nested": [{"GITHUB_TOKEN": REDACTED}, REDACTED, REDACTED],
                "pem": REDACTED,
                "note": "sk- is a prefix",
                "session": REDACTED,
                "dotted": "eyJ.a.b"
            })
        );
    }
    /// Keys spelled with `PASS`, `PW`, `PWD` or `DSN` as their last part, `-` or `.` for `_`,
    /// and keys named `*_key` holding a generated value: each leaked before.
    #[test]
    fn more_secret_names_as_keys() {
        let mut v = json!({
            "DB_PASS": "p1", "mysqlPwd": "p2", "smtp.pw": "p3", "SENTRY_DSN": "https://k@h/1",
            "X-Access-Key": "p4", "api.key": "p5", "ENCRYPTION_KEY": "p6",
            "dataKey": "9f86d081884c7d659a2feaa0c55ad015",
            "env": [{"name": "MYSQL_PWD", "value": "p7"}],
            "sort_key": "created_at", "key": "9f86d081884c7d659a2feaa0c55ad015",
            "s3_key": "uploads/2024/report-final.pdf", "bypass": "x", "compass": "north",
            "PWD": "/home/bob", "pass_count": 3
        });
        redact(&mut v);
        assert_eq!(
            v,
            json!({
                "DB_PASS": REDACTED, "mysqlPwd": REDACTED, "smtp.pw": REDACTED,
                "SENTRY_DSN": REDACTED, "X-Access-Key": REDACTED, "api.key": REDACTED,
                "ENCRYPTION_KEY": REDACTED, "dataKey": REDACTED,
                "env": [{"name": "MYSQL_PWD", "value": REDACTED}],
                "sort_key": "created_at", "key": "9f86d081884c7d659a2feaa0c55ad015",
                "s3_key": "uploads/2024/report-final.pdf", "bypass": "x", "compass": "north",
                "PWD": REDACTED, "pass_count": 3
            })
        );
    }

    #[test]
    fn an_idempotency_key_that_is_a_secret_is_redacted() {
        for k in [
            "K-0001",
            "tg-0123456789abcdef0123456789abcdef",
            "order-42:retry",
            "",
        ] {
            assert!(
                matches!(idempotency_key(k), Cow::Borrowed(b) if b == k),
                "{k}"
            );
        }
        assert_eq!(
            idempotency_key("ghp_CANARYH1abcdefghijklmnop0123"),
            REDACTED
        );
        assert_eq!(idempotency_key("AKIAIOSFODNN7EXAMPLE"), REDACTED);
        assert_eq!(
            idempotency_key("run-1-token=abc"),
            format!("run-1-token={REDACTED}")
        );
    }

    #[test]
    fn a_secrets_files_text_is_redacted_whatever_its_keys_are_named() {
        for p in [
            ".env",
            "config/.env.local",
            "certs/server.PEM",
            "id_rsa",
            "a/.npmrc",
        ] {
            assert!(is_secrets_file(p), "{p}");
        }
        for p in [
            "src/env.rs",
            ".envrc",
            "id_rsa.pub",
            "README.md",
            "environment.yml",
        ] {
            assert!(!is_secrets_file(p), "{p}");
        }
        // names in other scripts are compared without a panic on a character boundary
        assert!(is_secrets_file("clés/naïve.PEM"));
        for p in ["é", "éé.pe", ".envé", "", "/", "日本語.ke"] {
            assert!(!is_secrets_file(p), "{p}");
        }
        let edit = json!({"path": "config/.env", "old_string": "CanaryDbPass!42",
                          "new_string": "NewPass!43\nSTRIPE=sk_live_x\n", "replace_all": true});
        assert_eq!(
            secrets_file_arguments(&edit).unwrap(),
            json!({"path": "config/.env", "old_string": REDACTED,
                   "new_string": "NewPass!43\nSTRIPE=[REDACTED]\n".replace("NewPass!43", REDACTED),
                   "replace_all": true})
        );
        assert_eq!(
            secrets_file_arguments(&json!({"path": "src/a.rs", "content": "x"})),
            None
        );
    }

    /// The predicates as first written, with lowercase copies: the copy-free ones must agree.
    fn is_secret_key_by_copy(key: &str) -> bool {
        let lower = key.to_ascii_lowercase().replace(['-', '.'], "_");
        SECRET_KEY_PARTS.iter().any(|p| lower.contains(p))
    }

    fn has_auth_scheme_by_copy(s: &str) -> bool {
        let head: String = s
            .trim()
            .chars()
            .take(7)
            .collect::<String>()
            .to_ascii_lowercase();
        head == "bearer " || head.starts_with("basic ")
    }

    #[test]
    fn copy_free_predicates_agree_with_lowercase_copies() {
        let keys = [
            "",
            "p",
            "token",
            "TOKEN",
            "ToKeN",
            "x_tokens",
            "tok",
            "Pass\u{e9}word",
            "PASSWORD",
            "pass word",
            "X-Api-Key",
            "api_KEY",
            "\u{130}token",
            "\u{e9}secret\u{e9}",
            "cookies",
            "Private_Key",
            "privatekey",
            "session",
            "session_key",
            "accessKey",
            "access_key",
            "path",
            "\u{1f511}",
            "credentials",
            "Authorization",
            "X-Access-Key",
            "api.key",
            "session-id",
            "Ocp-Apim-Subscription-Key",
            "master-keys",
            "a_b.c-d",
        ];
        for k in keys {
            assert_eq!(is_secret_key(k), is_secret_key_by_copy(k), "{k:?}");
        }
        let values = [
            "",
            "bearer",
            "bearer ",
            "Bearer x",
            "BEARER\tx",
            "b\u{e9}arer x",
            " bearer x ",
            "Basic",
            "basic ",
            "BaSiC abc",
            "basic\u{e9}",
            "\u{e9}basic x",
            "bearerx",
            "basics x",
            "hello",
            "\u{1f511}\u{1f511}\u{1f511}\u{1f511}\u{1f511}\u{1f511}\u{1f511}\u{1f511}",
        ];
        for v in values {
            // none of these values is a credential on other grounds (prefix, PEM), so
            // looks_like_secret says yes exactly when the scheme test by copy does
            assert_eq!(looks_like_secret(v), has_auth_scheme_by_copy(v), "{v:?}");
        }
    }
}
