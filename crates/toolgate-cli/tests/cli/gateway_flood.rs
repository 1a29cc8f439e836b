//! An upstream that floods cannot swamp the gateway or its clients: `toolgate serve --http` in
//! front of a flooding upstream `fl` and a quiet one `quiet` (both
//! `tests/upstreams/flood_server.py`, on the official Python SDK), with two sessions of the
//! Python SDK (`tests/clients/gateway_flood_client.py`). While `fl__flood` sends thousands of
//! log messages, progress notifications, resource updates and list changes, the call ends
//! with its result, session A gets at most each kind's budget, session B is answered by both
//! upstreams, the drops are counted in `/metrics` and logged once a window, and a flood of
//! `tools/list_changed` re-lists the upstream at most once a second. Also: a session's
//! subscriptions past `[gateway] max_subscriptions` are refused before anything reaches the
//! upstream, and `toolgate check` refuses zero and negative budgets.

use super::mcp::{raw_http, HttpServe};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::time::Duration;
use toolgate_test_support::clients::{client_program, python_script, run_ok};

/// What `fl__flood` is asked to send of log messages and progress notifications.
const N: u64 = 4000;

fn entry(python: &Path, name: &str, ws: &Path, extra: &str) -> String {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstreams/flood_server.py");
    format!(
        "[[upstreams]]\nname = {name:?}\ncommand = {:?}\nargs = [{:?}, \"--log\", {:?}]\n\
         startup_timeout_ms = 20000\ntimeout_ms = 60000\n{extra}\n",
        python.display().to_string(),
        server.display().to_string(),
        ws.join(format!("{name}.log")).display().to_string(),
    )
}

