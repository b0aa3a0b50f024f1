//! I/O faults through the binary, writing and recording: nothing the user gave is lost without
//! a non-zero exit and one clear line (a full disk, a broken terminal, TMPDIR missing or full, an
//! unreadable stdin, `--max-replay`, a held stdout that cannot spill). A reader that does not
//! read and the exact messages are in `faults_io_messages.rs`. RELIABILITY.md, "Faults: I/O and
//! reporting", lists each with its command.

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

use crate::helpers::pty::{Attach, spawn_on_pty};
use crate::helpers::{retry_std, wait_for_lines, wait_with_limit};

/// How a run ended: status, stdout (empty when it went elsewhere), stderr.
pub(crate) struct Run {
    pub(crate) status: ExitStatus,
    stdout: Vec<u8>,
    pub(crate) stderr: String,
}

impl Run {
    /// retry's own lines on stderr.
    pub(crate) fn retry_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("retry: "))
            .collect()
    }
}

/// Collects what `child` writes to its piped stdout and stderr until it ends (within the hang
/// limit).
pub(crate) fn collect(mut child: Child) -> Run {
    let out = child.stdout.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = s.read_to_end(&mut v);
            v
        })
    });
    let mut stderr = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_end(&mut stderr).unwrap();
    }
    let status = wait_with_limit(&mut child);
    Run {
        status,
        stdout: out.map(|h| h.join().unwrap()).unwrap_or_default(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `cmd` (stderr piped; stdout piped unless `cmd` set it) and collects its end.
pub(crate) fn run(mut cmd: Command) -> Run {
    cmd.stderr(Stdio::piped());
    collect(cmd.spawn().unwrap())
}

/// retry with `args`, stdout piped unless set later.
pub(crate) fn retry_with(args: &[&str]) -> Command {
    let mut cmd = retry_std();
    cmd.args(args).stdout(Stdio::piped());
    cmd
}

pub(crate) fn dev_full() -> File {
    File::options().write(true).open("/dev/full").unwrap()
}

/// A file holding `bytes`, to be a run's stdin.
fn stdin_file(dir: &Path, bytes: &[u8]) -> File {
    let path = dir.join("stdin");
    std::fs::write(&path, bytes).unwrap();
    File::open(path).unwrap()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

// ---------------------------------------------------------------------------------------------
// Writing retry's stdout fails

#[test]
fn a_held_stdout_on_a_full_disk_is_reported_and_never_0() {
    let mut cmd = retry_with(&["--stdout-on-success", "--", "echo", "hi"]);
    cmd.stdout(dev_full());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    let lines = r.retry_lines();
    assert!(lines[0].contains("cannot write the held stdout of attempt 1 to stdout"));
    assert!(lines[0].contains("No space left on device"), "{}", r.stderr);
    // A failed attempt's held stdout goes to stderr: the disk is not involved.
    let mut cmd = retry_with(&["--stdout-on-success", "-b", "0", "-n", "1", "--"]);
    cmd.args(["sh", "-c", "echo held; exit 3"])
        .stdout(dev_full());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(3), "{}", r.stderr);
    assert_eq!(r.stderr.matches("held\n").count(), 2, "{}", r.stderr);
}

/// A pty whose master side is closed: writing to its slave side fails with EIO, as writing to
/// a terminal that hung up does. Returns the slave side.
fn hung_up_terminal() -> OwnedFd {
    let pty = nix::pty::openpty(None, None).unwrap();
    drop(pty.master);
    pty.slave
}

#[test]
fn a_held_stdout_on_a_hung_up_terminal_is_an_eio_reported_and_never_0() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    // The terminal hangs up while the attempt runs (its output is held meanwhile).
    let mut cmd = retry_with(&["--stdout-on-success", "-n", "0", "--", "sh", "-c"]);
    cmd.arg(format!(
        "echo started > {r}; while [ ! -e {r}.go ]; do sleep 0.01; done; echo output",
        r = ready.display()
    ))
    .stderr(Stdio::piped());
    let (child, master) = spawn_on_pty(cmd, Attach::Stdout);
    wait_for_lines(&ready, 1);
    drop(master);
    std::fs::write(dir.path().join("ready.go"), "").unwrap();
    let r = collect(child);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    assert!(
        r.stderr.contains("Input/output error"),
        "an EIO, reported: {}",
        r.stderr
    );
}

#[test]
fn a_matched_stdout_on_a_full_disk_keeps_the_attempts_status_and_says_why() {
    // Much more than a pipe holds: the attempt is not stopped by a broken pipe either.
    for (script, code) in [("seq 1 300000; exit 5", 5), ("seq 1 300000", 125)] {
        let mut cmd = retry_with(&["--retry-if-output", "zzz", "-b", "0", "--"]);
        cmd.args(["sh", "-c", script]).stdout(dev_full());
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(code), "{script}: {}", r.stderr);
        assert!(r.status.signal().is_none());
        let lines = r.retry_lines();
        assert!(
            lines[0].contains("cannot write the stdout of attempt 1: No space left on device"),
            "{}",
            r.stderr
        );
        // Not retried: the next attempt's output would be lost too.
        assert_eq!(r.stderr.matches("attempt 2").count(), 0, "{}", r.stderr);
    }
    // On a terminal that hung up: the same, with EIO.
    let mut cmd = retry_with(&[
        "--stop-if-output",
        "zzz",
        "--",
        "sh",
        "-c",
        "echo x; exit 4",
    ]);
    cmd.stdout(hung_up_terminal());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(4), "{}", r.stderr);
    assert!(r.stderr.contains("Input/output error"), "{}", r.stderr);
}

