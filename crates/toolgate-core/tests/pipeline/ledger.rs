//! Stage 7 with the idempotency ledger: a side-effecting call acts once per key. Replays,
//! conflicts, calls in progress, unsettled entries settled by the reconcile hook either way or
//! by the operator, what each way a handler ends does to its key, derived keys and their
//! window, retention, principals, the key in the handler's context, and the memory backend's
//! contract. The effect is counted by a real HTTP server on 127.0.0.1.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::time::Duration;
use toolgate_core::ledger::{LedgerFilter, LedgerState, Recorded, Settled, Settlement};
use toolgate_test_support::counting::{CountingServer, Fault, Faults, Send};

pub struct Setup {
    pub p: Pipeline,
    pub audit: Arc<MemoryAuditSink>,
    pub server: CountingServer,
    pub faults: Arc<Faults>,
}

pub fn options() -> LedgerOptions {
    LedgerOptions {
        lease_grace: Duration::from_millis(50),
        ..LedgerOptions::default()
    }
}

pub fn setup_with(
    edit: impl FnOnce(&mut Send),
    ledger: Arc<dyn Ledger>,
    options: LedgerOptions,
) -> Setup {
    let server = CountingServer::start();
    let mut send = Send::new(&server, Faults::none());
    edit(&mut send);
    let faults = send.faults.clone();
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(
        Registry::builder()
            .tool(send)
            .tool(Echo::default())
            .build()
            .unwrap(),
    )
    .audit(audit.clone())
    .ledger(ledger)
    .ledger_options(options)
    .build();
    Setup {
        p,
        audit,
        server,
        faults,
    }
}

fn setup() -> Setup {
    setup_with(|_| {}, Arc::new(MemoryLedger::default()), options())
}

fn args(body: &str) -> Value {
    json!({"to": "ops@example.com", "body": body})
}

async fn send(t: &Setup, s: &Session, id: &str, key: Option<&str>, body: &str) -> ToolResult {
    let mut call = ToolCall::new(id, "send", args(body));
    if let Some(k) = key {
        call = call.with_idempotency_key(k);
    }
    t.p.dispatch(call, s).await
}

fn ledger_trail(audit: &MemoryAuditSink) -> Vec<(Option<LedgerEvent>, u32, Option<String>)> {
    audit
        .calls()
        .iter()
        .map(|r| {
            (
                r.ledger,
                r.attempts,
                r.idempotency_key.as_deref().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn the_memory_ledger_keeps_the_contract() {
    toolgate_test_support::ledger::check(&MemoryLedger::default());
}

#[tokio::test]
async fn the_same_key_and_arguments_replay_the_first_result() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    let first = send(&t, &s, "1", Some("K-1"), "hi").await;
    assert!(!first.is_error, "{first:?}");
    assert!(!first.replayed);
    assert_eq!(
        first.structured_content,
        Some(json!({"count": 1, "key": "K-1"}))
    );
    // sent again, in another session, keys in another order: the first result, not a second
    // delivery
    let s2 = t.p.session("s2").build().unwrap();
    let again: Value = serde_json::from_str(r#"{"body":"hi","to":"ops@example.com"}"#).unwrap();
    let r =
        t.p.dispatch(
            ToolCall::new("9", "send", again).with_idempotency_key("K-1"),
            &s2,
        )
        .await;
    assert!(r.replayed);
    assert_eq!(r.call_id.as_str(), "9");
    assert_eq!(r.structured_content, first.structured_content);
    assert_eq!(t.server.count("K-1"), 1);
    let envelope = serde_json::to_value(&r).unwrap();
    assert_eq!(envelope["replayed"], true);
    assert!(serde_json::to_value(&first)
        .unwrap()
        .get("replayed")
        .is_none());
    assert_eq!(
        ledger_trail(&t.audit),
        [
            (Some(LedgerEvent::Executed), 1, Some("K-1".into())),
            (Some(LedgerEvent::Replayed), 0, Some("K-1".into())),
        ]
    );
}

#[tokio::test]
async fn the_same_key_with_other_arguments_is_a_conflict_naming_the_key() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    assert!(!send(&t, &s, "1", Some("K-1"), "hi").await.is_error);
    let r = send(&t, &s, "2", Some("K-1"), "bye").await;
    let e = err(&r);
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::InvalidInput, Some("idempotency_conflict"))
    );
    assert!(e.is_recoverable());
    assert!(
        e.message.contains("\"K-1\"") && e.message.contains("other arguments"),
        "{}",
        e.message
    );
    assert!(!r.replayed);
    assert_eq!(t.server.deliveries(), 1);
}

#[tokio::test]
async fn a_key_in_use_is_in_progress_until_its_call_ends() {
    let t = setup_with(
        |s| s.timeout = Duration::from_secs(5),
        Arc::new(MemoryLedger::default()),
        options(),
    );
    t.faults.push(Fault::Slow(400));
    let s = t.p.session("s1").build().unwrap();
    let first = send(&t, &s, "1", Some("K-1"), "hi");
    let second = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        send(&t, &s, "2", Some("K-1"), "hi").await
    };
    let (first, second) = tokio::join!(first, second);
    assert!(!first.is_error);
    let e = err(&second);
    assert_eq!(e.kind, ErrorKind::InProgress);
    assert!(e.is_recoverable());
    assert!(e.message.contains("wait for it to end"), "{}", e.message);
    // asked again once it ended: the first result
    let third = send(&t, &s, "3", Some("K-1"), "hi").await;
    assert!(third.replayed);
    assert_eq!(third.structured_content, first.structured_content);
    assert_eq!(t.server.count("K-1"), 1);
}

