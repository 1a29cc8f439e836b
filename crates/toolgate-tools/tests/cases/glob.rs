//! `glob` through the pipeline and directly.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::fs::glob::{GlobArgs, GlobOutput};
use toolgate_tools::Glob;

fn paths(o: &GlobOutput) -> Vec<&str> {
    o.paths.iter().map(String::as_str).collect()
}

fn tree(f: &Fixture) {
    for p in [
        "Cargo.toml",
        "src/lib.rs",
        "src/a/mod.rs",
        "src/a/b/deep.rs",
        "docs/x.md",
        "README.md",
    ] {
        f.write(p, "x\n");
    }
}

#[tokio::test]
async fn patterns_match_paths_relative_to_the_base() {
    let f = Fixture::new();
    tree(&f);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/*.rs"})).await);
    assert_eq!(
        o,
        GlobOutput {
            paths: vec![
                "src/a/b/deep.rs".into(),
                "src/a/mod.rs".into(),
                "src/lib.rs".into()
            ],
            total_matches: 3,
            truncated: false,
            warnings: vec![],
        }
    );
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "*.md"})).await);
    assert_eq!(paths(&o), ["README.md"]);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "*.{md,toml}"})).await);
    assert_eq!(paths(&o), ["Cargo.toml", "README.md"]);
    let o: GlobOutput = out(&f
        .call("glob", json!({"pattern": "*.rs", "path": "src/a"}))
        .await);
    assert_eq!(paths(&o), ["src/a/mod.rs"]);
    let o: GlobOutput = out(&f
        .call("glob", json!({"pattern": "./a/**/*.rs", "path": "src"}))
        .await);
    assert_eq!(paths(&o), ["src/a/b/deep.rs", "src/a/mod.rs"]);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/nothing"})).await);
    assert_eq!(o.total_matches, 0);
    assert!(o.paths.is_empty() && !o.truncated);
}

#[tokio::test]
async fn ignore_files_hidden_entries_and_git_are_skipped() {
    let f = Fixture::new();
    tree(&f);
    f.write(".gitignore", "target/\n*.log\n/src/skip.rs\n");
    f.write("src/skip.rs", "");
    f.write("target/debug/out.rs", "");
    f.write("src/gen.log", "");
    f.write("src/a/.ignore", "b/\n");
    f.write(".github/workflows/ci.yml", "");
    f.write(".git/config", "");
    f.write(".env", "");
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/*"})).await);
    assert_eq!(
        paths(&o),
        [
            "Cargo.toml",
            "README.md",
            "docs/x.md",
            "src/a/mod.rs",
            "src/lib.rs"
        ]
    );
    // the root's .gitignore applies when the base is a subdirectory, anchored patterns too
    let o: GlobOutput = out(&f
        .call("glob", json!({"pattern": "**/*", "path": "src"}))
        .await);
    assert_eq!(paths(&o), ["src/a/mod.rs", "src/lib.rs"]);
    // an ignored directory given as the base is walked, as rg walks a path it is given
    let o: GlobOutput = out(&f
        .call("glob", json!({"pattern": "**/*.rs", "path": "target"}))
        .await);
    assert_eq!(paths(&o), ["target/debug/out.rs"]);
    // a pattern that names a hidden component includes hidden entries; .git stays out
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": ".github/**/*.yml"})).await);
    assert_eq!(paths(&o), [".github/workflows/ci.yml"]);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/.*"})).await);
    assert_eq!(paths(&o), [".env", ".gitignore", "src/a/.ignore"]);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": ".git/**"})).await);
    assert_eq!(o.total_matches, 0);
}

#[tokio::test]
async fn results_are_capped_and_sorted() {
    let f = Fixture::new();
    for i in 0..1100 {
        f.write(&format!("d{}/f{i:04}.txt", i % 7), "");
    }
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/*.txt"})).await);
    assert_eq!(o.total_matches, 1100);
    assert!(o.truncated);
    let mut all: Vec<String> = (0..1100)
        .map(|i| format!("d{}/f{i:04}.txt", i % 7))
        .collect();
    all.sort();
    all.truncate(1000);
    assert_eq!(o.paths, all);
}

#[tokio::test]
async fn bad_bases_and_patterns_are_refused() {
    let f = Fixture::new();
    tree(&f);
    let r = f
        .call("glob", json!({"pattern": "*", "path": "Cargo.toml"}))
        .await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_directory"));
    assert_not_found(
        &f.call("glob", json!({"pattern": "*", "path": "nope"}))
            .await,
    );
    let r = f.call("glob", json!({"pattern": "src/[a"})).await;
    assert_bad_args(&r, &["/pattern"]);
    assert_eq!(
        r.error.as_ref().unwrap().reason.as_deref(),
        Some("invalid_glob")
    );
    for (args, pointers) in [
        (json!({}), vec!["/pattern"]),
        (json!({"pattern": ""}), vec!["/pattern"]),
        (json!({"pattern": 3}), vec!["/pattern"]),
        (json!({"pattern": "*", "path": false}), vec!["/path"]),
        (json!({"pattern": "*", "max_depth": 3}), vec!["/max_depth"]),
    ] {
        assert_bad_args(&f.call("glob", args).await, &pointers);
    }
}

#[tokio::test]
async fn direct_calls_are_confined_too() {
    let f = Fixture::new();
    tree(&f);
    let args = |pattern: &str, path: Option<&str>| GlobArgs {
        pattern: pattern.into(),
        path: path.map(Into::into),
    };
    let o = Glob.call(args("src/*.rs", None), f.ctx()).await.unwrap();
    assert_eq!(paths(&o), ["src/lib.rs"]);
    for (pattern, path) in [
        ("../outside/*", None),
        ("/etc/passwd", None),
        ("*", Some("..")),
        ("*", Some("/etc")),
    ] {
        let e = Glob.call(args(pattern, path), f.ctx()).await.unwrap_err();
        assert_eq!(
            e.reason.as_deref(),
            Some("path_outside_workspace"),
            "{pattern} {path:?}: {e}"
        );
    }
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(f.session.workspace().unwrap().read_only())
        .cancellation(token)
        .build();
    let e = Glob.call(args("**/*", None), ctx).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
}
