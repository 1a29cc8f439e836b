//! Reading definitions from text: one JSON array of definitions, or JSON lines (or any
//! sequence of JSON values separated by whitespace).
//!
//! Each value is one of:
//! - a definition of any dialect;
//! - an array of them;
//! - a BFCL-style wrapper `{"source": "...", "function": {...}}` (functions.jsonl), whose
//!   `source` is kept;
//! - a BFCL question entry `{"id": "...", "function": [{...}, ...]}`, whose `id` is kept as
//!   the source of each function;
//! - an MCP `tools/list` result `{"tools": [{...}, ...]}`;
//! - a Gemini tool `{"functionDeclarations": [{...}, ...]}` (or `function_declarations`),
//!   whose declarations are read as [`Dialect::Gemini`], also inside a request's
//!   `{"tools": [{"functionDeclarations": [...]}]}`.
//!
//! Only the JSON syntax and the size are checked here; a value that is not a definition is
//! reported when it is imported.

use super::detect::{self, source_of};
use super::error::{ImportError, Location};
use super::Dialect;
use serde_json::Value;

/// Texts larger than this (64 MiB) are refused.
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// One definition read from text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedDefinition {
    /// Where it is.
    pub location: Location,
    /// The `source` (or `id`) of the wrapper it came in, if any.
    pub source: Option<String>,
    /// The definition itself (unwrapped), not yet checked.
    pub definition: Value,
    /// The dialect its container names (a Gemini `functionDeclarations` list), if any.
    pub dialect: Option<Dialect>,
}

/// Splits `text` into definitions (see the module documentation for the shapes read).
/// Empty text gives an empty list.
///
/// # Errors
/// [`ImportError::TooLarge`] for text over [`MAX_INPUT_BYTES`]; [`ImportError::Syntax`] with
/// line and column for text that is not JSON (serde_json's nesting limit of 128 included).
pub fn parse_definitions(text: &str) -> Result<Vec<ParsedDefinition>, ImportError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge {
            bytes: text.len(),
            limit: MAX_INPUT_BYTES,
        });
    }
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut lines = LineCounter::default();
    loop {
        let start = stream.byte_offset();
        let value = match stream.next() {
            None => break,
            Some(Ok(value)) => value,
            Some(Err(e)) => {
                let full = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = match full.strip_suffix(&suffix).unwrap_or(&full) {
                    "recursion limit exceeded" => {
                        "arrays and objects nested more than 128 deep".to_string()
                    }
                    m => m.to_string(),
                };
                return Err(ImportError::Syntax {
                    line: e.line(),
                    column: e.column(),
                    message,
                });
            }
        };
        let line = lines.line_at(text, start);
        match value {
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    entry(
                        item,
                        Location {
                            line: Some(line),
                            index: Some(i),
                        },
                        &mut out,
                    );
                }
            }
            other => entry(
                other,
                Location {
                    line: Some(line),
                    index: None,
                },
                &mut out,
            ),
        }
    }
    Ok(out)
}

/// Adds the definitions in one value.
fn entry(value: Value, location: Location, out: &mut Vec<ParsedDefinition>) {
    entry_in(value, location, None, None, 0, out);
}

/// Adds the definitions in `value`, found in a list of `dialect` (or of none) with the
/// wrapper's `source`; `depth` counts the lists opened (a request's `tools` holding Gemini
/// tools holding declarations is two).
fn entry_in(
    value: Value,
    location: Location,
    source: Option<String>,
    dialect: Option<Dialect>,
    depth: usize,
    out: &mut Vec<ParsedDefinition>,
) {
    if let Value::Object(mut map) = value {
        if let Some(key) = list_key(&map).filter(|_| depth < 2) {
            let source = source_of(&map).or(source);
            let dialect = match key {
                "functionDeclarations" | "function_declarations" => Some(Dialect::Gemini),
                _ => dialect,
            };
            if let Some(Value::Array(items)) = map.remove(key) {
                for (i, definition) in items.into_iter().enumerate() {
                    let at = Location {
                        index: Some(i),
                        ..location
                    };
                    entry_in(definition, at, source.clone(), dialect, depth + 1, out);
                }
            }
            return;
        }
        return single(Value::Object(map), location, source, dialect, out);
    }
    single(value, location, source, dialect, out)
}

