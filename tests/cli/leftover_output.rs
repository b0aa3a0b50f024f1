//! What a successful attempt leaves running keeps its output: with the output piped through
//! retry (`--idle-timeout`, `--http-hints`, `--stdout-on-success`, the output conditions), retry
//! ends when the attempt does, with its status, and hands what a background process still
//! writes to the relay (src/process/relay.rs), which passes it on until the writer closes the
//! pipe, as `cmd | cat` does; a stop signal to the relay ends it at once; a reader that goes
//! away ends it quietly; a failed attempt's leftovers are still stopped. Every step is
//! synchronised on files: the background writer waits for `go` before it writes and for
//! `close` before it exits. What the relay keeps and passes on (descriptors, large output, write
//! errors, a terminal) is in `leftover_output_relay.rs`.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{
    alive, release_std, retry, retry_std, send, wait_for_lines, wait_gone, wait_with_limit,
};
use crate::leftover_output_relay::exited_within;

/// The flags that put retry between the attempt and the real stdout.
pub(crate) const PIPED: [&[&str]; 4] = [
    &["--idle-timeout", "30s"],
    &["--http-hints"],
    &["--stdout-on-success"],
    &["--retry-if-output", "zzz"],
];

/// A run of retry around a script whose background writer waits for files.
pub(crate) struct Run {
    dir: tempfile::TempDir,
    pub(crate) child: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Run {
    /// Starts `retry FLAGS -n 0 -- sh -c SCRIPT`; `{dir}` in `script` is the run's directory.
    fn start(flags: &[&str], script: &str) -> Run {
        Run::start_as(retry_std(), flags, script)
    }

    /// [`Run::start`] with the release build.
    pub(crate) fn release(flags: &[&str], script: &str) -> Run {
        Run::start_as(release_std(), flags, script)
    }

    fn start_as(mut retry: std::process::Command, flags: &[&str], script: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let script = script.replace("{dir}", &dir.path().display().to_string());
        let mut child = retry
            .args(flags)
            .args(["-n", "0", "--", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Run { dir, child, stdout }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn touch(&self, name: &str) {
        std::fs::write(self.path(name), "").unwrap();
    }

    pub(crate) fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// The pid a script wrote to file `name`.
    pub(crate) fn pid(&self, name: &str) -> i32 {
        wait_for_lines(&self.path(name), 1).trim().parse().unwrap()
    }

    /// Waits until the attempt's own process (its pid in file `main`) has ended.
    fn wait_attempt_ended(&self) {
        wait_gone(&[self.pid("main")]);
    }

    /// Waits for retry's end; returns its status, the rest of its stdout, and its stderr.
    pub(crate) fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        let mut err = self.child.stderr.take().unwrap();
        err.read_to_string(&mut stderr).unwrap();
        (wait_with_limit(&mut self.child), rest, stderr)
    }
}

/// The relay that passes on to the pipe whose other end is `reader` (its stdout), found
/// within the hang limit: a process named `retry-relay` whose descriptor 1 is that pipe.
pub(crate) fn relay_of<F: std::os::fd::AsFd>(reader: &F) -> i32 {
    relay_writing_to(reader, 1)
}

/// The relay whose descriptor `fd` is the pipe whose other end is `reader`.
pub(crate) fn relay_writing_to<F: std::os::fd::AsFd>(reader: &F, fd: i32) -> i32 {
    let inode = nix::sys::stat::fstat(reader.as_fd()).unwrap().st_ino;
    let pipe = format!("pipe:[{inode}]");
    let started = Instant::now();
    loop {
        for pid in crate::helpers::proc::all_pids() {
            let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c == "retry-relay\n");
            let ours = std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
                .is_ok_and(|l| l.to_string_lossy() == pipe);
            if named && ours && alive(pid) {
                return pid;
            }
        }
        assert!(
            started.elapsed() < crate::helpers::HANG_LIMIT,
            "no relay writes to {pipe}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `reader` (a pipe's read end) has reached its end: every writer closed it. Never
/// blocks: waits at most `wait` for something to happen.
fn at_end<F: std::os::fd::AsFd>(reader: &F, wait: Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(reader.as_fd(), PollFlags::POLLIN)];
    let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    let n = poll(&mut fds, PollTimeout::from(ms)).unwrap();
    n == 1
        && fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLHUP) && !r.contains(PollFlags::POLLIN))
}

/// The background writer: waits for `go`, writes a line to stdout and one to stderr, waits for
/// `close`, exits. The attempt itself writes `now` and succeeds at once.
const LATE_WRITER: &str = "echo $$ > {dir}/main; \
    (while [ ! -e {dir}/go ]; do sleep 0.01; done; echo late; echo late-err >&2; \
     while [ ! -e {dir}/close ]; do sleep 0.01; done) & echo now";

#[test]
fn a_background_writer_is_passed_on_until_it_closes_the_pipe() {
    for flags in PIPED {
        let mut run = Run::start(flags, LATE_WRITER);
        assert_eq!(run.line(), "now\n", "{flags:?}");
        run.wait_attempt_ended();
        // retry ends with the attempt, though its background writer still holds the pipe.
        let status = exited_within(&mut run.child, crate::helpers::HANG_LIMIT);
        assert_eq!(status.and_then(|s| s.code()), Some(0), "{flags:?}");
        // The writer writes only now; the relay passes it on, and holds retry's stdout
        // until the writer closes the pipe, as `cmd | cat` would.
        run.touch("go");
        assert_eq!(run.line(), "late\n", "{flags:?}: the late line was lost");
        assert!(
            !at_end(run.stdout.get_ref(), Duration::from_millis(100)),
            "{flags:?}: the output ended while a writer still held it"
        );
        run.touch("close");
        let (status, rest, stderr) = run.finish();
        assert_eq!(status.code(), Some(0), "{flags:?}: {stderr}");
        assert_eq!(rest, "", "{flags:?}");
        assert!(stderr.contains("late-err\n"), "{flags:?}: {stderr}");
        assert!(!stderr.contains("retry: "), "{flags:?}: {stderr}");
    }
}

/// The case of docs/pipelines-and-http.md, "What a successful attempt leaves running".
#[test]
fn the_guide_example_delivers_both_lines() {
    for flags in [&["--idle-timeout", "30s"][..], &["--http-hints"][..]] {
        retry()
            .args(flags)
            .args(["--", "sh", "-c", "(sleep 0.5; echo late) & echo now"])
            .assert()
            .success()
            .stdout("now\nlate\n");
    }
}

/// A background writer that writes `late` after `go`, then holds the stdout pipe forever
/// (until the test kills it); its pid is in file `bg`. (Its stderr is not the test's pipe,
/// which `--stdout-on-success` does not put retry between.)
const NEVER_CLOSES: &str = "echo $$ > {dir}/main; \
    sh -c 'echo $$ > {dir}/bg; while [ ! -e {dir}/go ]; do sleep 0.01; done; echo late; \
           exec sleep 100' 2>/dev/null & echo now";

#[test]
fn a_stop_signal_to_the_relay_of_a_writer_that_never_closes_ends_it_at_once() {
    for (flags, signal) in [
        (&["--idle-timeout", "30s"][..], libc::SIGTERM),
        (&["--http-hints"][..], libc::SIGINT),
        (&["--stdout-on-success"][..], libc::SIGHUP),
        (&["--idle-timeout", "30s"][..], libc::SIGKILL),
    ] {
        let mut run = Run::release(flags, NEVER_CLOSES);
        assert_eq!(run.line(), "now\n");
        let status = exited_within(&mut run.child, crate::helpers::HANG_LIMIT);
        assert_eq!(status.and_then(|s| s.code()), Some(0), "{flags:?}");
        run.touch("go");
        assert_eq!(run.line(), "late\n", "{flags:?}: the late line was lost");
        let bg = run.pid("bg");
        let relay = relay_of(run.stdout.get_ref());
        send(relay as u32, signal);
        wait_gone(&[relay]);
        // The relay held the last copy of retry's stdout: the reader sees its end.
        let (_, rest, stderr) = run.finish();
        assert_eq!(rest, "", "{flags:?}");
        assert!(!stderr.contains("retry: "), "{flags:?}: {stderr}");
        // What the successful attempt started was not retry's (nor the relay's) to stop.
        assert!(alive(bg), "{flags:?}: the leftover was stopped");
        // SAFETY: kill(2) on the leftover this test started.
        unsafe { libc::kill(bg, libc::SIGKILL) };
    }
}

/// A background writer that keeps writing and never closes; the attempt fails with 3 once it
/// has started.
const FAILS_WITH_A_BUSY_LEFTOVER: &str = "sh -c 'echo $$ > {dir}/bg; \
    while :; do echo tick; sleep 0.05; done' & \
    while [ ! -s {dir}/bg ]; do sleep 0.01; done; echo now; exit 3";

#[test]
fn a_failed_attempts_leftovers_are_still_stopped() {
    for flags in PIPED {
        let run = Run::start(flags, FAILS_WITH_A_BUSY_LEFTOVER);
        let started = Instant::now();
        let bg = wait_for_lines(&run.path("bg"), 1)
            .trim()
            .parse::<i32>()
            .unwrap();
        let (status, _, stderr) = run.finish();
        assert_eq!(status.code(), Some(3), "{flags:?}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(30), "{flags:?}");
        wait_gone(&[bg]);
    }
}

#[test]
fn a_leftover_that_closes_its_output_does_not_keep_retry() {
    // A daemon started with its output elsewhere: retry exits at once and leaves it running.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    for flags in PIPED {
        let started = Instant::now();
        retry()
            .args(flags)
            .args(["-n", "0", "--", "sh", "-c"])
            .arg(format!(
                "sleep 100 >/dev/null 2>&1 & echo $! > {}; echo hi",
                pid_file.display()
            ))
            .assert()
            .success()
            .stdout("hi\n");
        assert!(started.elapsed() < Duration::from_secs(30));
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(pid), "{flags:?}: the daemon was stopped");
        // SAFETY: kill(2) on the leftover this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Deterministic pseudo-random bytes (binary, newlines here and there).
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn what_comes_before_and_after_the_attempts_end_arrives_whole_and_in_order() {
    // 6 MiB from the attempt, then 9 MiB from its leftover after it ended: more than the
    // 4 MiB read after the end before the attempt is judged, more than a pipe holds.
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (bytes(6 << 20, 7), bytes(9 << 20, 8));
    std::fs::write(dir.path().join("first"), &first).unwrap();
    std::fs::write(dir.path().join("second"), &second).unwrap();
    let d = dir.path().display();
    for flags in [&["--stdout-on-success"][..], &["--http-hints"][..]] {
        // The leftover starts writing at once, while the attempt is still ending too.
        for script in [
            format!("cat {d}/first; (sleep 0.2; cat {d}/second) &"),
            format!("cat {d}/first; cat {d}/second & sleep 0.01"),
        ] {
            let out = retry()
                .args(flags)
                .args(["-n", "0", "--", "sh", "-c", &script])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{flags:?} {script}");
            let mut want = first.clone();
            want.extend_from_slice(&second);
            if script.contains("sleep 0.2") {
                assert!(out.stdout == want, "{flags:?}: {} bytes", out.stdout.len());
            } else {
                // Both write at once: every byte arrives, in each writer's own order.
                assert_eq!(out.stdout.len(), want.len(), "{flags:?}");
            }
        }
    }
}

#[test]
fn a_stop_signal_ends_a_relay_blocked_on_a_reader_that_does_not_read() {
    // The leftover writes 20 MB after the attempt ended into a reader that never reads.
    let dir = tempfile::tempdir().unwrap();
    let (read, write) = nix::unistd::pipe().unwrap();
    let mut child = release_std()
        .args(["--idle-timeout", "30s", "-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "(while [ ! -e {d}/go ]; do sleep 0.01; done; \
             head -c 20000000 /dev/zero; echo $? > {d}/head) 2>/dev/null & echo now",
            d = dir.path().display()
        ))
        .stdout(write)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let relay = relay_of(&read);
    std::fs::write(dir.path().join("go"), "").unwrap();
    // Wait until the relay is blocked writing the leftover's output to us: the pipe is full.
    let started = Instant::now();
    while unread(&read) < 60_000 {
        assert!(
            started.elapsed() < crate::helpers::HANG_LIMIT,
            "no output came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    send(relay as u32, libc::SIGTERM);
    wait_gone(&[relay]);
    // The leftover meets the broken pipe the relay left: head fails.
    let code = wait_for_lines(&dir.path().join("head"), 1);
    assert_ne!(code.trim(), "0");
    let mut rest = Vec::new();
    std::fs::File::from(read).read_to_end(&mut rest).unwrap();
    assert!(rest.len() < 20_000_000, "{}", rest.len());
}

/// The number of bytes waiting in a pipe (FIONREAD on its read end).
fn unread(fd: &std::os::fd::OwnedFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points to `n`.
    let rc = unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(fd), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0);
    n as usize
}

#[test]
fn a_reader_gone_while_leftovers_write_ends_the_relay_quietly() {
    // The leftover writes a line every 50 ms after the attempt ended; the test reads two lines
    // and closes: the relay ends at the next line, saying nothing, and closes the pipe, so the
    // leftover meets a broken pipe, as under `cmd | cat`.
    let dir = tempfile::tempdir().unwrap();
    let mut child = release_std()
        .args(["--http-hints", "-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "sh -c 'echo $$ > {d}/bg; while [ ! -e {d}/go ]; do sleep 0.01; done; \
             while :; do echo tick; sleep 0.05; done' & echo now",
            d = dir.path().display()
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "now\n");
    let status = exited_within(&mut child, crate::helpers::HANG_LIMIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let relay = relay_of(stdout.get_ref());
    std::fs::write(dir.path().join("go"), "").unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "tick\n");
    let bg: i32 = wait_for_lines(&dir.path().join("bg"), 1)
        .trim()
        .parse()
        .unwrap();
    drop(stdout);
    // The relay held retry's stderr: its end means the relay ended.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(stderr, "", "the relay said something");
    wait_gone(&[relay, bg]);
}

#[test]
fn a_reader_gone_during_the_attempt_waits_for_no_leftover() {
    // The attempt succeeds (its shell hides seq's broken pipe) after the reader of stdout
    // went away; a leftover holds the attempt's stderr. retry ends by SIGPIPE at once: what
    // follows could not be written anyway.
    let dir = tempfile::tempdir().unwrap();
    let mut child = retry_std()
        .args(["--http-hints", "-n", "0", "--", "sh", "-c"])
        .arg(format!(
            "sh -c 'echo $$ > {}/bg; exec sleep 100' >/dev/null & seq 1 1000000; exit 0",
            dir.path().display()
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "1\n");
    drop(stdout);
    let started = Instant::now();
    let status = wait_with_limit(&mut child);
    let bg: i32 = wait_for_lines(&dir.path().join("bg"), 1)
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the leftover this test started.
    unsafe { libc::kill(bg, libc::SIGKILL) };
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
