//! The one module with unsafe code: what a sandboxed command's process does between `fork` and
//! `exec`, and the namespace calls around it.
//!
//! The parent prepares everything (paths as C strings, the Landlock ruleset, the limits) in a
//! [`ChildSetup`], so the child only makes system calls: no allocation, no locks, as a
//! `pre_exec` hook in a forked copy of a multi-threaded process must. In the child, in order:
//!
//! 0. the run's cgroup joined (`0` written into each `cgroup.procs` the parent opened, see
//!    `cgroup.rs`), so nothing the command does runs outside its process and memory limits;
//! 1. `setsid`: a new session and process group, which the parent kills as a whole;
//! 2. namespaces: as root `unshare(CLONE_NEWNS | CLONE_NEWNET)`; otherwise first a user
//!    namespace (`CLONE_NEWUSER`) mapping the caller's own uid and gid, then the same;
//! 3. mounts, in the private mount namespace: propagation made private, every mount made
//!    read-only (`mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)`: a second layer under
//!    Landlock, which also stops what Landlock does not govern, such as `chmod`, `utime` and
//!    extended attributes on files outside), the writable directories (workspace, private
//!    temporary directory) bind-mounted read-write onto themselves, then the workspace's
//!    [`Bind`]s in order: directories pinned (a clone of each mounted onto itself, so its
//!    entry can be neither renamed nor removed), protected paths mounted read-only onto
//!    themselves (`.toolgate`, git's config and hooks, `.vscode` and the rest of
//!    `fs::protected`'s names, root and nested, the configuration file), and paths
//!    the configuration denies covered by an empty read-only file or directory. Each target is
//!    opened from the workspace root one component at a time without following links, after
//!    the namespace exists, and mounted through its descriptor (`open_tree`, `mount_setattr`,
//!    `move_mount`): a component swapped for a link, or a file for a directory, since the
//!    parent planned the mounts fails the run instead of moving a mount elsewhere. Then a fresh
//!    `/proc` when the process is the first of a new PID namespace, a private 64 MiB tmpfs on
//!    `/dev/shm`, and the working directory entered again so it lies on the new mounts;
//! 4. the loopback interface of the new network namespace brought up (nothing else exists in
//!    it, so nothing outside the sandbox is reachable, but local test servers work);
//! 5. resource limits (`setrlimit`);
//! 6. every capability dropped: the bounding set, the ambient set, then the effective,
//!    permitted and inheritable sets, so even a root caller's command runs without privilege;
//! 7. the Landlock ruleset applied (`no_new_privs` first), which also forbids any later mount.
//!    The fresh `/proc` and `/dev/shm` get their own rules first: Landlock ignores rules on a
//!    directory that a mount hides, so the parent's rules would not cover them;
//! 8. a seccomp filter that refuses to create `AF_UNIX` sockets (`EPERM`), unless
//!    [`ChildSetup::block_unix_sockets`] is off. Neither Landlock nor the network namespace
//!    governs connecting to a socket file: without it a command could reach any service
//!    listening on one outside the workspace (a container engine's socket, the user's
//!    systemd or D-Bus session, an ssh or gpg agent) and have it act outside the sandbox.
//!    `socketpair` stays allowed (pipes between a program's own processes). The filter also
//!    answers `io_uring_setup` with `ENOSYS` (as a kernel without io_uring does, which
//!    programs fall back from): an io_uring's operations, socket creation and `connect`
//!    among them since Linux 5.19, are not system calls a seccomp filter sees;
//! 9. the parent death signal, SIGKILL (last: a change of credentials would clear it; see
//!    below), and, outside a new PID namespace, a check that the parent still lives.
//!
//! A PID namespace cannot be entered by the process that asks for it, only by its children, so
//! [`spawn`] forks from a fresh thread that has called `unshare(CLONE_NEWPID)` first: the shell
//! is then PID 1 of its own namespace, and when it ends or is killed the kernel kills every
//! process left in it, including those that left the process group with `setsid`.
//!
//! Every command is forked from such a thread (in a new PID namespace or not), which then
//! waits until the run's [`Parent`] is dropped; the child's last step before `exec` sets its
//! parent death signal to SIGKILL. So the command dies when that thread ends: at the run's end,
//! or with toolgate, however toolgate dies.

