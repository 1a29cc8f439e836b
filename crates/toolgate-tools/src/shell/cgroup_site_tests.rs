use super::*;

/// A hybrid machine's mountinfo (cgroup v1 hierarchies and an empty cgroup2), a container's
/// bound subtree, a mount point with a space, and mounts that are not cgroups.
const MOUNTINFO: &str = "\
25 30 0:23 / /sys/fs/cgroup rw,relatime shared:9 - tmpfs tmpfs rw,mode=755
31 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw
33 25 0:28 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids
34 25 0:29 /docker/abc /sys/fs/cgroup/memory rw,relatime shared:13 - cgroup cgroup rw,memory
35 25 0:30 / /sys/fs/cgroup/cpu\\040x rw,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct
36 25 0:31 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd
garbage line
";

#[test]
fn cgroup_mounts_are_read_from_mountinfo() {
    let mounts = parse_mounts(MOUNTINFO);
    assert_eq!(
        mounts
            .iter()
            .map(|m| (m.point.to_str().unwrap(), m.v2, m.root.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("/sys/fs/cgroup/unified", true, "/"),
            ("/sys/fs/cgroup/pids", false, "/"),
            ("/sys/fs/cgroup/memory", false, "/docker/abc"),
            ("/sys/fs/cgroup/cpu x", false, "/"),
            ("/sys/fs/cgroup/systemd", false, "/"),
        ]
    );
    assert_eq!(mounts[1].controllers, vec!["rw", "pids"]);
    assert_eq!(unescape("a\\040b\\134c\\9"), "a b\\c\\9");
    assert_eq!(unescape("end\\04"), "end\\04");
}

#[test]
fn own_cgroups_are_read_by_controller() {
    let own = parse_own(
        "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/x\n2:cpu,cpuacct:/a\n0::/\nbad\n",
    );
    assert_eq!(
        own,
        Own {
            pids: Some("/".into()),
            memory: Some("/process_api/x".into()),
            unified: Some("/".into()),
        }
    );
    let v2 = parse_own("0::/system.slice/toolgate.service/main\n");
    assert_eq!(
        v2.unified.as_deref(),
        Some("/system.slice/toolgate.service/main")
    );
    assert_eq!(v2.pids, None);
}

#[test]
fn a_cgroup_path_is_found_under_its_mount() {
    let mounts = parse_mounts(MOUNTINFO);
    let pids = &mounts[1];
    assert_eq!(
        dir_in(pids, "/"),
        Some(PathBuf::from("/sys/fs/cgroup/pids"))
    );
    assert_eq!(
        dir_in(pids, "/a/b"),
        Some(PathBuf::from("/sys/fs/cgroup/pids/a/b"))
    );
    // a container's bound subtree: the path is shown from the host's root
    let memory = &mounts[2];
    assert_eq!(
        dir_in(memory, "/docker/abc/run"),
        Some(PathBuf::from("/sys/fs/cgroup/memory/run"))
    );
    assert_eq!(
        dir_in(memory, "/docker/abcd"),
        None,
        "a sibling is not under it"
    );
    assert_eq!(dir_in(memory, "/other"), None);
    assert_eq!(dir_in(pids, "/../../x"), None, "outside the namespace");
}

/// A directory that is not a cgroup (an ordinary one, whose new directories have no
/// `pids.max`) is never taken, whatever mountinfo claims.
#[test]
fn a_directory_that_is_not_a_cgroup_is_never_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("v2/toolgate")).unwrap();
    std::fs::write(t.join("v2/cgroup.subtree_control"), "pids memory\n").unwrap();
    std::fs::write(t.join("v2/toolgate/cgroup.subtree_control"), "pids\n").unwrap();
    let info = format!(
        "1 1 0:1 / {}/v1 rw - cgroup cgroup rw,pids\n2 1 0:2 / {}/v2 rw - cgroup2 cgroup2 rw\n",
        t.display(),
        t.display()
    );
    let own = parse_own("1:pids:/\n0::/toolgate\n");
    assert_eq!(find(&parse_mounts(&info), &own), None);
    // the probes were removed
    assert_eq!(std::fs::read_dir(t.join("v2/toolgate")).unwrap().count(), 1);
}

#[test]
fn stale_cgroups_of_ended_processes_are_removed_when_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mine = format!("{PREFIX}{}-7", owner());
    // pid 4194304 is above the kernel's largest
    let stale = format!("{PREFIX}4194304-1-0");
    let busy = format!("{PREFIX}4194304-1-1");
    let reused = format!("{PREFIX}{}-1-2", std::process::id());
    for d in [&mine, &stale, &busy, &reused, &"other".to_string()] {
        std::fs::create_dir(t.join(d)).unwrap();
    }
    std::fs::write(t.join(&busy).join("cgroup.procs"), "1\n").unwrap();
    remove_stale(t, 1);
    assert!(t.join(&mine).exists(), "this process's own");
    assert!(!t.join(&stale).exists());
    assert!(
        t.join(&busy).exists(),
        "one that cannot be emptied (its pid 1 is not a member: spared)"
    );
    assert!(
        !t.join(&reused).exists(),
        "this pid, but started at another time"
    );
    assert!(t.join("other").exists());
    assert_eq!(parse_name(&stale), Some((4_194_304, 1)));
    assert_eq!(parse_name("toolgate-run-x-1-0"), None);
    assert_eq!(parse_name("toolgate-run-12"), None);
    assert!(start_time(std::process::id()).is_some_and(|s| s > 0));
}

#[test]
fn a_site_says_where_it_is() {
    let site = CgroupSite {
        version: 1,
        pids: "/sys/fs/cgroup/pids".into(),
        memory: Some("/sys/fs/cgroup/memory/x".into()),
    };
    assert_eq!(
        site.describe(),
        "cgroup v1 (pids under /sys/fs/cgroup/pids, memory under /sys/fs/cgroup/memory/x)"
    );
}

/// On a machine that gives a cgroup: a process left in the cgroup of a toolgate that died (a
/// run without a PID namespace whose toolgate was killed) is killed at the next start, and
/// the cgroup removed.
#[test]
fn a_run_left_by_a_dead_toolgate_is_killed_and_its_cgroup_removed() {
    let Some(site) = site() else {
        eprintln!("skipped: this machine gives run_shell no cgroup");
        return;
    };
    // pid 4194304 is above the kernel's largest: its owner is gone
    let stale = site
        .pids
        .join(format!("{PREFIX}4194304-1-{}", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    let mut left = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    std::fs::write(stale.join("cgroup.procs"), left.id().to_string()).unwrap();
    let started = std::time::Instant::now();
    remove_stale(&site.pids, site.version);
    let status = left.wait().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "killed, not waited for"
    );
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "{status:?}"
    );
    assert!(!stale.exists(), "removed: {}", stale.display());
}
