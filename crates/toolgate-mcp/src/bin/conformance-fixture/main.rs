//! `conformance-fixture --http 127.0.0.1:PORT`: the server the official MCP conformance suite
//! (npm `@modelcontextprotocol/conformance`) runs its server scenarios against. Its tools are
//! the suite's `test_*` tools, registered in a toolgate [`Registry`] and served by toolgate's
//! own pipeline and MCP server (`McpServer`, `serve_http`), as `toolgate serve` serves the
//! built-in tools: every call passes resolve, validation, policy, budget, execution and
//! finish, and reaches the client through toolgate's result conversion. `.ci/run` starts it,
//! runs the suite and stops it; the README says how to run it by hand.
//!
//! It serves streamable HTTP at `/mcp` on a loopback address only, without a bearer token:
//! the suite's client sends none (it tests the protocol, not toolgate's token), and on
//! loopback `HttpConfig::check` allows that, as `toolgate serve --no-token` does. The Host
//! and Origin checks stay on (the suite's `dns-rebinding-protection` scenario tests them).
//! A non-loopback address is refused.
//!
//! What each tool does is what the suite's scenario descriptions ask (run
//! `conformance list --server` and see each scenario's description). Tools that talk to the
//! client use [`toolgate_mcp::request`]: log messages at the level the client asked for,
//! progress, sampling and elicitation through the client's peer on 2025-11-25 sessions, and
//! input-required results (SEP-2322) with sealed request state on 2026-07-28 requests.

// Logging and sampling: deprecated by SEP-2577, still what the suite's 2025-11-25 scenarios
// test.
#![allow(deprecated)]

mod catalog;

