//! [`InFlightIds`]: the request ids of one MCP session that have not been answered yet.
//!
//! rmcp keys the requests it runs by their id, so a second request with the id of one still
//! running would take its place: the first one's answer would be dropped, or sent for the
//! second. The session's transport ([`super::IdGate`]) therefore admits a request only when
//! its id is not in flight, and refuses it otherwise without touching the first; an id leaves
//! when its answer is sent. At most `max` ids are in flight per session (and each is at most
//! [`super::MAX_ID_BYTES`] long), so what a session keeps is bounded.
//!
//! A request's life: `reserve` (HTTP: before the session's worker sees it, so the worker's
//! routing is never overwritten) or directly `admit` (stdio, and HTTP's `initialize`), then
//! `finish` when its answer is sent. `notifications/cancelled` is taken here ([`cancel`]): it
//! fires the request's own [`ClientCancel`] token and the answer the cancelled call still
//! produces is dropped at `finish` (MCP: no response to a cancelled request), so the id
//! stays in flight until the call has really ended and its id can never be confused with a
//! newer request's.
//!
//! [`cancel`]: InFlightIds::cancel

use super::refusal::{Refusal, SERVER_BUSY};
use parking_lot::Mutex;
use rmcp::model::{ErrorCode, RequestId};
use std::collections::HashMap;
use tokio_util::sync::CancellationToken;

/// The default cap on requests in flight in one session.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// Fired when the client cancels the request (`notifications/cancelled`); put in the
/// request's extensions by [`super::IdGate`], where a handler finds it beside rmcp's own
/// cancellation token (which fires when the session ends).
#[derive(Debug, Clone)]
pub struct ClientCancel(pub CancellationToken);

#[derive(Debug)]
enum State {
    /// Reserved before the session's transport received it.
    Reserved,
    /// Reserved, then cancelled before the transport received it: it will not run.
    ReservedCancelled,
    /// Handed to rmcp.
    Running(CancellationToken),
    /// Cancelled by the client while running: its answer is dropped.
    Cancelled,
}

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A request with this id is in flight.
    Duplicate,
    /// The session has its most requests in flight.
    Full(usize),
}

impl Refused {
    /// The JSON-RPC error for the refused request `id`.
    pub fn refusal(self, id: &RequestId) -> Refusal {
        match self {
            Refused::Duplicate => Refusal::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "request id {id} is in use by a request still in flight in this session; \
                     the earlier request is unaffected: send every request with a new id"
                ),
                Some(id.clone()),
            ),
            Refused::Full(max) => Refusal::new(
                SERVER_BUSY,
                format!(
                    "this session has {max} requests in flight, the most it may have: wait \
                     for answers before sending more"
                ),
                Some(id.clone()),
            ),
        }
    }
}

/// What the transport does with a request it received.
#[derive(Debug)]
pub enum Admit {
    /// Hand it to rmcp, with this client cancellation token.
    Run(CancellationToken),
    /// It was cancelled before it arrived: drop it.
    Drop,
}

/// The ids in flight in one session.
#[derive(Debug)]
pub struct InFlightIds {
    table: Mutex<HashMap<RequestId, State>>,
    max: usize,
}

