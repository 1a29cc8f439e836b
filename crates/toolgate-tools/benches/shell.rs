//! run_shell of `true` against a plain spawn of `bash --noprofile --norc -c true`, in the same
//! run: what the sandbox's set-up costs per call.
//!
//! `cargo bench -p toolgate-tools --bench shell`
//!
//! - `plain_spawn`: tokio spawns bash with piped stdout and stderr and waits for it;
//! - `run_shell`: the run_shell handler (no pipeline) runs `true` in a fresh workspace view:
//!   private tmp dir, Landlock ruleset, spawner thread in a new PID namespace, fork with the
//!   child set-up (mount and network namespaces, read-only mounts, binds, /proc, loopback,
//!   rlimits, capabilities, Landlock), output readers, wait, group kill;
//! - `run_shell_pipeline`: the same call through the whole pipeline (policy approves).
//!
//! Target: `run_shell` median at most 5 ms above `plain_spawn`'s.

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Pipeline, PreApproved, Registry, ToolCall, ToolContext, TypedTool, Workspace};
use toolgate_tools::shell::run_shell::RunShellArgs;
use toolgate_tools::shell::{RunShell, ShellConfig};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let config = ShellConfig::default();
    let bash = config.bash.clone();
    let tool = RunShell::new(config.clone());
    let args: RunShellArgs = serde_json::from_value(json!({"command": "true"})).unwrap();
    let registry = toolgate_tools::register_shell(Registry::builder(), config)
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry)
        .approver(Arc::new(PreApproved))
        .build();
    let mut calls = 0u64;

    let mut group = c.benchmark_group("run_shell_true");
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("plain_spawn", |b| {
        b.iter(|| {
            rt.block_on(async {
                let status = tokio::process::Command::new(&bash)
                    .args(["--noprofile", "--norc", "-c", "true"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .status()
                    .await
                    .unwrap();
                assert!(status.success());
            })
        })
    });
    group.bench_function("run_shell", |b| {
        b.iter(|| {
            rt.block_on(async {
                let ctx = ToolContext::builder().workspace(ws.clone()).build();
                let out = tool.call(args.clone(), ctx).await.unwrap();
                assert_eq!(out.exit_code, Some(0));
                assert!(out.sandboxed);
            })
        })
    });
    group.bench_function("run_shell_pipeline", |b| {
        let session = pipeline
            .session("bench")
            .workspace(ws.clone())
            .build()
            .unwrap();
        b.iter(|| {
            calls += 1;
            rt.block_on(async {
                let r = pipeline
                    .dispatch(
                        ToolCall::new(format!("c{calls}"), "run_shell", json!({"command": "true"})),
                        &session,
                    )
                    .await;
                assert!(!r.is_error, "{}", r.text());
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
