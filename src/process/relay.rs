//! The relay: a small process that passes on what a successful attempt's leftovers (a server
//! started in the background, a daemon) still write to the attempt's stdout and stderr pipes,
//! to retry's stdout and stderr, so that retry itself ends when the attempt does, with its
//! status, as it does without the flags that put it between the attempt and its output.
//!
//! A pipe already handed to a leftover cannot be swapped for retry's own descriptor after the
//! fact, so somebody must go on reading it: retry forks the relay once the attempt's own output
//! and a held stdout are written, and exits. The relay copies each pipe, as it comes, until
//! every writer has closed it (as `cmd | cat` does), then ends; retry's caller, reading retry's
//! stdout, sees its end when the leftover closes the pipe, exactly as it would without retry
//! (`$(retry ... -- ./deploy.sh)` waits for a server that keeps stdout, as
//! `$(./deploy.sh)` does).
//!
//! The relay is not an attempt: it leads a process group of its own (so that retry's exit, or a
//! signal to the group retry ran in, leaves it to the leftover's fate), gets no parent-death
//! signal, and has the default action for every signal retry reads, so that a stop signal sent
//! to it ends it at once. It ignores SIGPIPE as retry does: a reader that went away (`EPIPE`)
//! ends the passing on of that pipe quietly and closes the pipe, so the leftover meets a broken
//! pipe there, as it would writing to that reader itself. Any other write error is said on
//! stderr, in the line retry would have written. It keeps nothing else of retry's open (a
//! `--lock` file, retry's stdin, other pipes): only the two pipes, and retry's stdout and
//! stderr while it passes on to them (stderr also for a failure's line). Once retry has exited, the relay is reparented (to init or
//! the nearest subreaper), which reaps it when it ends.
//!
//! After `fork` in a process with threads, the child may make only async-signal-safe calls
//! (POSIX `fork`, <https://pubs.opengroup.org/onlinepubs/9699919799/functions/fork.html>): the
//! relay allocates nothing and takes no lock; its buffer and messages are prepared before the
//! fork, and it makes only system calls (`poll`, `read`, `write`, `close`, `dup2`, `fcntl`,
//! `sigaction`, `sigpending`, `sigprocmask`, `setpgid`, `_exit`), as [`super::child`] does
//! before `exec`. retry moves it to its own group too, right after the fork, so that retry's
//! end (which hangs up the terminal's foreground group when retry leads the session) never
//! finds it in retry's group.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::ptr;

use super::child;

/// Read size of the relay.
const CHUNK: usize = 64 << 10;
/// The descriptors the relay reads its pipes from: the attempt's stdout pipe, then its stderr
/// pipe. Everything from `FIRST_CLOSED` on is closed.
const SOURCES: [RawFd; 2] = [3, 4];
const FIRST_CLOSED: RawFd = 5;
/// Where the pipes are first moved, above every descriptor the relay keeps.
const ABOVE: RawFd = 10;
/// One past the highest signal number looked at for a pending signal (Linux has 64; the
/// others fewer).
const SIGNALS: libc::c_int = 65;

/// One pipe for the relay: the read end, whether what comes is written to retry's matching
/// stream (`false`: read and dropped, as `--chronic` drops a successful run's output), and the
/// line to say on stderr if a write there fails for a reason other than a reader gone.
#[derive(Debug)]
pub struct Relayed<'a> {
    /// The pipe's read end (retry keeps its copy; close it once the relay has started).
    pub pipe: BorrowedFd<'a>,
    /// Write what comes to retry's stdout (for the stdout pipe) or stderr (stderr pipe).
    pub pass_on: bool,
    /// What to say when writing fails (the error's words follow it).
    pub failure: Vec<u8>,
}

/// Everything the relay needs, prepared before the fork.
struct Plan {
    /// `(descriptor in retry, pass on)`, for stdout and stderr; `-1`: none.
    sources: [(RawFd, bool); 2],
    /// The failure lines, before the error's words, and the words for a few errors.
    failures: [Vec<u8>; 2],
    words: Vec<(i32, Vec<u8>)>,
    /// Signals to set back to their default action (the ones retry catches, SIGCHLD).
    defaults: Vec<i32>,
    /// The highest descriptor to close where `close_range` is missing.
    highest: RawFd,
}

