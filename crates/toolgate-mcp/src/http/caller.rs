//! [`Caller`]: who sent a request, as the guard established it; what the limits per caller
//! (live MCP sessions) count by, what a session is bound to (a request of another caller
//! naming it gets `404`), what [`crate::caller::CallerKey`] (the session of a stateless
//! request's caller) is keyed by, and, for an OAuth principal, what the session acts for.

use super::auth::Identity;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The caller of an HTTP request, put in the request's extensions by the guard once the
/// request passed it.
///
/// With the static token every request carrying it is the same caller; with an authorization
/// server (`[server.auth]`) each verified identity is a caller of its own. Two identities are
/// the same caller when their principal (issuer and subject) and their kept claims are equal:
/// a token whose claims changed (a group removed) is a new caller, whose session is built
/// from the new claims. The scopes are not compared: they shape no session (each request's
/// token is checked for the required ones), and a client that stepped up its scopes after a
/// `403 insufficient_scope` (MCP "Scope Challenge Handling") goes on in its session.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Caller {
    /// A request carrying the server's bearer token.
    Token,
    /// A request to a server started without a token (loopback only).
    Anonymous,
    /// A request carrying an access token the resource server verified.
    Principal(Arc<Identity>),
}

impl PartialEq for Caller {
    fn eq(&self, other: &Caller) -> bool {
        match (self, other) {
            (Caller::Token, Caller::Token) | (Caller::Anonymous, Caller::Anonymous) => true,
            (Caller::Principal(a), Caller::Principal(b)) => {
                a.principal == b.principal && a.claims == b.claims
            }
            _ => false,
        }
    }
}

// JSON values compared for equality hold no NaN, so equality is an equivalence
impl Eq for Caller {}

impl Hash for Caller {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        if let Caller::Principal(id) = self {
            id.principal.hash(state);
        }
    }
}

impl Caller {
    /// The verified identity, for a request with an access token.
    pub fn identity(&self) -> Option<&Identity> {
        match self {
            Caller::Principal(id) => Some(id),
            _ => None,
        }
    }
}

tokio::task_local! {
    /// The caller of the request being served, for what rmcp builds while serving it (the
    /// handler of a new session: [`crate::McpServer::connection`]).
    pub(crate) static REQUEST_CALLER: Caller;
}

/// The caller of the HTTP request being served on this task, if any.
pub(crate) fn caller_of_request() -> Option<Caller> {
    REQUEST_CALLER.try_with(Caller::clone).ok()
}
