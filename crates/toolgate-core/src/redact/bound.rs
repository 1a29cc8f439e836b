//! The audit keeps a bounded part of each argument: [`for_audit`].
//!
//! A string longer than [`MAX_STRING_BYTES`] keeps its first [`HEAD_BYTES`] and last
//! [`TAIL_BYTES`] (after redaction, cut on character boundaries) around a marker that gives
//! the original's length in bytes and SHA-256:
//! `head…[toolgate: 11534336 bytes, sha256 3f2a…, 11531264 left out]…tail`. An argument (a
//! top-level value of the arguments object, or the arguments themselves when they are not an
//! object) whose JSON is still longer than [`MAX_ARGUMENT_BYTES`] (a long array, say) becomes
//! one such string made from its redacted JSON; arguments whose JSON is still longer than
//! [`MAX_ARGUMENTS_BYTES`] in all (many keys) become one such string too.

use super::{is_secret_key, redact_str, MARKER_PREFIX, REDACTED};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Strings longer than this many bytes are cut to a head and a tail.
pub const MAX_STRING_BYTES: usize = 4096;
/// Bytes kept from the start of a cut string.
pub const HEAD_BYTES: usize = 2048;
/// Bytes kept from the end of a cut string.
pub const TAIL_BYTES: usize = 1024;
/// The longest JSON an argument keeps, in bytes, before it is cut as a whole.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024;
/// The longest JSON the arguments keep in all, in bytes.
pub const MAX_ARGUMENTS_BYTES: usize = 256 * 1024;

/// The arguments as the audit stores them: secrets redacted (as [`super::redact`] does), each
/// string and each argument bounded (see the module docs). `arguments` itself is not changed:
/// the copy shares nothing with it, and a string past the bound is only copied in part.
pub fn for_audit(arguments: &Value) -> Value {
    let secrets = super::secrets_file_arguments(arguments);
    let arguments = secrets.as_ref().unwrap_or(arguments);
    let out = match arguments {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), argument(k, v)))
                .collect(),
        ),
        other => argument("", other),
    };
    if json_len(&out) > MAX_ARGUMENTS_BYTES {
        return Value::String(cut_json(arguments, &out));
    }
    out
}

/// One argument, `v` under `key`: redacted and bounded.
fn argument(key: &str, v: &Value) -> Value {
    let out = under(key, v);
    if !out.is_string() && json_len(&out) > MAX_ARGUMENT_BYTES {
        return Value::String(cut_json(v, &out));
    }
    out
}

/// `v` as the value of `key`: [`REDACTED`] when the key names a secret (and `v` is not
/// null), else [`bounded`].
fn under(key: &str, v: &Value) -> Value {
    if !v.is_null() && is_secret_key(key) {
        Value::String(REDACTED.into())
    } else {
        bounded(v)
    }
}

