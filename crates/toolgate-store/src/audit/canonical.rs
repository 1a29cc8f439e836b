//! The canonical JSON of an audit record and the chain hash over it.
//!
//! Canonical JSON: the record's fields as serde writes them (absent optional fields left out),
//! object keys sorted by their UTF-8 bytes at every depth (the arguments included), no
//! whitespace, strings escaped and numbers written as `serde_json` writes them. Each record's
//! hash is `sha256(prev_hash || canonical_json)`, with 32 zero bytes before the first record.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate_core::{Approval, AuditRecord, Decision, ErrorKind, GrantScope, LedgerEvent, Outcome};

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// The `prev_hash` of the first record.
pub const GENESIS: Hash = [0; 32];

/// `sha256(prev || canonical)`.
pub fn chain_hash(prev: &Hash, canonical: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(canonical);
    h.finalize().into()
}

/// Lower-case hex of a hash.
pub fn hex(hash: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(hash.len() * 2);
    for b in hash {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// Appends the canonical JSON of `r` to `out`.
pub fn canonical_json(r: &AuditRecord, out: &mut Vec<u8>) {
    let mut arguments = Vec::new();
    write_value(&mut arguments, &r.arguments);
    canonical_json_with(&View::of(r), &arguments, out);
}

/// An audit record's fields but its arguments, as its canonical JSON and its row have them
/// (counts saturated at `i64::MAX`, SQLite's largest `INTEGER`): borrowed from an
/// [`AuditRecord`] ([`View::of`]) or from the writer's queue, where callers copy the text of
/// their records.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub approval: Option<Approval>,
    pub attempts: u32,
    pub call_id: &'a str,
    pub decision: Option<Decision>,
    pub duration_us: u64,
    pub error_kind: Option<ErrorKind>,
    pub error_reason: Option<&'a str>,
    pub grant: Option<i64>,
    pub idempotency_key: Option<&'a str>,
    pub ledger: Option<LedgerEvent>,
    pub outcome: Outcome,
    pub principal: Option<&'a toolgate_core::Principal>,
    pub profile: &'a str,
    pub result_bytes: u64,
    pub rule: Option<&'a str>,
    pub scope: Option<GrantScope>,
    pub session: &'a str,
    pub time_us: u64,
    pub tool: &'a str,
    pub truncated: Option<&'a str>,
    pub version: Option<&'a str>,
}

/// `n` saturated at `i64::MAX`.
pub(crate) fn saturate(n: u64) -> u64 {
    n.min(i64::MAX as u64)
}

impl<'a> View<'a> {
    /// The view of `r`.
    ///
    /// The record is destructured field by field, so a field added to [`AuditRecord`] stops
    /// this crate from compiling until the field is hashed and stored too.
    pub(crate) fn of(r: &'a AuditRecord) -> View<'a> {
        let AuditRecord {
            approval,
            arguments: _,
            attempts,
            call_id,
            decision,
            duration_us,
            error_kind,
            error_reason,
            grant,
            idempotency_key,
            ledger,
            outcome,
            principal,
            profile,
            result_bytes,
            rule,
            scope,
            session,
            time_us,
            tool,
            truncated,
            version,
        } = r;
        View {
            approval: *approval,
            attempts: *attempts,
            call_id: call_id.as_str(),
            decision: *decision,
            duration_us: saturate(*duration_us),
            error_kind: *error_kind,
            error_reason: error_reason.as_deref(),
            grant: *grant,
            idempotency_key: idempotency_key.as_deref(),
            ledger: *ledger,
            outcome: *outcome,
            principal: principal.as_ref(),
            profile,
            result_bytes: saturate(*result_bytes as u64),
            rule: rule.as_deref(),
            scope: *scope,
            session,
            time_us: saturate(*time_us),
            tool,
            truncated: truncated.as_deref(),
            version: version.as_deref(),
        }
    }
}

/// [`canonical_json`] of the record `r` shows, with its arguments already written canonically
/// (by [`write_value`] or [`write_value_redacted`]).
pub(crate) fn canonical_json_with(r: &View<'_>, arguments_json: &[u8], out: &mut Vec<u8>) {
    // keys in sorted order
    let View {
        approval,
        attempts,
        call_id,
        decision,
        duration_us,
        error_kind,
        error_reason,
        grant,
        idempotency_key,
        ledger,
        outcome,
        principal,
        profile,
        result_bytes,
        rule,
        scope,
        session,
        time_us,
        tool,
        truncated,
        version,
    } = r;
    let mut w = Fields { out, first: true };
    w.opt("approval", approval.as_ref());
    w.key("arguments");
    w.out.extend_from_slice(arguments_json);
    w.field("attempts", attempts);
    w.field("call_id", call_id);
    w.opt("decision", decision.as_ref());
    w.field("duration_us", duration_us);
    w.opt("error_kind", error_kind.as_ref());
    w.opt("error_reason", error_reason.as_ref());
    w.opt("grant", grant.as_ref());
    w.opt("idempotency_key", idempotency_key.as_ref());
    w.opt("ledger", ledger.as_ref());
    w.field("outcome", outcome);
    w.opt("principal", principal.as_ref());
    w.field("profile", profile);
    w.field("result_bytes", result_bytes);
    w.opt("rule", rule.as_ref());
    w.opt("scope", scope.as_ref());
    w.field("session", session);
    w.field("time_us", time_us);
    w.field("tool", tool);
    w.opt("truncated", truncated.as_ref());
    w.opt("version", version.as_ref());
    w.out.push(b'}');
}

struct Fields<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl Fields<'_> {
    fn key(&mut self, k: &str) {
        self.out.push(if self.first { b'{' } else { b',' });
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn field<T: Serialize + ?Sized>(&mut self, k: &str, v: &T) {
        self.key(k);
        write_serialize(self.out, v);
    }

    fn opt<T: Serialize>(&mut self, k: &str, v: Option<&T>) {
        if let Some(v) = v {
            self.field(k, v);
        }
    }
}

fn write_serialize<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    // serializing plain strings, numbers and unit enums into a Vec cannot fail
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// Writes `v` with object keys sorted at every depth.
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Object(map) => {
            let entry = |out: &mut Vec<u8>, i: usize, k: &String, v: &Value| {
                if i > 0 {
                    out.push(b',');
                }
                write_serialize(out, k.as_str());
                out.push(b':');
                write_value(out, v);
            };
            out.push(b'{');
            // serde_json's map is a BTreeMap (sorted by bytes) unless `preserve_order` is on
            if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
                for (i, (k, v)) in map.iter().enumerate() {
                    entry(out, i, k, v);
                }
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                for (i, (k, v)) in entries.into_iter().enumerate() {
                    entry(out, i, k, v);
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        other => write_serialize(out, other),
    }
}

/// The arguments as the audit stores and hashes them: [`write_value`] of
/// [`toolgate_core::redact::for_audit`] of `v` (secrets redacted, long strings and arguments
/// cut to a head and a tail with their length and SHA-256). The writer thread calls it, off
/// the caller's path.
pub fn write_value_redacted(out: &mut Vec<u8>, v: &Value) {
    write_value(out, &toolgate_core::redact::for_audit(v));
}

/// The canonical JSON of `v` as a string (object keys sorted at every depth).
pub fn canonical_value(v: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// `sha256` of the canonical JSON of `v` (the idempotency ledger's argument hash).
pub fn value_hash(v: &Value) -> Hash {
    let mut out = Vec::new();
    write_value(&mut out, v);
    let mut h = Sha256::new();
    h.update(&out);
    h.finalize().into()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use std::borrow::Cow;
    use toolgate_core::{Approval, Decision, ErrorKind, GrantScope, Outcome};

    /// A record with every field set.
    pub(crate) fn full() -> AuditRecord {
        AuditRecord {
            time_us: 1_700_000_000_000_000,
            session: "s\"1".into(),
            profile: "default".into(),
            principal: None,
            tool: "read_file".into(),
            version: Some("1.0.0".into()),
            call_id: "c\n1".into(),
            decision: Some(Decision::Ask),
            rule: Some(Cow::Borrowed("default.destructive_asks")),
            approval: Some(Approval::Approved),
            grant: Some(7),
            scope: Some(GrantScope::Session),
            arguments: json!({"z": 1, "a": {"y": [1.5, "é", null], "b": true}}),
            result_bytes: 12,
            truncated: Some("res_00".into()),
            outcome: Outcome::RecoverableError,
            error_kind: Some(ErrorKind::ToolFailed),
            error_reason: Some("not_found".into()),
            attempts: 2,
            idempotency_key: None,
            ledger: None,
            duration_us: 99,
        }
    }

    /// Sorts keys through a generic path: serde's own JSON, parsed, re-sorted.
    fn generic(r: &AuditRecord) -> String {
        fn sort(v: Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut e: Vec<_> = m.into_iter().map(|(k, v)| (k, sort(v))).collect();
                    e.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut s = String::from("{");
                    for (i, (k, v)) in e.iter().enumerate() {
                        if i > 0 {
                            s.push(',');
                        }
                        s.push_str(&serde_json::to_string(k).unwrap());
                        s.push(':');
                        s.push_str(v.as_str().unwrap());
                    }
                    s.push('}');
                    Value::String(s)
                }
                Value::Array(a) => {
                    let items: Vec<String> = a
                        .into_iter()
                        .map(|v| sort(v).as_str().unwrap().to_string())
                        .collect();
                    Value::String(format!("[{}]", items.join(",")))
                }
                other => Value::String(serde_json::to_string(&other).unwrap()),
            }
        }
        sort(serde_json::to_value(r).unwrap())
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn canonical_json_is_serdes_json_with_sorted_keys() {
        let mut minimal = full();
        minimal.version = None;
        minimal.decision = None;
        minimal.rule = None;
        minimal.approval = None;
        minimal.grant = None;
        minimal.scope = None;
        minimal.truncated = None;
        minimal.error_kind = None;
        minimal.error_reason = None;
        minimal.arguments = json!({});
        // a side-effecting call's record names its key and what the ledger did
        let mut keyed = full();
        keyed.idempotency_key = Some("tg-0123456789abcdef0123456789abcdef".into());
        keyed.ledger = Some(LedgerEvent::Replayed);
        // a record with a principal: the records before identity keep their bytes (no key)
        let mut principal = full();
        principal.principal = Some(toolgate_core::Principal::new("https://as.example", "alice"));
        for r in [full(), minimal, keyed, principal] {
            let mut out = Vec::new();
            canonical_json(&r, &mut out);
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text, generic(&r));
            // and it is JSON that reads back as the same record
            let back: AuditRecord = serde_json::from_str(&text).unwrap();
            assert_eq!(back, r);
        }
    }

    #[test]
    fn key_order_of_the_arguments_does_not_change_the_hash() {
        let a = json!({"b": 1, "a": {"d": 2, "c": 3}});
        let b: Value = serde_json::from_str(r#"{"a":{"c":3,"d":2},"b":1}"#).unwrap();
        assert_eq!(value_hash(&a), value_hash(&b));
        assert_eq!(canonical_value(&a), r#"{"a":{"c":3,"d":2},"b":1}"#);
        assert_ne!(value_hash(&a), value_hash(&json!({"b": 2})));
    }

    /// For arguments within every bound, what the audit keeps is core's `redact` of them.
    #[test]
    fn redacting_while_writing_matches_cores_redact() {
        let cases = [
            json!({
                "path": "src/main.rs",
                "password": "hunter2",
                "Token": null,
                "headers": {"Authorization": "Basic abc", "X-Api-Key": {"nested": 1}},
                "nested": [{"GITHUB_TOKEN": "x"}, "sk-abcdefghijklmnop1234", "Bearer abc.def"],
                "pem": "-----BEGIN RSA PRIVATE KEY-----\nMII...",
                "note": "sk- is a prefix",
                "n": [1, 2.5, true, null, {"secret": [1]}],
                "client_secret": ["a"],
                "AKIA": "AKIAABCDEFGHIJKLMNOP"
            }),
            json!("ghp_0123456789abcdefghij"),
            json!(["plain", {"cookie": 0}]),
            json!(null),
            json!({}),
        ];
        for v in cases {
            let mut expected = v.clone();
            toolgate_core::redact::redact(&mut expected);
            let mut a = Vec::new();
            write_value(&mut a, &expected);
            let mut b = Vec::new();
            write_value_redacted(&mut b, &v);
            assert_eq!(String::from_utf8(b).unwrap(), String::from_utf8(a).unwrap());
        }
    }

    /// The writer reads a caller's arguments back from their canonical JSON: the value it
    /// reads is the value the caller had, numbers and text included, so the stored form does
    /// not depend on whether the caller copied the arguments or handed them over.
    #[test]
    fn canonical_json_reads_back_as_the_same_value() {
        for v in [
            json!({"f": [0.1, 1e300, -0.0, 2.5e-308, 1.0], "i": [u64::MAX, i64::MIN, 0]}),
            json!({"s": "é\u{1F600}\n\"\\\u{7f}\u{0}", "nested": {"b": [], "a": {}}}),
            json!(["x", null, true, false]),
            json!("plain"),
        ] {
            let mut text = Vec::new();
            write_value(&mut text, &v);
            let back: Value = serde_json::from_slice(&text).unwrap();
            assert_eq!(back, v);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            write_value_redacted(&mut a, &v);
            write_value_redacted(&mut b, &back);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn known_records_keep_their_hashes() {
        // Pinned when write_value and write_value_redacted became one writer: any change to
        // these bytes breaks `audit verify` on every existing store and the idempotency
        // ledger's argument hashes.
        let mut second = full();
        second.arguments = json!({
            "token": "abc",
            "b": [{"z": null, "password": "x", "Y": 2}, "sk-abcdefghijklmnop1234"],
            "a": {"é": 1, "e": 2.5}
        });
        // pinned when secrets inside strings and long strings came to be cut (issue 12): a
        // record of the new shape, so a change to what the audit keeps of them is seen here
        let mut third = full();
        third.arguments = json!({
            "command": "curl -H 'Authorization: Bearer ghp_0123456789abcdefABCDEF' x; \
                        export OPENAI_API_KEY=sk-proj-0123456789abcdef",
            "content": "AWS_SECRET_ACCESS_KEY=abc\n".repeat(400),
        });
        let mut kept = Vec::new();
        write_value_redacted(&mut kept, &third.arguments);
        let kept = String::from_utf8(kept).unwrap();
        assert!(
            kept.starts_with(
                "{\"command\":\"curl -H 'Authorization: Bearer [REDACTED]' x; export \
                 OPENAI_API_KEY=[REDACTED]\",\"content\":\"AWS_SECRET_ACCESS_KEY=[REDACTED]\\n"
            ),
            "{kept:.200}"
        );
        assert!(kept.contains("…[toolgate: 10400 bytes, sha256 "), "{kept}");
        let mut prev = GENESIS;
        let mut chain = Vec::new();
        let mut plain = Vec::new();
        for r in [full(), second, third] {
            // as the writer hashes: arguments redacted, then the record
            let mut arguments = Vec::new();
            write_value_redacted(&mut arguments, &r.arguments);
            let mut out = Vec::new();
            canonical_json_with(&View::of(&r), &arguments, &mut out);
            prev = chain_hash(&prev, &out);
            chain.push(hex(&prev));
            // unredacted
            let mut out = Vec::new();
            canonical_json(&r, &mut out);
            plain.push(hex(&chain_hash(&GENESIS, &out)));
            plain.push(hex(&value_hash(&r.arguments)));
        }
        assert_eq!(
            chain,
            [
                "c6fcb1baf8888ceb1394873b5d107bd5251c5115e5061f885e97955239032889",
                "9cd8c31bd608e321e83b245e84178ea72308bff4cb210fe1e4a0c76514ea005e",
                "871157e1c677686d3f7270372260ff4a716e4394f414f74349d8cbc84e323611",
            ]
        );
        assert_eq!(
            plain,
            [
                "c6fcb1baf8888ceb1394873b5d107bd5251c5115e5061f885e97955239032889",
                "f25c37699b25f0cef505842b56fd1fdcb7597d85a4609bca0b69cdefe4246583",
                "4d9206ca73f98b627fd40affb249cfb040443e7034868aa4fbd200d877d85321",
                "821585561d1b6ab5134e3580ec7477c7a64edbd55c0e4c2338cab9e9644cb732",
                "6e7ea9a46bfc6dc53c93ae9b8b6c715ebe326a82efc924fd970531b7e98efe39",
                "607cd19a750f80ed73cd10336e8c609e2216acafe7ef8e60bd0f9d0d4a8004cd",
            ]
        );
    }

    #[test]
    fn the_chain_hash_depends_on_the_previous_hash() {
        let h1 = chain_hash(&GENESIS, b"x");
        assert_ne!(h1, chain_hash(&h1, b"x"));
        assert_eq!(
            hex(&chain_hash(&GENESIS, b"")),
            // sha256 of 32 zero bytes
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
    }
}
