//! OpenTelemetry export of toolgate's tracing spans (cargo feature `otel`, off by default).
//!
//! When `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set (not
//! empty), the spans of toolgate's crates go to that collector over OTLP/HTTP with protobuf
//! bodies: `POST {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, or the traces endpoint as given
//! (OTLP exporter specification, "Endpoint URLs for OTLP/HTTP"). They are batched by a
//! background thread (the SDK's batch span processor), so a call never waits on the collector:
//! `tool_call` per call (`session`, `profile`, `call_id`, `tool`, `outcome`, `error_kind`) with
//! its `authorize`, `execute` and `finish` children. When the command ends ([`Otel`] dropped),
//! the spans still queued are sent, waiting at most the export timeout plus one second.
//!
//! The other standard variables apply: `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`,
//! `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT` (milliseconds; toolgate's default is
//! [`DEFAULT_TIMEOUT`], not the specification's 10 s, so that a collector that does not answer
//! holds up the end of a command by 3 s at most), `OTEL_SERVICE_NAME` (default
//! `toolgate`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`. The client has no TLS: the endpoint
//! must be an `http://` URL (a local collector or agent).
//!
//! Bad settings never fail a command: a malformed endpoint or timeout, an `https://` endpoint,
//! or a protocol other than `http/protobuf` prints one warning on stderr and the command runs
//! without export; a collector that cannot be reached costs the spans, with a warning on stderr
//! when exports start failing (once per run of failures).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::Layer as _;

/// The export timeout when neither `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` nor
/// `OTEL_EXPORTER_OTLP_TIMEOUT` is set: 2 s for one export, retries included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The export of a run; dropping it sends the spans still queued (bounded wait).
pub struct Otel {
    provider: SdkTracerProvider,
    /// How long the drop waits for the last export.
    wait: Duration,
}

impl Drop for Otel {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown_with_timeout(self.wait) {
            crate::logging::note(format_args!(
                "toolgate: warning: sending the last OpenTelemetry spans: {e}"
            ));
        }
    }
}

/// [`crate::logging::init`] with the export: installs the global tracing subscriber, the same stderr log ([`crate::logging::filter`]) and the
/// OpenTelemetry export when an endpoint variable is set and the settings are valid. Returns
/// the export's guard, `None` when there is no export (a bad setting is reported on stderr,
/// never an error).
pub fn init() -> Option<Otel> {
    let fmt = tracing_subscriber::fmt::layer()
        .fmt_fields(crate::logging::escaped_fields())
        .with_writer(std::io::stderr)
        .with_ansi(crate::logging::colour())
        .log_internal_errors(false)
        .with_filter(crate::logging::filter());
    let export = match Settings::from_env() {
        Ok(None) => None,
        Ok(Some(settings)) => match start(&settings) {
            Ok(export) => Some(export),
            Err(e) => {
                warn_off(&e);
                None
            }
        },
        Err(e) => {
            warn_off(&e);
            None
        }
    };
    let (layer, guard) = match export {
        Some((layer, guard)) => (Some(layer), Some(guard)),
        None => (None, None),
    };
    tracing_subscriber::registry().with(fmt).with(layer).init();
    guard
}

fn warn_off(e: &str) {
    crate::logging::note(format_args!(
        "toolgate: warning: OpenTelemetry export is off: {e}"
    ));
}

/// The settings toolgate checks itself before the exporter reads the variables.
#[derive(Debug, PartialEq)]
struct Settings {
    /// The export timeout, when a variable sets one.
    timeout: Option<Duration>,
}

/// The value of the variable `name` when set and not empty; an error when it is not Unicode.
fn env_var(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(v) if v.is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid Unicode")),
    }
}

/// Reads a variable: its value when set and not empty.
type Lookup<'a> = &'a dyn Fn(&str) -> Result<Option<String>, String>;

