//! `toolgate serve --http` bounds what clients hold: slow heads, bare connects and floods from
//! other loopback addresses are cut off while a normal client is served; bodies that never
//! end time out; an oversized body is refused before it is read; live sessions per token are
//! capped and freed. All on 127.0.0.0/8, bounded in count and time.

use super::mcp::{self, call, raw_http, read_reply, HttpServe};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// A connection to `addr` from the loopback address `from` (any 127.0.0.0/8 address is this
/// machine, and a different peer to the server).
fn connect_from(from: Ipv4Addr, addr: &str) -> TcpStream {
    let to: SocketAddr = addr.parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// Whether the server closed `conn` (end of stream or reset) within `limit`.
fn closed_within(conn: &mut TcpStream, limit: Duration) -> bool {
    conn.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return true,
            // an answer (408 and the like) before the close
            Ok(_) => continue,
            Err(e) => {
                return !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            }
        }
    }
}

/// Open descriptors of process `pid`.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// A normal client's whole exchange: a session, a call, the session's end.
fn served(server: &HttpServe) {
    let session = server.session(json!({}));
    let h: Vec<&str> = session.iter().map(String::as_str).collect();
    let r = server.post(
        call(1, "read_file", json!({"path": "ok.txt"}))
            .to_string()
            .as_bytes(),
        &h,
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.json()["result"]["content"].to_string().contains("ok"),
        "{r:?}"
    );
    end(server, &session[0]);
}

/// `DELETE /mcp` of the session whose header line is `session`.
fn end(server: &HttpServe, session: &str) {
    let r = raw_http(
        &server.addr,
        &format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\n{}\r\n{session}\r\n",
            server.addr,
            server.auth(),
        ),
        b"",
    );
    assert!(matches!(r.status, 200 | 204), "{r:?}");
}

#[test]
fn slowloris_and_a_connection_flood_leave_a_normal_client_served() {
    let t = mcp::workspace();
    let server = HttpServe::start(
        &mcp::ws(&t),
        &[
            "--header-timeout-ms",
            "1500",
            "--max-connections",
            "200",
            "--max-connections-per-peer",
            "20",
        ],
        &[],
        false,
    );
    served(&server);
    let baseline = open_fds(server.child.id());
    let started = Instant::now();
    // 240 connections from six other loopback addresses: half send a head one byte at a
    // time (slowloris, with or without the token), half send nothing at all
    let mut slow = Vec::new();
    let mut bare = Vec::new();
    for i in 0..240u32 {
        let from = Ipv4Addr::new(127, 0, 0, 2 + (i % 6) as u8);
        let mut c = connect_from(from, &server.addr);
        if i % 2 == 0 {
            let _ = c.write_all(b"POST /mcp HTTP/1.1\r\nHost: ");
            slow.push(c);
        } else {
            bare.push(c);
        }
    }
    // the server holds at most 20 per address: 120 in all, never the 240
    std::thread::sleep(Duration::from_millis(300));
    let held = open_fds(server.child.id()).saturating_sub(baseline);
    assert!(
        held <= 6 * 20 + 4,
        "the server holds {held} more descriptors"
    );
    // while the attack goes on (a byte every 200 ms on every slow connection, for longer
    // than the head timeout)...
    let drip = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_millis(2500);
        while Instant::now() < until {
            for c in &mut slow {
                let _ = c.write_all(b"x");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        slow
    });
    // ...a normal client from 127.0.0.1 is served, again and again
    while !drip.is_finished() {
        served(&server);
    }
    let mut slow = drip.join().unwrap();
    // every slow head was cut off at the head timeout, however it kept sending
    for c in &mut slow {
        assert!(
            closed_within(c, Duration::from_millis(200)),
            "a slow head is still held after {:?}",
            started.elapsed()
        );
    }
    // and every bare connection too (or at once, past its address's cap)
    for c in &mut bare {
        assert!(
            closed_within(c, Duration::from_secs(5)),
            "a bare connection is still held"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(200));
    let left = open_fds(server.child.id()).saturating_sub(baseline);
    assert!(left <= 4, "{left} descriptors still held");
    served(&server);
    assert!(server.stop().success());
}

#[test]
fn bodies_that_never_end_time_out_and_oversized_ones_are_refused_unread() {
    let t = mcp::workspace();
    let server = HttpServe::start(
        &mcp::ws(&t),
        &["--body-timeout-ms", "1000", "--max-body-bytes", "65536"],
        &[],
        false,
    );
    let head = |extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{}\r\n{extra}\r\n",
            server.addr,
            server.auth()
        )
    };
    let stalled = |bytes: Vec<u8>| {
        let mut c = TcpStream::connect(&server.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(&bytes).unwrap();
        let started = Instant::now();
        let reply = read_reply(&mut c);
        (reply, started.elapsed())
    };
    for (what, bytes, status) in [
        (
            "a chunked body without its end",
            format!(
                "{}{}",
                head("Transfer-Encoding: chunked\r\n"),
                "5\r\n{\"a\":\r\n"
            )
            .into_bytes(),
            408,
        ),
        (
            "a body shorter than its Content-Length",
            format!("{}{{\"jsonrpc\":", head("Content-Length: 100\r\n")).into_bytes(),
            408,
        ),
        (
            "a Content-Length over the cap (no body sent)",
            head("Content-Length: 100000000\r\n").into_bytes(),
            413,
        ),
        (
            "a chunked body growing past the cap",
            format!(
                "{}10000\r\n{}\r\n10000\r\n{}\r\n",
                head("Transfer-Encoding: chunked\r\n"),
                "x".repeat(0x10000),
                "x".repeat(0x10000)
            )
            .into_bytes(),
            413,
        ),
    ] {
        let (reply, took) = stalled(bytes);
        assert_eq!(reply.status, status, "{what}: {reply:?}");
        let a: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(a["error"]["code"], -32600, "{what}: {a}");
        assert!(took < Duration::from_secs(5), "{what}: {took:?}");
        if status == 413 {
            assert!(
                took < Duration::from_millis(900),
                "{what} was read first: {took:?}"
            );
        }
    }
    // the server is fine
    served(&server);
    assert!(server.stop().success());
}

#[test]
fn live_sessions_per_token_are_capped_and_an_ended_one_frees_its_place() {
    let t = mcp::workspace();
    let server = HttpServe::start(&mcp::ws(&t), &["--max-sessions", "4"], &[], false);
    let mut sessions = Vec::new();
    for _ in 0..4 {
        sessions.push(server.session(json!({})));
    }
    // many more initializes: each refused, none kept
    let started = Instant::now();
    for i in 0..500 {
        let r = server.post(mcp::initialize(i, json!({})).to_string().as_bytes(), &[]);
        assert_eq!(r.status, 429, "{r:?}");
        let a: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(
            (a["id"].as_i64(), a["error"]["code"].as_i64()),
            (Some(i), Some(-32000)),
            "{a}"
        );
        assert!(r.header("mcp-session-id").is_none());
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    // the sessions held still work
    let h: Vec<&str> = sessions[0].iter().map(String::as_str).collect();
    let r = server.post(
        call(1, "read_file", json!({"path": "ok.txt"}))
            .to_string()
            .as_bytes(),
        &h,
    );
    assert!(r.json()["result"].is_object(), "{r:?}");
    // one ends: its place is free
    end(&server, &sessions[3][0]);
    served(&server);
    assert!(server.stop().success());
}
