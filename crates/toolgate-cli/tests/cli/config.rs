//! `toolgate check` and a configuration through `toolgate call`: profiles, resource rules and
//! an ABAC condition on the real binary.

use super::{json, toolgate, tree};
use std::path::Path;

const CONFIG: &str = r#"
[profiles.orders]
tools = ["read_file", "write_file", "list_dir"]

[roles.support]
profiles = ["orders"]

[[rules]]
name = "no-env"
decision = "deny"
resource = "path:.env"

[[rules]]
name = "orders-for-support"
decision = "allow"
tool = "write_file"
resource = "path:orders/**"
roles = ["support"]
when = 'context.attributes has owner_verified && context.attributes.owner_verified'
"#;

fn ws_args<'a>(ws: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--workspace", ws];
    v.extend_from_slice(rest);
    v
}

#[test]
fn check_reports_problems_with_locations_and_exits_non_zero() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[[rules]]\ndecision = \"deny\"\nresource = \"path:[\"\n\n[[rules]]\ndecision = \"allow\"\ntool = \"*\"\nwhen = 'context.x =='\n",
    )
    .unwrap();
    let out = toolgate(&["check", "--workspace", ws.to_str().unwrap()], t.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let file = ws.join("toolgate.toml");
    let file = std::fs::canonicalize(&file).unwrap_or(file);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].ends_with("toolgate.toml:3:12: rules[0].resource: glob \"[\" does not parse: unclosed character class; missing ']'")
            || lines[0].contains("toolgate.toml:3:12: rules[0].resource:"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("toolgate.toml:8:8: rules[1].when: cedar:"),
        "{stdout}"
    );
    assert!(lines[2].contains("2 problems"), "{stdout}");
    let _ = file;
}

/// `check` says which bound holds a run's processes here: its cgroup with the configured
/// limits, RLIMIT_NPROC (not root), or the timeout alone (root without a cgroup); starting,
/// it removes the empty cgroups a crashed toolgate left.
#[test]
fn check_says_what_bounds_a_runs_processes() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[shell]\nmax_processes = 99\nmax_memory_bytes = 268435456\n",
    )
    .unwrap();
    let report = toolgate_tools::shell::sandbox_report();
    // an empty cgroup left by a toolgate that crashed (pid 4194304 is above any real one),
    // which the next start of toolgate removes
    let stale: Vec<std::path::PathBuf> = report
        .cgroup
        .iter()
        .flat_map(|s| std::iter::once(s.pids.clone()).chain(s.memory.clone()))
        .map(|d| d.join("toolgate-run-4194304-1-0"))
        .collect();
    for d in &stale {
        std::fs::create_dir(d).unwrap();
    }
    let out = toolgate(&["check", "-w", ws.to_str().unwrap()], t.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for d in &stale {
        let left = d.exists();
        let _ = std::fs::remove_dir(d);
        assert!(!left, "{} was left behind", d.display());
    }
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("processes: "))
        .unwrap_or_else(|| panic!("no processes line: {stdout}"));
    match &report.cgroup {
        Some(site) => {
            assert!(line.contains(&site.describe()), "{line}");
            assert!(line.contains("at most 99 processes at once"), "{line}");
            if site.memory.is_some() {
                assert!(
                    line.contains("at most 268435456 bytes (256 MiB) of memory"),
                    "{line}"
                );
            }
        }
        None if report.root => assert!(line.contains("timeout only, as root"), "{line}"),
        None => assert!(
            line.contains("RLIMIT_NPROC, at most 1024 processes"),
            "{line}"
        ),
    }
    std::fs::write(ws.join("toolgate.toml"), "[shell]\nmax_processes = 0\n").unwrap();
    let out = toolgate(&["check", "-w", ws.to_str().unwrap()], t.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("shell.max_processes: 0 is out of range: write 8 to 4194304 processes"),
        "{stdout}"
    );
}

#[test]
fn check_summarizes_a_valid_configuration_and_the_sandbox() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    let out = toolgate(&["check", "-w", ws.to_str().unwrap()], t.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("toolgate.toml: ok"), "{stdout}");
    assert!(stdout.contains("sandbox: landlock ABI"), "{stdout}");
    // the sandbox line names the bound it reports on, so "no" for root is not read as
    // "no bound on processes" above the line giving the cgroup's
    assert!(!stdout.contains("process limit"), "{stdout}");
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
    let nproc = if root {
        "RLIMIT_NPROC no (never applied to root)"
    } else {
        "RLIMIT_NPROC yes"
    };
    assert!(stdout.contains(nproc), "{stdout}");
    assert!(
        stdout.contains("shell: network off, unix sockets refused (seccomp; [shell] unix_sockets = true allows them)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("profile orders: read_file, list_dir, write_file"),
        "{stdout}"
    );
    assert!(stdout.contains("role support: profiles orders"), "{stdout}");
    assert!(stdout.contains("rule no-env: deny"), "{stdout}");
    assert!(
        stdout.contains("rule orders-for-support: allow"),
        "{stdout}"
    );
    assert!(stdout.contains("(roles: support)"), "{stdout}");
    // --config elsewhere, and the schema
    let other = t.path().join("other.toml");
    std::fs::write(&other, "[budgets]\nmax_calls = 1\n").unwrap();
    let out = toolgate(
        &[
            "check",
            "-w",
            ws.to_str().unwrap(),
            "--config",
            other.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("other.toml: ok"));
    let out = toolgate(&["check", "--print-schema"], t.path());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["properties"]["rules"].is_object(), "{schema}");
}

