//! Tool search on BFCL's tool-retrieval set (in `tests/data/tool-retrieval`), and profiles
//! that defer tools behind `search_tools`.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use toolgate_core::import::{import_definitions, Dialect, ImportOptions};
use toolgate_core::provider::{export_profile, ExportOptions, Provider};
use toolgate_core::search::eval::{evaluate, Query};
use toolgate_core::search::{SearchIndex, SearchOptions, SEARCH_TOOLS};
use toolgate_core::*;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tool-retrieval");

fn retrieval_set() -> (Vec<ToolSpec>, Vec<Query>) {
    let tools = std::fs::read_to_string(format!("{DATA}/tools.jsonl")).unwrap();
    let specs = import_definitions(&tools, Dialect::Auto, &ImportOptions::default())
        .unwrap()
        .into_iter()
        .map(|i| i.spec)
        .collect();
    let queries = std::fs::read_to_string(format!("{DATA}/queries.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (specs, queries)
}

#[test]
fn the_retrieval_set_is_found_well_past_the_bm25_baseline() {
    let (specs, queries) = retrieval_set();
    assert_eq!((specs.len(), queries.len()), (1132, 1150));
    let index = SearchIndex::build(
        specs.iter().map(|s| (s, u64::MAX)),
        &SearchOptions::default(),
    );
    let s = evaluate(&index, &queries);
    // the README's plain BM25: hit@1 0.750, hit@5 0.920, all@5 0.844, MRR@10 0.824
    assert!(
        s.hit_5 >= 0.94 && s.all_5 >= 0.89 && s.hit_1 >= 0.78 && s.mrr_10 >= 0.85,
        "{s:?}"
    );
}

#[test]
fn a_tool_the_request_names_is_found() {
    let (specs, queries) = retrieval_set();
    let index = SearchIndex::build(
        specs.iter().map(|s| (s, u64::MAX)),
        &SearchOptions::default(),
    );
    // requests that quote the tool they need ("using the function 'calculate_final_velocity'")
    let named: Vec<(&str, &str)> = queries
        .iter()
        .flat_map(|q| {
            q.relevant
                .iter()
                .filter(|r| r.contains(['_', '.']) && q.query.contains(&format!("'{r}'")))
                .map(|r| (q.query.as_str(), r.as_str()))
        })
        .collect();
    assert!(named.len() >= 20, "{}", named.len());
    for (query, name) in named {
        let hits = index.search(query, 5, u64::MAX);
        assert!(
            hits.iter().any(|h| &*h.name == name),
            "{name} not in the first 5 for {query:?}: {hits:?}"
        );
    }
}

fn tool(name: &str, description: &str) -> DynamicTool {
    let spec = ToolSpec::builder(name)
        .description(description)
        .input_schema(json!({"type": "object", "additionalProperties": false,
            "properties": {"amount": {"type": "number", "description": "How much."}}}))
        .effects(Effects::read_only())
        .build()
        .unwrap();
    let name = name.to_string();
    DynamicTool::new(spec, move |_, _| {
        let name = name.clone();
        async move { Ok(ToolOutput::text(format!("{name} ran"))) }
    })
}

fn registry() -> Registry {
    let mut b = Registry::builder()
        .tool(tool(
            "currency.convert",
            "Converts an amount of money between two currencies.",
        ))
        .tool(tool("mail.send", "Sends an email to a customer."))
        .profile(Profile::new("few").all().max_listed(3))
        .profile(
            Profile::new("picked")
                .all()
                .defer(Selector::Name("currency.convert".into())),
        );
    for i in 0..40 {
        b = b.tool(tool(
            &format!("filler_{i:02}"),
            "Does a filler task for the test.",
        ));
    }
    b.build().unwrap()
}

#[test]
fn deferred_tools_are_not_listed_nor_exported_but_found_and_called() {
    let r = registry();
    let listed: Vec<&str> = r
        .list(Some("few"))
        .unwrap()
        .iter()
        .map(|s| &*s.name)
        .collect();
    assert_eq!(listed, ["currency.convert", "filler_00", SEARCH_TOOLS]);
    assert_eq!(r.list_visible(Some("few")).unwrap().len(), 43);
    let picked: Vec<&str> = r
        .deferred("picked")
        .unwrap()
        .iter()
        .map(|s| &*s.name)
        .collect();
    assert_eq!(picked, ["currency.convert"]);
    assert!(r
        .list(Some("picked"))
        .unwrap()
        .iter()
        .any(|s| &*s.name == SEARCH_TOOLS));
    // the default profile defers nothing: every tool and search_tools
    assert_eq!(r.list(None).unwrap().len(), 43);
    let exported = export_profile(
        &r,
        Some("picked"),
        Provider::OpenAiChat,
        ExportOptions::default(),
    )
    .unwrap();
    let names: Vec<&str> = exported
        .tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"currency_convert") && names.contains(&"mail_send"),
        "{names:?}"
    );
    // the codec still maps the deferred tool's name back, for a call after a search
    assert_eq!(
        exported.codec.names().registry_name("currency_convert"),
        "currency.convert"
    );

    let p = Pipeline::builder(r).build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = p.session("s").profile("picked").build().unwrap();
    let found = rt.block_on(p.dispatch(
        ToolCall::new(
            "1",
            SEARCH_TOOLS,
            json!({"query": "convert 20 dollars to euros", "limit": 2}),
        ),
        &session,
    ));
    assert!(!found.is_error, "{}", found.text());
    let tools = &found.structured_content.as_ref().unwrap()["tools"];
    assert_eq!(tools[0]["name"], "currency.convert");
    assert_eq!(
        tools[0]["summary"],
        "Converts an amount of money between two currencies."
    );
    assert_eq!(
        tools[0]["definition"]["inputSchema"]["properties"]["amount"]["type"],
        "number"
    );
    assert!(tools.as_array().unwrap().len() <= 2);
    let called = rt.block_on(p.dispatch(
        ToolCall::new("2", "currency.convert", json!({"amount": 20})),
        &session,
    ));
    assert_eq!(called.text(), "currency.convert ran");
    // a wrong name tells the model that more tools can be found
    let unknown = rt.block_on(p.dispatch(ToolCall::new("3", "convert_money", json!({})), &session));
    assert!(unknown.text().contains(SEARCH_TOOLS), "{}", unknown.text());
}

