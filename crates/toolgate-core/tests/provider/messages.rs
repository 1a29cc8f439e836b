//! A tool-call message of each provider, in the shape its documentation gives, read,
//! dispatched through the pipeline and answered: one result per call id, in call order, with
//! the id, whether it failed and the text the model reads; malformed entries answered each on
//! its own.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use toolgate_core::provider::{export_profile, Codec, ExportOptions, Provider};
use toolgate_core::*;
use toolgate_test_support::tools::{big_output, destructive, Echo};

fn pipeline() -> Pipeline {
    let weather = ToolSpec::builder("weather.get")
        .description("Current weather of a city.")
        .input_schema(json!({"type": "object", "additionalProperties": false,
            "required": ["city"],
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}))
        .effects(Effects::read_only())
        .build()
        .unwrap();
    let weather = DynamicTool::new(weather, |args, _| async move {
        Ok(ToolOutput::structured(
            json!({"city": args["city"], "days": args.get("days")}),
        ))
    });
    let registry = Registry::builder()
        .tool(Echo::named("text.echo", "Returns its text unchanged."))
        .tool(big_output(10_000, 1_000))
        .tool(destructive(Arc::new(AtomicU32::new(0))))
        .tool(weather)
        .build()
        .unwrap();
    Pipeline::builder(registry).build()
}

fn codec(p: &Pipeline, provider: Provider, strict: bool) -> Codec {
    export_profile(
        &p.registry(),
        None,
        provider,
        ExportOptions::default().with_strict(strict),
    )
    .unwrap()
    .codec
}

async fn answer(provider: Provider, strict: bool, message: Value) -> Value {
    let p = pipeline();
    let session = p.session("s").build().unwrap();
    codec(&p, provider, strict)
        .answer(&p, &session, &message)
        .await
        .unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn openai_chat_tool_calls_are_answered_one_tool_message_each() {
    // a chat completion as the API returns it (`choices[0].message.tool_calls`)
    let completion = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
    "index": 0, "finish_reason": "tool_calls",
    "message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "text_echo", "arguments": "{\"text\":\"hi\"}"}},
        {"id": "call_b", "type": "function", "function": {"name": "weather_get", "arguments": "{\"city\":\"Oslo\",\"days\":null}"}},
        {"id": "call_c", "type": "function", "function": {"name": "big_output", "arguments": "{}"}},
        {"id": "call_d", "type": "function", "function": {"name": "text_echo", "arguments": "{\"text\": \"unclosed"}},
        {"id": "call_e", "type": "function", "function": {"arguments": "{}"}},
        {"id": "call_f", "type": "custom", "custom": {"name": "x", "input": "y"}},
        {"id": "call_g", "type": "function", "function": {"name": "delete_all", "arguments": "{}"}},
        "not a call"
    ]}}]});
    let out = rt().block_on(answer(Provider::OpenAiChat, true, completion));
    let out = out.as_array().unwrap();
    assert_eq!(out.len(), 8, "one result per call");
    let ids: Vec<&str> = out
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        &ids[..7],
        ["call_a", "call_b", "call_c", "call_d", "call_e", "call_f", "call_g"]
    );
    assert!(ids[7].starts_with("tg_"), "{}", ids[7]);
    for m in out {
        assert_eq!(m["role"], "tool");
    }
    assert_eq!(out[0]["content"], "{\"text\":\"hi\"}");
    // strict mode's null for the optional `days` is taken as left out
    assert_eq!(out[1]["content"], "{\"city\":\"Oslo\",\"days\":null}");
    let truncated = out[2]["content"].as_str().unwrap();
    assert!(
        truncated.contains("truncated; read them with read_result"),
        "{truncated}"
    );
    let broken = out[3]["content"].as_str().unwrap();
    assert!(broken.starts_with("invalid_arguments"), "{broken}");
    assert!(out[4]["content"]
        .as_str()
        .unwrap()
        .contains("send function.name"));
    assert!(out[5]["content"]
        .as_str()
        .unwrap()
        .contains("not a function call"));
    assert!(out[6]["content"]
        .as_str()
        .unwrap()
        .starts_with("approval_rejected"));
    assert!(out[7]["content"]
        .as_str()
        .unwrap()
        .contains("must be an object"));
}

#[test]
fn a_strict_null_for_an_optional_argument_reaches_the_tool_as_left_out() {
    let p = pipeline();
    let session = p.session("s").build().unwrap();
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather_get", "arguments": "{\"city\":\"Oslo\",\"days\":null}"}}]});
    // non-strict: the null is the model's and the schema refuses it
    let loose = rt()
        .block_on(codec(&p, Provider::OpenAiChat, false).answer(&p, &session, &message))
        .unwrap();
    assert!(
        loose[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("invalid_arguments"),
        "{loose}"
    );
    let session = p.session("s2").build().unwrap();
    let strict = rt()
        .block_on(codec(&p, Provider::OpenAiChat, true).answer(&p, &session, &message))
        .unwrap();
    assert_eq!(strict[0]["content"], "{\"city\":\"Oslo\",\"days\":null}");
}

