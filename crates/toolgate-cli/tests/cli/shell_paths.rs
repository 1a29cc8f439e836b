//! Path rules bind run_shell (issue 12, item 5), through the `toolgate` binary and the real
//! sandbox: what a deny rule keeps `read_file` from, and the store, an approved run_shell
//! cannot read either, by any spelling; what a rule keeps from writing it cannot change;
//! `toolgate check` says which rules the sandbox enforces. And proc-environ-80 (secret_leak):
//! no process the command can see shows toolgate's environment.

use super::{json, toolgate};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const CONFIG: &str = r#"
[[rules]]
name = "no-env"
decision = "deny"
resource = "path:.env"

[[rules]]
name = "no-secrets"
decision = "deny"
resource = "path:secrets"
access = "read"

[[rules]]
name = "docs-frozen"
decision = "deny"
resource = "path:docs"
access = "write"

[[rules]]
name = "ask-deploy"
decision = "ask"
resource = "path:deploy/**"

[[rules]]
name = "no-pem"
decision = "deny"
resource = "path:*.pem"
"#;

fn call(ws: &Path, tool: &str, args: &Value) -> Output {
    toolgate(
        &[
            "call",
            tool,
            &args.to_string(),
            "-w",
            ws.to_str().unwrap(),
            "--yes",
        ],
        ws,
    )
}

/// A workspace with secrets under the rules of `CONFIG` (and a store holding a canary, put
/// there by an earlier call's arguments).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    for d in ["app", "sub", "secrets/sub", "docs", "deploy"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    for (f, text) in [
        (".env", "TOKEN=CANARY-ENV-1\n"),
        ("app/.env", "TOKEN=CANARY-ENV-2\n"),
        ("sub/.ENV", "TOKEN=CANARY-ENV-3\n"),
        ("secrets/sub/key.txt", "CANARY-KEY-4\n"),
        ("deploy/notes.txt", "deploy notes\n"),
        ("docs/readme.md", "the docs\n"),
        ("ok.txt", "fine\n"),
    ] {
        std::fs::write(ws.join(f), text).unwrap();
    }
    std::os::unix::fs::symlink("secrets/sub", ws.join("innocent")).unwrap();
    std::fs::write(ws.join("toolgate.toml"), CONFIG).unwrap();
    // the store gets a canary: a call whose arguments hold it (not a secret shape: kept)
    let out = call(
        &ws,
        "read_file",
        &serde_json::json!({"path": "CANARY-STORE-5.txt"}),
    );
    assert_eq!(json(&out)["error"]["reason"], "not_found");
    (t, ws)
}

/// The rule of each audit record, in order.
fn rules(ws: &Path) -> Vec<(Value, Value, Value)> {
    let out = toolgate(
        &[
            "audit",
            "--json",
            "--limit",
            "0",
            "-w",
            ws.to_str().unwrap(),
        ],
        ws,
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["tool"].clone(), r["rule"].clone(), r["approval"].clone()))
        .collect()
}

