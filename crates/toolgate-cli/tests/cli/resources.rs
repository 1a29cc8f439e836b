//! Resources, resource templates, prompts and completion with the official Python SDK as the
//! client (`tests/clients/resources_client.py`): the workspace's files from `toolgate serve`
//! on both protocol revisions, and server-everything's resources and prompts through the
//! gateway. Every read and get is a pipeline call: the audit has one record for each, the
//! refused ones with their error.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolgate_test_support::clients::{client_program, python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// A workspace with the files the client expects, and `config` as its toolgate.toml (after
/// the deny rule on `secrets`).
fn workspace(config: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::create_dir_all(ws.join("secrets")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(ws.join("docs/a b.md"), "# notes\n").unwrap();
    std::fs::write(ws.join("img.png"), [0x89, b'P', b'N', b'G', 0, 1, 2, 0xff]).unwrap();
    std::fs::write(ws.join("big.txt"), "a line of text\n".repeat(20_000)).unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=CANARY\n").unwrap();
    std::fs::write(ws.join("secrets/key.txt"), "CANARY-KEY\n").unwrap();
    std::fs::write(t.path().join("outside.txt"), "CANARY-OUT\n").unwrap();
    let config = format!(
        "[[rules]]\nname = \"no-secrets\"\ndecision = \"deny\"\nresource = \"path:secrets\"\n\n{config}"
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();
    (t, ws)
}

use super::mcp::audit;

fn run_client(ws: &Path, mode: &str, gateway: bool) -> String {
    let argv = serde_json::json!([TOOLGATE, "serve", "--workspace", ws]).to_string();
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/resources_client.py"),
    )
    .expect("checked by the caller");
    cmd.args([
        "--workspace",
        ws.to_str().unwrap(),
        "--stdio",
        &argv,
        "--mode",
        mode,
    ]);
    if gateway {
        cmd.arg("--gateway");
    }
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("passed: resources"), "{stdout}");
    stdout
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn the_python_sdk_reads_the_workspace_as_resources() {
    if client_program("TOOLGATE_TEST_PYTHON").is_none() {
        return;
    }
    for mode in ["legacy", "2026-07-28"] {
        let (_t, ws) = workspace("");
        run_client(&ws, mode, false);
        let records = audit(&ws);
        let reads: Vec<&Value> = records
            .iter()
            .filter(|r| r["tool"] == "read_resource")
            .collect();
        // 4 reads that succeed, 5 refused (missing, escaping, denied, a host; the unknown
        // scheme never reaches a tool)
        assert_eq!(reads.len(), 8, "{mode}: {reads:#?}");
        assert!(
            reads.iter().any(|r| r["error_kind"] == "permission_denied"),
            "{mode}: the denied read is audited as denied: {reads:#?}"
        );
        assert!(
            records.iter().any(|r| r["tool"] == "list_resources"),
            "{mode}: listings are audited"
        );
        // nothing outside the workspace or denied reached the client
        let all = serde_json::to_string(&records).unwrap();
        assert!(!all.contains("CANARY"), "{mode}");
    }
}

#[test]
#[cfg_attr(
    any(toolgate_no_python, toolgate_no_node),
    ignore = "needs TOOLGATE_TEST_PYTHON and TOOLGATE_TEST_NODE (README: Prerequisites)"
)]
fn the_python_sdk_reads_upstream_resources_and_prompts_through_the_gateway() {
    let (Some(node), Some(_)) = (
        client_program("TOOLGATE_TEST_NODE"),
        client_program("TOOLGATE_TEST_PYTHON"),
    ) else {
        return;
    };
    let modules = node
        .ancestors()
        .nth(3)
        .expect("node under node_modules/node/bin");
    let everything = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let config = format!(
        "[[upstreams]]\nname = \"ev\"\ncommand = {node:?}\nargs = [{everything:?}, \"stdio\"]\n\
         startup_timeout_ms = 30000\n",
        node = node.display().to_string(),
        everything = everything.display().to_string(),
    );
    let (_t, ws) = workspace(&config);
    run_client(&ws, "legacy", true);
    run_client(&ws, "2026-07-28", true);
    let records = audit(&ws);
    let of = |tool: &str| {
        records
            .iter()
            .filter(|r| r["tool"] == tool)
            .collect::<Vec<_>>()
    };
    // per session, one read of an upstream resource and two prompt gets reached the
    // upstream; the unknown prompt and the missing argument were refused before any call
    assert_eq!(
        of("toolgate.upstream.ev.read_resource").len(),
        2,
        "{records:#?}"
    );
    assert_eq!(
        of("toolgate.upstream.ev.get_prompt").len(),
        4,
        "{records:#?}"
    );
}

