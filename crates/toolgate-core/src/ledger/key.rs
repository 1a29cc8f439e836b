//! Idempotency keys: the check every sent key passes, the key derived for a call sent without
//! one, and the hash that tells one call's arguments from another's.

use crate::error::ToolError;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Write;

/// The longest idempotency key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 255;

/// How derived keys begin: `tg-` and 32 hex digits (128 bits of a SHA-256).
pub const DERIVED_PREFIX: &str = "tg-";

/// SHA-256 of a call's canonical arguments.
pub type ArgsHash = [u8; 32];

/// Whether `b` may appear in a key: ASCII letters and digits and `- _ . : ~ + / = @`, so a key
/// can be handed on as it is (an HTTP `Idempotency-Key` header, an SMTP `Message-ID`).
fn allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b':' | b'~' | b'+' | b'/' | b'=' | b'@'
        )
}

/// Checks a key the caller sent.
///
/// # Errors
/// `invalid_input` with reason `invalid_idempotency_key`, saying what is wrong and what to
/// send instead: an empty key, one over [`MAX_KEY_BYTES`], or a character outside
/// `A-Z a-z 0-9 - _ . : ~ + / = @`.
pub fn check_key(key: &str) -> Result<(), ToolError> {
    const SEND: &str = "send 1 to 255 letters, digits or - _ . : ~ + / = @ (a UUID is a good \
                        key), or leave the key out";
    let why = if key.is_empty() {
        format!("the idempotency key is empty; {SEND}")
    } else if key.len() > MAX_KEY_BYTES {
        format!(
            "the idempotency key is {} bytes, more than {MAX_KEY_BYTES}; {SEND}",
            key.len()
        )
    } else if let Some(at) = key.bytes().position(|b| !allowed(b)) {
        let c = key[at..].chars().next().unwrap_or('?');
        format!(
            "the idempotency key has {c:?} (U+{:04X}) at byte {at}; {SEND}",
            u32::from(c)
        )
    } else {
        return Ok(());
    };
    Err(ToolError::invalid_input(why).with_reason("invalid_idempotency_key"))
}

/// The key of a call sent without one: `tg-` and the first 128 bits, in hex, of
/// `SHA-256("toolgate/derived-key/1" 0 caller 0 tool 0 args_hash)`. The same caller, tool and
/// arguments give the same key; nothing of the caller can be read back from it.
pub fn derive_key(caller: &str, tool: &str, args_hash: &ArgsHash) -> String {
    let mut h = Sha256::new();
    h.update(b"toolgate/derived-key/1\0");
    h.update(caller.as_bytes());
    h.update([0]);
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(args_hash);
    let digest = h.finalize();
    let mut key = String::with_capacity(DERIVED_PREFIX.len() + 32);
    key.push_str(DERIVED_PREFIX);
    key.push_str(&super::hex(&digest[..16]));
    key
}

/// SHA-256 of the canonical JSON of `arguments`: object keys sorted by their UTF-8 bytes at
/// every depth, no whitespace, strings and numbers as `serde_json` writes them. The same
/// arguments in any key order hash the same.
pub fn arguments_hash(arguments: &Value) -> ArgsHash {
    let mut h = HashWriter(Sha256::new());
    write_canonical(&mut h, arguments);
    h.0.finalize().into()
}

struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn write_canonical(out: &mut HashWriter, v: &Value) {
    // writing to a hasher cannot fail, and a string or number always serializes
    match v {
        Value::Object(map) => {
            let _ = out.write_all(b"{");
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    let _ = out.write_all(b",");
                }
                let _ = serde_json::to_writer(&mut *out, k);
                let _ = out.write_all(b":");
                write_canonical(out, v);
            }
            let _ = out.write_all(b"}");
        }
        Value::Array(items) => {
            let _ = out.write_all(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    let _ = out.write_all(b",");
                }
                write_canonical(out, item);
            }
            let _ = out.write_all(b"]");
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}
