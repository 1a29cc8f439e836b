//! Stopping a run at its timeout or cancellation, so that its script starts no other step.
//!
//! The shell is the first process of the run's process group (and, with a PID namespace, PID 1
//! of it, which the kernel shields from every signal but SIGKILL and SIGSTOP when the sender
//! is outside the namespace: a SIGTERM would be dropped and the script would go on with its
//! next step). The sequence:
//!
//! 1. SIGSTOP to the whole group: the script and everything it started are frozen, so no step
//!    starts from here on;
//! 2. the group's members are read from `/proc`: each one (but the shell) that ignores
//!    SIGTERM is killed at once, since it would not stop for it (`trap '' TERM`, `nohup`);
//! 3. SIGTERM to the group, then SIGCONT to each member but the shell: the commands the script
//!    was running end, or run their own clean-up, while the script itself stays stopped and
//!    never sees them end;
//! 4. once none of them is left (checked every 10 ms) or the grace has passed, SIGKILL to the
//!    shell and the group. With a PID namespace, the shell's death ends every process of the
//!    run, `setsid` ones included.
//!
//! [`stop`] says what was done, in words that are true for the run, for the model's message.

use rustix::process::{Pid, Signal};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// How often the group is checked during the grace.
const POLL: Duration = Duration::from_millis(10);

/// Stops the run whose shell is `child`, the leader of process group `pgid` (see the module
/// docs), giving the commands it runs up to `grace` to end on SIGTERM. `pid_namespace` says
/// whether every process of the run dies with the shell: it is PID 1 of its own namespace, or
/// the run's cgroup is emptied right after (`cgroup.rs`). Returns the shell's exit status and a
/// sentence saying what happened to the run.
pub(crate) async fn stop(
    child: &mut tokio::process::Child,
    pgid: Option<Pid>,
    grace: Duration,
    pid_namespace: bool,
) -> (std::io::Result<ExitStatus>, String) {
    let Some(pgid) = pgid else {
        // no pid: the shell is already gone
        return (child.wait().await, "the shell had already ended".into());
    };
    let group = |signal| {
        // ESRCH: nothing left in the group
        let _ = rustix::process::kill_process_group(pgid, signal);
    };
    group(Signal::STOP);
    // a stopped process takes no signal but SIGKILL until it is continued, so what ignores
    // SIGTERM can be found and killed before anything runs again
    let mut ignoring = 0usize;
    let members = members(pgid);
    for m in &members {
        if m.ignores_term {
            let _ = rustix::process::kill_process(m.pid, Signal::KILL);
            ignoring += 1;
        }
    }
    group(Signal::TERM);
    for m in members.iter().filter(|m| !m.ignores_term) {
        let _ = rustix::process::kill_process(m.pid, Signal::CONT);
    }
    let deadline = Instant::now() + grace;
    let outlived_grace = loop {
        if members_running(pgid) == 0 {
            break false;
        }
        if Instant::now() >= deadline {
            break true;
        }
        tokio::time::sleep(POLL).await;
    };
    let _ = rustix::process::kill_process(pgid, Signal::KILL);
    group(Signal::KILL);
    let status = child.wait().await;
    let mut what = String::from(
        "the script was halted at once, so it started no further step; the commands it was \
         running were sent SIGTERM",
    );
    match ignoring {
        0 => {}
        1 => what.push_str(" (1 process that ignores SIGTERM was killed at once)"),
        n => what.push_str(&format!(
            " ({n} processes that ignore SIGTERM were killed at once)"
        )),
    }
    if outlived_grace {
        what.push_str(&format!(
            ", and whatever was left after {} ms was killed",
            grace.as_millis()
        ));
    }
    what.push_str(if pid_namespace {
        "; no process of the command is left"
    } else {
        "; no process of its process group is left (this machine has no PID namespace for \
         run_shell, so a process that left the group with setsid may still run)"
    });
    (status, what)
}

/// A process of the run's group, other than the shell.
struct Member {
    pid: Pid,
    ignores_term: bool,
}

/// The members of process group `pgid` other than its leader that have not exited, as
/// `/proc` shows them.
fn members(pgid: Pid) -> Vec<Member> {
    let mut out = Vec::new();
    scan(pgid, |pid| {
        out.push(Member {
            pid,
            ignores_term: ignores_term(pid),
        })
    });
    out
}

/// How many members of `pgid` other than its leader are still running (not zombies).
fn members_running(pgid: Pid) -> usize {
    let mut n = 0;
    scan(pgid, |_| n += 1);
    n
}

/// Calls `f` with every process of group `pgid` but its leader that is not a zombie.
fn scan(pgid: Pid, mut f: impl FnMut(Pid)) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        if pid == pgid {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        else {
            continue;
        };
        if let Some((state, group)) = parse_stat(&stat) {
            if group == pgid.as_raw_nonzero().get() && state != 'Z' && state != 'X' {
                f(pid);
            }
        }
    }
}

/// The state and the process group of a `/proc/PID/stat` line (`pid (comm) state ppid pgrp
/// ...`; `comm` may hold spaces and parentheses, so fields are counted after the last `)`).
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether process `pid` ignores SIGTERM (bit 14 of `SigIgn` in `/proc/PID/status`).
fn ignores_term(pid: Pid) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", pid.as_raw_nonzero()))
    else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_after_the_command_name() {
        assert_eq!(
            parse_stat("42 (bash) S 1 42 42 0 -1 4194560"),
            Some(('S', 42))
        );
        assert_eq!(
            parse_stat("7 (a) b (c) Z 3 9 9 0"),
            Some(('Z', 9)),
            "a name with spaces and parentheses"
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) R"), None);
    }

    #[test]
    fn this_process_does_not_ignore_sigterm() {
        let me = Pid::from_raw(std::process::id() as i32).unwrap();
        assert!(!ignores_term(me));
    }
}
