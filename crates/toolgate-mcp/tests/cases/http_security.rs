//! The HTTP guard probed with raw requests on 127.0.0.1: credentials, Host, Origin, the body
//! cap, a non-loopback bind without a token, session ids.

use super::support::{initialize, post_mcp, HttpChild, TestDir, SERVER};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::net::SocketAddr;
use std::process::Command;
use toolgate_core::{Registry, Workspace};
use toolgate_mcp::{HttpConfig, McpServer};

/// An in-process server on its own runtime (the test thread does blocking I/O).
struct InProc {
    rt: tokio::runtime::Runtime,
    http: Option<toolgate_mcp::HttpServer>,
    addr: String,
}

impl InProc {
    fn start(ws: &std::path::Path, config: impl FnOnce(SocketAddr) -> HttpConfig) -> InProc {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let registry = toolgate_tools::register_read_only(Registry::builder())
            .build()
            .unwrap();
        let server = McpServer::builder(toolgate_mcp::pipeline_builder(registry).build())
            .workspace(Workspace::open(ws).unwrap())
            .build()
            .unwrap();
        let http = rt
            .block_on(toolgate_mcp::serve_http(
                server,
                config("127.0.0.1:0".parse().unwrap()),
            ))
            .unwrap();
        let addr = http.local_addr().to_string();
        InProc {
            rt,
            http: Some(http),
            addr,
        }
    }
}

impl Drop for InProc {
    fn drop(&mut self) {
        if let Some(h) = self.http.take() {
            self.rt.block_on(h.shutdown());
        }
    }
}

const TOKEN: &str = "test-token-0123456789";

fn bearer() -> String {
    format!("Authorization: Bearer {TOKEN}")
}

#[test]
fn transport_auth_65_default_start_wants_a_per_start_token() {
    // Security case transport-auth-65: the default HTTP start requires a random per-start
    // token; a foreign page's request without it gets 401 and runs nothing.
    let t = TestDir::new();
    let server = HttpChild::start(&t.ws(), &[]);
    let token = server.token.clone().expect("a token is made at start");
    assert_eq!(token.len(), 64);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run_shell", "arguments": {"command": "touch PWN"}}});
    let host = server.addr.clone();
    let r = post_mcp(&server.addr, &host, &["Origin: http://evil.example"], &call);
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert!(!t.ws().join("PWN").exists());
    // The token is accepted from the header only, never from the query string.
    let r = super::support::raw_http(
        &server.addr,
        &format!("POST /mcp?token={token} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"),
        initialize().to_string().as_bytes(),
    );
    assert_eq!(r.status, 401, "{r:?}");
    let r = post_mcp(
        &server.addr,
        &host,
        &[&format!("Authorization: Bearer {token}")],
        &initialize(),
    );
    assert_eq!(r.status, 200, "{r:?}");
}

#[test]
fn session_token_95_a_session_id_is_not_a_credential() {
    // Security case session-token-95: requests carrying a valid Mcp-Session-Id but no or a
    // wrong token get 401, a DELETE of the session included, and the session stays usable by
    // its owner.
    let t = TestDir::new();
    std::fs::write(t.ws().join("ok.txt"), "ok\n").unwrap();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let host = s.addr.clone();
    let init = post_mcp(&s.addr, &host, &[&bearer()], &initialize());
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("Mcp-Session-Id: {}", init.header("mcp-session-id").unwrap());
    let version = "MCP-Protocol-Version: 2025-11-25";
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "ok.txt"}}});
    for credential in [
        None,
        Some("Authorization: Bearer wrong-token-0123456789"),
        Some("Authorization: Basic dXNlcjpwYXNz"),
        Some("Authorization: Bearer"),
    ] {
        let mut headers = vec![session.as_str(), version];
        headers.extend(credential);
        let r = post_mcp(&s.addr, &host, &headers, &call);
        assert_eq!(r.status, 401, "{credential:?}: {r:?}");
        assert!(!r.body.contains("ok\\n"), "{r:?}");
        let mut head = format!("DELETE /mcp HTTP/1.1\r\nHost: {host}\r\n{session}\r\n");
        if let Some(c) = credential {
            head.push_str(c);
            head.push_str("\r\n");
        }
        let r = super::support::raw_http(&s.addr, &head, b"");
        assert_eq!(r.status, 401, "DELETE with {credential:?}: {r:?}");
    }
    let r = post_mcp(&s.addr, &host, &[&bearer(), &session, version], &call);
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("\"isError\":false"), "{r:?}");
}

