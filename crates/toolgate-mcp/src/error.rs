//! Errors for the host that starts a server (never sent to a client).

use std::net::SocketAddr;

/// Why a server could not be built or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The registry or profile is invalid (an unknown profile, a tool that does not register).
    #[error(transparent)]
    Registration(#[from] toolgate_core::RegistrationError),
    /// The HTTP address is not loopback and no bearer token was configured.
    #[error(
        "refusing to serve on {addr} without a bearer token: the address is reachable from other \
         machines; pass --token TOKEN or set TOOLGATE_TOKEN (or bind 127.0.0.1)"
    )]
    TokenRequired {
        /// The address that was asked for.
        addr: SocketAddr,
    },
    /// An OAuth resource server (`[server.auth]`) asked to listen on an address other
    /// machines reach: access tokens would travel in clear text.
    #[error(
        "refusing to serve OAuth on {addr} without HTTPS in front: bind a loopback address \
         (127.0.0.1) behind a reverse proxy that terminates TLS, and set [server.auth] resource \
         to the proxy's https URL"
    )]
    HttpsRequired {
        /// The address that was asked for.
        addr: SocketAddr,
    },
    /// The configuration is inconsistent.
    #[error("invalid server configuration: {0}")]
    Config(String),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP session could not start (stdio: the client did not initialize).
    #[error("the MCP session did not start: {0}")]
    Initialize(String),
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
