//! Walks over trees that hold links out of the workspace and hostile ignore files: no content
//! and no name from outside reaches a result, and no walk blocks or reads without end.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::Duration;
use toolgate_tools::fs::glob::GlobOutput;
use toolgate_tools::fs::list_dir::{EntryKind, ListDirOutput};
use toolgate_tools::search::search_code::SearchCodeOutput;

/// A workspace with links out of it at several depths, to a directory and to a file.
fn linked_tree() -> Fixture {
    let f = Fixture::new();
    f.write("src/a.txt", "inside CANARY-IN\n");
    f.link("../outside", "link");
    f.link(f.t.join("outside"), "abs-link");
    f.link("../../outside/secret.txt", "src/leak.txt");
    f.link("../../outside", "src/deep-link");
    f.link("a.txt", "src/alias.txt");
    f
}

#[tokio::test]
async fn search_code_never_reads_through_links_out() {
    let f = linked_tree();
    for args in [
        json!({"pattern": "CANARY"}),
        json!({"pattern": "CANARY", "glob": "**/secret.txt"}),
        json!({"pattern": "canary-out", "case_sensitive": false, "context": 3}),
        json!({"pattern": "CANARY", "path": "src"}),
        json!({"pattern": "OUT", "glob": "*.txt", "literal": true}),
    ] {
        let r = f.call("search_code", args.clone()).await;
        assert_no_canary(&r);
        let o: SearchCodeOutput = out(&r);
        let paths: Vec<&str> = o.matches.iter().map(|m| m.path.as_str()).collect();
        assert!(paths.iter().all(|p| *p == "src/a.txt"), "{args}: {paths:?}");
    }
    let o: SearchCodeOutput = out(&f.call("search_code", json!({"pattern": "CANARY"})).await);
    // links are not followed, not even inside the workspace; only the real file is searched
    assert_eq!(o.files_searched, 1);
    assert_eq!(o.total_matches, 1);
}

#[tokio::test]
async fn glob_never_lists_names_from_outside() {
    let f = linked_tree();
    for pattern in ["**/*", "**/secret.txt", "link/*", "*/*", "**"] {
        let r = f.call("glob", json!({"pattern": pattern})).await;
        assert_no_canary(&r);
        let o: GlobOutput = out(&r);
        assert!(
            o.paths.iter().all(|p| !p.contains("secret")),
            "{pattern}: {:?}",
            o.paths
        );
    }
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/*"})).await);
    // the links themselves are entries of the workspace and are listed by their own names
    assert_eq!(
        o.paths,
        [
            "abs-link",
            "link",
            "src/a.txt",
            "src/alias.txt",
            "src/deep-link",
            "src/leak.txt"
        ]
    );
}

#[tokio::test]
async fn list_dir_reports_links_without_looking_at_their_targets() {
    let f = linked_tree();
    let o: ListDirOutput = out(&f.call("list_dir", json!({"path": "src"})).await);
    let kinds: Vec<(&str, EntryKind, Option<u64>)> = o
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.kind, e.size))
        .collect();
    assert_eq!(
        kinds,
        [
            ("a.txt", EntryKind::File, Some(17)),
            ("alias.txt", EntryKind::Symlink, None),
            ("deep-link", EntryKind::Symlink, None),
            ("leak.txt", EntryKind::Symlink, None),
        ]
    );
    for path in ["link", "abs-link", "src/deep-link", "src/leak.txt"] {
        assert_outside(&f.call("list_dir", json!({"path": path})).await);
    }
}

#[tokio::test]
async fn hostile_ignore_files_are_skipped_not_read() {
    let f = Fixture::new();
    f.write("ok/a.txt", "needle\n");
    f.write("zero/b.txt", "needle\n");
    f.link("/dev/zero", "zero/.gitignore");
    f.write("fifo/c.txt", "needle\n");
    let status = std::process::Command::new("mkfifo")
        .arg(f.ws().join("fifo/.ignore"))
        .status()
        .unwrap();
    assert!(status.success());
    f.write("out/d.txt", "needle\n");
    f.link("../../outside/secret.txt", "out/.gitignore");
    let search = f.call("search_code", json!({"pattern": "needle"}));
    let r = tokio::time::timeout(Duration::from_secs(20), search)
        .await
        .expect("the walk must not block");
    assert_no_canary(&r);
    let o: SearchCodeOutput = out(&r);
    let paths: Vec<&str> = o.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["ok/a.txt"]);
    assert_eq!(o.warnings.len(), 3, "{:?}", o.warnings);
    assert!(
        o.warnings
            .iter()
            .all(|w| w.starts_with("skipped directory ")),
        "{:?}",
        o.warnings
    );
    assert!(
        o.warnings
            .iter()
            .all(|w| !w.contains(f.t.to_str().unwrap())),
        "no host path: {:?}",
        o.warnings
    );
    let glob = f.call("glob", json!({"pattern": "**/*.txt"}));
    let r = tokio::time::timeout(Duration::from_secs(20), glob)
        .await
        .expect("the walk must not block");
    let o: GlobOutput = out(&r);
    assert_eq!(o.paths, ["ok/a.txt"]);
    // given as the base, such a directory is walked without its ignore files
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "needle", "path": "zero"}))
        .await);
    assert_eq!(o.matches.len(), 1);
    assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
    // as an ancestor of the base, its ignore file is not applied and a warning says so
    f.write("out/sub/e.txt", "needle\n");
    let o: GlobOutput = out(&f
        .call("glob", json!({"pattern": "*.txt", "path": "out/sub"}))
        .await);
    assert_eq!(o.paths, ["out/sub/e.txt"]);
    assert!(
        o.warnings
            .iter()
            .any(|w| w.starts_with("out/.gitignore was not applied")),
        "{:?}",
        o.warnings
    );
}

