//! [`DnsServer`]: a real DNS server on 127.0.0.1 for the HTTP tools' tests (rebinding,
//! several answers), the Python script `python/dns_server.py` of this crate on dnslib, run
//! with the Python of `TOOLGATE_TEST_PYTHON` (see [`crate::clients::client_program`]).

use parking_lot::Mutex;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The DNS server; stops when dropped. See `python/dns_server.py` for its zone format.
pub struct DnsServer {
    child: Child,
    port: u16,
    queries: Arc<Mutex<Vec<String>>>,
}

impl DnsServer {
    /// Starts a server answering from `zone` (`{"name": [["answer", ...], ...]}`: the n-th
    /// query of a name gets the n-th set, the last set repeating; TTL 0). `None` when
    /// `TOOLGATE_TEST_PYTHON` is unset outside CI: the test is skipped.
    ///
    /// # Panics
    /// Under CI without `TOOLGATE_TEST_PYTHON`, or when the server does not start within 20 s
    /// (dnslib missing: `.ci/run` installs it).
    pub fn start(zone: &serde_json::Value) -> Option<DnsServer> {
        let script = crate::clients::python_dir().join("dns_server.py");
        let mut cmd = crate::clients::python_script(script)?;
        let mut child = cmd
            .arg(zone.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting dns_server.py");
        let stdout = child.stdout.take().expect("stdout is piped");
        let queries = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        {
            let queries = queries.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Some(port) = line.strip_prefix("port ") {
                        let _ = port_tx.send(port.trim().parse::<u16>().ok());
                    } else if let Some(q) = line.strip_prefix("query ") {
                        queries.lock().push(q.to_string());
                    }
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            match port_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(p)) => break p,
                Ok(None) => panic!("dns_server.py printed a bad port"),
                Err(_) if Instant::now() > deadline => {
                    let _ = child.kill();
                    panic!("dns_server.py did not start (is dnslib installed? .ci/run installs it)")
                }
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        panic!("dns_server.py exited with {status} (is dnslib installed?)");
                    }
                }
            }
        };
        Some(DnsServer {
            child,
            port,
            queries,
        })
    }

    /// Where it listens (UDP and TCP).
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The queries it answered for `name` (any type; `name` without the trailing dot).
    pub fn queries(&self, name: &str) -> usize {
        let want = format!("{}.", name.trim_end_matches('.').to_ascii_lowercase());
        self.queries
            .lock()
            .iter()
            .filter(|q| q.split_whitespace().next() == Some(want.as_str()))
            .count()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
