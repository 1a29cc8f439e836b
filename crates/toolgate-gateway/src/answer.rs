//! What an upstream's answer (a tool result, a resource read, a prompt, an error, a log
//! message) is held to besides the cleaning of its text ([`crate::result`]):
//!
//! - **Credentials** toolgate hands the upstream never come back to the model: the values of
//!   the entry's `headers` (an HTTP upstream's `Authorization`), and of the variables of its
//!   `env` whose names say they hold a secret ([`names_secret`]: a stdio upstream's
//!   `GITHUB_TOKEN`), are replaced in every string of the answer by `[toolgate: the
//!   credential for upstream NAME]`, in every form the HTTP tools' scrubber reads
//!   ([`toolgate_tools::http::secrets`]: as sent, after the scheme word, percent-, JSON- or
//!   HTML-escaped, in any ASCII case). An upstream quoting the key it was refused with ("bad
//!   credential Bearer sk_live_...") is common.
//! - **MIME types** are RFC 6838 media types ([`crate::quarantine::is_media_type`]), as for
//!   listed resources: another (text with escapes, bidirectional or hidden characters) is
//!   left out, or `application/octet-stream` where MCP requires one (images, audio).
//! - **Base64** data (images, audio, blobs) is base64: a block whose data is not is replaced
//!   by a text saying so.
//! - **URIs** of resources a prompt embeds or links are namespaced as tool results' are
//!   (`<upstream>+<uri>`): an upstream's `file:///ok.txt` is not the workspace's file.

use serde_json::Value;
use toolgate_config::UpstreamConfig;
use toolgate_core::{Content, ResourceContents, ToolError, ToolOutput};
use toolgate_tools::http::secrets::Secrets;

/// The shortest value of a secret-named variable of `env` that is replaced (a shorter one,
/// `1` or `yes`, would blank ordinary text and is no credential).
pub(crate) const MIN_ENV_SECRET_CHARS: usize = 8;

/// Whether an environment variable's name says it holds a secret (`GITHUB_TOKEN`,
/// `OPENAI_API_KEY`, `DB_PASSWORD`, `SLACK_SIGNING_SECRET`, `AWS_SESSION_TOKEN`).
pub(crate) fn names_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PWD",
        "KEY",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "DSN",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// The credentials of `config` to keep out of its answers, read from the environment now
/// (see the module docs).
pub(crate) fn secrets_of(config: &UpstreamConfig) -> Secrets {
    let mut values: Vec<String> = config
        .headers
        .iter()
        .filter_map(|h| std::env::var(&h.value_env).ok())
        .filter(|v| !v.trim().is_empty())
        .collect();
    values.extend(
        config
            .env
            .iter()
            .filter(|name| names_secret(name))
            .filter_map(|name| std::env::var(name).ok())
            .filter(|v| v.trim().chars().count() >= MIN_ENV_SECRET_CHARS),
    );
    let marker = format!("upstream {}", config.name);
    Secrets::new(values.iter().map(|v| (marker.as_str(), v.as_str())))
}

/// Replaces `secrets` in every string of `out`: text blocks, embedded resources' text, links'
/// names, titles and descriptions, and the structured content.
pub(crate) fn scrub_output(out: &mut ToolOutput, secrets: &Secrets) {
    if secrets.is_empty() {
        return;
    }
    for c in &mut out.content {
        match c {
            Content::Text { text } => secrets.scrub_string(text),
            Content::Resource { resource } => match resource {
                ResourceContents::Text {
                    uri,
                    text,
                    mime_type,
                } => {
                    secrets.scrub_string(text);
                    secrets.scrub_string(uri);
                    mime_type.iter_mut().for_each(|m| secrets.scrub_string(m));
                }
                ResourceContents::Blob { uri, mime_type, .. } => {
                    secrets.scrub_string(uri);
                    mime_type.iter_mut().for_each(|m| secrets.scrub_string(m));
                }
                _ => {}
            },
            Content::ResourceLink(link) => {
                secrets.scrub_string(&mut link.name);
                secrets.scrub_string(&mut link.uri);
                for t in [&mut link.title, &mut link.description, &mut link.mime_type]
                    .into_iter()
                    .flatten()
                {
                    secrets.scrub_string(t);
                }
            }
            _ => {}
        }
    }
    if let Some(v) = out.structured.as_mut() {
        secrets.scrub_value(v);
    }
}

