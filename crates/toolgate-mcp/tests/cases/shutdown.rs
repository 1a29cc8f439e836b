//! SIGTERM: the server stops accepting, lets a call in flight finish within the grace period,
//! then exits.

use super::support::{initialize, post_mcp, HttpChild, TestDir};
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn sigterm_lets_calls_in_flight_finish_then_exits() {
    let t = TestDir::new();
    let mut server = HttpChild::start(&t.ws(), &["--grace", "10"]);
    let auth = format!("Authorization: Bearer {}", server.token.clone().unwrap());
    let init = post_mcp(&server.addr, &server.addr.clone(), &[&auth], &initialize());
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("Mcp-Session-Id: {}", init.header("mcp-session-id").unwrap());
    let (addr, a, s) = (server.addr.clone(), auth.clone(), session.clone());
    let call = std::thread::spawn(move || {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 1.5}}});
        post_mcp(
            &addr,
            &addr.clone(),
            &[&a, &s, "MCP-Protocol-Version: 2025-11-25"],
            &body,
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    let signalled = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // New connections are refused once shutdown starts (the call in flight runs on).
    let refused_by = Instant::now() + Duration::from_secs(3);
    while std::net::TcpStream::connect(&server.addr).is_ok() {
        assert!(
            Instant::now() < refused_by,
            "the server still accepts connections after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !call.is_finished(),
        "the call in flight ended before the listener closed"
    );
    let answer = call.join().unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        answer.body.contains("slept_ms"),
        "the call in flight finished: {}",
        answer.body
    );
    assert!(!answer.body.contains("\"isError\":true"), "{}", answer.body);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(signalled.elapsed() < Duration::from_secs(8));
}