#[tokio::test]
async fn a_timeout_leaves_the_key_unsettled_until_the_operator_settles_it() {
    let t = setup_with(
        |s| s.reconciles = false,
        Arc::new(MemoryLedger::default()),
        options(),
    );
    t.faults.push(Fault::SendThenHang);
    let s = t.p.session("s1").build().unwrap();
    let r = send(&t, &s, "1", Some("K-1"), "hi").await;
    let e = err(&r);
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::OutcomeUnknown, Some("timeout"))
    );
    assert!(e.message.contains("\"K-1\""), "{}", e.message);
    // never a silent re-run: every re-send is outcome_unknown and nothing is delivered
    for i in 0..3 {
        let r = send(&t, &s, &format!("r{i}"), Some("K-1"), "hi").await;
        let e = err(&r);
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::OutcomeUnknown, Some("unsettled"))
        );
        assert!(
            e.message.contains("toolgate ledger resolve K-1"),
            "{}",
            e.message
        );
    }
    assert_eq!(t.server.count("K-1"), 1);
    let unknown =
        t.p.ledger()
            .list(
                &LedgerFilter {
                    state: Some(LedgerState::Unknown),
                    key: None,
                },
                toolgate_core::audit::now_us(std::time::SystemTime::now()),
            )
            .unwrap();
    assert_eq!(unknown.len(), 1);
    assert_eq!(
        (unknown[0].key.as_str(), unknown[0].call_id.as_str()),
        ("K-1", "1")
    );
    assert!(unknown[0].arguments.contains("ops@example.com"));
    // the operator says it was done: the re-send learns so, and still delivers nothing
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    let done = Recorded::settled_json("operator", now);
    let settled =
        t.p.ledger()
            .settle(
                None,
                "K-1",
                Settlement::Done {
                    result: &done,
                    by: "operator",
                },
                now,
            )
            .unwrap();
    assert!(matches!(settled, Settled::Settled(_)));
    let r = send(&t, &s, "4", Some("K-1"), "hi").await;
    let e = err(&r);
    assert_eq!(e.reason.as_deref(), Some("done_without_result"));
    assert!(e.message.contains("Do not send it again"), "{}", e.message);
    assert!(r.replayed);
    assert_eq!(t.server.count("K-1"), 1);
}

