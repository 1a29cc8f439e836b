//! The fixture's resources, resource templates, prompts and completion: what the suite's
//! `resources-*`, `prompts-*`, `completion-complete`, `sep-2164-resource-not-found` and
//! `input-required-result-non-tool-request` scenarios ask for, served by toolgate's
//! [`Catalog`] machinery: each read is a call of the unlisted `read_test_resource` tool and each
//! prompt a call of `get_test_prompt`, through the pipeline like `toolgate serve`'s
//! workspace files.

use crate::{ask, elicitation, RED_PIXEL_PNG};
use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, ErrorData, JsonObject, Prompt, Reference, Resource,
    ResourceTemplate,
};
use serde_json::{json, Value};
use std::collections::HashSet;
use toolgate_core::{ToolError, ToolOutput};
use toolgate_mcp::catalog::{Calls, Catalog, Page, Serves, Subscriber, Target};

/// The tool that reads the fixture's resources.
pub(crate) const READ_TOOL: &str = "read_test_resource";
/// The tool that gets the fixture's prompts.
pub(crate) const PROMPT_TOOL: &str = "get_test_prompt";

const STATIC_TEXT: &str = "This is the content of the static text resource.";
const TEMPLATE: &str = "test://template/{id}/data";

/// A prompt: name, description, arguments (name, required).
type PromptDef = (&'static str, &'static str, &'static [(&'static str, bool)]);

/// The prompts.
const PROMPTS: [PromptDef; 5] = [
    (
        "test_simple_prompt",
        "A simple prompt without arguments.",
        &[],
    ),
    (
        "test_prompt_with_arguments",
        "A prompt with two required arguments, arg1 and arg2.",
        &[("arg1", true), ("arg2", true)],
    ),
    (
        "test_prompt_with_embedded_resource",
        "A prompt that embeds the resource named by resourceUri.",
        &[("resourceUri", true)],
    ),
    ("test_prompt_with_image", "A prompt with an image.", &[]),
    (
        "test_input_required_result_prompt",
        "A prompt that asks the user for context first (SEP-2322, 2026-07-28).",
        &[],
    ),
];

/// The fixture's catalog; subscriptions are remembered (the fixture's resources never change,
/// so no update is ever sent).
#[derive(Default)]
pub(crate) struct FixtureCatalog {
    subscribed: Mutex<HashSet<String>>,
}

impl Catalog for FixtureCatalog {
    fn serves(&self) -> Serves {
        Serves {
            resources: true,
            subscribe: true,
            prompts: true,
            completions: true,
            list_changed: false,
        }
    }

    fn list_resources<'a>(
        &'a self,
        _: &'a Calls<'a>,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Page<Resource>, ErrorData>> {
        let items = [
            ("test://static-text", "static-text", "text/plain"),
            ("test://static-binary", "static-binary", "image/png"),
            ("test://watched-resource", "watched-resource", "text/plain"),
        ]
        .into_iter()
        .map(|(uri, name, mime)| json!({"uri": uri, "name": name, "mimeType": mime}))
        .map(serde_json::from_value)
        .collect::<Result<Vec<Resource>, _>>()
        .map(|items| Page { items, next: None })
        .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        Box::pin(std::future::ready(items))
    }

    fn list_resource_templates<'a>(
        &'a self,
        _: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, ErrorData>> {
        let t = serde_json::from_value(json!({
            "uriTemplate": TEMPLATE,
            "name": "template-data",
            "description": "Data for the id in the URI",
            "mimeType": "application/json"
        }))
        .map(|t| vec![t])
        .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        Box::pin(std::future::ready(t))
    }

    fn list_prompts<'a>(
        &'a self,
        _: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<Prompt>, ErrorData>> {
        let prompts = PROMPTS
            .iter()
            .map(|(name, description, args)| {
                let arguments: Vec<Value> = args
                    .iter()
                    .map(|(a, required)| json!({"name": a, "required": required}))
                    .collect();
                json!({"name": name, "description": description, "arguments": arguments})
            })
            .map(serde_json::from_value)
            .collect::<Result<Vec<Prompt>, _>>()
            .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        Box::pin(std::future::ready(prompts))
    }

