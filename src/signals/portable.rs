//! Signals as events without signalfd or pidfd (macOS, FreeBSD, the `portable` build on Linux),
//! still on the supervisor's one thread: a `SA_SIGINFO` handler writes each signal, with
//! whether the kernel sent it (`si_code`), as a two-byte record into a non-blocking pipe (the
//! self-pipe trick), and the event loop waits on that pipe's read end, with its time limit, in
//! [`super::Waiter`]: `poll` (`poll.rs`), or `kevent` on macOS and FreeBSD (`kqueue.rs`), which
//! also watches the running attempt's end with `EVFILT_PROC`/`NOTE_EXIT`. The attempt's end
//! otherwise arrives as SIGCHLD. No helper thread, no periodic wake-up.
//!
//! The handler makes only async-signal-safe calls (`write`) and saves `errno`. A stop signal
//! also sets a flag and writes to a second pipe that nobody reads: it is readable exactly once
//! a stop signal has arrived, which [`wait_ready`] watches beside its own descriptor.
//!
//! Handlers are installed with `SA_RESTART`, so the pipeline's threads see no `EINTR` from a
//! signal that lands on them; every signal is blocked while one runs. A child has them reset
//! to the default before its mask is cleared (`process::dispositions::caught`, `process/child.rs`).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, poll};

use super::event::{Event, Ready};
use super::listen::{clear_mask, reap_own_children, wanted};
use super::poll_timeout::poll_timeout_for;
use super::roles::{from_terminal, is_stop};
use super::waiter::{Waiter, Woke};
use crate::process::Attempt;

/// The event pipe: (read end, write end), both non-blocking and close-on-exec.
static EVENT_PIPE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();
/// The stop pipe: written once per stop signal, never read.
static STOP_PIPE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();
/// The write ends as raw numbers, for the handler (-1 until [`Events::listen`]).
static EVENT_WRITE: AtomicI32 = AtomicI32::new(-1);
static STOP_WRITE: AtomicI32 = AtomicI32::new(-1);
/// A stop signal has arrived (it ends the run: the flag is never cleared).
static STOPPED: AtomicBool = AtomicBool::new(false);

/// The event loop's side: the pipe's read end and the waiter.
#[derive(Debug)]
pub struct Events {
    read: BorrowedFd<'static>,
    waiter: Waiter,
    /// Records read from the pipe and not yet returned.
    queued: RefCell<VecDeque<Event>>,
}

impl Events {
    /// Clears the mask, sets SIGCHLD back to its default if ignored, and installs the handler
    /// for the wanted signals (stop, pass-on and CHLD, less those ignored at start). Call
    /// before any other thread starts.
    ///
    /// # Errors
    /// When the mask cannot be set, a pipe or the waiter cannot be made, or a handler cannot be
    /// installed.
    pub fn listen() -> io::Result<Events> {
        clear_mask()?;
        reap_own_children();
        let events = pipe_once(&EVENT_PIPE)?;
        let stops = pipe_once(&STOP_PIPE)?;
        EVENT_WRITE.store(events.1.as_raw_fd(), Ordering::Release);
        STOP_WRITE.store(stops.1.as_raw_fd(), Ordering::Release);
        let waiter = Waiter::new(events.0.as_fd())?;
        for signal in wanted() {
            install(signal)?;
        }
        Ok(Events {
            read: events.0.as_fd(),
            waiter,
            queued: RefCell::new(VecDeque::new()),
        })
    }

    /// Watches `child` (the running attempt or hook) for its end, where the waiter can
    /// (kqueue); SIGCHLD tells it everywhere.
    pub fn watch_child(&self, child: &Attempt) {
        self.waiter.watch_child(child.pid());
    }

    /// Stops watching: call once the child is reaped.
    pub fn unwatch_child(&self) {
        self.waiter.unwatch_child();
    }

    /// The next event, waiting at most until `until` (`None`: no limit); `None` when that
    /// time came first. A queued event is returned even when `until` has already passed.
    pub fn wait(&self, until: Option<Instant>) -> Option<Event> {
        loop {
            if let Some(event) = self.try_next() {
                return Some(event);
            }
            match self.waiter.wait(until) {
                Woke::Child => return Some(Event::Child),
                Woke::TimedOut => return self.try_next(),
                Woke::Ready | Woke::Interrupted => {}
            }
        }
    }

    /// The next queued event, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        let mut queued = self.queued.borrow_mut();
        if queued.is_empty() {
            drain(self.read, &mut queued);
        }
        queued.pop_front()
    }
}

/// Reads every whole record waiting in the pipe into `queued`.
fn drain(read: BorrowedFd<'_>, queued: &mut VecDeque<Event>) {
    // Records are two bytes, each written at once (below PIPE_BUF), so an even-sized read
    // never splits one.
    let mut buf = [0u8; 128];
    loop {
        match nix::unistd::read(read, &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                for record in buf[..n].chunks_exact(2) {
                    let signal = c_int::from(record[0]);
                    queued.push_back(if signal == libc::SIGCHLD {
                        Event::Child
                    } else {
                        Event::Signal {
                            signal,
                            from_kernel: record[1] != 0,
                        }
                    });
                }
            }
        }
    }
}