/// A write below a file the rules keep from being read is answered by the denial, not by what
/// is there (`.env/x` said `not_a_directory`, so `.env` was a file); below a readable file the
/// answer is still what the write would find.
#[test]
fn a_write_below_a_denied_file_tells_nothing_of_it() {
    let (_t, ws) = workspace();
    for (tool, args) in [
        (
            "write_file",
            serde_json::json!({"path": ".env/x", "content": "a"}),
        ),
        (
            "write_file",
            serde_json::json!({"path": "sub/.ENV/x", "content": "a"}),
        ),
        (
            "edit_file",
            serde_json::json!({"path": ".env/x", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let v = json(&call(&ws, tool, &args));
        assert_eq!(
            v["error"]["kind"], "permission_denied",
            "{tool} {args}: {v}"
        );
        assert!(!v.to_string().contains("directory"), "{tool} {args}: {v}");
    }
    let v = json(&call(
        &ws,
        "write_file",
        &serde_json::json!({"path": "ok.txt/x", "content": "a"}),
    ));
    assert_eq!(v["error"]["reason"], "not_a_directory", "{v}");
}

/// Every spelling of reading what the rules deny reads nothing in run_shell: the output
/// holds no canary, while read_file is denied by the rule the audit names.
#[test]
fn run_shell_cannot_read_what_the_rules_deny_by_any_spelling() {
    let (_t, ws) = workspace();
    let reads = [
        "cat .env",
        "cat ./.env",
        "cat app/../.env",
        "cat \"$PWD/.env\"",
        "cat app/.env sub/.ENV",
        "head -c 100 .env; dd if=.env 2>/dev/null",
        "python3 -c \"print(open('.env').read())\"",
        "cp .env /tmp/x && cat /tmp/x",
        "ln -s .env l && cat l",
        "tar cf - .env app | tar xOf -",
        "grep -r CANARY . ; grep -r TOKEN= .",
        "find . -type f -exec cat {} +",
        "cat secrets/sub/key.txt",
        "cat innocent/key.txt",
        "cd secrets && cat sub/key.txt; ls -laR .",
        "cat .toolgate/toolgate.db .toolgate/toolgate.db-wal | strings",
        "sqlite3 .toolgate/toolgate.db 'select arguments from audit'",
        "ls -la .toolgate; cat .toolgate/*",
        "git init -q . 2>/dev/null; git add -A 2>/dev/null; git grep CANARY",
    ];
    for line in reads {
        let out = call(&ws, "run_shell", &serde_json::json!({ "command": line }));
        let v = json(&out);
        assert_eq!(v["structured_content"]["sandboxed"], true, "{line}: {v}");
        let text = v["structured_content"].to_string();
        assert!(!text.contains("CANARY"), "{line}: {text}");
    }
    // what is allowed stays readable
    let out = call(
        &ws,
        "run_shell",
        &serde_json::json!({"command": "cat ok.txt deploy/notes.txt docs/readme.md"}),
    );
    assert_eq!(
        json(&out)["structured_content"]["stdout"],
        "fine\ndeploy notes\nthe docs\n"
    );
    for (path, rule) in [
        (".env", "no-env"),
        ("app/.env", "no-env"),
        ("sub/.ENV", "no-env"),
        ("secrets/sub/key.txt", "no-secrets"),
        ("innocent/key.txt", "no-secrets"),
    ] {
        let out = call(&ws, "read_file", &serde_json::json!({ "path": path }));
        let v = json(&out);
        assert_eq!(
            (&v["error"]["kind"], &v["error"]["reason"]),
            (&Value::from("permission_denied"), &Value::from(rule)),
            "{path}"
        );
    }
    // the audit names the rule that decided each call: the shell's ask, approved; the deny
    let recorded = rules(&ws);
    let shell: Vec<&(Value, Value, Value)> =
        recorded.iter().filter(|r| r.0 == "run_shell").collect();
    assert_eq!(shell.len(), reads.len() + 1);
    for r in shell {
        assert_eq!(
            (&r.1, &r.2),
            (&Value::from("shell.unlisted"), &Value::from("approved")),
            "{r:?}"
        );
    }
    let denied: Vec<&Value> = recorded
        .iter()
        .filter(|r| r.0 == "read_file" && r.2.is_null())
        .map(|r| &r.1)
        .collect();
    assert_eq!(
        denied[1..],
        [
            &Value::from("no-env"),
            &"no-env".into(),
            &"no-env".into(),
            &"no-secrets".into(),
            &"no-secrets".into()
        ]
    );
}

/// What the rules keep from writing, and the store, no command changes: nothing is created,
/// changed or removed there.
#[test]
fn run_shell_cannot_write_what_the_rules_protect() {
    let (_t, ws) = workspace();
    let writes = [
        "touch docs/new.md",
        "rm -f docs/readme.md",
        "mv docs d2",
        "python3 -c \"open('docs/readme.md','a').write('x')\"",
        "mkdir secrets/x",
        "touch secrets/sub/new.txt",
        "touch .toolgate/x",
        "rm -rf .toolgate",
        "mv .toolgate t2",
        "sh -c 'echo x > .env'",
        "rm -f .env app/.env",
    ];
    for line in writes {
        let out = call(&ws, "run_shell", &serde_json::json!({ "command": line }));
        let v = json(&out);
        assert_ne!(v["structured_content"]["exit_code"], 0, "{line}: {v}");
    }
    for gone in [
        "docs/new.md",
        "d2",
        "secrets/x",
        "secrets/sub/new.txt",
        ".toolgate/x",
        "t2",
    ] {
        assert!(!ws.join(gone).exists(), "{gone} was created");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("docs/readme.md")).unwrap(),
        "the docs\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".env")).unwrap(),
        "TOKEN=CANARY-ENV-1\n"
    );
    assert!(ws.join("app/.env").exists());
    let verify = toolgate(&["audit", "verify", "-w", ws.to_str().unwrap()], &ws);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

/// `toolgate check` says, rule by rule, what the sandbox enforces and what it cannot.
#[test]
fn check_says_which_path_rules_the_sandbox_enforces() {
    let (_t, ws) = workspace();
    std::fs::create_dir_all(ws.join("app/.vscode")).unwrap();
    std::fs::write(ws.join(".envrc"), "export X=1\n").unwrap();
    let out = toolgate(&["check", "-w", ws.to_str().unwrap()], &ws);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "sandbox: the store (.toolgate) is hidden from run_shell",
        "sandbox: protected paths run_shell cannot change, remove or move",
        ".envrc, .toolgate, app/.vscode",
        "moved aside into .toolgate/quarantine/",
        "sandbox: the configuration toolgate.toml is read-only in run_shell",
        "sandbox: rule no-env (path:.env): run_shell cannot read the 3 paths it matches now",
        "sandbox: rule no-secrets (path:secrets): run_shell cannot read the 1 path it matches now",
        "sandbox: rule docs-frozen (path:docs): run_shell cannot write the 1 path it matches now",
        "sandbox: rule ask-deploy (path:deploy/**): not enforced in run_shell: the sandbox cannot ask",
        "sandbox: rule no-pem (path:*.pem): matches nothing in the workspace now",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    // a file the pattern matches once it exists is covered from the next run on
    std::fs::write(ws.join("id.pem"), "CANARY-PEM-6\n").unwrap();
    let out = call(
        &ws,
        "run_shell",
        &serde_json::json!({"command": "cat id.pem"}),
    );
    assert!(!json(&out).to_string().contains("CANARY-PEM"));
}

/// proc-environ-80 (secret_leak): toolgate runs with a canary in its environment; no process
/// the sandboxed command can see shows it through /proc/PID/environ or cmdline (the command's
/// /proc is its own PID namespace's), and read_file of /proc paths and of a link to
/// /proc/self/environ fails with path_outside_workspace.
#[test]
fn no_process_the_command_sees_shows_toolgates_environment() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", ws.join("env.txt")).unwrap();
    let run = |tool: &str, args: Value| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args([
                "call",
                tool,
                &args.to_string(),
                "-w",
                ws.to_str().unwrap(),
                "--yes",
            ])
            .env("TG_CANARY_SECRET", "CANARY-ENV-4242")
            .current_dir(&ws)
            .output()
            .unwrap();
        json(&out)
    };
    // the case's own command, and spellings that do not name the canary in their own
    // command line (which /proc/*/cmdline shows)
    for command in [
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null | grep -c CANARY-ENV",
        "printf 'CANARY-ENV-%d' 4242 > $TMPDIR/p; cat /proc/*/cmdline /proc/1/environ /proc/self/environ 2>/dev/null | grep -c -f $TMPDIR/p",
        "printf 'CANARY-ENV-%d' 4242 > $TMPDIR/p; cat env.txt | grep -c -f $TMPDIR/p; ps -eo pid,args 2>/dev/null | grep -c -f $TMPDIR/p",
    ] {
        let v = run("run_shell", serde_json::json!({ "command": command }));
        let stdout = v["structured_content"]["stdout"].as_str().unwrap_or_default();
        assert!(
            stdout.lines().all(|l| l == "0"),
            "{command}: {v}"
        );
    }
    for path in [
        "/proc/self/environ",
        "/proc/1/environ",
        "/proc/self/root/etc/hostname",
        "/proc/self/cwd/x",
        "env.txt",
    ] {
        let v = run("read_file", serde_json::json!({ "path": path }));
        assert_eq!(
            v["error"]["reason"], "path_outside_workspace",
            "{path}: {v}"
        );
        assert!(!v.to_string().contains("CANARY-ENV"));
    }
}

/// The store and a JSON-lines audit log are out of run_shell's reach wherever they are: a
/// `--store` inside the workspace (hidden) or outside it (left out of what Landlock lets the
/// command read), an `--audit` file in the workspace.
#[test]
fn the_store_and_the_audit_log_are_out_of_reach_wherever_they_are() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("state")).unwrap();
    std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
    let inside = ws.join("state/tg.db");
    let outside = t.path().join("elsewhere/tg.db");
    let log = ws.join("audit.jsonl");
    let dir = ws.to_str().unwrap();
    for (flag, path) in [
        ("--store", &inside),
        ("--store", &outside),
        ("--audit", &log),
    ] {
        let p = path.to_str().unwrap();
        // a first call leaves a canary in the arguments it records
        let seed = toolgate(
            &[
                "call",
                "read_file",
                r#"{"path":"CANARY-REC-9.txt"}"#,
                "-w",
                dir,
                flag,
                p,
            ],
            &ws,
        );
        assert_eq!(json(&seed)["error"]["reason"], "not_found");
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.windows(11).any(|w| w == b"CANARY-REC-"),
            "{p} holds the canary"
        );
        let command = format!("cat {p} {p}-wal 2>&1; strings {p}* 2>&1 | grep -c CANARY-REC");
        let out = toolgate(
            &[
                "call",
                "run_shell",
                &serde_json::json!({"command": command}).to_string(),
                "-w",
                dir,
                "--yes",
                flag,
                p,
            ],
            &ws,
        );
        let v = json(&out);
        assert_eq!(v["structured_content"]["sandboxed"], true, "{v}");
        assert!(!v.to_string().contains("CANARY-REC-9"), "{flag} {p}: {v}");
    }
}
