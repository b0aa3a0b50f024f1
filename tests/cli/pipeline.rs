//! Pipeline I/O through the binary: `--replay-stdin`, `--stdout-on-success`, the output
//! conditions, and the faults around them (children that never read, leftovers holding pipes,
//! a closed stdout, binary data and long lines).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::helpers::{refuses, retry, retry_std, wait_for_lines, wait_with_limit};

/// Deterministic pseudo-random bytes (binary, with newlines here and there).
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
fn replay_stdin_gives_every_attempt_the_same_bytes() {
    // 10 MiB of binary: more than the in-memory part, so the copy spills to a file.
    let input = bytes(10 << 20, 1);
    let dir = tempfile::tempdir().unwrap();
    let out = retry()
        .args(["--replay-stdin", "-b", "0", "-q", "--", "sh", "-c"])
        .arg(format!(
            "cat > {}/in$RETRY_ATTEMPT; test $RETRY_ATTEMPT -ge 3",
            dir.path().display()
        ))
        .write_stdin(input.clone())
        .assert()
        .success();
    assert!(out.get_output().stdout.is_empty());
    for n in 1..=3 {
        let got = std::fs::read(dir.path().join(format!("in{n}"))).unwrap();
        assert!(got == input, "attempt {n} got {} bytes", got.len());
    }
}

#[test]
fn the_first_attempt_streams_stdin_without_waiting_for_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got");
    let mut child = retry_std()
        .args(["--replay-stdin", "-q", "--", "sh", "-c"])
        .arg(format!("read l; echo \"$l\" > {}", got.display()))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"first\n").unwrap();
    // retry ends with our stdin still open: attempt 1 did not wait for end of file.
    let status = wait_with_limit(&mut child);
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(&got).unwrap(), "first\n");
    drop(stdin);
}

#[test]
fn a_child_that_never_reads_stdin_loses_nothing_for_the_next_attempt() {
    let input = bytes(3 << 20, 2);
    let dir = tempfile::tempdir().unwrap();
    retry()
        .args(["--replay-stdin", "-b", "0", "-q", "--", "sh", "-c"])
        .arg(format!(
            "test $RETRY_ATTEMPT = 1 && exit 1; cat > {}/in",
            dir.path().display()
        ))
        .write_stdin(input.clone())
        .assert()
        .success();
    assert!(std::fs::read(dir.path().join("in")).unwrap() == input);
}

#[test]
fn a_child_that_exits_while_stdin_still_arrives_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (ready, out) = (dir.path().join("ready"), dir.path().join("out"));
    let mut child = retry_std()
        .args(["--replay-stdin", "-b", "0", "-q", "--", "sh", "-c"])
        .arg(format!(
            "if [ $RETRY_ATTEMPT = 1 ]; then read l; echo $l > {}; exit 1; fi; cat > {}",
            ready.display(),
            out.display()
        ))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one\n").unwrap();
    wait_for_lines(&ready, 1);
    // Attempt 1 has read a line and is exiting; more input arrives afterwards.
    let rest = bytes(1 << 20, 3);
    stdin.write_all(&rest).unwrap();
    drop(stdin);
    assert!(wait_with_limit(&mut child).success());
    let mut want = b"one\n".to_vec();
    want.extend_from_slice(&rest);
    assert!(std::fs::read(&out).unwrap() == want);
}

