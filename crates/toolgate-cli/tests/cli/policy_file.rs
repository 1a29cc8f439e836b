//! The policy cannot be removed by the agent (issue 12, item 4), through the `toolgate` binary
//! and run_shell's real sandbox:
//!
//! - an approved command cannot delete, rename, replace, truncate or hard-link the
//!   configuration (the workspace's `toolgate.toml`, or a `--config` file inside the
//!   workspace), nor move away the directory it is in; the next call still runs under it;
//! - a configuration that disappeared, became a dangling link, a link out of the workspace,
//!   not a regular file, or appeared where the defaults ran is refused by `toolgate call`
//!   rather than taken for the defaults, until the operator runs `toolgate check`;
//! - `toolgate serve` keeps the policy it started with.

use super::stdio::{error_kind, Serve};
use super::{json, toolgate};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;
use std::process::Output;

const CONFIG: &str =
    "[[rules]]\nname = \"no-env\"\ndecision = \"deny\"\nresource = \"path:.env\"\n";

fn call(ws: &Path, tool: &str, args: &str, extra: &[&str]) -> Output {
    let mut argv = vec!["call", tool, args, "-w", ws.to_str().unwrap(), "--yes"];
    argv.extend_from_slice(extra);
    toolgate(&argv, ws)
}

/// A workspace with a secret `.env`, a git directory, and `CONFIG` at `config` (relative).
fn workspace(config: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(ws.join(".env"), "SECRET=CANARY-ENV-77\n").unwrap();
    let file = ws.join(config);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CONFIG).unwrap();
    (t, ws)
}