use clap::Parser;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ErrorData, InputRequest, InputRequests, LoggingLevel,
    RequestStateCodec, SealOptions,
};
use serde_json::{json, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use toolgate_core::{
    Content, DynamicTool, Effects, Registry, Risk, ToolContext, ToolError, ToolOutput, ToolSpec,
};
use toolgate_mcp::request;
use toolgate_mcp::{HttpConfig, McpServer};

#[derive(Parser)]
#[command(name = "conformance-fixture")]
struct Cli {
    /// The loopback address to serve streamable HTTP on, at /mcp (for example
    /// 127.0.0.1:3001; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    http: SocketAddr,
}

/// A 1x1 red PNG.
pub(crate) const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV file: 8 kHz, mono, 8-bit, 8 samples of silence.
const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";
/// The suite's tools that take no arguments and answer the same every time: name,
/// description, answer.
type FixedAnswer = (
    &'static str,
    &'static str,
    fn() -> Result<ToolOutput, ToolError>,
);
const FIXED_ANSWERS: [FixedAnswer; 6] = [
    ("test_simple_text", "Returns a simple text.", || {
        Ok(ToolOutput::text(
            "This is a simple text response for testing.",
        ))
    }),
    ("test_image_content", "Returns a 1x1 red PNG.", || {
        Ok(content(vec![Content::image(RED_PIXEL_PNG, "image/png")]))
    }),
    ("test_audio_content", "Returns a short silent WAV.", || {
        Ok(content(vec![Content::audio(SILENT_WAV, "audio/wav")]))
    }),
    (
        "test_embedded_resource",
        "Returns an embedded text resource.",
        || {
            Ok(content(vec![Content::embedded_text(
                "test://embedded-resource",
                Some("text/plain".into()),
                "This is an embedded resource content.",
            )]))
        },
    ),
    (
        "test_multiple_content_types",
        "Returns text, an image and an embedded resource.",
        || {
            Ok(content(vec![
                Content::text("Multiple content types test:"),
                Content::image(RED_PIXEL_PNG, "image/png"),
                Content::embedded_text(
                    "test://mixed-content-resource",
                    Some("application/json".into()),
                    json!({"test": "data", "value": 123}).to_string(),
                ),
            ]))
        },
    ),
    ("test_error_handling", "Always fails.", || {
        Err(ToolError::failed(
            "This tool intentionally returns an error for testing",
        ))
    }),
];
/// How long a sealed request state stays valid.
const STATE_TTL: Duration = Duration::from_secs(300);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("conformance-fixture: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(cli.http)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(addr: SocketAddr) -> Result<(), toolgate_mcp::Error> {
    if !addr.ip().is_loopback() {
        return Err(toolgate_mcp::Error::Config(format!(
            "{addr} is not a loopback address; the fixture serves without a token, so only \
             on loopback"
        )));
    }
    let states = Arc::new(States::new());
    let swap = Arc::new(OnceLock::new());
    let registry = registry(&states, &swap)?;
    let pipeline = toolgate_mcp::pipeline_builder(registry).build();
    let _ = swap.set(pipeline.clone());
    let server = McpServer::builder(pipeline)
        .server_info("toolgate-conformance-fixture", env!("CARGO_PKG_VERSION"))
        .catalog(Arc::new(catalog::FixtureCatalog::default()))
        .build()?;
    // No token: see the module documentation. `check` refuses this on any other address.
    let config = HttpConfig::new(addr);
    config.check()?;
    let http = toolgate_mcp::serve_http(server, config).await?;
    eprintln!("conformance-fixture: serving MCP at {}", http.url());
    http.run_until(toolgate_mcp::cli::shutdown_signal()).await
}

/// The signing key for request state, made at start.
struct States(RequestStateCodec);

impl States {
    fn new() -> Self {
        let key: [u8; 32] = rand::random();
        States(RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"))
    }

    /// `value` sealed for `tool`.
    fn seal(&self, tool: &str, value: &Value) -> Result<String, ToolError> {
        let options = SealOptions::new()
            .associated_data(tool.as_bytes())
            .ttl(STATE_TTL);
        self.0
            .seal_json_with(value, &options)
            .map_err(|e| ToolError::internal(format!("sealing the request state: {e}")))
    }

    /// The state the retry of `tool` carries, opened; a state that is absent is `None`, one
    /// that does not open fails the request with `-32602`.
    fn open(&self, tool: &str) -> Result<Option<Value>, ToolError> {
        let Some(state) = request::request_state() else {
            return Ok(None);
        };
        self.0
            .open_json_with::<Value>(&state, tool.as_bytes())
            .map(Some)
            .map_err(|e| {
                request::fail_request(ErrorData::invalid_params(
                    format!("the requestState failed its integrity check: {e}"),
                    Some(json!({ "tool": tool })),
                ))
            })
    }
}

/// The pipeline, once built: `test_trigger_tool_change` swaps its registry.
type Swap = Arc<OnceLock<toolgate_core::Pipeline>>;

fn registry(states: &Arc<States>, swap: &Swap) -> Result<Registry, toolgate_mcp::Error> {
    let mut b = Registry::builder();
    for (name, description, answer) in FIXED_ANSWERS {
        b = b.tool(tool(
            name,
            description,
            no_args(),
            move |_, _| async move { answer() },
        )?);
    }
    b = b.tool(tool(
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100, 50 ms apart, and returns 250 ms after the last.",
        no_args(),
        |_, _| async {
            for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                request::report_progress(p, Some(100.0), None).await;
            }
            // through a gateway (the gateway conformance run) the last notification must reach
            // it before the result: rmcp's client handles an upstream's notifications on tasks
            // of their own, apart from its responses, and a report that arrives after its
            // call's result is dropped (README: Gateway, "Results and failures")
            tokio::time::sleep(Duration::from_millis(250)).await;
            Ok(ToolOutput::text("Progress reported: 0, 50 and 100 of 100."))
        },
    )?);
    for name in ["test_tool_with_logging", "test_logging_tool"] {
        b = b.tool(tool(
            name,
            "Sends three info log messages, 50 ms apart, at the level the client asked for.",
            no_args(),
            |_, _| async {
                let steps = [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ];
                let mut sent = 0;
                for (i, step) in steps.into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if request::log(LoggingLevel::Info, Some("conformance-fixture"), json!(step))
                        .await
                    {
                        sent += 1;
                    }
                }
                // through a gateway the last message must reach it before the result, as
                // progress must (test_tool_with_progress)
                tokio::time::sleep(Duration::from_millis(250)).await;
                Ok(ToolOutput::text(format!(
                    "Tool with logging executed; {sent} log messages sent."
                )))
            },
        )?);
    }
    b = b
        .tool(tool(
            "test_sampling",
            "Asks the client's model the prompt (sampling) and returns its answer.",
            string_arg("prompt", "The prompt to send to the model"),
            |args, _| async move {
                let prompt = args["prompt"].as_str().unwrap_or_default().to_string();
                let answer = ask("answer", sampling(&prompt, 100)).await?;
                Ok(llm_response(&answer))
            },
        )?)
        .tool(tool(
            "test_missing_capability",
            "Needs the client's sampling capability; without it the request fails with \
             -32021.",
            no_args(),
            |_, _| async {
                let declared = request::client_capabilities().is_some_and(|c| c.sampling.is_some());
                if !declared {
                    let mut required = ClientCapabilities::default();
                    required.sampling = Some(Default::default());
                    return Err(request::fail_request(
                        ErrorData::missing_required_client_capability(required),
                    ));
                }
                let question = sampling("Say hello.", 20);
                let answer = ask("hello", question).await?;
                Ok(llm_response(&answer))
            },
        )?)
        .tool(elicit_tool(
            "test_elicitation",
            "Asks the user the given message (elicitation) for a username and email.",
            string_arg("message", "The message to show the user"),
            |args| {
                let message = args["message"].as_str().unwrap_or_default().to_string();
                (
                    message,
                    json!({
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        },
                        "required": ["username", "email"]
                    }),
                    "User response",
                )
            },
        )?)
        .tool(elicit_tool(
            "test_elicitation_sep1034_defaults",
            "Asks the user with a form whose primitive fields have defaults (SEP-1034).",
            no_args(),
            |_| {
                (
                    "Please review your information".to_string(),
                    json!({
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "default": "John Doe"},
                            "age": {"type": "integer", "default": 30},
                            "score": {"type": "number", "default": 95.5},
                            "status": {
                                "type": "string",
                                "enum": ["active", "inactive", "pending"],
                                "default": "active"
                            },
                            "verified": {"type": "boolean", "default": true}
                        }
                    }),
                    "Elicitation completed",
                )
            },
        )?)
        .tool(elicit_tool(
            "test_elicitation_sep1330_enums",
            "Asks the user with a form holding the five enum forms of SEP-1330.",
            no_args(),
            |_| {
                (
                    "Please choose your options".to_string(),
                    json!({
                        "type": "object",
                        "properties": {
                            "untitledSingle": {
                                "type": "string",
                                "enum": ["option1", "option2", "option3"]
                            },
                            "titledSingle": {
                                "type": "string",
                                "oneOf": [
                                    {"const": "value1", "title": "First Option"},
                                    {"const": "value2", "title": "Second Option"},
                                    {"const": "value3", "title": "Third Option"}
                                ]
                            },
                            "legacyEnum": {
                                "type": "string",
                                "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"]
                            },
                            "untitledMulti": {
                                "type": "array",
                                "items": {
                                    "type": "string",
                                    "enum": ["option1", "option2", "option3"]
                                }
                            },
                            "titledMulti": {
                                "type": "array",
                                "items": {
                                    "anyOf": [
                                        {"const": "value1", "title": "First Choice"},
                                        {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}
                                    ]
                                }
                            }
                        }
                    }),
                    "Elicitation completed",
                )
            },
        )?)
        .tool(elicit_tool(
            "test_streaming_elicitation",
            "Asks the user for a name; on 2026-07-28 as an input-required result, never as a \
             request of the server's own on the response stream.",
            no_args(),
            |_| {
                (
                    "What is your name?".to_string(),
                    name_form("name"),
                    "Elicitation completed",
                )
            },
        )?);
    b = b.tool(tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features: its inputSchema must reach the client as \
         written ($schema, $defs with an $anchor, $ref, allOf/anyOf, if/then/else).",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"]
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }),
        |args, _| async move { Ok(ToolOutput::text(format!("Arguments accepted: {args}"))) },
    )?);
    b = mrtr_tools(b, states.clone())?;
    let (again, swap) = (states.clone(), swap.clone());
    b = b.tool(tool(
        "test_trigger_tool_change",
        "Swaps the server's registry for a rebuilt one, as a gateway does when an upstream \
         changes its tools: every session and subscriptions/listen stream is sent \
         notifications/tools/list_changed.",
        no_args(),
        move |_, _| {
            let (states, swap) = (again.clone(), swap.clone());
            async move {
                let pipeline = swap
                    .get()
                    .ok_or_else(|| ToolError::internal("the pipeline is not built yet"))?;
                let rebuilt = registry(&states, &swap)
                    .map_err(|e| ToolError::internal(format!("rebuilding the registry: {e}")))?;
                pipeline
                    .replace_registry(rebuilt)
                    .map_err(|e| ToolError::internal(format!("swapping the registry: {e}")))?;
                Ok(ToolOutput::text("The tool list changed."))
            }
        },
    )?);
    // resources/read and prompts/get, through the pipeline (unlisted: not in tools/list)
    b = b
        .tool(unlisted_tool(
            catalog::READ_TOOL,
            "Reads one of the fixture's test:// resources.",
            string_arg("uri", "The resource's URI"),
            |args, _| catalog::read(args),
        )?)
        .tool(unlisted_tool(
            catalog::PROMPT_TOOL,
            "Gets one of the fixture's prompts.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
                "required": ["name"]
            }),
            |args, _| catalog::prompt(args),
        )?);
    Ok(b.build()?)
}

