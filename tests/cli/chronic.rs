//! `--chronic`: a run that succeeds prints nothing at all, whatever its failed attempts, hooks
//! and retry said; one that gives up (or is stopped) writes out everything held, byte for byte
//! and in order (each stream's bytes as they came; attempt by attempt, retry's lines between
//! them), then the give-up line; `--max-output` keeps the most recent output and says how much
//! was dropped; a write-out that fails is reported. The exact order of stdout and stderr in the
//! write-out is in `chronic_order.rs`.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::helpers::{retry, retry_std, send, timeless, wait_for_lines, wait_with_limit};
use crate::tools::{self, require};

/// Binary output of attempt N, different per attempt: every byte value, `size` bytes.
fn binary(attempt: u32, size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| (i as u32 * 7 + attempt * 31) as u8)
        .collect()
}

/// A perl script that writes `binary(attempt, size)` on stdout and `err N\n` on stderr, then
/// succeeds from attempt `ok` on (`0`: never).
fn attempt_script(size: usize, ok: u32) -> String {
    format!(
        "my $n = $ENV{{RETRY_ATTEMPT}}; binmode STDOUT; \
         print map {{ chr(($_ * 7 + $n * 31) % 256) }} 0..{}; \
         print STDERR \"err $n\\n\"; exit(({ok} && $n >= {ok}) ? 0 : 1)",
        size - 1
    )
}

