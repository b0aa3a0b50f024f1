//! What a successful attempt leaves running keeps its output: with the output piped through
//! retry (`--idle-timeout`, `--http-hints`, `--stdout-on-success`, the output conditions), a
//! background process that writes after the attempt ended is passed on until it closes the
//! pipe, as `cmd | cat` does, and retry exits only then; a stop signal still ends retry at once;
//! a failed attempt's leftovers are still stopped. Every step is synchronised on files: the
//! background writer waits for `go` before it writes and for `close` before it exits.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{alive, retry, retry_std, send, wait_for_lines, wait_gone, wait_with_limit};

/// The flags that put retry between the attempt and the real stdout.
const PIPED: [&[&str]; 4] = [
    &["--idle-timeout", "30s"],
    &["--http-hints"],
    &["--stdout-on-success"],
    &["--retry-if-output", "zzz"],
];

/// A run of retry around a script whose background writer waits for files.
struct Run {
    dir: tempfile::TempDir,
    child: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Run {
    /// Starts `retry FLAGS -n 0 -- sh -c SCRIPT`; `{dir}` in `script` is the run's directory.
    fn start(flags: &[&str], script: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let script = script.replace("{dir}", &dir.path().display().to_string());
        let mut child = retry_std()
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

    fn touch(&self, name: &str) {
        std::fs::write(self.path(name), "").unwrap();
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// The pid a script wrote to file `name`.
    fn pid(&self, name: &str) -> i32 {
        wait_for_lines(&self.path(name), 1).trim().parse().unwrap()
    }

    /// Waits until the attempt's own process (its pid in file `main`) has ended.
    fn wait_attempt_ended(&self) {
        wait_gone(&[self.pid("main")]);
    }

    /// Waits for retry's end; returns its status, the rest of its stdout, and its stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        let mut err = self.child.stderr.take().unwrap();
        err.read_to_string(&mut stderr).unwrap();
        (wait_with_limit(&mut self.child), rest, stderr)
    }
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
        // The attempt has succeeded and ended; its background writer writes only now.
        run.touch("go");
        assert_eq!(run.line(), "late\n", "{flags:?}: the late line was lost");
        // Its writer still holds the pipe: retry is still passing it on.
        assert!(
            run.child.try_wait().unwrap().is_none(),
            "{flags:?}: retry ended while a writer still held its output"
        );
        run.touch("close");
        let (status, rest, stderr) = run.finish();
        assert_eq!(status.code(), Some(0), "{flags:?}: {stderr}");
        assert_eq!(rest, "", "{flags:?}");
        assert!(stderr.contains("late-err\n"), "{flags:?}: {stderr}");
        assert!(!stderr.contains("retry: "), "{flags:?}: {stderr}");
    }
}

#[test]
fn the_readme_example_delivers_both_lines() {
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
fn a_stop_signal_ends_the_wait_for_a_writer_that_never_closes() {
    for (flags, signal) in [
        (&["--idle-timeout", "30s"][..], libc::SIGTERM),
        (&["--http-hints"][..], libc::SIGINT),
        (&["--stdout-on-success"][..], libc::SIGHUP),
        (&["--idle-timeout", "30s"][..], libc::SIGQUIT),
    ] {
        let mut run = Run::start(flags, NEVER_CLOSES);
        assert_eq!(run.line(), "now\n");
        run.wait_attempt_ended();
        run.touch("go");
        assert_eq!(run.line(), "late\n", "{flags:?}: the late line was lost");
        let bg = run.pid("bg");
        send(run.child.id(), signal);
        let signalled = Instant::now();
        let pid = run.child.id();
        let (status, _, stderr) = run.finish();
        // At most IO_GRACE (0.5 s) for the output; a wide margin for a loaded machine.
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "{flags:?}: {:?}",
            signalled.elapsed()
        );
        assert_eq!(status.signal(), Some(signal), "{flags:?}: {stderr}");
        assert!(
            stderr.contains("while the output of attempt 1 was still being written"),
            "{flags:?}: {stderr}"
        );
        // What the successful attempt started was not retry's to stop.
        assert!(alive(bg), "{flags:?}: retry {pid} stopped its leftover");
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
