//! `--lock PATH` and `--lock-wait` through the binary: 20 concurrent runs on one lock, one at a
//! time (the others exiting 75 naming PATH and the holder's pid, or with `--lock-wait` all in
//! turn); a KILLed holder releasing it; a daemon an attempt leaves not keeping it; the lock
//! file's mode and the paths refused; the wait ended by the deadline and by TERM; a stale pid
//! in a lock another program holds naming nobody.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use crate::helpers::{
    alive, refused, refuses, retry, retry_std, send, wait_for_lines, wait_gone, wait_with_limit,
};

/// Starts a run holding `--lock lock` whose attempt writes its shell's pid to `held` and waits
/// until `release` exists.
fn holder(lock: &Path, held: &Path, release: &Path) -> Child {
    let child = retry_std()
        .arg("--lock")
        .arg(lock)
        .args(["-q", "--", "sh", "-c"])
        .arg(format!(
            "echo $$ > {}; while [ ! -e {} ]; do sleep 0.01; done",
            held.display(),
            release.display()
        ))
        .spawn()
        .unwrap();
    wait_for_lines(held, 1);
    child
}

/// A lock named `name` in a temporary directory, held by [`holder`] until [`Held::release`].
struct Held {
    dir: tempfile::TempDir,
    lock: PathBuf,
    release: PathBuf,
    first: Child,
}

impl Held {
    fn new(name: &str) -> Held {
        let dir = tempfile::tempdir().unwrap();
        let (lock, held, release) = (
            dir.path().join(name),
            dir.path().join("held"),
            dir.path().join("release"),
        );
        let first = holder(&lock, &held, &release);
        Held {
            dir,
            lock,
            release,
            first,
        }
    }

    /// The stderr of another run on the lock, with `args`, which must exit 75.
    fn busy(&self, args: &[&str]) -> String {
        let out = retry()
            .arg("--lock")
            .arg(&self.lock)
            .args(args)
            .assert()
            .code(75)
            .get_output()
            .clone();
        String::from_utf8(out.stderr).unwrap()
    }

    /// Lets the holder's attempt end, and checks that its run succeeded.
    fn release(&mut self) {
        std::fs::write(&self.release, "").unwrap();
        assert_eq!(wait_with_limit(&mut self.first).code(), Some(0));
    }
}

impl Drop for Held {
    /// A test that failed half-way does not leave the holder waiting.
    fn drop(&mut self) {
        let _ = std::fs::write(&self.release, "");
    }
}

#[test]
fn twenty_concurrent_runs_find_the_lock_held_and_exit_75_naming_the_holder() {
    let mut held = Held::new("job.lock");
    let lock = held.lock.clone();
    let ran = held.dir.path().join("ran");
    let others: Vec<Child> = (0..20)
        .map(|_| {
            retry_std()
                .arg("--lock")
                .arg(&lock)
                .args(["--", "sh", "-c"])
                .arg(format!("echo ran >> {}", ran.display()))
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in others {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(75), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            format!(
                "retry: --lock {} is held by pid {}: not running sh (status 75)\n",
                lock.display(),
                held.first.id()
            )
        );
    }
    assert!(!ran.exists(), "no other run ran its command");
    held.release();
    // Released: the next run takes it at once.
    retry()
        .arg("--lock")
        .arg(&lock)
        .args(["--", "true"])
        .assert()
        .success();
}

#[test]
fn with_lock_wait_twenty_concurrent_runs_all_run_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("job.lock");
    let (inside, count) = (dir.path().join("inside"), dir.path().join("count"));
    // mkdir fails if another run is inside: two at once would exit 9.
    let body = format!(
        "mkdir {inside} || exit 9; sleep 0.02; echo $RETRY_RUN_ID >> {count}; rmdir {inside}",
        inside = inside.display(),
        count = count.display()
    );
    let runs: Vec<Child> = (0..20)
        .map(|_| {
            retry_std()
                .arg("--lock")
                .arg(&lock)
                .args([
                    "--lock-wait",
                    "2m",
                    "-n",
                    "0",
                    "-q",
                    "--",
                    "sh",
                    "-c",
                    &body,
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert_eq!(wait_with_limit(&mut run).code(), Some(0));
    }
    let ids = std::fs::read_to_string(&count).unwrap();
    let mut ids: Vec<&str> = ids.lines().collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 20, "every run ran once");
}

#[test]
fn a_killed_holder_releases_the_lock_though_its_attempts_child_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let (lock, held) = (dir.path().join("job.lock"), dir.path().join("held"));
    let mut first = retry_std()
        .arg("--lock")
        .arg(&lock)
        .args(["-q", "--", "sh", "-c"])
        .arg(format!(
            "sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {}; wait",
            held.display()
        ))
        .spawn()
        .unwrap();
    // The attempt's child, which outlives retry (the attempt itself gets the parent-death
    // signal).
    let daemon: i32 = wait_for_lines(&held, 1).trim().parse().unwrap();
    let mut second = retry_std()
        .arg("--lock")
        .arg(&lock)
        .args(["--lock-wait", "inf", "--", "echo", "second"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(second.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line,
        format!(
            "retry: --lock {} is held by pid {}: waiting as long as it takes\n",
            lock.display(),
            first.id()
        )
    );
    // KILL retry alone: the attempt's child lives on, and does not hold the lock.
    send(first.id(), libc::SIGKILL);
    assert_eq!(wait_with_limit(&mut first).signal(), Some(libc::SIGKILL));
    assert!(alive(daemon));
    assert_eq!(wait_with_limit(&mut second).code(), Some(0));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut second.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(out, "second\n");
    send(daemon as u32, libc::SIGKILL);
    wait_gone(&[daemon]);
}

#[test]
fn a_daemon_left_by_an_attempt_does_not_keep_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (lock, pid) = (dir.path().join("job.lock"), dir.path().join("pid"));
    retry()
        .arg("--lock")
        .arg(&lock)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {}",
            pid.display()
        ))
        .assert()
        .success();
    let daemon: i32 = wait_for_lines(&pid, 1).trim().parse().unwrap();
    assert!(alive(daemon));
    retry()
        .env("RETRY_LOCK", &lock)
        .args(["--", "true"])
        .assert()
        .success();
    send(daemon as u32, libc::SIGKILL);
    wait_gone(&[daemon]);
}