#![allow(unsafe_code)]

use rustix::fs::{FileType, Mode, OFlags};
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags, OpenTreeFlags};
use rustix::process::{Resource, Rlimit};
use rustix::thread::{CapabilitySet, CapabilitySets, UnshareFlags};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// A user namespace's identity maps, as written to `/proc/self/{uid,gid}_map`.
#[derive(Debug, Clone)]
pub(crate) struct UserMaps {
    /// `"<uid> <uid> 1\n"`: the caller's uid maps to itself.
    pub uid_map: Vec<u8>,
    /// `"<gid> <gid> 1\n"`.
    pub gid_map: Vec<u8>,
}

impl UserMaps {
    /// Maps for the calling process's own uid and gid.
    pub(crate) fn own() -> UserMaps {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        UserMaps {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

/// What the child mounts over a workspace path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindKind {
    /// A clone of the directory mounted onto itself, read-write: its entry can no longer be
    /// renamed or removed (a mount point is busy), so what lies below cannot be moved away
    /// and replaced.
    Pin,
    /// A clone mounted onto itself, read-only (its entry pinned as well).
    ReadOnly,
    /// Covered by an empty read-only file or directory ([`ChildSetup::hide_sources`]).
    Hide,
}

/// A workspace path to mount over, by its components from the workspace root.
#[derive(Debug)]
pub(crate) struct Bind {
    /// The path's components, from the root.
    pub components: Vec<CString>,
    /// Whether the parent found a directory there (else a regular file); checked again.
    pub dir: bool,
    /// What is mounted.
    pub kind: BindKind,
}

/// Everything the child does before `exec`, prepared by the parent.
#[derive(Default)]
pub(crate) struct ChildSetup {
    /// Fork from a thread in a new PID namespace (root only).
    pub new_pid: bool,
    /// Enter a user namespace with these maps first (non-root callers).
    pub user: Option<UserMaps>,
    /// Unshare the mount namespace (needed for the read-only binds and `/proc`).
    pub new_mount: bool,
    /// Unshare the network namespace, leaving only loopback.
    pub new_net: bool,
    /// Directories bind-mounted read-write onto themselves once everything is read-only.
    pub writable: Vec<CString>,
    /// The workspace root, from which [`ChildSetup::binds`] are found.
    pub root: Option<CString>,
    /// Mounts over workspace paths, in order (pins first, hides last).
    pub binds: Vec<Bind>,
    /// The empty file and the empty directory (outside every writable directory) that hide
    /// denied files and directories.
    pub hide_sources: Option<(CString, CString)>,
    /// The working directory, entered again after the mounts.
    pub cwd: Option<CString>,
    /// Resource limits, as (resource, soft and hard limit).
    pub rlimits: Vec<(Resource, u64)>,
    /// Drop every capability.
    pub drop_caps: bool,
    /// The Landlock ruleset to apply last (its file descriptor).
    pub landlock: Option<OwnedFd>,
    /// The Landlock access bits granted on a fresh `/proc` (read, read directory, execute).
    pub proc_access: u64,
    /// Mount a private tmpfs on `/dev/shm` (POSIX shared memory and semaphores, which
    /// Python's multiprocessing needs) with these Landlock access bits on it.
    pub private_shm: Option<u64>,
    /// Refuse to create `AF_UNIX` sockets (a seccomp filter, step 8 of the module docs).
    pub block_unix_sockets: bool,
    /// The `cgroup.procs` files of the run's cgroup (one per hierarchy), opened for writing:
    /// the child joins it first (step 0).
    pub cgroup_procs: Vec<OwnedFd>,
}

/// Failures of the child's set-up carry their step in the error's raw OS code, so the parent
/// can say which step failed: `STEP_BASE * step + errno`.
const STEP_BASE: i32 = 100_000;

/// The steps of [`ChildSetup::apply`], as reported back in a spawn error.
const STEPS: [&str; 12] = [
    "setsid",
    "user namespace",
    "mount and network namespaces",
    "read-only mounts",
    "/proc mount",
    "loopback interface",
    "resource limits",
    "dropping capabilities",
    "landlock",
    "seccomp",
    "joining the run's cgroup",
    "parent death signal",
];

fn step(n: usize) -> impl Fn(rustix::io::Errno) -> io::Error {
    move |e| io::Error::from_raw_os_error(STEP_BASE * (n as i32 + 1) + e.raw_os_error())
}

/// The step and the errno of a spawn error made by the child's set-up, when it is one.
pub(crate) fn setup_failure(e: &io::Error) -> Option<(&'static str, io::Error)> {
    let code = e.raw_os_error()?;
    let n = (code / STEP_BASE).checked_sub(1)?;
    let name = STEPS.get(usize::try_from(n).ok()?)?;
    Some((name, io::Error::from_raw_os_error(code % STEP_BASE)))
}

impl ChildSetup {
    /// Runs in the forked child. Only system calls on data prepared by the parent.
    /// `toolgate` is toolgate's own pid (the child's parent outside a new PID namespace).
    fn apply(&mut self, in_new_pid: bool, toolgate: u32) -> io::Result<()> {
        close_inherited_on_exec();
        for procs in &self.cgroup_procs {
            // `0`: the writing process itself
            rustix::io::write(procs, b"0").map_err(step(10))?;
        }
        rustix::process::setsid().map_err(step(0))?;
        if let Some(maps) = &self.user {
            enter_user_namespace(maps).map_err(step(1))?;
        }
        let mut flags = UnshareFlags::empty();
        if self.new_mount {
            flags |= UnshareFlags::NEWNS;
        }
        if self.new_net {
            flags |= UnshareFlags::NEWNET;
        }
        if !flags.is_empty() {
            // SAFETY: the child is single-threaded; it shares no file table or fs state with
            // another thread that could observe the change.
            unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(step(2))?;
        }
        if self.new_mount {
            rustix::mount::mount_change(
                c"/",
                MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
            )
            .map_err(step(3))?;
            make_all_read_only().map_err(step(3))?;
            for p in &self.writable {
                rustix::mount::mount_bind(p.as_c_str(), p.as_c_str()).map_err(step(3))?;
                rustix::mount::mount_remount(
                    p.as_c_str(),
                    MountFlags::BIND | MountFlags::NOSUID | MountFlags::NODEV,
                    c"",
                )
                .map_err(step(3))?;
            }
            self.apply_binds().map_err(step(3))?;
            if in_new_pid {
                rustix::mount::mount(
                    c"proc",
                    c"/proc",
                    c"proc",
                    MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
                    None,
                )
                .map_err(step(4))?;
            }
            if self.private_shm.is_some() {
                rustix::mount::mount(
                    c"tmpfs",
                    c"/dev/shm",
                    c"tmpfs",
                    MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
                    c"size=64m,mode=1777",
                )
                .map_err(step(3))?;
            }
            if let Some(cwd) = &self.cwd {
                rustix::process::chdir(cwd.as_c_str()).map_err(step(3))?;
            }
        }
        if self.new_net {
            loopback_up().map_err(step(5))?;
        }
        for &(resource, limit) in &self.rlimits {
            let limit = Rlimit {
                current: Some(limit),
                maximum: Some(limit),
            };
            rustix::process::setrlimit(resource, limit).map_err(step(6))?;
        }
        if self.drop_caps {
            drop_capabilities().map_err(step(7))?;
        }
        if let Some(ruleset) = &self.landlock {
            if in_new_pid && self.new_mount {
                add_path_rule(ruleset, c"/proc", self.proc_access).map_err(step(8))?;
            }
            if let (Some(access), true) = (self.private_shm, self.new_mount) {
                add_path_rule(ruleset, c"/dev/shm", access).map_err(step(8))?;
            }
            rustix::thread::set_no_new_privs(true).map_err(step(8))?;
            restrict_self(ruleset).map_err(step(8))?;
        }
        if self.block_unix_sockets {
            rustix::thread::set_no_new_privs(true).map_err(step(9))?;
            refuse_unix_sockets().map_err(step(9))?;
        }
        // last, once the credentials no longer change (a change clears it): killed when the
        // thread that forked it ends, which [`spawn`] keeps alive for the run, so a run does
        // not outlive a toolgate killed by SIGKILL. Its parent already gone (toolgate died
        // since the fork) is seen where the parent is visible, outside a new PID namespace.
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
            .map_err(step(11))?;
        let parent = rustix::process::getppid().map(rustix::process::Pid::as_raw_pid);
        if !in_new_pid && parent.and_then(|p| u32::try_from(p).ok()) != Some(toolgate) {
            return Err(step(11)(rustix::io::Errno::SRCH));
        }
        Ok(())
    }
}

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

/// The architecture numbers and system call numbers the filter checks: the native ones, and
/// those of the 32-bit ABI the kernel also runs (whose `socketcall` hides its arguments
/// behind a pointer, so it is refused whole). `u32::MAX` never matches.
#[cfg(target_arch = "x86_64")]
mod abi {
    pub const NATIVE: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    pub const SOCKET: u32 = 41;
    pub const SOCKET_X32: u32 = 0x4000_0000 | 41;
    pub const COMPAT: u32 = 0x4000_0003; // AUDIT_ARCH_I386
    pub const COMPAT_SOCKETCALL: u32 = 102;
    pub const COMPAT_SOCKET: u32 = 359;
    pub const IO_URING_SETUP: u32 = 425;
    pub const IO_URING_SETUP_X32: u32 = 0x4000_0000 | 425;
    pub const COMPAT_IO_URING_SETUP: u32 = 425;
}
#[cfg(target_arch = "aarch64")]
mod abi {
    pub const NATIVE: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    pub const SOCKET: u32 = 198;
    pub const SOCKET_X32: u32 = u32::MAX;
    pub const COMPAT: u32 = 0x4000_0028; // AUDIT_ARCH_ARM
    pub const COMPAT_SOCKETCALL: u32 = u32::MAX;
    pub const COMPAT_SOCKET: u32 = 281;
    pub const IO_URING_SETUP: u32 = 425;
    pub const IO_URING_SETUP_X32: u32 = u32::MAX;
    pub const COMPAT_IO_URING_SETUP: u32 = 425;
}

/// Installs the seccomp filter of step 8: `socket(AF_UNIX, ...)` fails with `EPERM`,
/// `io_uring_setup` with `ENOSYS`, every other system call is allowed. `no_new_privs` must
/// be set.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn refuse_unix_sockets() -> rustix::io::Result<()> {
    const LD_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    const NR: u32 = 0; // offsetof(struct seccomp_data, nr)
    const ARCH: u32 = 4;
    const ARG0: u32 = 16; // the low half of args[0] (little-endian)
    const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
    const DENY: u32 = 0x0005_0000 | libc::EPERM as u32; // SECCOMP_RET_ERRNO
    const NO_SUCH_CALL: u32 = 0x0005_0000 | libc::ENOSYS as u32;
    let i = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    // 16 allows, 17 refuses (EPERM), 18 answers ENOSYS; a jump counts from the next
    // instruction
    let filter = [
        i(LD_ABS, 0, 0, ARCH),                    // 0
        i(JEQ, 0, 7, abi::NATIVE),                // 1: native 2, else 9
        i(LD_ABS, 0, 0, NR),                      // 2
        i(JEQ, 3, 0, abi::SOCKET),                // 3: 7, else 4
        i(JEQ, 2, 0, abi::SOCKET_X32),            // 4: 7, else 5
        i(JEQ, 12, 0, abi::IO_URING_SETUP),       // 5: ENOSYS, else 6
        i(JEQ, 11, 9, abi::IO_URING_SETUP_X32),   // 6: ENOSYS, else allow
        i(LD_ABS, 0, 0, ARG0),                    // 7
        i(JEQ, 8, 7, libc::AF_UNIX as u32),       // 8: refuse, else allow
        i(JEQ, 0, 6, abi::COMPAT),                // 9: 10, else allow
        i(LD_ABS, 0, 0, NR),                      // 10
        i(JEQ, 5, 0, abi::COMPAT_SOCKETCALL),     // 11: refuse, else 12
        i(JEQ, 5, 0, abi::COMPAT_IO_URING_SETUP), // 12: ENOSYS, else 13
        i(JEQ, 0, 2, abi::COMPAT_SOCKET),         // 13: 14, else allow
        i(LD_ABS, 0, 0, ARG0),                    // 14
        i(JEQ, 1, 0, libc::AF_UNIX as u32),       // 15: refuse, else allow
        i(RET, 0, 0, ALLOW),                      // 16
        i(RET, 0, 0, DENY),                       // 17
        i(RET, 0, 0, NO_SUCH_CALL),               // 18
    ];
    let prog = SockFprog {
        len: filter.len() as u16,
        filter: filter.as_ptr(),
    };
    // SAFETY: `prog` points at `filter`, a valid classic BPF program that outlives the call
    // (the kernel copies it); SECCOMP_SET_MODE_FILTER (1) with no flags.
    let r = unsafe { libc::syscall(libc::SYS_seccomp, 1u32, 0u32, &prog as *const SockFprog) };
    if r == 0 {
        Ok(())
    } else {
        Err(rustix::io::Errno::from_raw_os_error(errno()))
    }
}

/// Other architectures: no filter is known, so the step refuses to run (`ENOSYS`).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn refuse_unix_sockets() -> rustix::io::Result<()> {
    Err(rustix::io::Errno::NOSYS)
}