#[test]
fn a_success_after_failures_prints_nothing_at_all() {
    if !require(&[tools::PERL]) {
        return;
    }
    let out = retry()
        .args(["--chronic", "-b", "0", "--on-retry", "echo hook says"])
        .args(["--", "perl", "-e", &attempt_script(1000, 3)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{} bytes on stdout",
        out.stdout.len()
    );
    assert!(
        out.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // RETRY_CHRONIC too, and with -v.
    let out = retry()
        .env("RETRY_CHRONIC", "1")
        .args(["-v", "-b", "0", "--", "perl", "-e", &attempt_script(10, 2)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn giving_up_writes_out_everything_byte_for_byte_then_the_give_up_line() {
    if !require(&[tools::PERL]) {
        return;
    }
    let out = retry()
        .args([
            "--chronic",
            "-b",
            "0",
            "-n",
            "2",
            "--on-retry",
            "echo hook $RETRY_ATTEMPT",
        ])
        .args(["--", "perl", "-e", &attempt_script(70_000, 0)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let want: Vec<u8> = (1..=3).flat_map(|n| binary(n, 70_000)).collect();
    assert!(
        out.stdout == want,
        "stdout is not the attempts' bytes in order"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        timeless(&stderr),
        "err 1\nretry: attempt 1 of 3: perl exited with status 1; retrying in 0s\nhook 1\n\
         err 2\nretry: attempt 2 of 3: perl exited with status 1; retrying in 0s\nhook 2\n\
         err 3\nretry: attempt 3 of 3: perl exited with status 1\n\
         retry: gave up after 3 attempts in T: no retries left\n"
    );
}

#[test]
fn the_write_out_keeps_the_attempts_apart_on_one_stream() {
    // stdout and stderr one pipe, as cron's: each attempt's lines come before retry's line
    // about it, and that line before the next attempt's.
    let (read, write) = nix::unistd::pipe().unwrap();
    let mut cmd = retry_std();
    cmd.args(["--chronic", "-b", "0", "-n", "2", "--", "sh", "-c"])
        .arg("echo \"out $RETRY_ATTEMPT\"; echo \"err $RETRY_ATTEMPT\" >&2; exit 5")
        .stdout(Stdio::from(write.try_clone().unwrap()))
        .stderr(Stdio::from(write));
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut text = String::new();
    std::fs::File::from(read).read_to_string(&mut text).unwrap();
    assert_eq!(wait_with_limit(&mut child).code(), Some(5));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10, "{text}");
    for n in 1..=3 {
        let at = (n - 1) * 3;
        let mut own: Vec<&str> = lines[at..at + 2].to_vec();
        own.sort_unstable();
        assert_eq!(own, [format!("err {n}"), format!("out {n}")], "{text}");
        assert!(
            lines[at + 2].starts_with(&format!("retry: attempt {n} of 3: ")),
            "{text}"
        );
    }
    assert!(lines[9].starts_with("retry: gave up after 3 attempts in "));
}

#[test]
fn past_max_output_the_oldest_is_dropped_and_a_line_says_how_much() {
    if !require(&[tools::PERL]) {
        return;
    }
    let out = retry()
        .args(["--chronic", "--max-output", "64KiB", "-b", "0", "-n", "2"])
        .args(["--", "perl", "-e", &attempt_script(50_000, 0)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let (first, rest) = stderr.split_once('\n').unwrap();
    // The closing line is not held: it comes whole after all that was, whatever was dropped.
    let (held_err, closing) = rest.strip_suffix('\n').unwrap().rsplit_once('\n').unwrap();
    let held_err = format!("{held_err}\n");
    assert!(
        timeless(closing) == "retry: gave up after 3 attempts in T: no retries left\n",
        "{closing}"
    );
    // Everything that came: the attempts' bytes and lines, retry's lines.
    let retry_lines: usize = (1..=2)
        .map(|n| format!("retry: attempt {n} of 3: perl exited with status 1; retrying in 0s\n"))
        .chain(["retry: attempt 3 of 3: perl exited with status 1\n".to_string()])
        .map(|l| l.len())
        .sum();
    let total = 3 * 50_000 + 3 * "err N\n".len() + retry_lines;
    let dropped = total - 65_536;
    assert_eq!(
        first,
        format!(
            "retry: warning: the first {:.1} KiB ({dropped} bytes) of the output were dropped: \
             --chronic keeps the most recent 64 KiB (--max-output)",
            (dropped * 10 / 1024) as f64 / 10.0
        )
    );
    assert_eq!(out.stdout.len() + held_err.len(), 65_536);
    // What is left is the end of what came, stdout's bytes the last attempts'.
    let all: Vec<u8> = (1..=3).flat_map(|n| binary(n, 50_000)).collect();
    assert!(
        all.ends_with(&out.stdout),
        "stdout is not the most recent bytes"
    );
    assert!(
        held_err.ends_with("retry: attempt 3 of 3: perl exited with status 1\n"),
        "{held_err}"
    );
}

#[test]
fn a_max_output_smaller_than_a_line_still_ends_with_the_whole_give_up_line() {
    // The closing line is kept apart from the held output: --max-output 0 keeps nothing of
    // what came, but the warning and the give-up line are whole, and the hook's output (held)
    // comes before the give-up line.
    for (max, kept_err) in [("0", ""), ("5", "said\n")] {
        let out = retry()
            .args(["--chronic", "--max-output", max, "-b", "0", "-n", "1"])
            .args(["--on-give-up", "echo hook-said >&2", "--"])
            .args(["sh", "-c", "echo out; echo err >&2; exit 3"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert!(out.stdout.is_empty(), "{out:?}");
        let stderr = timeless(&String::from_utf8(out.stderr).unwrap());
        let (first, rest) = stderr.split_once('\n').unwrap();
        assert!(
            first.starts_with("retry: warning: the first ")
                && first.ends_with(&format!(
                    "bytes of the output were dropped: --chronic keeps the most recent {max} \
                     bytes (--max-output)"
                )),
            "{first}"
        );
        assert_eq!(
            rest,
            format!("{kept_err}retry: gave up after 2 attempts in T: no retries left\n")
        );
    }
}

#[test]
fn more_than_memory_spills_to_disk_and_comes_back_whole() {
    if !require(&[tools::PERL]) {
        return;
    }
    let size = 12 << 20;
    let out = retry()
        .args(["--chronic", "-n", "0", "--", "perl", "-e"])
        .arg(attempt_script(size, 0))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout.len(), size);
    assert!(out.stdout == binary(1, size), "stdout changed on its way");
}

#[test]
fn without_a_temporary_file_the_most_recent_8_mib_are_written_out() {
    if !require(&[tools::PERL]) {
        return;
    }
    // TMPDIR missing: past 8 MiB nothing can spill; the most recent 8 MiB held in memory are
    // written out, and one line says how much was dropped and why.
    let size = 9_000_000;
    let out = retry()
        .env("TMPDIR", "/nonexistent/retry-test")
        .args(["--chronic", "-n", "0", "--", "perl", "-e"])
        .arg(attempt_script(size, 0))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with("retry: warning: the first ")
            && lines[0].contains(
                " of the output were dropped: --chronic could hold only the \
                                 most recent 8 MiB in memory: "
            )
            && lines[0].contains("/nonexistent/retry-test"),
        "{}",
        lines[0]
    );
    assert_eq!(
        &lines[1..3],
        ["err 1", "retry: attempt 1 of 1: perl exited with status 1"]
    );
    let held_err = "err 1\nretry: attempt 1 of 1: perl exited with status 1\n".len();
    assert_eq!(out.stdout.len() + held_err, 8 << 20);
    assert!(
        binary(1, size).ends_with(&out.stdout),
        "stdout is not the most recent bytes"
    );
}

#[test]
fn sigterm_during_the_wait_writes_out_what_was_held_and_dies_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    // The --on-retry hook runs within the wait, after retry's line: from its start on, a
    // TERM stops the run whether it comes during the hook or the wait after it.
    let mut child = retry_std()
        .args([
            "--chronic",
            "-b",
            "1h",
            "-c",
            "2h",
            "-j",
            "none",
            "--on-retry",
        ])
        .arg(format!("echo hook; echo $$ > {}", ready.display()))
        .args([
            "--",
            "sh",
            "-c",
            "echo 'held out'; echo 'held err' >&2; exit 1",
        ])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "held out\n");
    assert_eq!(
        std::fs::read_to_string(&err).unwrap(),
        "held err\nretry: attempt 1 of 6: sh exited with status 1; retrying in 1h\nhook\n\
         retry: stopped by SIGTERM: not retrying\n"
    );
}

#[test]
fn sigterm_with_stdout_a_full_pipe_nobody_reads_ends_at_once_and_says_what_was_dropped() {
    // stdout a full pipe whose reader never reads: the write-out of what was held blocks on
    // it; the stop signal gives it a bounded grace, then retry dies of TERM and says so.
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let err = dir.path().join("err");
    let (_reader, writer) = crate::helpers::jammed::full_pipe();
    let mut child = retry_std()
        .args([
            "--chronic",
            "-b",
            "1h",
            "-c",
            "2h",
            "-j",
            "none",
            "--on-retry",
        ])
        .arg(format!("echo $$ > {}", ready.display()))
        .args([
            "--",
            "sh",
            "-c",
            "echo 'held out'; echo 'held err' >&2; exit 1",
        ])
        .stdout(Stdio::from(writer))
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 1);
    let sent = std::time::Instant::now();
    send(child.id(), libc::SIGTERM);
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    // No grace with stdout full; ten seconds leave room for a loaded machine, not for a hang.
    assert!(sent.elapsed() < std::time::Duration::from_secs(10));
    let err = std::fs::read_to_string(&err).unwrap();
    // retry's last word says what happened. The held stderr may still come after it: the
    // write-out thread, given no grace once stdout is full, may be scheduled only after the
    // message (seen once under qemu-user), and what it writes to a stream with room is not lost.
    let last_own = err.lines().rev().find(|l| l.starts_with("retry: "));
    assert_eq!(
        last_own,
        Some(
            "retry: stopped by SIGTERM while the output --chronic held was being written: \
             the rest of it is dropped"
        ),
        "{err}"
    );
}

#[test]
fn a_stop_signal_read_as_the_last_attempt_ends_by_itself_still_cuts_a_blocked_write_out() {
    // The attempt sends TERM to retry and ignores the TERM retry passes on, so it ends by
    // itself (status 1) after retry has read the stop signal; stdout is a full pipe nobody
    // reads. The write-out must not wait for a signal that was already read.
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("err");
    let (_reader, writer) = crate::helpers::jammed::full_pipe();
    let mut child = retry_std()
        .args(["--chronic", "-n", "0", "--", "sh", "-c"])
        .arg("trap '' TERM; echo 'held out'; kill -TERM $PPID; exit 1")
        .stdout(Stdio::from(writer))
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status = wait_with_limit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    let err = std::fs::read_to_string(&err).unwrap();
    // retry's last word says what happened. The held stderr may still come after it: the
    // write-out thread, given no grace once stdout is full, may be scheduled only after the
    // message (seen once under qemu-user), and what it writes to a stream with room is not lost.
    let last_own = err.lines().rev().find(|l| l.starts_with("retry: "));
    assert_eq!(
        last_own,
        Some(
            "retry: stopped by SIGTERM while the output --chronic held was being written: \
             the rest of it is dropped"
        ),
        "{err}"
    );
}

#[test]
fn a_write_out_that_fails_is_reported() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = retry_std()
        .args([
            "--chronic",
            "-n",
            "0",
            "--",
            "sh",
            "-c",
            "echo lost; exit 4",
        ])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("retry: cannot write the output --chronic held to stdout: ")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
}

#[test]
fn with_stdout_on_success_the_successful_stdout_alone_is_printed() {
    let script = "echo \"out $RETRY_ATTEMPT\"; echo \"err $RETRY_ATTEMPT\" >&2; \
                  test $RETRY_ATTEMPT -ge 2";
    let out = retry()
        .args([
            "--chronic",
            "--stdout-on-success",
            "-b",
            "0",
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out 2\n");
    assert!(
        out.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Giving up, a failed attempt's held stdout is in the write-out's stderr, as without
    // --chronic.
    let out = retry()
        .args([
            "--chronic",
            "--stdout-on-success",
            "-n",
            "0",
            "--",
            "sh",
            "-c",
            "echo o; exit 3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("o\nretry: "));
}

#[test]
fn quiet_and_json_keep_their_meaning() {
    let fails = ["-n", "1", "-b", "0", "--", "sh", "-c", "echo o; exit 3"];
    let out = retry()
        .args(["--chronic", "-q"])
        .args(fails)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "o\no\n");
    assert!(out.stderr.is_empty());
    let out = retry()
        .args(["--chronic", "--log-format", "json"])
        .args(fails)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.first().unwrap()["event"], "start");
    assert_eq!(events.last().unwrap()["event"], "give_up");
}