#[test]
fn the_lock_file_is_private_and_holds_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("job.lock");
    let out = retry()
        .arg("--lock")
        .arg(&lock)
        .args(["--", "sh", "-c"])
        .arg(format!("cat {}", lock.display()))
        .assert()
        .success()
        .get_output()
        .clone();
    let pid: u32 = String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid > 1);
    let mode = std::fs::metadata(&lock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn paths_that_are_no_lock_file_are_one_line_and_125() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let shown = link.display().to_string();
    refused(
        retry().arg("--lock").arg(&link).args(["--", "true"]),
        &[&shown, "is a symlink; refused"],
    );
    assert!(!target.exists(), "nothing created through the link");
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    refused(
        retry().arg("--lock").arg(&fifo).args(["--", "true"]),
        &["is not a regular file; refused"],
    );
    refused(
        retry().arg("--lock").arg(dir.path()).args(["--", "true"]),
        &["is a directory; refused"],
    );
    refused(
        retry()
            .arg("--lock")
            .arg(dir.path().join("missing/job.lock"))
            .args(["--", "true"]),
        &["cannot create: its directory does not exist"],
    );
    refuses(&["--lock", "", "--", "true"], &["--lock"]);
    refuses(
        &["--lock-wait", "5s", "--", "true"],
        &["--lock-wait (5s) needs --lock PATH"],
    );
    refuses(
        &["--lock", "/x", "--lock-wait", "soon", "--", "true"],
        &["--lock-wait", "soon"],
    );
}

#[test]
fn the_wait_ends_at_the_deadline_with_75_and_at_once_on_term() {
    let mut held = Held::new("job.lock");
    let lock = held.lock.clone();
    let stderr = held.busy(&["--lock-wait", "1h", "-d", "0.3s", "--", "true"]);
    assert!(stderr.contains("still held by pid"), "{stderr}");
    assert!(stderr.contains("at the deadline"), "{stderr}");

    let mut waiting = retry_std()
        .arg("--lock")
        .arg(&lock)
        .args(["--lock-wait", "1h", "--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(waiting.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("waiting up to 1h"), "{line}");
    send(waiting.id(), libc::SIGTERM);
    assert_eq!(wait_with_limit(&mut waiting).signal(), Some(libc::SIGTERM));

    held.release();
}

#[test]
fn lock_events_say_waiting_held_and_busy() {
    let mut held = Held::new("job.lock");
    let lock = held.lock.clone();
    let events: Vec<serde_json::Value> = held
        .busy(&["--lock-wait", "0.05", "--log-format", "json", "--", "true"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "lock")
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["state"], "waiting");
    assert_eq!(events[1]["state"], "busy");
    assert_eq!(events[1]["holder"], held.first.id());
    assert_eq!(events[1]["status"], 75);
    held.release();
    let out = retry()
        .arg("--lock")
        .arg(&lock)
        .args(["--log-format", "json", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(r#""state":"held""#), "{stderr}");
}

#[test]
fn a_newline_in_the_path_cannot_forge_a_line() {
    let mut held = Held::new("a\nretry: forged");
    let lock = held.lock.clone();
    let stderr = held.busy(&["--lock-wait", "0.05", "--", "true"]);
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(
        stderr.lines().all(|l| l.contains(r"a\nretry: forged")),
        "{stderr}"
    );
    held.release();
    let out = retry()
        .arg("--lock")
        .arg(&lock)
        .args(["--dry-run", "--", "true"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(r"a\nretry: forged, not waiting"),
        "{stdout}"
    );
}

#[test]
fn a_stale_pid_in_a_lock_another_program_holds_names_no_holder() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("b.lock");
    // A pid no process has (above the kernel's pid_max), left by an earlier run; the lock is
    // held as flock(1) holds it, by a process that is not retry and writes no pid: this one.
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::write(&lock, format!("{}\n", pid_max + 1)).unwrap();
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = std::fs::File::open(&lock).unwrap();
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).unwrap();
    let busy = |args: &[&str]| {
        let out = retry()
            .arg("--lock")
            .arg(&lock)
            .args(args)
            .args(["--", "true"])
            .assert()
            .code(75)
            .get_output()
            .clone();
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        busy(&[]),
        format!(
            "retry: --lock {} is held by another process: not running true (status 75)\n",
            lock.display()
        )
    );
    let events: Vec<serde_json::Value> = busy(&["--log-format", "json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "lock")
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["state"], "busy");
    assert!(events[0]["holder"].is_null(), "{events:?}");
    // A pid whose process exists (this test's) is named.
    std::fs::write(&lock, format!("{}\n", std::process::id())).unwrap();
    assert!(
        busy(&[]).contains(&format!("is held by pid {}:", std::process::id())),
        "named"
    );
    drop(held);
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        format!("{}\n", std::process::id()),
        "a run that did not get the lock wrote nothing"
    );
}
