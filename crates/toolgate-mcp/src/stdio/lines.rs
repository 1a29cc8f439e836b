//! [`LineTransport`]: newline-delimited JSON-RPC on a byte stream (MCP's stdio transport),
//! answering every line it cannot hand to rmcp.
//!
//! Reading, one line at a time (`\n`-terminated; a final line without one is read too):
//!
//! 1. a line over the cap (default [`DEFAULT_MAX_LINE_BYTES`]) is not kept: its bytes go
//!    through [`IdScan`] and it is answered `-32600` with its id when one was found
//! 2. a trailing `\r` and a leading byte-order mark are dropped; a blank line is skipped
//! 3. [`crate::jsonrpc::check`]: a refused message gets its error (with its id when known)
//! 4. a `tools/call`'s `params.idempotencyKey` moved into its `_meta`
//!    ([`crate::idempotency::lift`])
//! 5. rmcp's typed reading: a request whose params do not fit gets `-32602`; a notification
//!    or response that cannot be read is dropped (neither is answered in JSON-RPC)
//!
//! Writing goes through one writer task, one message per line, batching what is queued.
//! When a write fails (the reader of stdout went away: `EPIPE`, with SIGPIPE ignored), the
//! transport ends the session as if input had closed, so the server shuts down cleanly:
//! calls in flight get rmcp's drain time (5 s) to end, their answers dropped as they come,
//! then the rest are cancelled, and every one is audited. Closing the transport waits (a
//! bounded time) for what was queued to be written.

use crate::jsonrpc::{check, Frame, IdScan, Method, Refusal};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::RoleServer;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

/// The default cap on one line, in bytes: 16 MiB, as rmcp's.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;
/// How long [`LineTransport::close`] waits for queued messages to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// Messages queued for the writer before senders wait.
const QUEUE: usize = 64;
/// The writer gathers queued messages into one write up to about this many bytes.
const BATCH_BYTES: usize = 64 << 10;
/// A line buffer grown past this is given back after its line.
const KEEP_CAPACITY: usize = 1 << 20;

enum Outgoing {
    Message(Box<TxJsonRpcMessage<RoleServer>>),
    Raw(Vec<u8>),
}

/// Set once writing failed for good.
#[derive(Debug, Default)]
struct Broken {
    flag: AtomicBool,
    notify: Notify,
}

impl Broken {
    fn set(&self) {
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // registered before the flag is read, so a `set` in between still wakes us
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// What one line read gave.
enum Line {
    /// A whole line is in the buffer.
    Whole,
    /// A line over the cap was skipped; the id it carried, if found.
    Oversized(Option<rmcp::model::RequestId>),
}

/// What a line becomes.
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Refuse(Vec<u8>),
    Skip,
}

/// Newline-delimited JSON-RPC on `R` and a writer; see the module documentation.
pub struct LineTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    discarding: Option<IdScan>,
    eof: bool,
    out: Option<mpsc::Sender<Outgoing>>,
    /// A refusal waiting for room in the writer's queue.
    pending: Option<Vec<u8>>,
    writer: Option<JoinHandle<()>>,
    broken: Arc<Broken>,
}

impl<R> std::fmt::Debug for LineTransport<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("max", &self.max)
            .field("eof", &self.eof)
            .finish_non_exhaustive()
    }
}

/// The process's stdin and stdout (non-blocking pipes where both are pipes, as MCP hosts
/// start servers; rmcp's [`rmcp::transport::stdio_pipes`]), with lines of at most
/// [`DEFAULT_MAX_LINE_BYTES`].
///
/// # Panics
/// Outside a Tokio runtime.
pub fn stdio() -> LineTransport<rmcp::transport::StdioReader> {
    let (read, write) = rmcp::transport::stdio_pipes();
    LineTransport::new(read, write, DEFAULT_MAX_LINE_BYTES)
}

impl<R: AsyncRead + Unpin + Send + 'static> LineTransport<R> {
    /// Reads lines of at most `max_line_bytes` from `read` and writes to `write`, from a
    /// writer task spawned now.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        read: R,
        write: W,
        max_line_bytes: usize,
    ) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let broken = Arc::new(Broken::default());
        let writer = tokio::spawn(write_loop(write, rx, broken.clone()));
        LineTransport {
            reader: BufReader::new(read),
            line: Vec::new(),
            max: max_line_bytes.max(1),
            discarding: None,
            eof: false,
            out: Some(tx),
            pending: None,
            writer: Some(writer),
            broken,
        }
    }

    /// The next line, `None` at the end of input. Cancel-safe: a partial line stays in
    /// `self.line` (or `self.discarding`) for the next call.
    async fn read_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                self.eof = true;
                // a last line without its newline
                return Ok(match self.discarding.take() {
                    Some(scan) => Some(Line::Oversized(scan.finish())),
                    None if self.line.is_empty() => None,
                    None => Some(Line::Whole),
                });
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            if let Some(scan) = &mut self.discarding {
                scan.feed(chunk);
            } else if self.line.len() + take - usize::from(newline.is_some()) > self.max {
                // over the cap (the newline does not count): keep only the id, if any
                let mut scan = IdScan::new();
                scan.feed(&self.line);
                scan.feed(chunk);
                self.line.clear();
                self.discarding = Some(scan);
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.reader.consume(take);
            if newline.is_some() {
                return Ok(Some(match self.discarding.take() {
                    Some(scan) => Line::Oversized(scan.finish()),
                    None => Line::Whole,
                }));
            }
        }
    }

    fn decode(&mut self, line: Line) -> Decoded {
        let decoded = match line {
            Line::Oversized(id) => {
                tracing::warn!(max = self.max, "refused a message over the line cap");
                Decoded::Refuse(Refusal::too_large(self.max, id).to_json())
            }
            Line::Whole => decode_line(&self.line),
        };
        self.line.clear();
        if self.line.capacity() > KEEP_CAPACITY {
            self.line = Vec::new();
        }
        decoded
    }
}