impl ChildSetup {
    /// Mounts [`ChildSetup::binds`], in order (see the module docs).
    fn apply_binds(&self) -> rustix::io::Result<()> {
        let Some(root) = &self.root else {
            return Ok(());
        };
        let root = rustix::fs::open(
            root.as_c_str(),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        for b in &self.binds {
            let target = open_beneath(root.as_fd(), &b.components)?;
            let found = FileType::from_raw_mode(rustix::fs::fstat(&target)?.st_mode);
            let expected = if b.dir {
                FileType::Directory
            } else {
                FileType::RegularFile
            };
            if found != expected {
                // changed since the parent looked: fail rather than mount something else
                return Err(rustix::io::Errno::STALE);
            }
            let clone = OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC;
            let tree = match b.kind {
                // with the mounts below it, so nothing under the path changes but its flags
                BindKind::Pin | BindKind::ReadOnly => rustix::mount::open_tree(
                    &target,
                    c"",
                    clone | OpenTreeFlags::AT_EMPTY_PATH | OpenTreeFlags::AT_RECURSIVE,
                )?,
                BindKind::Hide => {
                    let Some((file, dir)) = &self.hide_sources else {
                        return Err(rustix::io::Errno::INVAL);
                    };
                    let source = if b.dir { dir } else { file };
                    rustix::mount::open_tree(rustix::fs::CWD, source.as_c_str(), clone)?
                }
            };
            let attr = match b.kind {
                BindKind::Pin => libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
                BindKind::ReadOnly => {
                    libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV
                }
                BindKind::Hide => {
                    libc::MOUNT_ATTR_RDONLY
                        | libc::MOUNT_ATTR_NOSUID
                        | libc::MOUNT_ATTR_NODEV
                        | libc::MOUNT_ATTR_NOEXEC
                }
            };
            set_mount_attr(tree.as_fd(), attr)?;
            rustix::mount::move_mount(
                &tree,
                c"",
                &target,
                c"",
                MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
            )?;
        }
        Ok(())
    }
}

/// Opens `components` beneath `root` as an `O_PATH` descriptor, one component at a time
/// without following links (a link anywhere on the way fails with `ELOOP` or `ENOTDIR`).
fn open_beneath(root: BorrowedFd<'_>, components: &[CString]) -> rustix::io::Result<OwnedFd> {
    let Some((last, dirs)) = components.split_last() else {
        return Err(rustix::io::Errno::INVAL);
    };
    let mut dir: Option<OwnedFd> = None;
    for c in dirs {
        let at = dir.as_ref().map_or(root, AsFd::as_fd);
        dir = Some(rustix::fs::openat(
            at,
            c.as_c_str(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
    }
    let at = dir.as_ref().map_or(root, AsFd::as_fd);
    rustix::fs::openat(
        at,
        last.as_c_str(),
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, {attr_set: attr})` on a detached
/// mount tree.
fn set_mount_attr(tree: BorrowedFd<'_>, attr: u64) -> rustix::io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: attr,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    // SAFETY: `attr` is a valid `struct mount_attr` of the size passed, alive for the call;
    // the path is a NUL-terminated empty string and `tree` an open descriptor.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
            std::ptr::addr_of!(attr),
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(rustix::io::Errno::from_raw_os_error(errno()));
    }
    Ok(())
}

/// `mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, {attr_set: MOUNT_ATTR_RDONLY})`.
fn make_all_read_only() -> rustix::io::Result<()> {
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: libc::MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` is a valid `struct mount_attr` of the size passed, alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            AT_RECURSIVE,
            std::ptr::addr_of!(attr),
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(rustix::io::Errno::from_raw_os_error(errno()));
    }
    Ok(())
}

/// `landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, {access, open(path, O_PATH)})`.
fn add_path_rule(ruleset: &OwnedFd, path: &std::ffi::CStr, access: u64) -> rustix::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let dir = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: dir.as_raw_fd(),
    };
    // SAFETY: `attr` is a valid `struct landlock_path_beneath_attr` (packed, as in the uapi
    // header) that outlives the call; both descriptors are open.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            std::ptr::addr_of!(attr),
            0u32,
        )
    };
    if r != 0 {
        return Err(rustix::io::Errno::from_raw_os_error(errno()));
    }
    Ok(())
}

