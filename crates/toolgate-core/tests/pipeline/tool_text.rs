//! Stage 8 with a typed tool that renders its own text ([`TypedTool::text`]) beside its
//! structured content: the text is what is counted (once) and what a model reads, both are
//! cleaned, and past the cap each is cut on its own measure with its own handle: the
//! structured content inside the value (within its listed schema), the text to a preview.
//! A value its schema will not let be shortened is sent whole, and the tool's text stays;
//! one that cannot be shortened and has no schema is left out, whole behind a handle.

use super::*;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use toolgate_core::schema::CompiledSchema;
use toolgate_test_support::tools::NoArgs;

/// The cap of the tools here, in bytes.
const CAP: usize = 8 << 10;

#[derive(Serialize, JsonSchema)]
struct Page {
    /// The numbered lines, `\n`-joined.
    content: String,
    /// How many lines the page holds.
    lines: u64,
}

#[derive(Serialize, JsonSchema)]
struct Strict {
    /// The numbered lines; the schema says at least 60000 bytes, so they cannot be cut.
    #[schemars(length(min = 60000))]
    content: String,
}

/// A page of `lines` numbered lines (each with an escape sequence and a quote), rendered as
/// its lines and a last row saying how many (or, when `summary`, as that row alone).
struct Lines {
    lines: u64,
    summary: bool,
}

