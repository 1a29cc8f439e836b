//! What of a relayed request a person or a model reads, and what is data.
//!
//! Text that is shown (a sampling request's messages and system prompt; an elicitation's
//! message and its schema's titles, descriptions and enum display names) is cleaned like an
//! output: controls escaped, invisible and bidirectional characters removed. Everything else
//! is data that comes back to the upstream or steers the client (property names, `required`,
//! enum values and `const`s, defaults, stop sequences, model hints, `metadata`, object keys):
//! changed, the client's answer would no longer match what the upstream asked, so a request
//! whose data would need cleaning is refused, naming where, instead of being changed.

use crate::logs::clean;
use crate::quarantine::{is_invisible, visible};
use serde_json::Value;
use std::borrow::Cow;
use toolgate_core::sanitize::clean_output;

/// Where a sampling request's shown text is: JSON pointers into `sampling/createMessage`'s
/// params (specification 2025-11-25 "Sampling"), `*` any one member or item. A message's
/// content is one block or an array of blocks.
pub(super) const SAMPLING: &[&str] = &[
    "/systemPrompt",
    "/messages/*/content/text",
    "/messages/*/content/*/text",
];

/// Where an elicitation's shown text is, in `elicitation/create`'s params (2025-11-25
/// "Elicitation", form mode: `requestedSchema` of primitive properties).
pub(super) const ELICITATION: &[&str] = &[
    "/message",
    "/requestedSchema/title",
    "/requestedSchema/description",
    "/requestedSchema/properties/*/title",
    "/requestedSchema/properties/*/description",
    "/requestedSchema/properties/*/enumNames/*",
    "/requestedSchema/properties/*/oneOf/*/title",
    "/requestedSchema/properties/*/anyOf/*/title",
    "/requestedSchema/properties/*/items/anyOf/*/title",
    "/requestedSchema/properties/*/items/oneOf/*/title",
];

/// Cleans in place every string of `value` at a pointer of `shown`; every other string, and
/// every object key, must need no cleaning.
///
/// # Errors
/// What needs cleaning that is not shown: its place (a JSON pointer, RFC 6901) and text,
/// written visibly, in a sentence for the upstream.
pub(super) fn clean_shown(value: &mut Value, shown: &[&str]) -> Result<(), String> {
    let mut path = Vec::new();
    walk(value, shown, &mut path)
}

fn walk(value: &mut Value, shown: &[&str], path: &mut Vec<String>) -> Result<(), String> {
    match value {
        Value::String(s) if is_shown(shown, path) => {
            if needs_cleaning(s) {
                *s = clean(s);
            }
            Ok(())
        }
        Value::String(s) if needs_cleaning(s) => Err(format!(
            "the value `{}` at {} holds control, invisible or bidirectional characters, which \
             toolgate removes from what a person reads but does not change in data the client \
             answers or acts on: send it without them",
            visible(s),
            pointer(path)
        )),
        Value::Array(items) => items.iter_mut().enumerate().try_for_each(|(i, item)| {
            path.push(i.to_string());
            let walked = walk(item, shown, path);
            path.pop();
            walked
        }),
        Value::Object(map) => map.iter_mut().try_for_each(|(key, item)| {
            if needs_cleaning(key) {
                return Err(format!(
                    "the name `{}` at {} holds control, invisible or bidirectional \
                     characters, which toolgate does not change in a name the client answers \
                     under: name it without them",
                    visible(key),
                    pointer(path)
                ));
            }
            path.push(key.clone());
            let walked = walk(item, shown, path);
            path.pop();
            walked
        }),
        _ => Ok(()),
    }
}

/// Whether [`clean`] would change `s`.
fn needs_cleaning(s: &str) -> bool {
    matches!(clean_output(s), Cow::Owned(_)) || s.chars().any(is_invisible)
}

/// Whether `path` matches one of `shown`'s pointers.
fn is_shown(shown: &[&str], path: &[String]) -> bool {
    shown.iter().any(|pattern| {
        let mut parts = pattern.split('/').skip(1);
        path.iter()
            .all(|seg| parts.next().is_some_and(|p| p == "*" || p == seg))
            && parts.next().is_none()
    })
}

