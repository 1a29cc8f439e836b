//! Audit records and where they go: the [`AuditSink`] trait, a JSON-lines sink written by a
//! background thread, and an in-memory sink for tests.
//!
//! The record stage builds one [`AuditRecord`] per call and hands it to the sink without
//! waiting on disk; secrets in the arguments are redacted by the writer ([`crate::redact`]),
//! off the caller's path.
//!
//! A call that may change something (its tool is not `read_only`) is the exception: before
//! its handler runs, the pipeline commits an intent record ([`Outcome::Started`]) and waits
//! for it ([`AuditSink::record_durable`]); after, it commits the call's own record the same
//! way before the result goes back. So no side effect is ever without its record, even when
//! the process is killed while the handler runs, and no caller is told of a result whose
//! record a crash could take back. The wait is asynchronous and a writer commits every record
//! waiting at once, so under load many calls share one commit ([`CommitTracker`]).

mod commit;

pub use commit::{AuditCommit, AuditError, CloseOnDrop, CommitTracker};

use crate::call::CallId;
use crate::error::ErrorKind;
use crate::grant::GrantScope;
use crate::policy::Decision;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Success.
    Ok,
    /// An error the model can act on.
    RecoverableError,
    /// An error that stops the caller's loop.
    FatalError,
    /// Not run yet: the call asked its client for input (an approval question on an MCP
    /// 2026-07-28 request) and is sent again with the answer, which is recorded as its own
    /// call. Neither an error nor a denial ([`crate::ErrorKind::InputRequired`]).
    InputRequired,
    /// Not a call's end but its intent: the handler of a tool that is not `read_only` is
    /// about to run. The call's own record (same session, call id and `time_us`) follows; a `started`
    /// record with none after it means the process stopped while the call ran, so whether
    /// it acted is unknown. Written and committed before the handler runs; counted nowhere
    /// as a call.
    Started,
}

impl Outcome {
    /// The wire name: `ok`, `recoverable_error`, `fatal_error`, `input_required` or
    /// `started`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::RecoverableError => "recoverable_error",
            Outcome::FatalError => "fatal_error",
            Outcome::InputRequired => "input_required",
            Outcome::Started => "started",
        }
    }
}

/// The approver's answer, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Approved by the approver (with the scope in [`AuditRecord::scope`]).
    Approved,
    /// Approved without asking, by the standing grant in [`AuditRecord::grant`].
    Granted,
    /// Rejected (fatal).
    Rejected,
    /// Rejected with feedback for the model.
    Corrected,
    /// Not answered yet: the question went to the client, whose answer comes with the call
    /// sent again (an MCP 2026-07-28 input-required result; [`ApprovalAnswer::Pending`]).
    /// The retry records the answer; this round counts neither as asked nor as approved, so
    /// one question is counted once.
    ///
    /// [`ApprovalAnswer::Pending`]: crate::ApprovalAnswer::Pending
    Pending,
}

impl Approval {
    /// Whether the approver was asked: every answer but a standing grant's and a pending
    /// question's, whose answer is counted with the retry (counted in
    /// `toolgate_tool_approvals_asked_total` and `toolgate stats`).
    pub const fn was_asked(self) -> bool {
        match self {
            Approval::Approved | Approval::Rejected | Approval::Corrected => true,
            Approval::Granted | Approval::Pending => false,
        }
    }

    /// Whether the approver, asked, let the call run (counted in
    /// `toolgate_tool_approvals_granted_total`); a standing grant's call is not counted.
    pub const fn approved(self) -> bool {
        match self {
            Approval::Approved => true,
            Approval::Granted | Approval::Rejected | Approval::Corrected | Approval::Pending => {
                false
            }
        }
    }
}

