//! Redaction of secrets in arguments before they are recorded.
//!
//! A value is replaced by `"[REDACTED]"` when its key names a secret (password, token, secret,
//! authorization, api key, cookie, credential, private key, ...), or when the string itself
//! looks like a credential (a bearer token, a PEM private key, or a key with a well-known prefix
//! such as `sk-`, `ghp_`, `xoxb-`, `AKIA`).

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

const SECRET_KEY_PARTS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "authorization",
    "apikey",
    "api_key",
    "api-key",
    "cookie",
    "credential",
    "private_key",
    "privatekey",
    "session_key",
    "access_key",
];

const SECRET_PREFIXES: &[&str] = &[
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

/// Whether a key names a secret (case-insensitive).
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    SECRET_KEY_PARTS.iter().any(|p| lower.contains(p))
}

/// Whether a string value looks like a credential.
pub fn looks_like_secret(s: &str) -> bool {
    let t = s.trim();
    if t.contains("PRIVATE KEY-----") {
        return true;
    }
    let lower_head: String = t.chars().take(7).collect::<String>().to_ascii_lowercase();
    if lower_head == "bearer " || lower_head.starts_with("basic ") {
        return true;
    }
    t.len() >= 16
        && !t.contains(char::is_whitespace)
        && SECRET_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Redacts secrets in place, at every depth.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_key(k) && !v.is_null() {
                    *v = Value::String(REDACTED.into());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) if looks_like_secret(s) => *s = REDACTED.into(),
        _ => {}
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
            "note": "sk- is a prefix"
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
                "note": "sk- is a prefix"
            })
        );
    }
}
