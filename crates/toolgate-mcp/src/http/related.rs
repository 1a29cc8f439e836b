//! [`Related`]: the `notifications/cancelled` of a server request that rode a client
//! request's SSE stream goes out on that stream too.
//!
//! rmcp (3.11) sends a server request marked with an [`OriginatingRequestId`] on the SSE
//! stream of the client's `POST` it relates to (specification 2025-11-25 "Transports",
//! streamable HTTP; SEP-2260), but routes a server's `notifications/cancelled` by its
//! `requestId` among the *client's* request ids, so the cancellation of such a request goes to
//! the standalone `GET` stream (or, by a clash of numbers, to another request's stream): a
//! client that reads only its `POST`s' streams is never told. Notifications carry no marker
//! rmcp reads. So the session's transport ([`RelatedTransport`], between rmcp's service and
//! its session worker) keeps which server request relates to which client request, and each
//! `POST`'s SSE stream has a side channel here ([`Related::open`]) that its response stream
//! yields first:
//!
//! - the cancellation of a server request whose client request's stream is open goes on that
//!   stream's side channel instead of to rmcp's worker
//! - when the answer of a client request goes out while a server request related to it is
//!   unanswered, the cancellation of that request goes out first on the same stream (a
//!   request made for a call lasts at most as long as the call: [`crate::request::ClientRequester`]),
//!   and the server's own cancellation of it, when it comes, is dropped
//! - a client's answer of a server request forgets it
//!
//! What the session keeps is bounded by the requests in flight (the client's: their streams;
//! the server's: those unanswered), and the set of requests already told cancelled by
//! [`MAX_TOLD`].

use futures::Stream;
use parking_lot::Mutex;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, GetExtensions, JsonRpcMessage,
    JsonRpcNotification, JsonRpcVersion2_0, RequestId, ServerNotification,
};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// The most server requests remembered as told cancelled at their client request's answer
/// (whose own cancellation is then dropped); past it the set starts again, and at worst a
/// client is told twice.
pub(crate) const MAX_TOLD: usize = 256;

/// Messages a side channel holds before its stream takes them (a cancellation that does not
/// fit goes to rmcp's worker, the standalone stream).
const SIDE_CAPACITY: usize = 16;

/// Why a server request is cancelled at its client request's answer.
const CALL_ENDED: &str = "the call the request was made for ended";

/// One session's client requests with an open response stream and the server requests
/// related to them; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Related {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The side channels of the client requests' open SSE streams, by the client's id.
    open: HashMap<RequestId, mpsc::Sender<ServerSseMessage>>,
    /// The server's unanswered requests sent on an open stream: the client request each
    /// relates to, by the server's id.
    asked: HashMap<RequestId, RequestId>,
    /// The server's requests told cancelled at their client request's answer.
    told: HashSet<RequestId>,
}

impl Related {
    /// Opens the side channel of the client request `id`'s response stream; the stream
    /// [`Side::around`] makes yields what is sent on it, and closes it when dropped.
    pub(crate) fn open(self: &Arc<Self>, id: &RequestId) -> Side {
        let (tx, rx) = mpsc::channel(SIDE_CAPACITY);
        self.state.lock().open.insert(id.clone(), tx.clone());
        Side {
            related: self.clone(),
            id: id.clone(),
            tx,
            rx,
        }
    }

    /// Sends `message` on the side channel of client request `id`; whether it went.
    fn side_send(state: &State, id: &RequestId, message: TxJsonRpcMessage<RoleServer>) -> bool {
        state
            .open
            .get(id)
            .is_some_and(|tx| tx.try_send(ServerSseMessage::from_message(message)).is_ok())
    }