fn single(
    value: Value,
    location: Location,
    source: Option<String>,
    dialect: Option<Dialect>,
    out: &mut Vec<ParsedDefinition>,
) {
    let (source, definition) = match detect::unwrap(&value) {
        Some(wrapped) => (wrapped.source.or(source), wrapped.function.clone()),
        None => (source, value),
    };
    out.push(ParsedDefinition {
        location,
        source,
        definition,
        dialect,
    });
}

/// The key of a list of definitions: `tools` (MCP `tools/list`, a request's tools),
/// `functionDeclarations` (a Gemini tool) or `function` (a BFCL question entry), in an object
/// that is not itself a definition.
fn list_key(map: &serde_json::Map<String, Value>) -> Option<&'static str> {
    if map.contains_key("name") || map.contains_key("type") {
        return None;
    }
    [
        "tools",
        "functionDeclarations",
        "function_declarations",
        "function",
    ]
    .into_iter()
    .find(|k| map.get(*k).is_some_and(Value::is_array))
}

/// Line numbers of byte offsets, counted forward once.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: usize,
}

impl LineCounter {
    /// The 1-based line of the first non-whitespace byte at or after `start`.
    fn line_at(&mut self, text: &str, start: usize) -> usize {
        let bytes = text.as_bytes();
        let mut at = start.min(bytes.len());
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at >= self.offset {
            self.line += bytes[self.offset..at]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            self.offset = at;
        }
        self.line + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Line, index, source and definition of each parsed definition.
    type Row = (Option<usize>, Option<usize>, Option<String>, Value);

    fn lines(text: &str) -> Vec<Row> {
        parse_definitions(text)
            .unwrap()
            .into_iter()
            .map(|p| (p.location.line, p.location.index, p.source, p.definition))
            .collect()
    }

    #[test]
    fn json_lines_wrappers_arrays_and_tool_lists() {
        let text = concat!(
            "{\"source\": \"s#1\", \"function\": {\"name\": \"a\"}}\n",
            "\n",
            "{\"name\": \"b\"}\n",
            "[{\"name\": \"c\"}, {\"name\": \"d\"}]\n",
            "{\"tools\": [{\"name\": \"e\"}]}\n",
            "{\"id\": \"q1\", \"function\": [{\"name\": \"f\"}]}\n",
        );
        assert_eq!(
            lines(text),
            vec![
                (Some(1), None, Some("s#1".into()), json!({"name": "a"})),
                (Some(3), None, None, json!({"name": "b"})),
                (Some(4), Some(0), None, json!({"name": "c"})),
                (Some(4), Some(1), None, json!({"name": "d"})),
                (Some(5), Some(0), None, json!({"name": "e"})),
                (Some(6), Some(0), Some("q1".into()), json!({"name": "f"})),
            ]
        );
    }

    #[test]
    fn a_pretty_printed_array_is_one_value() {
        let text = "[\n  {\"name\": \"a\"},\n  {\"name\": \"b\"}\n]\n";
        assert_eq!(lines(text).len(), 2);
        assert!(parse_definitions("").unwrap().is_empty());
        assert!(parse_definitions(" \n ").unwrap().is_empty());
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let err = parse_definitions("{\"name\": \"a\"}\n{\"name\": }\n").unwrap_err();
        match err {
            ImportError::Syntax {
                line,
                column,
                message,
            } => {
                assert_eq!((line, column), (2, 10));
                assert_eq!(message, "expected value");
            }
            other => panic!("{other}"),
        }
        assert!(matches!(
            parse_definitions("{\"a\": 1} x"),
            Err(ImportError::Syntax { line: 1, .. })
        ));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            parse_definitions(&deep),
            Err(ImportError::Syntax { .. })
        ));
    }

    #[test]
    fn scalars_pass_through_to_be_refused_at_import() {
        assert_eq!(lines("3"), vec![(Some(1), None, None, json!(3))]);
    }
}
