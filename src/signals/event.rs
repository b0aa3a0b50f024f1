//! What the event loop hears about ([`Event`]) and what a wait outside it came to ([`Ready`]):
//! the same on every system.

/// What the supervisor hears about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A child changed state (the attempt's pidfd or kqueue event, or SIGCHLD): reap.
    Child,
    /// retry received `signal`; `from_kernel` when the kernel sent it through the terminal (a
    /// terminal's Ctrl-C, Ctrl-\ or hangup), not another process's `kill`.
    Signal {
        /// The signal number.
        signal: i32,
        /// Sent by the kernel through the terminal: INT, QUIT or HUP with `si_code`
        /// `SI_KERNEL` (not XCPU, XFSZ or a timer's ALRM, which reach retry alone).
        from_kernel: bool,
    },
}

/// What a wait outside the event loop came to (`wait_ready`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    /// The descriptor is ready (or has an error or hang-up: the next call says which).
    Ready,
    /// A stop signal is queued: give up the wait; the event loop ends the run by it.
    Stop,
    /// The time limit passed.
    TimedOut,
}
