//! An agent's session through `toolgate serve` with the official Python SDK
//! (`tests/clients/agent_client.py`), checking at each step what the model reads: the tool
//! list, a read, a failing edit and the corrected one, a test run whose verdict is at the end
//! of 63 KB of output (and the rest read by the marker's handle and offset), and a command
//! past its timeout.

use super::serve_project::audit;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use toolgate_test_support::clients::{python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

const CALC: &str = "def add(a, b):\n    return a - b\n";

/// 150 tests that fail whatever `add` does, each with a long report: about 64 KB of output
/// whose verdict is its last line.
const TESTS: &str = r#"import sys
from calc import add

failures = 0
for i in range(150):
    print(f"FAIL: test_{i} (tests.Case)")
    print("-" * 400)
    print(f"AssertionError: {add(i, i)} != {2 * i + 1}")
    failures += 1
print(f"FAILED (failures={failures})")
sys.exit(1)
"#;

fn client(ws: &Path, server: &[&str]) -> Option<Command> {
    let mut cmd =
        python_script(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/agent_client.py"))?;
    cmd.arg("--workspace").arg(ws).args(server);
    Some(cmd)
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_agent_session_shows_the_model_what_it_needs_at_each_step() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("calc.py"), CALC).unwrap();
    std::fs::write(ws.join("test_calc.py"), TESTS).unwrap();
    let argv = serde_json::json!([TOOLGATE, "serve", "--profile", "default", "--workspace", ws])
        .to_string();
    let Some(cmd) = client(&ws, &["--mode", "legacy", "--stdio", &argv]) else {
        return;
    };
    let out = run_ok(cmd, Duration::from_secs(240));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: agent"));
    assert_eq!(
        std::fs::read_to_string(ws.join("calc.py")).unwrap(),
        CALC.replace("a - b", "a + b")
    );
    let records = audit(&ws);
    let tools: Vec<&str> = records
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "edit_file",
            "edit_file",
            "run_shell",
            "read_result",
            "run_shell"
        ]
    );
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["error_kind"].as_str().unwrap_or("-"))
        .collect();
    // the failing edit is an error of the model's (which stage refuses it is not this test's)
    assert_ne!(kinds[1], "-");
    assert_eq!(
        [kinds[0], kinds[2], kinds[3], kinds[4], kinds[5]],
        ["-", "-", "-", "-", "outcome_unknown"]
    );
}