#[test]
fn missing_or_wrong_token_is_401() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let host = s.addr.clone();
    assert_eq!(post_mcp(&s.addr, &host, &[], &initialize()).status, 401);
    assert_eq!(
        post_mcp(
            &s.addr,
            &host,
            &["Authorization: Bearer wrong-token-0123456789"],
            &initialize()
        )
        .status,
        401
    );
    assert_eq!(
        post_mcp(
            &s.addr,
            &host,
            &["Authorization: Basic dXNlcjpwYXNz"],
            &initialize()
        )
        .status,
        401
    );
    let ok = post_mcp(&s.addr, &host, &[&bearer()], &initialize());
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(
        ok.body.contains("\"protocolVersion\":\"2025-11-25\""),
        "{}",
        ok.body
    );
}

#[test]
fn foreign_origin_is_403_and_local_origin_passes() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let host = s.addr.clone();
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    for origin in [
        "http://evil.example",
        "https://127.0.0.1.evil.example",
        "null",
        "http://localhost:1",
    ] {
        let r = post_mcp(
            &s.addr,
            &host,
            &[&bearer(), &format!("Origin: {origin}")],
            &initialize(),
        );
        assert_eq!(r.status, 403, "Origin {origin}: {r:?}");
    }
    for origin in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
    ] {
        let r = post_mcp(
            &s.addr,
            &host,
            &[&bearer(), &format!("Origin: {origin}")],
            &initialize(),
        );
        assert_eq!(r.status, 200, "Origin {origin}: {r:?}");
    }
}

#[test]
fn foreign_host_is_403() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("localhost:{}", port.parse::<u16>().unwrap() ^ 1),
    ] {
        let r = post_mcp(&s.addr, &host, &[&bearer()], &initialize());
        assert_eq!(r.status, 403, "Host {host}: {r:?}");
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        assert_eq!(
            post_mcp(&s.addr, &host, &[&bearer()], &initialize()).status,
            200,
            "Host {host}"
        );
    }
}

#[test]
fn oversized_body_is_413() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| {
        HttpConfig::new(a).token(TOKEN).max_body_bytes(64 * 1024)
    });
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x".repeat(100_000), "version": "0"}}});
    let r = post_mcp(&s.addr, &s.addr.clone(), &[&bearer()], &big);
    assert_eq!(r.status, 413, "{r:?}");
}

#[test]
fn default_body_cap_is_4_mib() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x".repeat(5 << 20), "version": "0"}}});
    let r = post_mcp(&s.addr, &s.addr.clone(), &[&bearer()], &big);
    assert_eq!(r.status, 413, "{}", r.status);
}

#[test]
fn non_loopback_bind_without_token_refuses_to_start() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder().build().unwrap();
    let server = McpServer::builder(toolgate_mcp::pipeline_builder(registry).build())
        .build()
        .unwrap();
    let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let refused = rt.block_on(toolgate_mcp::serve_http(server, HttpConfig::new(addr)));
    assert!(
        matches!(refused, Err(toolgate_mcp::Error::TokenRequired { addr: a }) if a == addr),
        "{refused:?}"
    );
    // The command line says so and exits, without binding.
    let t = TestDir::new();
    let out = Command::new(SERVER)
        .arg("--workspace")
        .arg(t.ws())
        .args(["--http", "0.0.0.0:0"])
        .env_remove("TOOLGATE_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without a bearer token"), "{err}");
    assert!(!err.contains("serving MCP"), "{err}");
}

