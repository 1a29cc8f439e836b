//! [`IdGate`]: a session's transport that admits a request only when its id is not in flight
//! ([`InFlightIds`]), between the wire (the stdio lines, or an HTTP session's worker) and
//! rmcp's service loop.
//!
//! - a request whose id is in flight, or past the session's cap, is answered with a JSON-RPC
//!   error for its id and never reaches rmcp, so the first request with the id runs and
//!   answers as if the second had not come
//! - an admitted request carries a [`ClientCancel`] token in its extensions
//! - `notifications/cancelled` for a request in flight fires that token instead of reaching
//!   rmcp; the answer the cancelled call still produces is dropped here, after which the id
//!   is free (rmcp's own handling would forget the id at once, while the call still runs)
//! - an answer (a response or an error) takes its id out of flight as it is sent

use super::ids::{Admit, ClientCancel, InFlightIds};
use rmcp::model::{ClientNotification, ErrorData, GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use std::future::Future;
use std::sync::Arc;

/// A transport admitting requests by id; see the module documentation.
#[derive(Debug)]
pub struct IdGate<T> {
    inner: T,
    ids: Arc<InFlightIds>,
}

impl<T> IdGate<T> {
    /// Wraps `inner`, with the session's table of ids in flight.
    pub fn new(inner: T, ids: Arc<InFlightIds>) -> Self {
        IdGate { inner, ids }
    }

    /// The session's ids in flight.
    pub fn ids(&self) -> &Arc<InFlightIds> {
        &self.ids
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for IdGate<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        let send = match answered {
            Some(id) if !self.ids.finish(id) => {
                tracing::debug!(%id, "dropping the answer of a cancelled request");
                None
            }
            _ => Some(self.inner.send(item)),
        };
        async move {
            match send {
                Some(send) => send.await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let mut message = self.inner.receive().await?;
            match &mut message {
                JsonRpcMessage::Request(request) => match self.ids.admit(&request.id) {
                    Ok(Admit::Run(token)) => {
                        request.request.extensions_mut().insert(ClientCancel(token));
                    }
                    Ok(Admit::Drop) => continue,
                    Err(refused) => {
                        let refusal = refused.refusal(&request.id);
                        tracing::warn!(id = %request.id, "{}", refusal.message);
                        let error = ErrorData::new(refusal.code, refusal.message, None);
                        let reply = JsonRpcMessage::error(error, refusal.id);
                        // sent beside the loop, so this stays cancel-safe
                        let send = self.inner.send(reply);
                        tokio::spawn(async move {
                            if let Err(e) = send.await {
                                tracing::debug!(error = %e, "refusal not sent");
                            }
                        });
                        continue;
                    }
                },
                JsonRpcMessage::Notification(n) => {
                    if let ClientNotification::CancelledNotification(c) = &n.notification {
                        if let Some(id) = &c.params.request_id {
                            if self.ids.cancel(id) {
                                tracing::debug!(%id, "cancelled by the client");
                                continue;
                            }
                        }
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
