//! `read_resource` and `list_resources` through a pipeline with a policy: confinement (links
//! out, `..` encoded in the URI, devices, FIFOs), a denied directory (also behind a link),
//! paging with cursors, bad URIs.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::sync::Arc;
use toolgate_core::{
    Access, Content, Decision, ErrorKind, Pipeline, Policy, PolicyInput, Registry,
    ResolvedResource, ResourceContents, Session, ToolCall, ToolResult, Verdict, Workspace,
};
use toolgate_tools::resources::list_resources::ListResourcesOutput;

/// Denies reading under `secrets/`.
struct DenySecrets;

impl Policy for DenySecrets {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        let protected = input.resources.iter().any(|r| {
            matches!(r, ResolvedResource::Path { path, .. } if path.as_path().starts_with("secrets"))
        });
        if protected {
            Verdict::deny("test.secrets", "secrets/ is protected")
        } else {
            Verdict::allow("test.allow", "everything else is allowed")
        }
    }

    fn decide_path(&self, rel: &std::path::Path, _: Access, _: &str) -> Decision {
        if rel.starts_with("secrets") {
            Decision::Deny
        } else {
            Decision::Allow
        }
    }
}

struct Served {
    f: Fixture,
    pipeline: Pipeline,
    session: Session,
}

impl Served {
    fn new() -> Served {
        let f = Fixture::new();
        let registry = Registry::builder()
            .tools(toolgate_tools::resource_tools().unwrap())
            .build()
            .unwrap();
        let pipeline = Pipeline::builder(registry)
            .policy(Arc::new(DenySecrets))
            .build();
        let session = pipeline
            .session("r")
            .workspace(Workspace::open(f.ws()).unwrap())
            .build()
            .unwrap();
        Served {
            f,
            pipeline,
            session,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let id = format!("c{}", rand_id());
        self.pipeline
            .dispatch(ToolCall::new(id, tool, args), &self.session)
            .await
    }

    async fn read(&self, uri: &str) -> ToolResult {
        self.call("read_resource", json!({ "uri": uri })).await
    }
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn contents(r: &ToolResult) -> &ResourceContents {
    assert!(!r.is_error, "{}", r.text());
    match &r.content[..] {
        [Content::Resource { resource }] => resource,
        other => panic!("one embedded resource expected: {other:?}"),
    }
}

#[tokio::test]
async fn text_and_binary_files_read_with_their_mime_types() {
    let s = Served::new();
    s.f.write("src/main.rs", "fn main() {}\n");
    s.f.write("a b/c#d.txt", "spaced\n");
    s.f.write("img.png", [0x89, b'P', b'N', b'G', 0, 1]);
    s.f.write("latin1.txt", [b'c', b'a', b'f', 0xe9, b'\n']);
    match contents(&s.read("file:///src/main.rs").await) {
        ResourceContents::Text {
            uri,
            mime_type,
            text,
        } => {
            assert_eq!(uri, "file:///src/main.rs");
            assert_eq!(mime_type.as_deref(), Some("text/x-rust"));
            assert_eq!(text, "fn main() {}\n");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        contents(&s.read("file:///a%20b/c%23d.txt").await).body(),
        "spaced\n"
    );
    match contents(&s.read("file:///img.png").await) {
        ResourceContents::Blob {
            mime_type, blob, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            assert_eq!(blob, "iVBORwAB");
        }
        other => panic!("{other:?}"),
    }
    // not UTF-8: a blob, never a lossy text
    assert!(matches!(
        contents(&s.read("file:///latin1.txt").await),
        ResourceContents::Blob { .. }
    ));
}

#[tokio::test]
async fn reads_stay_inside_the_workspace_and_under_the_policy() {
    let s = Served::new();
    s.f.write("secrets/key.txt", "CANARY-KEY\n");
    s.f.link("secrets", "innocent");
    s.f.link(s.f.t.join("outside/secret.txt"), "out.txt");
    s.f.link(s.f.t.join("outside"), "outdir");
    for uri in [
        "file:///..%2Foutside%2Fsecret.txt",
        "file:///x%2F..%2F..%2Foutside%2Fsecret.txt",
        "file:///out.txt",
        "file:///outdir/secret.txt",
    ] {
        let r = s.read(uri).await;
        assert_outside(&r);
    }
    // fs-symlink-read-01: a hard link to an outside file shows nothing of it either
    std::fs::hard_link(s.f.t.join("outside/secret.txt"), s.f.ws().join("hard.txt")).unwrap();
    let r = s.read("file:///hard.txt").await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("hard_link"));
    for uri in ["file:///secrets/key.txt", "file:///innocent/key.txt"] {
        let r = s.read(uri).await;
        assert_err(&r, ErrorKind::PermissionDenied, Some("test.secrets"));
        assert!(!serde_json::to_string(&r).unwrap().contains("CANARY-KEY"));
    }
    assert_err(
        &s.read("file:///missing.txt").await,
        ErrorKind::ToolFailed,
        Some("not_found"),
    );
    assert_err(
        &s.read("file:///secrets").await,
        ErrorKind::PermissionDenied,
        Some("test.secrets"),
    );
    s.f.write("dir/x", "x");
    assert_err(
        &s.read("file:///dir").await,
        ErrorKind::ToolFailed,
        Some("not_a_regular_file"),
    );
    let fifo = s.f.ws().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let r = tokio::time::timeout(std::time::Duration::from_secs(5), s.read("file:///pipe"))
        .await
        .expect("a FIFO never hangs the read");
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_regular_file"));
}

#[tokio::test]
async fn bad_uris_are_refused_saying_what_to_send() {
    let s = Served::new();
    for uri in [
        "file:///",
        "http://example.com/x",
        "file://host/x",
        "file:///a?q",
        "file:///%00",
        "no uri",
    ] {
        let r = s.read(uri).await;
        assert_err(&r, ErrorKind::InvalidArguments, Some("invalid_uri"));
        assert!(r.text().contains("file:///"), "{}", r.text());
    }
    let r = s.call("read_resource", json!({ "uri": 7 })).await;
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::InvalidArguments);
    let r = s.call("read_resource", json!({})).await;
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::InvalidArguments);
}