#[test]
fn session_ids_are_random_uuids() {
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let mut seen = std::collections::HashSet::new();
    for _ in 0..3 {
        let r = post_mcp(&s.addr, &s.addr.clone(), &[&bearer()], &initialize());
        let id = r
            .header("mcp-session-id")
            .expect("a session id")
            .to_string();
        // UUID v4: 8-4-4-4-12 hex digits, version nibble 4, variant 8..b.
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12],
            "{id}"
        );
        assert!(parts[2].starts_with('4'), "{id}");
        assert!(
            matches!(parts[3].chars().next(), Some('8' | '9' | 'a' | 'b')),
            "{id}"
        );
        assert!(seen.insert(id));
    }
}

/// transport_auth beyond transport-auth-65 and session-token-95: the credential is the bearer
/// token in `Authorization` and nothing else (not a near miss, not a cookie, another header,
/// the query string (`access_token` there is `400`) or `Proxy-Authorization`); a foreign
/// page's CORS preflight is granted nothing; a deleted session is gone for its owner too; a
/// GET names no session it may use.
#[test]
fn transport_auth_the_token_is_the_bearer_header_and_a_deleted_session_is_gone() {
    let t = TestDir::new();
    std::fs::write(t.ws().join("ok.txt"), "ok\n").unwrap();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let host = s.addr.clone();
    let short = &TOKEN[..TOKEN.len() - 1];
    let upper = TOKEN.to_ascii_uppercase();
    for credential in [
        format!("Authorization: Bearer {TOKEN}x"),
        format!("Authorization: Bearer {short}"),
        format!("Authorization: Bearer {upper}"),
        format!("Authorization: Token {TOKEN}"),
        format!("Authorization: {TOKEN}"),
        "Authorization: Basic OnRlc3QtdG9rZW4tMDEyMzQ1Njc4OQ==".to_string(),
        format!("Proxy-Authorization: Bearer {TOKEN}"),
        format!("Cookie: token={TOKEN}"),
        format!("X-Api-Key: {TOKEN}"),
    ] {
        let r = post_mcp(&s.addr, &host, &[&credential], &initialize());
        assert_eq!(r.status, 401, "{credential}: {r:?}");
        assert_eq!(r.header("mcp-session-id"), None, "{credential}");
    }
    for query in ["access_token", "token", "auth"] {
        let r = super::support::raw_http(
            &s.addr,
            &format!("POST /mcp?{query}={TOKEN} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"),
            initialize().to_string().as_bytes(),
        );
        // RFC 6750's access_token parameter is a malformed request here (400
        // invalid_request, saying to send the header); any other name is no credential (401)
        let expected = if query == "access_token" { 400 } else { 401 };
        assert_eq!(r.status, expected, "?{query}=: {r:?}");
        assert_eq!(r.header("mcp-session-id"), None, "?{query}=");
    }
    // a foreign page's preflight: refused, and nothing lets its browser go on
    let r = super::support::raw_http(
        &s.addr,
        &format!("OPTIONS /mcp HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n"),
        b"",
    );
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("access-control-allow-origin"), None, "{r:?}");
    assert_eq!(r.header("access-control-allow-headers"), None, "{r:?}");

    // a session deleted by its owner is gone: its id names nothing any more
    let init = post_mcp(&s.addr, &host, &[&bearer()], &initialize());
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("Mcp-Session-Id: {}", init.header("mcp-session-id").unwrap());
    let version = "MCP-Protocol-Version: 2025-11-25";
    let r = super::support::raw_http(
        &s.addr,
        &format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {host}\r\n{session}\r\n{}\r\n",
            bearer()
        ),
        b"",
    );
    assert!(matches!(r.status, 200 | 204), "{r:?}");
    // deleting it again, or a session never made: 404, nothing ended
    for id in [
        session.clone(),
        "Mcp-Session-Id: 00000000-0000-4000-8000-000000000000".to_string(),
    ] {
        let r = super::support::raw_http(
            &s.addr,
            &format!(
                "DELETE /mcp HTTP/1.1\r\nHost: {host}\r\n{id}\r\n{}\r\n",
                bearer()
            ),
            b"",
        );
        assert_eq!(r.status, 404, "{id}: {r:?}");
    }
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "ok.txt"}}});
    let r = post_mcp(&s.addr, &host, &[&bearer(), &session, version], &call);
    assert_eq!(r.status, 404, "{r:?}");
    assert!(!r.body.contains("ok\\n"), "{r:?}");
    // a GET without a session opens no stream
    let r = super::support::raw_http(
        &s.addr,
        &format!(
            "GET /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n{version}\r\n{}\r\n",
            bearer()
        ),
        b"",
    );
    assert!((400..500).contains(&r.status), "{r:?}");
}

