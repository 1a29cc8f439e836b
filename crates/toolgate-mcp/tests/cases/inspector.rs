//! The official Inspector CLI (`@modelcontextprotocol/inspector` 2.x, `--cli`) listing and
//! calling tools over stdio.

use super::support::{client_program, run_status, TestDir, SERVER};
use std::process::Command;
use std::time::Duration;

/// The Inspector's JSON output; it exits non-zero for an `isError` result, which some calls
/// here expect.
fn inspector(t: &TestDir, method_args: &[&str]) -> Option<serde_json::Value> {
    let node = client_program("TOOLGATE_TEST_NODE")?;
    let launcher = client_program("TOOLGATE_TEST_INSPECTOR")?;
    let home = t.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(node);
    cmd.arg(launcher)
        .arg("--cli")
        .arg(SERVER)
        .arg("--workspace")
        .arg(t.ws())
        .args(method_args)
        // The Inspector keeps a catalog under $HOME; keep it out of the real one.
        .env("HOME", &home);
    let out = run_status(cmd, Duration::from_secs(120), false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "the Inspector printed no JSON ({e}), status {:?}\n--- stdout\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    Some(value)
}

#[test]
#[cfg_attr(
    any(toolgate_no_node, toolgate_no_inspector),
    ignore = "needs TOOLGATE_TEST_NODE and TOOLGATE_TEST_INSPECTOR (README: Prerequisites)"
)]
fn inspector_cli_lists_tools_over_stdio() {
    let t = TestDir::new();
    let Some(listed) = inspector(&t, &["--method", "tools/list"]) else {
        return;
    };
    let tools = listed["tools"].as_array().expect("a tools array");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in [
        "read_file",
        "search_code",
        "list_dir",
        "glob",
        "read_result",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let read_file = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read_file["annotations"]["readOnlyHint"], true);
    assert_eq!(read_file["annotations"]["destructiveHint"], false);
    assert_eq!(read_file["annotations"]["openWorldHint"], false);
    assert!(read_file["outputSchema"].is_object());
}

#[test]
#[cfg_attr(
    any(toolgate_no_node, toolgate_no_inspector),
    ignore = "needs TOOLGATE_TEST_NODE and TOOLGATE_TEST_INSPECTOR (README: Prerequisites)"
)]
fn inspector_cli_calls_tools_over_stdio() {
    let t = TestDir::new();
    let Some(read) = inspector(
        &t,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=src/lib.txt",
        ],
    ) else {
        return;
    };
    assert_eq!(read["isError"], false, "{read}");
    assert!(read["structuredContent"]["content"]
        .as_str()
        .unwrap()
        .contains("a needle in a haystack"));
    assert_eq!(
        read["content"],
        serde_json::json!([{"type": "text", "text": "     1\ta needle in a haystack"}]),
        "the text block is the numbered lines"
    );
    let Some(found) = inspector(
        &t,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "search_code",
            "--tool-arg",
            "pattern=needle",
        ],
    ) else {
        return;
    };
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(
        found["structuredContent"]["matches"][0]["path"],
        "src/lib.txt"
    );
    let Some(outside) = inspector(
        &t,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=../outside.txt",
        ],
    ) else {
        return;
    };
    assert_eq!(outside["isError"], true, "{outside}");
    assert!(outside["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("path_outside_workspace"));
}