/// Starts the relay for the attempt's `stdout` and `stderr` pipes; returns its pid. The caller
/// then closes its own copies of the pipes.
///
/// # Errors
/// When `fork` fails (a process limit): nothing was started, the pipes are as they were.
pub fn start(stdout: Option<Relayed<'_>>, stderr: Option<Relayed<'_>>) -> io::Result<i32> {
    let mut failures = [Vec::new(), Vec::new()];
    let mut sources = [(-1, false); 2];
    for (i, relayed) in [stdout, stderr].into_iter().enumerate() {
        if let Some(r) = relayed {
            sources[i] = (r.pipe.as_raw_fd(), r.pass_on);
            failures[i] = r.failure;
        }
    }
    let words = [
        libc::ENOSPC,
        libc::EIO,
        libc::EDQUOT,
        libc::EFBIG,
        libc::EBADF,
        libc::EINVAL,
        libc::EAGAIN,
    ]
    .into_iter()
    .map(|e| {
        let text = io::Error::from_raw_os_error(e).to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        (e, text.into_bytes())
    })
    .collect();
    let mut defaults = super::dispositions::caught();
    defaults.push(libc::SIGCHLD);
    let plan = Plan {
        sources,
        failures,
        words,
        defaults,
        highest: highest_descriptor(),
    };
    let mut buf = vec![0u8; CHUNK];
    let old = child::block_all();
    // SAFETY: the child runs `relay_main`, which makes only async-signal-safe calls on memory
    // prepared here and ends in `_exit`; the parent only restores its mask and goes on.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the child of `fork`, with every signal blocked; `plan` and `buf` are the
        // child's own copies.
        unsafe { relay_main(&plan, &mut buf) }
    }
    let error = io::Error::last_os_error();
    if pid > 0 {
        // Its own group before retry goes on (the child does the same): retry's end must not
        // find it in retry's group, which may be the terminal's foreground group, hung up then.
        // An error (it did it first) is harmless.
        let child = nix::unistd::Pid::from_raw(pid);
        let _ = nix::unistd::setpgid(child, child);
    }
    child::restore_mask(&old);
    if pid < 0 {
        return Err(error);
    }
    Ok(pid)
}

/// The highest descriptor the relay might have to close where `close_range` is missing: the
/// soft `RLIMIT_NOFILE` (no descriptor can be at or past it), at most 2^20.
fn highest_descriptor() -> RawFd {
    let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1 << 16, |(soft, _)| soft);
    RawFd::try_from(limit.min(1 << 20)).unwrap_or(1 << 16)
}

/// The relay, in the child of `fork`: see the module doc. Never returns.
///
/// # Safety
/// Only in the child of `fork`, with every signal blocked.
unsafe fn relay_main(plan: &Plan, buf: &mut [u8]) -> ! {
    // SAFETY: every call below is an async-signal-safe system call on the child's own
    // descriptors and on memory prepared before the fork; no allocation, no lock.
    unsafe {
        for &signal in &plan.defaults {
            libc::signal(signal, libc::SIG_DFL);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::setpgid(0, 0);
        // A signal pending now came while the relay was still in retry's group (blocked since
        // the fork): it was meant for retry, which has it too. Dropped: ignoring a pending
        // signal discards it (POSIX `sigaction`), and the default comes back.
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut pending);
        for signal in 1..SIGNALS {
            if signal != libc::SIGKILL
                && signal != libc::SIGSTOP
                && libc::sigismember(&pending, signal) == 1
            {
                let was = libc::signal(signal, libc::SIG_IGN);
                libc::signal(signal, was);
            }
        }
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"retry-relay".as_ptr(), 0, 0, 0);
        // The pipes to 3 and 4 (through descriptors above all that are kept, so that neither
        // move overwrites the other), then everything else closed but stdout and stderr.
        let high = plan.sources.map(|(fd, _)| {
            if fd >= 0 {
                libc::fcntl(fd, libc::F_DUPFD, ABOVE)
            } else {
                -1
            }
        });
        let mut open = [false; 2];
        for (i, &fd) in high.iter().enumerate() {
            open[i] = fd >= 0 && libc::dup2(fd, SOURCES[i]) == SOURCES[i];
            if !open[i] {
                // Whatever retry had there (a `--lock` file, say) is not the relay's.
                libc::close(SOURCES[i]);
            }
        }
        close_from(FIRST_CLOSED, plan.highest);
        libc::close(0);
        let mut kept = [true; 2];
        keep_only_what_is_needed(plan, open, &mut kept);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, ptr::null_mut());
        loop {
            let mut fds = [libc::pollfd {
                fd: -1,
                events: libc::POLLIN,
                revents: 0,
            }; 2];
            for i in 0..2 {
                if open[i] {
                    fds[i].fd = SOURCES[i];
                }
            }
            if !open.contains(&true) {
                break;
            }
            if libc::poll(fds.as_mut_ptr(), 2, -1) < 0 {
                if child::errno() == libc::EINTR {
                    continue;
                }
                break;
            }
            for i in 0..2 {
                if !open[i] || fds[i].revents == 0 {
                    continue;
                }
                let n = libc::read(SOURCES[i], buf.as_mut_ptr().cast(), buf.len());
                let ended = match n {
                    0 => true,
                    n if n < 0 => !matches!(child::errno(), libc::EINTR | libc::EAGAIN),
                    n => {
                        let data = &buf[..n.unsigned_abs()];
                        plan.sources[i].1 && !write_all(1 + i as RawFd, data, plan, i)
                    }
                };
                if ended {
                    // Its writers meet a broken pipe from now on, as they would writing to a
                    // reader that went away.
                    libc::close(SOURCES[i]);
                    open[i] = false;
                    keep_only_what_is_needed(plan, open, &mut kept);
                }
            }
        }
        libc::_exit(0)
    }
}

