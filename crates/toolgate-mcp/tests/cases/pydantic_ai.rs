//! pydantic-ai's MCP toolset driven by its TestModel (an agent loop without a network model)
//! calling the built-in tools through the server over stdio.

use super::support::{clients_dir, python_script, run_ok, TestDir, SERVER};
use std::time::Duration;

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn pydantic_ai_agent_calls_builtin_tools_through_toolgate() {
    let Some(mut cmd) = python_script(clients_dir().join("pydantic_ai_agent.py")) else {
        return;
    };
    let t = TestDir::new();
    // TestModel fills string arguments with "a": give it a file of that name.
    std::fs::write(t.ws().join("a"), "a needle here\n").unwrap();
    cmd.arg("--workspace")
        .arg(t.ws())
        .arg("--")
        .arg(SERVER)
        .arg("--workspace")
        .arg(t.ws());
    let out = run_ok(cmd, Duration::from_secs(180));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: pydantic-ai"));
}
