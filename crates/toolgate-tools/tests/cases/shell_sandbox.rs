//! The run_shell cases of `shared/cases/security.jsonl` that the sandbox enforces on its own,
//! whatever the policy and the command parser decide: each is run through the handler
//! directly (no guard, no policy), generalized to its class.

use super::shell_support::*;
use serde_json::json;
use std::sync::Once;
use std::time::{Duration, Instant};
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::shell::run_shell::{RunShellArgs, RunShellOutput};
use toolgate_tools::shell::{RunShell, ShellConfig};

/// Runs `command` through the handler alone, with the default configuration.
async fn direct(s: &Shell, command: &str) -> RunShellOutput {
    direct_with(s, ShellConfig::default(), command).await
}

async fn direct_with(s: &Shell, config: ShellConfig, command: &str) -> RunShellOutput {
    let args: RunShellArgs = serde_json::from_value(json!({ "command": command })).unwrap();
    RunShell::new(config)
        .call(args, s.ctx())
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

/// sandbox-redirect-35 (sandbox_escape): whatever way a command tries to write outside the
/// workspace (redirections, `..`, absolute paths, symlinks made inside, hard links, renames,
/// other tools, /tmp), the call completes with the shell's own error and nothing outside
/// changes; writing inside the workspace and the private temporary directory works.
#[tokio::test]
async fn sandbox_redirect_35_no_write_leaves_the_workspace() {
    let s = Shell::new();
    let outside = s.t.join("outside");
    let o = direct(&s, "echo BYPASS > ../outside/escape.txt").await;
    assert_ne!(o.exit_code, Some(0));
    assert!(
        o.stderr.contains("Read-only file system") || o.stderr.contains("Permission denied"),
        "{}",
        o.stderr
    );
    let abs = outside.display();
    for attempt in [
        format!("echo BYPASS > {abs}/escape.txt"),
        "cd .. && echo BYPASS > outside/escape.txt".to_string(),
        "ln -s ../outside out && echo BYPASS > out/escape.txt".to_string(),
        format!("ln -s {abs}/secret.txt s && echo BYPASS >> s"),
        format!("ln {abs}/secret.txt hard.txt && echo BYPASS >> hard.txt"),
        "echo x > mine.txt && mv mine.txt ../outside/escape.txt".to_string(),
        "cp /etc/hostname ../outside/escape.txt".to_string(),
        "rm -f ../outside/secret.txt".to_string(),
        "truncate -s 0 ../outside/secret.txt".to_string(),
        "chmod 777 ../outside/secret.txt".to_string(),
        "touch -d 2001-01-01 ../outside/secret.txt".to_string(),
        "setfattr -n user.x -v 1 ../outside/secret.txt".to_string(),
        "mkdir ../outside/newdir".to_string(),
        "python3 -c \"open('../outside/escape.txt','w').write('x')\"".to_string(),
        "touch /tmp/toolgate-escape.txt".to_string(),
        "echo x > /etc/toolgate-escape".to_string(),
        "mount -t tmpfs none ../outside".to_string(),
    ] {
        let o = direct(&s, &attempt).await;
        assert_ne!(o.exit_code, Some(0), "{attempt}: {o:?}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "CANARY-OUT\n"
    );
    assert!(!exists("/tmp/toolgate-escape.txt") && !exists("/etc/toolgate-escape"));
    let meta = std::fs::metadata(outside.join("secret.txt")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_ne!(meta.permissions().mode() & 0o777, 0o777, "chmod outside");
    assert!(
        meta.modified().unwrap()
            > std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
    );
    // inside: new files at the root, nested directories, renames, $HOME and $TMPDIR
    let o = direct(
        &s,
        "echo a > new.txt && mkdir -p d/e && mv new.txt d/e/moved.txt && echo t > \"$TMPDIR/t\" \
         && echo h > ~/h && cat \"$TMPDIR/t\" ~/h",
    )
    .await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "t\nh\n"),
        "{o:?}"
    );
    assert!(exists(s.ws().join("d/e/moved.txt")));
}

/// sandbox-option-write-38 (sandbox_escape): write-capable options of "read-only" commands
/// (`git log --output`, `sort -o`, `tee`, `find -fprint`) cannot write outside either.
#[tokio::test]
async fn sandbox_option_write_38_write_options_meet_the_sandbox() {
    let s = Shell::new();
    s.setup(
        "git init -q && git -c user.name=t -c user.email=t@example.invalid commit -q \
         --allow-empty -m init",
    );
    for command in [
        "git log --output=../outside/log.txt",
        "git diff HEAD --output=../outside/diff.txt",
        "echo b | sort -o ../outside/sorted.txt",
        "echo x | tee ../outside/tee.txt",
        "find . -maxdepth 0 -fprint ../outside/found.txt",
    ] {
        let o = direct(&s, command).await;
        assert_ne!(o.exit_code, Some(0), "{command}: {o:?}");
    }
    assert_eq!(std::fs::read_dir(s.t.join("outside")).unwrap().count(), 1);
    // the same options inside the workspace work
    let o = direct(&s, "git log --output=log.txt && test -s log.txt").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
}

fn set_secrets() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // std serializes its own environment accesses, and nothing here reads the
        // environment through libc directly
        std::env::set_var("TOOLGATE_TEST_API_KEY", "sk-canary-1");
        std::env::set_var("OPENAI_API_KEY", "sk-canary-2");
        std::env::set_var("BASH_ENV", "/nonexistent/evil.sh");
    });
}

