//! Values in a schema: `enum` values and a `default` must fit the schema they sit in.
//!
//! An `enum` value that does not fit the type is dropped (an `enum` left with none is dropped
//! whole). A `default` that does not fit the type, the `enum` or the `const` is dropped rather
//! than left to tell the model something the schema refuses.

use super::types::json_equal;
use super::{Types, Walker};
use crate::import::error::kind;
use crate::import::warning::child;
use serde_json::{Map, Value};

impl Walker<'_> {
    pub(super) fn values(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        types: &Types,
        out: &mut Map<String, Value>,
    ) {
        if let Some(list) = map.get("enum") {
            self.enumeration(list, &child(pointer, "enum"), types, out);
        }
        if let Some(default) = map.get("default") {
            let at = child(pointer, "default");
            let why = if !types.admits(default) {
                Some(format!("does not fit type {}", describe(types)))
            } else if out
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.iter().any(|v| json_equal(v, default)))
            {
                Some("is not one of the enum values".to_string())
            } else if out.get("const").is_some_and(|c| !json_equal(c, default)) {
                Some("differs from const".to_string())
            } else {
                None
            };
            match why {
                Some(why) => self.warn(at, format!("default {} {why}; dropped", short(default))),
                None => {
                    out.insert("default".into(), default.clone());
                }
            }
        }
    }

    fn enumeration(&mut self, list: &Value, at: &str, types: &Types, out: &mut Map<String, Value>) {
        let Some(values) = list.as_array() else {
            self.warn(
                at,
                format!("enum must be an array, found {}; dropped", kind(list)),
            );
            return;
        };
        if values.is_empty() {
            self.warn(at, "an empty enum allows nothing; dropped");
            return;
        }
        let mut kept = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            if types.admits(v) {
                kept.push(v.clone());
            } else {
                self.warn(
                    child(at, &i.to_string()),
                    format!(
                        "enum value {} does not fit type {}; dropped",
                        short(v),
                        describe(types)
                    ),
                );
            }
        }
        if kept.is_empty() {
            self.warn(at, "no enum value fits the type; enum dropped");
        } else {
            out.insert("enum".into(), Value::Array(kept));
        }
    }
}

fn describe(types: &Types) -> String {
    match types.names.as_deref() {
        Some([one]) => format!("{one:?}"),
        Some(many) => format!("{many:?}"),
        None => "(any)".into(),
    }
}

/// A value rendered for a message, cut at 80 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}