    /// What the session's transport does with `item` before rmcp's worker gets it: `None`
    /// when it went on a side channel (or was already said) instead.
    fn outgoing(&self, item: TxJsonRpcMessage<RoleServer>) -> Option<TxJsonRpcMessage<RoleServer>> {
        let mut state = self.state.lock();
        match &item {
            JsonRpcMessage::Request(r) => {
                let origin = r.request.extensions().get::<OriginatingRequestId>();
                if let Some(OriginatingRequestId(client)) = origin {
                    if state.open.contains_key(client) {
                        state.asked.insert(r.id.clone(), client.clone());
                    }
                }
                Some(item)
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ServerNotification::CancelledNotification(c),
                ..
            }) => {
                let Some(id) = c.params.request_id.as_ref() else {
                    return Some(item);
                };
                if state.told.remove(id) {
                    return None;
                }
                let Some(client) = state.asked.remove(id) else {
                    return Some(item);
                };
                if Self::side_send(&state, &client, item.clone()) {
                    None
                } else {
                    Some(item)
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {
                let answered = match &item {
                    JsonRpcMessage::Response(r) => Some(&r.id),
                    JsonRpcMessage::Error(e) => e.id.as_ref(),
                    _ => None,
                };
                if let Some(client) = answered {
                    Self::cancel_related(&mut state, client);
                }
                Some(item)
            }
            _ => Some(item),
        }
    }

    /// Tells the client, on the stream of its request `client` about to be answered, that
    /// the server's requests related to it and still unanswered are cancelled.
    fn cancel_related(state: &mut State, client: &RequestId) {
        if state.asked.is_empty() || !state.open.contains_key(client) {
            return;
        }
        let ended: Vec<RequestId> = state
            .asked
            .iter()
            .filter(|(_, c)| *c == client)
            .map(|(server, _)| server.clone())
            .collect();
        for server in ended {
            state.asked.remove(&server);
            let note = cancelled(server.clone());
            if Self::side_send(state, client, note) {
                if state.told.len() >= MAX_TOLD {
                    state.told.clear();
                }
                state.told.insert(server);
            }
        }
    }

    /// Forgets the server request `id`: the client answered it.
    fn answered(&self, id: &RequestId) {
        let mut state = self.state.lock();
        state.asked.remove(id);
        state.told.remove(id);
    }
}

/// `notifications/cancelled` for the server request `id`.
fn cancelled(id: RequestId) -> TxJsonRpcMessage<RoleServer> {
    let params = CancelledNotificationParam::new(Some(id), Some(CALL_ENDED.into()));
    JsonRpcMessage::Notification(JsonRpcNotification {
        jsonrpc: JsonRpcVersion2_0,
        notification: ServerNotification::CancelledNotification(CancelledNotification::new(params)),
    })
}

/// The side channel of one client request's response stream; closed (forgotten by the
/// session) when dropped.
#[derive(Debug)]
pub(crate) struct Side {
    related: Arc<Related>,
    id: RequestId,
    tx: mpsc::Sender<ServerSseMessage>,
    rx: mpsc::Receiver<ServerSseMessage>,
}

impl Side {
    /// `stream` (rmcp's response stream of the request) yielding what comes on the side
    /// channel first; it ends when `stream` does.
    pub(crate) fn around<S>(self, stream: S) -> WithSide<S> {
        WithSide { side: self, stream }
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        let mut state = self.related.state.lock();
        // the id may already be a newer request's, with a channel of its own
        if state
            .open
            .get(&self.id)
            .is_some_and(|tx| tx.same_channel(&self.tx))
        {
            state.open.remove(&self.id);
            let id = &self.id;
            state.asked.retain(|_, client| client != id);
        }
    }
}

/// A response stream with its side channel; see [`Side::around`].
#[derive(Debug)]
pub(crate) struct WithSide<S> {
    side: Side,
    stream: S,
}

impl<S: Stream<Item = ServerSseMessage> + Unpin> Stream for WithSide<S> {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // what came on the side channel was sent before what rmcp's stream holds now (the
        // cancellations before the answer that ends the stream), so it goes first
        if let Poll::Ready(Some(message)) = self.side.rx.poll_recv(cx) {
            return Poll::Ready(Some(message));
        }
        Pin::new(&mut self.stream).poll_next(cx)
    }
}

/// A session's transport that sends the cancellation of a server request on the stream of
/// the client request it relates to; see the module documentation.
#[derive(Debug)]
pub(crate) struct RelatedTransport<T> {
    inner: T,
    related: Arc<Related>,
}

