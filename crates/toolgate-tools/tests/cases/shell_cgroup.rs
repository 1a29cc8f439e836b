//! A run's cgroup, where the machine gives toolgate one (`sandbox_report().cgroup`): the
//! shell is in it before the command runs, a spawner is stopped at `pids.max` and a memory hog
//! at the memory cap, both reported to the model, the command can neither leave the cgroup
//! nor raise its limits, and nothing of the run (process or cgroup) is left after it.
//!
//! Each test is skipped, saying why, where no cgroup is writable. Every spawner here is
//! bounded on its own (a fixed count of `sleep`s), so a machine without the cgroup sees at
//! most that.

use super::shell_support::*;
use serde_json::json;
use std::path::Path;
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::shell::run_shell::{RunShellArgs, RunShellOutput};
use toolgate_tools::shell::{sandbox_report, CgroupSite, RunShell, ShellConfig};

/// The machine's cgroup site, or `None` (printing why the test is skipped).
fn site() -> Option<CgroupSite> {
    let site = sandbox_report().cgroup;
    if site.is_none() {
        eprintln!(
            "skipped: this machine gives run_shell no cgroup (not root, no delegated cgroup v2 \
             subtree, or no pids controller)"
        );
    }
    site
}

/// A configuration with `processes` and `memory` as a run's limits.
fn limited(processes: u64, memory: Option<u64>) -> ShellConfig {
    let mut config = ShellConfig::default();
    config.limits.run_processes = Some(processes);
    config.limits.run_memory_bytes = memory;
    config
}

async fn direct(s: &Shell, config: ShellConfig, args: serde_json::Value) -> RunShellOutput {
    let args: RunShellArgs = serde_json::from_value(args).unwrap();
    RunShell::new(config)
        .call(args, s.ctx())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The shell prints the name of its own cgroup (the pids one) first.
const PRINT_CGROUP: &str = "n=$( (grep -m1 ':pids:' /proc/$$/cgroup || grep -m1 '^0::' \
                            /proc/$$/cgroup) | cut -d: -f3); n=${n##*/}; echo \"cg=$n\"";

/// The run's cgroup name from output that holds `cg=NAME`.
fn cgroup_name(text: &str) -> String {
    let start = text.find("cg=").expect("the cgroup's name is printed") + 3;
    let name: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    assert!(name.starts_with("toolgate-run-"), "{text}");
    name
}

/// Whether a process whose command line is exactly `args` runs anywhere on the machine.
fn running(args: &[&str]) -> bool {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted))
}

fn gone(dir: &Path) {
    assert!(!dir.exists(), "{} was left behind", dir.display());
}

/// The shell is in the run's cgroup from its first instruction, with the configured limits,
/// and the cgroup is gone once the call returns.
#[tokio::test]
async fn the_shell_runs_in_a_cgroup_of_its_own_with_the_limits() {
    let Some(site) = site() else { return };
    let s = Shell::new();
    let memory_file = |m: &Path| {
        if site.version == 2 {
            m.join("$n/memory.max")
        } else {
            m.join("$n/memory.limit_in_bytes")
        }
    };
    let mut command = format!("{PRINT_CGROUP}; cat {}/$n/pids.max", site.pids.display());
    if let Some(m) = &site.memory {
        command.push_str(&format!("; cat {}", memory_file(m).display()));
    }
    let o = direct(
        &s,
        limited(77, Some(96 << 20)),
        json!({ "command": command }),
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let name = cgroup_name(&o.stdout);
    let mut lines = o.stdout.lines().skip(1);
    assert_eq!(lines.next(), Some("77"), "{o:?}");
    if site.memory.is_some() {
        assert_eq!(lines.next(), Some(&*(96u64 << 20).to_string()), "{o:?}");
    }
    assert!(o.limits_exceeded.is_empty(), "{o:?}");
    gone(&site.pids.join(&name));
    if let Some(m) = &site.memory {
        gone(&m.join(&name));
    }
}

/// The command cannot move itself out of its cgroup nor raise its limit (read-only mounts,
/// Landlock, no capabilities), even as root.
#[tokio::test]
async fn the_command_cannot_leave_its_cgroup_nor_raise_its_limits() {
    let Some(site) = site() else { return };
    let s = Shell::new();
    let root = site.pids.display();
    let command = format!(
        "{PRINT_CGROUP}; echo $$ > {root}/cgroup.procs && echo MOVED; \
         echo max > {root}/$n/pids.max && echo RAISED; mkdir {root}/mine && echo MADE; \
         cat {root}/$n/pids.max"
    );
    let o = direct(&s, limited(50, None), json!({ "command": command })).await;
    for escaped in ["MOVED", "RAISED", "MADE"] {
        assert!(!o.stdout.contains(escaped), "{escaped}: {o:?}");
    }
    assert!(o.stdout.ends_with("50\n"), "{o:?}");
    assert!(!site.pids.join("mine").exists());
}

/// A spawner of 2000 processes is held at `pids.max` (64): the kernel refuses its forks, the
/// timeout stops it, the model reads that the limit was hit, and afterwards none of its
/// processes runs and its cgroup is gone.
#[tokio::test]
async fn a_spawner_is_held_at_the_process_limit_and_reported() {
    let Some(site) = site() else { return };
    let s = Shell::new();
    let command = format!("{PRINT_CGROUP}; for i in $(seq 2000); do sleep 7.0371 & done; wait");
    let args: RunShellArgs =
        serde_json::from_value(json!({ "command": command, "timeout_ms": 3000 })).unwrap();
    let e = RunShell::new(limited(64, None))
        .call(args, s.ctx())
        .await
        .expect_err("the spawner runs until its timeout");
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::OutcomeUnknown, Some("timeout")),
        "{e}"
    );
    assert!(
        e.message.contains(
            "Limit exceeded: the command tried to run more than 64 processes at once (threads \
             included), the limit of one run"
        ),
        "{e}"
    );
    assert!(e.message.contains("start fewer processes at a time"), "{e}");
    let name = cgroup_name(&e.message);
    gone(&site.pids.join(&name));
    assert!(
        !running(&["sleep", "7.0371"]),
        "a sleep of the spawner survived"
    );
}

