//! The `otel` feature end to end: the real `toolgate` binary built with it, exporting to an
//! OTLP/HTTP receiver on 127.0.0.1 (this test's own socket), the protobuf bodies decoded with
//! opentelemetry-proto. Run with `cargo test -p toolgate-cli --features otel --test otel`
//! (the `[[test]]` entry requires the feature, so a default build skips this file).

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One request the receiver got.
struct Received {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// An OTLP/HTTP receiver on 127.0.0.1: hands each request over, then answers it `200` with an
/// empty protobuf body (a full success). A request is in the channel before its answer
/// leaves, so once a `toolgate` that exported has exited, all it sent is there.
fn receiver() -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || serve_connection(conn, &tx));
        }
    });
    (format!("http://{addr}"), rx)
}

/// The requests of one (keep-alive) connection, until it closes or idles for 10 s.
fn serve_connection(conn: TcpStream, tx: &mpsc::Sender<Received>) {
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(conn);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_string();
        let mut length = 0usize;
        let mut content_type = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap_or(0),
                    "content-type" => content_type = v.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if tx
            .send(Received {
                path,
                content_type,
                body,
            })
            .is_err()
        {
            return;
        }
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if reader.get_mut().write_all(answer).is_err() {
            return;
        }
    }
}

/// `toolgate ARGS` with `OTEL_EXPORTER_OTLP_ENDPOINT=endpoint` and no other OTel variable.
fn command(endpoint: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .stdin(Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") && k != "OTEL_EXPORTER_OTLP_ENDPOINT" {
            cmd.env_remove(k);
        }
    }
    cmd.env_remove("TOOLGATE_LOG");
    cmd
}