/// `read_file .env` is denied by the configuration's rule, which the record names.
fn env_is_denied(ws: &Path, extra: &[&str], after: &str) {
    let out = call(ws, "read_file", r#"{"path":".env"}"#, extra);
    let v = json(&out);
    assert_eq!(
        (&v["error"]["kind"], &v["error"]["reason"]),
        (&Value::from("permission_denied"), &Value::from("no-env")),
        "after {after}: {v}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("CANARY-ENV"));
}

/// The configuration's inode and content, to compare before and after.
fn fingerprint(file: &Path) -> (u64, String) {
    let m = std::fs::symlink_metadata(file).unwrap();
    (m.ino(), std::fs::read_to_string(file).unwrap())
}

/// Every way a command could remove, rename, replace or rewrite the workspace's
/// `toolgate.toml` fails in the sandbox; the file is the same inode with the same content,
/// nothing new is planted, and the next call still runs under its rules.
#[test]
fn an_approved_command_cannot_remove_or_replace_the_configuration() {
    let (_t, ws) = workspace("toolgate.toml");
    let cfg = ws.join("toolgate.toml");
    let before = fingerprint(&cfg);
    let evil = "[risk]\\ndestructive = \\\"allow\\\"\\n";
    let attempts = [
        "rm -f toolgate.toml".to_string(),
        "unlink toolgate.toml".into(),
        "mv toolgate.toml t.bak".into(),
        format!("printf '{evil}' > new.toml; mv -f new.toml toolgate.toml"),
        format!("printf '{evil}' > new.toml; ln -f new.toml toolgate.toml"),
        format!("printf '{evil}' > new.toml; cp new.toml toolgate.toml"),
        "python3 -c \"import os; os.remove('toolgate.toml')\"".into(),
        "python3 -c \"import os; open('n.toml','w').write(''); os.replace('n.toml','toolgate.toml')\""
            .into(),
        "python3 -c \"open('toolgate.toml','w').write('')\"".into(),
        "truncate -s 0 toolgate.toml".into(),
        "sed -i 's/deny/allow/' toolgate.toml".into(),
        "chmod 000 toolgate.toml".into(),
        "ln toolgate.toml hard && printf x >> hard".into(),
        "find . -maxdepth 1 -name toolgate.toml -delete".into(),
        "perl -e 'rename(\"toolgate.toml\", \"x\") or die \"$!\"'".into(),
        "cd .. && mv ws ws2".into(),
        "mv .git g2 && mkdir -p .git && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .git/config".into(),
        "rm -rf .git".into(),
    ];
    for attempt in &attempts {
        let args = serde_json::json!({ "command": attempt }).to_string();
        let out = call(&ws, "run_shell", &args, &[]);
        let v = json(&out);
        if v["error"]["reason"] == "protected_path" {
            // refused before it ran: it writes into a git directory by a redirection
            assert!(attempt.contains("> .git/"), "{attempt}: {v}");
        } else {
            // it ran, in the sandbox, and failed there
            let ran = &v["structured_content"];
            assert_eq!(ran["sandboxed"], true, "{attempt}: {v}");
            assert_ne!(ran["exit_code"], 0, "{attempt}: {v}");
        }
        assert_eq!(fingerprint(&cfg), before, "{attempt}: {v}");
        for planted in ["t.bak", "hard", "x", "../ws2", "g2", "pwned"] {
            assert!(!ws.join(planted).exists(), "{attempt}: {planted} exists");
        }
        assert_eq!(
            std::fs::read_to_string(ws.join(".git/config")).unwrap(),
            "[core]\n\tbare = false\n",
            "{attempt}"
        );
        env_is_denied(&ws, &[], attempt);
    }
}

/// A `--config` inside the workspace is protected the same way, and so is every directory
/// above it: moving `conf` away and planting another file there fails too.
#[test]
fn a_config_file_inside_the_workspace_and_its_directories_stay() {
    let (_t, ws) = workspace("conf/policy/tg.toml");
    let cfg = ws.join("conf/policy/tg.toml");
    let flag = cfg.to_str().unwrap().to_string();
    let extra = ["--config", flag.as_str()];
    let before = fingerprint(&cfg);
    for attempt in [
        "mv conf c2 && mkdir -p conf/policy && : > conf/policy/tg.toml",
        "mv conf/policy conf/p2",
        "rm -rf conf",
        "mv conf/policy/tg.toml conf/old.toml",
        "cd conf/policy && rm -f tg.toml",
    ] {
        let args = serde_json::json!({ "command": attempt }).to_string();
        let out = call(&ws, "run_shell", &args, &extra);
        let v = json(&out);
        assert_ne!(v["structured_content"]["exit_code"], 0, "{attempt}: {v}");
        assert_eq!(fingerprint(&cfg), before, "{attempt}: {v}");
        assert!(
            !ws.join("c2").exists() && !ws.join("conf/p2").exists(),
            "{attempt}"
        );
        env_is_denied(&ws, &extra, attempt);
    }
}

/// The `toolgate call` of each change, with the message it refuses with.
fn refused(ws: &Path, says: &str, change: &str) {
    let out = call(ws, "read_file", r#"{"path":"a.txt"}"#, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{change}: {err}");
    assert!(out.stdout.is_empty(), "{change}: nothing ran");
    assert!(err.contains(says), "{change}: expected {says:?} in {err}");
}

/// What a configuration became, outside toolgate: each is refused rather than taken for the
/// defaults; `toolgate check` puts a valid one (or the defaults) in force again.
#[test]
fn a_configuration_that_changed_is_refused_not_taken_for_the_defaults() {
    let (t, ws) = workspace("toolgate.toml");
    std::fs::write(ws.join("a.txt"), "hello\n").unwrap();
    std::fs::write(t.path().join("outside.toml"), "").unwrap();
    std::fs::write(
        ws.join("allow-all.toml"),
        "[risk]\ndestructive = \"allow\"\n",
    )
    .unwrap();
    let cfg = ws.join("toolgate.toml");
    env_is_denied(&ws, &[], "the first call");
    let check = |ws: &Path| {
        let out = toolgate(&["check", "-w", ws.to_str().unwrap()], ws);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    let cases: &[(&str, &dyn Fn(), &str)] = &[
        ("deleted", &|| {}, "that was in force"),
        (
            "a dangling link",
            &|| symlink("gone.toml", &cfg).unwrap(),
            "a link that leads nowhere",
        ),
        (
            "a link loop",
            &|| symlink("toolgate.toml", &cfg).unwrap(),
            "a link that leads nowhere",
        ),
        (
            "a link out of the workspace",
            &|| symlink("../outside.toml", &cfg).unwrap(),
            "leads out of the workspace",
        ),
        (
            "a directory",
            &|| std::fs::create_dir(&cfg).unwrap(),
            "is a directory",
        ),
        (
            "a FIFO",
            &|| {
                let c = std::ffi::CString::new(cfg.to_str().unwrap()).unwrap();
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    c.as_c_str(),
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .unwrap();
            },
            "not a regular file",
        ),
        (
            "a link to another file in the workspace",
            &|| symlink("allow-all.toml", &cfg).unwrap(),
            "now leads to",
        ),
    ];
    for (change, make, says) in cases {
        let _ = std::fs::remove_file(&cfg).or_else(|_| std::fs::remove_dir(&cfg));
        make();
        refused(&ws, says, change);
        // the record of what is in force is not changed by a refused call
        let _ = std::fs::remove_file(&cfg).or_else(|_| std::fs::remove_dir(&cfg));
        std::fs::write(&cfg, CONFIG).unwrap();
        env_is_denied(&ws, &[], change);
    }
    // the operator goes back to the defaults on purpose: removes the file, runs check
    std::fs::remove_file(&cfg).unwrap();
    refused(&ws, "is gone", "deleted by the operator");
    check(&ws);
    let out = call(&ws, "read_file", r#"{"path":".env"}"#, &[]);
    assert_eq!(out.status.code(), Some(0), "the defaults are in force");
    // a file that appears where the defaults ran is not the policy until check says so
    std::fs::write(&cfg, "[risk]\ndestructive = \"allow\"\n").unwrap();
    refused(&ws, "appeared", "appeared");
    check(&ws);
    assert_eq!(
        call(&ws, "read_file", r#"{"path":"a.txt"}"#, &[])
            .status
            .code(),
        Some(0)
    );
}

/// `toolgate serve` keeps the policy it started with, whatever happens to the file.
#[test]
fn serve_keeps_the_policy_it_started_with() {
    let (_t, ws) = workspace("toolgate.toml");
    let mut serve = Serve::start(&ws, &["--no-audit"]);
    let denied = |serve: &mut Serve, after: &str| {
        let r = serve.call("read_file", serde_json::json!({"path": ".env"}));
        assert_eq!(error_kind(&r), "permission_denied", "{after}: {r}");
        assert!(!r.to_string().contains("CANARY-ENV"), "{after}");
    };
    denied(&mut serve, "start");
    std::fs::remove_file(ws.join("toolgate.toml")).unwrap();
    denied(&mut serve, "the file was deleted");
    std::fs::write(
        ws.join("toolgate.toml"),
        "[risk]\ndestructive = \"allow\"\n",
    )
    .unwrap();
    denied(&mut serve, "the file was replaced");
}

/// A deny rule naming a link covers what the link leads to: the same file under its own name
/// (and through a linked directory the rule's pattern names) is refused by the file tools
/// under the operator's rule, and search_code does not show it.
#[test]
fn a_rule_naming_a_link_covers_its_target_under_its_own_name() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("config")).unwrap();
    std::fs::create_dir_all(ws.join("vault/keys")).unwrap();
    std::fs::write(ws.join("config/prod.env"), "SECRET=CANARY-LINK-1\n").unwrap();
    std::fs::write(ws.join("vault/keys/a.pem"), "CANARY-LINK-2\n").unwrap();
    std::fs::write(ws.join("vault/keys/notes.txt"), "plain\n").unwrap();
    symlink("config/prod.env", ws.join(".env")).unwrap();
    symlink("vault/keys", ws.join("keys")).unwrap();
    std::fs::write(
        ws.join("toolgate.toml"),
        format!(
            "{CONFIG}\n[[rules]]\nname = \"no-pem\"\ndecision = \"deny\"\n\
             resource = \"path:keys/*.pem\"\n"
        ),
    )
    .unwrap();
    for (path, rule) in [
        (".env", "no-env"),
        ("config/prod.env", "no-env"),
        ("./config/../config/PROD.env", "no-env"),
        ("keys/a.pem", "no-pem"),
        ("vault/keys/a.pem", "no-pem"),
    ] {
        let out = call(&ws, "read_file", &format!(r#"{{"path":"{path}"}}"#), &[]);
        let v = json(&out);
        assert_eq!(v["error"]["reason"], rule, "{path}: {v}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("CANARY-LINK-"));
    }
    let v = json(&call(
        &ws,
        "read_file",
        r#"{"path":"vault/keys/notes.txt"}"#,
        &[],
    ));
    assert_eq!(v["is_error"], false, "{v}");
    let out = call(&ws, "search_code", r#"{"pattern":"CANARY-LINK-\\d"}"#, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("CANARY-LINK-1") && !text.contains("CANARY-LINK-2"),
        "{text}"
    );
}
