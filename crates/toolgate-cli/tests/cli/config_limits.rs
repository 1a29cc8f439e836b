//! Bad configuration is a located error, never a crash or a hang: the configuration table
//! through `toolgate check` and `toolgate serve` (depth, size, devices, FIFOs, links, rule
//! counts, store paths, numbers at their edges), each bounded in time.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long any bad configuration may take to be refused (a debug build on a loaded machine).
const LIMIT: Duration = Duration::from_secs(20);

struct Outcome {
    code: Option<i32>,
    text: String,
}

/// Runs toolgate with `args` in `ws`; kills it past [`LIMIT`] (a hang fails the test). Its
/// output is read while it runs, so a long report never blocks it on a full pipe.
fn run(ws: &Path, args: &[&str]) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(ws)
        .env_remove("TOOLGATE_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = r.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolgate {args:?} hung for {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut text = stdout.join().unwrap();
    text.push_str(&stderr.join().unwrap());
    Outcome {
        code: status.code(),
        text,
    }
}

/// `check` and `serve` both refuse `config` with exit 1 (no abort, no panic) and a problem
/// saying `says`, located at `at` (`file:line:column` ending).
fn refused(ws: &Path, config: &Path, at: &str, says: &str) {
    let c = config.to_str().unwrap();
    let w = ws.to_str().unwrap();
    for args in [
        vec!["check", "--config", c, "--workspace", w],
        vec!["serve", "--config", c, "--workspace", w, "--no-audit"],
    ] {
        let out = run(ws, &args);
        assert_eq!(out.code, Some(1), "{args:?}: {}", out.text);
        assert!(!out.text.contains("panicked"), "{args:?}: {}", out.text);
        let located = format!("{}:{at}", config.display());
        assert!(
            out.text.contains(&located),
            "{args:?}: not at {located}: {}",
            out.text
        );
        assert!(
            out.text.contains(says),
            "{args:?}: not {says:?}: {}",
            out.text
        );
    }
}

fn write(ws: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = ws.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn condition(when: &str) -> String {
    format!("[[rules]]\ndecision = \"deny\"\ntool = \"write_file\"\nwhen = '''{when}'''\n")
}

#[test]
fn conditions_too_deep_for_cedar_are_refused_before_it_parses_them() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    for (name, when, says) in [
        (
            "parens.toml",
            format!("{}true{}", "(".repeat(600), ")".repeat(600)),
            "600 levels deep",
        ),
        (
            "and.toml",
            vec!["context.attributes.a"; 10_000].join(" && "),
            "bytes, more than 8192",
        ),
        (
            "and-short.toml",
            vec!["true"; 1_000].join(" && "),
            "999 operators",
        ),
        (
            "ifs.toml",
            format!(
                "{}true{}",
                "if true then ".repeat(5_000),
                " else false".repeat(5_000)
            ),
            "bytes, more than 8192",
        ),
        (
            "ifs-short.toml",
            format!(
                "{}true{}",
                "if true then ".repeat(300),
                " else false".repeat(300)
            ),
            "300 operators",
        ),
        (
            "sets.toml",
            format!(
                "context.paths.contains({}1{})",
                "[".repeat(50),
                "]".repeat(50)
            ),
            "51 levels deep",
        ),
    ] {
        let config = write(ws, name, condition(&when));
        refused(ws, &config, "4:", says);
    }
}