/// `request` on `s` and its answer.
fn request(s: &mut super::mcp::StdioServe, id: i64, method: &str, params: Value) -> Value {
    s.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let m = s.recv();
        if m["id"] == id {
            return m;
        }
    }
}

#[test]
fn a_profile_without_the_resource_tools_serves_no_resources_and_no_prompts_are_declared() {
    let (_t, ws) = workspace("[profiles.narrow]\ntools = [\"read_file\"]\n");
    for (profile, listed) in [("narrow", false), ("default", true)] {
        let mut s = super::mcp::StdioServe::start(&ws, &["--profile", profile], &[]);
        s.send(&super::mcp::initialize(0, serde_json::json!({})));
        let init = s.recv();
        let caps = &init["result"]["capabilities"];
        assert!(
            caps["resources"].is_object() && caps["completions"].is_object(),
            "{init}"
        );
        // toolgate has no prompts of its own: none declared without upstreams
        assert!(caps.get("prompts").is_none(), "{init}");
        s.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let page = request(&mut s, 1, "resources/list", serde_json::json!({}));
        let uris = page["result"]["resources"].to_string();
        assert_eq!(
            uris.contains("file:///src/main.rs"),
            listed,
            "{profile}: {page}"
        );
        let read = request(
            &mut s,
            2,
            "resources/read",
            serde_json::json!({"uri": "file:///src/main.rs"}),
        );
        if listed {
            assert_eq!(
                read["result"]["contents"][0]["text"], "fn main() {}\n",
                "{read}"
            );
        } else {
            assert_eq!(read["error"]["code"], -32602, "{read}");
            let m = read["error"]["message"].as_str().unwrap();
            assert!(
                m.contains("not served") && m.contains("read_resource"),
                "{m}"
            );
        }
        let prompts = request(&mut s, 3, "prompts/list", serde_json::json!({}));
        assert_eq!(prompts["error"]["code"], -32601, "{prompts}");
        let bad = request(
            &mut s,
            4,
            "resources/templates/list",
            serde_json::json!({"cursor": "tgc1.zz"}),
        );
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        assert!(s.finish().success());
    }
}

/// A URI, a prompt name or a parameter value the client sends is quoted by the error it gets
/// cut to a few hundred characters and with its controls escaped: a 100 KB URI was echoed
/// twice (message and data, 200 KB an answer), and an escape sequence in one reached the
/// client's terminal as it was sent.
#[test]
fn errors_quote_what_the_client_sent_cut_and_escaped() {
    let (_t, ws) = workspace("");
    let mut s = super::mcp::StdioServe::start(&ws, &[], &[]);
    s.send(&super::mcp::initialize(0, serde_json::json!({})));
    s.recv();
    s.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let long = "x".repeat(100_000);
    let cases = [
        ("resources/read", serde_json::json!({"uri": long})),
        (
            "resources/read",
            serde_json::json!({"uri": format!("file:///{long}")}),
        ),
        (
            "completion/complete",
            serde_json::json!({"ref": {"type": "ref/prompt", "name": long},
                               "argument": {"name": "a", "value": "b"}}),
        ),
        (
            "completion/complete",
            serde_json::json!({"ref": {"type": "ref/resource", "uri": long},
                               "argument": {"name": "a", "value": "b"}}),
        ),
        ("logging/setLevel", serde_json::json!({"level": long})),
        (
            "tools/call",
            serde_json::json!({"name": long, "arguments": {}}),
        ),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let answer = request(&mut s, i as i64 + 1, method, params);
        assert!(answer["error"].is_object(), "{method}: {answer:.300}");
        let size = answer.to_string().len();
        assert!(
            size < 8_000,
            "{method}: {size} bytes: {:.300}",
            answer.to_string()
        );
        assert!(
            answer.to_string().contains("100000 bytes") || [1, 5].contains(&i),
            "{method}: {:.600}",
            answer.to_string()
        );
    }
    let answer = request(
        &mut s,
        10,
        "resources/read",
        serde_json::json!({"uri": "x\u{1b}]0;owned\u{7}\u{202e}"}),
    );
    let text = answer["error"].to_string();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains("\\\\x1b]0;owned"), "{text}");
    // the session goes on
    let page = request(&mut s, 11, "resources/list", serde_json::json!({}));
    assert!(page["result"]["resources"].is_array(), "{page}");
    assert!(s.finish().success());
}