/// Replaces `secrets` in `error`'s message and details.
pub(crate) fn scrub_error(error: &mut ToolError, secrets: &Secrets) {
    secrets.scrub_error(error);
}

/// Holds the blocks of an upstream's answer to their MIME types and base64 (see the module
/// docs).
pub(crate) fn check_blocks(content: &mut [Content]) {
    for c in content.iter_mut() {
        let replaced = match c {
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                if !crate::quarantine::is_media_type(mime_type) {
                    *mime_type = OCTET_STREAM.to_string();
                }
                (!is_base64(data)).then_some("an image or audio block")
            }
            Content::ResourceLink(link) => {
                media_type_only(&mut link.mime_type);
                None
            }
            Content::Resource { resource } => match resource {
                ResourceContents::Text { mime_type, .. } => {
                    media_type_only(mime_type);
                    None
                }
                ResourceContents::Blob {
                    mime_type, blob, ..
                } => {
                    media_type_only(mime_type);
                    (!is_base64(blob)).then_some("an embedded binary resource")
                }
                // a kind this version does not know: passed as it is
                _ => None,
            },
            _ => None,
        };
        if let Some(what) = replaced {
            *c = Content::text(format!(
                "[{what} of the upstream's answer whose data is not base64, left out]"
            ));
        }
    }
}

/// The MIME type put where an upstream's is not a media type and MCP requires one.
const OCTET_STREAM: &str = "application/octet-stream";

/// Leaves out a MIME type that is not a media type.
pub(crate) fn media_type_only(mime: &mut Option<String>) {
    if mime
        .as_deref()
        .is_some_and(|m| !crate::quarantine::is_media_type(m))
    {
        *mime = None;
    }
}

/// Whether `data` is base64 (RFC 4648 section 4, the standard alphabet, padded or not; line
/// breaks and spaces allowed, as some encoders wrap), checked without decoding it.
pub(crate) fn is_base64(data: &str) -> bool {
    let mut n = 0usize;
    let mut padding = 0usize;
    for b in data.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if padding == 0 => n += 1,
            b'=' if padding < 2 => padding += 1,
            b'\r' | b'\n' | b' ' | b'\t' => {}
            _ => return false,
        }
    }
    match padding {
        0 => n % 4 != 1,
        p => (n + p).is_multiple_of(4),
    }
}

