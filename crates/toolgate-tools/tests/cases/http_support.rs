//! Fixtures for the HTTP tools: a pipeline over `http_fetch` (with the test's configuration
//! and policy), the test servers on loopback, and assertions on `url_blocked` results.
//!
//! Every pipeline here runs under [`LoopbackOnly`] unless a test says otherwise: a call or a
//! redirect to anything but 127.0.0.0/8 is denied by the policy, so a test of a blocked
//! non-loopback address that the guard failed to block fails with `permission_denied` instead
//! of sending a packet off the machine.

use serde_json::{json, Value};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use toolgate_core::{
    Decision, ErrorKind, MemoryAuditSink, Pipeline, Policy, PolicyInput, Registry,
    ResolvedResource, Session, ToolCall, ToolResult, ToolSpec, Verdict,
};
use toolgate_tools::http::HttpConfig;

/// Denies every URL whose host is not a 127.0.0.0/8 address or a `.test` name, for calls
/// and redirects alike; allows the rest (a safety net for the tests, see the module docs).
pub struct LoopbackOnly;

impl LoopbackOnly {
    pub fn verdict(url: &str) -> Verdict {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()));
        let ok = match host {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => {
                ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v| v.is_loopback())
            }
            Some(url::Host::Domain(d)) => d.ends_with(".test") || d == "localhost",
            None => false,
        };
        if ok {
            Verdict::allow("test.loopback", "a loopback URL")
        } else {
            Verdict::deny("test.not_loopback", "tests reach loopback only")
        }
    }
}

impl Policy for LoopbackOnly {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        input
            .resources
            .iter()
            .find_map(|r| match r {
                ResolvedResource::Url(u) => Some(LoopbackOnly::verdict(u)),
                _ => None,
            })
            .unwrap_or_else(|| Verdict::allow("test.no_url", "no URL"))
    }

    fn decide_url(&self, _tool: &ToolSpec, url: &str, _profile: &str) -> Verdict {
        LoopbackOnly::verdict(url)
    }
}

/// A pipeline over the HTTP tools (`http_fetch` and `http_request`, one client), with the
/// memory ledger.
pub struct Http {
    pub pipeline: Pipeline,
    pub session: Session,
    pub audit: Arc<MemoryAuditSink>,
    n: AtomicU64,
}

impl Http {
    /// The HTTP tools under `config` and [`LoopbackOnly`].
    pub fn new(config: HttpConfig) -> Http {
        Http::with_policy(config, Arc::new(LoopbackOnly))
    }

    /// The HTTP tools under `config` and `policy`.
    pub fn with_policy(config: HttpConfig, policy: Arc<dyn Policy>) -> Http {
        let registry = toolgate_tools::register_http(Registry::builder(), config)
            .build()
            .unwrap();
        let audit = Arc::new(MemoryAuditSink::default());
        let pipeline = Pipeline::builder(registry)
            .policy(policy)
            .audit(audit.clone())
            .build();
        let session = pipeline.session("s").build().unwrap();
        Http {
            pipeline,
            session,
            audit,
            n: AtomicU64::new(0),
        }
    }

    /// One call of `tool`.
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let n = self.n.fetch_add(1, Ordering::SeqCst);
        self.pipeline
            .dispatch(ToolCall::new(format!("c{n}"), tool, args), &self.session)
            .await
    }

    /// One call of `tool` with the idempotency key `key`.
    pub async fn call_keyed(&self, tool: &str, args: Value, key: &str) -> ToolResult {
        let n = self.n.fetch_add(1, Ordering::SeqCst);
        let call = ToolCall::new(format!("c{n}"), tool, args).with_idempotency_key(key);
        self.pipeline.dispatch(call, &self.session).await
    }

    /// `http_fetch` of `url`.
    pub async fn fetch(&self, url: &str) -> ToolResult {
        self.call("http_fetch", json!({ "url": url })).await
    }
}

/// A configuration opening `addrs` (each a single address).
pub fn opening(addrs: &[&str]) -> HttpConfig {
    let mut c = HttpConfig::default();
    c.allow_private = addrs
        .iter()
        .map(|a| ipnet::IpNet::from(a.parse::<IpAddr>().unwrap()))
        .collect();
    c
}

/// The structured result of a successful call.
pub fn ok(r: &ToolResult) -> &Value {
    assert!(!r.is_error, "expected success, got {:#?}", r.error);
    r.structured_content.as_ref().expect("structured content")
}

/// The whole structured result of a successful call, from the result store when the
/// pipeline truncated it behind a handle.
pub fn full(http: &Http, r: &ToolResult) -> Value {
    match &r.truncation {
        None => ok(r).clone(),
        Some(t) => {
            assert!(!r.is_error, "{r:#?}");
            let text = http
                .pipeline
                .results()
                .get(http.session.id(), &t.handle)
                .unwrap()
                .expect("the full result behind the handle");
            serde_json::from_str(&text).unwrap()
        }
    }
}

/// The sub-reason of a `url_blocked` result (the start of its message), asserting its kind
/// and reason.
pub fn blocked(r: &ToolResult) -> String {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected url_blocked, got {r:#?}"));
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::UnsafeInput, Some("url_blocked")),
        "{e:#?}"
    );
    assert!(r.error.as_ref().unwrap().is_recoverable());
    e.message.split(':').next().unwrap().to_string()
}

/// The error's reason, asserting the result is an error.
pub fn reason(r: &ToolResult) -> String {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected an error, got {r:#?}"));
    e.reason.as_deref().unwrap_or_default().to_string()
}

/// Whether the audit's last record names `rule` with `decision`.
pub fn last_record(http: &Http) -> (Option<Decision>, Option<String>) {
    let recs = http.audit.records();
    let last = recs.last().expect("a record");
    (last.decision, last.rule.as_deref().map(str::to_owned))
}