/// One record per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the call was dispatched, in microseconds since the Unix epoch. No two calls of a
    /// session dispatched by one process have the same time (a call made in the same
    /// microsecond as the one before gets the next), so an intent record
    /// ([`Outcome::Started`]) and its call's own record are the two with the same session,
    /// call id and time, even where call ids repeat.
    pub time_us: u64,
    /// Session id.
    pub session: Arc<str>,
    /// Agent profile.
    pub profile: Arc<str>,
    /// Whom the session acted for (an OAuth access token's issuer and subject), when a front
    /// end verified it ([`crate::principal`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<crate::Principal>,
    /// Tool name as called.
    pub tool: Arc<str>,
    /// Version of the tool that ran, when it was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Arc<str>>,
    /// Call id.
    pub call_id: CallId,
    /// The authorization decision, when the call got that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The rule that made the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Cow<'static, str>>,
    /// The approver's answer, when one was asked, or `granted` when a grant answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// The grant behind the approval: the one that approved the call (`approval: granted`),
    /// or the one this call's scoped answer created (`approval: approved`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<i64>,
    /// The scope of the approval: `once` for a plain approval, or the grant's scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<GrantScope>,
    /// The arguments; the writer keeps them as [`crate::redact::for_audit`] gives them
    /// (secrets redacted, long strings and arguments cut to a head and a tail).
    pub arguments: Value,
    /// Size of the rendered result in bytes.
    pub result_bytes: usize,
    /// The truncation handle, when the result was truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
    /// How the call ended.
    pub outcome: Outcome,
    /// The error kind, on errors (none for the outcome `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// The error reason, on errors that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_reason: Option<String>,
    /// Handler attempts (more than 1 after retries; 0 when the handler did not run, a replay
    /// included).
    pub attempts: u32,
    /// The idempotency key of a side-effecting call under the ledger: the caller's, or the
    /// one derived for it (`tg-...`). The writers keep it as
    /// [`crate::redact::idempotency_key`] gives it (a key that is a token is redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<Arc<str>>,
    /// What the idempotency ledger did with the call: `executed`, `replayed` (the recorded
    /// result came back, the tool did not run), `reconciled_done`, `reconciled_not_done`, or
    /// an operator's `resolved_done` / `resolved_not_done` (see [`crate::ledger`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<crate::ledger::LedgerEvent>,
    /// Wall time from dispatch to result, in microseconds.
    pub duration_us: u64,
}

impl AuditRecord {
    /// The record of something done outside the pipeline that the audit keeps beside its
    /// calls (an operator's command, a request an upstream sent to a client): `tool` names
    /// it, `arguments` say what it was; `outcome` [`Outcome::Ok`], no decision, approval,
    /// grant or ledger event, no result, 0 attempts, 0 µs. Set the rest with struct update
    /// syntax (`AuditRecord { outcome, ..AuditRecord::event(...) }`).
    pub fn event(
        time_us: u64,
        session: Arc<str>,
        profile: Arc<str>,
        tool: Arc<str>,
        call_id: CallId,
        arguments: Value,
    ) -> AuditRecord {
        AuditRecord {
            time_us,
            session,
            profile,
            principal: None,
            tool,
            version: None,
            call_id,
            decision: None,
            rule: None,
            approval: None,
            grant: None,
            scope: None,
            arguments,
            result_bytes: 0,
            truncated: None,
            outcome: Outcome::Ok,
            error_kind: None,
            error_reason: None,
            attempts: 0,
            idempotency_key: None,
            ledger: None,
            duration_us: 0,
        }
    }
}

