//! The accept side: TCP_NODELAY on every accepted connection, and a stop that closes the
//! listening socket while connections already open run on.
//!
//! Without TCP_NODELAY, small SSE answers wait behind Nagle's algorithm for the client's
//! delayed ACK (measured: 44 ms per call instead of 1 ms). axum's own graceful shutdown is
//! not used: it ends SSE response streams that are still waiting for a call's result, and a
//! call in flight must be able to answer within the grace period.

use axum::serve::Listener;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A TCP listener that sets TCP_NODELAY on what it accepts and closes its socket when `stop`
/// is cancelled (new connections are then refused; `accept` stays pending).
pub struct GateListener {
    tcp: Option<TcpListener>,
    addr: SocketAddr,
    stop: CancellationToken,
}

impl GateListener {
    /// Wraps `tcp`.
    ///
    /// # Errors
    /// When the bound address cannot be read.
    pub fn new(tcp: TcpListener, stop: CancellationToken) -> io::Result<Self> {
        let addr = tcp.local_addr()?;
        Ok(GateListener {
            tcp: Some(tcp),
            addr,
            stop,
        })
    }
}

enum Next {
    Stop,
    Accepted(io::Result<(TcpStream, SocketAddr)>),
}

impl Listener for GateListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            let Some(tcp) = &self.tcp else {
                return std::future::pending().await;
            };
            let next = tokio::select! {
                _ = self.stop.cancelled() => Next::Stop,
                r = tcp.accept() => Next::Accepted(r),
            };
            match next {
                Next::Stop => self.tcp = None,
                Next::Accepted(Ok((stream, addr))) => {
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::warn!(error = %e, "could not set TCP_NODELAY");
                    }
                    return (stream, addr);
                }
                Next::Accepted(Err(e)) if is_connection_error(&e) => {}
                Next::Accepted(Err(e)) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::error!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addr)
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_have_nodelay() {
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let mut listener = GateListener::new(tcp, CancellationToken::new()).unwrap();
        let client = tokio::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (stream, _) = listener.accept().await;
        assert!(
            stream.nodelay().unwrap(),
            "TCP_NODELAY is off on an accepted connection"
        );
        drop(client.await.unwrap());
    }

    #[tokio::test]
    async fn stop_closes_the_socket() {
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let stop = CancellationToken::new();
        let mut listener = GateListener::new(tcp, stop.clone()).unwrap();
        stop.cancel();
        let accepted = tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
        assert!(accepted.is_err(), "accept returned after the stop");
        assert!(TcpStream::connect(addr).await.is_err());
    }
}
