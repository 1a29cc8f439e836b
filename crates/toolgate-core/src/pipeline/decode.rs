//! Stage 3, decode: the arguments satisfy `inputSchema` (compiled at registration) and decode
//! into the handler's types.

use crate::error::ToolError;
use crate::registry::Entry;
use crate::tool::Args;
use serde_json::Value;

/// The decoded arguments.
///
/// # Errors
/// `invalid_arguments` with every fault and its JSON pointer.
pub fn decode(entry: &Entry, arguments: &Value) -> Result<Args, ToolError> {
    if !entry.input.is_valid(arguments) {
        let faults = entry.input.faults(arguments);
        let names: Vec<&str> = faults
            .iter()
            .map(|f| {
                if f.pointer.is_empty() {
                    "(arguments)"
                } else {
                    f.pointer.as_str()
                }
            })
            .collect();
        return Err(ToolError::invalid_arguments(
            format!(
                "the arguments do not match the tool's inputSchema at {}; fix those and call again",
                names.join(", ")
            ),
            faults,
        )
        .with_reason("schema_violation"));
    }
    entry.tool.decode(arguments)
}
