//! Jammed outputs: retry run with its stdout and stderr, and every file it may write
//! (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`), being pipes or FIFOs that a reader holds open but
//! never reads, already full, and stdin a pipe nobody writes. Once retry is blocked somewhere,
//! TERM must end it within a second: retry keeps its signals blocked (it reads them from a
//! signalfd), so a call that blocks outside its event loop would make it deaf to TERM.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::proc::stat;
use super::{HANG_LIMIT, retry_std};

/// How long retry may take to end after TERM (the "at once").
const STOP_LIMIT: Duration = Duration::from_secs(1);
/// How long a retry that is not deaf (it left the call it was blocked in) may take, on a
/// machine so loaded that it waits for a CPU.
const STARVED_LIMIT: Duration = Duration::from_secs(10);

/// A pipe with `O_CLOEXEC` on both ends: (read, write).
fn pipe() -> (OwnedFd, OwnedFd) {
    retry::process::cloexec_pipe().unwrap()
}

/// Writes to `fd` until it would block, then leaves its description blocking again: the pipe
/// behind it is full, so the next blocking write to it waits for a reader.
fn fill(fd: &OwnedFd) {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; the flags are restored below.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    // SAFETY: as above.
    unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) };
    let chunk = [b'j'; 65536];
    loop {
        // SAFETY: writes from a valid buffer to our own descriptor.
        let n = unsafe { libc::write(raw, chunk.as_ptr().cast(), chunk.len()) };
        if n <= 0 {
            break;
        }
    }
    // SAFETY: restores the flags read above.
    unsafe { libc::fcntl(raw, libc::F_SETFL, flags) };
}

/// A full pipe whose reader never reads: (the reader, kept open by the test; the writer).
pub fn full_pipe() -> (OwnedFd, OwnedFd) {
    let (read, write) = pipe();
    fill(&write);
    (read, write)
}

/// A FIFO at `path` that a reader (returned, kept open by the test) holds open and never
/// reads, filled up.
pub fn full_fifo(path: &Path) -> OwnedFd {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // SAFETY: opening our own FIFO; the reader first (non-blocking), so the writer's open
    // does not wait.
    let reader = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    assert!(reader >= 0);
    // SAFETY: as above.
    let writer = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    assert!(writer >= 0);
    // SAFETY: both just opened, owned by nobody else.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(reader), OwnedFd::from_raw_fd(writer)) };
    fill(&writer);
    reader
}

/// The main thread's state letter and the system call it is in (`/proc/PID/syscall`'s first
/// field, or `running`); `None` once it is gone or a zombie.
fn where_blocked(pid: i32) -> Option<(char, String)> {
    let st = stat(pid)?;
    if !st.is_live() {
        return None;
    }
    let call = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    Some((
        st.state,
        call.split_whitespace().next().unwrap_or("").to_string(),
    ))
}

/// Whether retry's main thread sleeps in a call that no time ends: write(2) (1 on x86_64, 64
/// on aarch64) to a reader that never reads, ppoll(2) (271 on x86_64) without a timeout (its
/// third argument, the timespec pointer, is 0) or poll(2) (7, the portable build's) with a
/// timeout of -1: only I/O or a signal wakes it.
fn asleep_for_good(pid: i32) -> bool {
    let call = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    let fields: Vec<&str> = call.split_whitespace().collect();
    match fields.as_slice() {
        ["1" | "64", ..] => true,
        ["271", _fds, _nfds, timeout, ..] => *timeout == "0x0",
        ["7", _fds, _nfds, timeout, ..] => matches!(*timeout, "0xffffffff" | "0xffffffffffffffff"),
        _ => false,
    }
}

/// What a jammed run came to.
#[derive(Debug)]
pub struct Jammed {
    /// Where retry was blocked when TERM was sent (`/proc/PID/syscall`'s first field);
    /// `None` when it had ended before.
    pub blocked_in: Option<String>,
    /// How long retry took to end after TERM.
    pub stopped_after: Duration,
    /// Its wait status: exit code, or the signal it died of.
    pub status: std::process::ExitStatus,
}

/// A scratch directory with the jammed files: `github-output` and `step-summary` (full FIFOs),
/// `marker` (written by the test command when it runs).
pub struct Scene {
    /// The directory.
    pub dir: tempfile::TempDir,
    /// The FIFOs' readers, held open (and never read) for the scene's life.
    _readers: Vec<OwnedFd>,
}