/// `landlock_restrict_self(ruleset, 0)`.
fn restrict_self(ruleset: &OwnedFd) -> rustix::io::Result<()> {
    // SAFETY: a plain system call on an open descriptor.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
    if r != 0 {
        return Err(rustix::io::Errno::from_raw_os_error(errno()));
    }
    Ok(())
}

/// Enters a new user namespace and maps the caller's uid and gid to themselves.
fn enter_user_namespace(maps: &UserMaps) -> rustix::io::Result<()> {
    // SAFETY: single-threaded child; see `apply`.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER) }?;
    write_file(c"/proc/self/setgroups", b"deny")?;
    write_file(c"/proc/self/uid_map", &maps.uid_map)?;
    write_file(c"/proc/self/gid_map", &maps.gid_map)
}

fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> rustix::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes).map(|_| ())
}

/// Drops the bounding and ambient sets, then the effective, permitted and inheritable sets.
fn drop_capabilities() -> rustix::io::Result<()> {
    for bit in 0..64u32 {
        match rustix::thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(
            1u64 << bit,
        )) {
            // past the kernel's last capability
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(e),
        }
    }
    rustix::thread::clear_ambient_capability_set()?;
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
}

/// Sets `IFF_UP` on `lo` with `SIOCGIFFLAGS` / `SIOCSIFFLAGS` on a datagram socket.
fn loopback_up() -> rustix::io::Result<()> {
    // SAFETY: plain system calls on a zeroed `ifreq` that lives on this stack frame; the
    // socket is closed on every path.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(rustix::io::Errno::from_raw_os_error(errno()));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let mut result = libc::ioctl(sock, libc::SIOCGIFFLAGS as _, &mut req);
        if result == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            result = libc::ioctl(sock, libc::SIOCSIFFLAGS as _, &req);
        }
        let err = errno();
        libc::close(sock);
        if result != 0 {
            return Err(rustix::io::Errno::from_raw_os_error(err));
        }
    }
    Ok(())
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Marks every descriptor above standard error close-on-exec, so the command gets only its
/// standard streams: a descriptor toolgate got from whatever started it without
/// `FD_CLOEXEC` (`toolgate call ... 77>>/elsewhere/file`, an MCP client's leaked pipe)
/// would otherwise pass into the sandbox, where Landlock, which checks opens, does not
/// govern writes through it. The child's own setup keeps using its descriptors until the
/// `exec`. `close_range` (Linux 5.11); on an older kernel each descriptor up to the open
/// files limit (at most 65,536) is marked by `fcntl`. Only system calls, as a `pre_exec`
/// hook must.
fn close_inherited_on_exec() {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC closes nothing; it sets a flag on open
    // descriptors of this (single-threaded, forked) process.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if done {
        return;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct given; fcntl on a descriptor that is not
    // open fails with EBADF and changes nothing.
    unsafe {
        let most = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(65_536) as i32
        } else {
            4096
        };
        for fd in 3..most {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Installs `setup` as `command`'s pre-exec hook.
pub(crate) fn install(command: &mut Command, mut setup: ChildSetup) -> bool {
    let new_pid = setup.new_pid;
    let toolgate = std::process::id();
    // SAFETY: `apply` only makes system calls on data owned by the closure: it allocates
    // nothing and takes no lock, so it is sound in the child of a multi-threaded process.
    unsafe {
        command.pre_exec(move || setup.apply(new_pid, toolgate));
    }
    new_pid
}

/// The thread a sandboxed command was forked from, kept alive while this is held: the
/// command's parent death signal (SIGKILL, set by [`ChildSetup::apply`]) is sent when that
/// thread ends, so dropping this kills the command if it still runs, and so does toolgate's
/// own death, SIGKILL included. With a PID namespace the command is its PID 1, whose death
/// ends every process of the run.
#[derive(Debug)]
#[must_use = "dropping it kills the command"]
pub(crate) struct Parent {
    _alive: std::sync::mpsc::Sender<()>,
}

/// The stack of a [`Parent`] thread: it forks once, then only waits.
const PARENT_STACK: usize = 256 * 1024;

/// Spawns `command` from a fresh thread that stays alive while the returned [`Parent`] is
/// held (dropping it kills the command if it still runs); when `new_pid`, that thread is in a
/// new PID namespace, so the command is PID 1 of it. Runs inside the current tokio runtime
/// (the child is a tokio child).
///
/// # Errors
/// The spawn error; [`setup_failure`] tells a failed set-up step from it.
pub(crate) async fn spawn(
    command: Command,
    new_pid: bool,
) -> io::Result<(tokio::process::Child, Parent)> {
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (alive, ended) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("toolgate-run".into())
        .stack_size(PARENT_STACK)
        .spawn(move || {
            let result = {
                let _runtime = handle.enter();
                if new_pid {
                    // SAFETY: CLONE_NEWPID changes only which namespace this thread's future
                    // children are created in; this thread spawns one child.
                    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWPID) }
                        .map_err(|e| step(2)(e))
                        .and_then(|()| command.spawn())
                } else {
                    command.spawn()
                }
            };
            let spawned = result.is_ok();
            if tx.send(result).is_ok() && spawned {
                // until the Parent is dropped (every sender gone): then this thread ends
                let _ = ended.recv();
            }
        })?;
    let child = rx
        .await
        .unwrap_or_else(|_| Err(io::Error::other("the sandbox spawner thread died")))?;
    Ok((child, Parent { _alive: alive }))
}

