//! `list_dir` through the pipeline and directly.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::fs::list_dir::{DirEntryInfo, EntryKind, ListDirArgs, ListDirOutput};
use toolgate_tools::ListDir;

fn entry(name: &str, kind: EntryKind, size: Option<u64>) -> DirEntryInfo {
    DirEntryInfo {
        name: name.into(),
        kind,
        size,
    }
}

#[tokio::test]
async fn lists_entries_sorted_with_kind_and_size() {
    let f = Fixture::new();
    f.write("b.txt", "12345");
    f.write(".hidden", "");
    f.write("a/inner.txt", "x");
    f.write("Z.md", "z");
    f.link("b.txt", "link-in");
    f.link("../outside/secret.txt", "link-out");
    f.link("../outside", "dir-out");
    let want = ListDirOutput {
        path: ".".into(),
        entries: vec![
            entry(".hidden", EntryKind::File, Some(0)),
            entry("Z.md", EntryKind::File, Some(1)),
            entry("a", EntryKind::Dir, None),
            entry("b.txt", EntryKind::File, Some(5)),
            entry("dir-out", EntryKind::Symlink, None),
            entry("link-in", EntryKind::Symlink, None),
            entry("link-out", EntryKind::Symlink, None),
        ],
        total_entries: 7,
        truncated: false,
    };
    let r = f.call("list_dir", json!({})).await;
    assert_eq!(out::<ListDirOutput>(&r), want);
    let r = f.call("list_dir", json!({"path": "."})).await;
    assert_eq!(out::<ListDirOutput>(&r), want);
    assert_no_canary(&r);
    let r = f.call("list_dir", json!({"path": "a"})).await;
    assert_eq!(
        out::<ListDirOutput>(&r),
        ListDirOutput {
            path: "a".into(),
            entries: vec![entry("inner.txt", EntryKind::File, Some(1))],
            total_entries: 1,
            truncated: false,
        }
    );
}

#[tokio::test]
async fn other_kinds_are_reported_as_other() {
    let f = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(f.ws().join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    let o: ListDirOutput = out(&f.call("list_dir", json!({})).await);
    assert_eq!(o.entries, vec![entry("fifo", EntryKind::Other, None)]);
}

#[tokio::test]
async fn big_directories_are_capped_at_1000_sorted_entries() {
    let f = Fixture::new();
    for i in (0..1205).rev() {
        f.write(&format!("many/f{i:05}"), "");
    }
    let o: ListDirOutput = out(&f.call("list_dir", json!({"path": "many"})).await);
    assert_eq!(o.total_entries, 1205);
    assert!(o.truncated);
    let names: Vec<String> = o.entries.iter().map(|e| e.name.clone()).collect();
    let want: Vec<String> = (0..1000).map(|i| format!("f{i:05}")).collect();
    assert_eq!(names, want);
}

#[tokio::test]
async fn files_and_missing_paths_are_refused() {
    let f = Fixture::new();
    f.write("a.txt", "a");
    let r = f.call("list_dir", json!({"path": "a.txt"})).await;
    assert_err(&r, ErrorKind::ToolFailed, Some("not_a_directory"));
    assert_not_found(&f.call("list_dir", json!({"path": "nope"})).await);
}

#[tokio::test]
async fn bad_arguments_name_their_pointer() {
    let f = Fixture::new();
    for (args, pointers) in [
        (json!({"path": 1}), vec!["/path"]),
        (json!({"path": ""}), vec!["/path"]),
        (json!({"path": {"a": 1}}), vec!["/path"]),
        (json!({"recursive": true}), vec!["/recursive"]),
    ] {
        assert_bad_args(&f.call("list_dir", args).await, &pointers);
    }
}

#[tokio::test]
async fn direct_calls_are_confined_too() {
    let f = Fixture::new();
    f.write("x/y.txt", "y");
    f.link("../outside", "out");
    let o = ListDir
        .call(
            ListDirArgs {
                path: Some("x".into()),
            },
            f.ctx(),
        )
        .await
        .unwrap();
    assert_eq!(o.entries, vec![entry("y.txt", EntryKind::File, Some(1))]);
    for bad in ["out", "..", "../outside", &f.abs("outside"), "/etc"] {
        let e = ListDir
            .call(
                ListDirArgs {
                    path: Some(bad.into()),
                },
                f.ctx(),
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.reason.as_deref(),
            Some("path_outside_workspace"),
            "{bad}: {e}"
        );
    }
}
