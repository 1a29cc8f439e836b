//! Recognising a definition's dialect, and unwrapping BFCL-style wrappers.
//!
//! In this order: a top-level `"type"` is OpenAI (only OpenAI tools have one; a type other
//! than `function` is then refused with a clear message);
//! `inputSchema`, `outputSchema` or `annotations` is MCP; `parameters` or `response` is BFCL
//! (which also covers OpenAI's legacy bare `{"name", "parameters"}` function objects); a bare
//! `name` is MCP.

use super::Dialect;
use serde_json::{Map, Value};

/// A definition found inside a wrapper object.
#[derive(Debug)]
pub(crate) struct Wrapped<'a> {
    /// The definition.
    pub function: &'a Value,
    /// The wrapper's `source` (or `id`), when it is a string.
    pub source: Option<String>,
}

/// The definition inside `{"source": ..., "function": {...}}` (BFCL's functions.jsonl; `id`
/// is read as the source too): an object with an object `function` and neither `type` nor
/// `name`. `None` for anything else.
pub(crate) fn unwrap(definition: &Value) -> Option<Wrapped<'_>> {
    let map = definition.as_object()?;
    if map.contains_key("type") || map.contains_key("name") {
        return None;
    }
    let function = map.get("function").filter(|f| f.is_object())?;
    Some(Wrapped {
        function,
        source: source_of(map),
    })
}

/// A wrapper's `source`, or else its `id`, when it is a string.
pub(crate) fn source_of(map: &Map<String, Value>) -> Option<String> {
    ["source", "id"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// The dialect of a definition, never [`Dialect::Auto`]; `None` when nothing fits.
pub(crate) fn detect(map: &Map<String, Value>) -> Option<Dialect> {
    let has = |k: &str| map.contains_key(k);
    let openapi_types = ["parameters", "response"].iter().any(|k| {
        map.get(*k)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.len() > 1 && t.bytes().all(|b| b.is_ascii_uppercase()))
    });
    if has("input_schema") || has("input_examples") {
        Some(Dialect::Anthropic)
    } else if has("type") {
        Some(Dialect::OpenAi)
    } else if has("inputSchema") || has("outputSchema") || has("annotations") {
        Some(Dialect::Mcp)
    } else if has("parametersJsonSchema")
        || has("responseJsonSchema")
        || has("behavior")
        || openapi_types
    {
        Some(Dialect::Gemini)
    } else if has("parameters") || has("response") {
        Some(Dialect::Bfcl)
    } else if has("name") {
        Some(Dialect::Mcp)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Option<Dialect> {
        detect(v.as_object().unwrap())
    }

    #[test]
    fn each_shape_has_its_dialect() {
        assert_eq!(
            of(json!({"type": "function", "function": {"name": "f"}})),
            Some(Dialect::OpenAi)
        );
        assert_eq!(
            of(json!({"type": "function", "name": "f", "parameters": {}})),
            Some(Dialect::OpenAi)
        );
        assert_eq!(
            of(json!({"name": "f", "inputSchema": {}})),
            Some(Dialect::Mcp)
        );
        assert_eq!(of(json!({"name": "f"})), Some(Dialect::Mcp));
        assert_eq!(
            of(json!({"name": "f", "parameters": {}})),
            Some(Dialect::Bfcl)
        );
        assert_eq!(of(json!({"type": "web_search"})), Some(Dialect::OpenAi));
        assert_eq!(
            of(json!({"name": "f", "type": "custom", "input_schema": {}})),
            Some(Dialect::Anthropic)
        );
        assert_eq!(
            of(json!({"name": "f", "parameters": {"type": "OBJECT"}})),
            Some(Dialect::Gemini)
        );
        assert_eq!(
            of(json!({"name": "f", "parametersJsonSchema": {}})),
            Some(Dialect::Gemini)
        );
        assert_eq!(of(json!({"description": "x"})), None);
    }

    #[test]
    fn wrappers_unwrap_with_their_source() {
        let w = json!({"source": "a.json#1", "function": {"name": "f"}});
        let inner = unwrap(&w).unwrap();
        assert_eq!(inner.function, &json!({"name": "f"}));
        assert_eq!(inner.source.as_deref(), Some("a.json#1"));
        assert!(unwrap(&json!({"type": "function", "function": {"name": "f"}})).is_none());
        assert!(unwrap(&json!({"name": "f", "function": {}})).is_none());
        assert!(unwrap(&json!({"function": "f"})).is_none());
    }
}