/// A run that finishes after its forks were refused is a normal result that says so.
#[tokio::test]
async fn refused_forks_of_a_finished_run_are_in_its_result() {
    let Some(_) = site() else { return };
    let s = Shell::new();
    // bash retries a refused fork for a while, then gives up on that command
    let command = "for i in $(seq 40); do sleep 2.0173 & done; wait; echo done";
    let o = direct(
        &s,
        limited(16, None),
        json!({ "command": command, "timeout_ms": 60000 }),
    )
    .await;
    assert_eq!(o.limits_exceeded.len(), 1, "{o:?}");
    assert!(
        o.limits_exceeded[0].contains("more than 16 processes at once")
            && o.limits_exceeded[0].contains("the kernel refused"),
        "{o:?}"
    );
    let value = serde_json::to_value(&o).unwrap();
    assert!(value["limits_exceeded"].is_array(), "{value}");
    assert!(!running(&["sleep", "2.0173"]));
}

/// A process that allocates past the run's memory cap (64 MiB) is killed by the kernel and
/// the result says so, as are processes that pass it only together; a run under it is not.
#[tokio::test]
async fn a_memory_hog_is_killed_at_the_cap_and_reported() {
    let Some(site) = site() else { return };
    if site.memory.is_none() {
        eprintln!("skipped: the cgroup site has no memory controller");
        return;
    }
    let s = Shell::new();
    // the command substitution's subshell holds 300 MB in one bash string
    let hog = "v=$(head -c 300000000 /dev/zero | tr '\\0' a); echo \"got ${#v}\"";
    let o = direct(
        &s,
        limited(512, Some(64 << 20)),
        json!({ "command": hog, "timeout_ms": 60000 }),
    )
    .await;
    assert!(!o.stdout.contains("got 300000000"), "{o:?}");
    assert_eq!(o.limits_exceeded.len(), 1, "{o:?}");
    assert!(
        o.limits_exceeded[0].contains("killed (SIGKILL) for using more than 64 MiB of memory"),
        "{o:?}"
    );
    // four processes of 30 MB each, every one far under its own RLIMIT_AS, add up past it
    let many = "for i in 1 2 3 4; do (v=$(head -c 30000000 /dev/zero | tr '\\0' a); sleep 1) & \
                done; wait; echo end";
    let o = direct(
        &s,
        limited(512, Some(64 << 20)),
        json!({ "command": many, "timeout_ms": 60000 }),
    )
    .await;
    assert_eq!(o.limits_exceeded.len(), 1, "{o:?}");
    assert!(
        o.limits_exceeded[0].contains("64 MiB of memory together"),
        "{o:?}"
    );
    assert!(o.stderr.contains("Killed"), "{o:?}");
    let small = "v=$(head -c 1000000 /dev/zero | tr '\\0' a); echo \"got ${#v}\"";
    let o = direct(
        &s,
        limited(512, Some(64 << 20)),
        json!({ "command": small }),
    )
    .await;
    assert_eq!(o.stdout, "got 1000000\n", "{o:?}");
    assert!(o.limits_exceeded.is_empty(), "{o:?}");
}

/// Without a cgroup (a report that has none) the run goes on as before: no cgroup, no
/// mention of one.
#[tokio::test]
async fn without_a_cgroup_the_run_is_as_before() {
    let s = Shell::new();
    let mut report = sandbox_report();
    report.cgroup = None;
    let args: RunShellArgs =
        serde_json::from_value(json!({ "command": "cat /proc/$$/cgroup" })).unwrap();
    let o = RunShell::new(limited(64, None))
        .with_sandbox_report(report)
        .call(args, s.ctx())
        .await
        .unwrap();
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(!o.stdout.contains("toolgate-run-"), "{o:?}");
    assert!(o.limits_exceeded.is_empty());
}