#[test]
fn responses_function_calls_are_answered_with_function_call_outputs() {
    let response = json!({"id": "resp_1", "object": "response", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather_get", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "nope", "arguments": "{}", "status": "completed"}
    ]});
    let out = rt().block_on(answer(Provider::OpenAiResponses, false, response));
    assert_eq!(
        out,
        json!([
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"city\":\"Paris\",\"days\":null}"},
            {"type": "function_call_output", "call_id": "call_2", "output": out[1]["output"]},
        ])
    );
    assert!(out[1]["output"]
        .as_str()
        .unwrap()
        .starts_with("unknown_tool"));
}

#[test]
fn anthropic_tool_use_blocks_are_answered_in_one_user_message() {
    let response = json!({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
    "content": [
        {"type": "text", "text": "I'll look."},
        {"type": "tool_use", "id": "toolu_1", "name": "text_echo", "input": {"text": "hello"}},
        {"type": "tool_use", "id": "toolu_2", "name": "delete_all", "input": {}},
        {"type": "tool_use", "id": "toolu_3", "name": "text_echo", "input": "not an object"},
        {"type": "tool_use", "id": "toolu_4", "input": {}}
    ]});
    let out = rt().block_on(answer(Provider::Anthropic, false, response));
    assert_eq!(out["role"], "user");
    let blocks = out["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]);
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1",
        "content": "{\"text\":\"hello\"}", "is_error": false})
    );
    let errors: Vec<bool> = blocks
        .iter()
        .map(|b| b["is_error"].as_bool().unwrap())
        .collect();
    assert_eq!(errors, [false, true, true, true]);
    assert!(blocks[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("invalid_arguments"));
}

#[test]
fn gemini_function_calls_without_ids_get_ids_and_answers_in_order() {
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Checking."},
        {"functionCall": {"name": "weather.get", "args": {"city": "Rome"}}},
        {"functionCall": {"name": "weather.get", "args": {"city": "Oslo", "days": 2}}},
        {"functionCall": {"id": "fc-9", "name": "text.echo", "args": {"text": 5}}}
    ]}, "finishReason": "STOP"}]});
    let p = pipeline();
    let session = p.session("s").build().unwrap();
    let codec = codec(&p, Provider::Gemini, false);
    let batch = codec.read_calls(&response);
    let made: Vec<&str> = batch.calls().iter().map(|c| c.call.id.as_str()).collect();
    assert!(made[0].starts_with("tg_") && made[1].starts_with("tg_") && made[0] != made[1]);
    assert_eq!(made[2], "fc-9");
    let results = rt().block_on(p.dispatch_batch(batch.to_dispatch(), &session));
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, made);
    let out = codec.write_results(&batch, &results);
    assert_eq!(out["role"], "user");
    let parts = out["parts"].as_array().unwrap();
    assert_eq!(
        parts[0],
        json!({"functionResponse": {"name": "weather.get",
        "response": {"output": {"city": "Rome", "days": null}}}})
    );
    assert_eq!(
        parts[1]["functionResponse"]["response"]["output"]["days"],
        2
    );
    assert_eq!(parts[2]["functionResponse"]["id"], "fc-9");
    assert!(parts[2]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap()
        .starts_with("invalid_arguments"));
}

#[test]
fn messages_without_calls_and_messages_of_no_shape() {
    let p = pipeline();
    for provider in Provider::ALL {
        let c = codec(&p, provider, false);
        assert!(c.try_read_calls(&json!(42)).is_err(), "{provider}");
        assert!(c.read_calls(&json!(42)).is_empty());
    }
    let chat = codec(&p, Provider::OpenAiChat, false);
    assert!(chat
        .read_calls(&json!({"role": "assistant", "content": "Hello"}))
        .is_empty());
    assert!(chat.try_read_calls(&json!({"tool_calls": "x"})).is_err());
    let anthropic = codec(&p, Provider::Anthropic, false);
    assert!(anthropic
        .read_calls(&json!({"role": "assistant", "content": "plain"}))
        .is_empty());
}

#[test]
fn a_call_the_host_did_not_answer_still_gets_a_result() {
    let p = pipeline();
    let c = codec(&p, Provider::OpenAiChat, false);
    let batch = c.read_calls(&json!([
        {"id": "x1", "type": "function", "function": {"name": "text_echo", "arguments": "{\"text\":\"a\"}"}},
        {"id": "x2", "type": "function", "function": {"name": "text_echo", "arguments": "{\"text\":\"b\"}"}}]));
    let out = c.write_results(&batch, &[]);
    assert_eq!(out.as_array().unwrap().len(), 2);
    assert!(out[1]["content"].as_str().unwrap().starts_with("internal"));
}