/// The resources requests the upstream `name` received, as `(method, uri)`.
fn received(ws: &Path, name: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(ws.join(format!("{name}.log")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["method"].as_str().unwrap().to_string(),
                v["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The value of `toolgate_upstream_notifications_dropped_total` for `upstream` and `kind`.
fn dropped(metrics: &str, upstream: &str, kind: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("toolgate_upstream_notifications_dropped_total{"))
        .filter(|l| {
            l.contains(&format!("upstream=\"{upstream}\""))
                && l.contains(&format!("kind=\"{kind}\""))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64)
        .sum()
}

#[test]
#[cfg_attr(
    toolgate_no_python,
    ignore = "needs TOOLGATE_TEST_PYTHON (README: Prerequisites)"
)]
fn a_flooding_upstream_is_held_to_its_budgets_and_the_gateway_keeps_serving() {
    let Some(python) = client_program("TOOLGATE_TEST_PYTHON") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // (per second, burst) of each kind, as configured for fl
    let (log, progress, updated, changed) = ((50, 100), (20, 40), (20, 40), (1, 3));
    let budgets = format!(
        "[upstreams.notifications]\nlog = {{ per_second = {}, burst = {} }}\n\
         progress = {{ per_second = {}, burst = {} }}\n\
         resource_updated = {{ per_second = {}, burst = {} }}\n\
         resources_list_changed = {{ per_second = {}, burst = {} }}\n",
        log.0, log.1, progress.0, progress.1, updated.0, updated.1, changed.0, changed.1
    );
    let config = format!(
        "[gateway]\nmax_subscriptions = 2\n\n\
         [[rules]]\nname = \"upstreams\"\ndecision = \"allow\"\ntool = \"*__*\"\n\n{}\n{}",
        entry(&python, "fl", &ws, &budgets),
        entry(&python, "quiet", &ws, "")
    );
    std::fs::write(ws.join("toolgate.toml"), config).unwrap();

    let mut serve = HttpServe::start(&ws, &[], &[("TOOLGATE_LOG", "warn")], true);
    let mut stderr = serve.take_stderr().expect("kept");
    // drained meanwhile, so the server never blocks on it
    let logged = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut cmd = python_script(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/gateway_flood_client.py"),
    )
    .expect("checked above");
    cmd.args([
        "--url",
        &format!("http://{}/mcp", serve.addr),
        "--token",
        &serve.token,
        "--n",
        &N.to_string(),
    ]);
    let out = run_ok(cmd, Duration::from_secs(150));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("passed: flood"), "{stdout}");
    let figures: Value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("figures: "))
        .map(|f| serde_json::from_str(f).unwrap())
        .expect("the client printed its figures");
    eprintln!("figures: {figures}");
    let metrics = raw_http(
        &serve.addr,
        &format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\n{}\r\n",
            serve.addr,
            serve.auth()
        ),
        b"",
    );
    assert_eq!(metrics.status, 200, "{metrics:?}");
    let _ = serve.child.kill();
    let _ = serve.child.wait();
    let logged = logged.join().unwrap();

    // the most a budget lets through in the call's time, with a second of slack each side
    let seconds = figures["seconds"].as_f64().unwrap();
    let most = |(per_second, burst): (u64, u64)| burst + per_second * (seconds.ceil() as u64 + 2);
    let got = |k: &str| figures[k].as_u64().unwrap();
    for (kind, budget, sent, at_a) in [
        ("log", log, N, got("logs")),
        ("progress", progress, N, got("progress")),
        ("resource_updated", updated, N / 4, got("updated")),
        (
            "resources_list_changed",
            changed,
            N / 10,
            got("list_changed_a"),
        ),
    ] {
        let drops = dropped(&metrics.body, "fl", kind);
        eprintln!("{kind}: sent {sent}, session A got {at_a}, dropped {drops}");
        assert!(at_a > 0, "{kind}: some within the budget reach the session");
        assert!(
            at_a <= most(budget),
            "{kind}: session A got {at_a}, over the budget's {}",
            most(budget)
        );
        assert!(
            drops >= sent - most(budget) && drops <= sent,
            "{kind}: {drops} of {sent} counted as dropped\n{}",
            metrics.body
        );
        // one line a window (10 s), not one a drop
        let lines = logged
            .lines()
            .filter(|l| l.contains("than its budget"))
            .filter(|l| {
                l.contains(&format!("kind={kind} ")) || l.contains(&format!("kind=\"{kind}\""))
            })
            .count();
        assert!(
            (1..=(seconds / 10.0).ceil() as usize + 1).contains(&lines),
            "{kind}: {lines} log lines in {seconds} s\n{logged}"
        );
    }
    assert_eq!(dropped(&metrics.body, "quiet", "log"), 0, "the quiet one");
    // and in the health `toolgate stats` shows, recorded by the running gateway (at most
    // once a second, by its supervisor: on a loaded machine later; asked again until it
    // shows drops, or 10 s)
    let of = |stats: &str, name: &str| {
        stats
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["upstream"] == name)
            .unwrap_or_else(|| panic!("{name}: {stats}"))
    };
    let asked = std::time::Instant::now();
    let stats = loop {
        let out = super::gateway::toolgate(&ws, &["stats", "--json"]);
        let stats = String::from_utf8_lossy(&out.stdout).into_owned();
        if of(&stats, "fl")["dropped"].as_u64().unwrap_or(0) > 0
            || asked.elapsed() > std::time::Duration::from_secs(10)
        {
            break stats;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    let health = |name: &str| of(&stats, name);
    let all: u64 = [
        "log",
        "progress",
        "resource_updated",
        "resources_list_changed",
    ]
    .iter()
    .map(|k| dropped(&metrics.body, "fl", k))
    .sum();
    let recorded = health("fl")["dropped"].as_u64().unwrap();
    assert!(
        recorded > 0 && recorded <= all,
        "{recorded} recorded of {all} dropped: {stats}"
    );
    assert_eq!(health("quiet")["dropped"], 0, "{stats}");
    assert!(
        got("list_changed_b") <= most(changed),
        "every session gets at most the budget: {figures}"
    );
    assert_eq!(
        got("logs_b"),
        0,
        "session B's calls were not the only ones in flight"
    );
    assert_eq!(
        got("updated_b"),
        0,
        "session B is not subscribed to flood://a"
    );
    // the last progress may be one of those dropped, never past the end
    let last = figures["last_progress"].as_f64().unwrap();
    assert!(last >= 1.0 && last <= N as f64, "{figures}");
    // the other upstream and the flooding one's other tool answered promptly meanwhile
    let slowest = figures["slowest_other"].as_f64().unwrap();
    assert!(slowest < 3.0, "session B waited {slowest} s for an answer");
    // N / 10 tools/list_changed and prompts/list_changed: each list is listed again after
    // the last change the upstream said (what it served then, whatever the timing: the
    // change pending after the flood is never lost), and at most once a second (besides the
    // tools' first listing at start, the pending change after the flood, and the client's
    // 1.5 s wait after it); without the interval the upstream is listed again each time a
    // listing ends, hundreds of times. The prompts have no listing at start (no session
    // listed them): one listing is enough when the whole flood was said before it began.
    for what in ["tools", "prompts"] {
        let said = got(&format!("{what}_changed"));
        assert_eq!(said, N / 10, "{what}: the changes said: {figures}");
        assert_eq!(
            got(&format!("{what}_seen")),
            said,
            "the last listing of the {what} came after the last change: {figures}"
        );
    }
    for (what, least) in [("relists", 2), ("prompt_relists", 1)] {
        let relists = got(what);
        assert!(
            relists >= least && relists <= seconds.ceil() as u64 + 5,
            "{what}: {relists} in {seconds} s"
        );
    }
    // the prompts served changed once at most (the first re-list found the one prompt, which
    // no session had listed before): told once, not once a list_changed
    assert!(got("prompts_changed_a") <= 1, "{figures}");

    // past the limit: nothing of fl+flood://c reached the upstream for A until it
    // unsubscribed from b (then only its read: B had subscribed it upstream already)
    let req = |m: &str, u: &str| (format!("resources/{m}"), u.to_string());
    let fl = received(&ws, "fl");
    assert!(fl.len() >= 9, "what reached the upstream fl: {fl:#?}");
    assert_eq!(
        fl[..9],
        [
            req("read", "flood://a"),
            req("subscribe", "flood://a"),
            req("read", "flood://b"),
            req("subscribe", "flood://b"),
            req("read", "flood://a"),
            req("read", "flood://c"),
            req("subscribe", "flood://c"),
            req("unsubscribe", "flood://b"),
            req("read", "flood://c"),
        ],
        "what reached the upstream fl: {fl:#?}"
    );
    // then at most the unsubscribes of the sessions' ends
    assert!(
        fl[9..]
            .iter()
            .all(|(m, u)| m == "resources/unsubscribe" && u != "flood://b"),
        "{fl:#?}"
    );
}

#[test]
fn zero_and_negative_budgets_are_refused_by_toolgate_check() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    for (budget, says) in [
        (
            "log = { per_second = 0 }",
            r#"upstreams["fl"].notifications.log.per_second: 0 would drop every notification: write at least 1"#,
        ),
        (
            "progress = { per_minute = -3 }",
            r#"upstreams["fl"].notifications.progress.per_minute: -3 is not a number of notifications: write 1 to 1000000"#,
        ),
        (
            "resource_updated = { per_second = 5, burst = 0 }",
            r#"upstreams["fl"].notifications.resource_updated.burst: 0 would drop every notification"#,
        ),
        (
            "resources_list_changed = { burst = 2 }",
            r#"upstreams["fl"].notifications.resources_list_changed: write one of per_second and per_minute"#,
        ),
    ] {
        std::fs::write(
            ws.join("toolgate.toml"),
            format!(
                "[[upstreams]]\nname = \"fl\"\ncommand = \"srv\"\n\
                 notifications = {{ {budget} }}\n"
            ),
        )
        .unwrap();
        let out = super::toolgate(&["check"], ws);
        // the problems are the command's output
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{budget}: {stdout}");
        assert!(stdout.contains(says), "{budget}: {stdout}");
    }
}
