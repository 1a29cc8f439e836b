//! Shared pieces: a temporary workspace, the test server as a child process, clients with a
//! timeout, and a raw HTTP/1.1 client.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The test server binary: the built-in tools plus `slow` and `destructive_echo`.
pub const SERVER: &str = env!("CARGO_BIN_EXE_toolgate-mcp-test-server");

/// A temporary directory with a workspace `ws/` (`src/lib.txt` holds a needle) and
/// `outside.txt` beside it.
pub struct TestDir {
    pub dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> TestDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        std::fs::write(
            dir.path().join("ws/src/lib.txt"),
            "a needle in a haystack\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("outside.txt"), "CANARY-OUT\n").unwrap();
        TestDir { dir }
    }

    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

pub use toolgate_test_support::clients::{client_program, python_script, run_ok, run_status};

/// The Python client scripts.
pub fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// The test server serving HTTP on a free loopback port, as a child process.
pub struct HttpChild {
    pub child: Child,
    pub url: String,
    pub addr: String,
    pub token: Option<String>,
}

impl HttpChild {
    /// Starts the server with `args` added to `--workspace WS --http 127.0.0.1:0`, and reads
    /// its address (and token) from stderr.
    pub fn start(ws: &Path, args: &[&str]) -> HttpChild {
        let mut cmd = Command::new(SERVER);
        cmd.arg("--workspace")
            .arg(ws)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .env_remove("TOOLGATE_TOKEN");
        HttpChild::spawn(cmd, "toolgate: serving MCP at ")
    }

    /// Starts `cmd`, a server on a free loopback port that names its endpoint on a stderr
    /// line starting with `banner` (and its token on a `toolgate: token: ` line, if any).
    pub fn spawn(mut cmd: Command, banner: &str) -> HttpChild {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting the server");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut url = None;
        let mut token = None;
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
                if url.is_some() {
                    break;
                }
                continue;
            };
            if let Some(u) = line.strip_prefix(banner) {
                url = Some(u.trim().to_string());
            } else if let Some(t) = line.strip_prefix("toolgate: token: ") {
                token = Some(t.trim().to_string());
                break;
            }
        }
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || while rx.recv().is_ok() {});
        let url = url.expect("the server printed its address");
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        HttpChild {
            child,
            url,
            addr,
            token,
        }
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer to a raw request.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A raw HTTP/1.1 exchange, read to the end (the request says `Connection: close`).
pub fn raw_http(addr: &str, head: &str, body: &[u8]) -> RawResponse {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).expect("connecting");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = Vec::new();
    req.extend_from_slice(head.as_bytes());
    req.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    req.extend_from_slice(body);
    // The server may answer (413) before reading all of a large body.
    let _ = s.write_all(&req);
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
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    RawResponse {
        status,
        headers,
        body: body.to_string(),
    }
}

/// A JSON-RPC POST to `/mcp` with the usual MCP headers plus `extra` header lines.
pub fn post_mcp(addr: &str, host: &str, extra: &[&str], body: &serde_json::Value) -> RawResponse {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for h in extra {
        head.push_str(h);
        head.push_str("\r\n");
    }
    raw_http(addr, &head, body.to_string().as_bytes())
}

/// An `initialize` request body (protocol 2025-11-25).
pub fn initialize() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}
        }
    })
}

/// The JSON-RPC messages in a body: SSE `data:` lines, or the body itself.
pub fn messages(body: &str) -> Vec<serde_json::Value> {
    let events: Vec<serde_json::Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    if !events.is_empty() {
        return events;
    }
    body.lines()
        .filter_map(|l| serde_json::from_str(l.trim()).ok())
        .filter(serde_json::Value::is_object)
        .collect()
}

/// The response among `messages` (the one with an id and no method).
pub fn response(messages: &[serde_json::Value]) -> &serde_json::Value {
    messages
        .iter()
        .find(|m| m.get("id").is_some() && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response in {messages:?}"))
}
