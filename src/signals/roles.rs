//! What each signal retry listens to means for the run: a stop ([`STOP_SIGNALS`], ALRM as
//! retry's timer), passed on ([`passed_on`]), or sent by a terminal to its whole foreground
//! group ([`from_terminal`]).

/// The signals whose default action ends a process and that retry treats as a stop: passed
/// on to the running attempt or hook (with CONT), no further attempt, and retry ends as that
/// attempt ended (between attempts: by the signal itself, at once). INT, TERM, HUP and QUIT
/// as coreutils `timeout` catches them; ALRM is retry's timer, as `timeout`'s own: the attempt
/// is stopped as at its `--timeout` instead ([`ALARM`]); the rest so that no signal but KILL
/// ends retry while leaving what it started. BUS, SEGV, ILL, FPE, TRAP and SYS count only when
/// a process sends them (`kill`): a fault of retry's own still ends it at once, as it must
/// (the kernel forces the default action of a blocked fault signal; the portable handler
/// restores it). The table is in docs/timeouts-and-signals.md.
#[cfg(unix)]
pub const STOP_SIGNALS: &[i32] = &[
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGABRT,
    libc::SIGSYS,
    libc::SIGTRAP,
    libc::SIGBUS,
    libc::SIGSEGV,
    libc::SIGILL,
    libc::SIGFPE,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGSTKFLT,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGPWR,
    // Linux's SIGIO (SIGPOLL) ends a process by default; on the BSDs it is ignored.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    libc::SIGIO,
    #[cfg(any(target_os = "macos", target_os = "freebsd"))]
    libc::SIGEMT,
];

/// The stop signal that is retry's timer, as coreutils `timeout` takes SIGALRM for its own
/// (<https://github.com/coreutils/coreutils/blob/master/src/timeout.c>, `cleanup`): the running
/// attempt is stopped as at its `--timeout` (`--signal`, then KILL after `--kill-after`; status
/// 124 or 137) and not retried.
#[cfg(unix)]
pub const ALARM: i32 = libc::SIGALRM;

/// The stop signals a terminal sends to its whole foreground process group (Ctrl-C, Ctrl-\,
/// hangup): sent by the kernel, they have already reached an attempt in retry's group.
#[cfg(unix)]
const TERMINAL_SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP];

/// Signals passed on to the running attempt; retrying goes on: USR1, USR2 and the real-time
/// signals, which mean what an application makes them mean.
#[cfg(unix)]
pub fn passed_on(signal: i32) -> bool {
    signal == libc::SIGUSR1
        || signal == libc::SIGUSR2
        || crate::stop_signal::realtime_range()
            .is_some_and(|(min, max)| (min..=max).contains(&signal))
}

/// On Windows, the console's control events as their signals (`signals/windows.rs`): Ctrl-C
/// (INT), Ctrl-Break (BREAK) and a closed console, logoff or shutdown (HUP), each a stop.
#[cfg(windows)]
pub const STOP_SIGNALS: &[i32] = &[
    crate::signal_names::INTERRUPT,
    crate::signal_names::BREAK,
    1,
];

/// On Windows no event is retry's timer: SIGALRM's number, which nothing sends there.
#[cfg(windows)]
pub const ALARM: i32 = 14;

/// On Windows nothing is passed on and retrying goes on: there are no other signals.
#[cfg(windows)]
pub fn passed_on(_signal: i32) -> bool {
    false
}

/// Whether `signal` is one of [`STOP_SIGNALS`].
pub fn is_stop(signal: i32) -> bool {
    STOP_SIGNALS.contains(&signal)
}

/// Whether a signal with `si_code` `code` from the kernel has reached an attempt in retry's
/// process group too: a terminal's INT, QUIT or HUP ([`TERMINAL_SIGNALS`]); not the kernel's
/// XCPU or XFSZ for retry's own limits, nor ALRM from a timer.
#[cfg(unix)]
pub(super) fn from_terminal(signal: i32, code: i32) -> bool {
    TERMINAL_SIGNALS.contains(&signal) && from_kernel(code)
}

/// Whether a signal whose `si_code` is `code` was sent by the kernel (a terminal's Ctrl-C,
/// Ctrl-\ or hangup) rather than by a process (`kill`, `sigqueue`): Linux and FreeBSD say
/// `SI_KERNEL`; on macOS, whose terminal signals carry no code of their own, whatever is not
/// one of the `SI_USER`..`SI_MESGQ` codes a process or timer gives (not checked on a Mac here).
#[cfg(unix)]
fn from_kernel(code: i32) -> bool {
    #[cfg(target_os = "linux")]
    return code == 0x80;
    #[cfg(target_os = "freebsd")]
    return code == 0x10006;
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    return !(0x10001..=0x10005).contains(&code);
}