#[test]
fn the_spilled_copy_is_private_unlinked_and_gone_however_retry_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let ready = tmp.path().join("ready");
    let spill = tempfile::tempdir().unwrap();
    let mut child = retry_std()
        .env("TMPDIR", spill.path())
        .args(["--replay-stdin", "-q", "--", "sh", "-c"])
        .arg(format!(
            "cat > /dev/null; echo x > {}; sleep 100",
            ready.display()
        ))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes(9 << 20, 4)).unwrap();
    drop(stdin);
    wait_for_lines(&ready, 1);
    // The spill file is open in retry, unlinked from TMPDIR, mode 0600.
    let spill_dir = spill.path().canonicalize().unwrap();
    let mut found = false;
    for fd in std::fs::read_dir(format!("/proc/{}/fd", child.id())).unwrap() {
        let fd = fd.unwrap().path();
        let target = std::fs::read_link(&fd).unwrap_or_default();
        // Files only: retry's own directory (RETRY_ENV_FILE's) may be open too.
        if target.starts_with(&spill_dir) && !std::fs::metadata(&fd).is_ok_and(|m| m.is_dir()) {
            found = true;
            assert!(target.to_string_lossy().contains("(deleted)"), "{target:?}");
            let mode = std::fs::metadata(&fd).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{target:?}");
        }
    }
    assert!(found, "no spill file open in TMPDIR");
    assert_eq!(
        crate::helpers::tmp_left(spill.path()),
        Vec::<std::path::PathBuf>::new()
    );
    child.kill().unwrap();
    wait_with_limit(&mut child);
    assert_eq!(
        crate::helpers::tmp_left(spill.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn stdout_on_success_prints_only_the_successful_attempts_output() {
    let out = retry()
        .args(["--stdout-on-success", "-b", "0", "--", "sh", "-c"])
        .arg("echo out$RETRY_ATTEMPT; test $RETRY_ATTEMPT -ge 3")
        .assert()
        .success();
    let o = out.get_output();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "out3\n");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("out1\n") && stderr.contains("out2\n"),
        "{stderr}"
    );
}

#[test]
fn stdout_on_success_sends_everything_to_stderr_when_giving_up() {
    retry()
        .args([
            "--stdout-on-success",
            "-b",
            "0",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
        ])
        .arg("echo held$RETRY_ATTEMPT; exit 4")
        .assert()
        .code(4)
        .stdout("")
        .stderr(predicate::str::contains("held1\n").and(predicate::str::contains("held2\n")));
}

#[test]
fn held_output_is_byte_exact_and_bounded_in_memory() {
    let data = bytes(12 << 20, 5);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, &data).unwrap();
    let out = retry()
        .args(["--stdout-on-success", "-b", "0", "-q", "--", "sh", "-c"])
        .arg(format!("cat {}; test $RETRY_ATTEMPT -ge 2", file.display()))
        .assert()
        .success();
    let o = out.get_output();
    assert!(
        o.stdout == data,
        "stdout differs ({} bytes)",
        o.stdout.len()
    );
    assert!(o.stderr == data, "failed attempt's stdout not on stderr");
}

#[test]
fn retry_if_output_fails_a_zero_status_and_gives_up_with_1() {
    let out = retry()
        .args([
            "--retry-if-output",
            "rate limit",
            "-b",
            "0",
            "-n",
            "2",
            "--",
        ])
        .args(["sh", "-c", "echo 'error: rate limit exceeded'; exit 0"])
        .assert()
        .code(1);
    let o = out.get_output();
    // Output still streams through, every attempt's.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches("rate limit")
            .count(),
        3
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--retry-if-output"));
}

#[test]
fn retry_if_output_matches_stderr_too_and_stops_matching_when_fixed() {
    retry()
        .args([
            "--retry-if-output",
            "^busy$",
            "-b",
            "0",
            "-q",
            "--",
            "sh",
            "-c",
        ])
        .arg("test $RETRY_ATTEMPT -lt 3 && echo busy >&2; echo done")
        .assert()
        .success()
        .stdout("done\ndone\ndone\n")
        .stderr("busy\nbusy\n");
}

#[test]
fn stop_if_output_stops_whatever_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    retry()
        .args([
            "--stop-if-output",
            "invalid token",
            "-b",
            "0",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "echo x >> {}; echo 'invalid token' >&2; exit 22",
            log.display()
        ))
        .assert()
        .code(22)
        .stderr(predicate::str::contains("--stop-if-output"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "x\n");
}

#[test]
fn delay_from_output_sets_the_next_delay_even_past_the_cap() {
    retry()
        .args(["--delay-from-output", r"^Retry-After: (\d+(\.\d+)?)$"])
        .args(["-b", "0", "-c", "0", "-n", "1", "--", "sh", "-c"])
        .arg("printf 'HTTP/1.1 429\\r\\nRetry-After: 1.5\\r\\n'; exit 1")
        .assert()
        .code(1)
        // The hint counts from when its line arrived: 1.5 s less the moment since (rounded
        // to the tenth), named.
        .stderr(predicate::str::is_match(r"retrying in 1\.[45]s \(--delay-from-output\)").unwrap());
}