#[test]
fn dry_run_and_generate_report_a_write_error_with_125() {
    for args in [&["--dry-run"][..], &["--generate", "bash"][..]] {
        let mut cmd = retry_with(args);
        cmd.stdout(dev_full());
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(125), "{args:?}: {}", r.stderr);
        assert_eq!(r.retry_lines().len(), 1, "{}", r.stderr);
        assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    }
    // A reader that went away just ends the table.
    let mut child = retry_with(&["--dry-run", "-n", "unlimited"])
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(wait_with_limit(&mut child).code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// Recording stdin fails

#[test]
fn an_unreadable_stdin_is_never_replayed_as_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let mut cmd = retry_with(&["--replay-stdin", "-b", "0", "--", "sh", "-c"]);
    cmd.arg(format!("echo >> {}; cat", count.display()))
        .stdin(File::open("/").unwrap());
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    let lines = r.retry_lines();
    assert!(
        lines[0].contains("cannot read stdin for --replay-stdin: Is a directory"),
        "{}",
        r.stderr
    );
    assert!(lines[0].contains("attempt 1 saw its stdin end early, after 0 bytes"));
    assert_eq!(
        std::fs::read_to_string(&count).unwrap(),
        "\n",
        "not retried"
    );
}

/// 9 MiB of stdin (more than the 8 MiB kept in memory) fed to `cat > FILE` with `env`; returns
/// the run and what the attempt got.
fn replay_spilling(env: &[(&str, &std::ffi::OsStr)]) -> (Run, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got");
    let input: Vec<u8> = (0..9u32 << 20).map(|i| (i % 251) as u8).collect();
    let mut cmd = retry_with(&["--replay-stdin", "-b", "0", "--", "sh", "-c"]);
    cmd.arg(format!("cat > {}", got.display()))
        .stdin(stdin_file(dir.path(), &input))
        .envs(env.iter().copied());
    let r = run(cmd);
    (r, std::fs::read(&got).unwrap_or_default())
}

#[test]
fn a_missing_or_unwritable_tmpdir_stops_the_replay_with_125() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "").unwrap();
    let mut tmpdirs = vec![Path::new("/nonexistent/tmp").to_path_buf(), not_a_dir];
    if !is_root() {
        // (root may write anywhere: then only the other two.)
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        let read_only = std::os::unix::fs::PermissionsExt::from_mode(0o500);
        std::fs::set_permissions(&locked, read_only).unwrap();
        tmpdirs.push(locked);
    }
    for tmpdir in tmpdirs {
        let (r, got) = replay_spilling(&[("TMPDIR", tmpdir.as_os_str())]);
        assert_eq!(r.status.code(), Some(125), "{tmpdir:?}: {}", r.stderr);
        let lines = r.retry_lines();
        assert!(
            lines[0].starts_with("retry: cannot record stdin for --replay-stdin: cannot create")
                && lines[0].contains(&*tmpdir.to_string_lossy()),
            "{}",
            r.stderr
        );
        // The attempt got the part in memory, and retry said so.
        assert_eq!(got.len(), 8 << 20);
        assert!(lines[0].contains(&format!("after {} bytes", 8 << 20)));
    }
}

#[test]
fn a_full_tmpdir_stops_the_replay_with_125() {
    // A full disk, as the spill file sees it: writes past RLIMIT_FSIZE fail (EFBIG) when
    // SIGXFSZ is ignored. The limit (1 MiB) applies to files retry writes; the spill file holds
    // what passes the first 8 MiB.
    let dir = tempfile::tempdir().unwrap();
    let input: Vec<u8> = (0..10u32 << 20).map(|i| (i % 253) as u8).collect();
    let mut cmd = retry_with(&["--replay-stdin", "-b", "0", "--", "wc", "-c"]);
    cmd.stdin(stdin_file(dir.path(), &input))
        .env("TMPDIR", dir.path());
    // SAFETY: signal and setrlimit are async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    let lines = r.retry_lines();
    assert!(
        lines[0].contains("cannot record stdin for --replay-stdin: cannot write a temporary file")
            && lines[0].contains("File too large"),
        "{}",
        r.stderr
    );
    // wc counted what it was given: 8 MiB in memory and 1 MiB in the file.
    assert_eq!(
        String::from_utf8_lossy(&r.stdout).trim(),
        (9u32 << 20).to_string()
    );
}