/// The SEP-2322 tools (`test_input_required_result_*`): 2026-07-28 requests only.
fn mrtr_tools(
    b: toolgate_core::RegistryBuilder,
    states: Arc<States>,
) -> Result<toolgate_core::RegistryBuilder, toolgate_mcp::Error> {
    let b = b
        .tool(round_trip_tool(
            "test_input_required_result_elicitation",
            "Asks the user's name (input required), then greets them.",
            &states,
            |_, _| async {
                let answer = ask(
                    "user_name",
                    elicitation("What is your name?", name_form("name")),
                )
                .await?;
                let name = accepted_field(&answer, "name").unwrap_or_else(|| "stranger".into());
                Ok(ToolOutput::text(format!("Hello, {name}!")))
            },
        )?)
        .tool(round_trip_tool(
            "test_input_required_result_sampling",
            "Asks the client's model a question (input required), then returns its answer.",
            &states,
            |_, _| async {
                let answer = ask(
                    "capital_question",
                    sampling("What is the capital of France?", 100),
                )
                .await?;
                Ok(ToolOutput::text(format!(
                    "The model answered: {}",
                    sampled_text(&answer)
                )))
            },
        )?)
        .tool(round_trip_tool(
            "test_input_required_result_list_roots",
            "Asks the client for its roots (input required), then lists them.",
            &states,
            |_, _| async {
                let answer = ask("client_roots", list_roots()).await?;
                let roots: Vec<&str> = answer["roots"]
                    .as_array()
                    .map(|r| r.iter().filter_map(|r| r["uri"].as_str()).collect())
                    .unwrap_or_default();
                Ok(ToolOutput::text(format!(
                    "The client has {} roots: {}",
                    roots.len(),
                    roots.join(", ")
                )))
            },
        )?)
    .tool(round_trip_tool(
        "test_input_required_result_request_state",
        "Asks for a confirmation with sealed request state; says state-ok once the state \
         verifies.",
        &states,
        |s, tool| async move {
            let state = s.open(tool)?;
            match (state, response("confirm")) {
                (Some(state), Some(_)) if state["step"] == "confirm" => Ok(ToolOutput::text(
                    "state-ok: the request state verified and the confirmation arrived",
                )),
                _ => Err(require(
                    inputs([("confirm", elicitation("Please confirm", ok_form()))]),
                    Some(s.seal(tool, &json!({"step": "confirm"}))?),
                )),
            }
        },
    )?)
    .tool(round_trip_tool(
        "test_input_required_result_tampered_state",
        "Asks for a confirmation with sealed request state; a state that does not verify fails \
         the request with -32602.",
        &states,
        |s, tool| async move {
            match (s.open(tool)?, response("confirm")) {
                (Some(_), Some(_)) => Ok(ToolOutput::text("state-ok")),
                _ => Err(require(
                    inputs([("confirm", elicitation("Please confirm", ok_form()))]),
                    Some(s.seal(tool, &json!({"step": "confirm"}))?),
                )),
            }
        },
    )?)
    .tool(round_trip_tool(
        "test_input_required_result_multiple_inputs",
        "Asks for a name, a model's greeting and the client's roots at once.",
        &states,
        |s, tool| async move {
            let state = s.open(tool)?;
            let answers = (
                response("user_name"),
                response("greeting"),
                response("client_roots"),
            );
            if let (Some(_), (Some(name), Some(greeting), Some(roots))) = (state, answers) {
                let name = accepted_field(&name, "name").unwrap_or_default();
                let n = roots["roots"].as_array().map_or(0, Vec::len);
                return Ok(ToolOutput::text(format!(
                    "All inputs received: name {name:?}, greeting {:?}, {n} roots",
                    sampled_text(&greeting)
                )));
            }
            Err(require(
                inputs([
                    (
                        "user_name",
                        elicitation("What is your name?", name_form("name")),
                    ),
                    ("greeting", sampling("Generate a greeting", 50)),
                    ("client_roots", list_roots()),
                ]),
                Some(s.seal(tool, &json!({"step": "all"}))?),
            ))
        },
    )?)
    .tool(round_trip_tool(
        "test_input_required_result_multi_round",
        "Asks a name, then a favourite colour, in two rounds whose state carries the first \
         answer.",
        &states,
        |s, tool| async move {
            let state = s.open(tool)?;
            let round = state
                .as_ref()
                .and_then(|s| s["round"].as_u64())
                .unwrap_or(0);
            if round == 2 {
                if let Some(color) = response("step2") {
                    let name = state
                        .as_ref()
                        .and_then(|s| s["name"].as_str())
                        .unwrap_or_default()
                        .to_string();
                    let color = accepted_field(&color, "color").unwrap_or_default();
                    return Ok(ToolOutput::text(format!(
                        "Done after two rounds: {name} likes {color}"
                    )));
                }
            }
            if round == 1 {
                if let Some(name) = response("step1") {
                    let name = accepted_field(&name, "name").unwrap_or_default();
                    return Err(require(
                        inputs([(
                            "step2",
                            elicitation("Step 2: What is your favorite color?", name_form("color")),
                        )]),
                        Some(s.seal(tool, &json!({"round": 2, "name": name}))?),
                    ));
                }
            }
            Err(require(
                inputs([(
                    "step1",
                    elicitation("Step 1: What is your name?", name_form("name")),
                )]),
                Some(s.seal(tool, &json!({"round": 1}))?),
            ))
        },
    )?)
    .tool(round_trip_tool(
        "test_input_required_result_capabilities",
        "Asks only for what the client declared it can answer (elicitation, sampling, roots).",
        &states,
        |_, _| async {
            let caps = request::client_capabilities().unwrap_or_default();
            let keys = ["user_name", "greeting", "client_roots"];
            if keys.iter().any(|k| response(k).is_some()) {
                return Ok(ToolOutput::text(
                    "Inputs received for the declared capabilities",
                ));
            }
            let mut asked = InputRequests::new();
            if caps.elicitation.is_some() {
                asked.insert(
                    keys[0].into(),
                    elicitation("What is your name?", name_form("name")),
                );
            }
            if caps.sampling.is_some() {
                asked.insert(keys[1].into(), sampling("Generate a greeting", 50));
            }
            if caps.roots.is_some() {
                asked.insert(keys[2].into(), list_roots());
            }
            if asked.is_empty() {
                return Ok(ToolOutput::text(
                    "The client declared no capability to ask through; nothing asked",
                ));
            }
            Err(require(asked, None))
        },
    )?);
    Ok(b)
}

