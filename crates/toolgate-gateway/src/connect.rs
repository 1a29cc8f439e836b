//! Starting one connection to an upstream: a stdio server spawned (under run_shell's sandbox
//! unless the entry says `sandbox = false`) with its stdout and stdin as the transport, or a
//! streamable HTTP endpoint; then rmcp's client handshake (`initialize`) and the first
//! `tools/list`, all within the entry's `startup_timeout_ms`.
//!
//! An HTTP upstream gets a reqwest client of its own: HTTPS by rustls (the certificate
//! checked against the system's roots and the entry's `ca_file`), no redirects followed (an
//! MCP endpoint answers where it is; a redirect elsewhere is refused, not followed with the
//! entry's headers), the entry's headers on every request; its events are mended before rmcp
//! reads them (`http_client.rs`).

use crate::client::Handler;
use parking_lot::Mutex;
use rmcp::model::Tool as McpTool;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::AsyncReadExt;
use toolgate_config::UpstreamConfig;
use toolgate_tools::shell::{SandboxReport, SandboxedProcess, ShellConfig};

/// The longest line a stdio upstream may send (longer ones are dropped): 16 MiB.
pub const MAX_LINE: usize = 16 << 20;
/// How much of a stdio server's stderr is kept, for the message when it fails: 2 KiB.
pub const STDERR_TAIL: usize = 2048;

/// What starting a stdio server needs besides its entry.
#[derive(Debug, Clone)]
pub struct StartContext {
    /// The workspace root: the server's working directory, and what its sandbox may write.
    pub root: PathBuf,
    /// The sandbox's settings (the configuration's `[shell]`); the entry's `network` and
    /// `env` are applied on top.
    pub shell: ShellConfig,
    /// What this machine's kernel enforces.
    pub report: SandboxReport,
}

/// A live connection; dropping it closes the session and kills a stdio server.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    pub(crate) tools: Vec<McpTool>,
    pub(crate) process: Option<Process>,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
}

/// A stdio server's process, killed on drop.
pub(crate) enum Process {
    Sandboxed(SandboxedProcess),
    Plain(tokio::process::Child),
}

impl Process {
    fn child(&mut self) -> &mut tokio::process::Child {
        match self {
            Process::Sandboxed(p) => &mut p.child,
            Process::Plain(c) => c,
        }
    }

    /// Whether the process has exited, and how.
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child().try_wait().ok().flatten()
    }
}

/// Starts `upstream` and lists its tools.
///
/// # Errors
/// What failed, for the operator (and the health's detail).
pub(crate) async fn connect(
    upstream: &UpstreamConfig,
    start: &StartContext,
    handler: Handler,
) -> Result<Connection, String> {
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let attempt = async {
        match (&upstream.command, &upstream.url) {
            (Some(command), _) => {
                let mut process = spawn(upstream, command, start).await?;
                let child = process.child();
                let (Some(stdout), Some(stdin), err) =
                    (child.stdout.take(), child.stdin.take(), child.stderr.take())
                else {
                    return Err("the server's pipes could not be opened".to_string());
                };
                if let Some(err) = err {
                    tokio::spawn(keep_tail(err, stderr.clone()));
                }
                let transport =
                    AsyncRwTransport::new_client(crate::stdout_lines::forward(stdout), stdin)
                        .with_max_line_length(MAX_LINE);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))?;
                Ok((service, Some(process)))
            }
            (None, Some(url)) => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                config = config.custom_headers(headers(upstream)?);
                let client = http_client(upstream, &start.root)?;
                let transport = StreamableHttpClientTransport::with_client(
                    crate::http_client::Mending(client),
                    config,
                );
                let service = handler.serve(transport).await.map_err(|e| {
                    // a key in the query (`?api_key=...`), which reqwest's errors repeat,
                    // is not shown where this goes: the health, the logs, an error message
                    let message = format!("the MCP handshake with {url} failed: {e}");
                    toolgate_core::redact::redact_inline(&message).into_owned()
                })?;
                Ok((service, None))
            }
            (None, None) => Err("the entry has neither command nor url".to_string()),
        }
    };
    let timeout = upstream.startup_timeout();
    let ms = timeout.as_millis();
    let (service, process) = tokio::time::timeout(timeout, attempt)
        .await
        .map_err(|_| format!("the server did not finish its handshake within {ms} ms"))??;
    let tools = tokio::time::timeout(
        timeout,
        crate::listing::all::<McpTool>(service.peer(), &upstream.name),
    )
    .await
    .map_err(|_| format!("the server did not list its tools within {ms} ms"))?
    .map_err(|e| format!("tools/list failed: {e}"))?;
    Ok(Connection {
        service,
        tools,
        process,
        stderr,
    })
}