/// Namespaces the URIs of the resources the messages of a `prompts/get` answer (as JSON:
/// `{"messages": [{"content": ...}]}`) embed or link, by `prefix`, and holds their MIME
/// types to media types.
pub(crate) fn namespace_prompt(value: &mut Value, prefix: &str) {
    let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for m in messages {
        let Some(content) = m.get_mut("content") else {
            continue;
        };
        let target = match content.get("type").and_then(Value::as_str) {
            Some("resource") => content.get_mut("resource"),
            Some("resource_link") => Some(content),
            _ => None,
        };
        let Some(target) = target.and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(Value::String(uri)) = target.get_mut("uri") {
            uri.insert_str(0, prefix);
        }
        let bad_mime = target
            .get("mimeType")
            .is_some_and(|m| !m.as_str().is_some_and(crate::quarantine::is_media_type));
        if bad_mime {
            target.remove("mimeType");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_is_told_from_other_text() {
        for good in ["", "aGk=", "aGk", "aGVsbG8=", "aGVs\nbG8=", "AAAA", "AA=="] {
            assert!(is_base64(good), "{good:?}");
        }
        for bad in [
            "!!!notbase64!!!",
            "a",
            "aGk=x",
            "aGk===",
            "a-b_",
            "aGk\u{1b}",
        ] {
            assert!(!is_base64(bad), "{bad:?}");
        }
    }

    #[test]
    fn blocks_keep_media_types_and_base64_only() {
        let weird = "audio/wav; X\u{1b}[2J\u{202e}Y";
        let mut content = vec![
            Content::Image {
                data: "aGk=".into(),
                mime_type: weird.into(),
            },
            Content::Audio {
                data: "!!!notbase64!!!".into(),
                mime_type: "audio/wav".into(),
            },
            Content::Resource {
                resource: ResourceContents::Text {
                    uri: "up+mem://a".into(),
                    mime_type: Some(weird.into()),
                    text: "t".into(),
                },
            },
            Content::Resource {
                resource: ResourceContents::Blob {
                    uri: "up+mem://b".into(),
                    mime_type: Some("image/png".into()),
                    blob: "aGk=".into(),
                },
            },
        ];
        check_blocks(&mut content);
        let shown = serde_json::to_value(&content).unwrap();
        assert_eq!(shown[0]["mimeType"], OCTET_STREAM);
        assert_eq!(shown[1]["type"], "text", "{shown}");
        assert!(shown[2]["resource"].get("mimeType").is_none(), "{shown}");
        assert_eq!(shown[3]["resource"]["mimeType"], "image/png");
    }

    #[test]
    fn a_prompts_resources_are_namespaced() {
        let mut v = json!({"messages": [
            {"role": "user", "content": {"type": "resource",
             "resource": {"uri": "file:///ok.txt", "text": "FORGED", "mimeType": "text/plain; \u{1b}x"}}},
            {"role": "user", "content": {"type": "resource_link", "uri": "file:///ok.txt", "name": "ok"}},
            {"role": "user", "content": {"type": "text", "text": "file:///ok.txt"}}
        ]});
        namespace_prompt(&mut v, "up+");
        assert_eq!(
            v["messages"][0]["content"]["resource"]["uri"],
            "up+file:///ok.txt"
        );
        assert!(v["messages"][0]["content"]["resource"]
            .get("mimeType")
            .is_none());
        assert_eq!(v["messages"][1]["content"]["uri"], "up+file:///ok.txt");
        assert_eq!(v["messages"][2]["content"]["text"], "file:///ok.txt");
    }

    #[test]
    fn secret_names_and_their_values() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "DB_PASSWORD",
            "db_pass",
            "SENTRY_DSN",
        ] {
            assert!(names_secret(name), "{name}");
        }
        for name in ["HOME", "PATH", "LANG", "DEBUG", "NODE_ENV"] {
            assert!(!names_secret(name), "{name}");
        }
        let secrets = Secrets::new([("upstream web", "Bearer sk_live_UPCANARY123456789")]);
        let mut out = ToolOutput {
            structured: Some(json!({"auth": "Bearer sk_live_UPCANARY123456789"})),
            content: vec![
                Content::text("you sent: sk_live_UPCANARY123456789"),
                Content::ResourceLink(toolgate_core::ResourceLink::new(
                    "up+https://x.example/cb?k=sk_live_UPCANARY123456789",
                    "cb",
                )),
            ],
        };
        scrub_output(&mut out, &secrets);
        let shown = serde_json::to_string(&(&out.content, &out.structured)).unwrap();
        assert!(!shown.contains("UPCANARY"), "{shown}");
        assert!(
            shown.contains("[toolgate: the credential for upstream web]"),
            "{shown}"
        );
        let mut e = ToolError::failed("bad credential Bearer sk_live_UPCANARY123456789");
        scrub_error(&mut e, &secrets);
        assert!(!e.message.contains("UPCANARY"), "{e}");
    }
}
