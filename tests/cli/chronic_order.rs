//! `--chronic`'s order of the bytes held: stdout and stderr on one pipe or one terminal come out
//! in the exact order written, on different pipes each in its own; a stop signal keeps that order;
//! a successful run's leftover keeps no reader waiting. The rest of `--chronic` is in `chronic.rs`.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;

use crate::helpers::{send, wait_for_lines, wait_with_limit};

/// An attempt that writes `out1`, `err1`, `out2`, `err2`, ... (`n` of each, stdout and stderr
/// in turn, one write per line), then fails.
fn interleaved(n: u32) -> String {
    format!("i=1; while [ $i -le {n} ]; do echo out$i; echo err$i >&2; i=$((i+1)); done; exit 1")
}

/// The lines `interleaved(n)` writes, in the order it writes them.
fn interleaved_lines(n: u32) -> Vec<String> {
    (1..=n)
        .flat_map(|i| [format!("out{i}"), format!("err{i}")])
        .collect()
}

/// Everything one pipe received, as lines, retry's own (`retry: ...`) left out.
fn attempt_lines(text: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.starts_with("retry: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn stdout_and_stderr_on_one_pipe_come_out_in_the_exact_order_written() {
    // `2>&1` (cron's mail, `| tee log`): retry's stdout and stderr are one pipe. The attempt
    // then gets one pipe for both, and the write-out is in the order of its writes.
    for _ in 0..3 {
        let (read, write) = nix::unistd::pipe().unwrap();
        let mut child = crate::helpers::release_std()
            .args(["--chronic", "-n", "0", "--", "sh", "-c", &interleaved(300)])
            .stdout(write.try_clone().unwrap())
            .stderr(write)
            .spawn()
            .unwrap();
        let mut all = Vec::new();
        std::fs::File::from(read).read_to_end(&mut all).unwrap();
        assert_eq!(wait_with_limit(&mut child).code(), Some(1));
        assert_eq!(attempt_lines(&all), interleaved_lines(300));
        let text = String::from_utf8_lossy(&all);
        assert!(
            text.lines()
                .last()
                .is_some_and(|l| l.starts_with("retry: gave up")),
            "{text}"
        );
    }
}

#[test]
fn stdout_and_stderr_on_one_terminal_come_out_in_the_exact_order_written() {
    // On a terminal too (a user watching, or `script`): the same terminal is one file.
    let (mut child, mut master) = crate::helpers::pty::retry_on_pty(
        &["--chronic", "-n", "0", "--", "sh", "-c", &interleaved(100)],
        &[],
        200,
    );
    let seen = crate::helpers::pty::read_until_closed(&mut master);
    assert_eq!(wait_with_limit(&mut child).code(), Some(1));
    let text = String::from_utf8_lossy(&seen).replace('\r', "");
    assert_eq!(attempt_lines(text.as_bytes()), interleaved_lines(100));
}

#[test]
fn stdout_and_stderr_on_different_pipes_each_keep_their_own_order() {
    let out = crate::helpers::release()
        .args(["--chronic", "-n", "0", "--", "sh", "-c", &interleaved(300)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = interleaved_lines(300);
    let (want_out, want_err): (Vec<_>, Vec<_>) =
        lines.into_iter().partition(|l| l.starts_with("out"));
    assert_eq!(attempt_lines(&out.stdout), want_out);
    assert_eq!(attempt_lines(&out.stderr), want_err);
}

#[test]
fn a_successful_runs_leftover_keeps_no_reader_of_retrys_output_waiting() {
    // What the leftover writes is dropped with the rest of a successful run's output: the
    // reader of retry's stdout and stderr sees their end when retry exits, on one pipe or two.
    for one_pipe in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let script = format!(
            "sh -c 'echo $$ > {d}/bg; while [ ! -e {d}/go ]; do sleep 0.01; done; \
             echo late; echo late-err >&2' & echo now; echo err >&2",
            d = dir.path().display()
        );
        let mut cmd = crate::helpers::release_std();
        cmd.args(["--chronic", "-n", "0", "--", "sh", "-c", &script]);
        let (read, write) = retry::process::cloexec_pipe().unwrap();
        let (err_read, err_write) = retry::process::cloexec_pipe().unwrap();
        if one_pipe {
            cmd.stdout(write.try_clone().unwrap()).stderr(write);
            drop(err_write);
        } else {
            cmd.stdout(write).stderr(err_write);
        }
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        // Should the ends not come, `go` after 20 s lets the leftover end, and the test fail.
        let go = dir.path().join("go");
        let watchdog = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(20));
            let _ = std::fs::write(go, "");
        });
        let mut all = Vec::new();
        // Both ends come while the leftover still waits for `go`.
        std::fs::File::from(read).read_to_end(&mut all).unwrap();
        std::fs::File::from(err_read).read_to_end(&mut all).unwrap();
        let bg: i32 = wait_for_lines(&dir.path().join("bg"), 1)
            .trim()
            .parse()
            .unwrap();
        assert!(
            crate::helpers::alive(bg) && !dir.path().join("go").exists(),
            "one pipe: {one_pipe}: the end came only with the leftover's"
        );
        std::fs::write(dir.path().join("go"), "").unwrap();
        drop(watchdog);
        assert_eq!(wait_with_limit(&mut child).code(), Some(0));
        // (Before the directory, and `go` with it, is removed.)
        crate::helpers::wait_gone(&[bg]);
        assert_eq!(String::from_utf8_lossy(&all), "", "one pipe: {one_pipe}");
    }
}

#[test]
fn sigterm_with_one_pipe_writes_out_in_the_exact_order_and_dies_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (read, write) = retry::process::cloexec_pipe().unwrap();
    let script = format!(
        "{}; touch {d}/written; sleep 100",
        interleaved(200).replace("; exit 1", ""),
        d = dir.path().display()
    );
    let mut child = crate::helpers::release_std()
        .args(["--chronic", "-n", "0", "--", "sh", "-c", &script])
        .stdout(write.try_clone().unwrap())
        .stderr(write)
        .spawn()
        .unwrap();
    wait_for_lines(&dir.path().join("written"), 0);
    send(child.id(), libc::SIGTERM);
    let mut all = Vec::new();
    std::fs::File::from(read).read_to_end(&mut all).unwrap();
    assert_eq!(wait_with_limit(&mut child).signal(), Some(libc::SIGTERM));
    assert_eq!(attempt_lines(&all), interleaved_lines(200));
}
