//! A side effect a test can count: [`CountingServer`], an HTTP server on 127.0.0.1 that counts
//! the deliveries of each `Idempotency-Key`, and [`Send`], a side-effecting tool that delivers
//! to it with the call's idempotency key, fails on the test's script ([`Fault`]), and answers
//! its reconcile hook by asking the server.

use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use toolgate_core::{
    Effects, Reconciliation, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool,
};

/// An HTTP/1.1 server on 127.0.0.1 (a port of its own), one thread per connection:
///
/// - `POST /send` counts one delivery under its `Idempotency-Key` header (`""` without one)
///   and answers `{"count": N}`, the key's deliveries so far;
/// - `GET /seen/KEY` answers `{"count": N}` without counting;
/// - anything else is `404`.
///
/// Stops when dropped.
pub struct CountingServer {
    addr: SocketAddr,
    counts: Arc<Mutex<HashMap<String, u32>>>,
    deliveries: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl CountingServer {
    /// Binds 127.0.0.1:0 and serves.
    ///
    /// # Panics
    /// When it cannot bind or spawn its thread.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1:0");
        let addr = listener.local_addr().expect("the bound address");
        let counts = Arc::new(Mutex::new(HashMap::new()));
        let deliveries = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (counts, deliveries, stop) = (counts.clone(), deliveries.clone(), stop.clone());
            std::thread::Builder::new()
                .name("counting-server".into())
                .spawn(move || {
                    for conn in listener.incoming() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(conn) = conn else { continue };
                        let (counts, deliveries) = (counts.clone(), deliveries.clone());
                        std::thread::spawn(move || serve(conn, &counts, &deliveries));
                    }
                })
                .expect("spawning the counting server")
        };
        CountingServer {
            addr,
            counts,
            deliveries,
            stop,
            thread: Some(thread),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Deliveries counted under `key`.
    pub fn count(&self, key: &str) -> u32 {
        self.counts.lock().get(key).copied().unwrap_or(0)
    }

    /// Deliveries by key.
    pub fn counts(&self) -> HashMap<String, u32> {
        self.counts.lock().clone()
    }

    /// Deliveries in all.
    pub fn deliveries(&self) -> u64 {
        self.deliveries.load(Ordering::SeqCst)
    }
}

impl Drop for CountingServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, counts: &Mutex<HashMap<String, u32>>, deliveries: &AtomicU64) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let Ok(write) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn.take(1 << 20));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (method, path) = (method.to_string(), path.to_string());
    let mut key = String::new();
    let mut length = 0usize;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("idempotency-key") {
                key = value.to_string();
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length.min(1 << 16)];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, answer) = match (method.as_str(), path.as_str()) {
        ("POST", "/send") => {
            let mut counts = counts.lock();
            let n = counts.entry(key).or_insert(0);
            *n += 1;
            deliveries.fetch_add(1, Ordering::SeqCst);
            ("200 OK", format!("{{\"count\":{n}}}"))
        }
        ("GET", p) if p.starts_with("/seen/") => {
            let n = counts
                .lock()
                .get(&p["/seen/".len()..])
                .copied()
                .unwrap_or(0);
            ("200 OK", format!("{{\"count\":{n}}}"))
        }
        _ => ("404 Not Found", "{}".to_string()),
    };
    let mut write = write;
    let _ = write!(
        write,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{answer}",
        answer.len()
    );
}

/// One HTTP/1.1 request to `addr` (blocking, with 2 s timeouts); the status code and the
/// `count` of the JSON answer.
///
/// # Errors
/// The I/O error, or `InvalidData` for an answer that is not the server's.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    key: Option<&str>,
) -> std::io::Result<(u16, u32)> {
    let mut conn = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let header = key.map_or(String::new(), |k| format!("Idempotency-Key: {k}\r\n"));
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{header}Content-Length: 0\r\n\
         Connection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer)?;
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, answer.clone());
    let status: u16 = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(bad)?;
    let count = answer
        .rsplit("\"count\":")
        .next()
        .and_then(|s| s.trim_end_matches('}').parse().ok())
        .ok_or_else(bad)?;
    Ok((status, count))
}

/// What [`Send`]'s handler does on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Delivers and succeeds.
    None,
    /// Fails before delivering, saying so (transient, [`ToolError::no_effect`]).
    FailBefore,
    /// Sleeps past any timeout before delivering (so it never delivers).
    HangBefore,
    /// Delivers, then fails as if the answer was lost (transient, may have acted).
    SendThenFail,
    /// Delivers, then sleeps past any timeout.
    SendThenHang,
    /// Delivers, then succeeds after this many milliseconds.
    Slow(u64),
    /// Panics before delivering.
    Panic,
}

/// What [`Send`] does on each run: the script's next fault, else a random one from the seeded
/// mix, else [`Fault::None`].
#[derive(Default)]
pub struct Faults {
    script: Mutex<VecDeque<Fault>>,
    mix: Mutex<Option<Mix>>,
}

/// A generator's state and the weighted faults it draws from.
type Mix = (u64, Vec<(u32, Fault)>);

impl Faults {
    /// No faults.
    pub fn none() -> Arc<Self> {
        Arc::new(Faults::default())
    }

    /// These faults, one per run, then none.
    pub fn script(faults: impl IntoIterator<Item = Fault>) -> Arc<Self> {
        let f = Faults::default();
        f.script.lock().extend(faults);
        Arc::new(f)
    }