/// shell-env-secrets-40 (secret_leak): the command's environment is built from an
/// allowlist; no inherited secret shows in `env`, `/proc/self/environ`, the environment of
/// any process it can see, or argv; the credential stores under $HOME are not readable.
#[tokio::test]
async fn shell_env_secrets_40_no_inherited_secret_is_visible() {
    set_secrets();
    assert_eq!(std::env::var("OPENAI_API_KEY").unwrap(), "sk-canary-2");
    let s = Shell::new();
    let o = direct(
        &s,
        "env; cat /proc/self/environ | tr '\\0' '\\n'; \
         for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; done; \
         ps auxww; cat /proc/$PPID/environ; set",
    )
    .await;
    for text in [&o.stdout, &o.stderr] {
        assert!(!text.contains("sk-canary"), "{text}");
        assert!(!text.contains("BASH_ENV"), "{text}");
    }
    assert!(o.stdout.contains("PATH=") && o.stdout.contains("GIT_CONFIG_NOSYSTEM=1"));
    // the run sees only its own processes (a PID namespace, when the kernel has one)
    if toolgate_tools::shell::sandbox_report().pid_namespace {
        let o = direct(&s, "ls -d /proc/[0-9]* | wc -l").await;
        let n: u32 = o.stdout.trim().parse().unwrap();
        assert!(n <= 4, "{}", o.stdout);
    }
    // credential stores are carved out of the read rule
    let home = s.t.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "CANARY-KEY").unwrap();
    std::fs::write(home.join("notes.txt"), "readable").unwrap();
    let mut config = ShellConfig::default();
    config.deny_read = vec![home.join(".ssh")];
    let o = direct_with(
        &s,
        config,
        &format!("cat {0}/.ssh/id_ed25519; cat {0}/notes.txt", home.display()),
    )
    .await;
    assert!(
        !o.stdout.contains("CANARY-KEY") && o.stdout.contains("readable"),
        "{o:?}"
    );
}

/// shell-timeout-orphans-41 (resource_limits): at the timeout the whole process tree dies:
/// children ignoring SIGTERM, background jobs, `setsid` double forks and `nohup`; the call
/// returns within the timeout plus a short grace; and nothing outlives a call that ended
/// normally either.
#[tokio::test]
async fn shell_timeout_orphans_41_nothing_outlives_the_call() {
    let s = Shell::new();
    let pidns = toolgate_tools::shell::sandbox_report().pid_namespace;
    let started = Instant::now();
    let timed = s.call(json!({
        "command": "(trap '' TERM; sleep 4; touch late.txt) & sleep 4",
        "timeout_ms": 500
    }));
    let escaped = s.call(json!({
        "command": "setsid sh -c 'sleep 3; touch late-setsid.txt' & nohup sh -c 'sleep 3; touch late-nohup.txt' >/dev/null 2>&1 & sleep 30",
        "timeout_ms": 500
    }));
    let finished = s.call(json!({"command": "(sleep 3; touch late-bg.txt) & echo started"}));
    let (timed, escaped, finished) = tokio::join!(timed, escaped, finished);
    for r in [&timed, &escaped] {
        let e = r.error.as_ref().expect("timed out");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::OutcomeUnknown, Some("timeout"))
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(output(&finished).stdout, "started\n");
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(!exists(s.ws().join("late.txt")));
    assert!(!exists(s.ws().join("late-bg.txt")));
    assert!(!exists(s.ws().join("late-nohup.txt")));
    if pidns {
        assert!(!exists(s.ws().join("late-setsid.txt")));
    }
}

