//! [`HttpServer`]: a scriptable HTTP/1.1 server on a loopback address, for the HTTP tools'
//! tests: fixed answers, redirects, endless and trickling bodies, raw bytes (compression bombs, lying
//! lengths), echoed request headers and per-key counting; it records every request and counts
//! the bytes it wrote. A server with no routes is a canary: every request is a hit it records.
//!
//! One thread per connection, keep-alive as HTTP/1.1 has it (a request with
//! `Connection: close` ends its connection). Stops when dropped.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How the server answers a path.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `status` with `headers` and `body` (a `Content-Length` is added).
    Body {
        /// The status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// `status` with `Location: location` and an empty body.
    Redirect {
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// The `Location`.
        location: String,
    },
    /// `200` with a chunked body that never ends: `chunk` again and again until the client
    /// goes away (or 1 GiB).
    Endless {
        /// The chunk.
        chunk: Vec<u8>,
        /// Extra headers.
        headers: Vec<(String, String)>,
    },
    /// `200` with a chunked body that trickles: `chunk` once every `every`, until the client
    /// goes away (or 10 minutes).
    Slow {
        /// The chunk.
        chunk: Vec<u8>,
        /// The pause before each chunk.
        every: Duration,
    },
    /// These bytes as the whole response, status line and headers included; the connection
    /// closes after them.
    Raw(Vec<u8>),
    /// `200` with a JSON object of the request's headers (lower-case names) and its method
    /// and body.
    Echo,
    /// Counts the request under its `Idempotency-Key` header and answers `200` with
    /// `{"count": N, "key": K, "body": B}`, the key's requests so far.
    Count,
}

impl Reply {
    /// `200` with `body` as `content_type`.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Body {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// A redirect.
    pub fn redirect(status: u16, location: impl Into<String>) -> Reply {
        Reply::Redirect {
            status,
            location: location.into(),
        }
    }
}

/// One request as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The method.
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// The headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    routes: Mutex<HashMap<String, Reply>>,
    requests: Mutex<Vec<Recorded>>,
    counts: Mutex<HashMap<String, u32>>,
    written: AtomicU64,
    connections: AtomicU64,
}

/// The server; see the module docs.
pub struct HttpServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds `ip` (a loopback address: `127.0.0.1`, `127.0.0.2`, `::1`) on a free port and
    /// serves.
    ///
    /// # Panics
    /// When it cannot bind.
    pub fn start(ip: &str) -> HttpServer {
        let ip: IpAddr = ip.parse().expect("an IP address");
        HttpServer::start_at(SocketAddr::new(ip, 0))
    }

    /// Binds `addr` and serves.
    ///
    /// # Panics
    /// When it cannot bind.
    pub fn start_at(addr: SocketAddr) -> HttpServer {
        let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("binding {addr}: {e}"));
        let addr = listener.local_addr().expect("the bound address");
        let state = Arc::new(State::default());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::Builder::new()
                .name(format!("http-server-{addr}"))
                .spawn(move || {
                    for conn in listener.incoming() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(conn) = conn else { continue };
                        state.connections.fetch_add(1, Ordering::SeqCst);
                        let (state, stop) = (state.clone(), stop.clone());
                        std::thread::spawn(move || serve(conn, &state, &stop));
                    }
                })
                .expect("spawning the server thread")
        };
        HttpServer {
            addr,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://ADDR:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Answers `path` (the request target, query included) with `reply`; unknown paths get
    /// `200` and the text `hit`.
    pub fn route(&self, path: &str, reply: Reply) -> &Self {
        self.state.routes.lock().insert(path.to_string(), reply);
        self
    }

    /// Every request read so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().clone()
    }

    /// How many requests it read.
    pub fn hits(&self) -> usize {
        self.state.requests.lock().len()
    }

    /// How many connections it accepted.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Bytes it wrote, headers included.
    pub fn bytes_written(&self) -> u64 {
        self.state.written.load(Ordering::SeqCst)
    }

    /// Requests counted by [`Reply::Count`] under `key`.
    pub fn count(&self, key: &str) -> u32 {
        self.state.counts.lock().get(key).copied().unwrap_or(0)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves the requests of one connection.
fn serve(conn: TcpStream, state: &State, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = conn.set_nodelay(true);
    let Ok(mut write) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    while !stop.load(Ordering::SeqCst) {
        let Some(req) = read_request(&mut reader) else {
            return;
        };
        let close = req
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        state.requests.lock().push(req.clone());
        let path = req.path.clone();
        let reply = state.routes.lock().get(&path).cloned();
        let keep = match reply {
            None => respond(&mut write, state, 200, &[], b"hit"),
            Some(r) => answer(&mut write, state, &req, r),
        };
        if !keep || close {
            return;
        }
    }
}

/// One request, or `None` at the end of the connection or on a malformed one.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':')?;
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(16 << 20)];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        404 => "Not Found",
        _ => "Status",
    }
}