async fn spawn(
    upstream: &UpstreamConfig,
    command: &str,
    start: &StartContext,
) -> Result<Process, String> {
    let program = which(command).ok_or_else(|| format!("the program {command:?} was not found"))?;
    if upstream.sandbox {
        let mut config = start.shell.clone();
        config.allow_network = upstream.network;
        config.inherit_env.extend(upstream.env.iter().cloned());
        let p = SandboxedProcess::spawn(
            &config,
            &start.report,
            &start.root,
            &program,
            &upstream.args,
        )
        .await
        .map_err(|e| e.message)?;
        if !p.missing().is_empty() {
            tracing::warn!(upstream = %upstream.name, missing = ?p.missing(), "the upstream runs without its full sandbox, as configured");
        }
        return Ok(Process::Sandboxed(p));
    }
    // the operator's explicit choice: no sandbox, but still only the environment named
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&upstream.args)
        .current_dir(&start.root)
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    for name in start.shell.inherit_env.iter().chain(&upstream.env) {
        if let Some(v) = std::env::var_os(name) {
            command.env(name, v);
        }
    }
    command
        .spawn()
        .map(Process::Plain)
        .map_err(|e| format!("{} could not be started: {e}", program.display()))
}

/// `command` as a path: as given when it has a `/`, else the first match on `PATH`.
fn which(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return Some(PathBuf::from(command));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The HTTP client of `upstream`: rustls with the system's roots plus the certificates of
/// its `ca_file` (relative to `root`), no redirects.
///
/// # Errors
/// The CA file cannot be read or holds no certificate rustls accepts; the client cannot be
/// built (no TLS roots on this machine).
pub(crate) fn http_client(
    upstream: &UpstreamConfig,
    root: &Path,
) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    if let Some(path) = toolgate_config::upstreams::ca_file_path(root, upstream) {
        let shown = path.display();
        let pem = read_bounded(&path, toolgate_config::upstreams::MAX_CA_FILE_BYTES)
            .map_err(|e| format!("the CA file {shown} cannot be read: {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
            format!("the CA file {shown} holds a certificate that cannot be read: {e}")
        })?;
        if certs.is_empty() {
            return Err(format!("the CA file {shown} holds no PEM certificate"));
        }
        for c in certs {
            builder = builder.add_root_certificate(c);
        }
    }
    builder
        .build()
        .map_err(|e| format!("the HTTP client could not be built: {e}"))
}

/// At most `limit` bytes of the file at `path` (an error past it).
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(std::io::Error::other(format!("it is over {limit} bytes")));
    }
    Ok(out)
}

fn headers(
    upstream: &UpstreamConfig,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, String> {
    let mut out = HashMap::new();
    for h in &upstream.headers {
        let value = std::env::var(&h.value_env).map_err(|_| {
            format!(
                "the header {} needs the environment variable {}, which is not set",
                h.name, h.value_env
            )
        })?;
        let name = http::HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|e| format!("the header name {:?} is not valid: {e}", h.name))?;
        let value = http::HeaderValue::from_str(&value)
            .map_err(|_| format!("the value of {} is not a valid header value", h.value_env))?;
        out.insert(name, value);
    }
    Ok(out)
}

/// Reads a server's stderr to its end (so a chatty server never blocks on a full pipe),
/// keeping the last [`STDERR_TAIL`] bytes.
async fn keep_tail(mut err: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = vec![0u8; 8192];
    loop {
        match err.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut t = tail.lock();
                t.extend_from_slice(&buf[..n]);
                if t.len() > STDERR_TAIL {
                    let cut = t.len() - STDERR_TAIL;
                    t.drain(..cut);
                }
            }
        }
    }
}

/// The kept end of a server's stderr, as text for a message (empty when none).
pub(crate) fn stderr_text(tail: &Mutex<Vec<u8>>) -> String {
    let t = tail.lock();
    let s = String::from_utf8_lossy(&t);
    toolgate_core::sanitize::clean_output(s.trim()).into_owned()
}