#[test]
fn delay_from_output_past_the_deadline_gives_up_at_once() {
    let started = Instant::now();
    retry()
        .args([
            "--delay-from-output",
            r"Retry-After: (\d+)",
            "-d",
            "10s",
            "-b",
            "0",
        ])
        .args(["--", "sh", "-c", "echo 'Retry-After: 3600'; exit 1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("deadline"));
    assert!(started.elapsed() < Duration::from_secs(8));
}

#[test]
fn a_failed_attempts_leftover_holding_the_output_pipe_does_not_hang_retry() {
    // (A successful attempt's leftovers are passed on by the relay: leftover_output.rs.)
    for (flags, stdout, stderr) in [
        (&["--stdout-on-success"][..], "", "hi\n"),
        (&["--retry-if-output", "nomatch"][..], "hi\n", ""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let started = Instant::now();
        retry()
            .args(flags)
            .args(["-n", "0", "--", "sh", "-c"])
            // (The leftover's stderr is not the test's pipe, which it would hold open too.)
            .arg(format!(
                "sleep 100 2>/dev/null & echo $! > {}; echo hi; exit 3",
                pid_file.display()
            ))
            .assert()
            .code(3)
            .stdout(stdout)
            .stderr(predicate::str::contains(stderr));
        assert!(started.elapsed() < Duration::from_secs(30));
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Stopped with the failed attempt.
        crate::helpers::wait_gone(&[pid]);
    }
}

/// Runs retry with `flags` on an attempt running `script` (which prints many lines); the test
/// reads one line and closes the pipe. Returns retry's status and stderr.
fn with_closed_stdout(flags: &[&str], script: &str) -> (std::process::ExitStatus, String) {
    let mut child = retry_std()
        .args(flags)
        .args(["-b", "0", "--", "sh", "-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "1\n");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = wait_with_limit(&mut child);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (status, stderr)
}

#[test]
fn a_closed_stdout_ends_retry_by_sigpipe_when_retry_writes_it() {
    // Held: the attempt succeeds and retry's write of its output meets the closed pipe.
    let (status, _) = with_closed_stdout(&["--stdout-on-success"], "seq 1 1000000");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    // Matched live: retry's forwarding meets the closed pipe.
    for flags in [
        &["--retry-if-output", "zzz"][..],
        &["--stop-if-output", "zzz"][..],
    ] {
        let (status, _) = with_closed_stdout(flags, "seq 1 1000000; exit 1");
        assert_eq!(
            status.signal(),
            Some(libc::SIGPIPE),
            "{flags:?}: {status:?}"
        );
    }
}

#[test]
fn a_closed_stdout_stops_the_retrying_when_the_attempt_writes_it() {
    // The attempt's shell hides seq's SIGPIPE behind `exit 1`; retry sees its reader is gone
    // and does not retry into the void.
    let (status, stderr) = with_closed_stdout(&[], "seq 1 1000000; exit 1");
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert_eq!(stderr.matches("retry: attempt ").count(), 1, "{stderr}");
    assert!(stderr.contains("reader of stdout is gone"), "{stderr}");
}

#[test]
fn binary_and_very_long_lines_pass_through_matching_byte_exact() {
    let mut data = bytes(3 << 20, 6);
    data.retain(|b| *b != b'\n');
    data.extend_from_slice(b"\nlast line without newline \x00\xff");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, &data).unwrap();
    let out = retry()
        .args(["--retry-if-output", "^never$", "--", "cat"])
        .arg(&file)
        .assert()
        .success();
    assert!(out.get_output().stdout == data);
}

#[test]
fn invalid_regexes_exit_125_naming_the_flag() {
    for flag in [
        "--retry-if-output",
        "--stop-if-output",
        "--delay-from-output",
    ] {
        refuses(&[flag, "(unclosed", "true"], &[flag, "unclosed"]);
    }
    refuses(
        &["--delay-from-output", "no group", "true"],
        &["--delay-from-output", "capture group"],
    );
}

#[test]
fn without_pipeline_flags_the_child_inherits_retrys_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out");
    let f = std::fs::File::create(&file).unwrap();
    let status = retry_std()
        .args(["--", "sh", "-c", "readlink /proc/$$/fd/1"])
        .stdout(f)
        .status()
        .unwrap();
    assert!(status.success());
    let target = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        target.trim(),
        file.canonicalize().unwrap().to_string_lossy()
    );
}
