//! The result envelope: exactly one [`ToolResult`] per call id.

use crate::call::CallId;
use crate::error::ToolError;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

/// One block of unstructured content (MCP `content`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, for example `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// What a handler returns on success.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Structured output; checked against the tool's `outputSchema` when it has one.
    pub structured: Option<Value>,
    /// Unstructured content. When empty, the text rendering of `structured` stands for it.
    pub content: Vec<Content>,
}

impl ToolOutput {
    /// Structured output only (its JSON text is the content).
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            content: Vec::new(),
        }
    }

    /// Text only.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            structured: None,
            content: vec![Content::text(text)],
        }
    }
}

/// How a result was cut to the tool's byte limit; the full result stays behind `handle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// Size of the full rendered result, in bytes.
    pub original_bytes: usize,
    /// Bytes of the full result shown in the preview (head plus tail).
    pub shown_bytes: usize,
    /// Handle for `read_result`, which pages through the full result.
    pub handle: String,
}

/// The result of one call: the envelope every caller and every provider format is built from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: CallId,
    /// The tool name as called.
    pub tool: Arc<str>,
    /// Whether the call failed (MCP `isError`).
    pub is_error: bool,
    /// Unstructured content. Empty on success when `structured_content` stands for it; see
    /// [`ToolResult::text`].
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output (MCP `structuredContent`). Absent on errors and on truncated results.
    #[serde(default)]
    pub structured_content: Option<Value>,
    /// The error, when `is_error`.
    #[serde(default)]
    pub error: Option<ToolError>,
    /// Set when the result was truncated.
    #[serde(default)]
    pub truncation: Option<Truncation>,
    /// Wall time from dispatch to result.
    #[serde(with = "duration_us", rename = "duration_us")]
    pub duration: Duration,
}

impl ToolResult {
    /// An error result for `call_id`; its content is the error message.
    pub fn from_error(
        call_id: CallId,
        tool: Arc<str>,
        error: ToolError,
        duration: Duration,
    ) -> Self {
        ToolResult {
            call_id,
            tool,
            is_error: true,
            content: Vec::new(),
            structured_content: None,
            error: Some(error),
            truncation: None,
            duration,
        }
    }

    /// The error kind, when the call failed.
    pub fn error_kind(&self) -> Option<crate::ErrorKind> {
        self.error.as_ref().map(|e| e.kind)
    }

    /// Whether the caller's loop may go on: success, or a recoverable error.
    pub fn is_recoverable(&self) -> bool {
        self.error.as_ref().is_none_or(|e| e.is_recoverable())
    }

    /// The text a model reads: the text content, else the JSON text of the structured content,
    /// else (on errors) the error rendered as `kind (reason): message`.
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.content.iter().filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        });
        if let Some(first) = texts.next() {
            return match texts.next() {
                None => Cow::Borrowed(first),
                Some(second) => {
                    let mut all = format!("{first}\n{second}");
                    for t in texts {
                        all.push('\n');
                        all.push_str(t);
                    }
                    Cow::Owned(all)
                }
            };
        }
        if let Some(error) = &self.error {
            return Cow::Owned(render_error(error));
        }
        match &self.structured_content {
            Some(v) => Cow::Owned(v.to_string()),
            None => Cow::Borrowed(""),
        }
    }
}

/// Renders an error for the model: `kind (reason): message`, then one line per argument fault.
pub fn render_error(error: &ToolError) -> String {
    let mut s = error.to_string();
    for fault in &error.faults {
        s.push_str("\n- ");
        s.push_str(if fault.pointer.is_empty() {
            "(arguments)"
        } else {
            &fault.pointer
        });
        s.push_str(": ");
        s.push_str(&fault.message);
    }
    s
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            call_id: &'a CallId,
            tool: &'a str,
            is_error: bool,
            content: Cow<'a, [Content]>,
            #[serde(skip_serializing_if = "Option::is_none")]
            structured_content: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a ToolError>,
            #[serde(skip_serializing_if = "Option::is_none")]
            truncation: Option<&'a Truncation>,
            duration_us: u64,
        }
        let content = if self.content.is_empty() {
            Cow::Owned(vec![Content::text(self.text().into_owned())])
        } else {
            Cow::Borrowed(self.content.as_slice())
        };
        Wire {
            call_id: &self.call_id,
            tool: &self.tool,
            is_error: self.is_error,
            content,
            structured_content: self.structured_content.as_ref(),
            error: self.error.as_ref(),
            truncation: self.truncation.as_ref(),
            duration_us: self.duration.as_micros().min(u64::MAX as u128) as u64,
        }
        .serialize(serializer)
    }
}

mod duration_us {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_micros(u64::deserialize(d)?))
    }
}
