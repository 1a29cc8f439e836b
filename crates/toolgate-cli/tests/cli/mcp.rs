//! `toolgate serve` driven by hand, as an MCP client would (and as a hostile one would):
//! over stdio (newline-delimited JSON-RPC) and over streamable HTTP (raw HTTP/1.1 on
//! 127.0.0.1), with a workspace whose configuration lets `write_file` run without asking.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");
/// How long any one answer may take.
pub const ANSWER: Duration = Duration::from_secs(20);

/// A temporary directory with a workspace `ws/` holding `ok.txt` and a `toolgate.toml` that
/// allows `write_file` and `run_shell`'s `sleep` and `echo` without asking.
pub fn workspace() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("ok.txt"), "ok\n").unwrap();
    std::fs::write(
        ws.join("toolgate.toml"),
        "[[rules]]\ndecision = \"allow\"\ntool = \"write_file\"\n\n\
         [[rules]]\ndecision = \"allow\"\nresource = \"command:sleep\"\n\n\
         [[rules]]\ndecision = \"allow\"\nresource = \"command:echo\"\n",
    )
    .unwrap();
    t
}

/// The audit records of `ws`'s store, oldest first.
pub fn audit(ws: &Path) -> Vec<Value> {
    let out = Command::new(TOOLGATE)
        .args(["audit", "--json", "--limit", "0", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The audit records of `ws`'s store once there are at least `n` (a read-only call's record is
/// written after its result is sent), polled for at most 10 s; then whatever there is.
pub fn audit_at_least(ws: &Path, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let records = audit(ws);
        if records.len() >= n || std::time::Instant::now() >= deadline {
            return records;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `tools/call` of `name` with `arguments` as request `id`.
pub fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

/// `initialize` (2025-11-25) as request `id` with the client `capabilities`.
pub fn initialize(id: i64, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "toolgate-cli-tests", "version": "0"}}})
}

/// Waits for `child` to exit by itself; kills it and fails after `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolgate serve did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGTERM to `child`.
pub fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// `toolgate serve` over stdio, its answers read by a thread.
pub struct StdioServe {
    pub child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<String>,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl StdioServe {
    /// `toolgate serve --workspace WS ARGS...` with `env`.
    pub fn start(ws: &Path, args: &[&str], env: &[(&str, &str)]) -> StdioServe {
        let mut child = Command::new(TOOLGATE)
            .arg("serve")
            .arg("--workspace")
            .arg(ws)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolgate serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let keep = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    return;
                }
                keep.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        StdioServe {
            stdin: child.stdin.take(),
            child,
            answers,
            stderr,
        }
    }

    /// Writes `bytes` and a newline.
    pub fn send_line(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// The next message the server wrote, within `limit`.
    pub fn next(&self, limit: Duration) -> Option<Value> {
        match self.answers.recv_timeout(limit) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            })),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next message, which must come within [`ANSWER`].
    pub fn recv(&self) -> Value {
        self.next(ANSWER).unwrap_or_else(|| {
            panic!(
                "no message from the server; stderr:\n{}",
                self.stderr.lock().unwrap()
            )
        })
    }

    /// `initialize` with `capabilities`, its answer, then `notifications/initialized`.
    pub fn handshake(&mut self, capabilities: Value) {
        self.send(&initialize(0, capabilities));
        let answer = self.recv();
        assert_eq!(answer["id"], 0, "{answer}");
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Closes stdin, as a client leaving does, and waits for the server to exit.
    pub fn finish(mut self) -> ExitStatus {
        drop(self.stdin.take());
        wait_exit(&mut self.child, Duration::from_secs(30))
    }
}

impl Drop for StdioServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer to a raw HTTP request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, or the JSON of the last SSE `data:` line that holds a response.
    pub fn json(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .rfind(|v| v.get("result").is_some() || v.get("error").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {self:?}"))
    }
}

/// `toolgate serve --http 127.0.0.1:0`, its address and token read from stderr.
pub struct HttpServe {
    pub child: Child,
    pub addr: String,
    pub token: String,
    stderr: Option<std::process::ChildStderr>,
}

impl HttpServe {
    /// `toolgate serve --workspace WS --http 127.0.0.1:0 ARGS...` with `env`. Its stderr is
    /// drained by a thread unless `keep_stderr`, when [`HttpServe::close_stderr`] closes it.
    pub fn start(ws: &Path, args: &[&str], env: &[(&str, &str)], keep_stderr: bool) -> HttpServe {
        let mut child = Command::new(TOOLGATE)
            .arg("serve")
            .arg("--workspace")
            .arg(ws)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .env_remove("TOOLGATE_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolgate serve");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let (mut addr, mut token) = (None, None);
        let mut line = String::new();
        while token.is_none() {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if let Some(u) = line.strip_prefix("toolgate: serving MCP at ") {
                addr = Some(
                    u.trim()
                        .trim_start_matches("http://")
                        .trim_end_matches("/mcp")
                        .to_string(),
                );
            } else if let Some(t) = line.strip_prefix("toolgate: token: ") {
                token = Some(t.trim().to_string());
            }
        }
        let stderr = stderr.into_inner();
        let stderr = if keep_stderr {
            Some(stderr)
        } else {
            let mut s = stderr;
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = s.read_to_end(&mut sink);
            });
            None
        };
        HttpServe {
            child,
            addr: addr.expect("toolgate serve printed its address"),
            token: token.expect("toolgate serve printed its token"),
            stderr,
        }
    }

    /// The server's stderr, kept by [`HttpServe::start`] (for the caller to read).
    pub fn take_stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.stderr.take()
    }

    /// Closes the read end of the server's stderr.
    pub fn close_stderr(&mut self) {
        drop(self.stderr.take());
    }

    /// `Authorization: Bearer TOKEN`.
    pub fn auth(&self) -> String {
        format!("Authorization: Bearer {}", self.token)
    }

    /// A POST of `body` to `/mcp` with the MCP headers, the token and `extra` header lines.
    pub fn post(&self, body: &[u8], extra: &[&str]) -> Reply {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}\r\n",
            self.addr,
            self.auth()
        );
        for h in extra {
            head.push_str(h);
            head.push_str("\r\n");
        }
        raw_http(&self.addr, &head, body)
    }

    /// An initialized 2025-11-25 session: its `Mcp-Session-Id` and protocol headers.
    pub fn session(&self, capabilities: Value) -> Vec<String> {
        let r = self.post(initialize(0, capabilities).to_string().as_bytes(), &[]);
        assert_eq!(r.status, 200, "{r:?}");
        let headers = vec![
            format!(
                "Mcp-Session-Id: {}",
                r.header("mcp-session-id").expect("a session")
            ),
            "MCP-Protocol-Version: 2025-11-25".to_string(),
        ];
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let r = self.post(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &h,
        );
        assert_eq!(r.status, 202, "{r:?}");
        headers
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> ExitStatus {
        terminate(&self.child);
        wait_exit(&mut self.child, Duration::from_secs(30))
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw HTTP/1.1 exchange read to the end (`Connection: close` is added).
pub fn raw_http(addr: &str, head: &str, body: &[u8]) -> Reply {
    let mut s = std::net::TcpStream::connect(addr).expect("connecting");
    s.set_read_timeout(Some(ANSWER)).unwrap();
    let mut req = head.as_bytes().to_vec();
    req.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    req.extend_from_slice(body);
    // the server may answer (413) before reading a large body
    let _ = s.write_all(&req);
    read_reply(&mut s)
}

/// Reads one HTTP/1.1 answer to the end of the connection.
pub fn read_reply(s: &mut impl Read) -> Reply {
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    let text = String::from_utf8_lossy(&resp).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text.as_str(), ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            out.push_str(&rest[..rest.len().min(n)]);
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The files `f*.txt` in `ws`, by name.
pub fn written(ws: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('f') && n.ends_with(".txt"))
        .collect();
    names.sort();
    names
}

/// The workspace directory of `t`.
pub fn ws(t: &tempfile::TempDir) -> PathBuf {
    t.path().join("ws")
}
