//! Robustness: the stdin retry records for `--replay-stdin`. Nothing the user gave is lost
//! without a non-zero exit and one clear line: an unreadable stdin is never replayed as an
//! empty one, a missing, unwritable or full TMPDIR stops the replay with 125, and
//! `--max-replay` bounds the recording of an endless stdin (its values checked and documented).
//!
//! Not here: what retry writes failing (`robust_pipes.rs`); the copy's mode and place on disk
//! (`robust_security.rs`); stdin replayed as it should be (`pipeline.rs`).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::helpers::run::{Run, retry_with, run};

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
