//! Stage 8's cut to the byte limit, for every kind of tool: structured content stays
//! structured and conforms to the output schema the tool is listed with (typed tools, dynamic
//! tools from a JSON definition, a tool that declares the record itself); a schema that rejects
//! the shortened value gets the whole value; text is a head-and-tail preview.

use super::*;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use toolgate_core::schema::CompiledSchema;
use toolgate_test_support::tools::NoArgs;

#[derive(Serialize, JsonSchema)]
struct Item {
    /// The item's name.
    name: String,
    /// Its number.
    n: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Listing {
    /// The items.
    items: Vec<Item>,
    /// How many there are.
    total: u64,
}

/// A typed tool listing `n` items under a 16 KiB cap.
struct List(usize);

impl TypedTool for List {
    type Args = NoArgs;
    type Output = Listing;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("list")
            .description("Lists items.")
            .effects(Effects::read_only())
            .max_result_bytes(16 << 10)
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Listing, ToolError> {
        Ok(listing(self.0))
    }
}

fn listing(n: usize) -> Listing {
    Listing {
        items: (0..n)
            .map(|i| Item {
                name: format!("item number {i:05}"),
                n: i as u64,
            })
            .collect(),
        total: n as u64,
    }
}

/// A dynamic tool from an MCP definition with `output_schema`, returning `value`.
fn dynamic(name: &str, output_schema: Option<Value>, out: ToolOutput) -> DynamicTool {
    let mut definition =
        json!({"name": name, "description": "d", "inputSchema": {"type": "object"}});
    if let Some(s) = output_schema {
        definition["outputSchema"] = s;
    }
    DynamicTool::from_definition(
        &definition,
        ToolSpec::builder(name)
            .effects(Effects::read_only())
            .max_result_bytes(8 << 10),
        move |_, _| {
            let out = out.clone();
            async move { Ok(out) }
        },
    )
    .unwrap()
}

/// Calls `tool` (alone in its registry) and returns the result and the output schema it is
/// listed with, compiled.
async fn call(tool: impl IntoTool) -> (ToolResult, Option<CompiledSchema>, Pipeline) {
    let registry = Registry::builder().tool(tool).build().unwrap();
    let listed = registry.list(None).unwrap()[0].output_schema.clone();
    let name = registry.list(None).unwrap()[0].name.clone();
    let (p, _) = pipeline_with(registry, Arc::new(NobodyApprover));
    let s = p.session("s").build().unwrap();
    let r = p.dispatch(ToolCall::new("c", &*name, json!({})), &s).await;
    assert!(!r.is_error, "{r:?}");
    let schema = listed.map(|s| CompiledSchema::compile("t", "outputSchema", &s).unwrap());
    (r, schema, p)
}

/// The stored full result of `r`.
fn full(p: &Pipeline, r: &ToolResult) -> String {
    let handle = &r.truncation.as_ref().expect("truncated").handle;
    p.results()
        .get("s", handle)
        .unwrap()
        .expect("stored")
        .to_string()
}

#[tokio::test]
async fn a_typed_tools_long_list_is_shortened_within_its_listed_schema() {
    let (r, schema, p) = call(List(3000)).await;
    let v = r
        .structured_content
        .clone()
        .expect("structured content is kept");
    schema.unwrap().validate(&v).unwrap();
    assert!(r.text().len() <= 16 << 10, "{}", r.text().len());
    assert_eq!(
        r.text(),
        v.to_string(),
        "the text is the JSON of what is shown"
    );
    let items = v["items"].as_array().unwrap();
    assert!(items.len() > 100 && items.len() < 3000, "{}", items.len());
    assert_eq!(v["total"], 3000);
    let t = r.truncation.clone().unwrap();
    assert_eq!(v["truncation"], serde_json::to_value(&t).unwrap());
    assert_eq!(t.omitted[0].pointer, "/items");
    let text = full(&p, &r);
    let whole: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(whole, serde_json::to_value(listing(3000)).unwrap());
    let rest = &text[t.omitted[0].offset as usize..];
    let item: Value =
        serde_json::from_str(rest.lines().next().unwrap().trim_end_matches(',')).unwrap();
    assert_eq!(
        item["n"],
        items.len(),
        "the offset is where the first item left out begins"
    );
    // a result within the limit is untouched
    let (r, _, _) = call(List(10)).await;
    assert!(r.truncation.is_none());
    assert!(r.structured_content.unwrap().get("truncation").is_none());
}

#[tokio::test]
async fn a_dynamic_tools_result_is_shortened_within_its_listed_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "string"}},
            "log": {"type": "string"}
        },
        "required": ["rows", "log"],
        "additionalProperties": false
    });
    let rows: Vec<String> = (0..2000).map(|i| format!("row {i}")).collect();
    let log = "log line\n".repeat(3000);
    let out = ToolOutput::structured(json!({"rows": rows, "log": log}));
    let (r, listed, p) = call(dynamic("third_party", Some(schema), out)).await;
    let v = r.structured_content.clone().unwrap();
    listed.unwrap().validate(&v).unwrap();
    assert!(v.to_string().len() <= 8 << 10);
    let mut pointers: Vec<&str> = r
        .truncation
        .as_ref()
        .unwrap()
        .omitted
        .iter()
        .map(|o| o.pointer.as_str())
        .collect();
    // in the object's order, which is its keys' or the tool's (serde_json's `preserve_order`)
    pointers.sort();
    assert_eq!(pointers, ["/log", "/rows"]);
    assert!(v["log"].as_str().unwrap().starts_with("log line\n"));
    assert!(v["log"]
        .as_str()
        .unwrap()
        .contains("read_result {\"handle\":\"res_"));
    assert!(full(&p, &r).contains("\"row 1999\""));
}

