//! [`Sessions`]: rmcp's in-memory session manager with two bounds in front of it.
//!
//! - per session, the ids in flight ([`InFlightIds`]): a request whose id is still in flight
//!   in its session is answered with a JSON-RPC error on its own response stream, before the
//!   session's worker sees it (the worker routes answers by id, so a duplicate would steal the
//!   first request's stream); the session's transport is an [`IdGate`] over the same table
//! - per caller ([`Caller`]), the live sessions: an `initialize` reserves a [`SessionSlot`]
//!   before rmcp creates the session ([`Sessions::reserve`]), the session keeps it
//!   ([`Sessions::bind`]) until it ends, however it ends (`DELETE`, idle expiry, shutdown:
//!   rmcp closes every ended session through [`SessionManager::close_session`])
//! - per session, the server requests related to a client request ([`Related`]): their
//!   `notifications/cancelled` goes out on that request's response stream, which rmcp's
//!   worker does not do; the session's transport is a [`RelatedTransport`] under the
//!   [`IdGate`], and each request's response stream yields its side channel first
//! - a resumed stream (`Last-Event-ID`) leaves out the event the client names, which rmcp
//!   replays: the client already has it (a server request in it would be answered twice)

use super::caller::Caller;
use super::related::{Related, RelatedTransport};
use crate::jsonrpc::{IdGate, InFlightIds};
use futures::{Stream, StreamExt};
use parking_lot::Mutex;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::WorkerTransport;
use std::collections::HashMap;
use std::sync::Arc;

/// The sessions of one HTTP server; see the module documentation.
#[derive(Debug)]
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    table: Mutex<HashMap<SessionId, Entry>>,
    max_in_flight: usize,
    slots: Arc<Slots>,
}

#[derive(Debug)]
struct Entry {
    ids: Arc<InFlightIds>,
    related: Arc<Related>,
    slot: Option<SessionSlot>,
}

/// Live sessions per caller.
#[derive(Debug)]
struct Slots {
    held: Mutex<HashMap<Caller, usize>>,
    max: usize,
}

/// One live (or opening) session of a caller; dropping it frees the place.
#[derive(Debug)]
pub(crate) struct SessionSlot {
    slots: Arc<Slots>,
    caller: Caller,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock();
        if let Some(n) = held.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.caller);
            }
        }
    }
}

impl Sessions {
    /// Sessions with at most `max_in_flight` requests in flight each and at most
    /// `max_per_caller` live sessions per caller.
    pub(crate) fn new(max_in_flight: usize, max_per_caller: usize) -> Self {
        Sessions {
            inner: LocalSessionManager::default(),
            table: Mutex::new(HashMap::new()),
            max_in_flight,
            slots: Arc::new(Slots {
                held: Mutex::new(HashMap::new()),
                max: max_per_caller.max(1),
            }),
        }
    }

    /// A place for one more session of `caller`.
    ///
    /// # Errors
    /// The cap, when `caller` holds that many sessions.
    pub(crate) fn reserve(&self, caller: Caller) -> Result<SessionSlot, usize> {
        let mut held = self.slots.held.lock();
        let n = held.entry(caller.clone()).or_insert(0);
        if *n >= self.slots.max {
            return Err(self.slots.max);
        }
        *n += 1;
        Ok(SessionSlot {
            slots: self.slots.clone(),
            caller,
        })
    }

    /// Hands `slot` to the session `id` just created, for its life (dropped at once when the
    /// session already ended).
    pub(crate) fn bind(&self, id: &str, slot: SessionSlot) {
        if let Some(entry) = self.table.lock().get_mut(id) {
            entry.slot = Some(slot);
        }
    }

    /// Whether `caller` may use the session `id`: it opened it, or the session is unknown
    /// here (rmcp answers that).
    pub(crate) fn owned_by(&self, id: &str, caller: Option<&Caller>) -> bool {
        match self.table.lock().get(id).and_then(|e| e.slot.as_ref()) {
            Some(slot) => Some(&slot.caller) == caller,
            None => true,
        }
    }

    /// Whether `id` names a live session.
    pub(crate) fn exists(&self, id: &str) -> bool {
        self.table.lock().contains_key(id)
    }

    /// Live sessions now.
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.table.lock().len()
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = IdGate<RelatedTransport<WorkerTransport<LocalSessionWorker>>>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        let ids = Arc::new(InFlightIds::new(self.max_in_flight));
        let related = Arc::new(Related::default());
        self.table.lock().insert(
            id.clone(),
            Entry {
                ids: ids.clone(),
                related: related.clone(),
                slot: None,
            },
        );
        let transport = RelatedTransport::new(transport, related);
        Ok((id, IdGate::new(transport, ids)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // frees the caller's place
        self.table.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let mut reserved = None;
        let mut side = None;
        if let JsonRpcMessage::Request(request) = &message {
            let entry = (self.table.lock().get(id)).map(|e| (e.ids.clone(), e.related.clone()));
            if let Some((ids, related)) = entry {
                if let Err(refused) = ids.reserve(&request.id) {
                    let refusal = refused.refusal(&request.id);
                    tracing::warn!(id = %request.id, "{}", refusal.message);
                    let error = ErrorData::new(refusal.code, refusal.message, None);
                    let answer =
                        ServerSseMessage::from_message(JsonRpcMessage::error(error, refusal.id));
                    return Ok(futures::stream::iter(Some(answer)).left_stream());
                }
                reserved = Some((ids, request.id.clone()));
                // before the worker sees the request, so nothing related to it comes earlier
                side = Some(related.open(&request.id));
            }
        }
        match self.inner.create_stream(id, message).await {
            Ok(stream) => Ok(match side {
                Some(side) => side.around(stream).left_stream().right_stream(),
                None => stream.right_stream().right_stream(),
            }),
            Err(e) => {
                if let Some((ids, request)) = reserved {
                    ids.unreserve(&request);
                }
                Err(e)
            }
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // rmcp (3.11) replays a request's stream from the event the client names as the last
        // it got, that one included: a client resuming after its stream closed (a cancelled
        // call's) would get a request of the server's again and answer it twice
        let stream = self.inner.resume(id, last_event_id.clone()).await?;
        Ok(stream.filter(move |m| {
            std::future::ready(m.event_id.as_deref() != Some(last_event_id.as_str()))
        }))
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_holds_at_most_its_cap_and_an_ended_session_frees_its_place() {
        let s = Sessions::new(8, 2);
        let a = s.reserve(Caller::Token).unwrap();
        let b = s.reserve(Caller::Token).unwrap();
        assert_eq!(s.reserve(Caller::Token).unwrap_err(), 2);
        // another caller has places of its own
        let c = s.reserve(Caller::Anonymous).unwrap();
        // a slot bound to a session that no longer exists is freed at once
        s.bind("gone", a);
        assert!(s.reserve(Caller::Token).is_ok());
        drop((b, c));
        assert_eq!(s.live(), 0);
    }
}
