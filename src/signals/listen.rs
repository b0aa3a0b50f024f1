//! What every event loop does first, the same on every system: clear the signal mask, take
//! SIGCHLD back from an ignoring parent, and list the signals to listen to (see the module
//! documentation of `signals`).

use super::roles::STOP_SIGNALS;

/// The signals retry listens to: the stop and pass-on signals not ignored at start, and CHLD.
pub(super) fn wanted() -> Vec<i32> {
    let realtime = crate::stop_signal::realtime_range()
        .into_iter()
        .flat_map(|(min, max)| min..=max);
    let mut wanted: Vec<i32> = STOP_SIGNALS
        .iter()
        .copied()
        .chain([libc::SIGUSR1, libc::SIGUSR2])
        .chain(realtime)
        .filter(|&s| !crate::process::dispositions::is_ignored(s))
        .collect();
    wanted.push(libc::SIGCHLD);
    wanted
}

/// Wakes the supervisor, which waits for I/O threads on its signal channel: a SIGCHLD to
/// retry itself. SIGCHLD only ever means "look again" to the supervisor (it reaps with
/// `WNOHANG`), so a spare one is harmless.
pub fn wake() {
    let _ = nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGCHLD);
}

/// Clears the calling thread's signal mask (see the module's documentation).
pub(super) fn clear_mask() -> std::io::Result<()> {
    nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )?;
    Ok(())
}

/// Sets SIGCHLD back to its default action if it was ignored (see the module documentation of
/// `signals`).
pub(super) fn reap_own_children() {
    if crate::process::dispositions::is_ignored(libc::SIGCHLD) {
        // SAFETY: SIG_DFL installs no handler; called from `listen`, before other threads.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    }
}