/// A redacted copy of `v` with every string within [`MAX_STRING_BYTES`].
fn bounded(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let named = super::names_a_secret(map);
            Value::Object(
                map.iter()
                    .map(|(k, x)| {
                        if named && super::is_value_field(k) && !x.is_null() {
                            (k.clone(), Value::String(REDACTED.into()))
                        } else {
                            (k.clone(), under(k, x))
                        }
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(bounded).collect()),
        Value::String(s) => {
            let redacted = redact_str(s);
            let text = redacted.as_deref().unwrap_or(s);
            Value::String(if text.len() > MAX_STRING_BYTES {
                cut(text, s.len(), &sha256_hex(s.as_bytes()))
            } else {
                text.to_owned()
            })
        }
        other => other.clone(),
    }
}

/// `text` (already redacted) cut to its head and tail around the marker for an original of
/// `len` bytes with SHA-256 `hash`.
fn cut(text: &str, len: usize, hash: &str) -> String {
    let head_end = floor_boundary(text, HEAD_BYTES.min(text.len()));
    let tail_start = ceil_boundary(text, text.len().saturating_sub(TAIL_BYTES).max(head_end));
    let left_out = len.saturating_sub(head_end + (text.len() - tail_start));
    format!(
        "{}…[{MARKER_PREFIX}{len} bytes, sha256 {hash}, {left_out} left out]…{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// A string for an argument whose JSON is too long even bounded: the head and tail of
/// `redacted`'s JSON, with the length and hash of `original`'s JSON.
fn cut_json(original: &Value, redacted: &Value) -> String {
    let original = serde_json::to_string(original).unwrap_or_default();
    let text = serde_json::to_string(redacted).unwrap_or_default();
    cut(&text, original.len(), &sha256_hex(original.as_bytes()))
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The length of `v`'s JSON text, without writing it.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::redact;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use serde_json::Map;

    /// A name and value pair naming a secret has its value redacted, in the audit's bounded
    /// copy and in place alike; one naming anything else keeps it.
    #[test]
    fn a_name_and_value_pair_naming_a_secret_loses_its_value() {
        let v = json!({"body": {"env": [
            {"name": "DB_PASSWORD", "value": "CanaryPw1"},
            {"Name": "LOG_LEVEL", "Value": "debug"},
            {"ParameterKey": "ApiToken", "ParameterValue": "CanaryTok2"},
        ]}});
        let out = bounded(&v);
        let mut in_place = v.clone();
        redact(&mut in_place);
        for r in [&out, &in_place] {
            let env = &r["body"]["env"];
            assert_eq!(env[0]["value"], json!(REDACTED), "{r}");
            assert_eq!(env[0]["name"], json!("DB_PASSWORD"));
            assert_eq!(env[1]["Value"], json!("debug"));
            assert_eq!(env[2]["ParameterValue"], json!(REDACTED));
        }
    }

    #[test]
    fn small_arguments_are_only_redacted() {
        let v = json!({"path": "a", "password": "x", "n": [1, 2], "o": {"token": "t"}});
        let mut expected = v.clone();
        redact(&mut expected);
        assert_eq!(for_audit(&v), expected);
        assert_eq!(for_audit(&json!("Bearer abcdef")), json!(REDACTED));
        assert_eq!(for_audit(&json!(null)), json!(null));
    }

    /// An 11 MiB write_file content keeps 3 KiB and the marker; a secret inside the kept
    /// parts is redacted; the length and hash are the original's.
    #[test]
    fn long_strings_keep_a_head_and_a_tail() {
        let content = format!(
            "OPENAI_API_KEY=sk-proj-0123456789abcdefABCDEF\n{}\nsk_live_0123456789abcdefXYZ",
            "é".repeat(11 * 1024 * 1024 / 2)
        );
        let v = json!({"path": ".env", "content": content});
        let out = for_audit(&v);
        let kept = out["content"].as_str().unwrap();
        assert!(kept.len() < HEAD_BYTES + TAIL_BYTES + 200, "{}", kept.len());
        assert!(
            kept.starts_with(&format!("OPENAI_API_KEY={REDACTED}\n")),
            "{kept:.80}"
        );
        assert!(!kept.contains("sk-proj") && !kept.contains("sk_live"));
        // a secrets file's text is redacted line by line, past 64 KiB only its size is kept
        assert!(
            kept.ends_with(&format!(
                "[toolgate: {} bytes of a secrets file's text, {} left out]",
                content.len(),
                content.len() - 64 * 1024 + 1
            )) || kept.contains(&format!(
                "[toolgate: {} bytes of a secrets file",
                content.len()
            )),
            "{}",
            &kept[kept.len().saturating_sub(120)..]
        );
        assert_eq!(out["path"], ".env");
        // another file's long text keeps its head, tail, size and SHA-256
        let v = json!({"path": "notes.txt", "content": content});
        let kept = for_audit(&v)["content"].as_str().unwrap().to_string();
        assert!(
            kept.ends_with(&format!("\n{REDACTED}")),
            "{}",
            &kept[kept.len() - 40..]
        );
        let marker = format!(
            "[toolgate: {} bytes, sha256 {}, ",
            content.len(),
            sha256_hex(content.as_bytes())
        );
        assert!(
            kept.contains(&marker),
            "{}",
            &kept[HEAD_BYTES - 10..HEAD_BYTES + 150]
        );
        // a string just at the bound is kept whole
        let edge = "x".repeat(MAX_STRING_BYTES);
        assert_eq!(for_audit(&json!({"s": edge.clone()}))["s"], json!(edge));
    }

    #[test]
    fn long_arrays_and_many_keys_are_cut_as_a_whole() {
        let v = json!({"items": vec![1234567; 20_000], "path": "x"});
        let out = for_audit(&v);
        let items = out["items"].as_str().unwrap();
        assert!(items.starts_with("[1234567,1234567"), "{items:.40}");
        assert!(items.contains("[toolgate: 160001 bytes"), "{items:.3200}");
        assert_eq!(out["path"], "x");
        let mut many = Map::new();
        for i in 0..100 {
            many.insert(format!("k{i}"), json!("v".repeat(4000)));
        }
        let out = for_audit(&Value::Object(many));
        let text = out.as_str().unwrap();
        assert!(
            text.len() < 4000 && text.starts_with("{\"k0\":"),
            "{text:.60}"
        );
        // keys that name secrets keep their values out, whatever the depth and size
        let big = json!({"token": "t".repeat(10_000), "list": [{"password": vec![1; 30_000]}]});
        let out = for_audit(&big);
        assert_eq!(out["token"], json!(REDACTED));
        assert_eq!(out["list"][0]["password"], json!(REDACTED));
    }
}
