//! A typed tool's text rendering: the one text block beside its structured content, on a call
//! and on a result its reconcile hook finds; none when it renders none or an empty text.

use super::*;
use crate::spec::Effects;
use pretty_assertions::assert_eq;
use serde_json::json;

#[derive(serde::Deserialize, JsonSchema)]
struct LinesArgs {
    /// How many lines.
    n: u32,
}

#[derive(Serialize, JsonSchema)]
struct Lines {
    /// The lines, `\n`-joined.
    text: String,
    /// How many.
    n: u32,
}

/// Renders its output as the lines and a count, unless `plain` (then as none, or as an
/// empty text when `empty`).
struct Render {
    plain: bool,
    empty: bool,
}

impl TypedTool for Render {
    type Args = LinesArgs;
    type Output = Lines;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("lines")
            .description("Returns n lines.")
            .effects(Effects::read_only())
    }
    async fn call(&self, args: LinesArgs, _: ToolContext) -> Result<Lines, ToolError> {
        Ok(lines(args.n))
    }
    fn text(&self, out: &Lines) -> Option<String> {
        match (self.plain, self.empty) {
            (false, _) => Some(format!("{}\n[{} lines]", out.text, out.n)),
            (true, false) => None,
            (true, true) => Some(String::new()),
        }
    }
    async fn reconcile(
        &self,
        _key: &str,
        args: &LinesArgs,
        _: ToolContext,
    ) -> Result<Reconciliation<Lines>, ToolError> {
        Ok(Reconciliation::Done(lines(args.n)))
    }
}

fn lines(n: u32) -> Lines {
    Lines {
        text: (1..=n)
            .map(|i| format!("line \"{i}\""))
            .collect::<Vec<_>>()
            .join("\n"),
        n,
    }
}

async fn call(tool: Render) -> (ToolOutput, ToolOutput) {
    let typed = Typed::new(tool).unwrap();
    let args = || typed.decode(&json!({"n": 2})).unwrap();
    let called = typed
        .call(args(), ToolContext::builder().build())
        .await
        .unwrap();
    let held = args();
    let reconciled = match typed
        .reconcile("k", &held, ToolContext::builder().build())
        .expect("the typed tool has a hook")
        .await
        .unwrap()
    {
        Reconciliation::Done(out) => out,
        _ => panic!("the hook found the call done"),
    };
    (called, reconciled)
}

#[tokio::test]
async fn a_rendering_is_the_one_text_block_beside_the_structured_content() {
    let (called, reconciled) = call(Render {
        plain: false,
        empty: false,
    })
    .await;
    let want = ToolOutput {
        structured: Some(json!({"text": "line \"1\"\nline \"2\"", "n": 2})),
        content: vec![Content::text("line \"1\"\nline \"2\"\n[2 lines]")],
    };
    assert_eq!(called, want);
    assert_eq!(reconciled, want, "a reconciled result renders the same");
}

#[tokio::test]
async fn no_rendering_or_an_empty_one_leaves_the_json_text() {
    for empty in [false, true] {
        let (called, reconciled) = call(Render { plain: true, empty }).await;
        let want = ToolOutput::structured(json!({"text": "line \"1\"\nline \"2\"", "n": 2}));
        assert_eq!(called, want, "empty: {empty}");
        assert_eq!(reconciled, want, "empty: {empty}");
    }
}