#[test]
fn junk_in_any_field_is_answered_never_a_panic() {
    let p = pipeline();
    let junk = [
        json!(null),
        json!(1),
        json!("s"),
        json!([]),
        json!({}),
        json!([1, "x", null]),
        json!({"a": {"b": []}}),
        json!(f64::MAX),
        json!(true),
    ];
    let templates = [
        (
            Provider::OpenAiChat,
            json!({"tool_calls": [{"id": "J", "type": "function", "function": {"name": "N", "arguments": "A"}}]}),
        ),
        (
            Provider::OpenAiResponses,
            json!({"output": [{"type": "function_call", "call_id": "J", "name": "N", "arguments": "A"}]}),
        ),
        (
            Provider::Anthropic,
            json!({"content": [{"type": "tool_use", "id": "J", "name": "N", "input": "A"}]}),
        ),
        (
            Provider::Gemini,
            json!({"parts": [{"functionCall": {"id": "J", "name": "N", "args": "A"}}]}),
        ),
        (
            Provider::Mcp,
            json!([{"id": "J", "params": {"name": "N", "arguments": "A"}}]),
        ),
    ];
    let runtime = rt();
    for (provider, template) in templates {
        let c = codec(&p, provider, true);
        for slot in ["J", "N", "A"] {
            for j in &junk {
                let text = template
                    .to_string()
                    .replace(&format!("\"{slot}\""), &j.to_string());
                let message: Value = serde_json::from_str(&text).unwrap();
                let session = p.session("junk").call_ids_repeat().build().unwrap();
                let batch = c.read_calls(&message);
                let results = runtime.block_on(p.dispatch_batch(batch.to_dispatch(), &session));
                let out = c.write_results(&batch, &results);
                let count = match provider {
                    Provider::Anthropic => out["content"].as_array().map_or(0, Vec::len),
                    Provider::Gemini => out["parts"].as_array().map_or(0, Vec::len),
                    _ => out.as_array().map_or(0, Vec::len),
                };
                assert_eq!(count, batch.len(), "{provider}: {message}");
            }
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Numbered {
    /// The numbered lines.
    lines: String,
    /// Whether more follow.
    more: bool,
}

/// A tool that renders its own text, as read_file does.
struct Lines;

impl TypedTool for Lines {
    type Args = NoArgs;
    type Output = Numbered;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("lines")
            .description("Numbered lines.")
            .effects(Effects::read_only())
    }
    async fn call(&self, _: NoArgs, _: ToolContext) -> Result<Numbered, ToolError> {
        Ok(Numbered {
            lines: "     1\tsay \"hi\"\n     2\tend".into(),
            more: true,
        })
    }
    fn text(&self, out: &Numbered) -> Option<String> {
        Some(format!("{}\n[more follow]", out.lines))
    }
}

/// Every format hands the model the tool's own text (Gemini, whose response is an object,
/// the structured content); MCP sends both.
#[test]
fn a_tools_own_text_is_what_each_model_reads() {
    let p = Pipeline::builder(Registry::builder().tool(Lines).build().unwrap()).build();
    let session = p.session("s").build().unwrap();
    let text = "     1\tsay \"hi\"\n     2\tend\n[more follow]";
    let structured = json!({"lines": "     1\tsay \"hi\"\n     2\tend", "more": true});
    let read = |provider: Provider, message: Value| {
        rt().block_on(async {
            codec(&p, provider, false)
                .answer(&p, &session, &message)
                .await
                .unwrap()
        })
    };
    let chat = read(
        Provider::OpenAiChat,
        json!({"tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "lines", "arguments": "{}"}}]}),
    );
    assert_eq!(
        chat,
        json!([{"role": "tool", "tool_call_id": "c1", "content": text}])
    );
    let anthropic = read(
        Provider::Anthropic,
        json!({"content": [{"type": "tool_use", "id": "t1", "name": "lines", "input": {}}]}),
    );
    assert_eq!(anthropic["content"][0]["content"], text);
    let gemini = read(
        Provider::Gemini,
        json!({"parts": [{"functionCall": {"name": "lines", "args": {}}}]}),
    );
    assert_eq!(
        gemini["parts"][0]["functionResponse"]["response"]["output"],
        structured
    );
    let mcp = read(
        Provider::Mcp,
        json!({"id": 1, "params": {"name": "lines", "arguments": {}}}),
    );
    assert_eq!(
        mcp[0]["result"],
        json!({"content": [{"type": "text", "text": text}], "isError": false,
            "structuredContent": structured})
    );
}