#[tokio::test]
async fn the_operator_settling_not_done_lets_the_call_run_once() {
    let t = setup_with(
        |s| s.reconciles = false,
        Arc::new(MemoryLedger::default()),
        options(),
    );
    t.faults.push(Fault::HangBefore);
    let s = t.p.session("s1").build().unwrap();
    assert_eq!(
        err(&send(&t, &s, "1", Some("K-1"), "hi").await).kind,
        ErrorKind::OutcomeUnknown
    );
    assert_eq!(t.server.count("K-1"), 0);
    assert!(matches!(
        t.p.ledger()
            .settle(
                None,
                "K-1",
                Settlement::NotDone,
                toolgate_core::audit::now_us(std::time::SystemTime::now())
            )
            .unwrap(),
        Settled::Settled(_)
    ));
    let r = send(&t, &s, "2", Some("K-1"), "hi").await;
    assert!(!r.is_error && !r.replayed, "{r:?}");
    assert_eq!(t.server.count("K-1"), 1);
    assert!(send(&t, &s, "3", Some("K-1"), "hi").await.replayed);
}

#[tokio::test]
async fn the_reconcile_hook_settles_an_unsettled_call_both_ways() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    // delivered, then timed out: the hook finds it done; its result comes back
    t.faults.push(Fault::SendThenHang);
    assert_eq!(
        err(&send(&t, &s, "1", Some("done"), "a").await).kind,
        ErrorKind::OutcomeUnknown
    );
    let r = send(&t, &s, "2", Some("done"), "a").await;
    assert!(!r.is_error && r.replayed, "{r:?}");
    assert_eq!(
        r.structured_content,
        Some(json!({"count": 1, "key": "done"}))
    );
    assert!(send(&t, &s, "3", Some("done"), "a").await.replayed);
    assert_eq!(t.server.count("done"), 1);
    // timed out before delivering: the hook finds it not done; the call runs now, once
    t.faults.push(Fault::HangBefore);
    assert_eq!(
        err(&send(&t, &s, "4", Some("lost"), "b").await).kind,
        ErrorKind::OutcomeUnknown
    );
    let r = send(&t, &s, "5", Some("lost"), "b").await;
    assert!(!r.is_error && !r.replayed, "{r:?}");
    assert_eq!(t.server.count("lost"), 1);
    assert!(send(&t, &s, "6", Some("lost"), "b").await.replayed);
    let events: Vec<_> = ledger_trail(&t.audit)
        .into_iter()
        .map(|(e, a, _)| (e, a))
        .collect();
    assert_eq!(
        events,
        [
            (Some(LedgerEvent::Executed), 1),
            (Some(LedgerEvent::ReconciledDone), 0),
            (Some(LedgerEvent::Replayed), 0),
            (Some(LedgerEvent::Executed), 1),
            (Some(LedgerEvent::ReconciledNotDone), 1),
            (Some(LedgerEvent::Replayed), 0),
        ]
    );
}

#[tokio::test]
async fn how_a_handler_ends_decides_what_its_key_becomes() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    // failed before acting: released, so the same call runs again
    t.faults.push(Fault::FailBefore);
    let r = send(&t, &s, "1", Some("before"), "a").await;
    assert_eq!(err(&r).kind, ErrorKind::ToolFailed);
    let r = send(&t, &s, "2", Some("before"), "a").await;
    assert!(!r.is_error && !r.replayed);
    assert_eq!(t.server.count("before"), 1);
    // failed after acting: the failure is the key's result, replayed, never retried
    t.faults.push(Fault::SendThenFail);
    let first = send(&t, &s, "3", Some("after"), "b").await;
    assert_eq!(err(&first).kind, ErrorKind::ToolFailed);
    let again = send(&t, &s, "4", Some("after"), "b").await;
    assert!(again.replayed);
    assert_eq!(again.error, first.error);
    assert_eq!(t.server.count("after"), 1);
    // a panic: nobody knows, so unsettled (the hook then finds nothing delivered)
    t.faults.push(Fault::Panic);
    let r = send(&t, &s, "5", Some("panic"), "c").await;
    assert_eq!(err(&r).reason.as_deref(), Some("panic"));
    let listed =
        t.p.ledger()
            .list(
                &LedgerFilter {
                    state: None,
                    key: Some("panic".into()),
                },
                u64::MAX / 2,
            )
            .unwrap();
    assert_eq!(listed[0].state, LedgerState::Unknown);
    assert!(!send(&t, &s, "6", Some("panic"), "c").await.is_error);
    assert_eq!(t.server.count("panic"), 1);
}

