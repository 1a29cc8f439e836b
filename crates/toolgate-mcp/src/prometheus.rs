//! Prometheus text exposition of toolgate's metrics (the names are in
//! [`toolgate_core::telemetry`]), served at `/metrics` by the HTTP server behind the same
//! guard as `/mcp`: the bearer token when one is configured, then `Host` and `Origin`.
//!
//! A Prometheus scrape job sends the token with `authorization: { credentials: TOKEN }` (or
//! `credentials_file`); see the README.

use crate::Error;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusRecorder};
use toolgate_core::telemetry;

pub use metrics_exporter_prometheus::PrometheusHandle;

/// The `Content-Type` of the exposition (text format 0.0.4).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A Prometheus recorder with toolgate's histogram buckets, not installed: install it with
/// [`metrics::set_global_recorder`] or use it with `metrics::with_local_recorder`, and render
/// with the handle ([`PrometheusRecorder::handle`]).
///
/// # Errors
/// [`Error::Config`] if the buckets are refused (they are constants, so never in practice).
pub fn recorder() -> Result<PrometheusRecorder, Error> {
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(telemetry::DURATION.to_string()),
            telemetry::DURATION_BUCKETS,
        )
        .map_err(|e| Error::Config(format!("metrics buckets: {e}")))?;
    Ok(builder.build_recorder())
}

/// Installs a Prometheus recorder as the process's global `metrics` recorder, describes
/// toolgate's metrics to it, and returns the handle that renders them. Call it before the
/// first tool call (see [`toolgate_core::telemetry`]).
///
/// # Errors
/// [`Error::Config`] when a global recorder is already installed (a process has one).
pub fn install() -> Result<PrometheusHandle, Error> {
    let recorder = recorder()?;
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(|_| {
        Error::Config("a metrics recorder is already installed in this process".into())
    })?;
    telemetry::describe();
    Ok(handle)
}

/// The axum handler of `GET /metrics`.
pub(crate) async fn handler(
    axum::extract::State(handle): axum::extract::State<PrometheusHandle>,
) -> axum::response::Response {
    let body = handle.render();
    axum::response::Response::builder()
        .header(http::header::CONTENT_TYPE, CONTENT_TYPE)
        .body(axum::body::Body::from(body))
        .expect("a valid response")
}