fn content(lines: u64) -> String {
    (1..=lines)
        .map(|i| format!("{i:>6}\t\u{1b}[31mred\u{1b}[0m \"line\" {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl TypedTool for Lines {
    type Args = NoArgs;
    type Output = Page;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("lines")
            .description("Numbered lines.")
            .effects(Effects::read_only())
            .max_result_bytes(CAP)
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Page, ToolError> {
        Ok(Page {
            content: content(self.lines),
            lines: self.lines,
        })
    }
    fn text(&self, out: &Page) -> Option<String> {
        let row = format!("[{} lines shown]", out.lines);
        Some(if self.summary {
            row
        } else {
            format!("{}\n{row}", out.content)
        })
    }
}

struct Whole;

impl TypedTool for Whole {
    type Args = NoArgs;
    type Output = Strict;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("whole")
            .description("Lines that cannot be cut.")
            .effects(Effects::read_only())
            .max_result_bytes(CAP)
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Strict, ToolError> {
        let mut content = content(3000);
        content.truncate(60000);
        Ok(Strict { content })
    }
    fn text(&self, out: &Strict) -> Option<String> {
        Some(format!("{} bytes of lines", out.content.len()))
    }
}

/// What one call of `tool` gives: the result, its listed output schema compiled, the bytes
/// its audit record counts, and the pipeline (for its stored results).
async fn call(tool: impl IntoTool) -> (ToolResult, CompiledSchema, usize, Pipeline) {
    let registry = Registry::builder().tool(tool).build().unwrap();
    let listed = registry.list(None).unwrap()[0].clone();
    let (p, audit) = pipeline_with(registry, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(ToolCall::new("c", &*listed.name, json!({})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
    let schema =
        CompiledSchema::compile("t", "outputSchema", listed.output_schema.as_ref().unwrap())
            .unwrap();
    let bytes = audit.calls()[0].result_bytes;
    (r, schema, bytes, p)
}

fn stored(p: &Pipeline, handle: &str) -> String {
    p.results()
        .get("s", handle)
        .unwrap()
        .expect("stored")
        .to_string()
}

/// `s` with its escape characters made visible, as the finish stage shows them.
fn visible(s: &str) -> String {
    s.replace('\u{1b}', "\\x1b")
}

#[tokio::test]
async fn text_and_structured_content_past_the_cap_are_each_cut_with_their_own_handle() {
    let tool = Lines {
        lines: 2000,
        summary: false,
    };
    let rendered = visible(&format!("{}\n[2000 lines shown]", content(2000)));
    let (r, schema, bytes, p) = call(tool).await;
    assert_eq!(bytes, rendered.len(), "the text is counted, once");

    // the structured content: shortened inside the value, within its listed schema
    let v = r
        .structured_content
        .clone()
        .expect("structured content is kept");
    schema.validate(&v).unwrap();
    assert!(v.to_string().len() <= CAP, "{}", v.to_string().len());
    let t = r.truncation.clone().expect("a truncation record");
    assert_eq!(v["truncation"], serde_json::to_value(&t).unwrap());
    assert_eq!(t.omitted[0].pointer, "/content");
    let whole: Value = serde_json::from_str(&stored(&p, &t.handle)).unwrap();
    assert_eq!(
        whole,
        json!({"content": visible(&content(2000)), "lines": 2000}),
        "the structured handle keeps the whole value, cleaned"
    );

    // the text: a head-and-tail preview naming its own handle, behind which is all of it
    assert_eq!(r.content.len(), 1);
    let text = r.text();
    assert!(text.len() <= CAP, "{}", text.len());
    assert!(
        text.starts_with("     1\t\\x1b[31mred\\x1b[0m \"line\" 1\n"),
        "{text:.80}"
    );
    assert!(text.ends_with("\n[2000 lines shown]"), "the tail is kept");
    let handle = text
        .split("\"handle\":\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .expect("the marker names a handle");
    assert_ne!(handle, t.handle);
    assert_eq!(
        stored(&p, handle),
        rendered,
        "the text handle keeps the whole text"
    );
    assert!(!text.contains('\u{1b}') && !v.to_string().contains('\u{1b}'));
}

#[tokio::test]
async fn a_short_text_stays_whole_beside_structured_content_cut_to_the_cap() {
    let (r, schema, bytes, _) = call(Lines {
        lines: 2000,
        summary: true,
    })
    .await;
    assert_eq!(r.content, vec![Content::text("[2000 lines shown]")]);
    assert_eq!(bytes, "[2000 lines shown]".len());
    let v = r.structured_content.unwrap();
    schema.validate(&v).unwrap();
    assert!(v.to_string().len() <= CAP);
    assert_eq!(r.truncation.unwrap().omitted[0].pointer, "/content");
}

#[tokio::test]
async fn results_within_the_cap_keep_the_text_and_the_value_as_given() {
    let (r, _, bytes, _) = call(Lines {
        lines: 3,
        summary: false,
    })
    .await;
    let rendered = visible(&format!("{}\n[3 lines shown]", content(3)));
    assert_eq!(r.content, vec![Content::text(rendered.clone())]);
    assert_eq!(
        r.structured_content,
        Some(json!({"content": visible(&content(3)), "lines": 3}))
    );
    assert!(r.truncation.is_none());
    assert_eq!(bytes, rendered.len());
}

#[tokio::test]
async fn a_value_that_cannot_be_cut_is_sent_whole_and_the_tools_text_stays() {
    let (r, schema, bytes, _) = call(Whole).await;
    let v = r.structured_content.clone().unwrap();
    schema.validate(&v).unwrap();
    let mut whole = content(3000);
    whole.truncate(60000);
    assert_eq!(
        v["content"],
        json!(visible(&whole)),
        "sent whole, as the schema demands"
    );
    assert_eq!(
        r.content,
        vec![Content::text("60000 bytes of lines")],
        "the tool's text, not a preview of the JSON"
    );
    assert_eq!(bytes, "60000 bytes of lines".len());
    assert!(r.truncation.is_none(), "what the model reads was not cut");
}

/// Without an output schema, a value that cannot be shortened (an array) is left out, kept
/// whole behind a handle, and the tool's own text stays what the model reads.
#[tokio::test]
async fn without_a_schema_an_uncuttable_value_is_left_out_and_the_text_stays() {
    let rows: Vec<u32> = (0..5000).collect();
    let definition = json!({"name": "rows", "description": "d", "inputSchema": {"type": "object"}});
    let out = ToolOutput {
        structured: Some(json!(rows)),
        content: vec![Content::text("5000 rows")],
    };
    let tool = DynamicTool::from_definition(
        &definition,
        ToolSpec::builder("rows")
            .effects(Effects::read_only())
            .max_result_bytes(CAP),
        move |_, _| {
            let out = out.clone();
            async move { Ok(out) }
        },
    )
    .unwrap();
    let registry = Registry::builder().tool(tool).build().unwrap();
    let (p, audit) = pipeline_with(registry, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("c", "rows", json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, vec![Content::text("5000 rows")]);
    assert!(r.structured_content.is_none());
    let t = r
        .truncation
        .clone()
        .expect("the left-out value is recorded");
    assert_eq!(t.shown_bytes, 0);
    let whole: Value = serde_json::from_str(&stored(&p, &t.handle)).unwrap();
    assert_eq!(whole, json!(rows));
    assert_eq!(audit.calls()[0].result_bytes, "5000 rows".len());
}
