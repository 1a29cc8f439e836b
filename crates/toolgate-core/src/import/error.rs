//! Import errors, located by line, array index and JSON pointer.

use std::fmt;

/// Where a definition is in the text it was read from.
///
/// Both parts are optional: a definition imported on its own with
/// [`import_definition`](super::import_definition) has no location, one read by
/// [`parse_definitions`](super::parse_definitions) has the line where its JSON value starts
/// and, when it sits in an array (`[...]`, MCP's `{"tools": [...]}`, a BFCL entry's
/// `"function": [...]`), its index there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Location {
    /// 1-based line where the JSON value holding the definition starts.
    pub line: Option<usize>,
    /// 0-based index of the definition inside its enclosing array.
    pub index: Option<usize>,
}

impl Location {
    /// Whether neither the line nor the index is known.
    pub fn is_unknown(&self) -> bool {
        self.line.is_none() && self.index.is_none()
    }
}

impl fmt::Display for Location {
    /// `line 3, item 2`, `line 3`, `item 2`, or `unknown location`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.index) {
            (Some(l), Some(i)) => write!(f, "line {l}, item {i}"),
            (Some(l), None) => write!(f, "line {l}"),
            (None, Some(i)) => write!(f, "item {i}"),
            (None, None) => f.write_str("unknown location"),
        }
    }
}

/// An error while reading or importing tool definitions. For the host (an operator or a
/// CLI user), never for a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The text is not JSON (nor JSON lines). `line` and `column` are 1-based.
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// Line of the fault.
        line: usize,
        /// Column of the fault.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The text is larger than [`MAX_INPUT_BYTES`](super::MAX_INPUT_BYTES).
    #[error("the input is {bytes} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// Size of the input in bytes.
        bytes: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// One definition cannot be imported: it is not an object, has no usable name, a schema
    /// has the wrong JSON type or does not compile, it is nested too deeply, and so on.
    #[error("{}", render_definition(location, name.as_deref(), pointer, message))]
    Definition {
        /// Where the definition is (unknown for a definition imported on its own).
        location: Location,
        /// The tool's name, when it was read before the fault.
        name: Option<String>,
        /// JSON pointer (RFC 6901) of the fault inside the definition as given; `""` is the
        /// whole definition.
        pointer: String,
        /// What is wrong and what to write instead.
        message: String,
    },
}

fn render_definition(
    location: &Location,
    name: Option<&str>,
    pointer: &str,
    message: &str,
) -> String {
    let mut out = String::new();
    if !location.is_unknown() {
        out.push_str(&location.to_string());
        out.push_str(": ");
    }
    if let Some(name) = name {
        out.push_str(&format!("tool {name:?}: "));
    }
    if !pointer.is_empty() {
        out.push_str(&format!("at {pointer:?}: "));
    }
    out.push_str(message);
    out
}

impl ImportError {
    /// A [`ImportError::Definition`] at `pointer`, without location or name.
    pub fn definition(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError::Definition {
            location: Location::default(),
            name: None,
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// Sets the location of a [`ImportError::Definition`] (other variants are returned as
    /// they are).
    #[must_use]
    pub fn at(mut self, at: Location) -> Self {
        if let ImportError::Definition { location, .. } = &mut self {
            *location = at;
        }
        self
    }

    /// Sets the tool name of a [`ImportError::Definition`] when it has none yet.
    #[must_use]
    pub fn named(mut self, tool: &str) -> Self {
        if let ImportError::Definition { name: n @ None, .. } = &mut self {
            *n = Some(tool.to_string());
        }
        self
    }

    /// The JSON pointer of a definition error, `None` for the other variants.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            ImportError::Definition { pointer, .. } => Some(pointer),
            _ => None,
        }
    }
}

/// The JSON type name of a value, with an article, for messages: `"a string"`.
pub(crate) fn kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_location_tool_and_pointer() {
        let e = ImportError::definition("/parameters/type", "bad type")
            .named("t")
            .at(Location {
                line: Some(3),
                index: Some(1),
            });
        assert_eq!(
            e.to_string(),
            "line 3, item 1: tool \"t\": at \"/parameters/type\": bad type"
        );
        assert_eq!(ImportError::definition("", "x").to_string(), "x");
        assert_eq!(e.pointer(), Some("/parameters/type"));
    }
}