fn decode_line(line: &[u8]) -> Decoded {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    let frame = match check(line) {
        Ok(frame) => frame,
        Err(refusal) => {
            tracing::debug!(%refusal, "refused a message");
            return Decoded::Refuse(refusal.to_json());
        }
    };
    // a `tools/call`'s `params.idempotencyKey` (SEP-3182), which rmcp would drop, moved into
    // its `_meta`
    let lifted = match frame {
        Frame::Request {
            method: Method::ToolsCall,
            ..
        } => crate::idempotency::lift(line),
        _ => None,
    };
    let line = lifted.as_deref().unwrap_or(line);
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Decoded::Message(Box::new(message)),
        Err(e) => match frame {
            Frame::Request { id, .. } => Decoded::Refuse(
                Refusal::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("the params do not have the shape the method takes: {e}"),
                    Some(id),
                )
                .to_json(),
            ),
            Frame::Notification | Frame::Response => {
                tracing::debug!(error = %e, "dropped a notification or response that cannot be read");
                Decoded::Skip
            }
        },
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> rmcp::transport::Transport<RoleServer>
    for LineTransport<R>
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        let broken = self.broken.clone();
        async move {
            let Some(tx) = out else {
                return Err(closed());
            };
            match tx.send(Outgoing::Message(Box::new(item))).await {
                Ok(()) => Ok(()),
                // Nobody reads any more: what is still answered is dropped as sent, so rmcp
                // keeps draining its calls (up to 5 s) instead of cancelling them at the
                // first failed send, and their records say how they really ended.
                Err(_) if broken.is_set() => Ok(()),
                Err(_) => Err(closed()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let broken = self.broken.clone();
        loop {
            if self.pending.is_some() {
                let out = self.out.as_ref()?;
                let permit = tokio::select! {
                    biased;
                    _ = broken.wait() => return None,
                    permit = out.reserve() => permit.ok()?,
                };
                if let Some(raw) = self.pending.take() {
                    permit.send(Outgoing::Raw(raw));
                }
            }
            if self.eof {
                return None;
            }
            let read = tokio::select! {
                biased;
                _ = broken.wait() => return None,
                read = self.read_line() => read,
            };
            let line = match read {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the client's messages failed");
                    return None;
                }
            };
            match self.decode(line) {
                Decoded::Message(m) => return Some(*m),
                Decoded::Refuse(raw) => self.pending = Some(raw),
                Decoded::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // the writer writes what is queued, then ends
        self.out = None;
        if let Some(writer) = self.writer.take() {
            if tokio::time::timeout(CLOSE_WAIT, writer).await.is_err() {
                tracing::warn!("the last messages could not be written in time");
            }
        }
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::Receiver<Outgoing>,
    broken: Arc<Broken>,
) {
    let mut buf = Vec::new();
    while let Some(first) = queue.recv().await {
        buf.clear();
        encode(first, &mut buf);
        while buf.len() < BATCH_BYTES {
            match queue.try_recv() {
                Ok(next) => encode(next, &mut buf),
                Err(_) => break,
            }
        }
        let written = async {
            write.write_all(&buf).await?;
            write.flush().await
        }
        .await;
        if let Err(e) = written {
            if e.kind() == io::ErrorKind::BrokenPipe {
                tracing::info!("the client stopped reading: ending the session");
            } else {
                tracing::warn!(error = %e, "writing to the client failed: ending the session");
            }
            broken.set();
            return;
        }
        if buf.capacity() > KEEP_CAPACITY {
            buf = Vec::new();
        }
    }
}

fn encode(message: Outgoing, buf: &mut Vec<u8>) {
    let start = buf.len();
    match message {
        Outgoing::Raw(raw) => buf.extend_from_slice(&raw),
        Outgoing::Message(m) => {
            if let Err(e) = serde_json::to_writer(&mut *buf, &m) {
                tracing::error!(error = %e, "a message could not be encoded");
                buf.truncate(start);
                return;
            }
        }
    }
    buf.push(b'\n');
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