#[test]
fn files_that_are_not_configurations_are_refused_unread() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let fifo = ws.join("fifo.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let big = write(&ws, "big.toml", format!("# {}\n", "x".repeat(2 << 20)));
    let latin1 = write(&ws, "latin1.toml", b"[budgets]\n# caf\xe9\nmax_calls = 1\n");
    let to_zero = ws.join("to-zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &to_zero).unwrap();
    let looped = ws.join("loop.toml");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let deep = write(
        &ws,
        "deep.toml",
        format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );
    for (config, at, says) in [
        (PathBuf::from("/dev/zero"), "1:1", "not a regular file"),
        (PathBuf::from("/dev/urandom"), "1:1", "not a regular file"),
        (fifo, "1:1", "not a regular file"),
        (ws.clone(), "1:1", "a directory"),
        (to_zero, "1:1", "leads out of the workspace"),
        (looped, "1:1", "leads nowhere"),
        (big, "1:1", "larger than the limit of 1048576 bytes"),
        (latin1, "1:1", "not UTF-8"),
        (deep, "1:", "recursion"),
    ] {
        refused(&ws, &config, at, says);
    }
    // the workspace's own toolgate.toml as a dangling link: a problem, not the defaults
    std::os::unix::fs::symlink(t.path().join("gone.toml"), ws.join("toolgate.toml")).unwrap();
    let out = run(&ws, &["check", "--workspace", ws.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", out.text);
    assert!(
        out.text
            .contains("toolgate.toml:1:1: the configuration is a link that leads nowhere"),
        "{}",
        out.text
    );
}

#[test]
fn rules_past_the_limit_are_refused_quickly() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let rule = |i: usize| format!("[[rules]]\ndecision = \"deny\"\nresource = \"path:d{i}/**\"\n");
    let limit: String = (0..1_000).map(rule).collect();
    let config = write(ws, "limit.toml", &limit);
    let out = run(ws, &["check", "--config", config.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "1,000 rules are fine: {}", out.text);
    for n in [1_001, 15_000] {
        let text: String = (0..n).map(rule).collect();
        let config = write(ws, &format!("rules-{n}.toml"), &text);
        let started = Instant::now();
        // rule 1,000 (the first past the limit) is on line 3,001
        refused(ws, &config, "3001:", "more than the limit of 1000");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

#[test]
fn store_paths_serve_cannot_open_are_refused_and_no_directory_is_made() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("a-dir")).unwrap();
    std::fs::write(ws.join("not-a-db"), "hello, not SQLite\n").unwrap();
    std::os::unix::fs::symlink(ws.join("elsewhere.db"), ws.join("link.db")).unwrap();
    for (store, says) in [
        (
            "missing/deeper/toolgate.db",
            "does not exist: create it first",
        ),
        ("/nonexistent-toolgate-dir/x.db", "does not exist"),
        ("a-dir", "is a directory"),
        ("a-dir/", "does not name a file"),
        ("..", "does not name a file"),
        ("/dev/null", "a FIFO, socket or device"),
        ("link.db", "a symbolic link"),
        ("not-a-db", "not a database"),
        // refused at load as another user, by the open as root (access(2) lets root write)
        ("/proc/version", "cannot"),
    ] {
        let config = write(&ws, "store.toml", format!("[store]\npath = \"{store}\"\n"));
        refused(&ws, &config, "2:8", says);
    }
    assert!(!ws.join("missing").exists(), "no directory was created");
    // an existing directory is fine, and the store is made there
    let config = write(&ws, "store.toml", "[store]\npath = \"a-dir/s.db\"\n");
    let out = run(
        &ws,
        &[
            "call",
            "list_dir",
            "{}",
            "--config",
            config.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.text);
    assert!(ws.join("a-dir/s.db").is_file());
    // the workspace's own .toolgate is made for a store named in it
    let config = write(
        &ws,
        "store.toml",
        "[store]\npath = \".toolgate/named.db\"\n",
    );
    let out = run(
        &ws,
        &[
            "call",
            "list_dir",
            "{}",
            "--config",
            config.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.text);
    assert!(ws.join(".toolgate/named.db").is_file());
}

#[test]
fn numbers_at_their_edges_are_located_errors() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    for (text, at, says) in [
        ("[limits]\ntimeout_ms = 0\n", "2:14", "above 0"),
        ("[budgets]\nmax_calls = -1\n", "2:13", "invalid value"),
        (
            "[limits]\ntimeout_ms = 18446744073709551616\n",
            "2:",
            "integer",
        ),
        ("[limits]\nmax_result_bytes = 1e400\n", "2:", ""),
        (
            "[approvals]\nalways_expires = \"1000000y\"\n",
            "2:18",
            "100 years",
        ),
        (
            "[approvals]\nmax_expires = \"0s\"\n",
            "2:15",
            "shorter than one second",
        ),
    ] {
        let config = write(ws, "numbers.toml", text);
        refused(ws, &config, at, says);
    }
}

#[test]
fn an_unset_token_variable_is_said_loudly() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    let config = write(
        ws,
        "token.toml",
        "[server]\ntoken_env = \"TOOLGATE_TEST_UNSET_TOKEN\"\n",
    );
    let c = config.to_str().unwrap();
    let out = run(ws, &["check", "--config", c]);
    assert_eq!(out.code, Some(0), "{}", out.text);
    assert!(
        out.text
            .contains("WARNING: token_env names TOOLGATE_TEST_UNSET_TOKEN"),
        "{}",
        out.text
    );
    // serve says so on stderr before it serves; stopped once it did
    let mut serve = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "serve",
            "--config",
            c,
            "--no-audit",
            "--http",
            "127.0.0.1:0",
            "--workspace",
        ])
        .arg(ws)
        .env_remove("TOOLGATE_TEST_UNSET_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(serve.stderr.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + LIMIT;
    while !seen.contains("serving MCP at") && Instant::now() < deadline {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(
        seen.contains(
            "WARNING: server.token_env names TOOLGATE_TEST_UNSET_TOKEN, which is not set"
        ),
        "{seen}"
    );
}