#[tokio::test]
async fn cancelling_before_the_handler_frees_the_key_and_during_it_leaves_it_unsettled() {
    let t = setup_with(
        |s| s.reconciles = false,
        Arc::new(MemoryLedger::default()),
        options(),
    );
    let s = t.p.session("s1").build().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let call = ToolCall::new("1", "send", args("a")).with_idempotency_key("early");
    let r = t.p.dispatch_with(call, &s, cancel).await;
    assert_eq!(err(&r).kind, ErrorKind::Cancelled);
    assert_eq!(err(&r).reason, None, "nothing ran, so nothing is unknown");
    assert!(!send(&t, &s, "2", Some("early"), "a").await.is_error);
    t.faults.push(Fault::SendThenHang);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(80)).await;
        stop.cancel();
    });
    let call = ToolCall::new("3", "send", args("b")).with_idempotency_key("mid");
    let r = t.p.dispatch_with(call, &s, cancel).await;
    assert_eq!(err(&r).reason.as_deref(), Some("effect_unknown"));
    let r = send(&t, &s, "4", Some("mid"), "b").await;
    assert_eq!(err(&r).reason.as_deref(), Some("unsettled"));
    assert_eq!(t.server.count("mid"), 1);
}

#[tokio::test]
async fn a_call_without_a_key_gets_one_derived_from_its_caller_tool_and_arguments() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    let first = send(&t, &s, "1", None, "hi").await;
    let key = first.structured_content.as_ref().unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(key.starts_with("tg-") && key.len() == 35, "{key}");
    // the same call again (a client's re-send): answered from the ledger
    let again = send(&t, &s, "2", None, "hi").await;
    assert!(again.replayed);
    assert_eq!(t.server.count(&key), 1);
    // other arguments, or another caller: another key
    assert!(!send(&t, &s, "3", None, "bye").await.replayed);
    let other = t.p.session("s2").build().unwrap();
    assert!(!send(&t, &other, "1", None, "hi").await.replayed);
    // the same caller in another session (a server whose every request is a session)
    let same = t.p.session("s3").caller("s1").build().unwrap();
    assert!(send(&t, &same, "1", None, "hi").await.replayed);
    assert_eq!(t.server.deliveries(), 3);
    let keys: Vec<_> = t
        .audit
        .calls()
        .iter()
        .map(|r| r.idempotency_key.clone())
        .collect();
    assert_eq!(keys[0].as_deref(), Some(key.as_str()));
    assert_eq!(keys[1], keys[0]);
}