#[test]
fn max_replay_bounds_the_recording_of_an_endless_stdin() {
    let mut yes = Command::new("yes").stdout(Stdio::piped()).spawn().unwrap();
    let mut cmd = retry_with(&["--replay-stdin", "--max-replay", "1MiB", "--", "wc", "-c"]);
    cmd.stdin(yes.stdout.take().unwrap());
    let r = run(cmd);
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(r.status.code(), Some(125), "{}", r.stderr);
    assert!(
        r.retry_lines()[0].contains("stdin is longer than --max-replay (1 MiB)"),
        "{}",
        r.stderr
    );
    assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "1048576");
}

#[test]
fn max_replay_lets_an_attempt_that_read_less_succeed_and_one_that_failed_keep_its_status() {
    let dir = tempfile::tempdir().unwrap();
    // head stops reading long before the limit (more than a pipe holds): it saw no early end.
    let mut cmd = retry_with(&[
        "--replay-stdin",
        "--max-replay",
        "4MiB",
        "--",
        "head",
        "-c",
        "3",
    ]);
    cmd.stdin(stdin_file(dir.path(), &[b'a'; 5 << 20]));
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, b"aaa");
    // An attempt that failed without reading keeps its status; no attempt 2 is started with
    // part of stdin.
    let count = dir.path().join("count");
    let mut cmd = retry_with(&["--replay-stdin", "--max-replay", "10", "-b", "2s", "--"]);
    cmd.args(["sh", "-c", &format!("echo >> {}; exit 3", count.display())])
        .stdin(stdin_file(dir.path(), b"0123456789ABCDEF"));
    let r = run(cmd);
    assert_eq!(r.status.code(), Some(3), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("not retrying: attempt 2 would see only part of stdin"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "\n");
}

#[test]
fn max_replay_values_are_checked_and_documented() {
    for (flag_or_env, value) in [("--max-replay", "1x"), ("RETRY_MAX_REPLAY", "-3")] {
        let mut cmd = retry_with(&["--replay-stdin"]);
        if flag_or_env.starts_with("--") {
            cmd.args([flag_or_env, value]);
        } else {
            cmd.env(flag_or_env, value);
        }
        cmd.arg("true");
        let r = run(cmd);
        assert_eq!(r.status.code(), Some(125));
        assert_eq!(r.retry_lines().len(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains(flag_or_env) && r.stderr.contains(value),
            "{}",
            r.stderr
        );
    }
    let mut cmd = retry_with(&[
        "--replay-stdin",
        "--max-replay",
        "unlimited",
        "--",
        "wc",
        "-c",
    ]);
    cmd.env("RETRY_MAX_REPLAY", "1").stdin(Stdio::null());
    assert_eq!(
        run(cmd).status.code(),
        Some(0),
        "unlimited, and the flag beats the variable"
    );
    let help = run(retry_with(&["--help"]));
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--max-replay") && help.contains("4GiB"),
        "{help}"
    );
}

// ---------------------------------------------------------------------------------------------
// A held stdout that cannot spill

#[test]
fn a_held_stdout_that_cannot_spill_goes_to_stderr_whole_and_is_never_0() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..9u32 << 20).map(|i| (i % 241) as u8).collect();
    let file = dir.path().join("data");
    std::fs::write(&file, &data).unwrap();
    for (status, code) in [(0, 125), (3, 3)] {
        let count = dir.path().join(format!("count{status}"));
        let mut cmd = retry_std();
        cmd.args(["--stdout-on-success", "-q", "-b", "0", "--", "sh", "-c"])
            .arg(format!(
                "echo >> {}; cat {}; exit {status}",
                count.display(),
                file.display()
            ))
            .env("TMPDIR", "/nonexistent")
            .stdout(Stdio::piped());
        let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = Vec::new();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut v = Vec::new();
            let mut out = out;
            out.read_to_end(&mut v).unwrap();
            v
        });
        child
            .stderr
            .take()
            .unwrap()
            .read_to_end(&mut stderr)
            .unwrap();
        let st = wait_with_limit(&mut child);
        assert_eq!(st.code(), Some(code), "exit {status}");
        assert!(
            reader.join().unwrap().is_empty(),
            "stdout carries no attempt"
        );
        // stderr: all the attempt's bytes, in order, then one line saying why.
        assert!(
            stderr.starts_with(&data),
            "the held output is on stderr, whole"
        );
        let rest = String::from_utf8_lossy(&stderr[data.len()..]).into_owned();
        assert_eq!(rest.lines().count(), 1, "{rest}");
        assert!(
            rest.starts_with("retry: cannot hold the stdout of attempt 1 for --stdout-on-success")
                && rest.contains("/nonexistent"),
            "{rest}"
        );
        assert_eq!(
            std::fs::read_to_string(&count).unwrap(),
            "\n",
            "not retried"
        );
    }
}