/// The first of `names` that is set, with its value.
fn first(
    var: Lookup<'_>,
    names: [&'static str; 2],
) -> Result<Option<(&'static str, String)>, String> {
    for name in names {
        if let Some(v) = var(name)? {
            return Ok(Some((name, v)));
        }
    }
    Ok(None)
}

impl Settings {
    /// The settings from the process's environment.
    fn from_env() -> Result<Option<Self>, String> {
        Self::read(&env_var)
    }

    /// `None` when no endpoint variable is set; an error naming the variable and the value
    /// when one cannot work.
    fn read(var: Lookup<'_>) -> Result<Option<Self>, String> {
        let Some((name, endpoint)) = first(
            var,
            [
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ],
        )?
        else {
            return Ok(None);
        };
        let url = url::Url::parse(&endpoint)
            .map_err(|e| format!("{name}={endpoint:?} is not a URL: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!(
                "{name}={endpoint:?}: toolgate sends OTLP over plain http only (no TLS in \
                 this build); use an http:// URL such as http://127.0.0.1:4318"
            ));
        }
        if let Some((name, protocol)) = first(
            var,
            [
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ],
        )? {
            if protocol != "http/protobuf" {
                return Err(format!(
                    "{name}={protocol:?}: toolgate sends http/protobuf only"
                ));
            }
        }
        let timeout = match first(
            var,
            [
                "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ],
        )? {
            None => None,
            Some((name, ms)) => {
                Some(Duration::from_millis(ms.trim().parse().map_err(|_| {
                    format!("{name}={ms:?} is not a whole number of milliseconds")
                })?))
            }
        };
        Ok(Some(Self { timeout }))
    }
}

/// Which spans and events are exported: toolgate's own (`tool_call` at info, the pipeline's
/// stage spans at debug), other crates' warnings and errors.
fn targets() -> Targets {
    Targets::new()
        .with_target("toolgate_core", LevelFilter::DEBUG)
        .with_target("toolgate_tools", LevelFilter::INFO)
        .with_target("toolgate_mcp", LevelFilter::INFO)
        .with_target("toolgate_store", LevelFilter::INFO)
        .with_target("toolgate_config", LevelFilter::INFO)
        .with_target("toolgate", LevelFilter::INFO)
        .with_default(LevelFilter::WARN)
}

/// The export layer and its guard.
fn start<S>(settings: &Settings) -> Result<(impl tracing_subscriber::Layer<S>, Otel), String>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let timeout = settings.timeout.unwrap_or(DEFAULT_TIMEOUT);
    // the variables are read by the builder (endpoint, headers); the timeout is given here
    // because a variable that sets it was checked above and the default is toolgate's
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_timeout(timeout)
        .build()
        .map_err(|e| e.to_string())?;
    let mut resource = Resource::builder().build();
    let named = resource
        .get(&opentelemetry::Key::new("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if !named {
        resource = Resource::builder().with_service_name("toolgate").build();
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(Warned {
            inner: exporter,
            failing: AtomicBool::new(false),
        })
        .with_resource(resource)
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("toolgate"))
        .with_filter(targets());
    let wait = timeout + Duration::from_secs(1);
    Ok((layer, Otel { provider, wait }))
}

/// An exporter that says on stderr when exports start failing, once until one succeeds again
/// (the SDK's own diagnostics are not compiled in).
#[derive(Debug)]
struct Warned<E> {
    inner: E,
    failing: AtomicBool,
}

impl<E: SpanExporter> SpanExporter for Warned<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        match &result {
            Ok(()) => self.failing.store(false, Ordering::Relaxed),
            Err(e) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    crate::logging::note(format_args!(
                        "toolgate: warning: OpenTelemetry export failed ({n} spans lost): {e}"
                    ));
                }
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Option<Settings>, String> {
        let lookup = |name: &str| {
            Ok(vars
                .iter()
                .find(|(k, v)| *k == name && !v.is_empty())
                .map(|(_, v)| v.to_string()))
        };
        Settings::read(&lookup)
    }

    #[test]
    fn no_endpoint_no_export() {
        assert_eq!(read(&[]), Ok(None));
        assert_eq!(read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")]), Ok(None));
        // the other variables alone turn nothing on, even bad ones
        assert_eq!(read(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]), Ok(None));
    }

    #[test]
    fn good_settings() {
        let ok = |vars| read(vars).unwrap().unwrap();
        assert_eq!(
            ok(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]),
            Settings { timeout: None }
        );
        assert_eq!(
            ok(&[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://collector/v1/traces"
                ),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
            ]),
            Settings {
                timeout: Some(Duration::from_millis(500))
            }
        );
        // the per-signal variable wins
        assert_eq!(
            ok(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "bad but unused"),
            ]),
            Settings {
                timeout: Some(Duration::from_millis(250))
            }
        );
    }

    #[test]
    fn bad_settings_name_the_variable_and_value() {
        let err = |vars: &[(&str, &str)]| read(vars).unwrap_err();
        let e = err(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url")]);
        assert!(
            e.contains("OTEL_EXPORTER_OTLP_ENDPOINT=\"not a url\" is not a URL"),
            "{e}"
        );
        let e = err(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "127.0.0.1:4318")]);
        assert!(e.starts_with("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="), "{e}");
        let e = err(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318")]);
        assert!(e.contains("plain http only"), "{e}");
        let e = err(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://")]);
        assert!(e.contains("is not a URL"), "{e}");
        let e = err(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(e.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\""), "{e}");
        let e = err(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-5"),
        ]);
        assert!(e.contains("not a whole number of milliseconds"), "{e}");
        let e = err(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
        ]);
        assert!(e.contains("OTEL_EXPORTER_OTLP_TIMEOUT=\"10s\""), "{e}");
    }
}