    fn read(&self, uri: &str) -> Option<Target> {
        uri.starts_with("test://").then(|| Target {
            tool: READ_TOOL.into(),
            arguments: json!({ "uri": uri }),
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a JsonObject,
    ) -> BoxFuture<'a, Option<Result<Target, ErrorData>>> {
        Box::pin(std::future::ready(prompt_target(name, arguments)))
    }

    fn complete<'a>(
        &'a self,
        _: &'a Calls<'a>,
        request: &'a CompleteRequestParams,
    ) -> Option<BoxFuture<'a, Result<CompletionInfo, ErrorData>>> {
        let candidates: &[&str] = match &request.r#ref {
            Reference::Prompt(p) if p.name == "test_prompt_with_arguments" => {
                &["test", "testValue1", "testValue2", "other"]
            }
            Reference::Resource(r) if r.uri == TEMPLATE => &["1", "123", "42"],
            _ => return None,
        };
        let typed = request.argument.value.as_str();
        let mut info = CompletionInfo::default();
        info.values = candidates
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| c.to_string())
            .collect();
        info.total = Some(info.values.len() as u32);
        info.has_more = Some(false);
        Some(Box::pin(std::future::ready(Ok(info))))
    }

    fn subscribe<'a>(
        &'a self,
        _: &'a Calls<'a>,
        _: &'a Subscriber,
        uri: &'a str,
        on: bool,
    ) -> Option<BoxFuture<'a, Result<(), ErrorData>>> {
        if !uri.starts_with("test://") {
            return None;
        }
        let mut subscribed = self.subscribed.lock();
        if on {
            subscribed.insert(uri.to_string());
        } else {
            subscribed.remove(uri);
        }
        Some(Box::pin(std::future::ready(Ok(()))))
    }
}

/// The call that gets the fixture's prompt `name`, its required arguments checked.
fn prompt_target(name: &str, arguments: &JsonObject) -> Option<Result<Target, ErrorData>> {
    let (_, _, args) = PROMPTS.iter().find(|(n, _, _)| *n == name)?;
    for (a, required) in args.iter() {
        if *required && !arguments.get(*a).is_some_and(Value::is_string) {
            return Some(Err(ErrorData::invalid_params(
                format!("prompt {name} needs the string argument {a}"),
                Some(json!({ "name": name, "argument": a })),
            )));
        }
    }
    Some(Ok(Target {
        tool: PROMPT_TOOL.into(),
        arguments: json!({ "name": name, "arguments": arguments }),
    }))
}

/// The handler of [`READ_TOOL`].
pub(crate) async fn read(args: Value) -> Result<ToolOutput, ToolError> {
    let uri = args["uri"].as_str().unwrap_or_default();
    let block = match uri {
        "test://static-text" | "test://watched-resource" => {
            toolgate_core::Content::embedded_text(uri, Some("text/plain".into()), STATIC_TEXT)
        }
        "test://static-binary" => {
            toolgate_core::Content::embedded_blob(uri, Some("image/png".into()), RED_PIXEL_PNG)
        }
        _ => match template_id(uri) {
            Some(id) => toolgate_core::Content::embedded_text(
                uri,
                Some("application/json".into()),
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                    .to_string(),
            ),
            None => {
                return Err(ToolError::not_found(format!(
                    "no resource at {uri}; list them with resources/list"
                ))
                .with_details(json!({ "uri": uri })))
            }
        },
    };
    Ok(ToolOutput {
        structured: None,
        content: vec![block],
    })
}

/// The `{id}` of a URI of [`TEMPLATE`].
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// The handler of [`PROMPT_TOOL`].
pub(crate) async fn prompt(args: Value) -> Result<ToolOutput, ToolError> {
    let name = args["name"].as_str().unwrap_or_default();
    let arg = |a: &str| {
        args["arguments"][a]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let user = |content: Value| json!({"role": "user", "content": content});
    let text = |t: String| json!({"type": "text", "text": t});
    let messages = match name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing.".into()))],
        "test_prompt_with_arguments" => vec![user(text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(json!({
                "type": "resource",
                "resource": {
                    "uri": arg("resourceUri"),
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."
                }
            })),
            user(text("Please process the embedded resource above.".into())),
        ],
        "test_prompt_with_image" => vec![
            user(json!({"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"})),
            user(text("Please analyze the image above.".into())),
        ],
        "test_input_required_result_prompt" => {
            let form = json!({
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"]
            });
            let answer = ask(
                "context",
                elicitation("What context should the prompt use?", form),
            )
            .await?;
            let context = answer["content"]["context"]
                .as_str()
                .unwrap_or("none")
                .to_string();
            vec![user(text(format!("Use this context: {context}")))]
        }
        _ => {
            return Err(
                ToolError::not_found(format!("no prompt {name:?}")).with_reason("unknown_prompt")
            )
        }
    };
    Ok(ToolOutput::structured(json!({ "messages": messages })))
}
