//! The result envelope: exactly one [`ToolResult`] per call id.

use crate::call::CallId;
use crate::error::ToolError;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

/// One block of unstructured content (MCP `content`, the specification's `ContentBlock`,
/// revision 2025-11-25 "Tool Result"): serialized with its `type` tag exactly as MCP sends it.
///
/// Binary payloads (`data`, `blob`) are base64 as MCP carries them; toolgate neither decodes
/// nor checks them. Only [`Content::Text`] counts as the text a model reads
/// ([`ToolResult::text`]); every block counts toward the tool's result byte limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Content {
    /// Text (`"type": "text"`).
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded (`"type": "image"`).
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, for example `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded (`"type": "audio"`).
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, for example `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded in the result, its contents included (`"type": "resource"`, MCP
    /// `EmbeddedResource`).
    Resource {
        /// The resource's URI and contents.
        resource: ResourceContents,
    },
    /// A link to a resource the client may fetch or subscribe to, without its contents
    /// (`"type": "resource_link"`, MCP `ResourceLink`).
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block: base64 `data` of MIME type `mime_type` (for example `image/png`).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block: base64 `data` of MIME type `mime_type` (for example `audio/wav`).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource: `text` is the contents of the resource at `uri`.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: ResourceContents::Text {
                uri: uri.into(),
                mime_type,
                text: text.into(),
            },
        }
    }

    /// An embedded binary resource: `blob` (base64) is the contents of the resource at `uri`.
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: Option<String>,
        blob: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: ResourceContents::Blob {
                uri: uri.into(),
                mime_type,
                blob: blob.into(),
            },
        }
    }

    /// A link to the resource at `uri`, named `name`; set the other fields on the
    /// [`ResourceLink`] before wrapping it for more.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(ResourceLink::new(uri, name))
    }

    /// The size this block adds to a result, in bytes: its text, its base64 payload, or its
    /// URI and names.
    pub fn byte_len(&self) -> usize {
        match self {
            Content::Text { text } => text.len(),
            Content::Image { data, .. } | Content::Audio { data, .. } => data.len(),
            Content::Resource { resource } => resource.uri().len() + resource.body().len(),
            Content::ResourceLink(link) => {
                link.uri.len()
                    + link.name.len()
                    + link.title.as_ref().map_or(0, String::len)
                    + link.description.as_ref().map_or(0, String::len)
            }
        }
    }
}

/// The contents of an embedded resource (MCP `TextResourceContents` or
/// `BlobResourceContents`): told apart on the wire by a `text` or a `blob` field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource's URI.
        uri: String,
        /// MIME type, for example `text/plain`.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// The resource's URI.
        uri: String,
        /// MIME type, for example `image/png`.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
    },
}

impl ResourceContents {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// The MIME type, when given.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                mime_type.as_deref()
            }
        }
    }

    /// The text, or the base64 data of a blob.
    pub fn body(&self) -> &str {
        match self {
            ResourceContents::Text { text, .. } => text,
            ResourceContents::Blob { blob, .. } => blob,
        }
    }
}