/// `path` as a JSON pointer (RFC 6901: `~` as `~0`, `/` as `~1`); the root is `/`.
fn pointer(path: &[String]) -> String {
    if path.is_empty() {
        return "/".into();
    }
    path.iter()
        .map(|seg| format!("/{}", seg.replace('~', "~0").replace('/', "~1")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn shown_text_is_cleaned_and_data_is_left_as_it_is() {
        let mut asked = json!({
            "message": "Your na\u{202e}me?",
            "requestedSchema": {
                "type": "object",
                "title": "T\u{200b}",
                "properties": {
                    "title": {"type": "string", "title": "Ti\u{7}tle", "default": "Dr"},
                    "color": {
                        "type": "string",
                        "enum": ["red", "blue"],
                        "enumNames": ["R\u{202e}ed", "Blue"]
                    },
                    "size": {
                        "type": "string",
                        "oneOf": [{"const": "s", "title": "S\u{2066}mall"}]
                    },
                    "tags": {
                        "type": "array",
                        "items": {"anyOf": [{"const": "a", "title": "A\u{feff}"}]}
                    }
                },
                "required": ["title"]
            }
        });
        clean_shown(&mut asked, ELICITATION).expect("nothing to refuse");
        assert_eq!(
            asked,
            json!({
                "message": "Your name?",
                "requestedSchema": {
                    "type": "object",
                    "title": "T",
                    "properties": {
                        "title": {"type": "string", "title": "Ti\\x07tle", "default": "Dr"},
                        "color": {
                            "type": "string",
                            "enum": ["red", "blue"],
                            "enumNames": ["Red", "Blue"]
                        },
                        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                        "tags": {
                            "type": "array",
                            "items": {"anyOf": [{"const": "a", "title": "A"}]}
                        }
                    },
                    "required": ["title"]
                }
            })
        );
    }

    #[test]
    fn data_that_would_need_cleaning_is_refused_saying_where() {
        let refused = |mut v: Value, shown: &[&str]| clean_shown(&mut v, shown).unwrap_err();
        let e = refused(
            json!({"message": "m", "requestedSchema": {"properties": {"na\u{202e}me": {"type": "string"}}}}),
            ELICITATION,
        );
        assert!(
            e.contains(r"`na\u{202e}me`") && e.contains("at /requestedSchema/properties"),
            "{e}"
        );
        let e = refused(
            json!({"requestedSchema": {"properties": {"c": {"enum": ["ok", "r\u{200b}ed"]}}}}),
            ELICITATION,
        );
        assert!(
            e.contains(r"`r\u{200b}ed`") && e.contains("/requestedSchema/properties/c/enum/1"),
            "{e}"
        );
        let e = refused(
            json!({"requestedSchema": {"properties": {"c": {"oneOf": [{"const": "x\u{1b}[2J", "title": "X"}]}}}}),
            ELICITATION,
        );
        assert!(e.contains("/properties/c/oneOf/0/const"), "{e}");
        let e = refused(
            json!({"requestedSchema": {"required": ["a\u{2067}"]}}),
            ELICITATION,
        );
        assert!(e.contains("/requestedSchema/required/0"), "{e}");
        let e = refused(
            json!({"requestedSchema": {"properties": {"a/b~": {"default": "\u{202e}"}}}}),
            ELICITATION,
        );
        assert!(
            e.contains("/requestedSchema/properties/a~1b~0/default"),
            "{e}"
        );

        // sampling: the messages' text is shown, stop sequences and metadata are data
        let mut ok = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "a\u{202e}b"}},
                {"role": "user", "content": [{"type": "text", "text": "c\u{200b}d"}]}
            ],
            "systemPrompt": "s\u{2066}",
            "maxTokens": 5
        });
        clean_shown(&mut ok, SAMPLING).expect("only shown text to clean");
        assert_eq!(ok["messages"][0]["content"]["text"], "ab");
        assert_eq!(ok["messages"][1]["content"][0]["text"], "cd");
        assert_eq!(ok["systemPrompt"], "s");
        let e = refused(
            json!({"messages": [], "stopSequences": ["\u{202e}END"]}),
            SAMPLING,
        );
        assert!(e.contains("/stopSequences/0"), "{e}");
        let e = refused(
            json!({"messages": [], "metadata": {"k\u{200b}": 1}}),
            SAMPLING,
        );
        assert!(
            e.contains(r"`k\u{200b}`") && e.contains("at /metadata"),
            "{e}"
        );
    }
}