/// Runs `toolgate call TOOL ARGUMENTS --id ID` in `ws`, killed after 30 s.
fn call(endpoint: &str, ws: &Path, tool_args: &[&str], id: &str) -> Output {
    let mut args = vec!["call"];
    args.extend_from_slice(tool_args);
    args.extend([
        "--id",
        id,
        "--no-audit",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    finish(
        command(endpoint, &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Waits for `child` (killed after 30 s) and collects its output.
fn finish(mut child: Child) -> Output {
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("toolgate did not end within 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Output {
        status: child.wait().unwrap(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .and_then(|v| match v {
            AnyValue::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
}

/// Every span received so far (the exporting processes have exited), with the attributes of
/// their resources.
fn received(rx: &mpsc::Receiver<Received>) -> (Vec<Span>, Vec<Vec<KeyValue>>) {
    let mut spans = Vec::new();
    let mut resources = Vec::new();
    while let Ok(r) = rx.try_recv() {
        assert_eq!(r.path, "/v1/traces");
        assert_eq!(r.content_type, "application/x-protobuf");
        let req = ExportTraceServiceRequest::decode(r.body.as_slice()).expect("an OTLP request");
        for rs in req.resource_spans {
            resources.extend(rs.resource.map(|r| r.attributes));
            for ss in rs.scope_spans {
                spans.extend(ss.spans);
            }
        }
    }
    (spans, resources)
}

/// The `service.name` of each resource.
fn services(resources: &[Vec<KeyValue>]) -> Vec<&str> {
    resources
        .iter()
        .map(|r| attr(r, "service.name").unwrap_or("(none)"))
        .collect()
}

/// The `tool_call` span of the call `id`.
fn call_span<'a>(spans: &'a [Span], id: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.name == "tool_call" && attr(&s.attributes, "call_id") == Some(id))
        .unwrap_or_else(|| panic!("no tool_call span for {id}: {spans:#?}"))
}

/// The child of `parent` named `name`, in its trace.
fn child<'a>(spans: &'a [Span], parent: &Span, name: &str) -> Option<&'a Span> {
    let found = spans
        .iter()
        .find(|s| s.name == name && s.parent_span_id == parent.span_id)?;
    assert_eq!(found.trace_id, parent.trace_id);
    Some(found)
}

#[test]
fn call_spans_go_to_the_otlp_endpoint() {
    let (endpoint, rx) = receiver();
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    let ok = call(
        &endpoint,
        t.path(),
        &["read_file", r#"{"path": "a.txt"}"#],
        "call-ok",
    );
    assert!(ok.status.success(), "{ok:?}");
    assert!(ok.stderr.is_empty(), "{ok:?}");
    let bad = call(
        &endpoint,
        t.path(),
        &["read_file", r#"{"path": "../x.txt"}"#],
        "call-bad",
    );
    assert_eq!(bad.status.code(), Some(3), "{bad:?}");

    let (spans, resources) = received(&rx);
    let services = services(&resources);
    assert!(!services.is_empty());
    assert!(services.iter().all(|s| *s == "toolgate"), "{services:?}");
    let good = call_span(&spans, "call-ok");
    assert_eq!(attr(&good.attributes, "tool"), Some("read_file"));
    assert_eq!(attr(&good.attributes, "profile"), Some("default"));
    assert_eq!(attr(&good.attributes, "outcome"), Some("ok"));
    assert!(attr(&good.attributes, "session").is_some_and(|s| s.starts_with("cli-")));
    assert_eq!(attr(&good.attributes, "error_kind"), None);
    assert!(good.end_time_unix_nano >= good.start_time_unix_nano);
    assert!(good.start_time_unix_nano > 0);
    for stage in ["authorize", "execute", "finish"] {
        assert!(
            child(&spans, good, stage).is_some(),
            "no {stage} child of the call: {spans:#?}"
        );
    }
    let failed = call_span(&spans, "call-bad");
    assert_eq!(attr(&failed.attributes, "tool"), Some("read_file"));
    assert_eq!(
        attr(&failed.attributes, "outcome"),
        Some("recoverable_error")
    );
    assert_eq!(attr(&failed.attributes, "error_kind"), Some("unsafe_input"));
    assert_ne!(failed.trace_id, good.trace_id);
    // the path guard refused it: it never ran
    assert!(child(&spans, failed, "execute").is_none());
}

#[test]
fn serve_spans_are_sent_when_sigterm_ends_it() {
    let (endpoint, rx) = receiver();
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    let mut serve = command(
        &endpoint,
        &[
            "serve",
            "--no-audit",
            "--workspace",
            t.path().to_str().unwrap(),
        ],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // MCP over stdio: initialize, initialized, one tools/call; stdin stays open
    let (stdin, stdout) =
        toolgate_test_support::clients::stdio_read_file_session(&mut serve, "otel-test", "hello");
    // SIGTERM with stdin still open: serve ends on the signal, and the span goes out then
    // (the batch processor's own schedule is 5 s away)
    let killed = Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    serve.stdout = Some(stdout.into_inner());
    let out = finish(serve);
    drop(stdin);
    assert!(out.status.success(), "{out:?}");

    let (spans, _) = received(&rx);
    let span = spans
        .iter()
        .find(|s| s.name == "tool_call")
        .unwrap_or_else(|| panic!("no tool_call span: {spans:#?}"));
    assert_eq!(attr(&span.attributes, "tool"), Some("read_file"));
    assert_eq!(attr(&span.attributes, "outcome"), Some("ok"));
    assert!(child(&spans, span, "execute").is_some(), "{spans:#?}");
}

#[test]
fn the_standard_resource_variables_apply() {
    let (endpoint, rx) = receiver();
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    let ws = t.path().to_str().unwrap();
    let out = finish(
        command(
            &endpoint,
            &[
                "call",
                "read_file",
                r#"{"path": "a.txt"}"#,
                "--no-audit",
                "--workspace",
                ws,
            ],
        )
        .env("OTEL_SERVICE_NAME", "agent-gate")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    assert!(out.status.success(), "{out:?}");
    let (spans, resources) = received(&rx);
    assert!(spans.iter().any(|s| s.name == "tool_call"), "{spans:#?}");
    assert_eq!(services(&resources), ["agent-gate"]);
    assert_eq!(attr(&resources[0], "deployment.environment"), Some("test"));
}

#[test]
fn bad_settings_warn_and_the_call_runs() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    for (endpoint, says) in [
        ("not a url", "is not a URL"),
        ("https://127.0.0.1:4318", "plain http only"),
        (
            "127.0.0.1:4318",
            "OTEL_EXPORTER_OTLP_ENDPOINT=\"127.0.0.1:4318\"",
        ),
    ] {
        let out = call(
            endpoint,
            t.path(),
            &["read_file", r#"{"path": "a.txt"}"#],
            "c",
        );
        assert!(out.status.success(), "{endpoint}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("hello"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("OpenTelemetry export is off") && err.contains(says),
            "{endpoint}: {err}"
        );
    }
}

#[test]
fn an_endpoint_that_is_not_unicode_warns_and_the_call_runs() {
    use std::os::unix::ffi::OsStrExt as _;
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    let ws = t.path().to_str().unwrap();
    let out = finish(
        command(
            "http://127.0.0.1:1",
            &[
                "call",
                "read_file",
                r#"{"path": "a.txt"}"#,
                "--no-audit",
                "--workspace",
                ws,
            ],
        )
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            std::ffi::OsStr::from_bytes(b"http://\xff:4318"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("hello"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "OpenTelemetry export is off: OTEL_EXPORTER_OTLP_ENDPOINT is not valid Unicode"
        ),
        "{err}"
    );
}

#[test]
fn an_unreachable_collector_costs_the_spans_not_the_call() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.txt"), "hello\n").unwrap();
    // a port nobody listens on (connection refused), and a listener that never answers (the
    // export times out: toolgate's default 2 s, the end of the command waits 3 s at most)
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    for endpoint in [
        format!("http://127.0.0.1:{refused}"),
        format!("http://{}", silent.local_addr().unwrap()),
    ] {
        let started = Instant::now();
        let out = call(
            &endpoint,
            t.path(),
            &["read_file", r#"{"path": "a.txt"}"#],
            "c",
        );
        let took = started.elapsed();
        assert!(out.status.success(), "{endpoint}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("hello"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("OpenTelemetry"), "{endpoint}: {err}");
        // not a speed figure: a bound that a stall (the specification's 10 s timeout, or no
        // bound on the last export) would break
        assert!(took < Duration::from_secs(8), "{endpoint}: {took:?}");
    }
}