/// A read-only tool named `name` over `handler`.
fn tool<F, Fut>(
    name: &str,
    description: &str,
    input_schema: Value,
    handler: F,
) -> Result<DynamicTool, toolgate_mcp::Error>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    let spec = ToolSpec::builder(name)
        .description(description)
        .input_schema(input_schema)
        .effects(Effects::read_only())
        .risk(Risk::Read)
        .timeout(Duration::from_secs(30))
        .build()?;
    Ok(DynamicTool::new(spec, handler))
}

/// A read-only tool like [`tool`], tagged [`toolgate_core::registry::UNLISTED_TAG`]:
/// callable through the pipeline (resources/read, prompts/get), never listed.
fn unlisted_tool<F, Fut>(
    name: &str,
    description: &str,
    input_schema: Value,
    handler: F,
) -> Result<DynamicTool, toolgate_mcp::Error>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    let spec = ToolSpec::builder(name)
        .description(description)
        .input_schema(input_schema)
        .effects(Effects::read_only())
        .risk(Risk::Read)
        .timeout(Duration::from_secs(30))
        .tag(toolgate_core::registry::UNLISTED_TAG)
        .build()?;
    Ok(DynamicTool::new(spec, handler))
}

/// A tool for 2026-07-28 requests only (any other is refused before `handler` runs), whose
/// handler gets the request-state keys and the tool's name, which its state is sealed for.
fn round_trip_tool<F, Fut>(
    name: &'static str,
    description: &str,
    states: &Arc<States>,
    handler: F,
) -> Result<DynamicTool, toolgate_mcp::Error>
where
    F: Fn(Arc<States>, &'static str) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    let states = states.clone();
    tool(name, description, no_args(), move |_, _| {
        let answer = handler(states.clone(), name);
        async move {
            round_trip_only()?;
            answer.await
        }
    })
}