/// A link to a resource (MCP `ResourceLink`): what the client needs to fetch it, not its
/// contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its programmatic name.
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, when known.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size of the raw contents in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri` named `name`, nothing else set.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
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
///
/// On a result with structured content this record is also the `truncation` member of the
/// shortened structured content, which every output schema admits (see
/// [`crate::truncate::widen_output_schema`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Truncation {
    /// Size of the full result, in bytes: for structured content, its JSON text (behind
    /// `handle`); for content blocks, what the limit was measured against (every block's
    /// text or payload), whose text is behind `handle` while an image or audio block left
    /// out names a handle of its own (its base64) in the content.
    pub original_bytes: usize,
    /// Bytes shown: of a text, the head and the tail; of structured content, the size of the
    /// shortened value's JSON.
    pub shown_bytes: usize,
    /// Handle for `read_result`, which pages through the full result by byte offset.
    pub handle: String,
    /// What the structured content leaves out, in document order (absent for text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<Omission>,
    /// What was cut and how to read the rest, for the model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One part of a structured result that was left out to fit the byte limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Omission {
    /// The JSON pointer of the array, string or object that was shortened (RFC 6901; `""` is
    /// the whole result).
    pub pointer: String,
    /// What `shown` and `total` count: `items` of an array (its first ones are shown),
    /// `bytes` of a string (its start and its end are shown, with a marker between naming
    /// the same handle and offset), `members` of an object (its first ones, in the object's
    /// order).
    pub unit: OmissionUnit,
    /// How many are shown.
    pub shown: u64,
    /// How many there are.
    pub total: u64,
    /// The byte offset in the full result behind the handle where the first part left out
    /// begins: `read_result {"handle": ..., "offset": offset}` reads on from there.
    pub offset: u64,
}

/// What an [`Omission`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OmissionUnit {
    /// Array items.
    Items,
    /// Bytes of a string (UTF-8).
    Bytes,
    /// Object members.
    Members,
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
    /// Whether this is the recorded result of an earlier call with the same idempotency key,
    /// sent back without running the tool again (see [`crate::ledger`]). Serialized only when
    /// true.
    #[serde(default)]
    pub replayed: bool,
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
            replayed: false,
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
            Some(v) => Cow::Owned(crate::json::to_string(v)),
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
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            replayed: bool,
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
            replayed: self.replayed,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_block_has_the_mcp_wire_form() {
        let blocks = vec![
            Content::text("hi"),
            Content::image("iVBO", "image/png"),
            Content::audio("UklG", "audio/wav"),
            Content::embedded_text("test://r", Some("text/plain".into()), "body"),
            Content::embedded_blob("test://b", None, "AAEC"),
            Content::ResourceLink(
                ResourceLink::new("file:///a.txt", "a.txt")
                    .title("A")
                    .description("the a file")
                    .mime_type("text/plain")
                    .size(3),
            ),
        ];
        let wire = json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource", "resource":
                {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "title": "A",
             "description": "the a file", "mimeType": "text/plain", "size": 3},
        ]);
        assert_eq!(serde_json::to_value(&blocks).unwrap(), wire);
        let back: Vec<Content> = serde_json::from_value(wire).unwrap();
        assert_eq!(back, blocks);
    }

    #[test]
    fn malformed_blocks_are_refused_with_an_error() {
        for bad in [
            json!({"type": "audio", "data": "UklG"}),
            json!({"type": "video", "data": "x", "mimeType": "video/mp4"}),
            json!({"type": "resource", "resource": {"uri": "test://r"}}),
            json!({"type": "resource", "resource": {"text": "no uri"}}),
            json!({"type": "resource", "resource": {"uri": "test://r", "blob": 3}}),
            json!({"type": "resource_link", "uri": "file:///a"}),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a", "size": -1}),
            json!({"type": "resourceLink", "uri": "file:///a", "name": "a"}),
            json!({"text": "no type"}),
            json!("text"),
        ] {
            assert!(
                serde_json::from_value::<Content>(bad.clone()).is_err(),
                "accepted {bad}"
            );
        }
    }

    #[test]
    fn only_text_blocks_are_the_text_a_model_reads() {
        let r = ToolResult {
            call_id: "1".into(),
            tool: "t".into(),
            is_error: false,
            content: vec![
                Content::audio("UklG", "audio/wav"),
                Content::text("said"),
                Content::embedded_text("test://r", None, "embedded"),
            ],
            structured_content: None,
            error: None,
            truncation: None,
            replayed: false,
            duration: Duration::ZERO,
        };
        assert_eq!(r.text(), "said");
        assert_eq!(Content::audio("UklG", "audio/wav").byte_len(), 4);
        assert_eq!(
            Content::embedded_blob("u://x", None, "AAEC").byte_len(),
            "u://x".len() + 4
        );
        let link = Content::ResourceLink(ResourceLink::new("u://x", "x").title("T"));
        assert_eq!(link.byte_len(), "u://x".len() + 2);
    }
}