#[tokio::test]
async fn files_over_the_cap_are_refused_with_the_way_to_read_them() {
    let s = Served::new();
    let big = toolgate_tools::resources::read_resource::MAX_RESOURCE_BYTES as usize + 1;
    s.f.write("big.txt", vec![b'a'; big]);
    let r = s.read("file:///big.txt").await;
    assert_err(&r, ErrorKind::UnsafeInput, Some("limit_exceeded"));
    assert!(r.text().contains("read_file"), "{}", r.text());
}

#[tokio::test]
async fn listing_pages_through_every_allowed_file_in_path_order() {
    let s = Served::new();
    let mut want = Vec::new();
    for i in 0..250 {
        let p = format!("d{}/f{i:03}.txt", i % 3);
        s.f.write(&p, "x");
        want.push(p);
    }
    want.sort();
    s.f.write("secrets/key.txt", "CANARY-KEY\n");
    s.f.write(".hidden", "h");
    s.f.write(".gitignore", "ignored.log\n");
    s.f.write("ignored.log", "i");
    // a name that is not UTF-8: its lossy form (d0/bad\u{FFFD}.txt) would read no file
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"bad\xff.txt");
        std::fs::write(s.f.ws().join("d0").join(name), "x").unwrap();
    }
    want.push(".gitignore".into());
    want.sort();
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({});
        if let Some(c) = &cursor {
            args["cursor"] = c.clone().into();
        }
        let page: ListResourcesOutput = out(&s.call("list_resources", args).await);
        pages += 1;
        assert!(page.resources.len() <= 100 && !page.truncated);
        got.extend(page.resources.iter().map(|r| r.name.clone()));
        assert!(page
            .resources
            .iter()
            .all(|r| r.uri == format!("file:///{}", r.name) && r.size == 1));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    // .gitignore is hidden: left out with the others
    want.retain(|p| p != ".gitignore");
    assert_eq!(got, want);
    let page: ListResourcesOutput = out(&s
        .call("list_resources", json!({"prefix": "d1/f00", "limit": 2}))
        .await);
    let names: Vec<&str> = page.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["d1/f001", "d1/f004"].map(|n| format!("{n}.txt")));
    assert!(page.next_cursor.is_some());
    let page: ListResourcesOutput = out(&s
        .call("list_resources", json!({"prefix": "secrets/"}))
        .await);
    assert!(page.resources.is_empty());
}

/// `read_resource` comes under `read_file`'s rules (its spec says so): a rate limit on
/// `read_file` counts its calls too, in `read_file`'s bucket, so `resources/read` is no way
/// around it.
#[tokio::test]
async fn a_rate_limit_on_read_file_counts_read_resource_too() {
    use std::num::NonZeroU32;
    use toolgate_core::pattern::ToolPattern;
    use toolgate_core::rate::{RateLimit, RateLimits, RatePer};
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    let registry = Registry::builder()
        .tools(toolgate_tools::read_only_tools().unwrap())
        .tools(toolgate_tools::resource_tools().unwrap())
        .build()
        .unwrap();
    let spec = registry.get("read_resource", None).unwrap().spec().clone();
    assert_eq!(spec.rules_as.as_deref(), Some("read_file"));
    let limits = RateLimits::new([RateLimit {
        name: "files".into(),
        per: RatePer::Tool,
        tool: Some(ToolPattern::parse("read_file").unwrap()),
        calls: NonZeroU32::new(2).unwrap(),
        period: std::time::Duration::from_secs(60),
        burst: NonZeroU32::new(2).unwrap(),
    }]);
    let pipeline = Pipeline::builder(registry).rate_limits(limits).build();
    let session = pipeline
        .session("r")
        .workspace(Workspace::open(f.ws()).unwrap())
        .build()
        .unwrap();
    let call = |n: u32, tool: &str, args: Value| {
        pipeline.dispatch(ToolCall::new(format!("c{n}"), tool, args), &session)
    };
    let r = call(1, "read_resource", json!({"uri": "file:///a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    let r = call(2, "read_file", json!({"path": "a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    for (n, (tool, args)) in [
        ("read_resource", json!({"uri": "file:///a.txt"})),
        ("read_file", json!({"path": "a.txt"})),
    ]
    .into_iter()
    .enumerate()
    {
        let r = call(3 + n as u32, tool, args).await;
        let e = r.error.as_ref().expect("rate limited");
        assert_eq!(e.kind, ErrorKind::RateLimited, "{tool}: {}", r.text());
        assert!(e.message.contains("rate limit files"), "{}", e.message);
    }
    // a tool outside the limit is not counted
    let r = call(9, "list_dir", json!({"path": "."})).await;
    assert!(!r.is_error, "{}", r.text());
}
