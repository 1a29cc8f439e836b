//! What a grant costs a call the policy asks about.
//!
//! `cargo bench -p toolgate-store --bench grants`
//!
//! A destructive tool (the default policy asks) dispatched through every stage, no audit sink,
//! on a current-thread runtime, a fresh call id each time:
//!
//! - `ask/approver_once`: no grant store; the approver (scripted, answering at once) approves
//!   each call: the ask path without grants, for comparison;
//! - `ask/memory_session_grant`: a session grant in a [`MemoryGrantStore`] answers;
//! - `ask/sqlite_session_grant`: the same grant in the SQLite store;
//! - `ask/sqlite_session_grant_among_20`: the SQLite store also holds 20 `always` grants of
//!   other tools with path patterns, read and matched on every call;
//! - `ask/{memory,sqlite}_session_grant_among_20_same_tool`: the store also holds 20 `always`
//!   grants of the same tool with path patterns that do not cover the call (it touches no
//!   path), so each one's tool and resource patterns are matched on every call.

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::audit::now_us;
use toolgate_core::{
    ApprovalAnswer, GrantScope, GrantStore, MemoryGrantStore, NewGrant, Pipeline, Registry,
    Session, ToolCall,
};
use toolgate_store::Store;
use toolgate_test_support::ScriptedApprover;

fn grant(tool: &str, resource: Option<&str>, scope: GrantScope) -> NewGrant {
    NewGrant {
        tool_pattern: tool.into(),
        resource_patterns: resource.into_iter().map(Into::into).collect(),
        scope,
        session: (scope != GrantScope::Always).then(|| "s".to_string()),
        created_us: now_us(std::time::SystemTime::now()),
        expires_us: None,
        granted_by: None,
        note: None,
        principal: None,
    }
}

fn registry() -> Registry {
    let runs = Arc::new(std::sync::atomic::AtomicU32::new(0));
    Registry::builder()
        .tool(toolgate_test_support::tools::destructive(runs))
        .build()
        .unwrap()
}

fn run(c: &mut Criterion, name: &str, p: Pipeline, s: &Session) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut i = 0u64;
    c.bench_function(name, |b| {
        b.iter(|| {
            i += 1;
            let r = rt.block_on(p.dispatch(
                ToolCall::new(format!("c{i}").as_str(), "delete_all", json!({})),
                s,
            ));
            assert!(!r.is_error, "{r:?}");
        })
    });
}

fn ask(c: &mut Criterion) {
    let p = Pipeline::builder(registry())
        .approver(Arc::new(ScriptedApprover::always(ApprovalAnswer::Approved)))
        .build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/approver_once", p, &s);

    let memory = Arc::new(MemoryGrantStore::new());
    memory
        .insert(&grant("delete_all", None, GrantScope::Session))
        .unwrap();
    let p = Pipeline::builder(registry()).grants(memory).build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/memory_session_grant", p, &s);

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("toolgate.db")).unwrap();
    store
        .insert_grant(&grant("delete_all", None, GrantScope::Session))
        .unwrap();
    let p = Pipeline::builder(registry())
        .grants(Arc::new(store))
        .build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/sqlite_session_grant", p, &s);

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("toolgate.db")).unwrap();
    for i in 0..20 {
        store
            .insert_grant(&grant(
                &format!("other_tool_{i}"),
                Some("path:src/**/*.rs"),
                GrantScope::Always,
            ))
            .unwrap();
    }
    store
        .insert_grant(&grant("delete_all", None, GrantScope::Session))
        .unwrap();
    let p = Pipeline::builder(registry())
        .grants(Arc::new(store))
        .build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/sqlite_session_grant_among_20", p, &s);

    let same_tool = |store: &dyn GrantStore| {
        for i in 0..20 {
            store
                .insert(&grant(
                    "delete_all",
                    Some(&format!("path:src/m{i}/**/*.rs")),
                    GrantScope::Always,
                ))
                .unwrap();
        }
        store
            .insert(&grant("delete_all", None, GrantScope::Session))
            .unwrap();
    };
    let memory = Arc::new(MemoryGrantStore::new());
    same_tool(&*memory);
    let p = Pipeline::builder(registry()).grants(memory).build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/memory_session_grant_among_20_same_tool", p, &s);

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("toolgate.db")).unwrap();
    same_tool(&store);
    let p = Pipeline::builder(registry())
        .grants(Arc::new(store))
        .build();
    let s = p.session("s").build().unwrap();
    run(c, "ask/sqlite_session_grant_among_20_same_tool", p, &s);
}

criterion_group!(benches, ask);
criterion_main!(benches);
