//! Stage 8, finish: the output is checked against `outputSchema` (a mismatch is an error, never
//! an optimistic success), its strings are made safe to show, and each part past the tool's
//! byte limit is cut with the full part kept behind a handle ([`crate::truncate`]):
//!
//! - structured content is shortened inside the value (arrays lose their last items, strings
//!   their middle, a `truncation` record names what was left out and the handle), so it still
//!   conforms to the tool's `outputSchema`, which the registry widened to admit that record;
//!   its JSON text, which clients show beside it, is then short too. A value the schema
//!   rejects once shortened is sent whole, and the text blocks are a preview of its JSON;
//! - text blocks past the limit become one head-and-tail preview whose marker names the
//!   handle and the offset to read on from.
//!
//! A result's size is that of the text a model reads: its content blocks when the tool gave
//! any (a [`crate::TypedTool::text`] rendering, say), else its structured content's JSON; it
//! is counted once, into the session's total. When a tool gives both, each is cut on its own
//! measure: the structured content when its JSON is past the limit (a value that cannot be
//! shortened within its schema is then sent whole, and the tool's text is kept rather than
//! replaced by a preview of the JSON), the text blocks when they are; each cut names the
//! handle of its own full form.

use crate::error::ToolError;
use crate::registry::Entry;
use crate::result::{Content, ResourceContents, ToolOutput, ToolResult, Truncation};
use crate::results::ResultStore;
use crate::sanitize::{clean_output, clean_output_value};
use crate::session::Session;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The success result (`call_id`, `tool` and `duration` are filled in by the driver).
///
/// # Errors
/// `tool_failed` with reason `output_schema_mismatch` (with the faults) when the tool has an
/// `outputSchema` and the output lacks structured content or does not satisfy it; `internal`
/// when the result store cannot keep a truncated result.
pub fn finish(
    entry: &Entry,
    mut output: ToolOutput,
    session: &Session,
    results: &dyn ResultStore,
    result_bytes: &mut usize,
) -> Result<ToolResult, ToolError> {
    let spec = entry.spec();
    if let Some(schema) = &entry.output {
        let Some(structured) = &output.structured else {
            return Err(mismatch(
                "the tool returned no structured content although it declares an outputSchema",
                Vec::new(),
            ));
        };
        if let Err(faults) = schema.validate(structured) {
            return Err(mismatch(
                "the tool's output does not match its outputSchema",
                faults,
            ));
        }
    }
    if let Some(v) = &mut output.structured {
        clean_output_value(v);
    }
    for c in &mut output.content {
        clean_content(c);
    }
    // the text a model reads: the content blocks, else the structured content's JSON
    let texts = texts_len(&output.content);
    let json = output.structured.as_ref().map_or(0, json_len);
    let size = if texts > 0 { texts } else { json };
    *result_bytes = size;
    session
        .result_bytes
        .fetch_add(size as u64, Ordering::Relaxed);
    let max = spec.max_result_bytes;
    let keep = |text: String| results.put(&session.id, text);
    let mut truncation = None;
    if json > max {
        if let Some(value) = output.structured.take() {
            truncation = shorten(entry, value, &mut output, texts > 0, keep)?;
        }
    }
    if texts > max && texts_len(&output.content) > max {
        let measured = texts_len(&output.content);
        let full = render_texts(&output.content);
        // an image or audio block past the limit is left out whole, behind a handle of its
        // own (its base64), and a line in its place says so; links stay (a name and a URI)
        let mut left_out = Vec::new();
        let mut links = Vec::new();
        let mut media_handle = None;
        for c in std::mem::take(&mut output.content) {
            let (kind, data, mime_type) = match c {
                Content::Image { data, mime_type } => ("an image", data, mime_type),
                Content::Audio { data, mime_type } => ("audio", data, mime_type),
                link @ Content::ResourceLink(_) => {
                    links.push(link);
                    continue;
                }
                _ => continue,
            };
            let bytes = data.len();
            let handle = keep(data)?;
            left_out.push(Content::text(format!(
                "[{kind} ({}, {bytes} bytes of base64) was left out, past the result limit of \
                 {max} bytes: read_result with handle {handle} returns its base64]",
                crate::sanitize::clean_output(&mime_type)
            )));
            media_handle.get_or_insert(handle);
        }
        let (handle, shown) = if full.is_empty() {
            (media_handle.unwrap_or_default(), 0)
        } else {
            let handle = keep(full.clone())?;
            let (preview, shown) = crate::truncate::preview(&full, max, &handle);
            output.content.push(Content::text(preview));
            (handle, shown)
        };
        output.content.extend(left_out);
        output.content.extend(links);
        truncation.get_or_insert(Truncation {
            original_bytes: measured,
            shown_bytes: shown,
            handle,
            omitted: Vec::new(),
            message: String::new(),
        });
    }
    Ok(ToolResult {
        call_id: "".into(),
        tool: spec.name.clone(),
        is_error: false,
        content: output.content,
        structured_content: output.structured,
        error: None,
        truncation,
        replayed: false,
        duration: Duration::ZERO,
    })
}