impl InFlightIds {
    /// A table holding at most `max` ids (at least 1).
    pub fn new(max: usize) -> Self {
        InFlightIds {
            table: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    /// Ids in flight now.
    pub fn len(&self) -> usize {
        self.table.lock().len()
    }

    /// Whether no id is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reserves `id` before the request is routed to the session.
    ///
    /// # Errors
    /// [`Refused::Duplicate`] when it is in flight, [`Refused::Full`] at the cap.
    pub fn reserve(&self, id: &RequestId) -> Result<(), Refused> {
        let mut t = self.table.lock();
        if t.contains_key(id) {
            return Err(Refused::Duplicate);
        }
        if t.len() >= self.max {
            return Err(Refused::Full(self.max));
        }
        t.insert(id.clone(), State::Reserved);
        Ok(())
    }

    /// Undoes [`InFlightIds::reserve`] for a request that could not be routed.
    pub fn unreserve(&self, id: &RequestId) {
        let mut t = self.table.lock();
        if matches!(t.get(id), Some(State::Reserved | State::ReservedCancelled)) {
            t.remove(id);
        }
    }

    /// Admits a request the transport received.
    ///
    /// # Errors
    /// [`Refused::Duplicate`] when a request with this id runs, [`Refused::Full`] at the cap.
    pub fn admit(&self, id: &RequestId) -> Result<Admit, Refused> {
        let mut t = self.table.lock();
        let full = t.len() >= self.max;
        match t.get_mut(id) {
            Some(state @ State::Reserved) => {
                let token = CancellationToken::new();
                *state = State::Running(token.clone());
                Ok(Admit::Run(token))
            }
            Some(State::ReservedCancelled) => {
                t.remove(id);
                Ok(Admit::Drop)
            }
            Some(State::Running(_) | State::Cancelled) => Err(Refused::Duplicate),
            None if full => Err(Refused::Full(self.max)),
            None => {
                let token = CancellationToken::new();
                t.insert(id.clone(), State::Running(token.clone()));
                Ok(Admit::Run(token))
            }
        }
    }

    /// The client cancelled `id`: `true` when it is in flight here (the cancellation is
    /// handled, and its answer will be dropped), `false` when it is unknown.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let mut t = self.table.lock();
        let Some(state) = t.get_mut(id) else {
            return false;
        };
        match state {
            State::Running(token) => {
                token.cancel();
                *state = State::Cancelled;
            }
            State::Reserved => *state = State::ReservedCancelled,
            State::ReservedCancelled | State::Cancelled => {}
        }
        true
    }

    /// The answer to `id` is being sent: `true` to send it, `false` to drop it (the request
    /// was cancelled). The id is no longer in flight either way.
    pub fn finish(&self, id: &RequestId) -> bool {
        !matches!(self.table.lock().remove(id), Some(State::Cancelled))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: i64) -> RequestId {
        RequestId::Number(i)
    }

    #[test]
    fn a_second_request_with_a_running_id_is_refused_and_the_first_answers() {
        let ids = InFlightIds::new(8);
        assert!(matches!(ids.admit(&n(1)), Ok(Admit::Run(_))));
        assert_eq!(ids.admit(&n(1)).unwrap_err(), Refused::Duplicate);
        assert!(ids.finish(&n(1)));
        assert!(ids.is_empty());
        // once answered, the id may come again (the pipeline refuses reused call ids itself)
        assert!(matches!(ids.admit(&n(1)), Ok(Admit::Run(_))));
    }

    #[test]
    fn cancellation_fires_the_token_and_drops_the_answer() {
        let ids = InFlightIds::new(8);
        let Ok(Admit::Run(token)) = ids.admit(&n(1)) else {
            panic!("not admitted")
        };
        assert!(ids.cancel(&n(1)));
        assert!(token.is_cancelled());
        // still in flight until the call ends
        assert_eq!(ids.admit(&n(1)).unwrap_err(), Refused::Duplicate);
        assert!(!ids.finish(&n(1)), "the cancelled call's answer is dropped");
        assert!(ids.is_empty());
        assert!(!ids.cancel(&n(2)), "an unknown id is not ours");
    }

    #[test]
    fn reservations_route_before_admission() {
        let ids = InFlightIds::new(2);
        ids.reserve(&n(1)).unwrap();
        assert_eq!(ids.reserve(&n(1)).unwrap_err(), Refused::Duplicate);
        ids.reserve(&n(2)).unwrap();
        assert_eq!(ids.reserve(&n(3)).unwrap_err(), Refused::Full(2));
        assert!(matches!(ids.admit(&n(1)), Ok(Admit::Run(_))));
        ids.unreserve(&n(1)); // running: not undone
        assert_eq!(ids.len(), 2);
        assert!(ids.cancel(&n(2)));
        assert!(matches!(ids.admit(&n(2)), Ok(Admit::Drop)));
        ids.reserve(&n(3)).unwrap();
        ids.unreserve(&n(3));
        assert_eq!(ids.len(), 1);
    }
}