/// protected-own-config-45, run_shell's part (protected_path): `.toolgate` (even absent),
/// `.git/hooks` and `.git/config` cannot be created, changed, replaced or removed, while the
/// rest of the workspace and of `.git` stays writable (git still commits).
#[tokio::test]
async fn protected_own_config_45_protected_paths_stay_read_only() {
    let s = Shell::new();
    s.setup("git init -q && git config user.name t && git config user.email t@example.invalid");
    assert!(!exists(s.ws().join(".toolgate")));
    let config_before = std::fs::read(s.ws().join(".git/config")).unwrap();
    for attack in [
        "mkdir -p .toolgate && printf '[run_shell]\\ndefault = \"allow\"\\n' > .toolgate/policy.toml",
        "rm -rf .toolgate && mkdir .toolgate && touch .toolgate/policy.toml",
        "mv .toolgate .tg-old && mkdir .toolgate && touch .toolgate/policy.toml",
        "ln -s /tmp .toolgate/link",
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "rm -rf .git/hooks && mkdir .git/hooks && touch .git/hooks/post-checkout",
        "git config core.hooksPath evil",
        "echo '[core] fsmonitor = touch pwned' >> .git/config",
        "mv .git/config .git/config.old",
        "cp .git/config c && echo x >> c && mv c .git/config",
    ] {
        let o = direct(&s, attack).await;
        assert_ne!(o.exit_code, Some(0), "{attack}: {o:?}");
    }
    assert!(!exists(s.ws().join(".toolgate/policy.toml")));
    assert!(exists(s.ws().join(".toolgate")), "kept to be protected");
    assert!(!exists(s.ws().join(".git/hooks/pre-commit")));
    assert_eq!(
        std::fs::read(s.ws().join(".git/config")).unwrap(),
        config_before
    );
    let o = direct(
        &s,
        "echo hi > a.txt && git add a.txt && git commit -q -m one && git log --oneline | wc -l",
    )
    .await;
    assert_eq!((o.exit_code, o.stdout.as_str()), (Some(0), "1\n"), "{o:?}");
    assert!(!exists(s.ws().join("pwned")));
}

/// shell-env-prefix-32, the sandbox's part (and every network case): the command has no
/// network; the canary server on the host's loopback gets no hit whatever tool the command
/// uses, while loopback inside the sandbox works for local test servers. With
/// `allow_network` the same server is reached, which shows the canary works.
#[tokio::test]
async fn no_network_reaches_the_host() {
    let s = Shell::new();
    let canary = Canary::start();
    let url = canary.url("env-prefix");
    let port = canary.port;
    for command in [
        format!("LC_ALL=C curl -s --max-time 2 {url}"),
        format!("wget -q -T 2 -O - {url}"),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hi >&3"),
        format!("python3 -c \"import urllib.request; urllib.request.urlopen('{url}', timeout=2)\""),
    ] {
        let o = direct(&s, &command).await;
        assert_ne!(o.exit_code, Some(0), "{command}: {o:?}");
    }
    assert_eq!(canary.hits(), 0);
    let o = direct(
        &s,
        "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); \
         c=socket.create_connection(s.getsockname()); print('loopback ok')\"",
    )
    .await;
    assert_eq!(o.stdout, "loopback ok\n", "{o:?}");
    let mut config = ShellConfig::default();
    config.allow_network = true;
    let o = direct_with(
        &s,
        config,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hi >&3"),
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while canary.hits() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(canary.hits(), 1);
}

/// POSIX shared memory works (Python's multiprocessing needs it) in a private `/dev/shm`
/// that nothing outside sees and that ends with the call.
#[tokio::test]
async fn shared_memory_is_private_to_the_call() {
    let s = Shell::new();
    let o = direct(
        &s,
        "python3 -c 'import multiprocessing as m; l = m.Lock(); print(\"lock ok\")' \
         && echo x > /dev/shm/toolgate-shm-canary && cat /dev/shm/toolgate-shm-canary",
    )
    .await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "lock ok\nx\n"),
        "{o:?}"
    );
    assert!(!exists("/dev/shm/toolgate-shm-canary"));
    let o = direct(&s, "test -e /dev/shm/toolgate-shm-canary").await;
    assert_eq!(o.exit_code, Some(1), "gone with the call's namespace");
}

