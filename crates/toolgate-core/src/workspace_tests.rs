use super::*;
use std::os::unix::fs::symlink;

struct Fixture {
    _tmp: tempfile::TempDir,
    t: PathBuf,
    ws: Workspace,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().to_path_buf();
    std::fs::create_dir_all(t.join("ws/sub/deep")).unwrap();
    std::fs::create_dir_all(t.join("outside")).unwrap();
    std::fs::create_dir_all(t.join("ws-evil")).unwrap();
    std::fs::write(t.join("outside/secret.txt"), "CANARY-OUT").unwrap();
    std::fs::write(t.join("ws/a.txt"), "a").unwrap();
    let ws = Workspace::open(t.join("ws")).unwrap();
    Fixture { _tmp: tmp, t, ws }
}

fn ok(ws: &Workspace, p: &str) -> String {
    ws.resolve(p)
        .unwrap_or_else(|e| panic!("{p}: {e}"))
        .display()
}

fn outside(ws: &Workspace, p: &str) {
    match ws.resolve(p) {
        Err(PathError::Outside(_)) => {}
        other => panic!("{p}: expected Outside, got {other:?}"),
    }
}

#[test]
fn plain_relative_paths_resolve() {
    let f = fixture();
    assert_eq!(ok(&f.ws, "a.txt"), "a.txt");
    assert_eq!(ok(&f.ws, "./sub/../a.txt"), "a.txt");
    assert_eq!(ok(&f.ws, ""), ".");
    assert_eq!(ok(&f.ws, "."), ".");
    assert_eq!(ok(&f.ws, "sub/deep/"), "sub/deep");
    assert_eq!(ok(&f.ws, "new/dir/file.txt"), "new/dir/file.txt");
    assert_eq!(ok(&f.ws, "missing/../a.txt"), "a.txt");
}

#[test]
fn dotdot_above_root_is_outside() {
    let f = fixture();
    outside(&f.ws, "..");
    outside(&f.ws, "../outside/secret.txt");
    outside(&f.ws, "sub/../../outside/secret.txt");
    outside(&f.ws, "sub/deep/../../../ws/a.txt");
}

#[test]
fn absolute_paths_only_under_root() {
    let f = fixture();
    let inside = f.t.join("ws/a.txt");
    assert_eq!(ok(&f.ws, inside.to_str().unwrap()), "a.txt");
    outside(&f.ws, "/etc/passwd");
    outside(&f.ws, f.t.join("outside/secret.txt").to_str().unwrap());
    // prefix sibling: T/ws-evil is not under T/ws
    outside(&f.ws, f.t.join("ws-evil/x").to_str().unwrap());
}

#[test]
fn symlinks_are_followed_and_checked() {
    let f = fixture();
    symlink("../outside/secret.txt", f.t.join("ws/notes.txt")).unwrap();
    symlink("../outside", f.t.join("ws/out")).unwrap();
    symlink(f.t.join("outside"), f.t.join("ws/abs_out")).unwrap();
    symlink("sub/deep", f.t.join("ws/in")).unwrap();
    symlink(f.t.join("ws/sub"), f.t.join("ws/abs_in")).unwrap();
    symlink("../outside/not-yet.txt", f.t.join("ws/dangling")).unwrap();
    outside(&f.ws, "notes.txt");
    outside(&f.ws, "out/secret.txt");
    outside(&f.ws, "out/new.txt");
    outside(&f.ws, "abs_out/secret.txt");
    outside(&f.ws, "dangling");
    assert_eq!(ok(&f.ws, "in/x.txt"), "sub/deep/x.txt");
    assert_eq!(ok(&f.ws, "in/../a.txt"), "sub/a.txt");
    assert_eq!(ok(&f.ws, "abs_in/deep"), "sub/deep");
}