#[test]
fn search_sees_only_what_the_profile_can_call() {
    let r = Registry::builder()
        .tool(tool(
            "currency.convert",
            "Converts an amount of money between two currencies.",
        ))
        .tool(
            Typed::new(toolgate_test_support::tools::Echo::named(
                "money.echo",
                "Echoes money.",
            ))
            .map(|t| std::sync::Arc::new(t) as std::sync::Arc<dyn Tool>)
            .unwrap(),
        )
        .profile(Profile::new("narrow").tools(["money.echo"]).max_listed(10))
        .build()
        .unwrap();
    let p = Pipeline::builder(r).build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = p.session("s").profile("narrow").build().unwrap();
    let found = rt.block_on(p.dispatch(
        ToolCall::new(
            "1",
            SEARCH_TOOLS,
            json!({"query": "convert money currencies"}),
        ),
        &session,
    ));
    let names: Vec<Value> = found.structured_content.unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("money.echo")]);
    for bad in [
        json!({}),
        json!({"query": ""}),
        json!({"query": "x", "limit": 0}),
        json!({"query": "x", "limit": 21}),
        json!({"query": 5}),
    ] {
        let r = rt.block_on(p.dispatch(
            ToolCall::new(format!("b{bad}"), SEARCH_TOOLS, bad.clone()),
            &session,
        ));
        assert_eq!(r.error_kind(), Some(ErrorKind::InvalidArguments), "{bad}");
    }
}

#[test]
fn a_tool_named_search_tools_is_refused_when_toolgate_needs_the_name() {
    let err = Registry::builder()
        .tool(tool(SEARCH_TOOLS, "Mine."))
        .profile(Profile::new("p").all().max_listed(1))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("rename"), "{err}");
    // without deferral the name is free
    assert!(Registry::builder()
        .tool(tool(SEARCH_TOOLS, "Mine."))
        .build()
        .is_ok());
}