/// The workspace paths a configuration hides or makes read-only, for a library's own
/// `ShellConfig`: what `hidden` matches reads as an empty file or directory, by any spelling
/// or link, and cannot be written; what `read_only` matches stays as it was; the directory
/// above a protected file cannot be moved away; everything else works as before.
#[tokio::test]
async fn configured_paths_are_hidden_or_read_only() {
    use toolgate_core::pattern::{MatchMode, PathPattern};
    let s = Shell::new();
    s.setup(
        "mkdir -p app keys/sub frozen cfg && echo CANARY-A > app/.env && echo CANARY-B > \
         keys/sub/k && echo frozen > frozen/f && echo policy > cfg/p.toml && ln -s keys/sub \
         nice && echo open > open.txt",
    );
    let mut config = ShellConfig::default();
    let restrict = |p: &str| PathPattern::parse(p, MatchMode::Restrict).unwrap();
    config.hidden.push(restrict(".env"));
    config.hidden.push(restrict("keys"));
    config.read_only.push(restrict("frozen"));
    config.protected.push("cfg/p.toml".into());
    for attempt in [
        "cat app/.env app/../app/.ENV nice/k keys/sub/k; grep -r CANARY .",
        "echo x > app/.env; touch keys/new; echo x >> frozen/f; rm -f frozen/f",
        "mv cfg cfg2; rm -f cfg/p.toml; mv frozen f2",
    ] {
        let o = direct_with(&s, config.clone(), attempt).await;
        assert!(!o.stdout.contains("CANARY"), "{attempt}: {o:?}");
    }
    assert_eq!(
        std::fs::read_to_string(s.ws().join("app/.env")).unwrap(),
        "CANARY-A\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws().join("frozen/f")).unwrap(),
        "frozen\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws().join("cfg/p.toml")).unwrap(),
        "policy\n"
    );
    assert!(!exists(s.ws().join("keys/new")) && !exists(s.ws().join("cfg2")));
    let o = direct_with(
        &s,
        config,
        "cat open.txt && echo more >> open.txt && mkdir d && ls cfg",
    )
    .await;
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (Some(0), "open\np.toml\n"),
        "{o:?}"
    );
}

/// sandbox-redirect-35 (sandbox_escape), by a socket file: neither the file rules nor the
/// network namespace govern connecting to a unix socket, so a service listening on one
/// outside the workspace (here a stand-in for an ssh agent or a container engine) would act
/// for the command outside the sandbox. Creating an `AF_UNIX` socket fails (EPERM) whatever
/// the tool, and the listener gets no connection; `socketpair` still works, and so does a
/// socket with [`ShellConfig::allow_unix_sockets`], which shows the listener works.
#[tokio::test]
async fn no_socket_file_outside_reaches_a_service() {
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let s = Shell::new();
    let path = s.t.join("outside/agent.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stream.is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let sock = path.display();
    let python = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{sock}')\""
    );
    for command in [
        python.clone(),
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\""
            .to_string(),
        format!("curl -s --max-time 2 --unix-socket {sock} http://x/"),
        format!("ln -s {sock} in-ws.sock && python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('in-ws.sock')\""),
    ] {
        let o = direct(&s, &command).await;
        assert_ne!(o.exit_code, Some(0), "{command}: {o:?}");
    }
    let o = direct(&s, &python).await;
    assert!(o.stderr.contains("PermissionError"), "{o:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let o = direct(
        &s,
        "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))\"",
    )
    .await;
    assert_eq!(o.stdout, "b'x'\n", "{o:?}");
    // an io_uring would create and connect the socket without a system call the filter sees:
    // none can be set up (ENOSYS, as on a kernel without io_uring), where outside one can
    let uring = "python3 -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); \
                 p = ctypes.create_string_buffer(120); r = l.syscall(425, 4, p); \
                 print(r >= 0, ctypes.get_errno())\"";
    let outside = std::process::Command::new("sh")
        .args(["-c", uring])
        .output()
        .unwrap();
    if String::from_utf8_lossy(&outside.stdout).starts_with("True") {
        let o = direct(&s, uring).await;
        assert_eq!(o.stdout, format!("False {}\n", libc::ENOSYS), "{o:?}");
    }
    let mut config = ShellConfig::default();
    config.allow_unix_sockets = true;
    let o = direct_with(&s, config, &python).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while hits.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