#[test]
fn symlink_loops_are_refused() {
    let f = fixture();
    symlink("loop2", f.t.join("ws/loop1")).unwrap();
    symlink("loop1", f.t.join("ws/loop2")).unwrap();
    assert!(matches!(
        f.ws.resolve("loop1/x"),
        Err(PathError::SymlinkLoop(_))
    ));
}

#[test]
fn encodings_are_literal_names() {
    let f = fixture();
    assert_eq!(
        ok(&f.ws, "%2e%2e%2foutside%2fsecret.txt"),
        "%2e%2e%2foutside%2fsecret.txt"
    );
    assert_eq!(
        ok(&f.ws, "..\\outside\\secret.txt"),
        "..\\outside\\secret.txt"
    );
    assert!(matches!(f.ws.resolve("a.txt\0.md"), Err(PathError::Nul)));
}

#[test]
fn root_given_through_a_symlink() {
    let f = fixture();
    symlink(f.t.join("ws"), f.t.join("link-to-ws")).unwrap();
    let ws = Workspace::open(f.t.join("link-to-ws")).unwrap();
    assert_eq!(
        ok(&ws, f.t.join("link-to-ws/a.txt").to_str().unwrap()),
        "a.txt"
    );
    assert_eq!(ok(&ws, f.t.join("ws/a.txt").to_str().unwrap()), "a.txt");
}

#[test]
fn read_only_view_refuses_writes() {
    let f = fixture();
    assert!(f.ws.writable_dir().is_ok());
    let ro = f.ws.read_only();
    assert_eq!(
        ro.writable_dir().unwrap_err().kind,
        crate::ErrorKind::PermissionDenied
    );
}

#[test]
fn cap_std_refuses_an_escape_swapped_in_after_resolution() {
    let f = fixture();
    let p = f.ws.resolve("sub/secret.txt").unwrap();
    // swap sub for a link to outside after the check
    std::fs::rename(f.t.join("ws/sub"), f.t.join("ws/sub-real")).unwrap();
    symlink("../outside", f.t.join("ws/sub")).unwrap();
    let err = f.ws.dir().open(p.as_path()).unwrap_err();
    let te = io_error(&p.display(), &err);
    assert_eq!(te.reason.as_deref(), Some("path_outside_workspace"), "{te}");
}

#[test]
fn state_files_are_never_opened_through_links_or_fifos() {
    use std::io::Write;
    let f = fixture();
    // a plain state file is created and appended to
    let mut log = f.ws.open_state_file(".toolgate", "audit.jsonl").unwrap();
    log.write_all(b"one\n").unwrap();
    drop(log);
    f.ws.open_state_file(".toolgate", "audit.jsonl")
        .unwrap()
        .write_all(b"two\n")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(f.t.join("ws/.toolgate/audit.jsonl")).unwrap(),
        "one\ntwo\n"
    );
    assert!(f.ws.state_dir(".toolgate").unwrap().ends_with(".toolgate"));

    // a symlinked log file, in or out of the workspace, is refused
    symlink(
        "../../outside/secret.txt",
        f.t.join("ws/.toolgate/out.jsonl"),
    )
    .unwrap();
    symlink("../a.txt", f.t.join("ws/.toolgate/in.jsonl")).unwrap();
    assert!(f.ws.open_state_file(".toolgate", "out.jsonl").is_err());
    assert!(f.ws.open_state_file(".toolgate", "in.jsonl").is_err());
    assert_eq!(
        std::fs::read_to_string(f.t.join("outside/secret.txt")).unwrap(),
        "CANARY-OUT"
    );
    assert_eq!(std::fs::read_to_string(f.t.join("ws/a.txt")).unwrap(), "a");

    // a symlinked state directory is refused
    std::fs::create_dir(f.t.join("victim")).unwrap();
    symlink("../victim", f.t.join("ws/.state")).unwrap();
    assert!(f.ws.open_state_file(".state", "audit.jsonl").is_err());
    assert!(f.ws.state_dir(".state").is_err());
    assert!(!f.t.join("victim/audit.jsonl").exists());

    // a FIFO does not hang the open
    let fifo = f.t.join("ws/.toolgate/fifo.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    assert!(f.ws.open_state_file(".toolgate", "fifo.jsonl").is_err());

    // names must be plain
    for (d, n) in [
        ("../x", "a"),
        (".toolgate", "../a"),
        ("", "a"),
        (".toolgate", "a/b"),
        ("/tmp", "a"),
    ] {
        assert!(f.ws.open_state_file(d, n).is_err(), "{d:?} {n:?}");
    }
}