#[tokio::test]
async fn special_files_in_a_tree_are_not_searched() {
    let f = Fixture::new();
    f.write("a.txt", "needle\n");
    let status = std::process::Command::new("mkfifo")
        .arg(f.ws().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let search = f.call("search_code", json!({"pattern": "needle"}));
    let r = tokio::time::timeout(Duration::from_secs(20), search)
        .await
        .expect("a FIFO must not block the search");
    let o: SearchCodeOutput = out(&r);
    assert_eq!((o.files_searched, o.total_matches), (1, 1));
}

/// A directory nested past the system's path length: the walks skip what they cannot read,
/// keep the rest, and their warning names the first path skipped (shortened) and why, so a
/// model knows where to look instead of guessing.
#[tokio::test]
async fn a_tree_deeper_than_the_system_allows_is_reported_by_path_and_reason() {
    let f = Fixture::new();
    f.write("top.txt", "needle\n");
    // created handle by handle: a single path this long cannot be given to `mkdir`
    let mut dir = cap_std::fs::Dir::open_ambient_dir(f.ws(), cap_std::ambient_authority()).unwrap();
    for _ in 0..700 {
        dir.create_dir("deeper").unwrap();
        dir = dir.open_dir("deeper").unwrap();
    }
    dir.write("bottom.txt", "needle\n").unwrap();
    let expect = |warnings: &[String]| {
        let w = warnings
            .iter()
            .find(|w| w.contains("could not be read"))
            .unwrap_or_else(|| panic!("no warning of the skipped directory: {warnings:?}"));
        assert!(w.contains("(the first: deeper/deeper/"), "{w}");
        assert!(w.contains("characters): File name too long)"), "{w}");
        assert!(!w.contains("os error"), "{w}");
        assert!(w.chars().count() < 300, "{w}");
    };
    let o: SearchCodeOutput = out(&f.call("search_code", json!({"pattern": "needle"})).await);
    assert_eq!(o.matches[0].path, "top.txt");
    expect(&o.warnings);
    let o: GlobOutput = out(&f.call("glob", json!({"pattern": "**/*.txt"})).await);
    assert_eq!(o.paths, ["top.txt"]);
    expect(&o.warnings);
}