/// Closes retry's stdout and stderr (`kept`: still open) once nothing needs them: stdout
/// while an `open` pipe is passed on to it, stderr while any is (for a failure's line). So
/// a reader of retry's output waits for no leftover whose output is dropped (`--chronic`).
///
/// # Safety
/// In the relay (async-signal-safe calls only).
unsafe fn keep_only_what_is_needed(plan: &Plan, open: [bool; 2], kept: &mut [bool; 2]) {
    let passing = [0, 1].map(|i| open[i] && plan.sources[i].1);
    let need = [passing[0], passing[0] || passing[1]];
    for (i, fd) in [1, 2].into_iter().enumerate() {
        if kept[i] && !need[i] {
            // SAFETY: close of retry's stdout or stderr, in the relay's own table.
            unsafe { libc::close(fd) };
            kept[i] = false;
        }
    }
}

/// Writes all of `data` to `fd` (blocking, as retry writes); `false` when a write failed,
/// which is said on stderr unless the reader is gone (`EPIPE`).
///
/// # Safety
/// In the relay (async-signal-safe calls only).
unsafe fn write_all(fd: RawFd, mut data: &[u8], plan: &Plan, stream: usize) -> bool {
    while !data.is_empty() {
        // SAFETY: write from a valid slice.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n > 0 {
            data = &data[n.unsigned_abs()..];
            continue;
        }
        let e = child::errno();
        match e {
            libc::EINTR => {}
            libc::EAGAIN => {
                // A non-blocking descriptor: wait until it takes more.
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: poll on one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, -1) };
            }
            libc::EPIPE => return false,
            _ => {
                // SAFETY: the failure line and the error's words, prepared before the fork.
                unsafe { say_failure(plan, stream, e) };
                return false;
            }
        }
    }
    true
}

/// Writes the failure line of `stream` for error `e` on stderr (best effort).
///
/// # Safety
/// In the relay (async-signal-safe calls only).
unsafe fn say_failure(plan: &Plan, stream: usize, e: i32) {
    let line = &plan.failures[stream];
    let Some(end) = line.iter().rposition(|&b| b == b'\n') else {
        return;
    };
    // The line ends in "...: " before its newline (text) or `: "}` (JSON): the words go in
    // at the marker `{}` the caller left, else just before the newline.
    let (head, tail) = match line.windows(2).position(|w| w == b"{}") {
        Some(at) => (&line[..at], &line[at + 2..]),
        None => (&line[..end], &line[end..]),
    };
    let generic: &[u8] = b"a write failed";
    let words = plan
        .words
        .iter()
        .find(|(errno, _)| *errno == e)
        .map_or(generic, |(_, w)| w.as_slice());
    for part in [head, words, tail] {
        // SAFETY: write from valid slices; a failure here has nowhere to be said.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
}

/// Closes every descriptor from `first` on: `close_range` where the kernel has it (Linux 5.9),
/// else one by one up to `highest`.
///
/// # Safety
/// In the relay (async-signal-safe calls only).
unsafe fn close_from(first: RawFd, highest: RawFd) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range on a range of descriptor numbers, no flags.
        if unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                0,
            )
        } == 0
        {
            return;
        }
    }
    for fd in first..=highest {
        // SAFETY: close of a descriptor number; EBADF for those not open.
        unsafe { libc::close(fd) };
    }
}
