//! An `https://` upstream through the binary: a streamable HTTPS server on the official
//! Python SDK (`tests/upstreams/https_server.py`) whose certificate is signed by a CA made
//! when it starts; trusted through the entry's `ca_file`, its tools are served; with a CA
//! that did not sign it, or none (the system's roots), the upstream is down with a message
//! naming the certificate, and nothing is served.

use super::gateway::{envelope, text, toolgate};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgate_test_support::clients::client_program;

/// The HTTPS server, writing its CAs into `dir`; killed when dropped.
struct HttpsUpstream {
    child: Child,
    port: u16,
}

impl HttpsUpstream {
    fn start(python: &Path, dir: &Path) -> HttpsUpstream {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstreams/https_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(dir.join("port")) {
                break p.trim().parse().unwrap();
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("the HTTPS upstream exited: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "the HTTPS upstream did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        HttpsUpstream { child, port }
    }
}

impl Drop for HttpsUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn configure(ws: &Path, port: u16, ca_file: Option<&str>) {
    let ca = ca_file
        .map(|c| format!("ca_file = {c:?}\n"))
        .unwrap_or_default();
    std::fs::write(
        ws.join("toolgate.toml"),
        format!(
            "[[rules]]\ndecision = \"allow\"\ntool = \"tls__greet\"\n\n[[upstreams]]\nname = \"tls\"\n\
             url = \"https://127.0.0.1:{port}/mcp\"\n{ca}startup_timeout_ms = 20000\n"
        ),
    )
    .unwrap();
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn an_https_upstream_is_served_when_its_ca_file_vouches_for_it() {
    let Some(python) = client_program("TOOLGATE_TEST_PYTHON") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap().join("ws");
    let tls = ws.join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let server = HttpsUpstream::start(&python, &tls);

    configure(&ws, server.port, Some("tls/ca.pem"));
    let out = toolgate(&ws, &["call", "tls__greet", r#"{"name":"ada"}"#]);
    let e = envelope(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{e}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(e["content"][0]["text"], "hello ada over TLS", "{e}");

    // a CA that signed nothing of the server's, and the system's roots alone: the
    // certificate is refused, the upstream is down, its tools are not served
    for ca in [Some("tls/other-ca.pem"), None] {
        configure(&ws, server.port, ca);
        let out = toolgate(&ws, &["call", "tls__greet", r#"{"name":"ada"}"#]);
        let e = envelope(&out);
        assert_eq!(e["error"]["kind"], "unknown_tool", "{ca:?}: {e}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("upstream tls is down") && stderr.contains("certificate"),
            "{ca:?}: {stderr}"
        );
    }
    let listed = text(&toolgate(&ws, &["tools"]));
    assert!(!listed.contains("tls__greet"), "{listed}");
}
