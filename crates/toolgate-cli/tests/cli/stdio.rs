//! A hand-driven MCP client over stdio for the tests that need `toolgate serve` to outlive a
//! change in the workspace, or a request too large for a command line.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A `toolgate serve` child, initialized (protocol 2025-11-25, no elicitation: a call that
/// asks is rejected).
pub struct Serve {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Serve {
    /// Starts `toolgate serve --workspace WS ARGS...` and initializes a session.
    pub fn start(ws: &Path, args: &[&str]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .arg("serve")
            .arg("--workspace")
            .arg(ws)
            .args(args)
            .env_remove("TOOLGATE_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Serve {
            child,
            stdin: Some(stdin),
            stdout,
            next: 1,
        };
        s.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "toolgate-cli-tests", "version": "1"},
            }),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, msg: &Value) {
        let mut text = serde_json::to_vec(msg).unwrap();
        text.push(b'\n');
        let stdin = self.stdin.as_mut().expect("the client is open");
        stdin.write_all(&text).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its `result` (panics on a JSON-RPC error).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v
                    .get("result")
                    .cloned()
                    .unwrap_or_else(|| panic!("{method}: {v}"));
            }
        }
    }

    /// `tools/call`: the result (`isError`, `structuredContent`, `_meta`).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

impl Drop for Serve {
    /// The client goes away (stdin closes): the server commits its audit records and ends;
    /// one that has not ended within 20 s is killed.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error kind of a `tools/call` result (`_meta["toolgate/error"].kind`), or null.
pub fn error_kind(result: &Value) -> Value {
    result["_meta"]["toolgate/error"]["kind"].clone()
}