#[tokio::test]
async fn derived_keys_hold_within_their_window_and_tools_may_opt_out() {
    let mut o = options();
    o.derived_key_window = Duration::from_millis(300);
    let t = setup_with(|_| {}, Arc::new(MemoryLedger::default()), o);
    let s = t.p.session("s1").build().unwrap();
    assert!(!send(&t, &s, "1", None, "hi").await.replayed);
    assert!(send(&t, &s, "2", None, "hi").await.replayed);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !send(&t, &s, "3", None, "hi").await.replayed,
        "past the window it acts again"
    );
    assert_eq!(t.server.deliveries(), 2);
    // a sent key is not bound by the window
    assert!(!send(&t, &s, "4", Some("K"), "hi").await.replayed);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(send(&t, &s, "5", Some("K"), "hi").await.replayed);

    // a tool whose identical calls are meant to act each time
    let t = setup_with(
        |s| s.derived_keys = false,
        Arc::new(MemoryLedger::default()),
        options(),
    );
    let s = t.p.session("s1").build().unwrap();
    for i in 0..3 {
        let r = send(&t, &s, &i.to_string(), None, "hi").await;
        assert!(!r.replayed);
        assert_eq!(
            r.structured_content.unwrap()["key"],
            "",
            "no key reaches the handler"
        );
    }
    assert_eq!(t.server.count(""), 3);
    assert!(t
        .audit
        .calls()
        .iter()
        .all(|r| r.ledger.is_none() && r.idempotency_key.is_none()));
    // ...but a key the caller sends still holds
    assert!(!send(&t, &s, "k1", Some("K"), "hi").await.replayed);
    assert!(send(&t, &s, "k2", Some("K"), "hi").await.replayed);
    // and a zero window turns derived keys off for every tool
    let mut o = options();
    o.derived_key_window = Duration::ZERO;
    let t = setup_with(|_| {}, Arc::new(MemoryLedger::default()), o);
    let s = t.p.session("s1").build().unwrap();
    assert!(!send(&t, &s, "1", None, "hi").await.replayed);
    assert!(!send(&t, &s, "2", None, "hi").await.replayed);
}

#[tokio::test]
async fn entries_expire_after_the_retention() {
    let mut o = options();
    o.retention = Duration::from_millis(300);
    let t = setup_with(|_| {}, Arc::new(MemoryLedger::default()), o);
    let s = t.p.session("s1").build().unwrap();
    assert!(!send(&t, &s, "1", Some("K"), "hi").await.is_error);
    assert!(
        err(&send(&t, &s, "2", Some("K"), "other").await)
            .reason
            .as_deref()
            == Some("idempotency_conflict")
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    // forgotten: the key is free for anything
    let r = send(&t, &s, "3", Some("K"), "other").await;
    assert!(!r.is_error && !r.replayed, "{r:?}");
    assert_eq!(t.server.count("K"), 2);
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(t.p.ledger().prune(now + 1, now + 1).unwrap(), 1);
}

#[tokio::test]
async fn an_unsettled_entry_outlives_the_retention() {
    let mut o = options();
    o.retention = Duration::from_millis(300);
    let t = setup_with(
        |s| s.reconciles = false,
        Arc::new(MemoryLedger::default()),
        o,
    );
    t.faults.push(Fault::SendThenHang);
    let s = t.p.session("s1").build().unwrap();
    let r = send(&t, &s, "1", Some("K"), "hi").await;
    assert_eq!(err(&r).reason.as_deref(), Some("timeout"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    assert_eq!(t.p.ledger().prune(now, now).unwrap(), 0);
    // past the retention the same call is still unsettled, never sent a second time
    let r = send(&t, &s, "2", Some("K"), "hi").await;
    let e = err(&r);
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::OutcomeUnknown, Some("unsettled"))
    );
    assert_eq!(t.server.count("K"), 1);
    // settled by the operator, the key is free again
    let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
    assert!(matches!(
        t.p.ledger()
            .settle(None, "K", Settlement::NotDone, now)
            .unwrap(),
        Settled::Settled(_)
    ));
    assert!(!send(&t, &s, "3", Some("K"), "hi").await.is_error);
    assert_eq!(t.server.count("K"), 2);
}

#[tokio::test]
async fn keys_are_kept_per_principal() {
    let t = setup();
    let alice =
        t.p.session("a")
            .principal(toolgate_core::Principal::new("https://as.example", "alice"))
            .build()
            .unwrap();
    let bob =
        t.p.session("b")
            .principal(toolgate_core::Principal::new("https://as.example", "bob"))
            .build()
            .unwrap();
    assert!(!send(&t, &alice, "1", Some("K"), "alice's").await.is_error);
    // the same key from another principal is another call, not a conflict nor a replay of
    // alice's result
    let r = send(&t, &bob, "1", Some("K"), "bob's").await;
    assert!(!r.is_error && !r.replayed, "{r:?}");
    assert!(send(&t, &alice, "2", Some("K"), "alice's").await.replayed);
    assert_eq!(t.server.count("K"), 2);
}

/// A deny holds for a replay: the same principal calling under a role the policy denies the
/// tool to got the earlier call's result back as `replayed` (a role's deny rule did not
/// hold for what another role of the principal had fetched); it is `permission_denied` now,
/// and an ask is not put again.
#[tokio::test]
async fn a_replay_is_refused_where_the_policy_denies_the_call() {
    struct DenyLimited;
    impl Policy for DenyLimited {
        fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
            if input.session.attributes().get("role") == Some(&json!("limited")) {
                Verdict::deny("test.limited", "the limited profile may not send")
            } else {
                Verdict::allow("test.allow", "allowed")
            }
        }
    }
    let server = CountingServer::start();
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(
        Registry::builder()
            .tool(Send::new(&server, Faults::none()))
            .build()
            .unwrap(),
    )
    .policy(Arc::new(DenyLimited))
    .audit(audit.clone())
    .ledger(Arc::new(MemoryLedger::default()))
    .ledger_options(options())
    .build();
    let who = toolgate_core::Principal::new("https://as.example", "alice");
    let full = p.session("a").principal(who.clone()).build().unwrap();
    let limited = p
        .session("b")
        .principal(who)
        .attribute("role", json!("limited"))
        .build()
        .unwrap();
    let call = |id: &str| ToolCall::new(id, "send", args("hi")).with_idempotency_key("K");
    assert!(!p.dispatch(call("1"), &full).await.is_error);
    let r = p.dispatch(call("2"), &limited).await;
    assert_eq!(err(&r).kind, ErrorKind::PermissionDenied, "{r:?}");
    assert!(
        r.text().contains("the limited profile may not send"),
        "{r:?}"
    );
    assert!(p.dispatch(call("3"), &full).await.replayed);
    assert_eq!(server.count("K"), 1);
}

