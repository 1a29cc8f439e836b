//! What a tool reaches on its own (a redirect's target): the policy decides it through the
//! call's context ([`ToolContext::decide_url`]), and the strongest such verdict names its rule
//! in the call's audit record.

use serde_json::{json, Value};
use std::sync::Arc;
use toolgate_core::*;

/// Denies URLs on `internal.test`, asks about `ask.test`, allows the rest; calls naming a
/// URL are decided the same way.
struct Hosts;

impl Hosts {
    fn by_url(url: &str) -> Verdict {
        if url.contains("//internal.test") {
            Verdict::deny("test.no_internal", "internal hosts are off limits")
        } else if url.contains("//ask.test") {
            Verdict::ask("test.ask_host", "this host needs a person")
        } else {
            Verdict::allow("test.allow", "any other host")
        }
    }
}

impl Policy for Hosts {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        input
            .resources
            .iter()
            .find_map(|r| match r {
                ResolvedResource::Url(u) => Some(Hosts::by_url(u)),
                _ => None,
            })
            .unwrap_or_else(|| Verdict::allow("test.allow", "no URL"))
    }

    fn decide_url(&self, _tool: &ToolSpec, url: &str, _profile: &str) -> Verdict {
        Hosts::by_url(url)
    }
}

/// A tool named `follow` that asks the context about each URL of `urls` (as a redirect chain
/// would) and returns the decisions; `open_world` as given.
fn follow(open_world: bool) -> DynamicTool {
    let spec = ToolSpec::builder("follow")
        .description("Asks the policy about each URL it is given.")
        .effects(Effects {
            open_world,
            ..Effects::read_only()
        })
        .input_schema(json!({
            "type": "object",
            "properties": {"urls": {"type": "array", "items": {"type": "string"}}},
            "required": ["urls"],
            "additionalProperties": false
        }))
        .build()
        .unwrap();
    DynamicTool::new(spec, |args, ctx| async move {
        let decided: Vec<Value> = args["urls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                let v = ctx.decide_url(u.as_str().unwrap());
                json!([format!("{:?}", v.decision), v.rule])
            })
            .collect();
        Ok(ToolOutput::structured(json!({ "decided": decided })))
    })
}

fn pipeline(open_world: bool) -> (Pipeline, Arc<MemoryAuditSink>) {
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(
        Registry::builder()
            .tool(follow(open_world))
            .build()
            .unwrap(),
    )
    .policy(Arc::new(Hosts))
    .audit(audit.clone())
    .build();
    (p, audit)
}

#[tokio::test]
async fn the_strongest_verdict_over_reached_urls_names_its_rule_in_the_record() {
    let (p, audit) = pipeline(true);
    let s = p.session("s").build().unwrap();
    let urls = [
        "https://public.test/a",
        "https://ask.test/b",
        "https://internal.test/c",
        "https://public.test/d",
    ];
    let r = p
        .dispatch(ToolCall::new("c1", "follow", json!({ "urls": urls })), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.structured_content.unwrap()["decided"],
        json!([
            ["Allow", "test.allow"],
            ["Ask", "test.ask_host"],
            ["Deny", "test.no_internal"],
            ["Allow", "test.allow"],
        ])
    );
    let rec = &audit.records()[0];
    assert_eq!(rec.decision, Some(Decision::Deny));
    assert_eq!(rec.rule.as_deref(), Some("test.no_internal"));

    // a call that reaches nothing stronger keeps its own verdict
    let r = p
        .dispatch(
            ToolCall::new("c2", "follow", json!({"urls": ["https://public.test/"]})),
            &s,
        )
        .await;
    assert!(!r.is_error);
    assert_eq!(audit.records()[1].rule.as_deref(), Some("test.allow"));
}

/// Only an `open_world` tool reaches URLs: a closed one's context cannot name its tool to the
/// policy, so every URL is asked about (never allowed).
#[tokio::test]
async fn a_closed_world_tool_gets_ask_for_every_url() {
    let (p, _) = pipeline(false);
    let s = p.session("s").build().unwrap();
    let r = p
        .dispatch(
            ToolCall::new("c", "follow", json!({"urls": ["https://public.test/"]})),
            &s,
        )
        .await;
    assert_eq!(
        r.structured_content.unwrap()["decided"],
        json!([["Ask", "context.no_tool"]])
    );
}

/// The default policy decides a reached URL by the tool's metadata, as it decides calls; a
/// policy that does not implement `decide_url` asks.
#[test]
fn defaults_for_reached_urls() {
    let read = ToolSpec::builder("r")
        .effects(Effects::read_only())
        .build()
        .unwrap();
    let write = ToolSpec::builder("w")
        .effects(Effects::side_effecting())
        .build()
        .unwrap();
    let d = DefaultPolicy;
    assert_eq!(
        d.decide_url(&read, "https://x.test/", "default").decision,
        Decision::Allow
    );
    assert_eq!(
        d.decide_url(&write, "https://x.test/", "default").decision,
        Decision::Ask
    );
    struct Silent;
    impl Policy for Silent {
        fn decide(&self, _: &PolicyInput<'_>) -> Verdict {
            Verdict::allow("silent", "")
        }
    }
    assert_eq!(
        Silent.decide_url(&read, "https://x.test/", "default").rule,
        "policy.url_not_decided"
    );
    // a hand-made context without a policy allows
    let ctx = ToolContext::builder().build();
    assert_eq!(ctx.decide_url("https://x.test/").decision, Decision::Allow);
}