/// transport_robustness beyond deep-nesting-91 and batch-jsonrpc-93, over HTTP: each body
/// that is not one JSON-RPC request MCP can read (invalid UTF-8, trailing bytes, a
/// byte-order mark, ids of the wrong type or size, an empty batch, a body that is not JSON by
/// its type) gets one clear 4xx with a JSON-RPC error body and runs nothing, and the server
/// serves on.
#[test]
fn transport_robustness_each_unreadable_body_gets_one_error_and_the_server_serves_on() {
    let t = TestDir::new();
    std::fs::write(t.ws().join("ok.txt"), "ok\n").unwrap();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let host = s.addr.clone();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}\r\n",
        bearer()
    );
    let read =
        r#""method":"tools/call","params":{"name":"read_file","arguments":{"path":"ok.txt"}}"#;
    let mut bodies: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(),
            -32700,
        ),
        (
            "trailing bytes",
            format!("{{\"jsonrpc\":\"2.0\",\"id\":1,{read}}} x").into_bytes(),
            -32700,
        ),
        (
            "a byte-order mark",
            format!("\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":1,{read}}}").into_bytes(),
            -32700,
        ),
        ("an empty batch", b"[]".to_vec(), -32600),
    ];
    for id in [
        "null",
        "{\"a\":1}",
        "[1]",
        "1.5",
        "1e3",
        "18446744073709551616",
        "true",
    ] {
        bodies.push((
            id,
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{read}}}").into_bytes(),
            -32600,
        ));
    }
    let long = format!("\"{}\"", "i".repeat(300));
    bodies.push((
        "a 300-byte id",
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{long},{read}}}").into_bytes(),
        -32600,
    ));
    for (what, body, code) in &bodies {
        let r = super::support::raw_http(&s.addr, &head, body);
        assert_eq!(r.status, 400, "{what}: {r:?}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{what}");
        let e: serde_json::Value =
            serde_json::from_str(&r.body).unwrap_or_else(|_| panic!("{what}: {r:?}"));
        assert_eq!(
            (e["error"]["code"].as_i64(), &e["id"]),
            (Some(*code), &json!(null)),
            "{what}: {e}"
        );
        assert!(!r.body.contains("ok\\n"), "{what}: {r:?}");
    }
    // a call sent as another type than JSON is not read as one
    let r = super::support::raw_http(
        &s.addr,
        &head.replace("application/json\r\nAccept", "text/plain\r\nAccept"),
        format!("{{\"jsonrpc\":\"2.0\",\"id\":1,{read}}}").as_bytes(),
    );
    assert_eq!(r.status, 415, "{r:?}");
    assert!(!r.body.contains("ok\\n"), "{r:?}");
    // and the server serves on
    let ok = post_mcp(&s.addr, &host, &[&bearer()], &initialize());
    assert_eq!(ok.status, 200, "{ok:?}");
}