/// A tool that asks the user with the form `question(args)` gives (message, schema, the
/// label of the answer), then reports the answer.
fn elicit_tool(
    name: &str,
    description: &str,
    input_schema: Value,
    question: fn(&Value) -> (String, Value, &'static str),
) -> Result<DynamicTool, toolgate_mcp::Error> {
    tool(name, description, input_schema, move |args, _| async move {
        let (message, schema, label) = question(&args);
        let answer = ask("answer", elicitation(&message, schema)).await?;
        let action = answer["action"].as_str().unwrap_or("unknown");
        let content = answer.get("content").cloned().unwrap_or(json!({}));
        Ok(ToolOutput::text(format!(
            "{label}: action={action}, content={content}"
        )))
    })
}

/// Asks the client `question` and returns its answer as JSON: on a 2026-07-28 request through
/// an input-required result under `key` (this round ends with the error that asks; the
/// retry carries the answer), on a session through the client's peer, when the client
/// declared the capability.
pub(crate) async fn ask(key: &str, question: InputRequest) -> Result<Value, ToolError> {
    if request::is_round_trip() {
        return match response(key) {
            Some(answer) => Ok(answer),
            None => Err(require(inputs([(key, question)]), None)),
        };
    }
    let ctx = request::current()
        .ok_or_else(|| ToolError::internal("the call did not come in on an MCP request"))?;
    let caps = request::client_capabilities().unwrap_or_default();
    match question {
        InputRequest::Elicitation(e) => {
            declared(caps.elicitation.is_some(), "elicitation")?;
            answered(ctx.peer.create_elicitation(e.params).await, "elicitation")
        }
        InputRequest::CreateMessage(s) => {
            declared(caps.sampling.is_some(), "sampling")?;
            answered(ctx.peer.create_message(s.params).await, "sampling")
        }
        _ => Err(ToolError::failed(
            "this question cannot be asked on a session",
        )),
    }
}

/// Refuses to ask through a `capability` the client did not declare.
fn declared(declared: bool, capability: &str) -> Result<(), ToolError> {
    if declared {
        Ok(())
    } else {
        Err(ToolError::failed(format!(
            "the client did not declare the {capability} capability"
        )))
    }
}

/// The client's answer to a `capability` request, as JSON.
fn answered<T: serde::Serialize, E: std::fmt::Display>(
    answer: Result<T, E>,
    capability: &str,
) -> Result<Value, ToolError> {
    let answer = answer.map_err(|e| ToolError::failed(format!("{capability} failed: {e}")))?;
    serde_json::to_value(answer)
        .map_err(|e| ToolError::internal(format!("reading the client's answer: {e}")))
}

/// Ends this round with an input-required result asking `inputs`, with `state`.
fn require(inputs: InputRequests, state: Option<String>) -> ToolError {
    request::require_input(inputs, state).unwrap_or_else(|| {
        ToolError::failed("this tool asks through input-required results: 2026-07-28 only")
    })
}

/// Refuses a call that is not a 2026-07-28 request.
fn round_trip_only() -> Result<(), ToolError> {
    if request::is_round_trip() {
        Ok(())
    } else {
        Err(ToolError::failed(
            "this tool asks through input-required results (SEP-2322): call it on protocol \
             revision 2026-07-28",
        ))
    }
}

/// The retry's answer under `key`, when it is a JSON object (anything else is asked again).
fn response(key: &str) -> Option<Value> {
    request::input_responses()?
        .remove(key)
        .filter(Value::is_object)
}

/// The string `field` of an accepted elicitation answer.
fn accepted_field(answer: &Value, field: &str) -> Option<String> {
    let result: ElicitResult = serde_json::from_value(answer.clone()).ok()?;
    if result.action != ElicitationAction::Accept {
        return None;
    }
    Some(result.content?.get(field)?.as_str()?.to_string())
}

/// `LLM response: TEXT` for a sampling answer.
fn llm_response(answer: &Value) -> ToolOutput {
    ToolOutput::text(format!("LLM response: {}", sampled_text(answer)))
}

/// The text of a sampling answer (`content` a block or a list of blocks).
fn sampled_text(answer: &Value) -> String {
    let content = &answer["content"];
    let block = if content.is_array() {
        &content[0]
    } else {
        content
    };
    block["text"].as_str().unwrap_or("(no text)").to_string()
}

fn inputs<const N: usize>(entries: [(&str, InputRequest); N]) -> InputRequests {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

pub(crate) fn elicitation(message: &str, schema: Value) -> InputRequest {
    let schema = schema.as_object().cloned().unwrap_or_default();
    let requested_schema =
        ElicitationSchema::from_json_schema(schema).expect("the fixture's forms are valid");
    InputRequest::Elicitation(rmcp::model::ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema,
        },
    ))
}

fn sampling(prompt: &str, max_tokens: u32) -> InputRequest {
    let params: CreateMessageRequestParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens
    }))
    .expect("a valid sampling request");
    InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(params))
}

fn list_roots() -> InputRequest {
    serde_json::from_value(json!({"method": "roots/list", "params": {}}))
        .expect("a valid roots/list request")
}

fn name_form(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field]
    })
}

fn ok_form() -> Value {
    json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    })
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_arg(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name]
    })
}

fn content(blocks: Vec<Content>) -> ToolOutput {
    ToolOutput {
        structured: None,
        content: blocks,
    }
}