/// Microseconds since the Unix epoch.
pub fn now_us(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Where audit records go. `record` must not block on I/O: the pipeline calls it on the
/// caller's path.
pub trait AuditSink: Send + Sync {
    /// Takes one record.
    fn record(&self, record: AuditRecord);

    /// Takes one record and returns an [`AuditCommit`] that resolves once the record is
    /// durable: committed where a crash of this process cannot take it back (what a power
    /// cut can take depends on the storage's own settings), or [`AuditError`] when the sink
    /// gives up on it. Records keep their order with those taken by [`AuditSink::record`].
    ///
    /// The pipeline uses it for the intent and the record of every call of a tool that is
    /// not `read_only`, and awaits it before the handler runs and before the result is
    /// returned. The default takes the record and calls [`AuditSink::flush`], which blocks
    /// the calling thread: a sink whose flush waits on I/O should answer asynchronously
    /// instead (with [`CommitTracker`]), so that waiting calls share commits.
    fn record_durable(&self, record: AuditRecord) -> AuditCommit {
        self.record(record);
        self.flush();
        AuditCommit::ready(Ok(()))
    }

    /// Writes every record taken so far to durable storage and returns when done.
    fn flush(&self) {}

    /// Whether the sink drops every record unread ([`NullAuditSink`]): the pipeline then
    /// builds no intent records, which would only be thrown away.
    fn discards(&self) -> bool {
        false
    }
}

/// Discards every record.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullAuditSink;

impl AuditSink for NullAuditSink {
    fn record(&self, _record: AuditRecord) {}

    fn record_durable(&self, _record: AuditRecord) -> AuditCommit {
        AuditCommit::ready(Ok(()))
    }

    fn discards(&self) -> bool {
        true
    }
}

/// Keeps records in memory (tests, embedding).
#[derive(Debug, Default)]
pub struct MemoryAuditSink {
    records: Mutex<Vec<AuditRecord>>,
}

impl MemoryAuditSink {
    /// The records so far, redacted as a writer would write them.
    pub fn records(&self) -> Vec<AuditRecord> {
        self.records.lock().clone()
    }

    /// The calls' own records so far, without the intent records ([`Outcome::Started`]).
    pub fn calls(&self) -> Vec<AuditRecord> {
        self.records
            .lock()
            .iter()
            .filter(|r| r.outcome != Outcome::Started)
            .cloned()
            .collect()
    }
}

impl AuditSink for MemoryAuditSink {
    fn record(&self, mut record: AuditRecord) {
        redact_record(&mut record);
        self.records.lock().push(record);
    }
}

/// What a writer redacts of a record: its arguments ([`crate::redact::for_audit`]) and its
/// idempotency key ([`crate::redact::idempotency_key`]).
fn redact_record(r: &mut AuditRecord) {
    r.arguments = crate::redact::for_audit(&r.arguments);
    if let Some(k) = &r.idempotency_key {
        if let Cow::Owned(redacted) = crate::redact::idempotency_key(k) {
            r.idempotency_key = Some(redacted.into());
        }
    }
}

enum Msg {
    /// A record, and its durable ticket (0 for none: [`AuditSink::record`]).
    Record(Box<AuditRecord>, u64),
    Flush(SyncSender<()>),
}

/// Appends one JSON line per record to a file, from a background thread that batches writes
/// (a flush to the OS after each batch the channel had ready) and redacts secrets.
///
/// The channel holds up to 65,536 records; when the writer falls that far behind, `record`
/// waits, so memory stays bounded. A durable record ([`AuditSink::record_durable`]) is settled
/// once the batch holding it is written to the file (handed to the OS: a crash of the process
/// cannot take it back, a power cut can); every record waiting then shares that write.
/// Dropping the sink writes what it holds and joins the thread.
pub struct JsonlAuditSink {
    tx: Option<SyncSender<Msg>>,
    /// The last durable ticket given out; held while sending, so tickets reach the writer
    /// in order.
    tickets: Mutex<u64>,
    tracker: Arc<CommitTracker>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl JsonlAuditSink {
    /// Opens (creating, appending to) `path`, creating its parent directory.
    ///
    /// # Errors
    /// The I/O error of creating the directory or opening the file.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self::from_writer(file))
    }

    /// A sink writing to any writer (a file, a pipe, a buffer).
    pub fn from_writer<W: Write + Send + 'static>(writer: W) -> Self {
        let (tx, rx) = mpsc::sync_channel(65_536);
        let tracker = CommitTracker::new();
        let t = tracker.clone();
        let thread = std::thread::Builder::new()
            .name("toolgate-audit".into())
            .spawn(move || {
                // closes the tracker however the thread ends, a panic included
                let guard = CloseOnDrop(t);
                writer_loop(rx, BufWriter::with_capacity(256 << 10, writer), &guard.0)
            })
            .expect("spawning the audit writer thread");
        JsonlAuditSink {
            tx: Some(tx),
            tickets: Mutex::new(0),
            tracker,
            thread: Some(thread),
        }
    }
}

/// The most records the JSON-lines writer writes before handing them to the OS.
const BATCH: usize = 1024;

fn writer_loop<W: Write>(
    rx: Receiver<Msg>,
    mut out: BufWriter<W>,
    tracker: &CommitTracker,
) -> io::Result<()> {
    let mut failed: Option<AuditError> = None;
    loop {
        let msg = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                out.flush()?;
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut next = Some(msg);
        let mut ticket = 0;
        let mut batch = 0;
        while let Some(msg) = next.take() {
            match msg {
                Msg::Record(mut r, t) => {
                    ticket = ticket.max(t);
                    redact_record(&mut r);
                    if failed.is_none() {
                        let res = serde_json::to_writer(&mut out, &*r)
                            .map_err(io::Error::from)
                            .and_then(|()| out.write_all(b"\n"));
                        if let Err(e) = res {
                            tracing::error!(error = %e, "audit writer failed; records are being dropped");
                            failed = Some(AuditError::new(e.to_string()));
                        }
                    }
                }
                Msg::Flush(done) => {
                    let _ = out.flush();
                    let _ = done.send(());
                }
            }
            // a batch ends when the channel is empty or at BATCH records, so a steady stream
            // never keeps a durable record waiting for the end of its batch
            batch += 1;
            if batch < BATCH {
                next = rx.try_recv().ok();
            }
        }
        let flushed = out.flush();
        if let Err(e) = &flushed {
            failed.get_or_insert_with(|| AuditError::new(e.to_string()));
        }
        tracker.settle(ticket, failed.as_ref());
        flushed?;
    }
    out.flush()?;
    match failed {
        Some(e) => Err(io::Error::other(e)),
        None => Ok(()),
    }
}