/// Makes a pipe once per process, non-blocking and close-on-exec at both ends.
fn pipe_once(
    cell: &'static OnceLock<(OwnedFd, OwnedFd)>,
) -> io::Result<&'static (OwnedFd, OwnedFd)> {
    if let Some(pipe) = cell.get() {
        return Ok(pipe);
    }
    let (read, write) = crate::process::cloexec_pipe()?;
    for fd in [&read, &write] {
        fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    }
    Ok(cell.get_or_init(|| (read, write)))
}

/// Installs retry's handler for `signal`, with every signal blocked while it runs, and notes
/// it for the children (`process::dispositions`, which sets it back to the default in them).
fn install(signal: c_int) -> io::Result<()> {
    // SAFETY: sigaction_t is plain data; zeroed then filled; `on_signal` has the SA_SIGINFO
    // signature and is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigfillset(&mut action.sa_mask);
        if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    crate::process::dispositions::note_caught(signal)
}

/// The handler: a record into the event pipe; for a stop signal, the flag and a byte into the
/// stop pipe. A fault of retry's own (BUS, SEGV, ILL, FPE, TRAP, SYS sent by the kernel for
/// an instruction of retry's, not by `kill`) instead gets its default action back and is
/// raised again, so that retry dies of it as it would have without the handler (returning
/// would run the faulting instruction again, for ever). Async-signal-safe; `errno` is kept as
/// it was.
extern "C" fn on_signal(signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
    let errno = errno_location();
    // SAFETY: errno_location points to this thread's errno.
    let saved = unsafe { *errno };
    let code = if info.is_null() {
        0
    } else {
        // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO (null checked anyway).
        unsafe { (*info).si_code }
    };
    if is_fault(signal, code) {
        // SAFETY: signal and raise are async-signal-safe; SIG_DFL installs no handler. The
        // raised signal stays pending (every signal is blocked while the handler runs) and
        // ends the process with its default action as the handler returns.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
            *errno = saved;
        }
        return;
    }
    if is_stop(signal) {
        STOPPED.store(true, Ordering::Release);
        let fd = STOP_WRITE.load(Ordering::Acquire);
        // SAFETY: write of one byte from a static to a descriptor of ours (or -1: EBADF).
        unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
    }
    let record = [
        u8::try_from(signal).unwrap_or(0),
        u8::from(from_terminal(signal, code)),
    ];
    let fd = EVENT_WRITE.load(Ordering::Acquire);
    // SAFETY: write of a local buffer to a descriptor of ours (or -1: EBADF). A full pipe
    // (32,768 unread signals) drops the record.
    unsafe { libc::write(fd, record.as_ptr().cast(), record.len()) };
    // SAFETY: as above.
    unsafe { *errno = saved };
}

/// Whether `signal` with `si_code` `code` is a fault the kernel raised for an instruction of
/// retry's own: a fault signal with a positive code below the `SI_USER`.. range of macOS and
/// FreeBSD (`SEGV_MAPERR`, `BUS_ADRERR`, `ILL_ILLOPC`, `FPE_INTDIV`, `TRAP_BRKPT`,
/// `SYS_SECCOMP` and Linux's `SI_KERNEL` are; `SI_USER` (0 on Linux, 0x10001 on the BSDs),
/// `SI_QUEUE` and `SI_TKILL` (negative) are not), as POSIX's `<signal.h>` lists the codes
/// (<https://pubs.opengroup.org/onlinepubs/9699919799/basedefs/signal.h.html>).
fn is_fault(signal: c_int, code: c_int) -> bool {
    [
        libc::SIGBUS,
        libc::SIGSEGV,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGTRAP,
        libc::SIGSYS,
    ]
    .contains(&signal)
        && (1..0x10000).contains(&code)
}

/// This thread's `errno`.
fn errno_location() -> *mut c_int {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: no preconditions.
    return unsafe { libc::__errno_location() };
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    // SAFETY: no preconditions.
    return unsafe { libc::__error() };
}

/// Whether a stop signal ([`STOP_SIGNALS`](super::roles::STOP_SIGNALS)) has arrived, still
/// queued for the event loop or read by it already (either way the run is ending). Always
/// `false` before [`Events::listen`] (the signals then have their default action and end retry
/// themselves).
pub fn stop_arrived() -> bool {
    STOPPED.load(Ordering::Acquire)
}

/// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`; an error or hang-up counts as
/// ready), a stop signal is queued ([`stop_arrived`]), or `until` passes (`None`: no time
/// limit), whichever comes first; at once [`Ready::Stop`] when one has arrived before. The one
/// way retry waits outside its event loop.
pub fn wait_ready(fd: BorrowedFd<'_>, events: PollFlags, until: Option<Instant>) -> Ready {
    loop {
        if stop_arrived() {
            return Ready::Stop;
        }
        let left = until.map(|t| t.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Ready::TimedOut;
        }
        let mut fds = vec![PollFd::new(fd, events)];
        if let Some((read, _)) = STOP_PIPE.get() {
            fds.push(PollFd::new(read.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, poll_timeout_for(left)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) if fds[0].revents().is_some_and(|r| !r.is_empty()) && !stop_arrived() => {
                return Ready::Ready;
            }
            Ok(_) => {}
            Err(_) => return Ready::Ready,
        }
    }
}
