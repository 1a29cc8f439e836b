//! The finish stage on results of 1 KiB, 32 KiB and 1 MiB, through the whole pipeline (no
//! audit), so the cost over `dispatch`'s echo is finish's and the result text's. Two shapes:
//!
//! - `listing`: a typed tool returns a listing of that size (one structured value of many
//!   small items, as `list_dir` and `glob` do): checking it against the output schema,
//!   cleaning its strings, and for the 1 MiB one (past the 64 KiB cap) shortening it inside
//!   the value and keeping its text behind a handle;
//! - `text`: a typed tool returns one string of numbered lines of that size (as `run_shell`
//!   does, tabs and quotes included), and the text block a client shows beside structured
//!   content is rendered from the result ([`ToolResult::text`], what the MCP server sends:
//!   the structured content's JSON); the 1 MiB one is cut in its middle and kept behind a
//!   handle;
//! - `lines`: the same tool giving its own text, the lines as they are
//!   ([`TypedTool::text`], as `read_file` does): the text block is that copy, cleaned and
//!   measured beside the structured value, and past the cap each is cut on its own.
//!
//! `cargo bench -p toolgate-core --bench finish`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use toolgate_core::{
    Effects, NullAuditSink, Pipeline, Registry, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec, ToolSpecBuilder, TypedTool,
};
use toolgate_test_support::tools::NoArgs;

#[derive(Clone, Serialize, JsonSchema)]
struct Entry {
    /// A name.
    name: String,
    /// A size.
    size: u64,
}

#[derive(Clone, Serialize, JsonSchema)]
struct Listing {
    /// The entries.
    entries: Vec<Entry>,
}

/// Returns a listing of about `bytes` bytes of JSON.
struct Sized(Listing);

impl Sized {
    fn new(bytes: usize) -> Sized {
        // each entry is about 50 bytes of JSON
        let entries = (0..bytes / 50)
            .map(|i| Entry {
                name: format!("an_entry_named_{i:08}.txt"),
                size: i as u64,
            })
            .collect();
        Sized(Listing { entries })
    }
}

impl TypedTool for Sized {
    type Args = NoArgs;
    type Output = Listing;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("sized")
            .description("Returns a listing of a given size.")
            .effects(Effects::read_only())
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Listing, ToolError> {
        Ok(self.0.clone())
    }
}

#[derive(Clone, Serialize, JsonSchema)]
struct Lines {
    /// The file.
    path: String,
    /// Numbered lines.
    content: String,
    /// How many.
    lines_returned: u64,
}

/// Returns `bytes` bytes of numbered, source-like lines in one string; with `own`, renders
/// them as its text.
struct Text(Lines, bool);

impl Text {
    fn new(bytes: usize, own: bool) -> Text {
        let mut content = String::with_capacity(bytes + 128);
        let mut n = 0u64;
        while content.len() < bytes {
            n += 1;
            content.push_str(&format!(
                "{n:>6}\t    let value_{n} = map.get(\"key {n}\").unwrap_or(&0); // é\n"
            ));
        }
        let mut cut = bytes;
        while !content.is_char_boundary(cut) {
            cut -= 1;
        }
        content.truncate(cut);
        Text(
            Lines {
                path: "src/lib.rs".into(),
                content,
                lines_returned: n,
            },
            own,
        )
    }
}

impl TypedTool for Text {
    type Args = NoArgs;
    type Output = Lines;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("text")
            .description("Returns numbered lines of a given size.")
            .effects(Effects::read_only())
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Lines, ToolError> {
        Ok(self.0.clone())
    }
    fn text(&self, out: &Lines) -> Option<String> {
        self.1.then(|| out.content.clone())
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("finish");
    for (shape, name, bytes) in [
        ("listing", "1KiB", 1 << 10),
        ("listing", "32KiB", 32 << 10),
        ("listing", "1MiB", 1 << 20),
        ("text", "1KiB", 1 << 10),
        ("text", "32KiB", 32 << 10),
        ("text", "1MiB", 1 << 20),
        ("lines", "1KiB", 1 << 10),
        ("lines", "32KiB", 32 << 10),
        ("lines", "1MiB", 1 << 20),
    ] {
        group.throughput(Throughput::Bytes(bytes as u64));
        let (registry, tool) = match shape {
            "listing" => (Registry::builder().tool(Sized::new(bytes)), "sized"),
            own => (
                Registry::builder().tool(Text::new(bytes, own == "lines")),
                "text",
            ),
        };
        let pipeline = Pipeline::builder(registry.build().unwrap())
            .audit(std::sync::Arc::new(NullAuditSink))
            .build();
        // a new session every 1,000 calls, as in `dispatch`
        let session = std::cell::RefCell::new(pipeline.session("bench").build().unwrap());
        let mut n: u64 = 0;
        let render = shape != "listing";
        group.bench_function(format!("{shape}/{name}"), |b| {
            b.iter_batched(
                || {
                    n += 1;
                    if n.is_multiple_of(1000) {
                        *session.borrow_mut() = pipeline.session("bench").build().unwrap();
                    }
                    ToolCall::new(format!("call-{n}"), tool, json!({}))
                },
                |call| {
                    let r: ToolResult = rt.block_on(pipeline.dispatch(call, &session.borrow()));
                    assert!(!r.is_error, "{}", r.text());
                    if render {
                        let text = r.text().len();
                        (r, text)
                    } else {
                        (r, 0)
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