#[tokio::test]
async fn bad_keys_are_refused_for_every_tool_before_anything_runs() {
    let t = setup();
    let s = t.p.session("s1").build().unwrap();
    for (i, bad) in ["", "has space", "ключ", &"k".repeat(256), "a\u{0}b"]
        .iter()
        .enumerate()
    {
        for tool in ["send", "echo"] {
            let arguments = if tool == "send" {
                args("hi")
            } else {
                json!({"text": "x"})
            };
            let call =
                ToolCall::new(format!("{tool}{i}"), tool, arguments).with_idempotency_key(*bad);
            let r = t.p.dispatch(call, &s).await;
            let e = err(&r);
            assert_eq!(
                (e.kind, e.reason.as_deref()),
                (ErrorKind::InvalidInput, Some("invalid_idempotency_key")),
                "{bad:?}"
            );
        }
    }
    assert_eq!(t.server.deliveries(), 0);
}

#[tokio::test]
async fn the_key_reaches_the_handler_and_idempotent_tools_keep_retrying() {
    let server = CountingServer::start();
    let runs = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let spec = ToolSpec::builder("put")
        .description("Idempotent: records the key it was given, fails once transiently.")
        .effects(Effects {
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
            concurrency_safe: false,
        })
        .build()
        .unwrap();
    let (r2, s2) = (runs.clone(), seen.clone());
    let put = DynamicTool::new(spec, move |_, ctx: ToolContext| {
        let (runs, seen) = (r2.clone(), s2.clone());
        async move {
            seen.lock().push(ctx.idempotency_key().map(str::to_string));
            if runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Err(ToolError::failed("busy").transient());
            }
            Ok(ToolOutput::text("put"))
        }
    });
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(
        Registry::builder()
            .tool(put)
            .tool(Send::new(&server, Faults::none()))
            .build()
            .unwrap(),
    )
    .approver(Arc::new(PreApproved))
    .audit(audit.clone())
    .build();
    let s = p.session("s").build().unwrap();
    // an idempotent tool is not under the ledger: retried as before, with the caller's key
    let r = p
        .dispatch(
            ToolCall::new("1", "put", json!({})).with_idempotency_key("P-1"),
            &s,
        )
        .await;
    assert!(!r.is_error);
    assert_eq!(
        *seen.lock(),
        [Some("P-1".to_string()), Some("P-1".to_string())]
    );
    assert_eq!(audit.calls()[0].attempts, 2);
    assert_eq!(audit.calls()[0].ledger, None);
    // a side-effecting one hands its key on
    let r = p
        .dispatch(
            ToolCall::new("2", "send", args("x")).with_idempotency_key("S-1"),
            &s,
        )
        .await;
    assert_eq!(r.structured_content.unwrap()["key"], "S-1");
    assert_eq!(server.count("S-1"), 1);
}