/// Reads one HTTP/1.1 response from `s`: its status line and headers (names lower-cased),
/// then its body by `Content-Length` or to the end of its chunked framing.
fn read_response(s: &mut std::net::TcpStream) -> (u16, Vec<(String, String)>) {
    use std::io::Read;
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(
            s.read(&mut byte).unwrap(),
            1,
            "the connection closed mid-head"
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    if let Some(n) = header("content-length") {
        let mut body = vec![0u8; n.parse().unwrap()];
        s.read_exact(&mut body).unwrap();
    } else if header("transfer-encoding").as_deref() == Some("chunked") {
        let mut body = Vec::new();
        while !body.ends_with(b"\r\n0\r\n\r\n") && !body.starts_with(b"0\r\n\r\n") {
            assert_eq!(
                s.read(&mut byte).unwrap(),
                1,
                "the connection closed mid-body"
            );
            body.push(byte[0]);
        }
    }
    (status.parse().unwrap(), headers)
}

/// A client told nothing would send its next request into a connection the server is closing
/// (the Python SDK's OAuth discovery after a 401 failed that way: "Server disconnected without
/// sending a response"); so an answer given before the request's body was read says
/// `Connection: close`, and one given after it keeps the connection.
#[test]
fn an_answer_before_the_body_is_read_says_connection_close() {
    use std::io::{Read, Write};
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| HttpConfig::new(a).token(TOKEN));
    let body = initialize().to_string();
    let head = |auth: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: \
             application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\r\n",
            s.addr,
            body.len()
        )
    };
    let timeout = Some(std::time::Duration::from_secs(20));
    // no token, the body not sent yet: 401 at once, the connection closed after it
    let mut c = std::net::TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(timeout).unwrap();
    c.write_all(head("").as_bytes()).unwrap();
    let (status, headers) = read_response(&mut c);
    assert_eq!(status, 401);
    assert!(
        headers.contains(&("connection".into(), "close".into())),
        "{headers:?}"
    );
    let _ = c.write_all(body.as_bytes());
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    // the same with the body sent at once: still unread by the answer
    let mut c = std::net::TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(timeout).unwrap();
    c.write_all(format!("{}{body}", head("")).as_bytes())
        .unwrap();
    let (status, headers) = read_response(&mut c);
    assert_eq!(status, 401);
    assert!(
        headers.contains(&("connection".into(), "close".into())),
        "{headers:?}"
    );
    // with the token the body is read: two requests on one connection, neither closing it
    let auth = format!("{}\r\n", bearer());
    let mut c = std::net::TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(timeout).unwrap();
    for _ in 0..2 {
        c.write_all(format!("{}{body}", head(&auth)).as_bytes())
            .unwrap();
        let (status, headers) = read_response(&mut c);
        assert_eq!(status, 200, "{headers:?}");
        assert!(
            !headers.iter().any(|(n, _)| n == "connection"),
            "{headers:?}"
        );
    }
}

/// A client that closes each connection after its answer and opens the next at once is not
/// refused under the per-peer cap it keeps: a connection over the cap waits a moment for a
/// place, and is closed only when none is freed.
#[test]
fn a_connection_over_the_cap_is_served_when_a_place_frees_and_closed_when_none_does() {
    use std::io::{Read, Write};
    let t = TestDir::new();
    let s = InProc::start(&t.ws(), |a| {
        let mut limits = toolgate_mcp::http::Limits::default();
        limits.max_connections_per_peer = 1;
        HttpConfig::new(a).token(TOKEN).limits(limits)
    });
    let timeout = Some(std::time::Duration::from_secs(20));
    let body = initialize().to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: \
         application/json, text/event-stream\r\n{}\r\nContent-Length: {}\r\n\r\n{body}",
        s.addr,
        bearer(),
        body.len()
    );
    let first = std::net::TcpStream::connect(&s.addr).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    // over the cap, nothing freed: closed without an answer once the wait is over
    let mut over = std::net::TcpStream::connect(&s.addr).unwrap();
    over.set_read_timeout(timeout).unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let _ = over.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));
    // over the cap, the first closed meanwhile: served
    let mut next = std::net::TcpStream::connect(&s.addr).unwrap();
    next.set_read_timeout(timeout).unwrap();
    drop(first);
    next.write_all(request.as_bytes()).unwrap();
    let (status, headers) = read_response(&mut next);
    assert_eq!(status, 200, "{headers:?}");
}