/// Writes a response with a `Content-Length`; whether the connection may go on.
fn respond(
    w: &mut TcpStream,
    state: &State,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> bool {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let ok = w.write_all(head.as_bytes()).is_ok() && w.write_all(body).is_ok();
    state
        .written
        .fetch_add((head.len() + body.len()) as u64, Ordering::SeqCst);
    ok && w.flush().is_ok()
}

fn answer(w: &mut TcpStream, state: &State, req: &Recorded, reply: Reply) -> bool {
    match reply {
        Reply::Body {
            status,
            headers,
            body,
        } => respond(w, state, status, &headers, &body),
        Reply::Redirect { status, location } => {
            respond(w, state, status, &[("Location".into(), location)], b"")
        }
        Reply::Slow { chunk, every } => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
            if w.write_all(head.as_bytes()).is_err() {
                return false;
            }
            state.written.fetch_add(head.len() as u64, Ordering::SeqCst);
            let frame = chunked_frame(chunk);
            let until = std::time::Instant::now() + Duration::from_secs(600);
            while std::time::Instant::now() < until {
                std::thread::sleep(every);
                if w.write_all(&frame).is_err() {
                    break;
                }
                state
                    .written
                    .fetch_add(frame.len() as u64, Ordering::SeqCst);
            }
            false
        }
        Reply::Endless { chunk, headers } => {
            let mut head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n".to_string();
            for (n, v) in &headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            if w.write_all(head.as_bytes()).is_err() {
                return false;
            }
            state.written.fetch_add(head.len() as u64, Ordering::SeqCst);
            let frame = chunked_frame(chunk);
            let mut sent = 0u64;
            while sent < 1 << 30 {
                if w.write_all(&frame).is_err() {
                    break;
                }
                state
                    .written
                    .fetch_add(frame.len() as u64, Ordering::SeqCst);
                sent += frame.len() as u64;
            }
            false
        }
        Reply::Raw(bytes) => {
            let _ = w.write_all(&bytes);
            state
                .written
                .fetch_add(bytes.len() as u64, Ordering::SeqCst);
            false
        }
        Reply::Echo => {
            let headers: serde_json::Map<String, serde_json::Value> = req
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), serde_json::Value::String(v.clone())))
                .collect();
            let body = serde_json::json!({
                "method": req.method,
                "headers": headers,
                "body": String::from_utf8_lossy(&req.body),
            });
            respond(
                w,
                state,
                200,
                &[("Content-Type".into(), "application/json".into())],
                body.to_string().as_bytes(),
            )
        }
        Reply::Count => {
            let key = req.header("idempotency-key").unwrap_or("").to_string();
            let count = {
                let mut counts = state.counts.lock();
                let c = counts.entry(key.clone()).or_insert(0);
                *c += 1;
                *c
            };
            let body = serde_json::json!({
                "count": count,
                "key": key,
                "body": String::from_utf8_lossy(&req.body),
            });
            respond(
                w,
                state,
                200,
                &[("Content-Type".into(), "application/json".into())],
                body.to_string().as_bytes(),
            )
        }
    }
}

/// `chunk` as one frame of a chunked body (RFC 9112 section 7.1): its size in hex, CRLF, the
/// bytes, CRLF.
fn chunked_frame(chunk: Vec<u8>) -> Vec<u8> {
    [
        format!("{:x}\r\n", chunk.len()).into_bytes(),
        chunk,
        b"\r\n".to_vec(),
    ]
    .concat()
}
