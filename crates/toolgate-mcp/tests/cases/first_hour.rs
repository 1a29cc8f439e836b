//! What a model and its user meet in the first hour, through the official Python SDK
//! (`clients/first_hour_client.py`) against the test server with the write tools: calls bound
//! to fail come back before anyone is asked, the question shows a diff, answers say what to do
//! next, and over stateless HTTP a caller's budget and result handles hold across requests.

use super::support::{clients_dir, python_script, run_ok, HttpChild, TestDir, SERVER};
use std::process::Command;
use std::time::Duration;

fn client(scenario: &str, mode: &str, ws: &std::path::Path, server: &[&str]) -> Option<Command> {
    let mut cmd = python_script(clients_dir().join("first_hour_client.py"))?;
    cmd.args(["--scenario", scenario, "--mode", mode, "--workspace"])
        .arg(ws)
        .args(server);
    Some(cmd)
}

fn passes(cmd: Command, scenario: &str) {
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("passed: {scenario}")), "{stdout}");
}

fn over_stdio(scenario: &str, mode: &str) {
    let t = TestDir::new();
    let argv = serde_json::json!([SERVER, "--workspace", t.ws(), "--write-tools"]).to_string();
    let Some(cmd) = client(scenario, mode, &t.ws(), &["--stdio", &argv]) else {
        return;
    };
    passes(cmd, scenario);
}

fn over_http(scenario: &str, mode: &str, flags: &[&str]) {
    let t = TestDir::new();
    let mut all = vec!["--write-tools"];
    all.extend_from_slice(flags);
    let server = HttpChild::start(&t.ws(), &all);
    let token = server
        .token
        .clone()
        .expect("a token is made for this start");
    let Some(cmd) = client(
        scenario,
        mode,
        &t.ws(),
        &["--url", &server.url, "--token", &token],
    ) else {
        return;
    };
    passes(cmd, scenario);
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn calls_bound_to_fail_are_not_put_to_the_user_and_the_question_shows_a_diff() {
    over_stdio("checks", "legacy");
    over_stdio("checks", "2026-07-28");
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn answers_say_what_happened_and_invalid_form_answers_are_asked_again() {
    over_stdio("answers", "legacy");
    over_stdio("answers", "2026-07-28");
    over_stdio("no-elicit", "legacy");
    over_http("no-elicit", "2026-07-28", &[]);
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn argument_and_tool_name_mistakes_name_what_was_meant() {
    over_stdio("arguments", "legacy");
    over_http("arguments", "2026-07-28", &[]);
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn a_callers_budget_and_handles_hold_across_stateless_requests() {
    over_http("stateless", "2026-07-28", &["--max-calls", "4"]);
}
