//! GET and POST of small JSON documents from the authorization server (metadata, JWKS,
//! introspection), with a timeout and a byte cap, never following a redirect.

use serde_json::Value;
use std::time::Duration;

/// How long one request to the authorization server may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest document read, in bytes.
pub(crate) const MAX_BYTES: usize = 1 << 20;

/// The client for the authorization server: rustls, no redirects, [`TIMEOUT`].
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("toolgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

/// The JSON object `request` answers with, or why not (for the log).
pub(crate) async fn json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    let mut response = request
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("answered HTTP {status}"));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BYTES as u64)
    {
        return Err(format!("the document is over {MAX_BYTES} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading the answer failed: {e}"))?
    {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(format!("the document is over {MAX_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the answer is not a JSON object".into()),
        Err(e) => Err(format!("the answer is not JSON: {e}")),
    }
}

/// An authorization server's endpoint for tests: `app` served on 127.0.0.1, its address.
#[cfg(test)]
pub(crate) async fn test_server(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}
