//! The email assistant through the binary (issue 14), sending to a real SMTP server
//! (aiosmtpd, toolgate-mail's `tests/support/recording_smtp.py`) on 127.0.0.1: the seed's flow
//! through `toolgate serve` with the official Python SDK (`tests/clients/mail_client.py`),
//! approved through elicitation; and a SIGKILL of `toolgate serve` while the server holds the
//! message's final reply, then re-sends through `toolgate call` with the same key: one copy,
//! and the ledger says the call is unsettled.

use super::toolgate;
use pretty_assertions::assert_eq;
use serde_json::{json as j, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_test_support::clients::python_script;

/// The recording SMTP server; killed when dropped.
pub(super) struct Smtp {
    child: Child,
    pub(super) port: u16,
    out: tempfile::TempDir,
}

impl Smtp {
    pub(super) fn start(args: &[&str]) -> Option<Smtp> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../toolgate-mail/tests/support/recording_smtp.py");
        let mut cmd = python_script(script)?;
        let out = tempfile::tempdir().unwrap();
        let mut child = cmd
            .arg("--out")
            .arg(out.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the SMTP server's port");
        Some(Smtp { child, port, out })
    }

    pub(super) fn messages(&self) -> Vec<Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.out.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
            .collect()
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pdf() -> Vec<u8> {
    let mut b = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    b.extend((0..5000u32).map(|i| (i * 13 % 256) as u8));
    b.extend_from_slice(b"\n%%EOF\n");
    b
}

/// A workspace with a contacts book, the report and `[mail]` for the server on `port`, with
/// `extra` appended to toolgate.toml.
pub(super) fn workspace(port: u16, extra: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    std::fs::write(
        ws.join("contacts.csv"),
        "name,email,organization,aliases\n张伟,zhang.wei@example.cn,Example Ltd,张总;Mr. Zhang\n\
         Ann Lee,ann@company.com,Company,\n",
    )
    .unwrap();
    std::fs::create_dir(ws.join("reports")).unwrap();
    std::fs::write(ws.join("reports/analysis-report.pdf"), pdf()).unwrap();
    std::fs::write(
        ws.join("toolgate.toml"),
        format!(
            "[mail]\nsmtp_host = \"127.0.0.1\"\nsmtp_port = {port}\ntls = \"none\"\n\
             from = \"Assistant <assistant@example.com>\"\ncontacts = \"contacts.csv\"\n{extra}"
        ),
    )
    .unwrap();
    t
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
fn the_seed_flow_through_serve_with_the_python_sdk_sends_exactly_one_message() {
    let Some(smtp) = Smtp::start(&[]) else { return };
    let t = workspace(smtp.port, "");
    let ws = t.path();
    let Some(mut client) =
        python_script(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/mail_client.py"))
    else {
        return;
    };
    let argv = j!([env!("CARGO_BIN_EXE_toolgate"), "serve", "--workspace", ws]);
    let out = client
        .args(["--mode", "legacy", "--stdio", &argv.to_string()])
        .args(["--pdf-size", &pdf().len().to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("passed: mail"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let m = &messages[0];
    assert_eq!(
        m["rcpt_tos"],
        j!(["zhang.wei@example.cn", "ann@company.com"])
    );
    assert_eq!(m["subject"], "Last week's progress");
    let text = m["text"].as_str().unwrap();
    assert!(text.starts_with("Dear 张伟,"), "{text}");
    assert!(text.contains("- Tests start on Monday"), "{text}");
    assert!(stdout.contains(&format!(
        "message-id: {}",
        m["message_id"].as_str().unwrap()
    )));
    let a = &m["attachments"][0];
    assert_eq!(
        (&a["filename"], &a["content_type"]),
        (&j!("analysis-report.pdf"), &j!("application/pdf"))
    );
    assert_eq!(b64(a["data_b64"].as_str().unwrap()), pdf());
}

/// Standard base64 without padding checks (the server wrote it).
fn b64(text: &str) -> Vec<u8> {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        acc = acc << 6 | ABC.iter().position(|x| *x == c).unwrap() as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
fn a_server_killed_during_the_send_and_a_resend_leave_one_copy_and_an_unsettled_entry() {
    let Some(smtp) = Smtp::start(&["--stall", "30"]) else {
        return;
    };
    // allowed without a question (the hand-driven client answers none); a 4 s timeout, so
    // the killed call's claim runs out 9 s after it was made
    let t = workspace(
        smtp.port,
        "timeout = \"4s\"\n\n[[rules]]\ndecision = \"allow\"\ntool = \"send_email\"\n",
    );
    let ws = t.path();
    let args = j!({"to": ["ann@company.com"], "subject": "Invoice 7", "body": "Please pay."});
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "-w"])
        .arg(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    for m in [
        j!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mail-test", "version": "1"}}}),
        j!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        j!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "send_email", "arguments": args, "idempotencyKey": "K-mail"}}),
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    let start = Instant::now();
    while smtp.messages().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill().unwrap();
    server.wait().unwrap();
    drop(stdin);
    // re-sent with the same key through `toolgate call` (the same store): in progress while
    // the dead call's claim holds, then unsettled; never a second copy
    let w = ws.to_str().unwrap();
    let start = Instant::now();
    loop {
        let out = toolgate(
            &[
                "call",
                "send_email",
                &args.to_string(),
                "-w",
                w,
                "--yes",
                "--idempotency-key",
                "K-mail",
            ],
            ws,
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(smtp.messages().len(), 1, "a re-send sent again: {v}");
        match v["error"]["kind"].as_str() {
            Some("in_progress") => {
                // the dead call's hold, its end rounded up: never "at most 0 s"
                let m = v["error"]["message"].as_str().unwrap();
                assert!(
                    m.contains("its process stopped") && !m.contains("at most 0 s"),
                    "{m}"
                );
                assert!(start.elapsed() < Duration::from_secs(30), "{v}");
                std::thread::sleep(Duration::from_millis(500));
            }
            Some("outcome_unknown") => break,
            _ => panic!("{v}"),
        }
    }
    let list = toolgate(&["ledger", "list", "--json", "-w", w], ws);
    let entries: Vec<Value> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let entry = entries
        .iter()
        .find(|e| e["key"] == "K-mail")
        .unwrap_or_else(|| panic!("{entries:?}"));
    assert_eq!(entry["state"], "unknown", "{entry}");
    assert_eq!(entry["tool"], "send_email");
    assert_eq!(smtp.messages().len(), 1);
}

/// `toolgate tools` and `toolgate export` show what `serve` and `call` register: the five
/// mail tools with `[mail]` (their effects and risk as declared), none without it.
#[test]
fn tools_and_export_list_the_mail_tools_when_mail_is_configured() {
    let t = workspace(8025, "");
    let ws = t.path();
    let w = ws.to_str().unwrap();
    let out = toolgate(&["tools", "-w", w, "--format", "json"], ws);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let specs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = specs.iter().filter_map(|s| s["name"].as_str()).collect();
    for tool in toolgate_mail::TOOL_NAMES {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    let send = specs.iter().find(|s| s["name"] == "send_email").unwrap();
    assert_eq!(send["risk"], "external", "{send}");
    let text = toolgate(&["tools", "-w", w], ws);
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("send_email "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("destructive") && line.contains("open_world"),
        "{line}"
    );
    let export = toolgate(&["export", "-w", w, "--format", "openai"], ws);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert!(String::from_utf8_lossy(&export.stdout).contains("\"send_email\""));
    // without [mail]: the built-in tools only
    std::fs::write(ws.join("toolgate.toml"), "").unwrap();
    let out = toolgate(&["tools", "-w", w, "--format", "json"], ws);
    let specs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(specs
        .iter()
        .all(|s| s["name"] != "send_email" && s["name"] != "search_contacts"));
    assert!(specs.iter().any(|s| s["name"] == "read_file"));
}

/// One stateless 2026-07-28 `tools/call` of `tool` (its own request and connection): the
/// tool result.
fn stateless_call(server: &super::mcp::HttpServe, id: u64, tool: &str, arguments: Value) -> Value {
    let body = j!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "mail-http-test", "version": "0"}
        }
    }});
    let name = format!("Mcp-Name: {tool}");
    let r = server.post(
        body.to_string().as_bytes(),
        &[
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            &name,
        ],
    );
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["result"].clone()
}

/// Handles over `toolgate serve --http`: stateless requests of one caller run in that
/// caller's session, so a `file_...` and a `draft_...` handle one request got are good in
/// the next (each its own connection); another session (an initialized 2025-11-25 one on the
/// same server) is refused them (`foreign_handle`) and nothing more is sent.
#[test]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
fn handles_hold_across_one_callers_stateless_requests_and_not_for_another_session() {
    let Some(smtp) = Smtp::start(&[]) else { return };
    let t = workspace(
        smtp.port,
        "\n[[rules]]\ndecision = \"allow\"\ntool = \"send_email\"\n",
    );
    let server = super::mcp::HttpServe::start(t.path(), &[], &[], false);
    let found = stateless_call(
        &server,
        1,
        "search_files",
        j!({"query": "analysis", "kind": "pdf"}),
    );
    let file = found["structuredContent"]["files"][0]["handle"]
        .as_str()
        .unwrap_or_else(|| panic!("{found}"))
        .to_string();
    let drafted = stateless_call(
        &server,
        2,
        "generate_email_draft",
        j!({"to": ["ann@company.com"], "subject": "Report", "key_points": ["Attached"],
            "language": "en"}),
    );
    let draft = drafted["structuredContent"]["draft"]
        .as_str()
        .unwrap_or_else(|| panic!("{drafted}"))
        .to_string();
    let send = j!({"to": ["ann@company.com"], "draft": draft, "attachments": [file]});
    let sent = stateless_call(&server, 3, "send_email", send.clone());
    assert_eq!(sent["isError"], false, "{sent}");
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(
        b64(messages[0]["attachments"][0]["data_b64"].as_str().unwrap()),
        pdf()
    );
    // another session on the same server: both handles refused, before anything is sent
    let headers = server.session(j!({}));
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    for (id, args) in [
        (
            10,
            j!({"to": ["ann@company.com"], "subject": "S", "body": "B", "attachments": [file]}),
        ),
        (11, j!({"to": ["ann@company.com"], "draft": draft})),
    ] {
        let r = server.post(
            super::mcp::call(id, "send_email", args)
                .to_string()
                .as_bytes(),
            &h,
        );
        let result = r.json()["result"].clone();
        assert_eq!(result["isError"], true, "{result}");
        let text = result.to_string();
        assert!(
            text.contains("foreign_handle") && text.contains("was not given to this session"),
            "{text}"
        );
    }
    assert_eq!(smtp.messages().len(), 1);
}

/// Contact ids are derived from the contact (its address and name), not handed out by a
/// process: an id one `toolgate call` found is good in the next process (a restart), and
/// delivers to that contact's address; an invented id is refused (`unknown_contact`) and
/// nothing is sent.
#[test]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
fn contact_ids_hold_across_processes_and_invented_ids_are_refused() {
    let Some(smtp) = Smtp::start(&[]) else { return };
    let t = workspace(smtp.port, "");
    let ws = t.path();
    let w = ws.to_str().unwrap();
    let found = toolgate(
        &["call", "search_contacts", r#"{"query": "张总"}"#, "-w", w],
        ws,
    );
    let v: Value = serde_json::from_slice(&found.stdout).unwrap();
    let id = v["structured_content"]["contacts"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let again = toolgate(
        &["call", "search_contacts", r#"{"query": "Zhang"}"#, "-w", w],
        ws,
    );
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["structured_content"]["contacts"][0]["id"], id.as_str());
    for (to, sent) in [("contact_0000000000000000", 0), (id.as_str(), 1)] {
        let args = j!({"to": [to], "subject": "Hello", "body": "Hi"});
        let out = toolgate(
            &["call", "send_email", &args.to_string(), "-w", w, "--yes"],
            ws,
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if sent == 0 {
            assert_eq!(v["error"]["reason"], "unknown_contact", "{v}");
        } else {
            assert_eq!(v["is_error"], false, "{v}");
        }
        assert_eq!(smtp.messages().len(), sent, "{v}");
    }
    assert_eq!(smtp.messages()[0]["rcpt_tos"], j!(["zhang.wei@example.cn"]));
}