impl JsonlAuditSink {
    /// Sends `msg`, waiting for room when the channel is full.
    fn send(tx: &SyncSender<Msg>, msg: Msg) -> bool {
        match tx.try_send(msg) {
            Ok(()) => true,
            Err(TrySendError::Full(m)) => tx.send(m).is_ok(),
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

impl AuditSink for JsonlAuditSink {
    fn record(&self, record: AuditRecord) {
        if let Some(tx) = &self.tx {
            if !Self::send(tx, Msg::Record(Box::new(record), 0)) {
                tracing::error!("audit writer is gone; a record was dropped");
            }
        }
    }

    fn record_durable(&self, record: AuditRecord) -> AuditCommit {
        let Some(tx) = &self.tx else {
            return AuditCommit::ready(Err(AuditError::new("the audit writer stopped")));
        };
        let mut last = self.tickets.lock();
        let ticket = *last + 1;
        if !Self::send(tx, Msg::Record(Box::new(record), ticket)) {
            tracing::error!("audit writer is gone; a record was dropped");
            return AuditCommit::ready(Err(AuditError::new("the audit writer stopped")));
        }
        *last = ticket;
        drop(last);
        self.tracker.wait(ticket)
    }

    fn flush(&self) {
        if let Some(tx) = &self.tx {
            let (done_tx, done_rx) = mpsc::sync_channel(1);
            if tx.send(Msg::Flush(done_tx)).is_ok() {
                let _ = done_rx.recv();
            }
        }
    }
}

impl Drop for JsonlAuditSink {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "audit writer failed"),
                Err(_) => tracing::error!("audit writer panicked"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u32) -> AuditRecord {
        AuditRecord {
            time_us: 1,
            session: "s".into(),
            profile: "default".into(),
            principal: None,
            tool: "t".into(),
            version: None,
            call_id: format!("c{i}").into(),
            decision: Some(Decision::Allow),
            rule: Some("default.allow".into()),
            approval: None,
            grant: None,
            scope: None,
            arguments: serde_json::json!({"password": "hunter2", "path": "a"}),
            result_bytes: 3,
            truncated: None,
            outcome: Outcome::Ok,
            error_kind: None,
            error_reason: None,
            attempts: 1,
            idempotency_key: None,
            ledger: None,
            duration_us: 5,
        }
    }

    #[test]
    fn jsonl_sink_writes_every_record_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/audit.jsonl");
        {
            let sink = JsonlAuditSink::open(&path).unwrap();
            for i in 0..1000 {
                sink.record(rec(i));
            }
            sink.flush();
            let n = std::fs::read_to_string(&path).unwrap().lines().count();
            assert_eq!(n, 1000);
            sink.record(rec(1000));
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<AuditRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1001);
        assert_eq!(lines[1000].call_id.as_str(), "c1000");
        assert!(!text.contains("hunter2"));
    }

    #[test]
    fn a_secret_idempotency_key_is_redacted_by_both_writers() {
        let keyed = |i, k: &str| AuditRecord {
            idempotency_key: Some(k.into()),
            ..rec(i)
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let memory = MemoryAuditSink::default();
        {
            let sink = JsonlAuditSink::open(&path).unwrap();
            for sink in [&sink as &dyn AuditSink, &memory] {
                sink.record(keyed(1, "ghp_CANARYH1abcdefghijklmnop0123456789"));
                sink.record(keyed(2, "K-0001"));
            }
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("CANARYH1"), "{text}");
        let from_file: Vec<AuditRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for records in [from_file, memory.records()] {
            let keys: Vec<_> = records
                .iter()
                .map(|r| r.idempotency_key.as_deref().unwrap_or_default().to_string())
                .collect();
            assert_eq!(keys, [crate::redact::REDACTED, "K-0001"]);
        }
    }
}
