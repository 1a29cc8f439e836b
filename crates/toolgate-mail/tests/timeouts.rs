//! Where a send that runs out of time stopped decides what it reports: before the server
//! accepted `DATA` it holds nothing, so a greeting or an `AUTH` answer that does not come in
//! time ends `smtp_unavailable` with the key freed (no_effect) before the call's own timeout;
//! after the message was handed over it is `outcome_unknown` (send.rs's two-emails test).

use crate::support::setup::{kind_reason, setup};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(toolgate_no_python, ignore = "TOOLGATE_TEST_PYTHON is not set")]
async fn a_stall_before_the_message_is_handed_over_frees_the_key() {
    let args = json!({"to": ["ann@company.com"], "subject": "Slow", "body": "Slow server"});
    for stall in [
        &["--stall-greeting", "4"][..],
        &[
            "--stall-auth",
            "4",
            "--user",
            "assistant",
            "--password",
            "right",
        ][..],
    ] {
        let Some(t) = setup(stall, |c| {
            c.timeout(Duration::from_secs(1))
                .credentials("assistant", "right")
        }) else {
            return;
        };
        let s = t.session("s1");
        let started = Instant::now();
        let first = t.call_keyed(&s, "1", "K-slow", args.clone()).await;
        assert_eq!(
            kind_reason(&first),
            ("tool_failed".into(), "smtp_unavailable".into()),
            "{stall:?}: {first:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(1), "{stall:?}");
        let e = first.error.as_ref().unwrap();
        assert!(
            e.message.contains("in time") && e.message.contains("nothing was sent"),
            "{}",
            e.message
        );
        // the key is free: the same call runs again (neither a replay nor outcome_unknown)
        let again = t.call_keyed(&s, "2", "K-slow", args.clone()).await;
        assert!(!again.replayed, "{again:?}");
        assert_eq!(kind_reason(&again).1, "smtp_unavailable", "{stall:?}");
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert_eq!(t.server.messages().len(), 0, "{stall:?}");
    }
}
