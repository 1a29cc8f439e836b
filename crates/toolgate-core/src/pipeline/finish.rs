//! Stage 8, finish: the output is checked against `outputSchema` (a mismatch is an error, never
//! an optimistic success), its strings are made safe to show, and a result past the tool's
//! byte limit is cut to a head-and-tail preview with the full result kept behind a handle.

use crate::error::ToolError;
use crate::registry::Entry;
use crate::result::{Content, ResourceContents, ToolOutput, ToolResult, Truncation};
use crate::results::ResultStore;
use crate::sanitize::{clean_output, clean_output_value};
use crate::session::Session;
use std::borrow::Cow;
use std::io::Write;
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
    let size = rendered_len(&output);
    *result_bytes = size;
    session
        .result_bytes
        .fetch_add(size as u64, Ordering::Relaxed);
    let mut truncation = None;
    if size > spec.max_result_bytes {
        let full = render(&output);
        let handle = results.put(&session.id, full.clone())?;
        let (preview, shown) = crate::truncate::preview(&full, spec.max_result_bytes, &handle);
        truncation = Some(Truncation {
            original_bytes: full.len(),
            shown_bytes: shown,
            handle,
        });
        output.structured = None;
        output.content = vec![Content::text(preview)];
    }
    Ok(ToolResult {
        call_id: "".into(),
        tool: spec.name.clone(),
        is_error: false,
        content: output.content,
        structured_content: output.structured,
        error: None,
        truncation,
        duration: Duration::ZERO,
    })
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

/// The size of the text a model reads, without building it.
fn rendered_len(output: &ToolOutput) -> usize {
    let texts: usize = output.content.iter().map(|c| c.byte_len() + 1).sum();
    if texts > 0 {
        return texts - 1;
    }
    match &output.structured {
        Some(v) => {
            let mut counter = Counter(0);
            let _ = serde_json::to_writer(&mut counter, v);
            counter.0
        }
        None => 0,
    }
}

fn render(output: &ToolOutput) -> String {
    let texts: Vec<&str> = output
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    output
        .structured
        .as_ref()
        .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
        .unwrap_or_default()
}

struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// At most this many argument faults are listed in an error result.
pub const MAX_FAULTS: usize = 50;
/// Error messages and fault messages are cut to this many bytes.
pub const MAX_ERROR_MESSAGE_BYTES: usize = 2048;

/// Makes an error safe and small to show, as finish does for output: control characters in the
/// message and faults become visible escapes, messages are cut to
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
    e
}

/// A tool name as called, for a result whose tool did not resolve: controls made visible and
/// cut to 256 bytes (valid names have at most 128).
pub fn clean_name(name: &str) -> String {
    let cut = crate::results::floor_char_boundary(name, 256);
    clean_output(&name[..cut]).into_owned()
}
