//! Which of stdin, stdout and stderr were closed when retry was started (`retry ... >&-`), so
//! that they are closed for the attempt too, as under coreutils `timeout`.
//!
//! A closed descriptor 0, 1 or 2 is reopened on `/dev/null` before retry's work begins (by
//! [`crate::start::main`] for the binary, by std's runtime, `sanitize_standard_fds` in
//! rust-lang/rust `library/std/src/sys/pal/unix/mod.rs`, for tests), and a `/dev/null` opened
//! there cannot be told from one the caller gave. So the descriptors are looked at earlier, from
//! a constructor in `.init_array`, which the dynamic loader runs before `main` (std itself reads
//! `argv` the same way on glibc). Linux only; elsewhere (Windows included) nothing counts as
//! closed.

use std::sync::atomic::{AtomicU8, Ordering};

/// Bit `fd` is set when descriptor `fd` (0, 1 or 2) was closed at start.
static CLOSED: AtomicU8 = AtomicU8::new(0);

/// Which of descriptors 0, 1 and 2 are closed now: bit `fd` set for each. Never any on
/// Windows, whose standard handles std gives whether or not they are set.
#[cfg(windows)]
pub fn closed_now() -> u8 {
    0
}

/// Which of descriptors 0, 1 and 2 are closed now: bit `fd` set for each.
#[cfg(unix)]
pub fn closed_now() -> u8 {
    // F_GETFD only reads a descriptor's flags; it fails with EBADF when it is not open.
    // rustix's `stdio` hands out 0, 1 and 2 whether open or not (std assumes they are).
    let std_fds = [
        rustix::stdio::stdin(),
        rustix::stdio::stdout(),
        rustix::stdio::stderr(),
    ];
    let mut closed = 0;
    for (fd, borrowed) in std_fds.into_iter().enumerate() {
        if rustix::io::fcntl_getfd(borrowed).is_err() {
            closed |= 1 << fd;
        }
    }
    closed
}

/// Runs before `main` (and before std's start-up code): notes which of 0, 1, 2 are closed.
#[cfg(target_os = "linux")]
extern "C" fn note_closed_std_fds(
    _argc: libc::c_int,
    _argv: *const *const libc::c_char,
    _envp: *const *const libc::c_char,
) {
    CLOSED.fetch_or(closed_now(), Ordering::Relaxed);
}

/// The constructor's entry in `.init_array`; it lives in this module beside [`closed_at_start`],
/// which the supervisor calls, so the linker keeps it (std's `ARGV_INIT_ARRAY` does the same).
#[cfg(target_os = "linux")]
#[used]
// SAFETY: `.init_array` holds pointers to functions the loader calls before `main` with
// (argc, argv, envp); the function above has that signature and touches only an atomic.
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STD_FDS: extern "C" fn(
    libc::c_int,
    *const *const libc::c_char,
    *const *const libc::c_char,
) = note_closed_std_fds;

/// Whether descriptor `fd` (0 stdin, 1 stdout, 2 stderr) was closed when retry was started.
/// Always `false` for other descriptors and on systems other than Linux.
pub fn closed_at_start(fd: i32) -> bool {
    (0..3).contains(&fd) && CLOSED.load(Ordering::Relaxed) & (1 << fd) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_standard_descriptors_can_count_as_closed() {
        assert!(!closed_at_start(3));
        assert!(!closed_at_start(-1));
    }
}
