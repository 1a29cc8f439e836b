//! The gateway with real upstreams from npm (`.ci/run` installs them beside Node):
//! server-everything over stdio and over streamable HTTP, server-filesystem over stdio, each
//! started by the test or by toolgate (sandboxed), and the official Python SDK as the client
//! of `toolgate serve` (`tests/clients/gateway_client.py`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_test_support::clients::{client_program, python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// `node_modules` of the npm install that holds Node (`TOOLGATE_TEST_NODE` is
/// `<node_modules>/node/bin/node`).
pub fn node_modules(node: &Path) -> PathBuf {
    node.ancestors()
        .nth(3)
        .expect("node under node_modules/node/bin")
        .to_path_buf()
}

/// server-everything over streamable HTTP on a free loopback port; killed when dropped.
struct HttpEverything {
    child: Child,
    port: u16,
}

impl HttpEverything {
    fn start(node: &Path, modules: &Path) -> HttpEverything {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(node)
            .arg(modules.join("@modelcontextprotocol/server-everything/dist/index.js"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        HttpEverything { child, port }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(
    any(toolgate_no_python, toolgate_no_node),
    ignore = "needs TOOLGATE_TEST_PYTHON and TOOLGATE_TEST_NODE (README: Prerequisites)"
)]
fn the_python_sdk_through_the_gateway_to_npm_servers() {
    let (Some(node), Some(_)) = (
        client_program("TOOLGATE_TEST_NODE"),
        client_program("TOOLGATE_TEST_PYTHON"),
    ) else {
        return;
    };
    let modules = node_modules(&node);
    let http = HttpEverything::start(&node, &modules);
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(t.path().join("outside.txt"), "CANARY-OUT\n").unwrap();
    let everything = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let filesystem = modules.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let config = format!(
        r#"[[rules]]
decision = "allow"
tool = "ev__*"

[[rules]]
decision = "allow"
tool = "web__*"

[[upstreams]]
name = "ev"
command = {node:?}
args = [{everything:?}, "stdio"]
startup_timeout_ms = 30000

[[upstreams]]
name = "fs"
command = {node:?}
args = [{filesystem:?}, {ws:?}]
trust = ["read_only"]
startup_timeout_ms = 30000
arguments = [{{ tool = "*", argument = "path", kind = "path" }}]

[[upstreams]]
name = "web"
url = "http://127.0.0.1:{port}/mcp"
startup_timeout_ms = 30000
"#,
        node = node.display().to_string(),
        everything = everything.display().to_string(),
        filesystem = filesystem.display().to_string(),
        ws = ws.display().to_string(),
        port = http.port,
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();
    let argv = serde_json::json!([TOOLGATE, "serve", "--workspace", ws]).to_string();
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/gateway_client.py"),
    )
    .expect("checked above");
    cmd.args(["--workspace", ws.to_str().unwrap(), "--stdio", &argv]);
    let out = run_ok(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: gateway"), "{stdout}");
    // every call went through the pipeline: audited, the cancelled one as cancelled
    let records = super::mcp::audit(&ws);
    let of = |tool: &str| records.iter().filter(|r| r["tool"] == tool).count();
    assert_eq!(of("ev__echo"), 2, "{records:#?}");
    assert_eq!(of("web__echo"), 1);
    assert_eq!(of("fs__read_text_file"), 3);
    assert!(
        records
            .iter()
            .any(|r| r["tool"] == "ev__trigger-long-running-operation"
                && r["error_kind"] == "cancelled"),
        "{records:#?}"
    );
}