/// A machine that gave a cgroup at start but cannot make this run's (here: its directory is
/// gone) refuses the run rather than run it unbounded, unless unsandboxed runs are allowed.
#[tokio::test]
async fn a_cgroup_that_cannot_be_made_refuses_the_run_unless_unsandboxed_is_allowed() {
    let Some(mut site) = site() else { return };
    let s = Shell::new();
    site.pids = s.t.join("no-such-cgroup");
    site.memory = None;
    let mut report = sandbox_report();
    report.cgroup = Some(site);
    let args = || -> RunShellArgs {
        serde_json::from_value(json!({ "command": "touch ran.txt" })).unwrap()
    };
    let e = RunShell::new(ShellConfig::default())
        .with_sandbox_report(report.clone())
        .call(args(), s.ctx())
        .await
        .expect_err("no cgroup, no run");
    assert_eq!(
        (e.kind, e.reason.as_deref()),
        (ErrorKind::ToolFailed, Some("sandbox_failed")),
        "{e}"
    );
    assert!(
        e.message.contains("could not make the run's cgroup")
            && e.message.contains("the command did not run"),
        "{e}"
    );
    assert!(!exists(s.ws().join("ran.txt")));
    let mut config = ShellConfig::default();
    config.allow_unsandboxed = true;
    let o = RunShell::new(config)
        .with_sandbox_report(report)
        .call(args(), s.ctx())
        .await
        .unwrap();
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert!(exists(s.ws().join("ran.txt")));
}

/// The next line of a program's output, within 20 s.
async fn next_line(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> String {
    tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
        .await
        .expect("the program answers")
        .unwrap()
        .expect("a line")
}

/// A sandboxed long-running program (an upstream MCP server) gets a cgroup with a run's
/// limits too; dropping its handle kills everything in it, a background child included, and
/// removes it.
#[tokio::test]
async fn a_sandboxed_program_has_a_cgroup_that_goes_with_its_handle() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let Some(site) = site() else { return };
    let s = Shell::new();
    let script = format!(
        "{PRINT_CGROUP}; sleep 30.0219 & cat {}/$n/pids.max; wait",
        site.pids.display()
    );
    let mut p = toolgate_tools::shell::SandboxedProcess::spawn(
        &limited(40, None),
        &sandbox_report(),
        &s.ws(),
        Path::new("/bin/sh"),
        &["-c".to_string(), script],
    )
    .await
    .unwrap();
    let mut lines = BufReader::new(p.child.stdout.take().unwrap()).lines();
    let name = cgroup_name(&next_line(&mut lines).await);
    assert_eq!(next_line(&mut lines).await, "40");
    assert!(site.pids.join(&name).is_dir());
    // the background sleep may not have exec'd yet on a loaded machine
    let seen_within = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !running(&["sleep", "30.0219"]) {
        assert!(
            std::time::Instant::now() < seen_within,
            "the sleep never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(p);
    let gone_within = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while site.pids.join(&name).exists() && std::time::Instant::now() < gone_within {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    gone(&site.pids.join(&name));
    assert!(!running(&["sleep", "30.0219"]));
}

/// A real fork bomb, run only once a run of the same configuration was proven to be in a
/// cgroup with `pids.max` 64 (so it is bounded on this shared machine): it is held at the
/// limit, stopped at its timeout, reported, and leaves nothing behind.
#[tokio::test]
async fn a_fork_bomb_is_held_at_the_process_limit() {
    let Some(site) = site() else { return };
    let s = Shell::new();
    let config = || limited(64, Some(256 << 20));
    let proof = format!("{PRINT_CGROUP}; cat {}/$n/pids.max", site.pids.display());
    let o = direct(&s, config(), json!({ "command": proof })).await;
    assert!(
        o.stdout.contains("cg=toolgate-run-") && o.stdout.ends_with("\n64\n"),
        "not proven bounded, so the bomb is not run: {o:?}"
    );
    let bomb = format!("{PRINT_CGROUP}; bomb() {{ bomb | bomb & }}; bomb; sleep 5");
    let args: RunShellArgs =
        serde_json::from_value(json!({ "command": bomb, "timeout_ms": 2000 })).unwrap();
    let started = std::time::Instant::now();
    let e = RunShell::new(config())
        .call(args, s.ctx())
        .await
        .expect_err("the bomb runs until its timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_eq!(e.reason.as_deref(), Some("timeout"), "{e}");
    assert!(e.message.contains("more than 64 processes at once"), "{e}");
    gone(&site.pids.join(cgroup_name(&e.message)));
}
