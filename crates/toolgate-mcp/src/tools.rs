//! `tools/list`: toolgate's tool contracts as MCP tool definitions, and cursor pagination.
//!
//! Effects map onto annotations (specification 2025-11-25, "Tool annotations"). All four hints
//! are always sent, because an absent `destructiveHint` or `openWorldHint` means `true`:
//!
//! | annotation | from |
//! |---|---|
//! | `readOnlyHint` | `effects.read_only` |
//! | `destructiveHint` | `effects.destructive`, and never for a read-only tool |
//! | `idempotentHint` | `effects.idempotent` (a read-only tool is idempotent by definition) |
//! | `openWorldHint` | `effects.open_world` |

use rmcp::model::{ErrorData, JsonObject, ListToolsResult, Tool, ToolAnnotations};
use serde_json::Value;
use std::sync::Arc;
use toolgate_core::ToolSpec;

/// The MCP definition of one tool: name, title, description, `inputSchema`, `outputSchema`
/// and the four annotation hints.
pub fn to_mcp_tool(spec: &ToolSpec) -> Tool {
    let e = &spec.effects;
    let annotations = ToolAnnotations::from_raw(
        spec.title.clone(),
        Some(e.read_only),
        Some(e.destructive && !e.read_only),
        Some(e.idempotent || e.read_only),
        Some(e.open_world),
    );
    let mut tool = Tool::default();
    tool.name = spec.name.to_string().into();
    tool.title = spec.title.clone();
    tool.description = Some(spec.description.clone().into());
    tool.input_schema = Arc::new(as_object(&spec.input_schema));
    tool.output_schema = spec.output_schema.as_ref().map(|s| Arc::new(as_object(s)));
    tool.annotations = Some(annotations);
    tool
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(m) => m.clone(),
        // The registry only accepts object schemas; an empty object accepts anything else.
        _ => JsonObject::new(),
    }
}

/// One page of `tools` (sorted by name) after `cursor`.
///
/// The cursor is opaque to clients: the hex encoding of the last name of the previous page,
/// so a page boundary stays put even if the list were to change between pages.
///
/// # Errors
/// JSON-RPC invalid params (`-32602`) for a cursor this server did not hand out.
pub fn page(
    tools: &[Tool],
    cursor: Option<&str>,
    size: usize,
) -> Result<ListToolsResult, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => {
            let after = decode_cursor(c).ok_or_else(|| {
                ErrorData::invalid_params(
                    "invalid cursor: send a nextCursor from a previous tools/list, or none",
                    None,
                )
            })?;
            tools.partition_point(|t| t.name.as_ref() <= after.as_str())
        }
    };
    let end = (start + size).min(tools.len());
    let mut result = ListToolsResult::with_all_items(tools[start..end].to_vec());
    if end < tools.len() {
        result.next_cursor = Some(encode_cursor(&tools[end - 1].name));
    }
    Ok(result)
}

const CURSOR_PREFIX: &str = "tg1.";

fn encode_cursor(name: &str) -> String {
    let mut s = String::with_capacity(CURSOR_PREFIX.len() + name.len() * 2);
    s.push_str(CURSOR_PREFIX);
    for b in name.bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix(CURSOR_PREFIX)?;
    if hex.is_empty() || hex.len() % 2 != 0 || hex.len() > 512 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use toolgate_core::Effects;

    fn spec(name: &str, effects: Effects) -> ToolSpec {
        ToolSpec::builder(name)
            .title(format!("The {name} tool"))
            .description("d")
            .effects(effects)
            .output_schema(serde_json::json!({"type": "object"}))
            .build()
            .unwrap()
    }

    #[test]
    fn annotations_always_carry_all_four_hints() {
        let read = serde_json::to_value(to_mcp_tool(&spec("r", Effects::read_only()))).unwrap();
        assert_eq!(
            read["annotations"],
            serde_json::json!({
                "title": "The r tool",
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false
            })
        );
        assert_eq!(read["title"], "The r tool");
        assert_eq!(read["outputSchema"], serde_json::json!({"type": "object"}));
        let write =
            serde_json::to_value(to_mcp_tool(&spec("w", Effects::side_effecting()))).unwrap();
        assert_eq!(
            write["annotations"],
            serde_json::json!({
                "title": "The w tool",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": false,
                "openWorldHint": false
            })
        );
    }

    #[test]
    fn pages_follow_the_cursor_in_name_order() {
        let tools: Vec<Tool> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|n| to_mcp_tool(&spec(n, Effects::read_only())))
            .collect();
        let mut names = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let p = page(&tools, cursor.as_deref(), 2).unwrap();
            pages += 1;
            names.extend(p.tools.iter().map(|t| t.name.to_string()));
            match p.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert!(page(&tools, Some("garbage"), 2).is_err());
        assert!(page(&tools, Some("tg1.zz"), 2).is_err());
        assert_eq!(page(&tools, None, 10).unwrap().next_cursor, None);
    }
}
