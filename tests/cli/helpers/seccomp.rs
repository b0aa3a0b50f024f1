//! Refusing system calls to retry, as a seccomp-filtered container or an emulator would: a
//! small seccomp BPF program (seccomp(2), `SECCOMP_MODE_FILTER`) installed in the child's
//! `pre_exec`, before retry is executed, that makes `clone` with `CLONE_VFORK` and
//! `pidfd_open` fail with an errno instead of running. retry must then fall back (fork and
//! exec; SIGCHLD alone) with every guarantee kept.
//!
//! Asked for with the test binary's own environment variable [`VARIABLE`]
//! (`vfork,pidfd`, each optionally `=EPERM`, `=EINVAL` or `=ENOSYS`, the default), read here
//! and never passed to retry; `.ci/run` runs the supervision tests with it (docs/platforms.md).
//! Linux on x86_64 and AArch64 only (where the filter is refused, as under qemu-user, the
//! spawn fails and the test with it).

use std::process::Command;

/// The test binary's variable naming what to refuse.
pub const VARIABLE: &str = "RETRY_TESTS_REFUSE";

/// What to refuse, and with which errno.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refuse {
    /// `clone` with `CLONE_VFORK`: this errno.
    pub vfork: Option<i32>,
    /// `pidfd_open`: this errno.
    pub pidfd: Option<i32>,
}

impl Refuse {
    /// What [`VARIABLE`] asks for (nothing when unset).
    ///
    /// # Panics
    /// On a value it cannot read.
    pub fn from_env() -> Refuse {
        let Ok(text) = std::env::var(VARIABLE) else {
            return Refuse::default();
        };
        let mut refuse = Refuse::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, errno) = item.split_once('=').unwrap_or((item, "ENOSYS"));
            let errno = match errno {
                "ENOSYS" => libc::ENOSYS,
                "EPERM" => libc::EPERM,
                "EINVAL" => libc::EINVAL,
                other => panic!("{VARIABLE}: unknown errno {other:?}"),
            };
            match name {
                "vfork" => refuse.vfork = Some(errno),
                "pidfd" => refuse.pidfd = Some(errno),
                other => panic!("{VARIABLE}: unknown call {other:?} (vfork, pidfd)"),
            }
        }
        refuse
    }

    /// Whether anything is refused.
    pub fn any(self) -> bool {
        self.vfork.is_some() || self.pidfd.is_some()
    }

    /// Installs the filter in `cmd`'s child before exec (nothing when nothing is refused).
    pub fn apply(self, cmd: &mut Command) {
        if self.any() {
            imp::apply(self, cmd);
        }
    }
}

/// What [`VARIABLE`] asks for, installed in `cmd`'s child.
pub fn apply_from_env(cmd: &mut Command) {
    Refuse::from_env().apply(cmd);
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::Refuse;

    /// `AUDIT_ARCH_*` of this build (linux/audit.h).
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7;

    // Jumps count from the next instruction. Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    // Offsets in struct seccomp_data: nr, arch, then args[0] at 16 (its low half first on
    // little-endian x86_64 and AArch64).
    const NR: u32 = 0;
    const ARCH_OFFSET: u32 = 4;
    const ARG0: u32 = 16;

    fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
        libc::sock_filter { code, jt, jf, k }
    }

    /// The program: other architectures and calls are allowed; `clone` whose flags hold
    /// `CLONE_VFORK` and `pidfd_open` return their errno.
    pub fn program(refuse: Refuse) -> Vec<libc::sock_filter> {
        let ret = |errno: Option<i32>| match errno {
            Some(e) => SECCOMP_RET_ERRNO | u32::try_from(e).unwrap(),
            None => SECCOMP_RET_ALLOW,
        };
        let clone = u32::try_from(libc::SYS_clone).unwrap();
        let pidfd_open = u32::try_from(libc::SYS_pidfd_open).unwrap();
        let vfork = u32::try_from(libc::CLONE_VFORK).unwrap();
        vec![
            /* 0 */ op(LD_W_ABS, 0, 0, ARCH_OFFSET),
            /* 1 */ op(JEQ_K, 0, 6, ARCH), // another architecture: 8, allow
            /* 2 */ op(LD_W_ABS, 0, 0, NR),
            /* 3 */ op(JEQ_K, 0, 2, clone), // not clone: 6
            /* 4 */ op(LD_W_ABS, 0, 0, ARG0),
            /* 5 */ op(JSET_K, 1, 2, vfork), // CLONE_VFORK: 7; else 8
            /* 6 */ op(JEQ_K, 2, 1, pidfd_open), // pidfd_open: 9; else 8
            /* 7 */ op(RET_K, 0, 0, ret(refuse.vfork)),
            /* 8 */ op(RET_K, 0, 0, SECCOMP_RET_ALLOW),
            /* 9 */ op(RET_K, 0, 0, ret(refuse.pidfd)),
        ]
    }

    pub fn apply(refuse: Refuse, cmd: &mut Command) {
        let filter = program(refuse);
        // SAFETY: prctl is async-signal-safe; `filter` was built before the fork and is only
        // read here.
        unsafe {
            cmd.pre_exec(move || {
                let prog = libc::sock_fprog {
                    len: u16::try_from(filter.len()).unwrap_or(0),
                    filter: filter.as_ptr().cast_mut(),
                };
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER,
                        &raw const prog,
                    ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use std::process::Command;

    use super::Refuse;

    pub fn apply(_refuse: Refuse, _cmd: &mut Command) {
        panic!(
            "{}: seccomp filters are for Linux on x86_64 and AArch64",
            super::VARIABLE
        );
    }
}