fn call(ws: &Path, t: &Path, tool: &str, args: &str, extra: &[&str]) -> serde_json::Value {
    let ws_s = ws.to_str().unwrap();
    let mut a = vec!["call", tool, args, "--no-audit"];
    a.extend(ws_args(ws_s, extra));
    json(&toolgate(&a, t))
}

#[test]
fn call_allows_denies_and_asks_by_the_configuration() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("orders")).unwrap();
    std::fs::write(ws.join(".env"), "KEY=CANARY\n").unwrap();
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    // deny: .env, through any spelling, names the rule
    let r = call(&ws, t.path(), "read_file", r#"{"path":".ENV"}"#, &[]);
    assert_eq!(r["error"]["kind"], "permission_denied", "{r}");
    assert_eq!(r["error"]["reason"], "no-env", "{r}");
    // allow: the rule for the session's role
    let r = call(
        &ws,
        t.path(),
        "write_file",
        r#"{"path":"orders/o1.json","content":"{}"}"#,
        &["--role", "support", "--attr", "owner_verified=true"],
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert!(ws.join("orders/o1.json").exists());
    // the ABAC condition (Cedar): the same role before the owner was verified, or with the
    // attribute false, falls back to the risk default (ask), which nobody can answer here
    for extra in [
        &["--role", "support"][..],
        &["--role", "support", "--attr", "owner_verified=false"][..],
    ] {
        let r = call(
            &ws,
            t.path(),
            "write_file",
            r#"{"path":"orders/o3.json","content":"{}"}"#,
            extra,
        );
        assert_eq!(r["error"]["kind"], "approval_rejected", "{extra:?}: {r}");
        assert!(!ws.join("orders/o3.json").exists());
    }
    // ask: without the role the rule does not apply, nobody can answer (no terminal)
    let r = call(
        &ws,
        t.path(),
        "write_file",
        r#"{"path":"orders/o2.json","content":"{}"}"#,
        &[],
    );
    assert_eq!(r["error"]["kind"], "approval_rejected", "{r}");
    assert!(!ws.join("orders/o2.json").exists());
    // the role's profile hides run_shell
    let r = call(
        &ws,
        t.path(),
        "run_shell",
        r#"{"command":"true"}"#,
        &["--role", "support"],
    );
    assert_eq!(r["error"]["kind"], "unknown_tool", "{r}");
    // a role may not use another profile
    let ws_s = ws.to_str().unwrap();
    let out = toolgate(
        &[
            "call",
            "read_file",
            r#"{"path":"x"}"#,
            "--no-audit",
            "-w",
            ws_s,
            "--role",
            "support",
            "--profile",
            "default",
        ],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("role \"support\" may not use profile \"default\"; it may use: orders"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // a broken configuration stops the call with its located problems
    std::fs::write(ws.join("toolgate.toml"), "[budgets]\nmax_cals = 1\n").unwrap();
    let out = toolgate(
        &["call", "list_dir", "{}", "--no-audit", "-w", ws_s],
        t.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("toolgate.toml:2:1: budgets.max_cals: unknown field `max_cals`"),
        "{err}"
    );
}

/// One `toolgate serve` over stdio, spoken to in MCP's JSON-RPC lines: initialize (without
/// elicitation, so a call the policy asks about is answered by nobody: rejected), then one
/// `tools/call`; returns its result.
fn serve_call(
    ws: &Path,
    extra: &[&str],
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("serve")
        .args(["--workspace", ws.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting toolgate serve");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let response = |id: u64| loop {
        let v = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("toolgate serve answered within 60 s");
        if v["id"] == id {
            return v;
        }
    };
    let mut send = |v: serde_json::Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "config-test", "version": "0"}}}),
    );
    let init = response(1);
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}),
    );
    let r = response(2);
    drop(stdin);
    let _ = child.wait();
    r["result"].clone()
}

#[test]
fn serve_applies_the_configuration_and_its_abac_condition() {
    let t = tree();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("orders")).unwrap();
    std::fs::write(ws.join(".env"), "KEY=CANARY\n").unwrap();
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    let write = |name: &str| serde_json::json!({"path": format!("orders/{name}"), "content": "{}"});
    // the condition holds: the role's allow rule applies and the write runs without asking
    let r = serve_call(
        &ws,
        &["--role", "support", "--attr", "owner_verified=true"],
        "write_file",
        write("s1.json"),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert!(ws.join("orders/s1.json").exists());
    // the condition does not hold: ask, and this client cannot answer
    let r = serve_call(&ws, &["--role", "support"], "write_file", write("s2.json"));
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("approval"), "{r}");
    assert!(!ws.join("orders/s2.json").exists());
    // the deny on .env holds in any spelling, with the rule's name
    let r = serve_call(
        &ws,
        &["--role", "support", "--attr", "owner_verified=true"],
        "read_file",
        serde_json::json!({"path": "./.Env"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("no-env"), "{r}");
    assert!(!r.to_string().contains("CANARY"), "{r}");
}
