//! The binary's start and end without std's runtime set-up: `main.rs` is `#![no_main]`, and
//! this module does the part of std's start-up that retry needs, and no more.
//!
//! Before `main`, std's runtime (`lang_start`, rust-lang/rust `library/std/src/rt.rs` and
//! `library/std/src/sys/pal/unix/mod.rs`) reopens a closed descriptor 0, 1 or 2 on
//! `/dev/null`, ignores SIGPIPE, and installs a stack-overflow handler. Finding the main
//! thread's stack for that handler is the costly part: glibc's `pthread_getattr_np` opens and
//! parses `/proc/self/maps` (about a tenth of the instructions `retry -- true` ran, plus an
//! `open`, four `read`s, an `mmap`, an `mprotect` and a `sigaltstack`). [`main`] does the first
//! two itself and skips the third: a stack overflow then ends retry with SIGSEGV rather than
//! with std's message and SIGABRT. After `main`, [`main`] ends through
//! [`std::process::exit`], which flushes stdout as std's runtime does.

use std::ffi::{CStr, OsString, c_char, c_int};
use std::os::fd::IntoRawFd;
use std::os::unix::ffi::OsStrExt;
use std::panic::{self, AssertUnwindSafe};

use rustix::fs::{Mode, OFlags};

use crate::status::Exit;

/// The status std gives a `main` that panicked; kept for a panic that reaches [`main`].
const PANICKED: u8 = 101;

/// The command-line arguments from the C `main`'s `argc` and `argv`, program name first.
///
/// # Safety
/// `argv` must point to `argc` pointers to NUL-terminated strings, as the C runtime passes
/// them to `main`, and those strings must stay unchanged for the duration of the call.
pub unsafe fn args(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    let count = usize::try_from(argc).unwrap_or(0);
    (0..count)
        .map(|i| {
            // SAFETY: the caller guarantees `argc` valid pointers at `argv`, each to a
            // NUL-terminated string; `i < argc`.
            let arg = unsafe { CStr::from_ptr(*argv.add(i)) };
            std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string()
        })
        .collect()
}

/// Runs `body` as the program's `main` and ends the process as the [`Exit`] it returns says:
/// by raising the signal for [`Exit::Signal`] (see [`crate::finish`]), otherwise with
/// [`Exit::code`]. Sets up first what std's runtime would: closed descriptors 0-2 reopened on
/// `/dev/null` (after [`crate::process::closed_at_start`] has noted them, so that they stay
/// closed for the attempts) and SIGPIPE ignored (a write to a closed pipe returns `EPIPE`;
/// attempts get back the disposition it had, noted first by
/// [`crate::process::dispositions::note_at_start`]). A panic in `body` has printed its message through the
/// panic hook and ends the process with status 101, as under std's runtime.
pub fn main(body: impl FnOnce() -> Exit) -> ! {
    reopen_closed_std_fds();
    // Before SIGPIPE is ignored: whether the caller ignored it, for the attempts.
    crate::process::dispositions::note_at_start();
    // SAFETY: SIG_IGN installs no handler; nothing else runs yet, so no other thread can be
    // changing the disposition at the same time.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let exit = caught(body);
    if let Exit::Signal(n) = exit {
        crate::process::die_by_signal(n);
    }
    std::process::exit(i32::from(exit.status()))
}

/// What `body` returns, or status 101 if it panicked (the message is printed by the hook).
fn caught(body: impl FnOnce() -> Exit) -> Exit {
    panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or(Exit::Code(PANICKED.into()))
}

/// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed, as std's
/// `sanitize_standard_fds` does, so that no file retry opens later takes their place. Aborts,
/// as std does, if that cannot be done.
fn reopen_closed_std_fds() {
    const DEV_NULL: &CStr = c"/dev/null";
    let closed = crate::process::closed_now();
    for fd in 0..3 {
        if closed & (1 << fd) == 0 {
            continue;
        }
        // Left open for the life of the process (without O_CLOEXEC, as std opens it).
        let opened =
            rustix::fs::open(DEV_NULL, OFlags::RDWR, Mode::empty()).map(IntoRawFd::into_raw_fd);
        if opened.ok() != c_int::try_from(fd).ok() {
            // The lowest free descriptor is `fd` itself, since 0..fd are open by now.
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_ends_with_101() {
        // Also shows that unwinding works with the unwinder build.rs links in statically.
        assert_eq!(caught(|| panic!("deliberate")), Exit::Code(PANICKED.into()));
        assert_eq!(caught(|| Exit::Code(3)), Exit::Code(3));
    }

    #[test]
    fn args_are_read_from_argc_and_argv_as_given() {
        let strings = [c"retry", c"--", c"printf", c"\xff a"];
        let argv: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: four valid NUL-terminated strings that outlive the call.
        let got = unsafe { args(4, argv.as_ptr()) };
        let want: Vec<OsString> = strings
            .iter()
            .map(|s| std::ffi::OsStr::from_bytes(s.to_bytes()).to_os_string())
            .collect();
        assert_eq!(got, want);
        // SAFETY: no pointer is read when argc is 0 (or negative).
        assert!(unsafe { args(0, std::ptr::null()) }.is_empty());
        // SAFETY: as above.
        assert!(unsafe { args(-1, std::ptr::null()) }.is_empty());
    }
}