/// A ledger whose every call fails, as a store that cannot be written.
struct Broken;

impl Ledger for Broken {
    fn lookup(
        &self,
        _: &toolgate_core::ledger::Claim<'_>,
    ) -> Result<Option<toolgate_core::ledger::Claimed>, toolgate_core::ledger::LedgerError> {
        Err(toolgate_core::ledger::LedgerError::Store(
            "disk I/O error".into(),
        ))
    }
    fn claim(
        &self,
        _: &toolgate_core::ledger::Claim<'_>,
    ) -> Result<toolgate_core::ledger::Claimed, toolgate_core::ledger::LedgerError> {
        Err(toolgate_core::ledger::LedgerError::Store(
            "disk I/O error".into(),
        ))
    }
    fn complete(
        &self,
        _: &toolgate_core::ledger::Held<'_>,
        _: LedgerState,
        _: &str,
        _: u64,
    ) -> Result<bool, toolgate_core::ledger::LedgerError> {
        unreachable!()
    }
    fn release(
        &self,
        _: &toolgate_core::ledger::Held<'_>,
    ) -> Result<bool, toolgate_core::ledger::LedgerError> {
        unreachable!()
    }
    fn abandon(
        &self,
        _: &toolgate_core::ledger::Held<'_>,
        _: u64,
    ) -> Result<bool, toolgate_core::ledger::LedgerError> {
        unreachable!()
    }
    fn take_over(
        &self,
        _: &toolgate_core::ledger::Claim<'_>,
    ) -> Result<bool, toolgate_core::ledger::LedgerError> {
        unreachable!()
    }
    fn settle(
        &self,
        _: Option<&str>,
        _: &str,
        _: Settlement<'_>,
        _: u64,
    ) -> Result<Settled, toolgate_core::ledger::LedgerError> {
        unreachable!()
    }
    fn list(
        &self,
        _: &LedgerFilter,
        _: u64,
    ) -> Result<Vec<toolgate_core::ledger::LedgerEntry>, toolgate_core::ledger::LedgerError> {
        Ok(Vec::new())
    }
    fn prune(&self, _: u64, _: u64) -> Result<usize, toolgate_core::ledger::LedgerError> {
        Ok(0)
    }
}

#[tokio::test]
async fn a_ledger_that_cannot_record_stops_the_call_before_it_acts() {
    let t = setup_with(|_| {}, Arc::new(Broken), options());
    let s = t.p.session("s1").build().unwrap();
    let r = send(&t, &s, "1", Some("K"), "hi").await;
    let e = err(&r);
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::Internal, Some("ledger_unavailable"))
    );
    assert!(e.message.contains("did not run"), "{}", e.message);
    assert_eq!(t.server.deliveries(), 0);
    // read-only calls do not need it
    let r =
        t.p.dispatch(ToolCall::new("2", "echo", json!({"text": "x"})), &s)
            .await;
    assert!(!r.is_error);
}