/// Cuts structured content past the limit into `output`, returning the record (`None` when
/// the value is sent whole beside the tool's own content, `own_content`, which then stands
/// as the text a model reads).
fn shorten(
    entry: &Entry,
    value: Value,
    output: &mut ToolOutput,
    own_content: bool,
    keep: impl Fn(String) -> Result<String, ToolError>,
) -> Result<Option<Truncation>, ToolError> {
    let spec = entry.spec();
    let max = spec.max_result_bytes;
    // a schema may reject the shortened value (a `minItems`, a `pattern` on a cut string):
    // then the whole value is sent, as the schema demands
    let whole = entry.output.is_some().then(|| value.clone());
    let (fallback, stored) = match crate::truncate::shorten(value, max, &keep)? {
        Ok(short)
            if entry
                .output
                .as_ref()
                .is_none_or(|s| s.is_valid(&short.value)) =>
        {
            output.structured = Some(short.value);
            return Ok(Some(short.truncation));
        }
        Ok(short) => (whole.unwrap_or_default(), Some(short.truncation.handle)),
        Err(value) => (value, None),
    };
    if own_content && entry.output.is_some() {
        // the model reads the tool's own text (cut on its own when past the limit), not a
        // preview of this JSON: the value is sent whole, as the schema demands
        tracing::warn!(
            tool = %spec.name,
            "a structured result past the byte limit cannot be shortened within the tool's \
             outputSchema: it is sent whole beside the tool's text"
        );
        output.structured = Some(fallback);
        return Ok(None);
    }
    // the same text as the one stored (or to store): the value's JSON, a short item a line
    let full = crate::truncate::full_text(&fallback);
    let handle = match stored {
        Some(handle) => handle,
        None => keep(full.clone())?,
    };
    if own_content {
        // no schema asks for it: the value is left out, whole behind the handle, and the
        // tool's text stays what the model reads
        return Ok(Some(Truncation {
            original_bytes: full.len(),
            shown_bytes: 0,
            handle,
            omitted: Vec::new(),
            message: String::new(),
        }));
    }
    let (preview, shown) = crate::truncate::preview(&full, max, &handle);
    output.content = vec![Content::text(preview)];
    if entry.output.is_some() {
        tracing::warn!(
            tool = %spec.name,
            bytes = full.len(),
            "a structured result past the byte limit cannot be shortened within the tool's \
             outputSchema: it is sent whole, and only its text is cut"
        );
        output.structured = Some(fallback);
    }
    Ok(Some(Truncation {
        original_bytes: full.len(),
        shown_bytes: shown,
        handle,
        omitted: Vec::new(),
        message: String::new(),
    }))
}

/// Makes the text a model or a person reads in one block safe to show: text, the text of an
/// embedded resource, a link's names. URIs, MIME types and base64 payloads are left as sent.
fn clean_content(c: &mut Content) {
    fn clean(s: &mut String) {
        if let Cow::Owned(clean) = clean_output(s) {
            *s = clean;
        }
    }
    match c {
        Content::Text { text } => clean(text),
        Content::Resource {
            resource: ResourceContents::Text { text, .. },
        } => clean(text),
        Content::ResourceLink(link) => {
            clean(&mut link.name);
            if let Some(t) = &mut link.title {
                clean(t);
            }
            if let Some(d) = &mut link.description {
                clean(d);
            }
        }
        _ => {}
    }
}

fn mismatch(message: &str, faults: Vec<crate::ArgumentFault>) -> ToolError {
    let mut e = ToolError::failed(format!(
        "{message}; this is a fault of the tool, not of the arguments"
    ))
    .with_reason("output_schema_mismatch");
    e.faults = faults;
    e
}

/// The size of the content blocks, one line break between each two.
fn texts_len(content: &[Content]) -> usize {
    content
        .iter()
        .map(|c| c.byte_len() + 1)
        .sum::<usize>()
        .saturating_sub(1)
}

/// The size of `v`'s compact JSON, without building it.
pub(crate) fn json_len(v: &Value) -> usize {
    crate::json::compact_len(v)
}

/// The text blocks and the bodies of embedded resources (a blob's base64), one a line: what
/// a result past the limit is cut to a preview of, so no text is lost to the handle.
fn render_texts(content: &[Content]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            Content::Resource { resource } => Some(resource.body()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// At most this many argument faults are listed in an error result.
pub const MAX_FAULTS: usize = 50;
/// Error messages and fault messages are cut to this many bytes.
pub const MAX_ERROR_MESSAGE_BYTES: usize = 2048;

/// Makes an error safe and small to show, as finish does for output: control characters in the
/// message, faults and details become visible escapes, messages are cut to
/// [`MAX_ERROR_MESSAGE_BYTES`], and at most [`MAX_FAULTS`] faults are kept (the last says how
/// many were left out). A model-chosen tool name or argument echoed in a message can then
/// neither drive the reader's terminal nor blow up the result.
pub fn clean_error(mut e: ToolError) -> ToolError {
    fn clean(s: &mut String) {
        if let Cow::Owned(c) = clean_output(s) {
            *s = c;
        }
        if s.len() > MAX_ERROR_MESSAGE_BYTES {
            let cut = crate::results::floor_char_boundary(s, MAX_ERROR_MESSAGE_BYTES);
            s.truncate(cut);
            s.push_str("...");
        }
    }
    clean(&mut e.message);
    if e.faults.len() > MAX_FAULTS {
        let dropped = e.faults.len() - (MAX_FAULTS - 1);
        e.faults.truncate(MAX_FAULTS - 1);
        e.faults.push(crate::ArgumentFault {
            pointer: String::new(),
            message: format!("... and {dropped} more faults"),
        });
    }
    for f in &mut e.faults {
        clean(&mut f.message);
        clean(&mut f.pointer);
    }
    // details name workspace entries too (the near names of a missing path), and go out
    // with the error
    if let Some(details) = &mut e.details {
        clean_output_value(details);
    }
    e
}

/// A tool name as called, for a result whose tool did not resolve: controls made visible and
/// cut to 256 bytes (valid names have at most 128).
pub fn clean_name(name: &str) -> String {
    let cut = crate::results::floor_char_boundary(name, 256);
    clean_output(&name[..cut]).into_owned()
}
