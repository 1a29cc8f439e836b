use super::*;
use crate::shell::cgroup_site::site;

#[test]
fn counters_and_sizes_are_read_and_written_for_people() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("memory.events");
    std::fs::write(&f, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\n").unwrap();
    assert_eq!(counter(&f, "oom_kill"), Some(2));
    assert_eq!(counter(&f, "max"), Some(12));
    assert_eq!(counter(&f, "absent"), None);
    assert_eq!(counter(&tmp.path().join("none"), "max"), None);
    assert_eq!(bytes_text(16 << 30), "16 GiB");
    assert_eq!(bytes_text(96 << 20), "96 MiB");
    assert_eq!(bytes_text(1000), "1000 bytes");
}

/// On a machine that gives a cgroup: one is made with the limits, its `cgroup.procs` opens,
/// and dropping it removes it.
#[test]
fn a_run_cgroup_is_made_with_its_limits_and_removed() {
    let Some(site) = site() else {
        eprintln!("skipped: this machine gives run_shell no cgroup");
        return;
    };
    let limits = ShellLimits {
        run_processes: Some(33),
        run_memory_bytes: Some(80 << 20),
        ..ShellLimits::default()
    };
    let cg = RunCgroup::create(site, &limits).unwrap();
    assert_eq!(
        std::fs::read_to_string(cg.pids.join("pids.max")).unwrap(),
        "33\n"
    );
    if let Some(m) = &cg.memory {
        let file = if site.version == 2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        assert_eq!(
            std::fs::read_to_string(m.join(file)).unwrap().trim(),
            (80u64 << 20).to_string()
        );
    }
    assert_eq!(cg.procs().unwrap().len(), cg.dirs().len());
    assert!(cg.exceeded().is_empty());
    let dirs: Vec<PathBuf> = cg.dirs().into_iter().map(Path::to_path_buf).collect();
    drop(cg);
    for d in dirs {
        assert!(!d.exists(), "{}", d.display());
    }
}