/// toolgate's state directory keeps itself out of git: a `.gitignore` of `*` is put there
/// when it has none (so the store, logs and quarantined entries are not untracked files in
/// the user's `git status`), never over one that exists, and never through a planted link.
#[test]
fn the_state_directory_is_ignored_by_git() {
    let f = fixture();
    f.ws.state_dir(".toolgate").unwrap();
    let ignore = f.t.join("ws/.toolgate/.gitignore");
    let text = std::fs::read_to_string(&ignore).unwrap();
    assert!(text.lines().any(|l| l == "*"), "{text}");
    // the user's own is kept
    std::fs::write(&ignore, "audit.jsonl\n").unwrap();
    f.ws.open_state_file(".toolgate", "audit.jsonl").unwrap();
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "audit.jsonl\n");
    // a link planted at its place is not written through
    std::fs::remove_file(&ignore).unwrap();
    symlink("../../outside/ignored.txt", &ignore).unwrap();
    f.ws.state_dir(".toolgate").unwrap();
    assert!(!f.t.join("outside/ignored.txt").exists());
}

/// `[files] read_hard_links`: the patterns reach the workspace they were given to, also when
/// it was already shared (a clone keeps what it had); none by default.
#[test]
fn hard_link_reads_are_where_the_operator_said() {
    use crate::pattern::{MatchMode, PathPattern};
    let f = fixture();
    let glob = || vec![PathPattern::parse("node_modules/.pnpm", MatchMode::Grant).unwrap()];
    let linked = Path::new("node_modules/.pnpm/x/index.js");
    assert!(!f.ws.reads_hard_link(linked));
    let shared = f.ws.clone();
    let ws = f.ws.clone().with_hard_link_reads(glob()).unwrap();
    assert!(ws.reads_hard_link(linked) && ws.read_only().reads_hard_link(linked));
    assert!(!ws.reads_hard_link(Path::new("src/index.js")));
    assert!(!shared.reads_hard_link(linked));
    let alone = Workspace::open(f.t.join("ws")).unwrap();
    assert!(alone
        .with_hard_link_reads(glob())
        .unwrap()
        .reads_hard_link(linked));
}

/// The path as the call names it: `.` and `..` taken lexically, no link followed; `None` for
/// NUL, a path leading out lexically, or an absolute path outside the root.
#[test]
fn lexical_paths_name_the_link_not_its_target() {
    let f = fixture();
    symlink("sub/deep", f.t.join("ws/link")).unwrap();
    let lex = |p: &str| f.ws.lexical(p).map(|w| w.display());
    assert_eq!(lex("link/x.txt").as_deref(), Some("link/x.txt"));
    assert_eq!(ok(&f.ws, "link/x.txt"), "sub/deep/x.txt");
    assert_eq!(lex("./sub/../link").as_deref(), Some("link"));
    assert_eq!(lex(".").as_deref(), Some("."));
    assert_eq!(lex("sub/..").as_deref(), Some("."));
    let abs = f.t.join("ws/link").display().to_string();
    assert_eq!(lex(&abs).as_deref(), Some("link"));
    for bad in ["..", "sub/../../x", "a\0b", "/etc/passwd"] {
        assert_eq!(lex(bad), None, "{bad:?}");
    }
    let out = f.t.join("outside/secret.txt").display().to_string();
    assert_eq!(lex(&out), None);
}
