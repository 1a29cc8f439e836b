//! edit_file of a 1 MiB file: one unique line in the middle replaced, every step of the tool
//! included (resolve, no-follow walk, read, UTF-8 check, match, new content, diff, temporary
//! file written and fsynced, rename, directory fsync).
//!
//! `cargo bench -p toolgate-tools --bench edit_file`
//!
//! Variants: the handler called directly, and a call through the whole pipeline (default
//! policy, an approver that approves, no audit sink); an LF file and a CRLF file (whose
//! newlines are mapped on read and write); on the disk and on a tmpfs (`/dev/shm`, where
//! fsync is free, so the tool's own work shows); and, in each place, the floor: the same
//! 1 MiB written, fsynced and renamed by hand with std. Each iteration flips the line between
//! two values, so every iteration is a real edit of the same file.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{Pipeline, PreApproved, Registry, ToolCall, ToolContext, TypedTool, Workspace};
use toolgate_tools::fs::edit_file::EditFileArgs;
use toolgate_tools::EditFile;

/// About 1 MiB of source-like text: 16,384 lines of 64 bytes, one of them `MARKER-A`.
fn file(eol: &str) -> String {
    let mut s = String::with_capacity(1 << 20);
    for i in 0..16_384 {
        let line = if i == 8_192 {
            "    let marker = \"MARKER-A\"; // the line the benchmark edits ".to_string()
        } else {
            format!("    let value_{i:05} = compute({i:05}, &table, 0x{i:04x}); // ")
        };
        s.push_str(&format!("{line:.<63}"));
        s.push_str(eol);
    }
    s
}

/// The same write done by hand with std, as a floor for the disk: the 1 MiB written to a new
/// file, fsynced, renamed over the target, and the directory fsynced.
fn floor(dir: &std::path::Path, bytes: &[u8]) {
    use std::io::Write;
    let tmp = dir.join("floor.tmp");
    let mut f = std::fs::File::create(&tmp).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(&tmp, dir.join("floor.txt")).unwrap();
    std::fs::File::open(dir).unwrap().sync_all().unwrap();
}

/// The places the benchmark runs: the disk (the system's temporary directory) and, where
/// there is one, a tmpfs (`/dev/shm`), where fsync costs nothing and the tool's own work
/// shows.
fn places() -> Vec<(&'static str, tempfile::TempDir)> {
    let mut v = vec![("disk", tempfile::tempdir().unwrap())];
    if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
        v.push(("tmpfs", shm));
    }
    v
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("edit_file");
    group.throughput(Throughput::Bytes(1 << 20));
    for (place, dir) in places() {
        bench_in(&mut group, &rt, place, dir.path());
    }
    group.finish();
}

fn bench_in(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    place: &str,
    dir: &std::path::Path,
) {
    let ws = Workspace::open(dir).unwrap();
    let registry = toolgate_tools::register_write_tools(Registry::builder())
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry)
        .approver(Arc::new(PreApproved))
        .build();
    let bytes = file("\n").into_bytes();
    group.bench_function(format!("{place}/floor_write_fsync_rename"), |b| {
        b.iter(|| floor(dir, &bytes))
    });
    for (eol_name, eol) in [("lf", "\n"), ("crlf", "\r\n")] {
        let name = format!("{eol_name}.txt");
        std::fs::write(dir.join(&name), file(eol)).unwrap();
        let mut flip = false;
        let mut step = move || {
            flip = !flip;
            if flip {
                ("MARKER-A", "MARKER-B")
            } else {
                ("MARKER-B", "MARKER-A")
            }
        };
        group.bench_function(format!("{place}/1MiB_{eol_name}_direct"), |b| {
            b.iter(|| {
                let (old, new) = step();
                let args = EditFileArgs {
                    path: name.clone(),
                    old_string: old.into(),
                    new_string: new.into(),
                    replace_all: false,
                };
                let ctx = ToolContext::builder().workspace(ws.clone()).build();
                let out = rt.block_on(EditFile::new().call(args, ctx)).unwrap();
                assert_eq!(out.replacements, 1);
                out
            })
        });
        if eol_name == "crlf" {
            continue;
        }
        let session = pipeline
            .session("bench")
            .workspace(ws.clone())
            .build()
            .unwrap();
        let mut n = 0u64;
        group.bench_function(format!("{place}/1MiB_{eol_name}_pipeline"), |b| {
            b.iter(|| {
                let (old, new) = step();
                n += 1;
                let call = ToolCall::new(
                    format!("c{n}"),
                    "edit_file",
                    json!({"path": name, "old_string": old, "new_string": new}),
                );
                let r = rt.block_on(pipeline.dispatch(call, &session));
                assert!(!r.is_error, "{}", r.text());
                r
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