impl<T> RelatedTransport<T> {
    /// Wraps `inner` (the session's worker), with the session's [`Related`].
    pub(crate) fn new(inner: T, related: Arc<Related>) -> Self {
        RelatedTransport { inner, related }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for RelatedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let send = self
            .related
            .outgoing(item)
            .map(|item| self.inner.send(item));
        async move {
            match send {
                Some(send) => send.await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.inner.receive().await?;
        match &message {
            JsonRpcMessage::Response(r) => self.related.answered(&r.id),
            JsonRpcMessage::Error(e) => {
                if let Some(id) = &e.id {
                    self.related.answered(id);
                }
            }
            _ => {}
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use rmcp::model::{
        EmptyResult, JsonRpcRequest, JsonRpcResponse, NumberOrString, PingRequest, ServerRequest,
        ServerResult,
    };

    fn id(n: i64) -> RequestId {
        NumberOrString::Number(n)
    }

    /// A server request `server` marked as made for the client's request `client`.
    fn asked(server: i64, client: i64) -> TxJsonRpcMessage<RoleServer> {
        let mut request = ServerRequest::PingRequest(PingRequest::default());
        request
            .extensions_mut()
            .insert(OriginatingRequestId(id(client)));
        JsonRpcMessage::Request(JsonRpcRequest::new(id(server), request))
    }

    fn answer(client: i64) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: id(client),
            result: ServerResult::EmptyResult(EmptyResult {}),
        })
    }

    /// The request id a message on a side channel cancels.
    fn cancels(message: &ServerSseMessage) -> Option<RequestId> {
        match message.message.as_deref()? {
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ServerNotification::CancelledNotification(c),
                ..
            }) => c.params.request_id.clone(),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_cancellation_rides_its_requests_stream_before_the_answer_and_once() {
        let related = Arc::new(Related::default());
        let side = related.open(&id(7));
        // rmcp's stream of the request
        let (mut rmcp_tx, rmcp_rx) = futures::channel::mpsc::channel(4);
        let mut stream = side.around(rmcp_rx);
        // request 0 made for the client's 7, request 1 for a request without a stream
        assert!(related.outgoing(asked(0, 7)).is_some());
        assert!(related.outgoing(asked(1, 9)).is_some());
        // the server cancels 0: on 7's stream, not to rmcp
        assert!(related.outgoing(cancelled(id(0))).is_none());
        // 1 relates to no open stream: rmcp routes its cancellation
        assert!(related.outgoing(cancelled(id(1))).is_some());
        // request 2 is still unanswered when 7 is answered: its cancellation goes first
        assert!(related.outgoing(asked(2, 7)).is_some());
        let done = related.outgoing(answer(7)).unwrap();
        futures::SinkExt::send(&mut rmcp_tx, ServerSseMessage::from_message(done))
            .await
            .unwrap();
        drop(rmcp_tx);
        let seen: Vec<ServerSseMessage> = (&mut stream).collect().await;
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(cancels(&seen[0]), Some(id(0)));
        assert_eq!(cancels(&seen[1]), Some(id(2)));
        assert!(matches!(
            seen[2].message.as_deref(),
            Some(JsonRpcMessage::Response(_))
        ));
        // the server's own cancellation of 2, coming later, is not said twice
        assert!(related.outgoing(cancelled(id(2))).is_none());
        // a closed stream forgets its requests: a later cancellation goes to rmcp
        drop(stream);
        assert!(related.state.lock().open.is_empty());
        assert!(related.outgoing(asked(3, 7)).is_some());
        assert!(related.outgoing(cancelled(id(3))).is_some());
    }

    #[tokio::test]
    async fn an_answered_request_is_forgotten_and_a_reused_id_keeps_its_newer_stream() {
        let related = Arc::new(Related::default());
        let first = related.open(&id(1));
        assert!(related.outgoing(asked(0, 1)).is_some());
        related.answered(&id(0));
        // answered by the client: its cancellation (sent late) goes where rmcp sends it, and
        // the answer of 1 says nothing of it
        assert!(related.outgoing(cancelled(id(0))).is_some());
        assert!(related.outgoing(answer(1)).is_some());
        // id 1 reused by a newer request before the first stream is dropped
        let second = related.open(&id(1));
        drop(first);
        assert!(related.state.lock().open.contains_key(&id(1)));
        drop(second);
        assert!(related.state.lock().open.is_empty());
    }

    #[tokio::test]
    async fn a_full_side_channel_leaves_the_cancellation_to_rmcp() {
        let related = Arc::new(Related::default());
        let _side = related.open(&id(1));
        for n in 0..SIDE_CAPACITY as i64 {
            assert!(related.outgoing(asked(n, 1)).is_some());
            assert!(related.outgoing(cancelled(id(n))).is_none());
        }
        let n = SIDE_CAPACITY as i64;
        assert!(related.outgoing(asked(n, 1)).is_some());
        assert!(related.outgoing(cancelled(id(n))).is_some());
    }
}