/// The Landlock ABI the running kernel offers (0 when it has none).
pub(crate) fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with the VERSION flag the kernel reads no attribute memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Whether a fresh thread may unshare the namespaces in `flags` (the thread ends right after,
/// so the process is not changed).
pub(crate) fn thread_can_unshare(flags: UnshareFlags) -> bool {
    std::thread::spawn(move || {
        // SAFETY: only this short-lived thread's namespaces change.
        unsafe { rustix::thread::unshare_unsafe(flags) }.is_ok()
    })
    .join()
    .unwrap_or(false)
}

/// Whether a forked child may enter a user namespace with the caller's own maps and then
/// unshare mount and network namespaces (the non-root path).
pub(crate) fn child_can_use_user_namespace(true_bin: &std::path::Path) -> bool {
    let mut command = Command::new(true_bin);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    install(
        &mut command,
        ChildSetup {
            user: Some(UserMaps::own()),
            new_mount: true,
            new_net: true,
            ..ChildSetup::default()
        },
    );
    command.status().map(|s| s.success()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_failures_name_their_step() {
        let e = step(8)(rustix::io::Errno::PERM);
        let (name, errno) = setup_failure(&e).unwrap();
        assert_eq!(name, "landlock");
        assert_eq!(errno.raw_os_error(), Some(libc::EPERM));
        assert!(setup_failure(&io::Error::from_raw_os_error(libc::ENOENT)).is_none());
        assert!(setup_failure(&io::Error::other("x")).is_none());
        assert!(setup_failure(&io::Error::from_raw_os_error(STEP_BASE * 50 + 1)).is_none());
    }
}