#[tokio::test]
async fn a_schema_that_rejects_the_shortened_value_gets_it_whole() {
    let schema = json!({
        "type": "object",
        "properties": {"rows": {"type": "array", "minItems": 2000}},
        "required": ["rows"]
    });
    let rows: Vec<u32> = (0..2000).collect();
    let value = json!({ "rows": rows });
    let (r, listed, p) = call(dynamic(
        "strict",
        Some(schema),
        ToolOutput::structured(value.clone()),
    ))
    .await;
    assert_eq!(
        r.structured_content.as_ref(),
        Some(&value),
        "sent whole, as the schema demands"
    );
    listed
        .unwrap()
        .validate(r.structured_content.as_ref().unwrap())
        .unwrap();
    assert!(r.text().len() <= 8 << 10, "the text is still cut");
    let t = r.truncation.clone().unwrap();
    assert!(r.text().contains(&t.handle));
    assert_eq!(serde_json::from_str::<Value>(&full(&p, &r)).unwrap(), value);
}

#[tokio::test]
async fn without_a_schema_objects_are_shortened_and_other_values_become_text() {
    let rows: Vec<u32> = (0..5000).collect();
    let (r, listed, _) = call(dynamic(
        "open",
        None,
        ToolOutput::structured(json!({ "rows": rows })),
    ))
    .await;
    assert!(listed.is_none());
    assert!(
        r.structured_content.unwrap()["rows"]
            .as_array()
            .unwrap()
            .len()
            < 5000
    );
    let (r, _, p) = call(dynamic("array", None, ToolOutput::structured(json!(rows)))).await;
    assert!(r.structured_content.is_none());
    assert!(r.text().len() <= 8 << 10 && r.text().starts_with("[\n"));
    assert_eq!(
        serde_json::from_str::<Value>(&full(&p, &r)).unwrap(),
        json!(rows)
    );
}

#[tokio::test]
async fn long_text_beside_small_structured_content_is_previewed() {
    let out = ToolOutput {
        structured: Some(json!({"lines": 20000})),
        content: vec![Content::text("text line\n".repeat(20000))],
    };
    let (r, _, p) = call(dynamic("both", None, out)).await;
    assert_eq!(r.structured_content, Some(json!({"lines": 20000})));
    assert_eq!(r.content.len(), 1);
    assert!(r.text().len() <= 8 << 10 && r.text().starts_with("text line\n"));
    assert_eq!(full(&p, &r).len(), 200_000);
}

#[tokio::test]
async fn a_long_embedded_resource_is_previewed_and_kept_whole_behind_the_handle() {
    let body = "resource line\n".repeat(10_000);
    let out = ToolOutput {
        structured: None,
        content: vec![Content::embedded_text(
            "file:///long.txt",
            Some("text/plain".into()),
            body.clone(),
        )],
    };
    let (r, _, p) = call(dynamic("embedded", None, out)).await;
    assert_eq!(r.content.len(), 1);
    assert!(r.text().len() <= 8 << 10 && r.text().starts_with("resource line\n"));
    // nothing of the resource's text is lost: it is all behind the handle
    assert_eq!(full(&p, &r), body);
}

#[derive(Serialize, JsonSchema)]
struct OwnRecord {
    /// Some text.
    text: String,
    /// The tool declares the record itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncation: Option<Truncation>,
}

struct Declares;

impl TypedTool for Declares {
    type Args = NoArgs;
    type Output = OwnRecord;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("declares")
            .description("Declares its truncated shape.")
            .effects(Effects::read_only())
            .max_result_bytes(4096)
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<OwnRecord, ToolError> {
        Ok(OwnRecord {
            text: "x".repeat(100_000),
            truncation: None,
        })
    }
}

#[tokio::test]
async fn a_typed_tool_can_declare_its_truncated_shape() {
    let declared = toolgate_core::typed::schema_for::<OwnRecord>();
    let registry = Registry::builder().tool(Declares).build().unwrap();
    assert_eq!(
        registry.list(None).unwrap()[0].output_schema.as_ref(),
        Some(&declared),
        "a schema that declares the record is served as written"
    );
    let (r, schema, _) = call(Declares).await;
    let v = r.structured_content.unwrap();
    schema.unwrap().validate(&v).unwrap();
    assert!(v.to_string().len() <= 4096);
    let back: OwnRecord = serde_json::from_value::<Value>(v.clone())
        .map(|v| OwnRecord {
            text: v["text"].as_str().unwrap().into(),
            truncation: serde_json::from_value(v["truncation"].clone()).unwrap(),
        })
        .unwrap();
    assert_eq!(back.truncation.unwrap().omitted[0].pointer, "/text");
}