    /// A random fault per run, from `mix` (weights and faults), drawn from a generator seeded
    /// with `seed` (the same seed, the same sequence).
    pub fn random(seed: u64, mix: Vec<(u32, Fault)>) -> Arc<Self> {
        let f = Faults::default();
        *f.mix.lock() = Some((seed.max(1), mix));
        Arc::new(f)
    }

    /// Adds faults to the script.
    pub fn push(&self, fault: Fault) {
        self.script.lock().push_back(fault);
    }

    fn next(&self) -> Fault {
        if let Some(f) = self.script.lock().pop_front() {
            return f;
        }
        let mut mix = self.mix.lock();
        let Some((state, weights)) = mix.as_mut() else {
            return Fault::None;
        };
        // xorshift64: small, seeded, good enough to spread faults
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let total: u32 = weights.iter().map(|(w, _)| w).sum();
        let mut pick = (*state % u64::from(total.max(1))) as u32;
        for (w, f) in weights.iter() {
            if pick < *w {
                return *f;
            }
            pick -= w;
        }
        Fault::None
    }
}

/// Arguments of [`Send`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// The recipient.
    pub to: String,
    /// The message.
    pub body: String,
}

/// Output of [`Send`].
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct SendOut {
    /// Deliveries of this call's key the server had counted when it answered.
    pub count: u32,
    /// The idempotency key the delivery carried.
    pub key: String,
}

/// `send(to, body)`: side-effecting (not idempotent, risk external): delivers to a
/// [`CountingServer`] with the call's idempotency key as `Idempotency-Key`, as its
/// [`Faults`] say; its reconcile hook asks the server whether the key was delivered.
pub struct Send {
    /// The server.
    pub addr: SocketAddr,
    /// What each run does.
    pub faults: Arc<Faults>,
    /// The tool's timeout.
    pub timeout: Duration,
    /// Whether it has a reconcile hook (without one, only the operator settles).
    pub reconciles: bool,
    /// Whether calls without a key get a derived one (the default).
    pub derived_keys: bool,
}

impl Send {
    /// A sender to `server` with `faults`, a 200 ms timeout, a reconcile hook and derived keys.
    pub fn new(server: &CountingServer, faults: Arc<Faults>) -> Self {
        Send {
            addr: server.addr(),
            faults,
            timeout: Duration::from_millis(200),
            reconciles: true,
            derived_keys: true,
        }
    }
}

async fn deliver(addr: SocketAddr, key: String) -> Result<SendOut, ToolError> {
    let k = key.clone();
    let answer = tokio::task::spawn_blocking(move || request(addr, "POST", "/send", Some(&k)))
        .await
        .map_err(|e| ToolError::internal(format!("the delivery thread failed: {e}")))?;
    match answer {
        Ok((200, count)) => Ok(SendOut { count, key }),
        Ok((status, _)) => Err(ToolError::failed(format!("the server answered {status}"))),
        Err(e) => Err(ToolError::failed(format!("the delivery failed: {e}")).transient()),
    }
}

impl TypedTool for Send {
    type Args = SendArgs;
    type Output = SendOut;

    fn spec(&self) -> ToolSpecBuilder {
        let spec = ToolSpec::builder("send")
            .description("Delivers a message to the test's counting server.")
            .effects(Effects {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: true,
                concurrency_safe: true,
            })
            .risk(Risk::External)
            .timeout(self.timeout);
        if self.derived_keys {
            spec
        } else {
            spec.no_derived_idempotency_key()
        }
    }

    async fn call(&self, _args: SendArgs, ctx: ToolContext) -> Result<SendOut, ToolError> {
        let key = ctx.idempotency_key().unwrap_or_default().to_string();
        let long = self.timeout * 20;
        match self.faults.next() {
            Fault::None => deliver(self.addr, key).await,
            Fault::FailBefore => Err(ToolError::failed("the connection was refused")
                .transient()
                .no_effect()),
            Fault::HangBefore => {
                tokio::time::sleep(long).await;
                deliver(self.addr, key).await
            }
            Fault::SendThenFail => {
                deliver(self.addr, key).await?;
                Err(
                    ToolError::failed("the connection broke before the server's answer was read")
                        .transient(),
                )
            }
            Fault::SendThenHang => {
                deliver(self.addr, key).await?;
                tokio::time::sleep(long).await;
                Err(ToolError::failed("unreachable: the call timed out"))
            }
            Fault::Slow(ms) => {
                let out = deliver(self.addr, key).await?;
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(out)
            }
            Fault::Panic => panic!("send exploded"),
        }
    }

    async fn reconcile(
        &self,
        key: &str,
        _args: &SendArgs,
        _ctx: ToolContext,
    ) -> Result<Reconciliation<SendOut>, ToolError> {
        if !self.reconciles {
            return Ok(Reconciliation::Unknown);
        }
        let (addr, k) = (self.addr, key.to_string());
        let path = format!("/seen/{k}");
        let seen = tokio::task::spawn_blocking(move || request(addr, "GET", &path, None))
            .await
            .map_err(|e| ToolError::internal(format!("the reconcile thread failed: {e}")))?
            .map_err(|e| ToolError::failed(format!("the server could not be asked: {e}")))?;
        Ok(match seen {
            (200, 0) => Reconciliation::NotDone,
            (200, count) => Reconciliation::Done(SendOut { count, key: k }),
            (status, _) => return Err(ToolError::failed(format!("the server answered {status}"))),
        })
    }
}
