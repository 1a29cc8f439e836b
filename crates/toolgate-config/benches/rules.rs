//! The dispatch benchmark's call with the configuration's policy on: a small typed tool that
//! declares one path resource (as the file tools do), dispatched through every stage, under
//! `DefaultPolicy` (no rules) and under a `ConfigPolicy` of 20 realistic rules (path globs,
//! host and command patterns, tool globs, one Cedar condition that holds for the call).
//!
//! `cargo bench -p toolgate-config --bench rules`
//!
//! Issue 4's target compares the call with the policy rules and the SQLite audit on against the
//! call with neither: `no_rules` (DefaultPolicy, no audit sink) against
//! `rules_20_sqlite_audit` (the 20 rules and toolgate-store's `SqliteAuditSink` on a store in
//! a temporary directory, the caller running flat out, so once the audit queue is full the
//! writer sets the pace) and `rules_20_sqlite_audit_caller` (the same, flushed outside the
//! measured time every 1,000 calls: the caller's path alone). `rules_20` has the rules without
//! an audit sink.
//!
//! One current-thread runtime, a new session every 1,000 calls.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{DefaultPolicy, Pipeline, Policy, Registry, Risk, ToolCall, Workspace};
use toolgate_store::{SqliteAuditSink, Store};
use toolgate_test_support::tools::Echo;

/// `touch_path {text}`: declares the path it is given as a read, and echoes it. Read-only
/// effects, risk `write` (a spec's default).
const TOUCH: Echo = Echo {
    risk: Risk::Write,
    reads_path: true,
    ..Echo::named("touch_path", "Echoes a path it declares as read.")
};

const RULES: &str = r#"
[[rules]]
decision = "deny"
resource = "path:.env"
[[rules]]
decision = "deny"
resource = "path:.git/config"
[[rules]]
decision = "deny"
resource = "path:secrets"
access = "read"
[[rules]]
decision = "deny"
resource = "path:**/*.pem"
[[rules]]
decision = "deny"
resource = "path:**/id_rsa*"
[[rules]]
decision = "ask"
resource = "path:deploy/**"
[[rules]]
decision = "ask"
resource = "path:.github/workflows"
[[rules]]
decision = "allow"
resource = "path:src/**"
[[rules]]
decision = "allow"
resource = "path:docs/**/*.md"
[[rules]]
decision = "allow"
resource = "path:tests/**"
[[rules]]
decision = "deny"
resource = "host:*.internal.example.com"
[[rules]]
decision = "allow"
resource = "host:api.example.com"
[[rules]]
decision = "deny"
resource = "host:169.254.0.0/16"
[[rules]]
decision = "deny"
resource = "command:git push"
[[rules]]
decision = "deny"
resource = "command:rm -rf"
[[rules]]
decision = "allow"
resource = "command:cargo test"
[[rules]]
decision = "allow"
resource = "command:git status"
[[rules]]
decision = "ask"
tool = "write_*"
[[rules]]
decision = "deny"
tool = "touch_*"
roles = ["reader"]
[[rules]]
decision = "allow"
tool = "touch_path"
resource = "path:src/**"
when = 'context.attributes has verified && context.attributes.verified'
[roles.reader]
profiles = ["default"]
"#;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/core")).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let registry = Arc::new(Registry::builder().tool(TOUCH).build().unwrap());
    let names: Vec<&str> = registry
        .filter(&toolgate_core::Selector::All)
        .iter()
        .map(|s| &*s.name)
        .collect();
    std::fs::write(dir.path().join("toolgate.toml"), RULES).unwrap();
    let config = toolgate_config::load(dir.path(), None, &names).unwrap();
    let mut group = c.benchmark_group("policy");
    group.throughput(Throughput::Elements(1));
    let variants: [(&str, Arc<dyn Policy>); 4] = [
        ("no_rules", Arc::new(DefaultPolicy)),
        ("rules_20", config.policy()),
        ("rules_20_sqlite_audit", config.policy()),
        ("rules_20_sqlite_audit_caller", config.policy()),
    ];
    for (name, policy) in variants {
        let mut builder = Pipeline::builder(registry.clone()).policy(policy);
        let mut sqlite: Option<Arc<SqliteAuditSink>> = None;
        if name.contains("sqlite") {
            let store = Store::open(dir.path().join(format!("{name}.db"))).unwrap();
            let sink = Arc::new(SqliteAuditSink::new(&store).unwrap());
            builder = builder.audit(sink.clone());
            if name.ends_with("_caller") {
                sqlite = Some(sink);
            }
        }
        let pipeline = builder.build();
        let new_session = || {
            pipeline
                .session("bench")
                .workspace(ws.clone())
                .attribute("verified", json!(true))
                .build()
                .unwrap()
        };
        let session = std::cell::RefCell::new(new_session());
        let mut n: u64 = 0;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    n += 1;
                    if n.is_multiple_of(1000) {
                        *session.borrow_mut() = new_session();
                        if let Some(sink) = &sqlite {
                            sink.flush_checked().unwrap();
                        }
                    }
                    ToolCall::new(
                        format!("call-{n}"),
                        "touch_path",
                        json!({"text": "src/core/lib.rs"}),
                    )
                },
                |call| {
                    let r = rt.block_on(pipeline.dispatch(call, &session.borrow()));
                    assert!(!r.is_error, "{}", r.text());
                    r
                },
                BatchSize::SmallInput,
            )
        });
        pipeline.audit().flush();
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
