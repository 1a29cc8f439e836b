//! JSON-RPC 2.0 framing both transports share, in front of rmcp: every request that arrives
//! gets exactly one answer, and the right one.
//!
//! 1. [`check`] reads each message once, shallowly, and refuses what rmcp would drop or
//!    misread (broken JSON, batches, bad or oversized ids, members twice, nesting past
//!    [`MAX_DEPTH`], a wrong `jsonrpc`, a badly typed `tools/call`) with the JSON-RPC error
//!    it deserves ([`Refusal`]), carrying the request's id when it could be read
//! 2. [`IdScan`] finds the id of a message too large to keep, so its refusal can carry it
//! 3. [`IdGate`] admits a request only when no request with its id is in flight in the
//!    session ([`InFlightIds`]), and handles cancellation so that an id is free only once its
//!    call has ended
//!
//! The stdio transport ([`crate::stdio`]) runs all three; over HTTP the body middleware runs
//! [`check`] and the session manager runs [`InFlightIds`] before rmcp's session worker sees
//! a request ([`crate::http`]).

mod frame;
mod gate;
mod id_scan;
mod ids;
mod refusal;

pub use frame::{check, Frame, Method, MAX_DEPTH, MAX_ID_BYTES, MAX_METHOD_BYTES};
pub use gate::IdGate;
pub use id_scan::IdScan;
pub use ids::{Admit, ClientCancel, InFlightIds, Refused, DEFAULT_MAX_IN_FLIGHT};
pub use refusal::{Refusal, SERVER_BUSY};

#[cfg(test)]
mod frame_tests;
