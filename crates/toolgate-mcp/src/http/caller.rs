//! [`Caller`]: who sent a request, as the guard established it; what the limits per caller
//! (live MCP sessions) count by, and what [`crate::caller::CallerKey`] (the session of a
//! stateless request's caller) trusts the credential by.

/// The caller of an HTTP request, put in the request's extensions by the guard once the
/// request passed it.
///
/// Today a server has one credential, so every request carrying it is the same caller; when
/// OAuth access tokens are served, each principal (issuer and subject) will be a caller of its
/// own, and the limits will count per principal without other changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Caller {
    /// A request carrying the server's bearer token.
    Token,
    /// A request to a server started without a token (loopback only).
    Anonymous,
}