#[tokio::test]
async fn a_replayed_result_is_truncated_again_with_a_handle_of_the_replaying_session() {
    let server = CountingServer::start();
    let spec = ToolSpec::builder("report")
        .description("Side-effecting, with a large result.")
        .effects(Effects::side_effecting())
        .risk(Risk::External)
        .max_result_bytes(300)
        .build()
        .unwrap();
    let addr = server.addr();
    let report = DynamicTool::new(spec, move |_, ctx: ToolContext| async move {
        let key = ctx.idempotency_key().unwrap_or_default().to_string();
        tokio::task::spawn_blocking(move || {
            toolgate_test_support::counting::request(addr, "POST", "/send", Some(&key))
        })
        .await
        .unwrap()
        .unwrap();
        Ok(ToolOutput::text("line of the report\n".repeat(100)))
    });
    let p = Pipeline::builder(Registry::builder().tool(report).build().unwrap())
        .approver(Arc::new(PreApproved))
        .build();
    let s1 = p.session("s1").build().unwrap();
    let s2 = p.session("s2").build().unwrap();
    let call = |id: &str| ToolCall::new(id, "report", json!({})).with_idempotency_key("R");
    let first = p.dispatch(call("1"), &s1).await;
    let again = p.dispatch(call("2"), &s2).await;
    assert!(again.replayed);
    assert_eq!(server.count("R"), 1);
    let (h1, h2) = (
        first.truncation.unwrap().handle,
        again.truncation.unwrap().handle,
    );
    assert_ne!(h1, h2);
    assert!(p.results().get("s2", &h2).unwrap().is_some());
    assert!(
        p.results().get("s2", &h1).unwrap().is_none(),
        "s1's handle stays s1's"
    );
}

/// A key that already has an answer gets it before the guard (which judges the world the
/// first call changed) and before the approver (nothing will act): the same call sent again
/// after it ran is a replay, not a refusal nor a second question.
#[tokio::test]
async fn a_replay_is_answered_before_the_guard_and_the_approver() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let archived = Arc::new(AtomicBool::new(false));
    let spec = ToolSpec::builder("archive")
        .description("Archives a document once; its guard refuses an archived one.")
        .effects(Effects::side_effecting())
        .build()
        .unwrap();
    let (guard_flag, run_flag) = (archived.clone(), archived.clone());
    let archive = DynamicTool::new(spec, move |_, _| {
        let done = run_flag.clone();
        async move {
            done.store(true, Ordering::SeqCst);
            Ok(ToolOutput::text("archived"))
        }
    })
    .with_guard(move |_, _| {
        if guard_flag.load(Ordering::SeqCst) {
            return Err(ToolError::failed("the document is archived already"));
        }
        Ok(Vec::new())
    });
    let approver = Arc::new(toolgate_test_support::ScriptedApprover::new(vec![
        ApprovalAnswer::Approved,
    ]));
    let audit = Arc::new(MemoryAuditSink::default());
    let p = Pipeline::builder(Registry::builder().tool(archive).build().unwrap())
        .approver(approver.clone())
        .audit(audit.clone())
        .build();
    let s = p.session("s").build().unwrap();
    let call = |id: &str| ToolCall::new(id, "archive", json!({})).with_idempotency_key("A-1");
    let first = p.dispatch(call("1"), &s).await;
    assert!(!first.is_error, "{first:?}");
    for id in ["2", "3"] {
        let again = p.dispatch(call(id), &s).await;
        assert!(!again.is_error && again.replayed, "{again:?}");
        assert_eq!(again.text(), "archived");
    }
    assert_eq!(
        approver.asked().len(),
        1,
        "asked once, for the call that acted"
    );
    let records = audit.calls();
    assert_eq!(records[1].decision, None, "a replay is not judged again");
    assert_eq!(records[1].ledger, Some(LedgerEvent::Replayed));
    // without the key the guard judges the new call, and refuses it
    let fresh = p
        .dispatch(ToolCall::new("4", "archive", json!({})), &s)
        .await;
    assert_eq!(err(&fresh).kind, ErrorKind::ToolFailed);
}