impl Scene {
    /// A new scene with its FIFOs.
    pub fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let readers = vec![
            full_fifo(&dir.path().join("github-output")),
            full_fifo(&dir.path().join("step-summary")),
        ];
        Scene {
            dir,
            _readers: readers,
        }
    }

    /// A path in the scene's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The marker the test command writes when it runs.
    pub fn marker(&self) -> PathBuf {
        self.path("marker")
    }

    /// Runs `retry ARGS` with `envs` in the scene (stdout and stderr full pipes nobody reads,
    /// stdin a pipe nobody writes, under GitHub Actions with both files jammed), waits until
    /// it is blocked (after the marker appears, when `wait_marker`), sends TERM and waits for
    /// its end. Panics when it does not end within [`STOP_LIMIT`] of TERM.
    pub fn run(&self, args: &[String], envs: &[(String, String)], wait_marker: bool) -> Jammed {
        let (_out_reader, out) = full_pipe();
        let (_err_reader, err) = full_pipe();
        let (stdin, _stdin_writer) = pipe();
        let mut cmd = retry_std();
        cmd.args(args)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", self.path("github-output"))
            .env("GITHUB_STEP_SUMMARY", self.path("step-summary"))
            .env("RETRY_BUDGET_STORE", self.path("budget"))
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::from(File::from(stdin)))
            .stdout(Stdio::from(File::from(out)))
            .stderr(Stdio::from(File::from(err)));
        let mut child = cmd.spawn().expect("spawn retry");
        let pid = child.id() as i32;
        let blocked_in = self.wait_blocked(&mut child, pid, wait_marker, args);
        let sent = Instant::now();
        // SAFETY: kill on the child we started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            // Past the limit, a retry still asleep where it was is deaf: fail. One that moved
            // on (it runs, or sleeps elsewhere) was only starved of CPU by a loaded machine:
            // it gets up to STARVED_LIMIT.
            let left = where_blocked(pid);
            let deaf = left.is_some()
                && left.as_ref().map(|(state, call)| (*state, Some(call)))
                    == Some(('S', blocked_in.as_ref()));
            if (sent.elapsed() > STOP_LIMIT && deaf) || sent.elapsed() > STARVED_LIMIT {
                // SAFETY: as above; clean up the whole group before failing.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = child.wait();
                panic!(
                    "retry {args:?} did not end within {:?} of TERM; blocked in \
                     {blocked_in:?}, then {left:?} (syscall number, /proc/PID/syscall)",
                    sent.elapsed()
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let stopped_after = sent.elapsed();
        // SAFETY: whatever the run left in its group (nothing, normally).
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        Jammed {
            blocked_in,
            stopped_after,
            status,
        }
    }

    /// Waits until retry sleeps in the same system call twice in a row, 20 ms apart, after
    /// the marker appeared when `wait_marker` (or, if it never does, at once when it sleeps
    /// for good, else once it has slept there for two seconds: a run that stops before its
    /// command); `None` if it ended first.
    fn wait_blocked(
        &self,
        child: &mut Child,
        pid: i32,
        wait_marker: bool,
        args: &[String],
    ) -> Option<String> {
        let start = Instant::now();
        let mut last: Option<(char, String)> = None;
        let mut since = Instant::now();
        loop {
            if start.elapsed() > HANG_LIMIT {
                // SAFETY: kill on the group of the child we started.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                panic!(
                    "retry {args:?} never blocked (marker {}: {}); last seen {last:?}",
                    self.marker().display(),
                    self.marker().exists()
                );
            }
            if child.try_wait().unwrap().is_some() {
                return None;
            }
            let now = where_blocked(pid);
            if now != last {
                since = Instant::now();
            }
            let settled = match &now {
                Some((state, call)) => *state == 'S' && call != "running" && now == last,
                None => false,
            };
            // A run asleep for good (see `asleep_for_good`) before its command ran is jammed
            // already; one asleep in a wait that may end by itself (a delay, a lock) gets two
            // seconds to reach its command.
            let ready = !wait_marker
                || self.marker().exists()
                || (settled && asleep_for_good(pid))
                || since.elapsed() > Duration::from_secs(2);
            if settled && ready {
                return now.map(|(_, call)| call);
            }
            last = now;
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
