//! `toolgate export`, `toolgate validate --dialect` with the provider formats, and `toolgate
//! eval retrieval`, through the binary.

use super::{json, toolgate, tree};
use pretty_assertions::assert_eq;
use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-core/tests/data");

fn ok(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The names of an export's tools, whatever the provider's shape.
fn names(format: &str, v: &Value) -> Vec<String> {
    let tools: Vec<&Value> = match format {
        "mcp" => v["tools"].as_array().unwrap().iter().collect(),
        "gemini" => v[0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .collect(),
        _ => v.as_array().unwrap().iter().collect(),
    };
    tools
        .iter()
        .map(|t| {
            t.get("function").unwrap_or(t)["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn every_format_exports_the_profiles_tools() {
    let t = tree();
    let ws = t.path().join("ws");
    let ws = ws.to_str().unwrap();
    for format in ["mcp", "openai", "openai-responses", "anthropic", "gemini"] {
        let out = toolgate(&["export", "--format", format, "-w", ws], t.path());
        ok(&out);
        let v = json(&out);
        let n = names(format, &v);
        assert!(
            n.contains(&"read_file".to_string()) && n.contains(&"run_shell".to_string()),
            "{format}: {n:?}"
        );
        let explore = json(&toolgate(
            &[
                "export",
                "--format",
                format,
                "--profile",
                "explore",
                "-w",
                ws,
            ],
            t.path(),
        ));
        assert!(
            !names(format, &explore).contains(&"run_shell".to_string()),
            "{format}"
        );
    }
    let strict = json(&toolgate(
        &["export", "--format", "openai", "--strict", "-w", ws],
        t.path(),
    ));
    for tool in strict.as_array().unwrap() {
        // the HTTP tools take request headers as a map, which strict mode cannot express:
        // they go with `strict: false` and their schema as it is (the documented fallback)
        let map_args = ["http_fetch", "http_request"]
            .contains(&tool["function"]["name"].as_str().unwrap_or_default());
        assert_eq!(tool["function"]["strict"], !map_args, "{tool}");
        assert_eq!(
            tool["function"]["parameters"]["additionalProperties"],
            false
        );
    }
    let out = toolgate(
        &[
            "export",
            "--format",
            "openai",
            "--strict",
            "--warnings",
            "-w",
            ws,
        ],
        t.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("made required and nullable"), "{stderr}");
}

#[test]
fn a_profile_that_defers_tools_exports_the_listed_ones_and_search_tools() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[profiles.few]\nmax_listed = 3\n\n[profiles.picked]\ndeferred = [\"run_shell\", \"edit_file\"]\n",
    )
    .unwrap();
    let ws = ws.to_str().unwrap();
    let out = toolgate(
        &[
            "export",
            "--format",
            "anthropic",
            "--profile",
            "few",
            "-w",
            ws,
        ],
        t.path(),
    );
    ok(&out);
    assert_eq!(
        names("anthropic", &json(&out)),
        ["edit_file", "glob", "search_tools"]
    );
    let picked = json(&toolgate(
        &["export", "--format", "mcp", "--profile", "picked", "-w", ws],
        t.path(),
    ));
    let n = names("mcp", &picked);
    assert!(
        n.contains(&"search_tools".to_string()) && !n.contains(&"run_shell".to_string()),
        "{n:?}"
    );
    let listed = toolgate(&["tools", "--profile", "picked", "-w", ws], t.path());
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        !listed.contains("run_shell") && listed.contains("search_tools"),
        "{listed}"
    );
    // a deferred tool is found and called
    let found = toolgate(
        &[
            "call",
            "search_tools",
            r#"{"query":"run a shell command"}"#,
            "--profile",
            "picked",
            "-w",
            ws,
        ],
        t.path(),
    );
    ok(&found);
    assert_eq!(
        json(&found)["structured_content"]["tools"][0]["name"],
        "run_shell"
    );
    // a bad value is a located problem
    std::fs::write(
        t.path().join("ws/toolgate.toml"),
        "[profiles.none]\nmax_listed = 0\ndeferred = [\"nope\"]\n",
    )
    .unwrap();
    let out = toolgate(&["check", "-w", ws], t.path());
    let stderr =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        stderr.contains("max_listed") && stderr.contains("\"nope\""),
        "{stderr}"
    );
}

#[test]
fn exported_definitions_validate_the_recorded_calls_in_their_dialect() {
    let t = tree();
    let functions = format!("{DATA}/bfcl/functions.jsonl");
    let calls = format!("{DATA}/bfcl/calls.jsonl");
    // MCP and Gemini keep BFCL's dotted names, so the recorded calls name them as they are
    for (format, dialect) in [("mcp", "mcp"), ("gemini", "gemini")] {
        let out = toolgate(
            &["export", "--format", format, "--definitions", &functions],
            t.path(),
        );
        ok(&out);
        let file = t.path().join(format!("{format}.json"));
        std::fs::write(&file, &out.stdout).unwrap();
        let out = toolgate(
            &[
                "validate",
                "--definitions",
                file.to_str().unwrap(),
                "--calls",
                &calls,
                "--dialect",
                dialect,
            ],
            t.path(),
        );
        ok(&out);
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap()
            .to_string();
        let summary: Value = serde_json::from_str(&last).unwrap();
        assert_eq!(summary["summary"]["valid"], 899, "{format}");
    }
    let out = toolgate(
        &[
            "export",
            "--format",
            "openai",
            "--profile",
            "x",
            "--definitions",
            &functions,
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn definitions_files_that_hold_none_or_nest_too_deep_are_refused_saying_so() {
    let t = tree();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for (text, says) in [
        ("", "holds no definitions"),
        ("[]\n", "holds no definitions"),
        (deep.as_str(), "nested more than 128 deep"),
    ] {
        let file = t.path().join("defs.json");
        std::fs::write(&file, text).unwrap();
        let defs = file.to_str().unwrap();
        for args in [
            vec!["export", "--format", "openai", "--definitions", defs],
            vec!["validate", "--definitions", defs, "--calls", defs],
        ] {
            let out = toolgate(&args, t.path());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains(says) && out.stdout.is_empty(),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn eval_retrieval_prints_one_object_of_figures() {
    let t = tree();
    let tools = format!("{DATA}/tool-retrieval/tools.jsonl");
    let queries = format!("{DATA}/tool-retrieval/queries.jsonl");
    let out = toolgate(
        &[
            "eval",
            "retrieval",
            "--tools",
            &tools,
            "--queries",
            &queries,
        ],
        t.path(),
    );
    ok(&out);
    let v = json(&out);
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["all@10", "all@5", "hit@1", "hit@10", "hit@5", "mrr@10", "queries", "tools"]
    );
    assert_eq!(
        (v["queries"].as_u64(), v["tools"].as_u64()),
        (Some(1150), Some(1132))
    );
    assert!(v["hit@5"].as_f64().unwrap() >= 0.94, "{v}");
    // bad input: a query naming a tool that is not there, a line that is not a query
    let bad = t.path().join("bad.jsonl");
    for (text, says) in [
        (
            "{\"query\": \"x\", \"relevant\": [\"no_such_tool\"]}\n",
            "no_such_tool",
        ),
        ("{\"q\": 1}\n", "line 1"),
        ("", "no request"),
        (
            "{\"query\": \"x\", \"relevant\": []}\n",
            "line 1: \"relevant\" is empty",
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        let out = toolgate(
            &[
                "eval",
                "retrieval",
                "--tools",
                &tools,
                "--queries",
                bad.to_str().unwrap(),
            ],
            t.path(),
        );
        assert_eq!(out.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every BFCL definition and every built-in tool, exported by the binary in each format (with
/// `--strict`), is accepted by the provider's own request types from its Python SDK
/// (`openai`, `anthropic`, `google-genai`; no network), and every strict tool is left
/// unchanged by the OpenAI SDK's own strict-mode pass.
#[test]
fn exports_pass_the_providers_own_request_types() {
    use std::path::Path;
    use std::time::Duration;
    use toolgate_test_support::clients::{python_script, run_ok};
    let t = tree();
    let ws = t.path().join("ws");
    let functions = format!("{DATA}/bfcl/functions.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/provider_types.py");
    for format in ["openai", "openai-responses", "anthropic", "gemini"] {
        for source in [
            vec!["--definitions", functions.as_str()],
            vec!["-w", ws.to_str().unwrap()],
        ] {
            let mut args = vec!["export", "--format", format, "--strict"];
            args.extend(source.iter().copied());
            let out = toolgate(&args, t.path());
            ok(&out);
            let file = t.path().join(format!("{format}.json"));
            std::fs::write(&file, &out.stdout).unwrap();
            let Some(mut check) = python_script(&script) else {
                return;
            };
            check.arg(format).arg(&file).arg("--strict");
            let out = run_ok(check, Duration::from_secs(120));
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(said.contains("tools accepted"), "{said}");
        }
    }
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_mcp_agent_finds_a_deferred_tool_and_calls_it_through_serve() {
    use std::time::Duration;
    use toolgate_test_support::clients::{python_script, run_ok};

    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[profiles.picked]\ndeferred = [\"run_shell\", \"edit_file\"]\n",
    )
    .unwrap();
    std::fs::write(ws.join("notes.txt"), "draft notes\n").unwrap();
    let argv = serde_json::json!([
        env!("CARGO_BIN_EXE_toolgate"),
        "serve",
        "--profile",
        "picked",
        "--workspace",
        ws
    ])
    .to_string();
    let Some(mut cmd) = python_script(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/deferred_client.py"),
    ) else {
        return;
    };
    cmd.args(["--workspace", ws.to_str().unwrap(), "--stdio", &argv]);
    let out = run_ok(cmd, Duration::from_secs(120));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: deferred"));
}
